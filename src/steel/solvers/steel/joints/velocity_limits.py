"""Joint velocity limits (``enable_joint_velocity_limits``): a unilateral row pair per limited DOF.

A PRISMATIC, REVOLUTE or D6 DOF with a finite positive ``Model.joint_velocity_limit`` ``v`` [m/s or rad/s]
gets the rows ``qd >= -v`` and ``-qd >= -v`` (``ROW_SPEED_LIMIT``: impulses ``>= 0``, no position bias,
the same target in the velocity sweeps), solved with the articulated response like a joint limit one
derivative down, so the limit holds against any effort or impact the other rows leave. Unlike a joint
limit's, a velocity-limit row's impulse never shrinks within a step: a pass applies only the push that
brings the DOF back under its limit and never hands back what an earlier pass applied (measured on the
reference: two coaxial hinges, limits 2 rad/s, driven to (3, -4) rad/s by effort, end at (1.5, -2) after
1 and after 12 iterations, where releasing the first row's impulse would reach (2, -2); ours too:
``tests/solvers/steel/test_velocity_limits_side_by_side.py::test_a_velocity_limit_row_never_hands_its_impulse_back``).
Rows are
created only while ``|qd| >= velocity_limit_activation_fraction * v`` on the step's input velocity
(``inf``: never), so a DOF that crosses the threshold inside a step is clamped one step later.

With ``drive_mode="rows"`` and ``fuse_joint_velocity_limits`` (the default) a driven DOF (positive
``joint_target_ke`` or ``joint_target_kd``) takes no row pair: it gets one ``ROW_CLAMP`` entry
instead, and at the end of every iteration, after the drive and contact rows, the sweep applies the
impulse along the DOF that puts its velocity on ``[-v, v]``, through the articulation's mass matrix
(``sweep/pgs.py``), so the DOFs coupled to it move as well (measured on the reference: a two-link chain
with the driven DOF at 5 rad/s and limit 2 ends one iteration at (2, 4) from (5, 1), not (2, 1); ours too:
``test_the_fused_clamp_is_an_impulse_through_the_articulation``).
Undriven limited DOFs keep their rows.

Before anything else reads the step's input velocity, :func:`prescale_velocity_limits` rescales each
articulation whose limited DOFs already exceed a limit: every PRISMATIC, REVOLUTE and D6 DOF of the
articulation (prescribed DOFs, and driven DOFs while the clamp is fused, excepted) is multiplied by
the one ratio ``min(v / |qd|)`` over its DOFs with a positive limit, so the motion keeps its
direction in joint space. The rescaled velocity replaces the input for the kinematics, dynamics,
prediction and ``body_parent_f`` (whose accelerations start from it, so the prescale transmits no
parent wrench); ``state_in.joint_qd`` and ``state_in.body_qd`` are left as given (the rescaled twists go to
the solver's ``body_qd_in``) and the row gate above still samples the input. A limit ``<= 0`` (or NaN) limits nothing, here and for the rows. The rows are built in the joint-row
launch of :mod:`.joint_rows`.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ....articulation.kinematics import JOINT_D6, JOINT_PRISMATIC, JOINT_REVOLUTE
from ..data import FAMILY_ARTICULATED, ROW_CLAMP, ROW_SPEED_LIMIT, RowBuffers
from ..rows.common import JointRowModel, reserve_rows, write_dof_row
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.func(inline=True)
def velocity_limit_rows_of_joint(
    m: JointRowModel,
    rows: RowBuffers,
    j: int,
    owner: wp.vec3i,
    fraction: float,
    fused: int,
    joint_velocity_limit: wp.array[float],
    joint_target_ke: wp.array[float],
    joint_target_kd: wp.array[float],
    joint_qd: wp.array[float],
):
    """The velocity-limit rows (or fused clamps) of joint ``j`` (``owner`` from :func:`~..rows.common.joint_row_owner`)."""
    art = owner[0]
    jtype = m.joint_type[j]
    if art < 0 or (jtype != JOINT_PRISMATIC and jtype != JOINT_REVOLUTE and jtype != JOINT_D6):
        return
    for dof in range(m.joint_qd_start[j], m.joint_qd_start[j + 1]):
        limit = joint_velocity_limit[dof]
        if m.dof_is_kinematic[dof] != 0 or not wp.isfinite(limit) or not (limit > 0.0):
            continue
        if not (wp.abs(joint_qd[dof]) >= fraction * limit):
            continue
        if fused != 0 and (joint_target_ke[dof] > 0.0 or joint_target_kd[dof] > 0.0):
            r = reserve_rows(rows, owner[1], FAMILY_ARTICULATED, 1, owner[2])
            if r >= 0:
                # A clamp entry: after each iteration the sweep applies the impulse that puts qd into
                # [-limit, limit] through the articulation's response, like the reference.
                write_dof_row(rows, r, m.art_dof_start[art], m.art_dof_count[art], m.art_mass_start[art], dof, 1.0,
                              ROW_CLAMP, 0.0, 0.0, limit, 0.0)
            continue
        r = reserve_rows(rows, owner[1], FAMILY_ARTICULATED, 2, owner[2])
        if r < 0:
            continue
        for side in range(2):
            sign = 1.0 - 2.0 * float(side)  # qd >= -limit, then -qd >= -limit
            write_dof_row(rows, r + side, m.art_dof_start[art], m.art_dof_count[art], m.art_mass_start[art], dof,
                          sign, ROW_SPEED_LIMIT, -limit, -limit, 0.0, 0.0)


def velocity_limits_fused(options) -> bool:
    """Driven DOFs take the end-of-iteration clamp instead of rows (``fuse_joint_velocity_limits``)."""
    return (options.enable_joint_velocity_limits and options.drive_mode == "rows"
            and options.fuse_joint_velocity_limits and options.velocity_limit_activation_fraction != float("inf"))



@wp.func
def _prescaled_dof(jtype: int, dof: int, fused: int, dof_is_kinematic: wp.array[wp.int32],
                   joint_target_ke: wp.array[float], joint_target_kd: wp.array[float]) -> bool:
    """Whether ``dof`` takes part in its articulation's prescale (measured on the reference: BALL and FREE DOFs,
    prescribed DOFs and, with the fused clamp, driven DOFs neither set the ratio nor are rescaled)."""
    if jtype != JOINT_PRISMATIC and jtype != JOINT_REVOLUTE and jtype != JOINT_D6:
        return False
    if dof_is_kinematic[dof] != 0:
        return False
    return not (fused != 0 and (joint_target_ke[dof] > 0.0 or joint_target_kd[dof] > 0.0))


@wp.kernel
def _prescale(
    fused: int,
    articulation_count: int,
    # Plan and solver tables:
    tree_start: wp.array[wp.int32],
    tree_joint: wp.array[wp.int32],
    loose_dof: wp.array[wp.int32],
    dof_is_kinematic: wp.array[wp.int32],
    # Model:
    joint_type: wp.array[int],
    joint_qd_start: wp.array[int],
    joint_velocity_limit: wp.array[float],
    joint_target_ke: wp.array[float],
    joint_target_kd: wp.array[float],
    # Data in:
    joint_qd: wp.array[float],
    # Data out:
    qd_out: wp.array[float],
):
    tid = wp.tid()  # one thread per articulation, then one per DOF outside every articulation tree
    if tid >= articulation_count:
        d = loose_dof[tid - articulation_count]
        qd_out[d] = joint_qd[d]
        return
    ratio = float(1.0)
    for t in range(tree_start[tid], tree_start[tid + 1]):
        j = tree_joint[t]
        jtype = joint_type[j]
        for d in range(joint_qd_start[j], joint_qd_start[j + 1]):
            limit = joint_velocity_limit[d]
            speed = wp.abs(joint_qd[d])
            # limit > 0 and speed > limit are False for NaN, and speed > inf never holds.
            if limit > 0.0 and speed > limit and _prescaled_dof(jtype, d, fused, dof_is_kinematic, joint_target_ke,
                                                                joint_target_kd):
                ratio = wp.min(ratio, limit / speed)
    for t in range(tree_start[tid], tree_start[tid + 1]):
        j = tree_joint[t]
        jtype = joint_type[j]
        for d in range(joint_qd_start[j], joint_qd_start[j + 1]):
            v = joint_qd[d]
            if ratio < 1.0 and _prescaled_dof(jtype, d, fused, dof_is_kinematic, joint_target_ke, joint_target_kd):
                v = v * ratio
            qd_out[d] = v


class VelocityLimitPrescale:
    """The prescale's output array and its table of DOFs outside every articulation tree (copied through)."""

    def __init__(self, model, plan):
        dev = model.device
        self.qd = wp.zeros(max(model.joint_dof_count, 1), dtype=float, device=dev)
        in_tree = np.zeros(max(model.joint_dof_count, 1), dtype=bool)
        if model.joint_count:
            qd_start = model.joint_qd_start.numpy()
            for j in plan.tree_joint_np:
                in_tree[qd_start[j]:qd_start[j + 1]] = True
        loose = np.nonzero(~in_tree[: model.joint_dof_count])[0].astype(np.int32)
        self.loose_count = len(loose)
        self.loose_dof = wp.array(loose if len(loose) else np.zeros(1, np.int32), dtype=wp.int32, device=dev)


