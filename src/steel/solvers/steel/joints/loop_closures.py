"""Loop-closing joints: BALL, REVOLUTE and FIXED joints outside the trees, as bilateral rows.

A joint that is in no articulation but whose child is an articulated body closes a loop. Its parent
is a body of the child's articulation, the world, or a kinematic body. Each step, from the joint
frames ``X_wp = X_parent joint_X_p`` and ``X_wc = X_child joint_X_c`` (read every step, as are
``joint_axis`` and ``joint_enabled``, so editing them in place re-anchors, re-aims, releases or engages
the closure), the rows are (Baumgarte position bias ``-baumgarte C / dt``; velocity sweeps target 0):

* pin, all three types: the relative velocity of the two anchors along world x, y, z,
  ``C = p_c - p_p`` [m];
* REVOLUTE: the relative angular velocity about two directions ``b1``, ``b2`` normal to the parent's
  hinge axis ``a_p``, ``C_i = theta n . b_i`` [rad] with ``theta n`` the rotation taking ``a_p`` onto the
  child's ``a_c`` the short way (``n`` along ``a_p x a_c``), which keeps the child's axis on the parent's
  hinge line and leaves the rotation about it free;
* FIXED: the relative angular velocity along world x, y, z, ``C`` the rotation vector of
  ``q_wp^-1 q_wc`` (the short way) in world axes.

Every row is an unbounded boxed row (``ROW_BOX``, ``|lambda| <= UNBOUNDED``) over the child's articulation:
``J = J_child(p_c) - J_parent(p_p)``, the parent's part only when it is in that articulation; a world
or kinematic parent outside it enters through its velocity in the target instead. The rows of one
closure are reserved together (3, 5 or 6) and dropped together, flagging the world. A disabled
closure (``Model.joint_enabled`` false) builds none.

Construction raises ``NotImplementedError`` naming the joint for another joint type or a parent in
another dynamic articulation (or a dynamic body outside every articulation), and for a tree joint
disabled at construction; a tree joint disabled later flags its world on ``notify_model_changed``
(JOINT_PROPERTIES), which ``check_constraint_capacity`` reports until the world is reset, while steps go
on treating it as a joint. A closure has no coordinate: the limits, drive gains, damping, armature and
``joint_f`` of a loop REVOLUTE DOF are ignored, with a ``NewtonWarning`` at construction and on eager
joint or DOF notifications (also for a zero or non-finite axis). Imported MuJoCo equality rows are
checked by :func:`check_equality_constraints`. ``enable_bilateral_preelimination`` solves an articulation's
closure (and mimic) rows as one block before the sweep (``sweep/preelimination.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
import warp as wp

import newton

from ....articulation.checks import joint_name
from ....articulation.joint_model import JointModel
from ....articulation.kinematics import JOINT_FIXED, JOINT_REVOLUTE
from ..data import FAMILY_ARTICULATED, ROW_BOX, UNBOUNDED, RowBuffers  # UNBOUNDED: a bilateral row's box
from ..rows.common import (JointRowModel, add_point_jacobian, joint_row_model, reserve_rows, side_offset,
                     write_dof_row)
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

CLOSURE_TYPES = (newton.JointType.BALL, newton.JointType.REVOLUTE, newton.JointType.FIXED)


@wp.kernel
def _closure_rows(
    dt: float,
    baumgarte: float,
    closures: wp.array[wp.int32],  # the closing joints
    joints: JointModel,  # the model's joint arrays, read live (frames and axes may be edited in place)
    m: JointRowModel,  # articulation tables
    joint_enabled: wp.array[bool],
    # Plan and core data:
    body_articulation: wp.array[int],
    body_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    articulation_origin: wp.array[wp.vec3],
    dof_S: wp.array[wp.spatial_vector],
    # Data in:
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    # Data out:
    rows: RowBuffers,
):
    j = closures[wp.tid()]
    if not joint_enabled[j]:
        return
    child = joints.child[j]
    parent = joints.parent[j]
    art = body_articulation[child]
    if m.articulation_skip[art] != 0:
        return
    jtype = joints.kind[j]
    count = 3
    if jtype == JOINT_REVOLUTE:
        count = 5
    elif jtype == JOINT_FIXED:
        count = 6
    global_entry = int(-1)
    if m.art_is_global[art] != 0:
        global_entry = rows.constraint_overflow.shape[0] - 1
    r0 = reserve_rows(rows, int(m.art_row_world[art]), FAMILY_ARTICULATED, count, global_entry)
    if r0 < 0:
        return  # dropped whole; the world is flagged
    X_wp = joints.X_p[j]
    parent_inside = int(0)
    v_parent = wp.spatial_vector()  # the parent's velocity when it is outside the articulation (world: 0)
    if parent >= 0:
        X_wp = body_q[parent] * joints.X_p[j]
        if body_articulation[parent] == art:
            parent_inside = 1
        else:
            v_parent = body_qd[parent]
    X_wc = body_q[child] * joints.X_c[j]
    p_p = wp.transform_get_translation(X_wp)
    p_c = wp.transform_get_translation(X_wc)
    q_p = wp.transform_get_rotation(X_wp)
    q_c = wp.transform_get_rotation(X_wc)
    origin = articulation_origin[art]
    d0 = m.art_dof_start[art]
    n = m.art_dof_count[art]
    # The parent's anchor velocity when it moves outside the articulation (a kinematic body).
    parent_com = wp.vec3(0.0)
    if parent >= 0:
        parent_com = wp.transform_point(body_q[parent], joints.body_com[parent])
    v_anchor = wp.spatial_top(v_parent) + wp.cross(wp.spatial_bottom(v_parent), p_p - parent_com)
    w_parent = wp.spatial_bottom(v_parent)
    hinge = joints.axis[joints.qd_start[j]]
    a_p = wp.quat_rotate(q_p, hinge)
    b1 = wp.normalize(wp.cross(a_p, wp.vec3(1.0, 0.0, 0.0)))
    if wp.abs(a_p[0]) > 0.9:
        b1 = wp.normalize(wp.cross(a_p, wp.vec3(0.0, 1.0, 0.0)))
    b2 = wp.cross(a_p, b1)
    # The rotation vector taking the parent's hinge axis onto the child's, the short way: its angle, not
    # its sine, so an axis 179 degrees off is turned back by 179 degrees rather than pushed to 180.
    a_c = wp.quat_rotate(q_c, hinge)
    sine = wp.cross(a_p, a_c)
    angle = wp.atan2(wp.length(sine), wp.dot(a_p, a_c))
    axis_error = b1 * angle  # exactly opposite axes: any normal direction will do
    if wp.length(sine) > 1.0e-12:
        axis_error = wp.normalize(sine) * angle
    q_rel = wp.quat_inverse(q_p) * q_c
    rotation = 2.0 * wp.vec3(q_rel[0], q_rel[1], q_rel[2])
    if q_rel[3] < 0.0:
        rotation = -rotation  # the short way
    rotation = wp.quat_rotate(q_p, rotation)
    for i in range(count):
        r = r0 + i
        angular = int(i >= 3)
        direction = wp.vec3(0.0)
        error = float(0.0)
        external = float(0.0)  # the parent's velocity along the row, when it is outside the articulation
        if i < 3:
            direction[i] = 1.0
            error = p_c[i] - p_p[i]
            external = v_anchor[i]
        elif jtype == JOINT_REVOLUTE:
            direction = b1
            if i == 4:
                direction = b2
            error = wp.dot(axis_error, direction)
            external = wp.dot(w_parent, direction)
        else:
            direction[i - 3] = 1.0
            error = rotation[i - 3]
            external = w_parent[i - 3]
        write_dof_row(rows, r, d0, n, m.art_mass_start[art], d0, 0.0, ROW_BOX, -baumgarte * error / dt + external,
                      external, UNBOUNDED, 0.0)
        rows.dof_start[r, 1] = -1  # a multi-DOF row: J qd by the general loop
        rows.dir[r] = direction  # marks a connect row for pre-elimination (sweep/preelimination.py)
        offset = side_offset(rows, r, 0)
        add_point_jacobian(rows, offset, child, p_c - origin, direction, 1.0, angular, d0, body_joint,
                           joint_parent_joint, joints.qd_start, dof_S)
        if parent_inside != 0:
            add_point_jacobian(rows, offset, parent, p_p - origin, direction, -1.0, angular, d0, body_joint,
                               joint_parent_joint, joints.qd_start, dof_S)


class LoopClosures:
    """The model's loop-closing joints, validated at construction; :meth:`build` launches their rows."""

    def __init__(self, model: newton.Model):
        self.model = model
        joints = closure_joints(model)
        check_equality_constraints(model, joints)
        self.count = len(joints)
        self.rows_per_world = 0
        if not self.count:
            return
        jtype = model.joint_type.numpy()
        parent = model.joint_parent.numpy()
        kinematic = (model.body_flags.numpy() & int(newton.BodyFlags.KINEMATIC)) != 0
        body_art = _body_articulation(model)
        allowed = [int(t) for t in CLOSURE_TYPES]
        world = np.maximum(model.joint_world.numpy(), 0)
        per_world = np.zeros(max(int(model.world_count), 1), dtype=np.int64)
        for j in joints:
            if int(jtype[j]) not in allowed:
                raise NotImplementedError(f"SolverSteel: loop-closing {joint_name(model, j)} has type "
                                          f"{newton.JointType(int(jtype[j])).name}; only BALL, REVOLUTE and FIXED "
                                          "joints close loops")
            child = int(model.joint_child.numpy()[j])
            p = int(parent[j])
            if p >= 0 and body_art[p] != body_art[child] and not kinematic[p]:
                raise NotImplementedError(f"SolverSteel: loop-closing {joint_name(model, j)} joins two dynamic "
                                          "articulations (or a dynamic body outside them); its parent must be in "
                                          "the child's articulation, a kinematic body or the world")
            per_world[world[j]] += {int(newton.JointType.BALL): 3, int(newton.JointType.REVOLUTE): 5}.get(
                int(jtype[j]), 6)
        self.rows_per_world = int(per_world.max())
        self.joints = wp.array(np.array(joints, dtype=np.int32), dtype=wp.int32, device=model.device)
        self.joint_list = joints
        warn_ignored_dof_settings(model, joints)

    def build(self, sm, sd, state_in, dt: float) -> None:
        if not self.count:
            return
        model, core = self.model, sm.core
        launch(
            _closure_rows,
            dim=self.count,
            inputs=[
                float(dt),
                float(sm.options.baumgarte),
                self.joints,
                core.plan.joints,
                joint_row_model(sm),
                model.joint_enabled,
                core.plan.body_articulation,
                core.plan.body_joint,
                core.plan.joint_parent_joint,
                core.data.articulation_origin,
                core.data.dof_S,
                state_in.body_q,
                sd.body_qd_in,
            ],
            outputs=[sd.rows.buffers],
            device=model.device,
        )


