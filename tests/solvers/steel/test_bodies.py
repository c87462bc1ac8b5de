"""Kinematic supports, bodies outside every articulation, and model notifications in SolverSteel."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

from .scenes import G, run

DT = 1.0 / 240.0


def test_kinematic_platform_carries_the_box_resting_on_it():
    """A kinematic slab moving at 0.5 m/s keeps its prescribed motion and carries a box by friction."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=1.0)
    slab = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.05), wp.quat_identity()), is_kinematic=True)
    builder.add_shape_box(slab, hx=1.0, hy=1.0, hz=0.05, cfg=cfg)
    box = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.2), wp.quat_identity()))
    builder.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    builder.joint_qd[0] = 0.5  # the slab's free joint: 0.5 m/s along x
    model = builder.finalize(device="cpu")
    solver = SolverSteel(model)
    state, _ = run(model, solver, 240, DT)
    q, qd = state.body_q.numpy(), state.body_qd.numpy()
    assert q[slab, 0] == pytest.approx(0.5, abs=1e-4)  # [m] prescribed: 1 s at 0.5 m/s
    assert q[slab, 2] == pytest.approx(0.05, abs=1e-6)  # gravity does not move it
    assert qd[box, 0] == pytest.approx(0.5, abs=0.01)  # the box rides along
    assert q[box, 2] == pytest.approx(0.2, abs=2e-3)


def test_body_outside_every_articulation_passes_through_and_supports_contacts():
    """A jointless body keeps its input pose and velocity; a box lands on it and rests."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    loose = builder.add_link(xform=wp.transform(wp.vec3(0.0, 0.0, 0.1), wp.quat_identity()), mass=1.0)
    builder.add_shape_box(loose, hx=0.5, hy=0.5, hz=0.1)
    box = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.35), wp.quat_identity()))
    builder.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1)
    model = builder.finalize(device="cpu")
    solver = SolverSteel(model)
    s0 = model.state()
    before = s0.body_q.numpy()[loose].copy()
    state, _ = run(model, solver, 240, DT)
    np.testing.assert_array_equal(state.body_q.numpy()[loose], before)
    assert state.body_q.numpy()[box, 2] == pytest.approx(0.3, abs=2e-3)  # rests on the loose slab


def test_notify_after_a_mass_edit_matches_a_fresh_solver():
    """Editing body masses then notify_model_changed gives the trajectory of a solver built after the edit."""
    from .scenes import pendulum

    def trajectory(solver, model):
        control = model.control()
        control.joint_f.assign(np.array([1.0], dtype=np.float32))
        s0, s1 = model.state(), model.state()
        s0.joint_q.assign(np.array([0.3], dtype=np.float32))
        out = []
        for _ in range(60):
            solver.step(s0, s1, control, None, DT)
            s0, s1 = s1, s0
            out.append(float(s0.joint_q.numpy()[0]))
        return np.array(out)

    model = pendulum(0.5, mass=1.0)
    solver = SolverSteel(model)
    trajectory(solver, model)
    model.body_mass.assign(np.array([3.0], dtype=np.float32))
    model.body_inv_mass.assign(np.array([1.0 / 3.0], dtype=np.float32))
    solver.notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
    edited = trajectory(solver, model)
    fresh = trajectory(SolverSteel(model), model)
    np.testing.assert_array_equal(edited, fresh)
