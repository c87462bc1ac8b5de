"""Joint-limit rows: one unilateral row per active finite bound of PRISMATIC, REVOLUTE and D6 DOFs.

With ``enable_joint_limits``, a DOF ``k`` with a finite ``joint_limit_lower`` gets the row
``qd_k >= target`` and a finite ``joint_limit_upper`` the row ``-qd_k >= target`` (lower before
upper, in DOF order), each only while ``q`` is within ``joint_limit_activation_gap`` of the bound.
With ``phi`` the distance to the bound (negative when violated) the target follows the contact law
of :mod:`.contacts`: ``-phi/dt`` while the bound is not reached (the DOF may arrive at it within the
step, no further) and ``-baumgarte phi / dt`` once it is crossed. The impulse is a joint-space
torque or force impulse ``>= 0`` [N·m·s or N·s]. Prescribed (kinematic) DOFs get no rows.
"""

from __future__ import annotations

import warp as wp

from ....articulation.kinematics import JOINT_D6, JOINT_PRISMATIC, JOINT_REVOLUTE
from ..data import FAMILY_ARTICULATED, ROW_LIMIT
from .common import reserve_rows


@wp.kernel
def _limit_rows(
    # Options:
    dt: float,
    baumgarte: float,
    activation_gap: float,
    articulation_capacity: int,
    free_body_capacity: int,
    stride: int,
    # Model:
    joint_type: wp.array[int],
    joint_articulation: wp.array[int],
    joint_q_start: wp.array[int],
    joint_qd_start: wp.array[int],
    joint_limit_lower: wp.array[float],
    joint_limit_upper: wp.array[float],
    # Plan and solver tables:
    art_dof_start: wp.array[int],
    art_dof_count: wp.array[int],
    art_mass_start: wp.array[int],
    art_row_world: wp.array[wp.int32],
    dof_is_kinematic: wp.array[wp.int32],
    # Data in:
    joint_q: wp.array[float],
    # Data out:
    world_row_count: wp.array2d[wp.int32],
    world_rows_dropped: wp.array2d[wp.int32],
    constraint_overflow: wp.array[wp.bool],
    row_kind: wp.array[wp.int32],
    row_dof_start: wp.array2d[wp.int32],
    row_dof_count: wp.array2d[wp.int32],
    row_mass_start: wp.array2d[wp.int32],
    row_J: wp.array[float],
    row_inv_mass: wp.array[float],
    row_target: wp.array[float],
    row_impulse: wp.array[float],
    row_contact: wp.array[wp.int32],
    row_key: wp.array[float],
    row_body: wp.array2d[wp.int32],
):
    j = wp.tid()  # one thread per joint
    art = joint_articulation[j]
    if art < 0:
        return
    jtype = joint_type[j]
    if jtype != JOINT_PRISMATIC and jtype != JOINT_REVOLUTE and jtype != JOINT_D6:
        return
    world = art_row_world[art]
    d0 = art_dof_start[art]
    n = art_dof_count[art]
    q0 = joint_q_start[j]
    dof0 = joint_qd_start[j]
    for k in range(joint_qd_start[j + 1] - dof0):
        dof = dof0 + k
        if dof_is_kinematic[dof] != 0:
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
            r = reserve_rows(world, FAMILY_ARTICULATED, 1, articulation_capacity, free_body_capacity,
                             world_row_count, world_rows_dropped, constraint_overflow)
            if r < 0:
                continue
            offset = r * 2 * stride
            for i in range(n):
                row_J[offset + i] = 0.0
            row_J[offset + dof - d0] = sign
            row_dof_start[r, 0] = d0
            row_dof_count[r, 0] = n
            row_mass_start[r, 0] = art_mass_start[art]
            row_dof_count[r, 1] = 0
            target = float(0.0)
            if phi > 0.0:
                target = -phi / dt
            else:
                target = -baumgarte * phi / dt
            row_kind[r] = ROW_LIMIT
            row_inv_mass[r] = -1.0  # response formed lazily by the sweep
            row_target[r] = target
            row_impulse[r] = 0.0
            row_contact[r] = -1
            row_key[r] = 1.0e30  # internal rows first, before the contacts
            row_body[r, 0] = -1  # a limit row is never grouped with others
            row_body[r, 1] = -1


def build_limit_rows(solver, joint_q, dt: float) -> None:
    """Launch :func:`_limit_rows` over every joint."""
    opts, core, rows, model = solver.options, solver.core, solver.rows, solver.model
    wp.launch(
        _limit_rows,
        dim=model.joint_count,
        inputs=[
            float(dt),
            float(opts.baumgarte),
            float(min(opts.joint_limit_activation_gap, 1.0e30)),
            rows.articulation_capacity,
            rows.free_body_capacity,
            rows.stride,
            model.joint_type,
            model.joint_articulation,
            model.joint_q_start,
            model.joint_qd_start,
            model.joint_limit_lower,
            model.joint_limit_upper,
            core.plan.dof_start,
            core.plan.dof_count_per_articulation,
            core.plan.mass_start,
            solver.tables.articulation_row_world,
            solver.tables.dof_is_kinematic,
            joint_q,
        ],
        outputs=[
            rows.world_row_count,
            rows.world_rows_dropped,
            rows.constraint_overflow,
            rows.row_kind,
            rows.row_dof_start,
            rows.row_dof_count,
            rows.row_mass_start,
            rows.row_J,
            rows.row_inv_mass,
            rows.row_target,
            rows.row_impulse,
            rows.row_contact,
            rows.row_key,
            rows.row_body,
        ],
        device=model.device,
    )
