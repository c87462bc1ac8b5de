"""SolverSteel's velocity-limit prescale (joints/velocity_limits.py), side by side with the reference solver, on the CPU.

With ``enable_joint_velocity_limits`` each articulation whose limited DOFs already exceed a limit is rescaled
before the step by the one ratio ``min(v / |qd|)``. The reference figures quoted below were measured by running
``newton.solvers.SolverSteel`` (newton 1.8.0) on the same scenes; the reference lands one float32 ulp under a
limit (1.9999998 for 2 rad/s), hence the 1e-6 rad/s tolerances.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

from .scenes import G

DT = 1.0 / 240.0
INF = float("inf")
INERTIA = wp.mat33(np.diag([0.4, 0.4, 0.5]))  # [kg m²]; all links turn about z through their COM
TOL = 1e-6  # [rad/s]: float32 rounding of qd * ratio (the reference lands one ulp under the limit)
LIMITS = {"enable_joint_velocity_limits": True}


def _chain(limits, *, drives=None, ball_root=False, free_root=False, articulations=1):
    """Hinges about z in series (COMs on the axis, so the joints do not couple), no gravity."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    for _ in range(articulations):
        joints, parent = [], -1
        if ball_root or free_root:
            root = b.add_link(mass=1.0, inertia=INERTIA)
            joints.append(b.add_joint_ball(-1, root) if ball_root else b.add_joint_free(root))
            parent = root
        for i, limit in enumerate(limits):
            link = b.add_link(mass=1.0, inertia=INERTIA)
            drive = (drives or {}).get(i, {})
            joints.append(b.add_joint_revolute(parent, link, axis=(0, 0, 1), velocity_limit=limit, **drive))
            parent = link
        b.add_articulation(joints)
    return b.finalize(device="cpu")


def _step(solver_class, model, qd, *, effort=None, q=None, observables=False, **options):
    """One step from ``qd``; returns (qd_out, q_out, body_parent_f, qd_in after the step)."""
    solver = solver_class(model, **options)
    obs = solver.observables({"body_parent_f"}) if observables else None
    s0, s1 = model.state(), model.state()
    if q is not None:
        s0.joint_q.assign(np.asarray(q, dtype=np.float32))
    s0.joint_qd.assign(np.asarray(qd, dtype=np.float32))
    control = model.control()
    if effort is not None:
        control.joint_f.assign(np.asarray(effort, dtype=np.float32))
    solver.step(s0, s1, control, None, DT, observables=obs)
    parent_f = obs.body_parent_f.numpy() if observables else None
    return s1.joint_qd.numpy(), s1.joint_q.numpy(), parent_f, s0.joint_qd.numpy()


def _both(model, qd, **kwargs):
    """(ours, reference) qd after one step."""
    return _step(SolverSteel, model, qd, **kwargs)[0], _step(newton.solvers.SolverSteel, model, qd, **kwargs)[0]


@pytest.mark.parametrize("fraction", [0.0, INF])
@pytest.mark.parametrize("qd0", [5.0, -5.0])
def test_a_hinge_over_its_limit_is_rescaled_before_the_step_and_transmits_no_parent_wrench(fraction, qd0):
    """A 0.5 kg·m² hinge at 5 rad/s, limit 2 rad/s, no load: qd = ±2 after one step, also with no rows
    (fraction inf; reference: ±1.9999998 both ways), q = ±2 dt, and body_parent_f stays 0 (reference 0): the
    rows alone would bring it back inside the step with a parent torque of I (2 - 5)/dt = -360 N·m (measured
    before the prescale existed). The input state keeps 5 rad/s (as the reference)."""
    model = _chain([2.0])
    options = dict(LIMITS, velocity_limit_activation_fraction=fraction)
    for solver_class in (SolverSteel, newton.solvers.SolverSteel):
        qd, q, parent_f, qd_in = _step(solver_class, model, [qd0], observables=True, **options)
        assert qd[0] == pytest.approx(np.sign(qd0) * 2.0, abs=TOL)
        assert q[0] == pytest.approx(np.sign(qd0) * 2.0 * DT, abs=1e-8)  # [rad]
        np.testing.assert_allclose(parent_f, 0.0, atol=1e-4)  # [N, N·m] against 360 N·m from the rows
        assert qd_in[0] == qd0
    qd, _, _, _ = _step(SolverSteel, model, [qd0])  # the option off: untouched
    assert qd[0] == qd0


