"""Joint-owned mimics in SolverVBD's rigid AVBD: q_follower = c0 + c1 q_leader, with the reaction on the leader.

Scene: a base welded to the world with two links hanging 0.5 m under it (2 kg each: 1 kg link and a 1 kg box),
on two REVOLUTE (axis y) or PRISMATIC (axis x) joints; the leader is driven to 0.3 (ke 200, kd 20), the
follower mimics it. Known answers: the follower's relation, and the leader's static equilibrium with the
follower's load geared back onto it.
"""

import math
import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

DT = 1.0 / 120.0
MG_L = 2.0 * 9.81 * 0.5  # a link's gravity moment arm times weight [N·m]


def _pair(joint="revolute", coeffs=(0.1, 2.0), mimic=True):
    b = newton.ModelBuilder()
    base = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-2), xform=wp.transform((0.5, 0, 2.0), wp.quat_identity()))
    joints = [b.add_joint_fixed(-1, base, parent_xform=wp.transform((0.5, 0, 2.0), wp.quat_identity()))]
    for x in (-0.5, 0.5):
        body = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-2),
                          xform=wp.transform((0.5 + x, 0, 1.5), wp.quat_identity()))
        b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.05)  # 1 kg at the default density
        kw = {"parent_xform": wp.transform((x, 0, 0.0), wp.quat_identity()),
              "child_xform": wp.transform((0, 0, 0.5), wp.quat_identity())}
        if joint == "revolute":
            joints.append(b.add_joint_revolute(base, body, axis=(0, 1, 0), **kw))
        elif joint == "d6":  # one angular axis: the revolute pair as D6 joints
            joints.append(b.add_joint_d6(base, body, angular_axes=[newton.ModelBuilder.JointDofConfig(axis=(0, 1, 0))],
                                         **kw))
        else:
            joints.append(b.add_joint_prismatic(base, body, axis=(1, 0, 0), **kw))
    b.add_articulation(joints)
    leader = b.joint_qd_start[joints[1]]
    b.joint_target_ke[leader] = 200.0
    b.joint_target_kd[leader] = 20.0
    if mimic:
        b.set_joint_mimic(joints[2], joints[1], coeffs=coeffs)
    b.color()
    return b.finalize(device="cpu")


def _run(model, solver, steps, edit=None):
    """Drive the leader to 0.3; returns (leader, follower) joint coordinates after each step."""
    control = model.control()
    control.joint_target_q.assign(np.array([0.3, 0.0], np.float32))
    s0, s1 = model.state(), model.state()
    q = []
    for i in range(steps):
        if edit is not None:
            edit(i)
        solver.step(s0, s1, control, None, DT)
        s0, s1 = s1, s0
        newton.eval_ik(model, s0, s0.joint_q, s0.joint_qd)
        q.append(s0.joint_q.numpy().copy())
    return np.array(q), solver


def _bisect(f, lo=0.0, hi=0.3):
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if f(lo) * f(mid) <= 0.0 else (mid, hi)
    return lo


def test_revolute_follower_tracks_and_gears_its_load_onto_the_leader():
    """Follower within 3e-4 rad of 0.1 + 2 q_leader from the first step (measured 1.27e-4 rad, it starts 0.1 rad
    off) and within 1.7e-5 rad after 10 steps (measured 5.7e-6); after 3 s the leader rests at the geared equilibrium
    200 (q - 0.3) + MgL sin q + 2 MgL sin(0.1 + 2 q) = 0, q = 0.23553 rad, within 8e-4 rad (measured 2.8e-4; without
    the mimic it rests at the one-way 0.286155, measured 1.2e-6 off)."""
    model = _pair()
    q, _ = _run(model, SolverVBD(model, iterations=10), 360)
    err = np.abs(q[:, 1] - (0.1 + 2.0 * q[:, 0]))
    assert err.max() < 3e-4 and err[10:].max() < 1.7e-5
    geared = _bisect(lambda a: 200.0 * (a - 0.3) + MG_L * math.sin(a) + 2.0 * MG_L * math.sin(0.1 + 2.0 * a))
    assert abs(q[-1, 0] - geared) < 8e-4
    model = _pair(mimic=False)
    free, _ = _run(model, SolverVBD(model, iterations=10), 360)
    one_way = _bisect(lambda a: 200.0 * (a - 0.3) + MG_L * math.sin(a))
    assert abs(free[-1, 0] - one_way) < 3e-6


def test_d6_pair_runs_as_the_revolute_pair():
    """The same pair on one-angle D6 joints: the relation within 1.7e-5 rad after 10 steps (measured 5.7e-6) and the
    revolute pair's leader within 1e-6 rad after 2 s (measured bitwise equal)."""
    runs = []
    for joint in ("revolute", "d6"):
        model = _pair(joint)
        runs.append(_run(model, SolverVBD(model, iterations=10), 240)[0])
    assert np.abs(runs[1][10:, 1] - (0.1 + 2.0 * runs[1][10:, 0])).max() < 1.7e-5
    assert abs(runs[1][-1, 0] - runs[0][-1, 0]) < 1e-6