def _body_articulation(model: newton.Model) -> np.ndarray:
    """The articulation of each body's inbound tree joint, -1 outside every articulation (host)."""
    body_art = np.full(max(model.body_count, 1), -1, dtype=np.int64)
    art = model.joint_articulation.numpy()
    inside = art >= 0
    body_art[model.joint_child.numpy()[inside]] = art[inside]
    return body_art


def warn_ignored_dof_settings(model: newton.Model, closures: list[int]) -> None:
    """Warn about what a loop-closing REVOLUTE joint's DOF carries and the rows ignore (it has no coordinate):
    limits other than the builder's +-1e10, drive gains, damping, armature; and a zero or non-finite axis."""
    jtype, qd_start = model.joint_type.numpy(), model.joint_qd_start.numpy()
    names = ("joint_limit_lower", "joint_limit_upper", "joint_target_ke", "joint_target_kd", "joint_damping",
             "joint_armature")
    arrays = {name: getattr(model, name).numpy() for name in names}
    axes = model.joint_axis.numpy()
    for j in closures:
        if int(jtype[j]) != int(newton.JointType.REVOLUTE):
            continue
        d = int(qd_start[j])
        ignored = [name for name, values in arrays.items()
                   if (name.startswith("joint_limit") and abs(float(values[d])) < 1.0e10)
                   or (not name.startswith("joint_limit") and float(values[d]) != 0.0)]
        axis = axes[d]
        if not np.all(np.isfinite(axis)) or float(np.linalg.norm(axis)) == 0.0:
            ignored.append(f"joint_axis {axis.tolist()} (zero or non-finite: the hinge rows are not defined)")
        if ignored:
            warnings.warn(f"SolverSteel: loop-closing {joint_name(model, j)} has no coordinate; its "
                          f"{', '.join(ignored)} are ignored", newton.NewtonWarning, stacklevel=4)


