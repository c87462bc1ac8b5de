"""SolverVBD.step refuses inputs that used to poison the run, before anything changes."""

import newton
import numpy as np
import pytest
import warp as wp

from steel.solvers import SolverVBD
from tests.fixtures import box_column, step_with_collision


def _box_model(offset=0.0):
    builder = newton.ModelBuilder()
    body = builder.add_body(xform=wp.transform(wp.vec3(offset, 0.0, 0.3), wp.quat_identity()))
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    builder.add_ground_plane()
    builder.color()
    return builder.finalize(device="cpu")


@pytest.mark.parametrize("dt", [1e-30, 1e-300, 1e300, float("nan"), -1.0])
def test_a_dt_the_kernels_cannot_use_is_refused_and_the_run_goes_on(dt):
    """dt 1e-30 and 1e-300 (0 in float32), 1e300 (inf), NaN, -1: ValueError naming dt, the state untouched, and
    30 normal steps after it stay finite (before, 1e-30 / 1e-300 / 1e300 stepped to NaN and stayed NaN)."""
    model = _box_model()
    solver = SolverVBD(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    before = s0.body_q.numpy().copy()
    pipeline.collide(s0, contacts)
    with pytest.raises(ValueError, match="dt"):
        solver.step(s0, s1, None, contacts, dt)
    assert np.array_equal(s0.body_q.numpy(), before)
    for _ in range(30):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, 1.0 / 240.0)
        s0, s1 = s1, s0
    assert np.isfinite(s0.body_q.numpy()).all()


def test_a_control_of_another_model_is_refused():
    """A Control built from a model with other joint arrays: ValueError naming control (before: NaN)."""
    model = _box_model()
    other = newton.ModelBuilder()
    a = other.add_link()
    other.add_shape_box(a, hx=0.1, hy=0.1, hz=0.1)
    b = other.add_link()
    other.add_shape_box(b, hx=0.1, hy=0.1, hz=0.1)
    j0 = other.add_joint_revolute(-1, a)
    j1 = other.add_joint_revolute(a, b)
    other.add_articulation([j0, j1])
    other_model = other.finalize(device="cpu")
    solver = SolverVBD(model)
    with pytest.raises(ValueError, match="control"):
        solver.step(model.state(), model.state(), other_model.control(), None, 1.0 / 240.0)


def test_the_step_that_drops_body_contacts_warns_once():
    """A 6-box stack with rigid_body_contact_buffer_size=1: the first step that drops body–body contacts warns
    (NewtonWarning naming the option), once for the whole run (before: counted only, unless check_* was called)."""
    model = box_column(6, color=True)
    solver = SolverVBD(model, rigid_body_contact_buffer_size=1)
    with pytest.warns(newton.NewtonWarning, match="rigid_body_contact_buffer_size") as caught:
        step_with_collision(model, solver, 20, 1.0 / 240.0)
    assert sum("body–body contacts were dropped" in str(w.message) for w in caught) == 1
