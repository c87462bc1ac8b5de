"""Rigid AVBD state across steps: penalty ramp and decay, reset of the selected worlds, model notifications."""

import numpy as np
import warp as wp

import newton
from steel.solvers import SolverVBD

from .scenes import chain, pendulum, run


def test_fixed_penalty_by_default_and_ramped_with_beta():
    """beta = 0: k is the ceiling from the first step; beta > 0: k starts at k_start and climbs, capped by ke."""
    model = chain(links=3, block_mass=10.0)
    fixed = SolverVBD(model)
    run(model, fixed, 2, 1.0 / 60.0)
    assert np.allclose(fixed.rigid.joints.k.numpy()[:, 0], 1.0e5)
    ramped = SolverVBD(model, rigid_avbd_beta=1.0e6, rigid_joint_linear_ke=1.0e4, rigid_joint_linear_k_start=50.0)
    assert np.allclose(ramped.rigid.joints.k.numpy()[:, 0], 50.0)
    run(model, ramped, 1, 1.0 / 60.0)
    k = ramped.rigid.joints.k.numpy()[:, 0]
    assert (k > 50.0).all() and (k <= 1.0e4).all()
    run(model, ramped, 60, 1.0 / 60.0)
    assert np.allclose(ramped.rigid.joints.k.numpy()[:, 0], 1.0e4 * 0.999, rtol=2e-3)  # at the cap, one decay


def test_reset_clears_history_of_selected_worlds_only():
    """reset(world_mask) zeroes λ and restores k only in the selected worlds; bodies there go back to model.body_q."""
    b = newton.ModelBuilder()
    b.replicate(_hanging_builder(), 2)
    b.color()
    model = b.finalize(device="cpu")
    solver = SolverVBD(model)
    state, _ = run(model, solver, 30, 1.0 / 60.0)
    lam = solver.rigid.joints.lam_lin.numpy()
    assert (np.linalg.norm(lam, axis=1) > 0.0).all()
    solver.reset(state, world_mask=wp.array([True, False], dtype=wp.bool, device="cpu"))
    after = solver.rigid.joints.lam_lin.numpy()
    world = model.joint_world.numpy()
    assert np.allclose(after[world == 0], 0.0) and np.allclose(after[world == 1], lam[world == 1])
    q = state.body_q.numpy()
    body_world = model.body_world.numpy()
    assert np.allclose(q[body_world == 0], model.body_q.numpy()[body_world == 0])
    assert not np.allclose(q[body_world == 1], model.body_q.numpy()[body_world == 1])


def _hanging_builder():
    b = newton.ModelBuilder()
    body = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-2), xform=wp.transform((0.3, 0, 1), wp.quat_identity()))
    b.add_articulation([b.add_joint_ball(-1, body, parent_xform=wp.transform((0, 0, 2), wp.quat_identity()),
                                         child_xform=wp.transform((-0.3, 0, 1), wp.quat_identity()))])
    return b


def test_notify_joint_properties_rebuilds_and_keeps_modes():
    """notify_model_changed(JOINT_PROPERTIES) re-reads the joints and keeps set_joint_constraint_mode choices."""
    model = pendulum()
    solver = SolverVBD(model)
    solver.set_joint_constraint_mode(0, False, slot=SolverVBD.JointSlot.LINEAR)
    solver.notify_model_changed(newton.ModelFlags.JOINT_PROPERTIES)
    assert solver.rigid.joints.hard.numpy()[0].tolist() == [0, 1]
    run(model, solver, 5, 1.0 / 60.0)
