"""Joint velocity limits (``enable_joint_velocity_limits``): a unilateral row pair per limited DOF.

A PRISMATIC, REVOLUTE or D6 DOF with a finite ``Model.joint_velocity_limit`` ``v`` [m/s or rad/s]
gets the rows ``qd >= -v`` and ``-qd >= -v`` (``ROW_LIMIT``: impulses ``>= 0``, no position bias, the
same target in the velocity sweeps), solved with the articulated response like a joint limit one
derivative down, so the limit holds against any effort or impact the other rows leave. Rows are
created only while ``|qd| >= velocity_limit_activation_fraction * v`` on the step's input velocity
(``inf``: never), so a DOF that crosses the threshold inside a step is clamped one step later.

With ``drive_mode="rows"`` and ``fuse_joint_velocity_limits`` (the default) a driven DOF (positive
``joint_target_ke`` or ``joint_target_kd``) takes no row pair: it gets one ``ROW_CLAMP`` entry
instead, and the sweep clamps the DOF's velocity to ``[-v, v]`` at the end of every iteration, after
the drive and contact rows (``pgs.py``). Undriven limited DOFs keep their rows.

Not built: the reference's pre-solve rescaling of articulation velocities that already exceed a
limit; the rows alone bring such a DOF back to its limit within the step.
"""

from __future__ import annotations

import warp as wp

from ....articulation.kinematics import JOINT_D6, JOINT_PRISMATIC, JOINT_REVOLUTE
from ..data import FAMILY_ARTICULATED, ROW_CLAMP, ROW_LIMIT, RowBuffers
from .common import reserve_rows, write_dof_row

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.kernel
def _velocity_limit_rows(
    # Options:
    fraction: float,
    fused: int,
    # Model:
    joint_type: wp.array[int],
    joint_articulation: wp.array[int],
    joint_qd_start: wp.array[int],
    joint_velocity_limit: wp.array[float],
    joint_target_ke: wp.array[float],
    joint_target_kd: wp.array[float],
    # Plan and solver tables:
    art_dof_start: wp.array[int],
    art_dof_count: wp.array[int],
    art_mass_start: wp.array[int],
    art_row_world: wp.array[wp.int32],
    art_is_global: wp.array[wp.int32],
    dof_is_kinematic: wp.array[wp.int32],
    articulation_skip: wp.array[wp.int32],
    # Data in:
    joint_qd: wp.array[float],
    # Data out (reserved rows and their accounting):
    rows: RowBuffers,
):
    j = wp.tid()  # one thread per joint
    art = joint_articulation[j]
    if art < 0 or articulation_skip[art] != 0:  # a sleeping island's rows are skipped (sleeping.py)
        return
    jtype = joint_type[j]
    if jtype != JOINT_PRISMATIC and jtype != JOINT_REVOLUTE and jtype != JOINT_D6:
        return
    world = art_row_world[art]
    global_entry = int(-1)
    if art_is_global[art] != 0:
        global_entry = rows.constraint_overflow.shape[0] - 1
    for dof in range(joint_qd_start[j], joint_qd_start[j + 1]):
        limit = joint_velocity_limit[dof]
        if dof_is_kinematic[dof] != 0 or not wp.isfinite(limit) or limit < 0.0:
            continue
        if not (wp.abs(joint_qd[dof]) >= fraction * limit):
            continue
        if fused != 0 and (joint_target_ke[dof] > 0.0 or joint_target_kd[dof] > 0.0):
            r = reserve_rows(rows, world, FAMILY_ARTICULATED, 1, global_entry)
            if r >= 0:
                # A clamp entry on the DOF alone: the sweep sets qd into [-limit, limit] after each iteration.
                write_dof_row(rows, r, dof, 1, art_mass_start[art], dof, 1.0, ROW_CLAMP, 0.0, 0.0, limit, 0.0)
            continue
        r = reserve_rows(rows, world, FAMILY_ARTICULATED, 2, global_entry)
        if r < 0:
            continue
        for side in range(2):
            sign = 1.0 - 2.0 * float(side)  # qd >= -limit, then -qd >= -limit
            write_dof_row(rows, r + side, art_dof_start[art], art_dof_count[art], art_mass_start[art], dof, sign,
                          ROW_LIMIT, -limit, -limit, 0.0, 0.0)


def velocity_limits_fused(options) -> bool:
    """Driven DOFs take the end-of-iteration clamp instead of rows (``fuse_joint_velocity_limits``)."""
    return (options.enable_joint_velocity_limits and options.drive_mode == "rows"
            and options.fuse_joint_velocity_limits and options.velocity_limit_activation_fraction != float("inf"))


def build_velocity_limit_rows(solver, joint_qd, dt: float) -> None:
    """Launch :func:`_velocity_limit_rows` over every joint (``fraction = inf`` creates none: no launch)."""
    del dt
    opts, core, model = solver.options, solver.core, solver.model
    if opts.velocity_limit_activation_fraction == float("inf") or not model.joint_count:
        return
    wp.launch(
        _velocity_limit_rows,
        dim=model.joint_count,
        inputs=[
            float(opts.velocity_limit_activation_fraction),
            int(velocity_limits_fused(opts)),
            model.joint_type,
            model.joint_articulation,
            model.joint_qd_start,
            model.joint_velocity_limit,
            model.joint_target_ke,
            model.joint_target_kd,
            core.plan.dof_start,
            core.plan.dof_count_per_articulation,
            core.plan.mass_start,
            solver.tables.articulation_row_world,
            solver.tables.articulation_is_global,
            solver.tables.dof_is_kinematic,
            core.plan.joints.articulation_skip,
            joint_qd,
        ],
        outputs=[solver.rows.buffers],
        device=model.device,
    )