def test_the_prescale_runs_before_the_effort():
    """5 rad/s, limit 2, 100 N·m and no rows (fraction inf): 2 + 100/0.5 dt = 2.8333 rad/s (reference 2.83333)."""
    ours, ref = _both(_chain([2.0]), [5.0], effort=[100.0], **LIMITS, velocity_limit_activation_fraction=INF)
    assert ours[0] == pytest.approx(2.0 + 200.0 * DT, abs=1e-5)
    assert ref[0] == pytest.approx(ours[0], abs=1e-5)


@pytest.mark.parametrize(("limits", "qd", "expected"), [
    ([2.0, 3.0], [5.0, -6.0], [2.0, -2.4]),  # the worst ratio 0.4 scales both, not a clamp to [2, -3]
    ([2.0, 2.0], [1.0, 5.0], [0.4, 2.0]),  # a DOF under its limit is scaled with the others
    ([2.0, 1.0e6], [5.0, 10.0], [2.0, 4.0]),  # the builder's default limit sets no ratio but is scaled
    ([2.0, INF], [5.0, 10.0], [2.0, 4.0]),
    ([-1.0, 2.0], [1.0, 5.0], [0.4, 2.0]),  # a limit <= 0 limits nothing but the DOF is scaled
    ([0.0, 2.0], [1.0, 1.5], [1.0, 1.5]),  # nothing over a positive limit: unchanged
])
def test_an_articulation_is_rescaled_by_its_worst_ratio(limits, qd, expected):
    """Two hinges in series with no rows (fraction inf): the whole joint-velocity vector is multiplied by
    min(v / |qd|) over the DOFs with a positive limit. Reference figures: the expected values within 1e-6."""
    ours, ref = _both(_chain(limits), qd, **LIMITS, velocity_limit_activation_fraction=INF)
    np.testing.assert_allclose(ours, expected, atol=TOL)
    np.testing.assert_allclose(ref, expected, atol=TOL)


def test_only_prismatic_revolute_and_d6_dofs_are_rescaled_and_each_articulation_apart():
    """A BALL root at 3 rad/s and a FREE root at (1 m/s, 0.5 rad/s) keep their velocity while the 5 rad/s
    hinge under them drops to 2 (reference: the same); two articulations get their own ratios."""
    ours, ref = _both(_chain([2.0], ball_root=True), [0.0, 0.0, 3.0, 5.0], **LIMITS,
                      velocity_limit_activation_fraction=INF)
    for qd in (ours, ref):
        np.testing.assert_allclose(qd, [0.0, 0.0, 3.0, 2.0], atol=TOL)
    ours, ref = _both(_chain([2.0], free_root=True), [1.0, 0.0, 0.0, 0.0, 0.0, 0.5, 5.0], **LIMITS,
                      velocity_limit_activation_fraction=INF)
    for qd in (ours, ref):
        # The root's 0.05 1/s angular damping: 0.5 (1 - 0.05 dt) = 0.49990 rad/s.
        np.testing.assert_allclose(qd, [1.0, 0.0, 0.0, 0.0, 0.0, 0.5 * (1.0 - 0.05 * DT), 2.0], atol=TOL)
    ours, ref = _both(_chain([2.0, 2.0], articulations=2), [5.0, 1.0, 1.0, 1.5], **LIMITS,
                      velocity_limit_activation_fraction=INF)
    for qd in (ours, ref):
        np.testing.assert_allclose(qd, [2.0, 0.4, 1.0, 1.5], atol=TOL)


