"""``JointModel``: the Newton joint (and body inertial) arrays the articulation kernels read, as one struct.

Kinematics, integration and the solvers' fused kernels all need the same nine joint arrays plus
the body COMs. Passing them as one struct keeps kernel signatures short and lets every kernel
read the topology through the same names (``joints.parent[j]``, ``joints.X_p[j]``, ...).

The struct holds references to the model's arrays, so in-place edits (``model.joint_X_p.assign``)
are seen by every launch; a model whose arrays are *replaced* needs a new plan.
"""

from __future__ import annotations

import warp as wp

import newton


@wp.struct
class JointModel:
    kind: wp.array[int]  # newton.JointType per joint
    parent: wp.array[int]  # parent body, -1 for the world
    child: wp.array[int]  # child body
    q_start: wp.array[int]  # first coordinate in joint_q (joint_count + 1 entries)
    qd_start: wp.array[int]  # first DOF in joint_qd (joint_count + 1 entries)
    dof_dim: wp.array2d[int]  # (linear, angular) axis counts
    X_p: wp.array[wp.transform]  # joint frame in the parent body frame [m, quaternion]
    X_c: wp.array[wp.transform]  # joint frame in the child body frame [m, quaternion]
    axis: wp.array[wp.vec3]  # per-DOF axis in the joint frame
    body_com: wp.array[wp.vec3]  # body COM in the body frame [m]
    body_mass: wp.array[float]  # body mass [kg]
    body_inertia: wp.array[wp.mat33]  # rotational inertia about the COM, body frame [kg·m²]
    # 1: the articulation's kinematics and dynamics kernels leave it untouched this step (a sleeping
    # island of SolverSteel, whose published state is frozen); zeros unless a solver points it at
    # its own flags  (articulation,)
    articulation_skip: wp.array[wp.int32]


def joint_model(model: newton.Model) -> JointModel:
    """The struct view of ``model``'s joint arrays."""
    joints = JointModel()
    dev = model.device
    if model.joint_count == 0:
        # A model without joints (particles only) still gets a valid struct; no kernel reads it.
        joints.kind = joints.parent = joints.child = wp.zeros(1, dtype=int, device=dev)
        joints.q_start = joints.qd_start = wp.zeros(1, dtype=int, device=dev)
        joints.dof_dim = wp.zeros((1, 2), dtype=int, device=dev)
        joints.X_p = joints.X_c = wp.zeros(1, dtype=wp.transform, device=dev)
        joints.axis = wp.zeros(1, dtype=wp.vec3, device=dev)
    else:
        joints.kind = model.joint_type
        joints.parent = model.joint_parent
        joints.child = model.joint_child
        joints.q_start = model.joint_q_start
        joints.qd_start = model.joint_qd_start
        joints.dof_dim = model.joint_dof_dim
        joints.X_p = model.joint_X_p
        joints.X_c = model.joint_X_c
        joints.axis = model.joint_axis
    if model.body_count:
        joints.body_com = model.body_com
        joints.body_mass = model.body_mass
        joints.body_inertia = model.body_inertia
    else:
        joints.body_com = wp.zeros(1, dtype=wp.vec3, device=dev)
        joints.body_mass = wp.zeros(1, dtype=float, device=dev)
        joints.body_inertia = wp.zeros(1, dtype=wp.mat33, device=dev)
    joints.articulation_skip = wp.zeros(max(int(model.articulation_count), 1), dtype=wp.int32, device=dev)
    return joints
