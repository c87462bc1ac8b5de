"""SolverFeatherstone joint forces and joint features: drives, limits, mimic, kinematic bodies, model edits."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
import steel.solvers

from .scenes import G, pendulum, pendulum_builder, run


def test_pd_drive_settles_at_the_static_balance():
    """A PD-driven pendulum settles where ke (target - q) = m g L sin q, within 1e-4 rad."""
    model = pendulum(length=1.0)
    model.joint_target_ke.assign([1000.0])
    model.joint_target_kd.assign([60.0])
    control = model.control()
    control.joint_target_q.assign([0.5])
    solver = steel.solvers.SolverFeatherstone(model)
    state = run(solver, model, model.state(), 3000, 1.0e-3, control)
    q = float(state.joint_q.numpy()[0])
    expected = 0.5
    for _ in range(50):  # fixed point of q = 0.5 - m g L sin(q) / ke
        expected = 0.5 - G * np.sin(expected) / 1000.0
    assert q == pytest.approx(expected, abs=1.0e-4)


def test_limit_holds_against_a_torque():
    """A torque pushing into the upper limit settles at upper + (tau - m g L sin q) / limit_ke, within 1e-4 rad."""
    model = pendulum(length=1.0)
    model.joint_limit_upper.assign([0.2])
    model.joint_limit_ke.assign([1.0e4])
    model.joint_limit_kd.assign([100.0])
    control = model.control()
    control.joint_f.assign([5.0])
    solver = steel.solvers.SolverFeatherstone(model)
    state = run(solver, model, model.state(), 3000, 1.0e-3, control)
    expected = 0.2 + (5.0 - G * np.sin(0.2)) / 1.0e4
    assert float(state.joint_q.numpy()[0]) == pytest.approx(expected, abs=1.0e-4)


def test_stiff_limit_on_a_light_link_stays_stable_regression_humanoid_nan():
    """Regression for the reference's NaN on nv_humanoid: limit_ke = 1e4 on a 0.01 kg·m² link at dt = 1/240 s.

    Explicitly, dt sqrt(ke / I) = 4.2 > 2 diverges; the linearly implicit limit must hold the link at its
    bound (within 2e-3 rad: the gravity torque over ke) and stay finite.
    """
    model = pendulum(length=0.1, mass=1.0)
    model.joint_limit_upper.assign([0.0])
    model.joint_limit_ke.assign([1.0e4])
    model.joint_limit_kd.assign([10.0])
    state = model.state()
    state.joint_q.assign([0.3])  # start 0.3 rad past the limit
    solver = steel.solvers.SolverFeatherstone(model)
    run(solver, model, state, 480, 1.0 / 240.0)
    q = float(state.joint_q.numpy()[0])
    assert np.isfinite(q) and abs(q) < 2.0e-3


def test_damping_and_passive_spring_decay_to_rest():
    """joint_stiffness pulls a gravity-free hinge to joint_rest_q and joint_damping removes its motion."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_link(com=wp.vec3(0.5, 0.0, 0.0), mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-4))
    b.add_articulation([b.add_joint_revolute(-1, body, axis=(0.0, 0.0, 1.0))])
    model = b.finalize(device="cpu")
    model.joint_stiffness.assign([10.0])
    model.joint_damping.assign([3.0])
    model.joint_rest_q.assign([0.4])
    solver = steel.solvers.SolverFeatherstone(model)
    state = run(solver, model, model.state(), 4000, 1.0e-3)
    # Time constant of the slow mode ~0.13 s: after 4 s the residual is far below 1e-5 rad.
    assert float(state.joint_q.numpy()[0]) == pytest.approx(0.4, abs=1.0e-5)


def _two_hinges(mimic: bool) -> newton.Model:
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    a = b.add_link(com=wp.vec3(0.0, 0.0, -0.5), mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-3))
    c = b.add_link(com=wp.vec3(0.0, 0.0, -0.5), mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-3))
    j0 = b.add_joint_revolute(-1, a, axis=(0.0, 1.0, 0.0))
    j1 = b.add_joint_revolute(
        a, c, axis=(0.0, 1.0, 0.0), parent_xform=wp.transform((0.0, 0.0, -0.5), wp.quat_identity())
    )
    b.add_articulation([j0, j1])
    if mimic:
        b.set_joint_mimic(j1, j0, coeffs=(0.1, -0.5))
    return b.finalize(device="cpu")


