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
