"""SolverSteel's fused velocity clamp, its treatment of the input state and ``velocity_drive_mode``, side by side
with the reference solver (``newton.solvers.SolverSteel``, newton 1.8.0) on the CPU.

The reference figures quoted in docstrings were measured by running the reference on the same scenes. The
reference lands one float32 ulp off a bound (1.9999998 for 2 rad/s), hence tolerances of 1e-6 rad/s.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

DT = 1.0 / 240.0
INERTIA = wp.mat33(np.diag([0.4, 0.4, 0.5]))  # [kg m²]
TOL = 1e-6  # [rad/s]: float32 rounding of a clamp impulse (the reference lands one ulp off the bound)
TORQUE_TOL = 1e-3  # [N·m]: body_parent_f is (qd change) / dt times inertia; 1e-7 rad/s of rounding is ~1e-4 N·m
DRIVE = {"target_kd": 1e-6}  # a negligible damping drive [N·m·s]: makes the DOF "driven" for the fused clamp
FUSED = {"enable_joint_velocity_limits": True, "drive_mode": "rows"}
SOLVERS = (SolverSteel, newton.solvers.SolverSteel)


def _coaxial_chain(driven, limits=(2.0, 2.0)):
    """Two links turning about the same z axis through both COMs, no gravity. The mass matrix is
    ``H = [[1, 0.5], [0.5, 0.5]]`` [kg m²] (link 1 rides on link 0), so ``H^-1 = [[2, -2], [-2, 4]]``: an impulse
    along DOF 0 moves DOF 1 by minus as much, one along DOF 1 moves DOF 0 by minus half as much."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    joints, parent = [], -1
    for i, limit in enumerate(limits):
        link = b.add_link(mass=1.0, inertia=INERTIA)
        drive = DRIVE if i in driven else {}
        joints.append(b.add_joint_revolute(parent, link, axis=(0, 0, 1), velocity_limit=limit, **drive))
        parent = link
    b.add_articulation(joints)
    return b.finalize(device="cpu")


def _one_step(solver_class, model, qd, **options):
    """One step from ``qd`` (eval_fk'd input); returns (qd_out, body_parent_f)."""
    solver = solver_class(model, **options)
    obs = solver.observables({"body_parent_f"})
    s0, s1 = model.state(), model.state()
    s0.joint_qd.assign(np.asarray(qd, dtype=np.float32))
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    solver.step(s0, s1, None, None, DT, observables=obs)
    return s1.joint_qd.numpy(), obs.body_parent_f.numpy()


# (driven DOFs, input qd [rad/s], iterations, expected qd [rad/s]); limits 2 rad/s on both DOFs.
CLAMP_CASES = [
    # One iteration, the clamp impulse alone: DOF 0 from 5 to 2 (impulse -1.5 N·m·s) moves DOF 1 from 1 to 4.
    ((0,), [5.0, 1.0], 1, [2.0, 4.0]),
    # Both clamped: DOF 0 to 2 takes DOF 1 to 4; its clamp to 2 (impulse -0.5) takes DOF 0 back up to 3.
    ((0, 1), [5.0, 1.0], 1, [3.0, 2.0]),
    # DOF 1 from 5 to 2 (impulse -0.75) takes the undriven DOF 0 from 1 to 2.5 (its rows see 1 first).
    ((1,), [1.0, 5.0], 1, [2.5, 2.0]),
    # Negative side: DOF 0 from -5 to -2 takes DOF 1 to -2, within its limit.
    ((0,), [-5.0, 1.0], 1, [-2.0, -2.0]),
    # Twelve iterations (the default): the rows of DOF 1 and the clamp of DOF 0 halve DOF 1's excess each
    # iteration after the first, 2 * 0.5**10 left (reference 1.9999998, 2.0009766).
    ((0,), [5.0, 1.0], 12, [2.0, 2.0 + 2.0 ** -10]),
    # Both clamped, twelve iterations: DOF 0's excess halves each iteration, 0.5**11 left (reference 2.000488, 2).
    ((0, 1), [5.0, 1.0], 12, [2.0 + 2.0 ** -11, 2.0]),
]


@pytest.mark.parametrize(("driven", "qd", "iterations", "expected"), CLAMP_CASES)
def test_the_fused_clamp_is_an_impulse_through_the_articulation(driven, qd, iterations, expected):
    """drive_mode="rows" with the fused clamp: the clamp of a driven DOF is the impulse along that DOF that puts
    it on its bound, applied through ``H^-1``, so the coupled DOF moves with it (a bare overwrite of the driven
    DOF would leave the neighbour at 1 rad/s). Known answers from ``H^-1`` (see :func:`_coaxial_chain`), and the
    reference side by side, also for ``body_parent_f``."""
    model = _coaxial_chain(driven)
    (ours, ours_f), (ref, ref_f) = (_one_step(cls, model, qd, iterations=iterations, **FUSED) for cls in SOLVERS)
    assert SolverSteel(model, **FUSED).velocity_limits_fused
    np.testing.assert_allclose(ours, expected, atol=TOL)
    np.testing.assert_allclose(ref, expected, atol=TOL)
    np.testing.assert_allclose(ours_f, ref_f, atol=TORQUE_TOL)