def test_mimic_follower_follows_its_leader():
    """A mimic follower stays at q_f = c0 + c1 q_leader (to float32 rounding) while the pair swings."""
    model = _two_hinges(mimic=True)
    state = model.state()
    state.joint_q.assign([0.6, 0.1 - 0.5 * 0.6])
    solver = steel.solvers.SolverFeatherstone(model)
    moved = []
    for _ in range(5):
        run(solver, model, state, 100, 1.0e-3)
        q = state.joint_q.numpy()
        moved.append(q[0])
        assert q[1] == pytest.approx(0.1 - 0.5 * q[0], abs=1.0e-6)
    assert np.ptp(moved) > 0.1  # the leader really swings


def test_mimic_follower_off_its_relation_is_corrected_before_the_solve():
    """A follower starting off q_f = c0 + c1 q_l (and qd_f = c1 qd_l) is corrected before forces and H are built.

    One step from the off state equals, bitwise, one step from the corrected state; the input state's follower
    coordinates and body poses are the corrected ones. Overwriting only after the solve would let the
    misplaced follower's gravity torque and inertia act on the leader for that step (~1 rad/s² here).
    """
    model = _two_hinges(mimic=True)
    solver = steel.solvers.SolverFeatherstone(model)
    results = []
    for q, qd in (([0.6, 0.9], [0.5, 2.0]), ([0.6, 0.1 - 0.5 * 0.6], [0.5, -0.5 * 0.5])):
        state_in, state_out = model.state(), model.state()
        state_in.joint_q.assign(q)
        state_in.joint_qd.assign(qd)
        solver.step(state_in, state_out, None, None, 1.0e-3)
        results.append([a.numpy() for a in (state_in.joint_q, state_in.body_q, state_out.joint_q, state_out.joint_qd)])
    for off, corrected in zip(*results):
        assert np.array_equal(off, corrected)
    assert results[0][0][1] == pytest.approx(0.1 - 0.5 * 0.6, abs=1.0e-7)


@pytest.mark.parametrize("use_tile_gemm", [False, True])
def test_gain_dt_and_limit_changes_take_effect_between_mass_matrix_rebuilds(use_tile_gemm):
    """With update_mass_matrix_interval=1000, a hinge (constant H) follows the interval-1 run within 1e-6 rad
    while drive gains are edited, dt changes and a stiff limit engages: the implicit diagonal dt kd + dt² ke is
    always the current step's (the articulation refactors when it changes), only H is stale.

    The single hinge's H = m L² + I does not depend on q, so a stale H is exact and any difference would come
    from a stale diagonal (before the fix: 1.2e-3 rad off after the gain edit, 0.7 rad once the limit engaged).
    1e-6 rad: H rebuilt from different poses differs by float32 rounding only.
    """
    runs = []
    for interval in (1, 1000):
        model = pendulum(length=1.0)
        model.joint_target_ke.assign([100.0])
        model.joint_target_kd.assign([5.0])
        control = model.control()
        control.joint_target_q.assign([0.5])
        solver = steel.solvers.SolverFeatherstone(
            model, update_mass_matrix_interval=interval, use_tile_gemm=use_tile_gemm
        )
        state = model.state()
        trace = []
        for edits, dt in (
            ({}, 1.0e-3),
            ({"joint_target_ke": 1.0e4}, 1.0e-3),  # stiffer drive
            ({"joint_target_kd": 200.0}, 4.0e-3),  # more damping and a 4x step
            # A limit below the drive target, stiff enough that dt sqrt(ke / I) = 4 (explicitly unstable).
            ({"joint_limit_upper": 0.3, "joint_limit_ke": 1.0e6}, 4.0e-3),
        ):
            for name, value in edits.items():
                getattr(model, name).assign([value])
            run(solver, model, state, 150, dt, control)
            trace.append(state.joint_q.numpy()[0])
        runs.append(np.array(trace))
    assert np.isfinite(runs[1]).all()
    np.testing.assert_allclose(runs[1], runs[0], rtol=0.0, atol=1.0e-6)


