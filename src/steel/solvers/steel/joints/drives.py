"""Drive rows (``drive_mode="rows"``): one soft, effort-bounded row per driven DOF.

A PRISMATIC, REVOLUTE or D6 DOF with a positive ``joint_target_ke`` or ``joint_target_kd`` is driven by
the PD law evaluated at the end of the step (the PhysX articulation force drive),

    f = ke (q_t - q - dt qd') + kd (qd_t - qd'),

whose impulse ``lambda = dt f`` rearranges into the soft row

    qd' = target - s lambda,   target = (ke (q_t - q) + kd qd_t) / (dt ke + kd),   s = 1 / (dt (dt ke + kd))

(``ROW_DRIVE``: a boxed row with ``compliance`` ``s`` [1/kg or 1/(kg·m²)], the implicit spring-damper of
Catto, "Soft Constraints", GDC 2011). The sweep clamps the accumulated impulse to
``|lambda| <= joint_effort_limit dt``, which bounds the complete drive reaction, implicit part
included; ``drive_mode="augmented"`` (``predict.py``) clamps only the explicit force and lets the
implicit stiffness exceed the limit under a large load. Below the limit and without other rows the
converged row equals the augmented drive. The drive then leaves the free dynamics
(``predict.py`` skips ``ke`` and ``kd``; passive springs and ``joint_damping`` stay implicit), so
``steel:joint_friction_load_coefficient`` does not count it.

The rows are reserved before every other row of the step, so they are the last to be dropped; a
drive whose row does not fit is not applied and its world is flagged. Gains, targets and effort
limits are read every step. In velocity sweeps (``velocity_iterations``) a drive row keeps the
position solve's impulse under ``velocity_drive_mode="freeze"`` (``ROW_FROZEN``) or keeps being
solved toward the same target under ``"active"``.
"""

from __future__ import annotations

import warp as wp

from ....articulation.kinematics import JOINT_D6, JOINT_PRISMATIC, JOINT_REVOLUTE
from ..data import FAMILY_ARTICULATED, ROW_DRIVE, RowBuffers
from ..rows.common import JointRowModel, joint_row_model, joint_row_owner, reserve_rows, write_dof_row
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.kernel
def _drive_rows(
    dt: float,
    # Model:
    m: JointRowModel,
    joint_target_q_start: wp.array[int],
    joint_target_ke: wp.array[float],
    joint_target_kd: wp.array[float],
    joint_effort_limit: wp.array[float],
    # Data in:
    joint_q: wp.array[float],
    control_target_q: wp.array[float],
    control_target_qd: wp.array[float],
    # Data out (reserved rows and their accounting):
    rows: RowBuffers,
):
    j = wp.tid()  # one thread per joint
    owner = joint_row_owner(m, rows, j)
    art = owner[0]  # -2: a sleeping island's rows are skipped (sleeping/stages.py)
    jtype = m.joint_type[j]
    if art < 0 or (jtype != JOINT_PRISMATIC and jtype != JOINT_REVOLUTE and jtype != JOINT_D6):
        return
    d0 = m.joint_qd_start[j]
    for k in range(m.joint_qd_start[j + 1] - d0):
        dof = d0 + k
        ke = joint_target_ke[dof]
        kd = joint_target_kd[dof]
        if m.dof_is_kinematic[dof] != 0 or not (ke > 0.0 or kd > 0.0):
            continue
        r = reserve_rows(rows, owner[1], FAMILY_ARTICULATED, 1, owner[2])
        if r < 0:
            continue  # not applied; the world is flagged
        q_t = float(0.0)
        qd_t = float(0.0)
        if control_target_q:
            q_t = control_target_q[joint_target_q_start[j] + k]
        if control_target_qd:
            qd_t = control_target_qd[dof]
        gain = dt * ke + kd  # [N·s/m or N·m·s/rad]
        target = (ke * (q_t - joint_q[m.joint_q_start[j] + k]) + kd * qd_t) / gain
        bound = wp.max(joint_effort_limit[dof], 0.0) * dt
        write_dof_row(rows, r, m.art_dof_start[art], m.art_dof_count[art], m.art_mass_start[art], dof, 1.0, ROW_DRIVE,
                      target, target, bound, 1.0 / (dt * gain))


def build_drive_rows(sm, sd, joint_q, control, dt: float) -> None:
    """Launch :func:`_drive_rows` over every joint (``drive_mode="rows"`` only)."""
    model = sm.model
    if not model.joint_count:
        return
    launch(
        _drive_rows,
        dim=model.joint_count,
        inputs=[
            float(dt),
            joint_row_model(sm),
            model.joint_target_q_start,
            model.joint_target_ke,
            model.joint_target_kd,
            model.joint_effort_limit,
            joint_q,
            control.joint_target_q,
            control.joint_target_qd,
        ],
        outputs=[sd.rows.buffers],
        device=model.device,
    )