def test_one_clamp_gives_the_parent_torques_of_its_impulse():
    """One iteration from (5, 1) with DOF 0 driven: the clamp impulse -1.5 N·m·s changes link 0's spin by
    -3 rad/s and leaves link 1's world spin (5 + 1 = 2 + 4 = 6 rad/s) alone, so the parent torques are
    0.5 * -3 / dt = -360 N·m on link 0 and 0 on link 1 (reference -360, 0)."""
    _, parent_f = _one_step(SolverSteel, _coaxial_chain((0,)), [5.0, 1.0], iterations=1, **FUSED)
    np.testing.assert_allclose(parent_f[:, 5], [-360.0, 0.0], atol=TORQUE_TOL)
    np.testing.assert_allclose(parent_f[:, :5], 0.0, atol=TORQUE_TOL)  # [N, N·m]: no other load


@pytest.mark.parametrize("driven", [(), (1,)])
@pytest.mark.parametrize("iterations", [1, 12])
def test_a_velocity_limit_row_never_hands_its_impulse_back(driven, iterations):
    """From rest, efforts (240, -120) N·m predict (3, -4) rad/s (``H^-1 f dt``). DOF 0's row pushes it down to 2
    (impulse -0.5 N·m·s, DOF 1 to -3), then DOF 1's row or fused clamp lifts DOF 1 to -2 (impulse 0.25), which
    takes DOF 0 down to 1.5. The rows keep what they applied: (1.5, -2) after one iteration and after twelve
    (reference 1.5000005, -2.0 both times; a row that released its impulse would walk to (2, -2))."""
    model = _coaxial_chain(driven)
    options = FUSED if driven else {"enable_joint_velocity_limits": True}
    for cls in SOLVERS:
        solver = cls(model, iterations=iterations, **options)
        s0, s1 = model.state(), model.state()
        control = model.control()
        control.joint_f.assign(np.array([240.0, -120.0], dtype=np.float32))
        solver.step(s0, s1, control, None, DT)
        np.testing.assert_allclose(s1.joint_qd.numpy(), [1.5, -2.0], atol=1e-6)  # [rad/s]


def _double_pendulum(gravity=9.81):
    """Two hinges about y with offset COMs (coupled by gravity and Coriolis), limits 2 and 5 rad/s."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -gravity))
    parent, joints = -1, []
    for i in range(2):
        link = b.add_link(mass=1.0 + i, inertia=wp.mat33(np.diag([0.02, 0.02, 0.01])), com=(0.5, 0.0, 0.0))
        xf = wp.transform((0.0 if i == 0 else 1.0, 0.0, 0.0), wp.quat_identity())
        joints.append(b.add_joint_revolute(parent, link, parent_xform=xf, axis=(0, 1, 0),
                                           velocity_limit=(2.0, 5.0)[i], **(DRIVE if i == 1 else {})))
        parent = link
    b.add_articulation(joints)
    return b.finalize(device="cpu")


@pytest.mark.parametrize("fk_input", [True, False])
@pytest.mark.parametrize("options", [
    {},
    {"enable_joint_velocity_limits": True},  # prescale and rows
    {"enable_joint_velocity_limits": True, "velocity_limit_activation_fraction": float("inf")},  # prescale only
    FUSED,  # prescale, rows and the fused clamp on the driven second hinge
])
def test_the_step_leaves_the_input_state_as_the_reference_does(options, fk_input):
    """From (6, -8) rad/s, over both limits: the step leaves ``state_in.joint_q``, ``joint_qd`` and ``body_qd``
    bitwise as given, and writes the forward kinematics of ``joint_q`` into ``state_in.body_q`` (bitwise
    unchanged when the input was eval_fk'd). With a stale input (body arrays zero) ``body_qd`` stays zero. The
    reference does the same in every case (measured; it never writes ``state_in.body_qd``)."""
    model = _double_pendulum()
    fk = model.state()
    fk.joint_q.assign([0.3, 0.7])
    fk.joint_qd.assign([6.0, -8.0])
    newton.eval_fk(model, fk.joint_q, fk.joint_qd, fk)
    outputs = []
    for cls in SOLVERS:
        s0, s1 = model.state(), model.state()
        s0.joint_q.assign(fk.joint_q)
        s0.joint_qd.assign(fk.joint_qd)
        if fk_input:
            newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
        given = {name: getattr(s0, name).numpy().copy() for name in ("joint_q", "joint_qd", "body_qd")}
        cls(model, **options).step(s0, s1, None, None, DT)
        for name, array in given.items():
            assert np.array_equal(getattr(s0, name).numpy(), array), (cls.__module__, name)
        np.testing.assert_allclose(s0.body_q.numpy(), fk.body_q.numpy(), atol=1e-6)  # [m]: eval_fk's rounding
        if fk_input:
            assert np.array_equal(s0.body_q.numpy(), fk.body_q.numpy())
        outputs.append(s1.joint_qd.numpy())
    np.testing.assert_allclose(outputs[0], outputs[1], atol=1e-5)  # [rad/s]; loads of ~10 rad/s
    if options.get("enable_joint_velocity_limits"):
        assert abs(outputs[0][0]) < 2.2  # the limits did act (2.07 after gravity with the prescale alone; 6 free)


def _hinge_against_its_limit():
    """One hinge past its upper limit (0.6 rad, limit 0.5) with a position drive toward 1 rad (ke 100 N·m/rad,
    kd 5 N·m·s/rad) pushing it further in, no gravity."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    link = b.add_link(mass=1.0, inertia=INERTIA)
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0, 0, 1), limit_lower=-0.5, limit_upper=0.5,
                                             target_ke=100.0, target_kd=5.0, target_q=1.0)])
    return b.finalize(device="cpu")


