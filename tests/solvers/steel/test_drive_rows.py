"""SolverSteel drive_mode="rows" (joints/drives.py) and joint velocity limits (joints/velocity_limits.py), on the CPU."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.launches import recorded_launches
from steel.solvers import SolverSteel

from .scenes import G

DT = 1.0 / 240.0
MASS = 10.0  # [kg]


def _vertical_slider(ke=1.0e4, kd=100.0, effort_limit=50.0, world_count=1):
    """A 10 kg slider along z under gravity, driven toward q = 0 (weight 98.1 N)."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    link = b.add_link(mass=MASS, inertia=wp.mat33(np.eye(3) * 0.1))
    joint = b.add_joint_prismatic(-1, link, axis=(0, 0, 1), target_ke=ke, target_kd=kd, effort_limit=effort_limit)
    b.add_articulation([joint])
    if world_count == 1:
        return b.finalize(device="cpu")
    scene = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    scene.replicate(b, world_count)
    return scene.finalize(device="cpu")


def _run(model, solver, steps, control=None, record=None):
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        solver.step(s0, s1, control, None, DT)
        if record is not None:
            record(s0, s1)
        s0, s1 = s1, s0
    return s0


def test_drive_rows_never_exceed_the_effort_limit_under_a_large_load():
    """A 50 N drive holding a 98.1 N weight: the row clamps the complete drive reaction at 50 N, so the slider
    falls at g - 50/10 = 4.81 m/s² (every step's reaction m (a + g) within 1e-3 N of 50 N, never above 50.001 N);
    the augmented drive clamps only its explicit force, and its implicit stiffness and damping add to it
    (measured 52.68 N after 0.5 s)."""
    model = _vertical_slider()
    reactions = []

    def reaction(s_in, s_out):
        qdd = (float(s_out.joint_qd.numpy()[0]) - float(s_in.joint_qd.numpy()[0])) / DT
        reactions.append(MASS * (qdd + G))

    _run(model, SolverSteel(model, drive_mode="rows"), 120, record=reaction)
    assert max(reactions) < 50.0 + 1e-3
    assert reactions[-1] == pytest.approx(50.0, abs=1e-3)
    reactions.clear()
    _run(model, SolverSteel(model), 120, record=reaction)
    assert reactions[-1] > 52.0


def test_drive_rows_reproduce_the_implicit_drive_below_the_effort_limit():
    """Below the limit (1000 N) the row solves the same implicit PD law as the augmented drive: the 10 kg slider
    sags to m g / ke = 9.81 mm along the same trajectory, within 1e-6 m over 1 s (float32; the row's 1e-6 cfm
    shifts it by about 1e-7 m)."""
    model = _vertical_slider(effort_limit=1000.0)
    q = {}
    for mode in ("augmented", "rows"):
        trajectory = []
        _run(model, SolverSteel(model, drive_mode=mode), 240,
             record=lambda s_in, s_out: trajectory.append(float(s_out.joint_q.numpy()[0])))
        q[mode] = np.array(trajectory)
    assert np.abs(q["rows"] - q["augmented"]).max() < 1e-6
    assert q["rows"][-1] == pytest.approx(-MASS * G / 1.0e4, rel=1e-3)


def test_a_drive_row_that_does_not_fit_is_not_applied_and_flags_the_world():
    """Drive rows are reserved first: with capacity 1, a drive and a friction row on the same slider, the drive is
    applied (the slider sags to about m g / ke = 9.8 mm) and the friction row is dropped and flagged (one per step).
    """
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    link = b.add_link(mass=MASS, inertia=wp.mat33(np.eye(3) * 0.1))
    b.add_articulation([b.add_joint_prismatic(-1, link, axis=(0, 0, 1), target_ke=1.0e4, target_kd=100.0,
                                              effort_limit=1000.0, friction=1.0)])
    model = b.finalize(device="cpu")
    solver = SolverSteel(model, drive_mode="rows", enable_joint_friction=True, articulation_constraint_max=1,
                         warn_constraint_overflow=False)
    q = float(_run(model, solver, 240).joint_q.numpy()[0])
    assert abs(q) < 0.011  # held by the drive near m g / ke (free fall would reach -2.9 m)
    with pytest.raises(RuntimeError, match="world 0: 240 articulated"):
        solver.check_constraint_capacity()


def _hinge(velocity_limit=2.0, **drive):
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    link = b.add_link(mass=1.0, inertia=wp.mat33(np.diag([0.4, 0.4, 0.5])))
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0, 0, 1), velocity_limit=velocity_limit, **drive)])
    return b.finalize(device="cpu")


