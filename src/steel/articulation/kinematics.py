"""Forward kinematics, body twists and joint motion subspaces, one thread per articulation.

Owns: ``joint_q, joint_qd`` -> ``body_q``, ``body_qd`` (Newton's conventions) and the core's
internal ``body_v``, ``body_c``, ``dof_S``, ``articulation_origin``. Does not integrate, and does
not touch bodies outside every articulation.

Newton's joint conventions, which this module reproduces (they define what ``joint_q`` means):

* A joint places its child by ``X_wc = X_wp * X_p * X_j(q) * X_c^-1``; joint axes are given in
  the parent anchor frame ``X_wp * X_p``.
* REVOLUTE/PRISMATIC: one axis. BALL: quaternion ``(x, y, z, w)`` and angular velocity in the
  parent anchor frame. FREE (and DISTANCE): position and quaternion of the joint frame; ``qd`` is
  the child COM velocity relative to the parent's rigid motion followed by the angular velocity,
  both in the parent anchor frame.
* D6: up to three linear axes (translation applied first), then one to three angular axes
  composed as intrinsic rotations ``R(a0, q0) R(a1, q1) R(a2, q2)``; each angular axis after the
  first is transported by the rotations before it, and the rotations pivot about the translated
  anchor.

Each DOF's column of the motion subspace ``S`` is the child twist per unit ``qd`` (linear first,
world orientation, about the articulation reference point). The joint's velocity-product term
``c_J = dS/dt qd`` (Featherstone, *Rigid Body Dynamics Algorithms*, sec. 3.2 and 4.4) is

    c_J = v_parent x (S qd) + sum over angular DOFs k of qd_k (p_dot x a_k + p x d_k, d_k)

where ``p`` is the rotation pivot, ``p_dot`` the pivot's velocity relative to the parent (D6
translation, or the COM velocity of a FREE joint's child) and ``d_k = w_before_k x a_k`` the rate
at which a transported Euler axis turns (``w_before_k`` is the relative angular velocity of the
axes before ``k``). Axes fixed in the parent contribute only the first term.
"""

from __future__ import annotations

import warp as wp

import newton

from .data import ArticulationData, KinematicsBuffers
from .joint_model import JointModel
from .spatial import motion_cross, prismatic_column, revolute_column, twist_at_point
from .topology import ArticulationPlan
from ..launches import launch

JOINT_PRISMATIC = wp.constant(int(newton.JointType.PRISMATIC))
JOINT_REVOLUTE = wp.constant(int(newton.JointType.REVOLUTE))
JOINT_BALL = wp.constant(int(newton.JointType.BALL))
JOINT_FIXED = wp.constant(int(newton.JointType.FIXED))
JOINT_FREE = wp.constant(int(newton.JointType.FREE))
JOINT_DISTANCE = wp.constant(int(newton.JointType.DISTANCE))
JOINT_D6 = wp.constant(int(newton.JointType.D6))


@wp.func
def _quat_at(joint_q: wp.array[float], i: int):
    # Normalized so that a drifted or user-scaled coordinate still gives a rigid transform; an
    # all-zero quaternion (no rotation can be read from it) is taken as the identity.
    q = wp.quat(joint_q[i], joint_q[i + 1], joint_q[i + 2], joint_q[i + 3])
    if wp.dot(q, q) == 0.0:
        return wp.quat_identity()
    return wp.normalize(q)


@wp.func
def joint_transform(joints: JointModel, j: int, joint_q: wp.array[float]):
    """Relative transform ``X_j(q)`` of joint ``j``'s child frame in its parent anchor frame."""
    jtype = joints.kind[j]
    q_start = joints.q_start[j]
    qd_start = joints.qd_start[j]
    lin_count = joints.dof_dim[j, 0]
    ang_count = joints.dof_dim[j, 1]
    joint_axis = joints.axis
    pos = wp.vec3(0.0)
    rot = wp.quat_identity()
    if jtype == JOINT_PRISMATIC:
        pos = joint_axis[qd_start] * joint_q[q_start]
    elif jtype == JOINT_REVOLUTE:
        rot = wp.quat_from_axis_angle(joint_axis[qd_start], joint_q[q_start])
    elif jtype == JOINT_BALL:
        rot = _quat_at(joint_q, q_start)
    elif jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
        pos = wp.vec3(joint_q[q_start], joint_q[q_start + 1], joint_q[q_start + 2])
        rot = _quat_at(joint_q, q_start + 3)
    elif jtype == JOINT_D6:
        for k in range(lin_count):
            pos += joint_axis[qd_start + k] * joint_q[q_start + k]
        for k in range(ang_count):
            # Intrinsic composition: right-multiplying by R(a_k, q_k) rotates about the
            # transported axis, as MuJoCo composes several hinges in one body.
            rot = rot * wp.quat_from_axis_angle(joint_axis[qd_start + lin_count + k], joint_q[q_start + lin_count + k])
    return wp.transform(pos, rot)


