"""SolverSteel joint-space dynamics: pendulum, free-body spin, drives, limits, damping attributes."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

from .scenes import G, pendulum, run, single_box

DT = 1.0 / 240.0


def test_small_angle_pendulum_period_matches_two_pi_sqrt_l_over_g():
    """A 0.05 rad pendulum of length 0.5 m swings with period 2 pi sqrt(L/g) within 0.1 %.

    Measured +0.036 % (the finite amplitude alone adds theta²/16 = 0.016 %); gravity x 1.01 shortens
    the period by 0.5 %, which fails.
    """
    L, dt = 0.5, 1.0 / 1000.0
    model = pendulum(L, angle=0.05)
    solver = SolverSteel(model)
    qs = []
    run(model, solver, 3000, dt, record=lambda s: qs.append(float(s.joint_q.numpy()[0])))
    q = np.array(qs)
    up = np.nonzero((q[:-1] < 0.0) & (q[1:] >= 0.0))[0]  # upward zero crossings
    # linear interpolation of the crossing times
    t = (up + q[up] / (q[up] - q[up + 1]) + 1) * dt
    period = np.diff(t).mean()
    assert period == pytest.approx(2 * np.pi * np.sqrt(L / G), rel=1e-3)


def test_static_pendulum_parent_wrench_is_its_weight():
    """A hanging pendulum at rest: body_parent_f is its weight, straight up, within 0.01 % (measured exact)."""
    model = pendulum(0.5, mass=2.0)
    solver = SolverSteel(model)
    obs = solver.observables({"body_parent_f"})
    run(model, solver, 10, DT, observables=obs)
    f = obs.body_parent_f.numpy()[0]
    np.testing.assert_allclose(f[2], 2.0 * G, rtol=1e-4)
    np.testing.assert_allclose(f[[0, 1, 3, 4, 5]], 0.0, atol=1e-4 * 2.0 * G)  # [N, N·m]


def test_torque_free_spin_conserves_angular_momentum_and_flips():
    """A box spun about its intermediate axis flips (Dzhanibekov) and keeps world L: 5 s at dt 1/240 s, the
    largest change of L measured 1.27e-4 of |L| (predict.py's momentum-form correction; 1.4 % without it),
    limit 4e-4 relative (3.1x).

    Root angular damping (0.05 1/s by default) is switched off through the attribute so that the
    test sees the integrator alone.
    """
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    SolverSteel.register_custom_attributes(builder)
    body = builder.add_body(custom_attributes={"steel:rigid_body_angular_damping": 0.0})
    builder.add_shape_box(body, hx=0.3, hy=0.15, hz=0.05, cfg=newton.ModelBuilder.ShapeConfig(density=100.0))
    builder.joint_qd[3:6] = [0.01, 5.0, 0.0]  # about y, the intermediate axis, with a small perturbation
    model = builder.finalize(device="cpu")
    solver = SolverSteel(model)
    inertia = model.body_inertia.numpy()[0].astype(np.float64)

    def world_L(state):
        q = state.body_q.numpy()[0].astype(np.float64)
        x, y, z, w = q[3:]
        R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                      [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                      [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        return R @ inertia @ R.T @ state.body_qd.numpy()[0, 3:].astype(np.float64), R

    body_y = []
    Ls = []

    def record(s):
        L, R = world_L(s)
        Ls.append(L)
        body_y.append(R[:, 1] @ np.array([0.0, 1.0, 0.0]))

    run(model, solver, 1200, 1.0 / 240.0, record=record)
    L0 = Ls[0]  # model.state() holds no body twist until a step publishes one
    drift = np.abs(np.array(Ls) - L0).max() / np.linalg.norm(L0)
    assert drift < 4e-4  # relative to |L|
    assert min(body_y) < -0.9  # the body's y axis turned around: the flip happened


def test_drive_tracks_its_target_and_effort_limit_clamps_the_explicit_force():
    """A PD-driven pendulum settles at its target; with a tiny effort limit it cannot hold it."""
    for effort, reaches in ((1e6, True), (0.1, False)):
        builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
        body = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-3), com=wp.vec3(0.0, 0.0, -0.5))
        j = builder.add_joint_revolute(-1, body, axis=(0.0, 1.0, 0.0), target_ke=2000.0, target_kd=50.0,
                                       effort_limit=effort)
        builder.add_articulation([j])
        model = builder.finalize(device="cpu")
        control = model.control()
        control.joint_target_q.assign(np.array([0.3], dtype=np.float32))
        solver = SolverSteel(model)
        state, _ = run(model, solver, 600, DT, control=control)
        q = float(state.joint_q.numpy()[0])
        # gravity torque m g L sin(0.3) = 1.45 N m over ke = 2000 leaves a 0.7 mrad offset
        if reaches:
            assert q == pytest.approx(0.3, abs=2e-3)
        else:
            assert abs(q) < 0.05  # 0.1 N m cannot lift the 1 kg bob by more than a few degrees


def test_joint_limit_holds_with_enable_joint_limits():
    """A pendulum swung from 0 at 4 rad/s into its limits [-0.2, 0.2] reaches each bound and never passes it:
    its extremes over 2 s are the bounds to 3e-9 rad (float32; tolerance 3e-8 rad absolute, two float32 steps
    at 0.2). A limit row that holds the joint before the bound (no speculative target) leaves it short."""
    model = pendulum(0.5, angle=0.0, limit=(-0.2, 0.2))
    control = model.control()
    qs = []
    state = model.state()
    state.joint_qd.assign(np.array([4.0], dtype=np.float32))  # swing hard into the upper limit
    solver = SolverSteel(model, enable_joint_limits=True)
    pipeline_free = None
    s0, s1 = state, model.state()
    for _ in range(480):
        solver.step(s0, s1, control, pipeline_free, DT)
        s0, s1 = s1, s0
        qs.append(float(s0.joint_q.numpy()[0]))
    assert abs(max(qs) - 0.2) < 3e-8 and abs(min(qs) + 0.2) < 3e-8
    free = SolverSteel(model)
    s0, s1 = state, model.state()
    s0.joint_q.zero_()
    s0.joint_qd.assign(np.array([4.0], dtype=np.float32))
    free.step(s0, s1, control, None, DT)
    for _ in range(60):
        free.step(s1, s1, control, None, DT)
    assert float(s1.joint_q.numpy()[0]) > 0.3  # without the option the limit is not enforced


def test_linear_damping_attribute_decays_velocity_geometrically():
    """A free body with steel:rigid_body_linear_damping = d keeps v0 (1 - d dt)^n (no gravity)."""
    d, n = 2.0, 100
    model = single_box(z=5.0, gravity=(0.0, 0.0, 0.0),
                       attributes={"steel:rigid_body_linear_damping": d})
    state = model.state()
    state.joint_qd.assign(np.array([1.0, 0, 0, 0, 0, 0], dtype=np.float32))
    solver = SolverSteel(model)
    s1 = model.state()
    for _ in range(n):
        solver.step(state, s1, None, None, DT)
        state, s1 = s1, state
    assert float(state.joint_qd.numpy()[0]) == pytest.approx((1 - d * DT) ** n, rel=1e-4)


def test_max_velocity_attributes_clamp_free_bodies():
    """max linear / angular velocity attributes clamp |v| and |w| of a free body."""
    model = single_box(z=5.0, gravity=(0.0, 0.0, 0.0),
                       attributes={"steel:rigid_body_max_linear_velocity": 2.0,
                                   "steel:rigid_body_max_angular_velocity": 3.0})
    state = model.state()
    state.joint_qd.assign(np.array([10.0, 0, 0, 0, 0, 30.0], dtype=np.float32))
    SolverSteel(model).step(state, state, None, None, DT)
    qd = state.joint_qd.numpy()
    assert np.linalg.norm(qd[:3]) == pytest.approx(2.0, rel=1e-5)
    assert np.linalg.norm(qd[3:]) <= 3.0 * (1 + 1e-5)


def test_max_depenetration_velocity_bounds_the_push_out_of_an_overlapping_box():
    """A box 5 cm into the ground leaves at no more than its max depenetration velocity (0.3 m/s)."""
    model = single_box(z=0.05, attributes={"steel:rigid_body_max_depenetration_velocity": 0.3})
    solver = SolverSteel(model, baumgarte=1.0)
    vz = []
    run(model, solver, 30, DT, record=lambda s: vz.append(float(s.body_qd.numpy()[0, 2])))
    assert max(vz) <= 0.3 + 1e-3
    assert max(vz) > 0.25  # the bound is what limits it (baumgarte 1 would ask for 12 m/s)


def test_a_replaced_max_depenetration_array_bounds_the_push_out_from_the_next_step():
    """Replacing ``model.steel.rigid_body_max_depenetration_velocity`` (no notify) takes effect at the next step,
    as for the other ``steel:`` body attributes: the box 5 cm deep leaves at 0.3 m/s, then is pushed at 0.1 m/s."""
    model = single_box(z=0.05, attributes={"steel:rigid_body_max_depenetration_velocity": 0.3})
    solver = SolverSteel(model, baumgarte=1.0)
    s0, s1 = model.state(), model.state()
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    vz = []
    for step in range(20):
        if step == 5:
            model.steel.rigid_body_max_depenetration_velocity = wp.full(1, 0.1, dtype=wp.float32, device="cpu")
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        vz.append(float(s0.body_qd.numpy()[0, 2]))
    assert max(vz[:5]) > 0.25  # the first array's bound limits the push-out [m/s]
    # The bound caps the push, not a speed the box already has: gravity takes 0.3 m/s down to the new bound
    # (g dt = 0.041 m/s a step) in four steps, then the push holds it there [m/s].
    assert vz[5] < vz[4]
    assert max(vz[10:]) <= 0.1 + 1e-3
    assert min(vz[10:]) > 0.08  # still overlapping, pushed at the bound


def test_update_mass_matrix_interval_reuses_the_factor_between_rebuilds():
    """A single hinge (configuration-independent H) gives the same swing with interval 5 as with 1."""
    qs = {}
    for interval in (1, 5):
        model = pendulum(0.5, angle=0.4)
        solver = SolverSteel(model, update_mass_matrix_interval=interval)
        s0, s1 = model.state(), model.state()
        out = []
        for _ in range(120):
            solver.step(s0, s1, None, None, DT)
            s0, s1 = s1, s0
            out.append(float(s0.joint_q.numpy()[0]))
        qs[interval] = np.array(out)
    # H of a hinge about a fixed axis is constant: only float32 rounding may differ [rad].
    np.testing.assert_allclose(qs[5], qs[1], atol=1e-6)
    assert qs[1].min() < -0.2  # it really swung past the bottom


def test_drive_gain_and_dt_edits_take_effect_between_mass_matrix_rebuilds():
    """With update_mass_matrix_interval=1000 a driven hinge follows the interval-1 run within 1e-6 rad
    while the drive gains are edited (no notify) and dt changes: the implicit diagonal dt kd + dt² ke
    folded into H is the current step's, only the rigid-body H may be stale.

    The hinge's H = m L² does not depend on q, so a stale H is exact and any difference comes from a
    stale diagonal. 1e-6 rad: H rebuilt from different poses differs by float32 rounding only.
    """
    runs = []
    for interval in (1, 1000):
        model = pendulum(1.0)
        model.joint_target_ke.assign([100.0])
        model.joint_target_kd.assign([5.0])
        control = model.control()
        control.joint_target_q.assign([0.5])
        solver = SolverSteel(model, update_mass_matrix_interval=interval)
        s0, s1 = model.state(), model.state()
        trace = []
        for edits, dt in (({}, 1.0e-3), ({"joint_target_ke": 1.0e4}, 1.0e-3), ({"joint_target_kd": 200.0}, 4.0e-3)):
            for name, value in edits.items():
                getattr(model, name).assign([value])
            for _ in range(150):
                solver.step(s0, s1, control, None, dt)
                s0, s1 = s1, s0
            trace.append(float(s0.joint_q.numpy()[0]))
        runs.append(np.array(trace))
    assert np.isfinite(runs[1]).all()
    np.testing.assert_allclose(runs[1], runs[0], rtol=0.0, atol=1.0e-6)


def _damped_slider(solver_cls, steps=120, dt=1.0 / 120.0):
    """A 1 kg slider (no gravity) with passive joint_damping 20 N·s/m and an augmented drive (ke 50 N/m, kd 5 N·s/m)
    to 1.5 m, from rest at 0; returns (q [m], qd [m/s]) after ``steps`` steps of ``dt`` [s]."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    link = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 0.01))
    joint = builder.add_joint_prismatic(-1, link, axis=(1.0, 0.0, 0.0), target_ke=50.0, target_kd=5.0, damping=20.0,
                                        actuator_mode=newton.JointTargetMode.POSITION)
    builder.add_articulation([joint])
    model = builder.finalize(device="cpu")
    control = model.control()
    control.joint_target_q.assign(np.array([1.5], np.float32))
    s0, s1 = model.state(), model.state()
    solver = solver_cls(model)
    for _ in range(steps):
        solver.step(s0, s1, control, None, dt)
        s0, s1 = s1, s0
    return float(s0.joint_q.numpy()[0]), float(s0.joint_qd.numpy()[0])


def _slider_law(steps, dt, implicit_damping):
    """The scalar recursion of ``_damped_slider`` in float64 (m 1, c 20, ke 50, kd 5, target 1.5):
    ``(m + dt kd + dt² ke [+ dt c]) (v' - v) = dt (ke (q_t - q - dt v) - kd v - c v)``, ``q' = q + dt v'``.
    With the bracket (``implicit_damping``) it is backward Euler in the drive and the damping: expanding gives
    ``m (v' - v) = dt (ke (q_t - q - dt v') - kd v' - c v')``; without it the damping force is ``-c v`` (explicit)."""
    m, c, ke, kd, target = 1.0, 20.0, 50.0, 5.0, 1.5
    q = v = 0.0
    for _ in range(steps):
        lhs = m + dt * kd + dt * dt * ke + (dt * c if implicit_damping else 0.0)
        v += dt * (ke * (target - q - dt * v) - kd * v - c * v) / lhs
        q += dt * v
    return q, v


def test_passive_damping_on_a_slider_with_an_augmented_drive_is_backward_euler():
    """Passive joint_damping folds dt*c into the mass-matrix diagonal beside the drive's dt*kd + dt²*ke: after 120
    steps of 1/120 s the slider is where the backward-Euler recursion puts it (1.310985 m, 0.414365 m/s; measured
    agreement 1e-6 relative, asserted rtol 3e-6: float32 state). An explicit damping force -c v (as the reference
    applies it) ends at 1.307882 m, 0.24 % short, which this tolerance rejects; so does dropping dt*c from the
    diagonal, which was checked by mutation."""
    q, qd = _damped_slider(SolverSteel)
    q_be, qd_be = _slider_law(120, 1.0 / 120.0, implicit_damping=True)
    assert q_be == pytest.approx(1.310985, abs=1e-6) and qd_be == pytest.approx(0.414365, abs=1e-6)
    assert q == pytest.approx(q_be, rel=3e-6)
    assert qd == pytest.approx(qd_be, rel=3e-6)
    q_explicit, _ = _slider_law(120, 1.0 / 120.0, implicit_damping=False)
    assert abs(q_explicit - q_be) / q_be > 2e-3  # the two laws are told apart by far more than the tolerance


def test_the_reference_applies_passive_damping_explicitly_where_ours_is_implicit():
    """The same slider under newton.solvers.SolverSteel follows the explicit-damping recursion (1.307882 m), not
    backward Euler: a deliberate difference, kept because the implicit term is stable for any damping, where the
    explicit force reverses the velocity once c dt exceeds twice the augmented mass. rtol 3e-6: float32 state."""
    import newton.solvers  # noqa: PLC0415

    q_ref, qd_ref = _damped_slider(newton.solvers.SolverSteel)
    q_ex, qd_ex = _slider_law(120, 1.0 / 120.0, implicit_damping=False)
    assert q_ex == pytest.approx(1.307882, abs=1e-6)
    assert q_ref == pytest.approx(q_ex, rel=3e-6)
    assert qd_ref == pytest.approx(qd_ex, rel=3e-6)