def test_invalid_mimic_pair_names_both_joints():
    """A mimic pair across articulations raises ValueError naming both joints."""
    b = newton.ModelBuilder()
    bodies = [b.add_link(mass=1.0) for _ in range(2)]
    joints = [b.add_joint_revolute(-1, body, axis=(0.0, 1.0, 0.0)) for body in bodies]
    b.add_articulation([joints[0]])
    b.add_articulation([joints[1]])
    model = b.finalize(device="cpu")
    # The builder refuses such a pair, so it is made by editing the finalized model.
    model.joint_mimic_joint.assign([-1, 0])
    with pytest.raises(ValueError, match=r"joint 1.*joint 0"):
        steel.solvers.SolverFeatherstone(model)


def test_kinematic_root_is_prescribed():
    """A kinematic FREE root keeps its input coordinates; its dynamic child still swings."""
    b = newton.ModelBuilder()
    root = b.add_link(xform=wp.transform((0.0, 0.0, 1.0), wp.quat_identity()), is_kinematic=True, mass=1.0)
    j0 = b.add_joint_free(root)
    link = b.add_link(com=wp.vec3(0.5, 0.0, 0.0), mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-3))
    j1 = b.add_joint_revolute(root, link, axis=(0.0, 1.0, 0.0))
    b.add_articulation([j0, j1])
    model = b.finalize(device="cpu")
    state = model.state()
    q0 = state.joint_q.numpy().copy()
    solver = steel.solvers.SolverFeatherstone(model)
    run(solver, model, state, 100, 1.0e-3)
    q = state.joint_q.numpy()
    assert np.array_equal(q[:7], q0[:7])
    assert q[7] > 0.05  # gravity swings the link down (positive about +y)


def test_notify_after_mass_edit_equals_fresh_solver():
    """After a mass edit and notify_model_changed, a stale-H solver (interval 1000) matches a fresh one bitwise."""
    model = pendulum(length=1.0, links=2)
    control = model.control()
    control.joint_f.assign([2.0, -1.0])
    solver = steel.solvers.SolverFeatherstone(model, update_mass_matrix_interval=1000)
    state = run(solver, model, model.state(), 10, 1.0e-3, control)
    model.body_mass.assign([3.0, 0.5])
    solver.notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
    fresh_state = model.state()
    fresh_state.joint_q.assign(state.joint_q)
    fresh_state.joint_qd.assign(state.joint_qd)
    fresh = steel.solvers.SolverFeatherstone(model, update_mass_matrix_interval=1000)
    run(solver, model, state, 1, 1.0e-3, control)
    run(fresh, model, fresh_state, 1, 1.0e-3, control)
    assert np.array_equal(state.joint_qd.numpy(), fresh_state.joint_qd.numpy())


def test_a_start_far_outside_the_limits_warns_naming_the_joint():
    """model.joint_q 2.5 rad outside ±0.5 rad limits (limit_ke 1e4) warns at construction, naming the joint
    (the limit returns it at the bounded push-out speed, not as its spring would: test_limit_push_out.py).
    Inside the limits nothing is said."""
    import warnings

    b = pendulum_builder(links=3)
    for d in range(3):
        b.joint_limit_lower[d], b.joint_limit_upper[d], b.joint_limit_ke[d] = -0.5, 0.5, 1.0e4
    b.joint_q[:] = [3.0, 0.0, 0.0]
    model = b.finalize(device="cpu")
    with pytest.warns(UserWarning, match=r"joint 0.*2\.5 outside its limits"):
        steel.solvers.SolverFeatherstone(model)
    model.joint_q.assign([0.4, 0.0, -0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        steel.solvers.SolverFeatherstone(model)
