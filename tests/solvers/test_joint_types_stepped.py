"""PRISMATIC, BALL, FIXED, D6 and the cartpole stepped by SolverSteel and SolverFeatherstone.

The articulation-core tests check kinematics and the mass matrix of every joint type; these check
the solvers move the joints the right way under gravity, against closed forms and Newton's
SolverFeatherstone (same explicit scheme, so agreement is to float32 rounding).
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.app.scenes import build_cartpole
from steel.solvers import SolverFeatherstone, SolverSteel

G = 9.81  # [m/s²]
DT = 1.0e-3  # [s]
SOLVERS = {"steel": SolverSteel, "featherstone": SolverFeatherstone}


def _slider(axis, mass=2.0):
    """A body on a PRISMATIC joint to the world along ``axis``, no contacts, no limits."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    body = b.add_link(mass=mass, inertia=wp.mat33(np.eye(3) * 0.01))
    j = b.add_joint_prismatic(-1, body, axis=axis, parent_xform=wp.transform((0.0, 0.0, 1.0), wp.quat_identity()))
    b.add_articulation([j])
    return b.finalize(device="cpu")


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("axis", [(0.0, 0.0, 1.0), (0.0, 0.0, -1.0), (0.6, 0.0, 0.8)])
def test_a_slider_falls_under_gravity_as_symplectic_euler(name, axis):
    """After n steps the body has moved along the axis by -g_axis dt² n(n+1)/2 (symplectic Euler, exact).

    With g_axis = g (axis·z): the axis pointing up falls in negative q, pointing down in positive q,
    and the body's world height drops by (axis·z)² times that in every case. Measured error is float32
    rounding (1e-6 relative); rtol 1e-4 fails for a 1 % gravity error or a flipped axis.
    """
    model = _slider(axis)
    solver = SOLVERS[name](model)
    state_a, state_b = model.state(), model.state()
    n = 200
    for _ in range(n):
        solver.step(state_a, state_b, None, None, DT)
        state_a, state_b = state_b, state_a
    az = axis[2] / np.linalg.norm(axis)
    expected_q = -G * az * DT * DT * n * (n + 1) / 2.0  # [m]
    np.testing.assert_allclose(state_a.joint_q.numpy()[0], expected_q, rtol=1e-4)
    np.testing.assert_allclose(state_a.body_q.numpy()[0, 2] - 1.0, expected_q * az, rtol=1e-4)


