"""Symplectic Euler on joint coordinates, quaternion-correct for FREE and BALL joints.

Owns: ``joint_qd += dt * joint_qdd`` followed by ``joint_q += dt * (map of the new joint_qd)``
(semi-implicit Euler: positions advance with the *new* velocity, which keeps the integrator
symplectic; Hairer, Lubich and Wanner, *Geometric Numerical Integration*, sec. VI.3). Joints
outside every articulation are left as they are.

Per joint type (Newton's coordinate conventions, see :mod:`steel.articulation.kinematics`):

* PRISMATIC, REVOLUTE, D6: ``q += dt * qd`` per DOF.
* BALL: ``qd`` is the angular velocity ``w`` in the parent anchor frame, so the quaternion
  advances by left multiplication, ``q <- normalize(q + dt/2 (w, 0) q)``.
* FREE, DISTANCE: ``qd = (v_com, w)`` in the parent anchor frame, and ``q`` holds the joint
  frame, not the COM. The COM ``p + R r`` (``r`` the COM in the joint frame) advances by
  ``dt v_com``, the rotation as for BALL, and the joint position is recovered from the new COM
  and rotation, so a spinning body rotates about its COM.
"""

from __future__ import annotations

import warp as wp

import newton

from .joint_model import JointModel, joint_model
from .kinematics import JOINT_BALL, JOINT_D6, JOINT_DISTANCE, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE
from ..launches import launch


@wp.func
def integrate_rotation(q: wp.quat, w: wp.vec3, dt: float):
    """Advance the unit quaternion ``q`` by the angular velocity ``w`` (same frame as ``q``'s parent)."""
    dq = wp.quat(w[0], w[1], w[2], 0.0) * q
    return wp.normalize(q + dq * (0.5 * dt))


@wp.func
def integrate_joint_coordinates(
    jtype: int,
    q0: int,
    d0: int,
    d1: int,
    X_c: wp.transform,
    child_com: wp.vec3,
    # Data in:
    joint_q: wp.array[float],
    joint_qd_new: wp.array[float],
    dt: float,
    # Data out:
    joint_q_out: wp.array[float],
):
    """Advance one joint's coordinates ``q0..`` with its *new* velocity ``joint_qd_new[d0:d1]`` [s].

    The position half of the symplectic Euler step (see the module docstring), a ``wp.func`` so
    solvers can fuse it with their velocity update; ``joint_q_out`` may alias ``joint_q``.
    """
    if jtype == JOINT_PRISMATIC or jtype == JOINT_REVOLUTE or jtype == JOINT_D6:
        for k in range(d1 - d0):
            joint_q_out[q0 + k] = joint_q[q0 + k] + dt * joint_qd_new[d0 + k]
    elif jtype == JOINT_BALL:
        rot = wp.quat(joint_q[q0], joint_q[q0 + 1], joint_q[q0 + 2], joint_q[q0 + 3])
        w = wp.vec3(joint_qd_new[d0], joint_qd_new[d0 + 1], joint_qd_new[d0 + 2])
        rot = integrate_rotation(rot, w, dt)
        for k in range(4):
            joint_q_out[q0 + k] = rot[k]
    elif jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
        pos = wp.vec3(joint_q[q0], joint_q[q0 + 1], joint_q[q0 + 2])
        rot = wp.normalize(wp.quat(joint_q[q0 + 3], joint_q[q0 + 4], joint_q[q0 + 5], joint_q[q0 + 6]))
        v = wp.vec3(joint_qd_new[d0], joint_qd_new[d0 + 1], joint_qd_new[d0 + 2])
        w = wp.vec3(joint_qd_new[d0 + 3], joint_qd_new[d0 + 4], joint_qd_new[d0 + 5])
        r = wp.transform_point(wp.transform_inverse(X_c), child_com)
        com = pos + wp.quat_rotate(rot, r) + v * dt
        rot = integrate_rotation(rot, w, dt)
        pos = com - wp.quat_rotate(rot, r)
        for k in range(3):
            joint_q_out[q0 + k] = pos[k]
        for k in range(4):
            joint_q_out[q0 + 3 + k] = rot[k]


@wp.func
def integrate_joint(
    j: int,
    # Model:
    joints: JointModel,
    joint_articulation: wp.array[int],
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    joint_qdd: wp.array[float],
    dt: float,
    # Data out:
    joint_q_out: wp.array[float],
    joint_qd_out: wp.array[float],
):
    """One symplectic Euler step of joint ``j`` (the body of :func:`integrate_joints`; a ``wp.func`` so
    that a solver can fuse it with its own per-articulation stages in one launch)."""
    q0 = joints.q_start[j]
    q1 = joints.q_start[j + 1]
    d0 = joints.qd_start[j]
    d1 = joints.qd_start[j + 1]
    if joint_articulation[j] >= 0 and joints.articulation_skip[joint_articulation[j]] != 0:
        return  # skipped this step (JointModel.articulation_skip): the caller publishes it
    if joint_articulation[j] < 0:
        for i in range(q0, q1):
            joint_q_out[i] = joint_q[i]
        for d in range(d0, d1):
            joint_qd_out[d] = joint_qd[d]
        return
    for d in range(d0, d1):
        joint_qd_out[d] = joint_qd[d] + dt * joint_qdd[d]
    child_com = joints.body_com[joints.child[j]]
    integrate_joint_coordinates(joints.kind[j], q0, d0, d1, joints.X_c[j], child_com, joint_q, joint_qd_out, dt,
                                joint_q_out)


@wp.kernel
def _integrate_joints(
    # Model:
    joints: JointModel,
    joint_articulation: wp.array[int],
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    joint_qdd: wp.array[float],
    dt: float,
    # Data out:
    joint_q_out: wp.array[float],
    joint_qd_out: wp.array[float],
):
    j = wp.tid()  # one thread per joint
    integrate_joint(j, joints, joint_articulation, joint_q, joint_qd, joint_qdd, dt, joint_q_out, joint_qd_out)


def integrate_joints(
    model: newton.Model,
    joint_q: wp.array,
    joint_qd: wp.array,
    joint_qdd: wp.array,
    dt: float,
    joint_q_out: wp.array,
    joint_qd_out: wp.array,
    joints: JointModel | None = None,
) -> None:
    """One symplectic Euler step of every articulated joint [s]; in-place use (``out is in``) is allowed.

    ``joints`` is the model's :class:`JointModel` (``plan.joints``); built on the fly when omitted.
    """
    if model.joint_count == 0:
        return
    launch(
        _integrate_joints,
        dim=model.joint_count,
        inputs=[
            joint_model(model) if joints is None else joints,
            model.joint_articulation,
            joint_q,
            joint_qd,
            joint_qdd,
            float(dt),
        ],
        outputs=[joint_q_out, joint_qd_out],
        device=model.device,
    )