@wp.func
def write_joint_columns(
    joints: JointModel,
    j: int,
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    X_pa: wp.transform,
    child_com: wp.vec3,
    origin: wp.vec3,
    dof_S: wp.array[wp.spatial_vector],
):
    """Write the joint's columns of ``S`` and return ``(v_J, c_rel)``.

    ``X_pa`` is the parent anchor frame in world, ``child_com`` the child's COM in world [m].
    ``v_J = S qd`` is the joint's relative twist and ``c_rel`` the part of ``dS/dt qd`` that
    does not come from the parent's motion (see the module docstring).
    """
    jtype = joints.kind[j]
    q_start = joints.q_start[j]
    qd_start = joints.qd_start[j]
    lin_count = joints.dof_dim[j, 0]
    ang_count = joints.dof_dim[j, 1]
    joint_axis = joints.axis
    v_J = wp.spatial_vector()
    c_rel = wp.spatial_vector()
    rot = wp.transform_get_rotation(X_pa)
    anchor = wp.transform_get_translation(X_pa) - origin
    if jtype == JOINT_PRISMATIC:
        col = prismatic_column(wp.quat_rotate(rot, joint_axis[qd_start]))
        dof_S[qd_start] = col
        v_J = col * joint_qd[qd_start]
    elif jtype == JOINT_REVOLUTE:
        col = revolute_column(wp.quat_rotate(rot, joint_axis[qd_start]), anchor)
        dof_S[qd_start] = col
        v_J = col * joint_qd[qd_start]
    elif jtype == JOINT_BALL:
        for k in range(3):
            e = wp.vec3(0.0)
            e[k] = 1.0
            col = revolute_column(wp.quat_rotate(rot, e), anchor)
            dof_S[qd_start + k] = col
            v_J += col * joint_qd[qd_start + k]
    elif jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
        pivot = child_com - origin
        pivot_rate = wp.vec3(0.0)
        w_rel = wp.vec3(0.0)
        for k in range(3):
            e = wp.vec3(0.0)
            e[k] = 1.0
            a = wp.quat_rotate(rot, e)
            col_lin = prismatic_column(a)
            col_ang = revolute_column(a, pivot)
            dof_S[qd_start + k] = col_lin
            dof_S[qd_start + 3 + k] = col_ang
            v_J += col_lin * joint_qd[qd_start + k] + col_ang * joint_qd[qd_start + 3 + k]
            pivot_rate += a * joint_qd[qd_start + k]
            w_rel += a * joint_qd[qd_start + 3 + k]
        c_rel = wp.spatial_vector(wp.cross(pivot_rate, w_rel), wp.vec3(0.0))
    elif jtype == JOINT_D6:
        pivot_local = wp.vec3(0.0)
        pivot_rate = wp.vec3(0.0)
        for k in range(lin_count):
            a = wp.quat_rotate(rot, joint_axis[qd_start + k])
            col = prismatic_column(a)
            dof_S[qd_start + k] = col
            v_J += col * joint_qd[qd_start + k]
            pivot_local += joint_axis[qd_start + k] * joint_q[q_start + k]
            pivot_rate += a * joint_qd[qd_start + k]
        pivot = anchor + wp.quat_rotate(rot, pivot_local)
        transport = wp.quat_identity()  # rotations of the angular DOFs before k (anchor frame)
        w_before = wp.vec3(0.0)  # relative angular velocity of those DOFs, world [rad/s]
        for k in range(ang_count):
            i = qd_start + lin_count + k
            axis_local = joint_axis[i]
            a = wp.quat_rotate(rot, wp.quat_rotate(transport, axis_local))
            col = revolute_column(a, pivot)
            dof_S[i] = col
            qd_k = joint_qd[i]
            v_J += col * qd_k
            d = wp.cross(w_before, a)
            c_rel += wp.spatial_vector(wp.cross(pivot_rate, a) + wp.cross(pivot, d), d) * qd_k
            w_before += a * qd_k
            transport = transport * wp.quat_from_axis_angle(axis_local, joint_q[q_start + lin_count + k])
    return v_J, c_rel


