"""Host-side articulation plan: trees, tree order, DOF layout and per-world bookkeeping.

The plan is computed once from a finalized :class:`newton.Model` (numpy on the host) and
uploaded as a handful of small device arrays. It owns no per-step state; the per-step
work buffers live in :class:`steel.articulation.data.ArticulationData`.

What it guarantees, for every articulation ``a`` (one kernel thread each):

* ``tree_joint[tree_start[a]:tree_start[a + 1]]`` lists the articulation's joints in a
  topological order: a joint appears after the joint that moves its parent body.
* The articulation's DOFs are the contiguous range ``dof_start[a] : dof_start[a] + dof_count[a]``
  of ``joint_qd`` (Newton stores an articulation's joints contiguously), and its dense
  ``dof_count x dof_count`` mass matrix block starts at ``mass_start[a]`` in the flat
  mass-matrix buffer (row-major).
* ``joint_parent_joint[j]`` is the joint that moves the parent body of ``j``, or -1 when the
  parent is the world (or a body outside the articulation, which is rejected below).

Rejected at plan time with a ``ValueError`` naming the joint: joint types the core does not
model (ROD, or anything unknown), and an articulated joint whose parent body is moved by a
joint of a different articulation. DISTANCE joints are treated as FREE joints (6 DOFs,
7 coordinates), as the reference solvers do.

Bodies outside every articulation (no inbound articulated joint) are listed in
``bodies_outside``; the core does not move them. Kinematic bodies
(:attr:`newton.BodyFlags.KINEMATIC`) are listed in ``body_is_kinematic``; the core computes
their kinematics like any other body and leaves their treatment to the solver.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from ..structs import struct_of
from .joint_model import joint_model

SUPPORTED_JOINT_TYPES = (
    newton.JointType.PRISMATIC,
    newton.JointType.REVOLUTE,
    newton.JointType.BALL,
    newton.JointType.FIXED,
    newton.JointType.FREE,
    newton.JointType.DISTANCE,
    newton.JointType.D6,
)


def _joint_type_name(value: int) -> str:
    try:
        return newton.JointType(int(value)).name
    except ValueError:
        return f"unknown type {int(value)}"


class ArticulationPlan:
    """Topology, tree order and DOF layout of every articulation of a model.

    Args:
        model: a finalized Newton model, on any device.

    Raises:
        ValueError: a joint has a type the core does not support, or an articulated joint's
            parent body belongs to another articulation.
    """

    def __init__(self, model: newton.Model):
        self.device = model.device
        self.articulation_count = int(model.articulation_count)
        self.world_count = int(model.world_count)
        self.body_count = int(model.body_count)
        self.joint_count = int(model.joint_count)
        self.dof_count = int(model.joint_dof_count)

        joint_type = model.joint_type.numpy() if self.joint_count else np.zeros(0, np.int32)
        joint_parent = model.joint_parent.numpy() if self.joint_count else np.zeros(0, np.int32)
        joint_child = model.joint_child.numpy() if self.joint_count else np.zeros(0, np.int32)
        joint_art = model.joint_articulation.numpy() if self.joint_count else np.zeros(0, np.int32)
        qd_start = model.joint_qd_start.numpy() if self.joint_count else np.zeros(1, np.int32)
        labels = list(getattr(model, "joint_label", None) or [])

        def joint_name(j: int) -> str:
            return f"joint {j} ('{labels[j]}')" if j < len(labels) else f"joint {j}"

        for j in range(self.joint_count):
            if joint_art[j] >= 0 and int(joint_type[j]) not in SUPPORTED_JOINT_TYPES:
                raise ValueError(
                    f"{joint_name(j)} has joint type {_joint_type_name(joint_type[j])}, which the articulation "
                    f"core does not support; supported types: {', '.join(t.name for t in SUPPORTED_JOINT_TYPES)}"
                )

        # Which articulated joint moves each body (the body's inbound tree joint).
        body_joint = np.full(self.body_count, -1, dtype=np.int32)
        for j in range(self.joint_count):
            if joint_art[j] >= 0:
                body_joint[joint_child[j]] = j

        joint_parent_joint = np.full(self.joint_count, -1, dtype=np.int32)
        for j in range(self.joint_count):
            if joint_art[j] < 0:
                continue
            p = joint_parent[j]
            if p < 0:
                continue
            pj = body_joint[p]
            if pj < 0 or joint_art[pj] != joint_art[j]:
                raise ValueError(
                    f"{joint_name(j)} (articulation {joint_art[j]}) has parent body {p}, which is not moved by a "
                    f"joint of the same articulation; the articulation core needs each articulation to be a tree "
                    f"rooted at the world"
                )
            joint_parent_joint[j] = pj

        # Tree order per articulation: sort by depth, stable on the joint index.
        depth = np.zeros(self.joint_count, dtype=np.int32)
        for j in range(self.joint_count):
            d, k = 0, joint_parent_joint[j]
            while k >= 0:
                d += 1
                k = joint_parent_joint[k]
                if d > self.joint_count:
                    raise ValueError(f"{joint_name(j)} is part of a kinematic loop")
            depth[j] = d

        art_start = model.articulation_start.numpy() if self.articulation_count else np.zeros(1, np.int32)
        tree_joint = []
        tree_start = [0]
        dof_start = np.zeros(self.articulation_count, dtype=np.int32)
        dof_count = np.zeros(self.articulation_count, dtype=np.int32)
        mass_start = np.zeros(self.articulation_count + 1, dtype=np.int32)
        root_body = np.full(self.articulation_count, -1, dtype=np.int32)
        for a in range(self.articulation_count):
            # Newton's articulation_start range also holds joints added after the articulation's own
            # (loop-closing joints, joint_articulation -1); the tree is the articulation's own joints.
            joints = np.arange(art_start[a], art_start[a + 1])
            joints = joints[joint_art[joints] == a]
            if len(joints) and joints[-1] - joints[0] + 1 != len(joints):
                raise NotImplementedError(
                    f"articulation {a}: {joint_name(int(joints[0]))} to {joint_name(int(joints[-1]))} are not "
                    "contiguous (a joint of another articulation or a loop-closing joint sits between them)"
                )
            order = joints[np.argsort(depth[joints], kind="stable")]
            tree_joint.extend(order.tolist())
            tree_start.append(len(tree_joint))
            if len(joints):
                dof_start[a] = qd_start[joints[0]]
                dof_count[a] = qd_start[joints[-1] + 1] - qd_start[joints[0]]
                root_body[a] = joint_child[order[0]]
            mass_start[a + 1] = mass_start[a] + dof_count[a] * dof_count[a]

        self.tree_joint_np = np.asarray(tree_joint, dtype=np.int32)
        self.tree_start_np = np.asarray(tree_start, dtype=np.int32)
        self.dof_start_np = dof_start
        self.dof_count_np = dof_count
        self.mass_start_np = mass_start
        self.joint_parent_joint_np = joint_parent_joint
        self.body_joint_np = body_joint
        self.root_body_np = root_body
        self.max_dof_count = int(dof_count.max()) if self.articulation_count else 0
        self.max_joint_count = int(np.diff(self.tree_start_np).max()) if self.articulation_count else 0
        self.mass_size = int(mass_start[-1])
        # No joint outside the trees (loop closures, joints outside every articulation): then a kernel
        # with one thread per articulation that walks its tree reaches every joint and DOF of the model.
        self.trees_cover_every_joint = len(tree_joint) == self.joint_count

        # Per-articulation index into model.gravity: legacy models store a single vector, others
        # one per world plus a last entry for global entities (world -1).
        art_world = model.articulation_world.numpy() if self.articulation_count else np.zeros(0, np.int32)
        gravity_len = int(model.gravity.shape[0])
        if gravity_len == 1:
            gravity_index = np.zeros(self.articulation_count, dtype=np.int32)
        else:
            gravity_index = np.where(art_world < 0, gravity_len - 1, art_world).astype(np.int32)
        self.articulation_world_np = art_world.astype(np.int32)
        self.gravity_index_np = gravity_index

        self.bodies_outside_np = np.nonzero(body_joint < 0)[0].astype(np.int32)
        flags = model.body_flags.numpy() if self.body_count else np.zeros(0, np.int32)
        self.body_is_kinematic_np = (flags & int(newton.BodyFlags.KINEMATIC)) != 0

        dev = self.device
        self.tree_joint = wp.array(self.tree_joint_np, dtype=wp.int32, device=dev)
        self.tree_start = wp.array(self.tree_start_np, dtype=wp.int32, device=dev)
        self.dof_start = wp.array(self.dof_start_np, dtype=wp.int32, device=dev)
        self.dof_count_per_articulation = wp.array(self.dof_count_np, dtype=wp.int32, device=dev)
        self.mass_start = wp.array(self.mass_start_np, dtype=wp.int32, device=dev)
        self.joint_parent_joint = wp.array(self.joint_parent_joint_np, dtype=wp.int32, device=dev)
        self.gravity_index = wp.array(self.gravity_index_np, dtype=wp.int32, device=dev)
        self.root_body = wp.array(self.root_body_np, dtype=wp.int32, device=dev)
        self.joints = joint_model(model)  # the model's joint arrays as one struct for the kernels
        # DOF parent chains for the tree-sparse factorization: the previous DOF of the same joint,
        # or the last DOF of the nearest ancestor joint that has DOFs (-1 at the root).
        dof_parent = np.full(max(self.dof_count, 1), -1, dtype=np.int32)
        for j in range(self.joint_count):
            if joint_art[j] < 0:
                continue
            d0, d1 = qd_start[j], qd_start[j + 1]
            for d in range(d0 + 1, d1):
                dof_parent[d] = d - 1
            if d1 > d0:
                k = joint_parent_joint[j]
                while k >= 0 and qd_start[k + 1] == qd_start[k]:
                    k = joint_parent_joint[k]
                dof_parent[d0] = qd_start[k + 1] - 1 if k >= 0 else -1
        self.dof_parent_np = dof_parent[: self.dof_count]
        # The leaves-first factorization needs parents numbered before children (Newton's importers
        # and builders add joints that way); otherwise callers fall back to the dense factor.
        self.tree_factor_ok = bool((self.dof_parent_np < np.arange(self.dof_count)).all())
        self.dof_parent = wp.array(dof_parent, dtype=wp.int32, device=dev)
        # body -> inbound articulated joint / articulation (-1 for bodies outside every articulation)
        body_articulation = np.full(self.body_count, -1, dtype=np.int32)
        inside = body_joint >= 0
        body_articulation[inside] = joint_art[body_joint[inside]]
        self.body_articulation_np = body_articulation
        self.body_joint = wp.array(body_joint, dtype=wp.int32, device=dev)
        self.body_articulation = wp.array(body_articulation, dtype=wp.int32, device=dev)
        self.arrays = plan_arrays(self)

    def articulation_joints(self, a: int) -> np.ndarray:
        """Joint indices of articulation ``a`` in tree order (host)."""
        return self.tree_joint_np[self.tree_start_np[a] : self.tree_start_np[a + 1]]


@wp.struct
class PlanArrays:
    """The plan's device arrays as one struct, for kernels that read many of them (``plan.arrays``).

    Comments: meaning (shape). The arrays are built once per plan and never rebound, so the struct is too.
    """

    articulation_count: int  # articulations of the plan
    tree_start: wp.array[int]  # first tree position of each articulation  (articulation + 1,)
    tree_joint: wp.array[int]  # joints in tree order, parents first  (tree position,)
    joint_parent_joint: wp.array[int]  # the joint above each joint in its tree, -1: the root  (joint,)
    dof_start: wp.array[int]  # first DOF of each articulation  (articulation,)
    dof_count: wp.array[int]  # DOFs of each articulation  (articulation,)
    mass_start: wp.array[int]  # first entry of each articulation's mass-matrix block  (articulation + 1,)
    gravity_index: wp.array[int]  # gravity slot of each articulation's world  (articulation,)
    dof_parent: wp.array[int]  # the DOF above each DOF in the tree-sparse factor, -1: a root  (dof,)
    use_tree: int  # 1: the tree-sparse factor applies (parents numbered before children), 0: dense
    body_joint: wp.array[int]  # the joint whose child the body is, -1: outside every articulation  (body,)
    body_articulation: wp.array[int]  # articulation of each body, -1: outside every articulation  (body,)


def plan_arrays(plan: ArticulationPlan) -> PlanArrays:
    """The :class:`PlanArrays` view of ``plan``'s device arrays."""
    return struct_of(PlanArrays, plan, dof_count=plan.dof_count_per_articulation, use_tree=int(plan.tree_factor_ok))
