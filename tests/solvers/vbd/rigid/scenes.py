"""Small rigid scenes for the SolverVBD rigid tests: pendulums, chains, single bodies (no contacts)."""

from __future__ import annotations

import math

import numpy as np
import warp as wp

import newton
from steel.solvers import SolverVBD

PIVOT = np.array([0.0, 0.0, 2.0])  # pendulum pivot, world [m]


def pendulum(length=1.0, mass=1.0, inertia=1e-3, joint="revolute", gravity=(0.0, 0.0, -9.81), hard=None,
             frame_at_pivot=False, **joint_kw):
    """A bob of ``mass`` [kg] hanging ``length`` [m] below ``PIVOT`` on a joint to the world (rest: hanging).

    The joint's DOF axis is +y for revolute and prismatic (prismatic: +x), so a positive revolute
    angle swings the bob toward -x. ``frame_at_pivot`` puts the body frame at the pivot and the COM
    ``length`` below it (``body_com``), instead of the frame at the COM.
    """
    b = newton.ModelBuilder(gravity=gravity)
    if hard is not None:
        SolverVBD.register_custom_attributes(b, dahl_defaults_enabled=False)
        joint_kw["custom_attributes"] = {"vbd:joint_is_hard": hard}
    origin = PIVOT if frame_at_pivot else PIVOT - [0, 0, length]
    body = b.add_link(mass=mass, inertia=wp.mat33(np.eye(3) * inertia),
                      com=wp.vec3(0.0, 0.0, -length if frame_at_pivot else 0.0),
                      xform=wp.transform(tuple(origin), wp.quat_identity()))
    parent = wp.transform(tuple(PIVOT), wp.quat_identity())
    child = wp.transform((0.0, 0.0, 0.0 if frame_at_pivot else length), wp.quat_identity())
    if joint == "revolute":
        j = b.add_joint_revolute(-1, body, parent_xform=parent, child_xform=child, axis=(0, 1, 0), **joint_kw)
    elif joint == "prismatic":
        j = b.add_joint_prismatic(-1, body, parent_xform=parent, child_xform=child, axis=(1, 0, 0), **joint_kw)
    elif joint == "ball":
        j = b.add_joint_ball(-1, body, parent_xform=parent, child_xform=child, **joint_kw)
    elif joint == "fixed":
        j = b.add_joint_fixed(-1, body, parent_xform=parent, child_xform=child, **joint_kw)
    elif joint == "d6":
        cfg = newton.ModelBuilder.JointDofConfig
        j = b.add_joint_d6(-1, body, parent_xform=parent, child_xform=child, linear_axes=[cfg(axis=(1, 0, 0))],
                           angular_axes=[cfg(axis=(0, 1, 0))], **joint_kw)
    elif joint == "universal":
        cfg = newton.ModelBuilder.JointDofConfig
        j = b.add_joint_d6(-1, body, parent_xform=parent, child_xform=child,
                           angular_axes=[cfg(axis=(1, 0, 0)), cfg(axis=(0, 1, 0))], **joint_kw)
    else:
        raise ValueError(joint)
    b.add_articulation([j])
    b.color()
    return b.finalize(device="cpu")


def set_angle(model, state, angle):
    """Pose a single-joint scene at joint coordinate ``angle`` [rad or m] (forward kinematics)."""
    q = model.joint_q.numpy().copy()
    q[0] = angle
    newton.eval_fk(model, wp.array(q, dtype=float, device="cpu"), model.joint_qd, state)


def chain_builder(links=20, link_length=0.1, link_mass=1.0, block_mass=1000.0, hard=1):
    """``links`` bodies of ``link_mass`` [kg] then a block of ``block_mass`` hanging from z = 3 m on BALL joints."""
    b = newton.ModelBuilder()
    SolverVBD.register_custom_attributes(b, dahl_defaults_enabled=False)
    top, prev, joints = 3.0, -1, []
    for i in range(links + 1):
        mass = block_mass if i == links else link_mass
        body = b.add_link(mass=mass, inertia=wp.mat33(np.eye(3) * mass * link_length**2 / 6),
                          xform=wp.transform((0.0, 0.0, top - (i + 0.5) * link_length), wp.quat_identity()))
        parent = wp.transform((0.0, 0.0, top if prev < 0 else -0.5 * link_length), wp.quat_identity())
        joints.append(b.add_joint_ball(prev, body, parent_xform=parent,
                                       child_xform=wp.transform((0.0, 0.0, 0.5 * link_length), wp.quat_identity()),
                                       custom_attributes={"vbd:joint_is_hard": hard}))
        prev = body
    b.add_articulation(joints)
    return b


def chain(color=True, **kw):
    """The finalized (and coloured) :func:`chain_builder` scene on the CPU."""
    b = chain_builder(**kw)
    if color:
        b.color()
    return b.finalize(device="cpu")


def chain_stretch(model, body_q, link_length=0.1) -> float:
    """Distance from the top anchor to the block's joint minus the chain's rest length [m]."""
    block_anchor = body_q[-1, :3] + [0.0, 0.0, 0.5 * link_length]
    return float(np.linalg.norm(np.array([0.0, 0.0, 3.0]) - block_anchor) - link_length * (model.body_count - 1))


def soft_chain_stretch(links=20, link_mass=1.0, block_mass=1000.0, k=1.0e5) -> float:
    """Static stretch of the penalty chain: joint i carries the weight below it, ``Σ W_i / k`` [m]."""
    return sum((block_mass + (links - i) * link_mass) * 9.81 / k for i in range(links + 1))


def run(model, solver, steps, dt, control=None, state=None, every=1, record=None):
    """Step ``steps`` times; return the final state and ``record(state)`` every ``every`` steps."""
    s0 = state if state is not None else model.state()
    s1 = model.state()
    control = control if control is not None else model.control()
    out = []
    for i in range(steps):
        solver.step(s0, s1, control, None, dt)
        s0, s1 = s1, s0
        if record is not None and (i + 1) % every == 0:
            out.append(record(s0))
    return s0, out


def revolute_angle(body_q) -> float:
    """Rotation angle about +y of body 0 [rad] (its rest orientation is the identity)."""
    x, y, z, w = body_q[0, 3:]
    return 2.0 * math.atan2(y, w)
