"""The rigid AVBD stage of a SolverVBD step: predict, iterate (colours, then duals), finish.

Owns the order only; the energies live in :mod:`.joints` and the per-body Newton step in
:mod:`.bodies`. Launches per step: 3 + iterations x (colours + 1).
"""

from __future__ import annotations

from .bodies import finish_bodies, predict_bodies, solve_body_colour
from .joints import begin_joints, update_duals


def step_rigid(model, state_in, state_out, control, work, iterations: int, dt: float) -> None:
    """Advance the dynamic bodies by one implicit-Euler step of ``dt`` [s] with ``iterations`` AVBD sweeps.

    Drive targets come from ``control.joint_target_q`` / ``joint_target_qd`` (the model's defaults when
    ``control`` is None or lacks them). Static and kinematic bodies keep ``state_in``'s pose and velocity.
    """
    bd, jd, params, dev = work.bodies, work.joints, work.params, model.device
    target_q = getattr(control, "joint_target_q", None) if control is not None else None
    target_qd = getattr(control, "joint_target_qd", None) if control is not None else None
    if target_q is None:
        target_q = model.joint_target_q if model.joint_target_q is not None else work.empty_targets
    if target_qd is None:
        target_qd = model.joint_target_qd if model.joint_target_qd is not None else work.empty_targets
    begin_joints(jd, state_in.body_q, bd.com, work.joint_count, params, dev)
    predict_bodies(model, bd, state_in, state_out, dt, work.adaptive_init)
    for _ in range(iterations):
        for group in work.groups:
            solve_body_colour(model, bd, jd, target_q, target_qd, group, dt, state_out.body_q)
        update_duals(jd, state_out.body_q, bd.com, work.joint_count, params, dev)
    finish_bodies(model, bd, state_in, state_out, dt)