def test_disabled_follower_joint_drops_its_mimic():
    """joint_enabled False on the follower switches its rows off with the joint: the leader rests at the one-way
    equilibrium 0.286155 rad within 1.5e-6 (measured 5.7e-7), as without the mimic."""
    model = _pair()
    enabled = model.joint_enabled.numpy()
    enabled[2] = False
    model.joint_enabled.assign(enabled)
    q, _ = _run(model, SolverVBD(model, iterations=10), 360)
    assert abs(q[-1, 0] - _bisect(lambda a: 200.0 * (a - 0.3) + MG_L * math.sin(a))) < 1.5e-6


def test_prismatic_follower_tracks_the_leader():
    """PRISMATIC pair, q_f = 0.02 - q_l [m]: within 2.5e-4 m from the first step (measured 8.2e-5) and 1.3e-6 m after
    10 (measured 4.4e-7); no load along the slides, so the leader reaches its target 0.3 m within 4e-4 m
    (measured 1.3e-4 m: the multiplier's decay between steps)."""
    model = _pair("prismatic", (0.02, -1.0))
    q, _ = _run(model, SolverVBD(model, iterations=10), 360)
    err = np.abs(q[:, 1] - (0.02 - q[:, 0]))
    assert err.max() < 2.5e-4 and err[10:].max() < 1.3e-6
    assert abs(q[-1, 0] - 0.3) < 4e-4


def test_relation_side_by_side_with_newtons_solver():
    """newton.solvers.SolverVBD (1.8.0, compliant ALM) on the revolute pair: both keep the relation within 1.7e-5 rad
    after 10 steps (measured: ours 5.7e-6, the reference's 1.9e-6). The reference holds its leader at 0.018 rad after
    3 s, away from the geared equilibrium 0.2355 that ours reaches (and from the one-way 0.2862), so only the
    relation is compared."""
    for cls in (SolverVBD, newton.solvers.SolverVBD):
        model = _pair()
        q, _ = _run(model, cls(model, iterations=10), 120)
        assert np.abs(q[10:, 1] - (0.1 + 2.0 * q[10:, 0])).max() < 1.7e-5, cls


def test_coefficients_are_read_every_step():
    """Editing model.joint_mimic_coeffs mid-run (to c0 = -0.1, c1 = 1) acts at the next step: 20 steps later the
    follower is within 3e-7 rad of -0.1 + q_l (measured 1.0e-7; 0.48 rad from the old relation)."""
    model = _pair()
    coeffs = model.joint_mimic_coeffs.numpy()
    coeffs[2] = (-0.1, 1.0)

    def edit(i):
        if i == 60:
            model.joint_mimic_coeffs.assign(coeffs)

    q, _ = _run(model, SolverVBD(model, iterations=10), 80, edit)
    assert abs(q[-1, 1] - (-0.1 + q[-1, 0])) < 3e-7


def test_reset_clears_the_mimic_multipliers():
    """reset() zeroes the rows' multipliers with the joints' (they carry the geared load between steps)."""
    model = _pair()
    _, solver = _run(model, SolverVBD(model, iterations=10), 30)
    assert np.abs(solver.rigid.mimics.data.lam.numpy()).max() > 0.0
    solver.reset(model.state())
    assert np.abs(solver.rigid.mimics.data.lam.numpy()).max() == 0.0


def test_unsupported_mimics_are_refused():
    """Sparse mimic constraints (deprecated; unsupported by Newton 1.8.0's SolverVBD) and a mimic on a D6 with two
    angular axes raise NotImplementedError naming them."""
    b = newton.ModelBuilder()
    bodies = [b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-2), xform=wp.transform((x, 0, 1), wp.quat_identity()))
              for x in (0.0, 1.0)]
    joints = [b.add_joint_revolute(-1, bodies[0], axis=(0, 1, 0)), b.add_joint_revolute(bodies[0], bodies[1], axis=(0, 1, 0))]
    b.add_articulation(joints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.add_constraint_mimic(joints[1], joints[0], coef0=0.0, coef1=1.0)
    b.color()
    with pytest.raises(NotImplementedError, match="sparse mimic constraints"):
        SolverVBD(b.finalize(device="cpu"))
    b = newton.ModelBuilder()
    cfg = newton.ModelBuilder.JointDofConfig
    bodies = [b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-2), xform=wp.transform((x, 0, 1), wp.quat_identity()))
              for x in (0.0, 1.0)]
    d6 = {"angular_axes": [cfg(axis=(1, 0, 0)), cfg(axis=(0, 1, 0))]}
    joints = [b.add_joint_d6(-1, bodies[0], **d6), b.add_joint_d6(bodies[0], bodies[1], **d6)]
    b.add_articulation(joints)
    b.set_joint_mimic(joints[1], joints[0])
    b.color()
    with pytest.raises(NotImplementedError, match="D6 joint with two or three angular axes"):
        SolverVBD(b.finalize(device="cpu"))