def _ball_and_fixed_pendulum():
    """A BALL-jointed rod (COM 0.5 m from the pivot) with a FIXED tip mass, started tilted."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    rod = b.add_link(mass=1.0, com=wp.vec3(0.0, 0.0, -0.5), inertia=wp.mat33(np.eye(3) * 1e-3))
    tip = b.add_link(mass=0.5, inertia=wp.mat33(np.eye(3) * 1e-3))
    j0 = b.add_joint_ball(-1, rod, parent_xform=wp.transform((0.0, 0.0, 2.0), wp.quat_identity()))
    j1 = b.add_joint_fixed(rod, tip, parent_xform=wp.transform((0.0, 0.0, -1.0), wp.quat_identity()))
    b.add_articulation([j0, j1])
    tilt = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), 0.3)
    b.joint_q[0:4] = [tilt[0], tilt[1], tilt[2], tilt[3]]
    return b.finalize(device="cpu")


@pytest.mark.parametrize("name", SOLVERS)
def test_ball_and_fixed_joints_swing_like_newtons_featherstone(name):
    """A BALL pendulum with a FIXED tip swings as Newton's SolverFeatherstone steps it (0.3 s, from 0.3 rad).

    Both are explicit-in-forces reduced-coordinate schemes on the same model; SolverSteel's PGS has
    no rows here, so only the free dynamics differ, by float32 rounding (measured below 1e-5 m).
    """
    model = _ball_and_fixed_pendulum()
    ref_model = _ball_and_fixed_pendulum()
    ours, ref = SOLVERS[name](model), newton.solvers.SolverFeatherstone(ref_model, angular_damping=0.0)
    s = [model.state(), model.state()]
    r = [ref_model.state(), ref_model.state()]
    for _ in range(300):
        ours.step(s[0], s[1], None, None, DT)
        ref.step(r[0], r[1], None, None, DT)
        s.reverse()
        r.reverse()
    tip = s[0].body_q.numpy()[1, :3]
    assert tip[2] < 1.0 + 1.0 * np.cos(0.3) - 1e-3  # it has swung down from its start height
    np.testing.assert_allclose(s[0].body_q.numpy()[:, :3], r[0].body_q.numpy()[:, :3], atol=1e-4)


@pytest.mark.parametrize("name", SOLVERS)
def test_d6_with_linear_axes_falls_like_symplectic_euler_and_the_reference(name):
    """A D6 with x, z linear and a y angular axis (COM off the joint) falls in z as symplectic Euler and the reference."""

    def build():
        b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
        body = b.add_link(mass=1.0, com=wp.vec3(0.2, 0.0, 0.0), inertia=wp.mat33(np.eye(3) * 1e-2))
        Cfg = newton.ModelBuilder.JointDofConfig
        j = b.add_joint_d6(-1, body, linear_axes=[Cfg(axis=(1.0, 0.0, 0.0)), Cfg(axis=(0.0, 0.0, 1.0))],
                           angular_axes=[Cfg(axis=(0.0, 1.0, 0.0))])
        b.add_articulation([j])
        return b.finalize(device="cpu")

    model, ref_model = build(), build()
    ours, ref = SOLVERS[name](model), newton.solvers.SolverFeatherstone(ref_model, angular_damping=0.0)
    s = [model.state(), model.state()]
    r = [ref_model.state(), ref_model.state()]
    n = 200
    for _ in range(n):
        ours.step(s[0], s[1], None, None, DT)
        ref.step(r[0], r[1], None, None, DT)
        s.reverse()
        r.reverse()
    q = s[0].joint_q.numpy()
    np.testing.assert_allclose(q, r[0].joint_q.numpy(), atol=1e-5)
    # Gravity acts at the COM, so nothing turns it: z falls as symplectic Euler, x and the angle stay 0.
    np.testing.assert_allclose(q[1], -G * DT * DT * n * (n + 1) / 2.0, rtol=1e-4)
    np.testing.assert_allclose(q[[0, 2]], 0.0, atol=1e-6)


@pytest.mark.parametrize("name", SOLVERS)
def test_the_cartpole_steps_like_newtons_featherstone(name):
    """The shipped cartpole (PRISMATIC cart, two REVOLUTE poles, tilted off upright) over 0.2 s:
    joint coordinates within 1e-4 of Newton's SolverFeatherstone, and the poles have started to fall."""
    ours_scene, ref_scene = build_cartpole(1, "cpu"), build_cartpole(1, "cpu")
    model, ref_model = ours_scene.model, ref_scene.model
    ours, ref = SOLVERS[name](model), newton.solvers.SolverFeatherstone(ref_model, angular_damping=0.0)
    s = [model.state(), model.state()]
    r = [ref_model.state(), ref_model.state()]
    q0 = model.joint_q.numpy().copy()
    for _ in range(200):
        ours.step(s[0], s[1], None, None, DT)
        ref.step(r[0], r[1], None, None, DT)
        s.reverse()
        r.reverse()
    q = s[0].joint_q.numpy()
    np.testing.assert_allclose(q, r[0].joint_q.numpy(), atol=1e-4)
    assert abs(q[1]) > abs(q0[1]) + 1e-3  # the tilted pole falls further from upright


@pytest.mark.parametrize("name", SOLVERS)
def test_a_swinging_double_pendulum_rebuilds_its_mass_matrix(name):
    """A double pendulum released from 1.2 / -0.5 rad, 0.5 s: within 1e-5 rad of Newton's SolverFeatherstone
    (measured 4e-7). Its H changes with the elbow angle; never rebuilding it puts the run 0.086 rad off."""

    def build():
        b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
        parent, joints = -1, []
        for i in range(2):
            body = b.add_link(com=wp.vec3(0.0, 0.0, -0.5), inertia=wp.mat33(np.eye(3) * 1e-3), mass=1.0)
            anchor = wp.transform((0.0, 0.0, 0.0 if parent < 0 else -0.5), wp.quat_identity())
            joints.append(b.add_joint_revolute(parent, body, parent_xform=anchor, axis=(0.0, 1.0, 0.0)))
            parent = body
        b.add_articulation(joints)
        b.joint_q[:] = [1.2, -0.5]
        return b.finalize(device="cpu")

    results = []
    for solver_cls, options in ((SOLVERS[name], {}), (newton.solvers.SolverFeatherstone, {"angular_damping": 0.0})):
        model = build()
        solver = solver_cls(model, **options)
        s = [model.state(), model.state()]
        for _ in range(500):
            solver.step(s[0], s[1], None, None, DT)
            s.reverse()
        results.append(s[0].joint_q.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=0.0, atol=1e-5)