# Reference after three steps from rest, (q [rad], qd [rad/s]) per step, velocity_iterations=4.
DRIVE_MODE_REFERENCE = {
    "freeze": [(0.58, -0.2833328), (0.564, -0.5933328), (0.5512, -0.9246664)],
    "active": [(0.58, -0.4784048), (0.564, -0.9202008), (0.5512, -1.3301588)],
}


def _three_steps(solver_class, mode):
    """(q [rad], qd [rad/s]) after each of three steps from rest on :func:`_hinge_against_its_limit`."""
    model = _hinge_against_its_limit()
    solver = solver_class(model, drive_mode="rows", enable_joint_limits=True, velocity_iterations=4,
                          velocity_drive_mode=mode)
    s0, s1 = model.state(), model.state()
    s0.joint_q.assign([0.6])
    seen = []
    for _ in range(3):
        solver.step(s0, s1, None, None, DT)
        seen.append((float(s1.joint_q.numpy()[0]), float(s1.joint_qd.numpy()[0])))
        s0, s1 = s1, s0
    return np.array(seen)


@pytest.mark.parametrize("mode", ["freeze", "active"])
def test_velocity_drive_mode_side_by_side(mode):
    """drive_mode="rows", joint limits on, velocity_iterations=4: the position solve pushes the crossed limit
    out at the Baumgarte speed (-4.8 rad/s, q 0.6 -> 0.58), and the velocity sweeps drop that bias. "freeze"
    keeps the drive row's position-solve impulse, "active" solves it again against the limit row, and the
    published velocities differ by 0.2-0.4 rad/s; ours follows the reference in both within 1e-6 rad/s (float32
    rounding). The positions use the position-solve velocity and agree in both modes."""
    ours, ref = (_three_steps(cls, mode) for cls in SOLVERS)
    np.testing.assert_allclose(ours, ref, atol=1e-6)  # [rad, rad/s]
    np.testing.assert_allclose(ours, DRIVE_MODE_REFERENCE[mode], atol=1e-6)  # the figures measured at writing
    other = DRIVE_MODE_REFERENCE["active" if mode == "freeze" else "freeze"]
    assert np.abs(ours[:, 1] - np.array(other)[:, 1]).min() > 0.15  # the option matters here [rad/s]
    np.testing.assert_allclose(ours[:, 0], np.array(other)[:, 0], atol=1e-6)  # [rad]


@pytest.mark.parametrize("options", [{"enable_joint_velocity_limits": True}, FUSED])
@pytest.mark.parametrize("velocity_iterations", [0, 4])
def test_three_limited_steps_of_a_double_pendulum_follow_the_reference(options, velocity_iterations):
    """The double pendulum from (6, -8) rad/s under gravity, three steps, rows (second hinge driven and fused in
    the second case), with and without velocity sweeps, which keep the rows' impulses: ours within 1e-5 rad/s
    of the reference (float32 rounding over three steps; measured (2, -2.59986) and (1.18559, -5) in both)."""
    model = _double_pendulum()
    outputs = []
    for cls in SOLVERS:
        solver = cls(model, velocity_iterations=velocity_iterations, **options)
        s0, s1 = model.state(), model.state()
        s0.joint_q.assign([0.3, 0.7])
        s0.joint_qd.assign([6.0, -8.0])
        for _ in range(3):
            solver.step(s0, s1, None, None, DT)
            s0, s1 = s1, s0
        outputs.append(s0.joint_qd.numpy())
    np.testing.assert_allclose(outputs[0], outputs[1], atol=1e-5)
    np.testing.assert_allclose(outputs[0], [1.1855932, -5.0] if options is FUSED else [2.0, -2.5998583], atol=1e-5)