def prescale_velocity_limits(sm, sd, joint_qd: wp.array) -> wp.array:
    """``sd.prescale.qd``: ``joint_qd`` with each articulation rescaled into its velocity limits; returns it."""
    model, plan, prescale = sm.model, sm.core.plan, sd.prescale
    dim = plan.articulation_count + prescale.loose_count
    if dim:
        launch(
            _prescale,
            dim=dim,
            inputs=[
                int(velocity_limits_fused(sm.options)),
                plan.articulation_count,
                plan.tree_start,
                plan.tree_joint,
                prescale.loose_dof,
                sm.tables.dof_is_kinematic,
                model.joint_type,
                model.joint_qd_start,
                model.joint_velocity_limit,
                model.joint_target_ke,
                model.joint_target_kd,
                joint_qd,
            ],
            outputs=[prescale.qd],
            device=model.device,
        )
    return prescale.qd


def input_velocity(sm, sd, state_in, *, prescale: bool = False) -> wp.array:
    """The step's pre-dynamics joint velocity [m/s or rad/s]: ``state_in.joint_qd``, or with joint velocity limits
    its rescaled copy ``sd.prescale.qd`` (``prescale=True`` computes it first)."""
    if sd.prescale is None:
        return state_in.joint_qd
    return prescale_velocity_limits(sm, sd, state_in.joint_qd) if prescale else sd.prescale.qd