def _double_pendulum(gravity):
    """Two 1 m links about y with offset COMs: Coriolis and gravity couple the joints."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -gravity))
    joints, parent = [], -1
    for i in range(2):
        link = b.add_link(mass=1.0 + i, inertia=wp.mat33(np.diag([0.02, 0.02, 0.01])), com=(0.5, 0.0, 0.0))
        xform = wp.transform((0.0, 0.0, 0.0) if i == 0 else (1.0, 0.0, 0.0), wp.quat_identity())
        joints.append(b.add_joint_revolute(parent, link, parent_xform=xform, axis=(0, 1, 0),
                                           velocity_limit=(2.0, 5.0)[i]))
        parent = link
    b.add_articulation(joints)
    return b.finalize(device="cpu")


@pytest.mark.parametrize("gravity", [0.0, G])
def test_the_step_after_the_prescale_is_the_step_of_the_rescaled_state(gravity):
    """A double pendulum at q = (0.3, 0.7) rad, qd = (6, -3) rad/s, limits (2, 5): one limited step equals a
    plain step from qd = (2, -1) (Coriolis, gravity and body_parent_f all see the rescaled velocity): within
    1e-6 rad/s and 1e-4 N here (bitwise equal as measured), the reference within 2.4e-7 rad/s and 5e-5 N."""
    model = _double_pendulum(gravity)
    for solver_class in (SolverSteel, newton.solvers.SolverSteel):
        qd, q, parent_f, _ = _step(solver_class, model, [6.0, -3.0], q=[0.3, 0.7], observables=True, **LIMITS,
                                   velocity_limit_activation_fraction=INF)
        qd_plain, q_plain, parent_f_plain, _ = _step(solver_class, model, [2.0, -1.0], q=[0.3, 0.7],
                                                     observables=True)
        np.testing.assert_allclose(qd, qd_plain, atol=TOL)
        np.testing.assert_allclose(q, q_plain, atol=1e-8)  # [rad]
        np.testing.assert_allclose(parent_f, parent_f_plain, atol=1e-4)  # [N, N·m]; loads of tens of N
        assert abs(qd[0] - 6.0) > 3.0  # the prescale did act (2.016 rad/s; 6.07 unlimited)


def test_the_row_gate_does_not_sample_the_prescaled_velocity():
    """Two hinges at (5, 1) rad/s, limits 2, fraction 0.5, 100 N·m between the links: the prescale gives
    (2, 0.4), yet the second DOF gets rows (its input 1 rad/s reaches 0.5 * 2; 0.4 would not); the load would
    take it to 2.067 rad/s, the rows hold 2.0 and the first ends at 1.2 (reference 1.1999998, 2.0)."""
    ours, ref = _both(_chain([2.0, 2.0]), [5.0, 1.0], effort=[0.0, 100.0], **LIMITS,
                      velocity_limit_activation_fraction=0.5)
    for qd in (ours, ref):
        np.testing.assert_allclose(qd, [1.2, 2.0], atol=1e-5)


@pytest.mark.parametrize(("drive", "fraction", "qd", "expected"), [
    ({"target_kd": 1e-6}, 0.0, [1.0, 5.0], [1.0, 2.0]),  # fused: the driven DOF neither scales nor is scaled
    ({"target_kd": 1e-6}, INF, [5.0, 1.0], [2.0, 0.4]),  # fraction inf: nothing fused, the driven DOF scales
    ({"target_kd": 0.0}, 0.0, [1.0, 5.0], [0.4, 2.0]),  # zero gains: not driven
])
def test_fused_driven_dofs_are_left_out_of_the_prescale(drive, fraction, qd, expected):
    """drive_mode="rows": the first hinge has a negligible damping drive (1e-6 N·m·s), limits 2 rad/s. With the
    fused clamp active it keeps its 1 rad/s while the second is rescaled from 5 to 2 (reference (1.0, 2.0);
    without fusing its ratio would pull it to 0.4). Reference figures equal the expected values within 1e-6."""
    model = _chain([2.0, 2.0], drives={0: drive})
    ours, ref = _both(model, qd, drive_mode="rows", **LIMITS, velocity_limit_activation_fraction=fraction)
    np.testing.assert_allclose(ours, expected, atol=TOL)
    np.testing.assert_allclose(ref, expected, atol=TOL)
    assert SolverSteel(model, drive_mode="rows", **LIMITS,
                       velocity_limit_activation_fraction=fraction).velocity_limits_fused is (fraction == 0.0)


def test_a_d6_joint_is_rescaled_and_a_zero_limit_limits_nothing():
    """A D6 joint (x slide and z turn, limits 2 m/s and 2 rad/s) at (5, 1): (2, 0.4) (reference the same). A hinge
    limited to 0 rad/s at 5 rad/s keeps 5 with rows on (fraction 0), as the reference: a limit <= 0 is no limit
    (the rows held it at 0 before)."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    link = b.add_link(mass=1.0, inertia=INERTIA)
    dof = newton.ModelBuilder.JointDofConfig
    b.add_articulation([b.add_joint_d6(-1, link, linear_axes=[dof(axis=(1, 0, 0), velocity_limit=2.0)],
                                       angular_axes=[dof(axis=(0, 0, 1), velocity_limit=2.0)])])
    ours, ref = _both(b.finalize(device="cpu"), [5.0, 1.0], **LIMITS, velocity_limit_activation_fraction=INF)
    for qd in (ours, ref):
        np.testing.assert_allclose(qd, [2.0, 0.4], atol=TOL)
    ours, ref = _both(_chain([0.0]), [5.0], **LIMITS)
    for qd in (ours, ref):
        np.testing.assert_allclose(qd, [5.0], atol=TOL)
