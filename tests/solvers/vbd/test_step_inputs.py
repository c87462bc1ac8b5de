"""SolverVBD.step refuses inputs that used to poison the run, before anything changes."""

from pathlib import Path

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


_LARGER_CLOTH_SCRIPT = """
import sys
import numpy as np
import newton
from steel.solvers import SolverVBD
from tests.solvers.vbd.test_step_inputs import _cloth_on_ground

big, small = _cloth_on_ground(20), _cloth_on_ground(4)  # 441 and 25 particles, every one touching the ground
pipeline = newton.CollisionPipeline(big)
contacts = pipeline.contacts()
pipeline.collide(big.state(), contacts)
assert int(contacts.soft_contact_count.numpy()[0]) == big.particle_count
solver = SolverVBD(small)
s0, s1 = small.state(), small.state()
before = s1.particle_q.numpy().copy()
try:
    solver.step(s0, s1, None, contacts, 1.0 / 600.0)
except ValueError as exc:
    assert np.array_equal(s1.particle_q.numpy(), before), "state_out changed before the refusal"
    print("REFUSED:", exc)
    sys.exit(0)
print("STEPPED")
"""


def test_particle_contacts_of_a_larger_cloth_are_refused_not_a_crash(tmp_path):
    """A Contacts filled by a 441-particle cloth's pipeline, stepped by SolverVBD on a 25-particle cloth: ValueError
    naming soft_contact_indices and the particle, state_out untouched. Before, the kernels indexed particle_q with
    ids up to 440 and the process died of SIGSEGV (exit -11), hence the subprocess."""
    import os  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    script = tmp_path / "larger_cloth.py"
    script.write_text(_LARGER_CLOTH_SCRIPT)
    root = Path(__file__).resolve().parents[3]  # the repository root: the script imports `tests`
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, cwd=root,
                         env=env)
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-2000:]}"
    assert "REFUSED: contacts.soft_contact_indices[25] = (25, -1, -1) names particle 25" in run.stdout
    assert "(25 particles)" in run.stdout


def _cloth_on_ground(n=3):
    builder = newton.ModelBuilder()
    builder.add_cloth_grid(pos=wp.vec3(0.0, 0.0, 0.005), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0),
                           dim_x=n, dim_y=n, cell_x=0.05, cell_y=0.05, mass=0.01, particle_radius=0.01)
    builder.add_ground_plane()
    builder.color()
    return builder.finalize(device="cpu")


def test_soft_contact_shape_ids_and_lengths_are_checked_before_any_kernel():
    """A live record naming shape 99 of a one-shape model, and a soft_contact_normal shorter than soft_contact_max:
    ValueError naming the field; the same Contacts untouched steps normally."""
    model = _cloth_on_ground()
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    pipeline.collide(s0, contacts)
    assert int(contacts.soft_contact_count.numpy()[0]) == model.particle_count
    solver = SolverVBD(model)
    shapes = contacts.soft_contact_shape.numpy().copy()  # numpy() of a CPU array is a view
    bad = shapes.copy()
    bad[3] = 99
    contacts.soft_contact_shape.assign(bad)
    with pytest.raises(ValueError, match=r"contacts.soft_contact_shape\[3\] = 99 is not a shape of the model"):
        solver.step(s0, s1, None, contacts, 1.0 / 600.0)
    contacts.soft_contact_shape.assign(shapes)
    normal = contacts.soft_contact_normal
    contacts.soft_contact_normal = wp.zeros(2, dtype=wp.vec3, device="cpu")
    with pytest.raises(ValueError, match="contacts.soft_contact_normal has 2 entries, fewer than"):
        solver.step(s0, s1, None, contacts, 1.0 / 600.0)
    contacts.soft_contact_normal = normal
    solver.step(s0, s1, None, contacts, 1.0 / 600.0)
    assert np.isfinite(s1.particle_q.numpy()).all()