def flag_disabled_tree_joints(model: newton.Model, overflow: wp.array) -> None:
    """Flag the worlds of tree joints disabled after construction (``notify_model_changed``, host).

    A tree joint cannot be released (the articulation keeps it); steps go on ignoring
    ``joint_enabled`` there and :meth:`~steel.solvers.SolverSteel.check_constraint_capacity` reports the
    world until it is reset.
    """
    if not model.joint_count:
        return
    disabled = np.nonzero((model.joint_articulation.numpy() >= 0) & ~model.joint_enabled.numpy().astype(bool))[0]
    if not len(disabled):
        return
    flags = overflow.numpy()
    worlds = model.joint_world.numpy()[disabled]
    flags[np.where(worlds >= 0, worlds, len(flags) - 1)] = True
    overflow.assign(flags)


def closure_joints(model: newton.Model) -> list[int]:
    """Joints outside every articulation whose child is articulated (host); also rejects disabled tree joints."""
    if not model.joint_count:
        return []
    art = model.joint_articulation.numpy()
    enabled = model.joint_enabled.numpy()
    disabled_tree = np.nonzero((art >= 0) & ~enabled.astype(bool))[0]
    if len(disabled_tree):
        raise NotImplementedError(f"SolverSteel: {joint_name(model, int(disabled_tree[0]))} is an articulation "
                                  "tree joint disabled at construction; only loop-closing joints may be disabled")
    child = model.joint_child.numpy()
    body_art = _body_articulation(model)
    return [int(j) for j in np.nonzero(art < 0)[0] if body_art[child[j]] >= 0]


