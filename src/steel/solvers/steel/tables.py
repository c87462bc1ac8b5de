"""Host-built lookup tables of SolverSteel: who responds, which world solves what, free bodies.

Built at construction and rebuilt by ``notify_model_changed`` with body or DOF flags (kinematic
membership is read on the host). All arrays are small and indexed by body, articulation or DOF.

=========================  ==================================================================  ==============
table                      meaning                                                             shape
=========================  ==================================================================  ==============
body_row_world             world whose sweep solves the body's rows (global bodies: world 0)   (body,)
body_is_global             1 for a body of world -1 (its lost rows also flag the global entry) (body,)
body_responds              1 if an impulse on the body changes some non-prescribed DOF         (body,)
body_is_free               1 for a free single body (one body on a world-rooted FREE joint)    (body,)
articulation_row_world     the same world mapping per articulation                             (articulation,)
articulation_is_global     1 for an articulation of world -1                                   (articulation,)
articulation_is_free_body  1 for articulations that are one dynamic free single body           (articulation,)
dof_is_kinematic           1 for DOFs of joints whose child body is kinematic (prescribed)     (dof,)
=========================  ==================================================================  ==============
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from ...articulation import ArticulationPlan


class SteelTables:
    """Lookup tables for one model (see the module docstring)."""

    def __init__(self, model: newton.Model, plan: ArticulationPlan):
        self.model = model
        self.plan = plan
        self.refresh()

    def refresh(self) -> None:
        """Re-read body flags and topology on the host and upload the tables."""
        model, plan = self.model, self.plan
        dev = model.device
        nb, nj, nd = model.body_count, model.joint_count, model.joint_dof_count
        kinematic = plan.body_is_kinematic_np if nb else np.zeros(0, bool)
        if nb:
            kinematic = (model.body_flags.numpy() & int(newton.BodyFlags.KINEMATIC)) != 0
        body_world = model.body_world.numpy() if nb else np.zeros(0, np.int32)
        art_world = plan.articulation_world_np
        joint_type = model.joint_type.numpy() if nj else np.zeros(0, np.int32)
        joint_parent = model.joint_parent.numpy() if nj else np.zeros(0, np.int32)
        joint_child = model.joint_child.numpy() if nj else np.zeros(0, np.int32)
        qd_start = model.joint_qd_start.numpy() if nj else np.zeros(1, np.int32)

        dof_kin = np.zeros(max(nd, 1), dtype=np.int32)
        for j in range(nj):
            if kinematic[joint_child[j]]:
                dof_kin[qd_start[j] : qd_start[j + 1]] = 1

        # A body responds when some DOF on its path to the root is not prescribed.
        body_responds = np.zeros(max(nb, 1), dtype=np.int32)
        for b in range(nb):
            j = plan.body_joint_np[b]
            while j >= 0:
                if not dof_kin[qd_start[j] : qd_start[j + 1]].all() and qd_start[j + 1] > qd_start[j]:
                    body_responds[b] = 1
                    break
                j = plan.joint_parent_joint_np[j]

        free_types = (int(newton.JointType.FREE), int(newton.JointType.DISTANCE))
        art_free = np.zeros(max(plan.articulation_count, 1), dtype=np.int32)
        body_free = np.zeros(max(nb, 1), dtype=np.int32)
        for a in range(plan.articulation_count):
            joints = plan.articulation_joints(a)
            if len(joints) == 1 and int(joint_type[joints[0]]) in free_types and joint_parent[joints[0]] < 0:
                child = joint_child[joints[0]]
                body_free[child] = 1
                art_free[a] = 0 if kinematic[child] else 1

        self.body_is_kinematic_np = kinematic
        self.dof_is_kinematic_np = dof_kin[:nd]
        self.body_responds_np = body_responds[:nb]
        self.body_is_free_np = body_free[:nb]
        self.articulation_is_free_body_np = art_free[: plan.articulation_count]
        self.body_row_world = wp.array(np.maximum(body_world, 0).astype(np.int32) if nb else np.zeros(1, np.int32),
                                       dtype=wp.int32, device=dev)
        self.body_responds = wp.array(body_responds, dtype=wp.int32, device=dev)
        self.body_is_free = wp.array(body_free, dtype=wp.int32, device=dev)
        self.body_is_global = wp.array((body_world < 0).astype(np.int32) if nb else np.zeros(1, np.int32),
                                       dtype=wp.int32, device=dev)
        self.articulation_is_global = wp.array(
            (art_world < 0).astype(np.int32) if plan.articulation_count else np.zeros(1, np.int32),
            dtype=wp.int32, device=dev)
        self.articulation_row_world = wp.array(
            np.maximum(art_world, 0).astype(np.int32) if plan.articulation_count else np.zeros(1, np.int32),
            dtype=wp.int32, device=dev)
        self.articulation_is_free_body = wp.array(art_free, dtype=wp.int32, device=dev)
        self.dof_is_kinematic = wp.array(dof_kin, dtype=wp.int32, device=dev)


def groups_can_collide(group: int, others: np.ndarray) -> np.ndarray:
    """Newton's documented collision-group rule: 0 never collides; a positive group meets itself
    and negative groups; a negative group meets every group but itself."""
    if group == 0:
        return np.zeros(len(others), dtype=bool)
    if group > 0:
        return (others != 0) & ((others == group) | (others < 0))
    return (others != 0) & (others != group)


def cross_world_global_bodies(model: newton.Model, tables: SteelTables) -> list[int]:
    """Moving global bodies whose shapes may touch a moving body of a world other than world 0.

    Global articulations are solved in world 0's sweep, so such a contact would couple two worlds
    and is dropped at run time; this host check lets the constructor warn about it once. Fully
    kinematic global bodies are scenery with prescribed motion and are solved in every world.
    """
    if int(model.world_count) <= 1 or model.shape_count == 0 or model.body_count == 0:
        return []
    shape_body = model.shape_body.numpy()
    collide = (model.shape_flags.numpy() & int(newton.ShapeFlags.COLLIDE_SHAPES)) != 0
    group = model.shape_collision_group.numpy()
    body_world = model.body_world.numpy()
    responds = tables.body_responds_np.astype(bool)
    on_body = shape_body >= 0
    moving = np.zeros(len(shape_body), dtype=bool)
    moving[on_body] = responds[shape_body[on_body]]
    world_of = np.full(len(shape_body), -1)
    world_of[on_body] = body_world[shape_body[on_body]]
    global_shapes = np.nonzero(moving & collide & (world_of < 0))[0]
    others = np.nonzero(moving & collide & (world_of > 0))[0]
    found = []
    for s in global_shapes:
        if groups_can_collide(int(group[s]), group[others]).any():
            found.append(int(shape_body[s]))
    return sorted(set(found))
