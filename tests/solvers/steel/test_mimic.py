"""SolverSteel mimic joints (joints/mimic.py), on the CPU."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

DT = 1.0 / 240.0


def _two_hinges(*, owned=(0.1, 2.0), legacy=None, second_articulation=False):
    """A leader hinge from the world and a follower hinge on it (axes z, gravity along -z: no gravity torque)."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    inertia = wp.mat33(np.diag([0.02, 0.02, 0.03]))
    l0 = b.add_link(mass=1.0, inertia=inertia)
    j0 = b.add_joint_revolute(-1, l0, axis=(0, 0, 1))
    l1 = b.add_link(mass=0.5, inertia=inertia, xform=wp.transform(wp.vec3(0.3, 0.0, 0.0), wp.quat_identity()))
    if second_articulation:
        j1 = b.add_joint_revolute(-1, l1, axis=(0, 0, 1), parent_xform=wp.transform(wp.vec3(0.3, 0.0, 0.0)))
        b.add_articulation([j0])
        b.add_articulation([j1])
    else:
        j1 = b.add_joint_revolute(l0, l1, axis=(0, 0, 1), parent_xform=wp.transform(wp.vec3(0.3, 0.0, 0.0)))
        b.add_articulation([j0, j1])
    if owned is not None and not second_articulation:
        b.set_joint_mimic(j1, j0, coeffs=owned)
    if legacy is not None:
        b.add_constraint_mimic(j1, j0, *legacy)
    return b.finalize(device="cpu")


def _track(model, solver, steps, *, start=0):
    """Drive the leader with a 1 Hz torque and return (leader q, follower q) after every step."""
    control = model.control()
    s0, s1 = model.state(), model.state()
    out = []
    for i in range(start, start + steps):
        control.joint_f.assign([0.5 * np.sin(2.0 * np.pi * i * DT), 0.0])
        solver.step(s0, s1, control, None, DT)
        s0, s1 = s1, s0
        out.append(s0.joint_q.numpy()[:2].copy())
    return np.array(out)


def test_follower_tracks_c0_plus_c1_leader():
    """q_follower = 0.1 + 2 q_leader: the follower starts 0.1 rad off and the Baumgarte bias (0.2 per step) brings
    it within 1e-4 rad by step 30; from step 60 on, over 2 s of a leader swinging between -0.02 and 0.46 rad, the
    relation holds to float32 rounding of q: measured 1.2e-7 rad, tolerance 4e-7 rad."""
    model = _two_hinges()
    q = _track(model, SolverSteel(model), 540)
    error = np.abs(q[60:, 1] - (0.1 + 2.0 * q[60:, 0]))
    assert error.max() < 4e-7, error.max()
    assert np.ptp(q[:, 0]) > 0.2  # the leader did move


def test_an_enabled_mimic_constraint_replaces_the_joint_mimic_and_a_disabled_one_is_ignored():
    """A legacy constraint q_f = -0.2 - q_l overrides the joint-owned 0.1 + 2 q_l while enabled; disabled in
    place, the joint-owned relation takes over again (both within 1e-4 rad once settled)."""
    model = _two_hinges(legacy=(-0.2, -1.0))
    solver = SolverSteel(model)
    q = _track(model, solver, 240)
    assert np.abs(q[60:, 1] - (-0.2 - q[60:, 0])).max() < 1e-4
    model.constraint_mimic_enabled.assign([False])
    q = _track(model, solver, 240)  # a fresh start from the model's initial state
    assert np.abs(q[60:, 1] - (0.1 + 2.0 * q[60:, 0])).max() < 1e-4


def test_coefficients_are_read_every_step():
    """Writing joint_mimic_coeffs in place changes the relation the next steps enforce."""
    model = _two_hinges()
    solver = SolverSteel(model)
    coeffs = model.joint_mimic_coeffs.numpy()
    coeffs[1] = (0.0, -1.0)
    model.joint_mimic_coeffs.assign(coeffs)
    q = _track(model, solver, 240)
    assert np.abs(q[60:, 1] + q[60:, 0]).max() < 1e-4


def test_unsupported_mimics_raise_not_implemented_naming_the_joints():
    """A mimic constraint across articulations, and a BALL follower written into the model arrays."""
    with pytest.raises(NotImplementedError, match="not in one articulation"):
        SolverSteel(_two_hinges(legacy=(0.0, 1.0), second_articulation=True))
    b = newton.ModelBuilder()
    l0 = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 0.01))
    l1 = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 0.01))
    j0 = b.add_joint_revolute(-1, l0, axis=(0, 0, 1))
    j1 = b.add_joint_ball(l0, l1)
    b.add_articulation([j0, j1])
    model = b.finalize(device="cpu")
    model.joint_mimic_joint.assign(np.array([-1, 0], dtype=np.int32))
    with pytest.raises(NotImplementedError, match="joint 1.*only PRISMATIC, REVOLUTE and D6"):
        SolverSteel(model)
