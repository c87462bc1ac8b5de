"""Joint-limit rows: one unilateral row per active finite bound of PRISMATIC, REVOLUTE and D6 DOFs.

With ``enable_joint_limits``, a DOF ``k`` with a finite ``joint_limit_lower`` gets the row
``qd_k >= target`` and a finite ``joint_limit_upper`` the row ``-qd_k >= target`` (lower before
upper, in DOF order), each only while ``q`` is within ``joint_limit_activation_gap`` of the bound.
With ``phi`` the distance to the bound (negative when violated) the target follows the contact law
of :mod:`..contacts.rows`: ``-phi/dt`` while the bound is not reached (the DOF may arrive at it within the
step, no further) and ``-baumgarte phi / dt`` once it is crossed. The impulse is a joint-space
torque or force impulse ``>= 0`` [N·m·s or N·s]. Prescribed (kinematic) DOFs get no rows. The rows are
built in the joint-row launch of :mod:`.joint_rows`.
"""

from __future__ import annotations

import warp as wp

from ....articulation.kinematics import JOINT_D6, JOINT_PRISMATIC, JOINT_REVOLUTE
from ..data import FAMILY_ARTICULATED, GAP_OPEN_FRACTION, ROW_LIMIT, RowBuffers
from ..rows.common import JointRowModel, reserve_rows, write_dof_row

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.func(inline=True)
def limit_rows_of_joint(
    m: JointRowModel,
    rows: RowBuffers,
    j: int,
    owner: wp.vec3i,
    dt: float,
    baumgarte: float,
    activation_gap: float,
    joint_limit_lower: wp.array[float],
    joint_limit_upper: wp.array[float],
    joint_q: wp.array[float],
):
    """The limit rows of joint ``j`` (``owner`` from :func:`~..rows.common.joint_row_owner`), lower before upper."""
    art = owner[0]
    jtype = m.joint_type[j]
    if art < 0 or (jtype != JOINT_PRISMATIC and jtype != JOINT_REVOLUTE and jtype != JOINT_D6):
        return
    q0 = m.joint_q_start[j]
    dof0 = m.joint_qd_start[j]
    for k in range(m.joint_qd_start[j + 1] - dof0):
        dof = dof0 + k
        if m.dof_is_kinematic[dof] != 0:
            continue
        q = joint_q[q0 + k]
        for side in range(2):
            bound = joint_limit_lower[dof]
            sign = float(1.0)
            if side == 1:
                bound = joint_limit_upper[dof]
                sign = -1.0
            if not wp.isfinite(bound):
                continue
            phi = sign * (q - bound)  # distance to the bound, negative when crossed
            if phi > activation_gap:
                continue
            r = reserve_rows(rows, owner[1], FAMILY_ARTICULATED, 1, owner[2])
            if r < 0:
                continue
            target = -baumgarte * phi / dt
            velocity_target = float(0.0)  # velocity-only sweeps: no position bias
            if phi > 0.0:
                target = -phi / dt
                velocity_target = target
            write_dof_row(rows, r, m.art_dof_start[art], m.art_dof_count[art], m.art_mass_start[art], dof, sign,
                          ROW_LIMIT, target, velocity_target, 0.0, 0.0)
            if phi > 0.0:
                rows.gap_speed[r] = -(1.0 - GAP_OPEN_FRACTION) * phi / dt
