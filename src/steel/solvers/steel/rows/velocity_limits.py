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
limit; the rows alone bring such a DOF back to its limit within the step. The rows are built in the
joint-row launch of :mod:`.joint_rows`.
"""

from __future__ import annotations

import warp as wp

from ....articulation.kinematics import JOINT_D6, JOINT_PRISMATIC, JOINT_REVOLUTE
from ..data import FAMILY_ARTICULATED, ROW_CLAMP, ROW_LIMIT, RowBuffers
from .common import JointRowModel, reserve_rows, write_dof_row

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
    """The velocity-limit rows (or fused clamps) of joint ``j`` (``owner`` from :func:`~.common.joint_row_owner`)."""
    art = owner[0]
    jtype = m.joint_type[j]
    if art < 0 or (jtype != JOINT_PRISMATIC and jtype != JOINT_REVOLUTE and jtype != JOINT_D6):
        return
    for dof in range(m.joint_qd_start[j], m.joint_qd_start[j + 1]):
        limit = joint_velocity_limit[dof]
        if m.dof_is_kinematic[dof] != 0 or not wp.isfinite(limit) or limit < 0.0:
            continue
        if not (wp.abs(joint_qd[dof]) >= fraction * limit):
            continue
        if fused != 0 and (joint_target_ke[dof] > 0.0 or joint_target_kd[dof] > 0.0):
            r = reserve_rows(rows, owner[1], FAMILY_ARTICULATED, 1, owner[2])
            if r >= 0:
                # A clamp entry on the DOF alone: the sweep sets qd into [-limit, limit] after each iteration.
                write_dof_row(rows, r, dof, 1, m.art_mass_start[art], dof, 1.0, ROW_CLAMP, 0.0, 0.0, limit, 0.0)
            continue
        r = reserve_rows(rows, owner[1], FAMILY_ARTICULATED, 2, owner[2])
        if r < 0:
            continue
        for side in range(2):
            sign = 1.0 - 2.0 * float(side)  # qd >= -limit, then -qd >= -limit
            write_dof_row(rows, r + side, m.art_dof_start[art], m.art_dof_count[art], m.art_mass_start[art], dof,
                          sign, ROW_LIMIT, -limit, -limit, 0.0, 0.0)


def velocity_limits_fused(options) -> bool:
    """Driven DOFs take the end-of-iteration clamp instead of rows (``fuse_joint_velocity_limits``)."""
    return (options.enable_joint_velocity_limits and options.drive_mode == "rows"
            and options.fuse_joint_velocity_limits and options.velocity_limit_activation_fraction != float("inf"))

