"""Shared scenes and state generators for the tests."""

from __future__ import annotations

import numpy as np
import warp as wp

import newton
import newton.examples

ASSETS = ("nv_humanoid.xml", "nv_ant.xml", "quadruped.urdf")


def build_asset(name: str, world_count: int = 1, device: str = "cpu", ground: bool = False) -> newton.Model:
    """A model of one of Newton's example assets (floating base), replicated ``world_count`` times."""
    robot = newton.ModelBuilder()
    path = newton.examples.get_asset(name)
    if name.endswith(".urdf"):
        robot.add_urdf(path, floating=True)
    else:
        robot.add_mjcf(path)
    if world_count == 1 and not ground:
        return robot.finalize(device=device)
    scene = newton.ModelBuilder()
    scene.replicate(robot, world_count)
    if ground:
        scene.add_ground_plane()
    return scene.finalize(device=device)


def random_joint_state(model: newton.Model, rng: np.random.Generator, speed: float = 1.0):
    """Random ``(joint_q, joint_qd)`` within [-1, 1] rad or m per coordinate, unit quaternions,
    and ``joint_qd`` of standard deviation ``speed`` [m/s or rad/s]."""
    q = model.joint_q.numpy().copy()
    q_start = model.joint_q_start.numpy()
    types = model.joint_type.numpy()
    for j in range(model.joint_count):
        a, b = q_start[j], q_start[j + 1]
        if types[j] in (newton.JointType.FREE, newton.JointType.DISTANCE):
            q[a : a + 3] = rng.uniform(-1.0, 1.0, size=3)
            quat = rng.normal(size=4)
            q[a + 3 : a + 7] = quat / np.linalg.norm(quat)
        elif types[j] == newton.JointType.BALL:
            quat = rng.normal(size=4)
            q[a:b] = quat / np.linalg.norm(quat)
        else:
            q[a:b] = rng.uniform(-1.0, 1.0, size=b - a)
    qd = rng.normal(scale=speed, size=model.joint_dof_count)
    return q.astype(np.float32), qd.astype(np.float32)


def state_at(model: newton.Model, q: np.ndarray, qd: np.ndarray) -> newton.State:
    """A model state with the given joint coordinates and Newton's FK applied."""
    state = model.state()
    state.joint_q.assign(q)
    state.joint_qd.assign(qd)
    newton.eval_fk(model, state.joint_q, state.joint_qd, state)
    return state


def to_numpy(a: wp.array) -> np.ndarray:
    return a.numpy().astype(np.float64)


def every_joint_type(*, distance: bool = True, device: str = "cpu") -> newton.Model:
    """One tree with a joint of every type the articulation core builds, off-axis anchors and COMs.

    root FREE -> PRISMATIC along a skewed axis -> BALL -> REVOLUTE -> FIXED -> D6 (two linear,
    two angular axes); and a DISTANCE joint (FREE-like coordinates) hanging off the root when
    ``distance``. Skewed axes, offset COMs and full inertia tensors make a flipped axis, a dropped
    offset or a lost cross term show up in FK, the Jacobian and the mass matrix.
    """
    b = newton.ModelBuilder()
    rng = np.random.default_rng(5)

    def link(mass):
        a = rng.normal(size=(3, 3)) * 0.02
        inertia = a @ a.T + np.eye(3) * 0.01  # [kg·m²], symmetric positive definite
        com = wp.vec3(*rng.uniform(-0.05, 0.05, size=3))  # [m]
        return b.add_link(mass=mass, com=com, inertia=wp.mat33(*inertia.flatten()))

    def xf(p, axis_angle=((0.2, 0.7, 0.1), 0.4)):
        axis = np.asarray(axis_angle[0]) / np.linalg.norm(axis_angle[0])
        return wp.transform(wp.vec3(*p), wp.quat_from_axis_angle(wp.vec3(*axis), axis_angle[1]))

    skew = wp.vec3(*(np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])))
    Cfg = newton.ModelBuilder.JointDofConfig
    bodies = [link(m) for m in (2.0, 1.2, 0.9, 0.7, 0.5, 0.4)]
    joints = [
        b.add_joint_free(bodies[0], label="free"),
        b.add_joint_prismatic(bodies[0], bodies[1], axis=skew, parent_xform=xf((0.1, 0.0, 0.2)),
                              child_xform=xf((0.0, 0.05, -0.1)), label="prismatic"),
        b.add_joint_ball(bodies[1], bodies[2], parent_xform=xf((0.0, 0.2, 0.0)), child_xform=xf((0.05, 0.0, 0.1)),
                         label="ball"),
        b.add_joint_revolute(bodies[2], bodies[3], axis=(0.0, 0.6, 0.8), parent_xform=xf((0.2, 0.0, 0.0)),
                             child_xform=xf((0.0, -0.1, 0.0)), label="revolute"),
        b.add_joint_fixed(bodies[3], bodies[4], parent_xform=xf((0.0, 0.0, 0.15)), label="fixed"),
        b.add_joint_d6(bodies[4], bodies[5], linear_axes=[Cfg(axis=(1.0, 0.0, 0.0)), Cfg(axis=skew)],
                       angular_axes=[Cfg(axis=(0.0, 0.0, 1.0)), Cfg(axis=(0.0, 1.0, 0.0))],
                       parent_xform=xf((0.1, 0.1, 0.0)), child_xform=xf((0.0, 0.0, -0.05)), label="d6"),
    ]
    if distance:
        tail = link(0.3)
        joints.append(b.add_joint_distance(bodies[0], tail, parent_xform=xf((0.0, -0.2, 0.0)), label="distance"))
    b.add_articulation(joints)
    return b.finalize(device=device)


def box_column(count: int, *, half: float = 0.1, color: bool = False, device: str = "cpu") -> newton.Model:
    """``count`` free cubes of half extent ``half`` [m] stacked from the ground plane up (``color`` for SolverVBD)."""
    builder = newton.ModelBuilder()
    for k in range(count):
        body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, half * (2 * k + 1)), wp.quat_identity()))
        builder.add_shape_box(body, hx=half, hy=half, hz=half)
    builder.add_ground_plane()
    if color:
        builder.color()
    return builder.finalize(device=device)


def step_with_collision(model: newton.Model, solver, steps: int, dt: float, state: newton.State | None = None):
    """``steps`` steps of ``solver`` with the model's collision pipeline each step; returns the last state."""
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0 = state if state is not None else model.state()
    s1 = model.state()
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, dt)
        s0, s1 = s1, s0
    return s0