def test_a_velocity_limit_holds_under_a_large_effort():
    """100 N·m on a 0.5 kg·m² hinge (200 rad/s² free) limited to 2 rad/s: the rows hold qd at 2 rad/s within
    1e-5 in both directions and the angle grows at 2 rad/s; without the option it reaches 200 t rad/s."""
    model = _hinge()
    for effort in (100.0, -100.0):
        control = model.control()
        control.joint_f.assign([effort])
        state = _run(model, SolverSteel(model, enable_joint_velocity_limits=True), 48, control=control)
        assert float(state.joint_qd.numpy()[0]) == pytest.approx(np.sign(effort) * 2.0, abs=1e-5)
        # 0.833 and 1.667 rad/s in the first two steps, then 2 rad/s (symplectic Euler positions).
        assert float(state.joint_q.numpy()[0]) == pytest.approx(np.sign(effort) * (2.5 + 46 * 2.0) * DT, rel=1e-5)
    control = model.control()
    control.joint_f.assign([100.0])
    state = _run(model, SolverSteel(model), 48, control=control)
    assert float(state.joint_qd.numpy()[0]) == pytest.approx(200.0 * 48 * DT, rel=1e-5)


@pytest.mark.parametrize(("fraction", "velocities"), [
    (0.5, [0.8333, 1.6667, 2.0, 2.0]),  # rows from the step whose input speed reaches 1 rad/s
    (0.9, [0.8333, 1.6667, 2.5, 2.0]),  # the crossing step (input 1.67 < 1.8) runs free, the next is clamped
    (float("inf"), [0.8333, 1.6667, 2.5, 2.8333]),  # no rows; the prescale takes the 2.5 input to 2 (reference)
])
def test_velocity_limit_rows_start_at_the_activation_fraction_one_step_late(fraction, velocities):
    """The gate samples the input velocity: 0.8333 rad/s per step toward a 2 rad/s limit."""
    model = _hinge()
    control = model.control()
    control.joint_f.assign([100.0])
    solver = SolverSteel(model, enable_joint_velocity_limits=True, velocity_limit_activation_fraction=fraction)
    seen = []
    _run(model, solver, 4, control=control, record=lambda s_in, s_out: seen.append(float(s_out.joint_qd.numpy()[0])))
    assert np.allclose(seen, velocities, atol=1e-4), seen


def test_fused_velocity_limit_clamps_a_driven_dof():
    """drive_mode="rows" with velocity limits fuses a driven DOF's limit into a clamp (velocity_limits_fused): a
    velocity drive toward 10 rad/s (kd 50, effort 1000 N·m) on the 2 rad/s hinge turns at 2 rad/s within 1e-6.
    Unfused, the limit rows and the drive row share the sweep, whose 12th pass runs backward with the drive last:
    2.0015 rad/s measured (13 iterations give 2.0 exactly), so within 2e-3. Without drive rows nothing is fused."""
    model = _hinge(target_kd=50.0, effort_limit=1000.0)
    control = model.control()
    control.joint_target_qd.assign([10.0])
    for fuse, tolerance in ((True, 1e-6), (False, 2e-3)):
        solver = SolverSteel(model, drive_mode="rows", enable_joint_velocity_limits=True,
                             fuse_joint_velocity_limits=fuse)
        assert solver.velocity_limits_fused is fuse
        state = _run(model, solver, 24, control=control)
        assert float(state.joint_qd.numpy()[0]) == pytest.approx(2.0, abs=tolerance)
    assert SolverSteel(model, enable_joint_velocity_limits=True).velocity_limits_fused is False


def _launches(model, solver, control):
    """Kernel names launched by one step (after a warm-up step)."""
    _run(model, solver, 1, control=control)
    with recorded_launches() as kernels:
        _run(model, solver, 1, control=control)
    return [k.key for k in kernels]


def test_joint_rows_cost_one_launch_and_nothing_when_off():
    """Limits, joint friction and velocity limits share one launch over the joints; drive rows add one and the
    velocity-limit prescale one; the plain step launches none of them (the options off cost nothing)."""
    model = _hinge(target_kd=50.0, effort_limit=1000.0)
    control = model.control()
    plain = _launches(model, SolverSteel(model), control)
    full = _launches(model, SolverSteel(model, drive_mode="rows", enable_joint_limits=True, enable_joint_friction=True,
                                         enable_joint_velocity_limits=True), control)
    assert not any("rows" in k or "prescale" in k for k in plain), plain
    assert len(full) == len(plain) + 3, (plain, full)
    assert sum("_prescale" in k for k in full) == 1, full
    assert sum("_joint_rows" in k for k in full) == 1 and sum("_drive_rows" in k for k in full) == 1, full