def closure_rows_per_world(model: newton.Model) -> int:
    """Rows the closures take in the fullest world (capacity sizing; 0 without closures)."""
    return LoopClosures(model).rows_per_world


# MuJoCo equality rows as Newton's MJCF/USD importers record them (model.mujoco.equality_constraint_*):
# type CONNECT 0, WELD 1, JOINT 2; target kind NONE 0, a loop JOINT 1, a MIMIC constraint 2.
EQ_CONNECT, EQ_WELD, EQ_JOINT = 0, 1, 2
TARGET_JOINT, TARGET_MIMIC = 1, 2


def check_equality_constraints(model: newton.Model, closures: list[int]) -> None:
    """Every enabled imported MuJoCo equality must be enforced through what the importer converted it to.

    CONNECT must target a BALL closure and WELD a FIXED closure (a BALL one with ``torquescale`` 0)
    between the row's own bodies; JOINT must target a mimic constraint between the row's own joints.
    Anything else raises ``NotImplementedError`` naming the row, rather than being ignored.
    """
    ns = getattr(model, "mujoco", None)
    count = int(getattr(ns, "equality_constraint_count", 0) or 0) if ns is not None else 0
    if not count:
        return

    def read(name):
        return getattr(ns, f"equality_constraint_{name}").numpy()

    kind, enabled, target_kind, target = read("type"), read("enabled"), read("target_kind"), read("target")
    body1, body2, torquescale = read("body1"), read("body2"), read("torquescale")
    joint1, joint2 = read("joint1"), read("joint2")
    jtype, parent, child = model.joint_type.numpy(), model.joint_parent.numpy(), model.joint_child.numpy()
    mimic_count = int(getattr(model, "constraint_mimic_count", 0) or 0)
    for i in range(count):
        if not enabled[i]:
            continue
        t, k = int(target[i]), int(kind[i])
        ok = False
        if int(target_kind[i]) == TARGET_JOINT and k in (EQ_CONNECT, EQ_WELD) and t in closures:
            want = newton.JointType.FIXED if k == EQ_WELD and torquescale[i] != 0.0 else newton.JointType.BALL
            ok = int(jtype[t]) == int(want) and {int(parent[t]), int(child[t])} == {int(body1[i]), int(body2[i])}
        elif int(target_kind[i]) == TARGET_MIMIC and k == EQ_JOINT and 0 <= t < mimic_count:
            pair = {int(model.constraint_mimic_joint0.numpy()[t]), int(model.constraint_mimic_joint1.numpy()[t])}
            ok = pair == {int(joint1[i]), int(joint2[i])}
        if not ok:
            raise NotImplementedError(
                f"SolverSteel: imported MuJoCo equality constraint {i} (type {k}, target kind {int(target_kind[i])}, "
                f"target {t}) is not a loop-closing joint or mimic constraint between its own bodies or joints; "
                "only those are enforced"
            )