@wp.func
def articulation_forward_kinematics(
    art: int,
    # Plan:
    tree_start: wp.array[int],
    tree_joint: wp.array[int],
    # Model:
    joints: JointModel,
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    # Data out:
    body_q_out: wp.array[wp.transform],
    body_qd_out: wp.array[wp.spatial_vector],
    kinematics_out: KinematicsBuffers,
):
    """Forward kinematics of articulation ``art`` (the body of :func:`eval_articulation_kinematics`).

    A ``wp.func`` so that solvers can fuse it with their own per-articulation work (for example
    SolverFeatherstone's integrate-then-publish kernel) without a second launch.
    """
    start = tree_start[art]
    end = tree_start[art + 1]
    if start == end:
        return
    articulation_origin_out = kinematics_out.articulation_origin
    body_v_out = kinematics_out.body_v
    body_c_out = kinematics_out.body_c
    dof_S_out = kinematics_out.dof_S

    # Reference point: COM of the first body in tree order (its joint hangs from the world).
    j0 = tree_joint[start]
    X_w0 = joints.X_p[j0] * joint_transform(joints, j0, joint_q) * wp.transform_inverse(joints.X_c[j0])
    origin = wp.transform_point(X_w0, joints.body_com[joints.child[j0]])
    articulation_origin_out[art] = origin

    for t in range(start, end):
        j = tree_joint[t]
        child = joints.child[j]
        parent = joints.parent[j]
        X_pa = joints.X_p[j]
        v_parent = wp.spatial_vector()
        X_wc = X_w0
        com_world = origin
        if parent >= 0:
            X_pa = body_q_out[parent] * X_pa
            v_parent = body_v_out[parent]
        if t != start or parent >= 0:
            # The first joint hanging from the world placed its child above already, by the same operations.
            X_wc = X_pa * joint_transform(joints, j, joint_q) * wp.transform_inverse(joints.X_c[j])
            com_world = wp.transform_point(X_wc, joints.body_com[child])
        v_J, c_rel = write_joint_columns(joints, j, joint_q, joint_qd, X_pa, com_world, origin, dof_S_out)
        v_child = v_parent + v_J
        body_q_out[child] = X_wc
        body_v_out[child] = v_child
        body_c_out[child] = motion_cross(v_parent, v_J) + c_rel
        body_qd_out[child] = twist_at_point(v_child, com_world - origin)


@wp.kernel
def _forward_kinematics(
    # Plan:
    tree_start: wp.array[int],
    tree_joint: wp.array[int],
    # Model:
    joints: JointModel,
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    # Data out:
    body_q_out: wp.array[wp.transform],
    body_qd_out: wp.array[wp.spatial_vector],
    kinematics_out: KinematicsBuffers,
):
    art = wp.tid()  # one thread per articulation
    if joints.articulation_skip[art] != 0:
        return
    articulation_forward_kinematics(art, tree_start, tree_joint, joints, joint_q, joint_qd, body_q_out, body_qd_out,
                                    kinematics_out)


def eval_articulation_kinematics(
    model: newton.Model,
    plan: ArticulationPlan,
    data: ArticulationData,
    joint_q: wp.array,
    joint_qd: wp.array,
    body_q: wp.array,
    body_qd: wp.array,
) -> None:
    """Forward kinematics of every articulation of every world in one launch.

    Writes ``body_q`` [m, quaternion] and ``body_qd`` (Newton's ``(v_com, w)`` twist, world frame
    [m/s, rad/s]) of every articulated body, and ``data.articulation_origin``, ``data.body_v``,
    ``data.body_c`` and ``data.dof_S`` for the dynamics stage. Bodies outside every articulation
    keep whatever ``body_q``/``body_qd`` hold.
    """
    if plan.articulation_count == 0:
        return
    launch(
        _forward_kinematics,
        dim=plan.articulation_count,
        inputs=[plan.tree_start, plan.tree_joint, plan.joints, joint_q, joint_qd],
        outputs=[body_q, body_qd, data.kinematics],
        device=model.device,
    )


@wp.kernel
def _jacobian(
    # Plan:
    tree_start: wp.array[int],
    tree_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    dof_start: wp.array[int],
    # Model:
    joints: JointModel,
    # Data in:
    body_q: wp.array[wp.transform],
    articulation_origin: wp.array[wp.vec3],
    dof_S: wp.array[wp.spatial_vector],
    # Data out:
    J_out: wp.array3d[float],
):
    art, local = wp.tid()  # one thread per (articulation, joint slot)
    start = tree_start[art]
    if start + local >= tree_start[art + 1]:
        return
    first = wp.int32(2147483647)
    for t in range(start, tree_start[art + 1]):
        first = wp.min(first, tree_joint[t])
    j = tree_joint[start + local]
    row = (j - first) * 6  # Newton's layout: the child of the articulation's i-th joint is link i
    child = joints.child[j]
    com_rel = wp.transform_point(body_q[child], joints.body_com[child]) - articulation_origin[art]
    k = j
    while k >= 0:
        for d in range(joints.qd_start[k], joints.qd_start[k + 1]):
            col = d - dof_start[art]
            tw = twist_at_point(dof_S[d], com_rel)
            for r in range(6):
                J_out[art, row + r, col] = tw[r]
        k = joint_parent_joint[k]


def eval_articulation_jacobian(
    model: newton.Model, plan: ArticulationPlan, data: ArticulationData, body_q: wp.array, J: wp.array
) -> None:
    """Body-COM Jacobians in Newton's ``eval_jacobian`` layout ``(articulation, 6 * link, dof)``.

    Needs :func:`eval_articulation_kinematics` first. ``J @ joint_qd`` of link ``i`` equals its
    ``body_qd``. ``J`` must be zeroed by the caller where entries are structurally zero.
    """
    if plan.articulation_count == 0:
        return
    launch(
        _jacobian,
        dim=(plan.articulation_count, plan.max_joint_count),
        inputs=[
            plan.tree_start,
            plan.tree_joint,
            plan.joint_parent_joint,
            plan.dof_start,
            plan.joints,
            body_q,
            data.articulation_origin,
            data.dof_S,
        ],
        outputs=[J],
        device=model.device,
    )
