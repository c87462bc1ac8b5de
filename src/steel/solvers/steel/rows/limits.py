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
from ..data import FAMILY_ARTICULATED, GAP_OPEN_FRACTION, ROW_LIMIT, RowBuffers
from .common import reserve_rows, write_dof_row

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.kernel
def _limit_rows(
    # Options:
    dt: float,
    baumgarte: float,
    activation_gap: float,
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
    art_is_global: wp.array[wp.int32],
    dof_is_kinematic: wp.array[wp.int32],
    articulation_skip: wp.array[wp.int32],
    # Data in:
    joint_q: wp.array[float],
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
            r = reserve_rows(rows, world, FAMILY_ARTICULATED, 1, global_entry)
            if r < 0:
                continue
            target = -baumgarte * phi / dt
            velocity_target = float(0.0)  # velocity-only sweeps: no position bias
            if phi > 0.0:
                target = -phi / dt
                velocity_target = target
            write_dof_row(rows, r, d0, n, art_mass_start[art], dof, sign, ROW_LIMIT, target, velocity_target, 0.0,
                          0.0)
            if phi > 0.0:
                rows.gap_speed[r] = -(1.0 - GAP_OPEN_FRACTION) * phi / dt


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
            solver.tables.articulation_is_global,
            solver.tables.dof_is_kinematic,
            core.plan.joints.articulation_skip,
            joint_q,
        ],
        outputs=[rows.buffers],
        device=model.device,
    )
