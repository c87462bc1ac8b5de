"""The rigid AVBD stage of a SolverVBD step: predict, iterate (colours, then duals), finish.

Owns the order only; the energies live in :mod:`.joints` and :mod:`.contacts` and the per-body
Newton step in :mod:`.bodies`. Launches per step: 3 + iterations x (colours + 1) (+ 1 with cables; with joint
mimics (:mod:`.mimic`) 1 + iterations more; with tendons (:mod:`.tendons`) 2 + iterations more), plus with
body–body contacts 3 (filing; history; damper flags) + iterations (contact duals) + 1 (history snapshot)
+ 2 (deadzone support and snap, on by default: :mod:`.deadzone`). Compliant ALM (:mod:`.compliant`) adds 1
(joint conditioning) + 2 with contacts (the bodies' blocks, the rows), and has no deadzone snap. Rigid–soft DAT
(:mod:`..dat`) adds 2 after predict and 2 per iteration (the truncation of the poses).
"""

from __future__ import annotations

from .bodies import finish_bodies, predict_bodies, solve_body_colour
from .joints import begin_joints, finish_cables, update_duals


def step_rigid(model, state_in, state_out, control, work, iterations: int, dt: float, contacts=None,
               particle_contacts=None, before_sweep=None, after_sweep=None) -> None:
    """Advance the dynamic bodies by one implicit-Euler step of ``dt`` [s] with ``iterations`` AVBD sweeps.

    Drive targets and DOF forces come from ``control.joint_target_q`` / ``joint_target_qd`` /
    ``joint_f`` (the model's arrays when ``control`` is None or lacks one). Static and kinematic bodies
    keep ``state_in``'s pose and velocity. ``contacts`` (a ``newton.Contacts`` or None) supplies
    body–body contacts when the model has them (``work.contacts``). Two-way coupling
    (:mod:`..coupling`): ``particle_contacts`` are the particle contacts on coupled bodies, and
    ``before_sweep(iteration)`` runs the particle sweep of each iteration before the body colours.
    ``after_sweep(body_q)`` (rigid–soft DAT, :mod:`..dat`) truncates the first iterate and every iteration's poses.
    """
    bd, jd, params, dev = work.bodies, work.joints, work.params, model.device
    controls = tuple(_control_array(model, control, name, work.empty_targets)
                     for name in ("joint_target_q", "joint_target_qd", "joint_f"))
    rc = work.contacts if contacts is not None else None
    cd = work.no_contacts
    if rc is not None:
        rc.begin(contacts, state_in.body_q)
        cd = rc.data
    # Tendon runs (.tendons): rest lengths from state_in, conditioning, λ kept by gamma (before the contacts' ρ).
    work.tendons.begin(bd, state_in, dt, params.gamma)
    if work.compliant is not None:  # compliant ALM: this step's k_eff and w per row (.compliant)
        work.compliant.condition_joints(jd, work.joint_count, dt)
        if rc is not None:
            work.compliant.condition_contacts(rc, bd, jd, work.mimics.data, work.tendons.data, controls,
                                              state_in.body_q, dt)
    begin_joints(jd, state_in.body_q, bd, work.joint_count, params, dev)  # before predict_bodies
    work.mimics.begin(params.alpha * params.gamma)
    predict_bodies(model, bd, state_in, state_out, dt, work.adaptive_init)
    if after_sweep is not None:
        after_sweep(state_out.body_q)
    if rc is not None:
        rc.mark_damped(state_out.body_q)
    pc = work.no_particle_contacts if particle_contacts is None else particle_contacts
    for iteration in range(iterations):
        if before_sweep is not None:
            before_sweep(iteration)
        for group in work.groups:
            solve_body_colour(model, bd, jd, work.mimics.data, work.tendons.data, cd, pc, controls, group, dt,
                              state_out.body_q)
        if after_sweep is not None:  # once after all colours (per colour would cost 3 launches each)
            after_sweep(state_out.body_q)
        update_duals(jd, state_out.body_q, bd.com, controls, dt, work.joint_count, params, dev)
        work.mimics.update_duals(jd, state_out.body_q, bd.com)
        work.tendons.update_duals(state_out.body_q, bd.com)
        if rc is not None:
            rc.update_duals(state_out.body_q, bd, dt)
    if work.has_cables:
        finish_cables(jd, state_out.body_q, bd.com, work.joint_count, dev)
    finish_bodies(model, bd, state_in, state_out, dt)
    work.tendons.publish(state_out)
    if rc is not None:
        rc.end(bd, state_in.body_q, state_out.body_q, state_out.body_qd)


def _control_array(model, control, name: str, empty):
    """``control.<name>``, else ``model.<name>``, else a zero placeholder (models without DOFs)."""
    arr = getattr(control, name, None) if control is not None else None
    if arr is None:
        arr = getattr(model, name, None)
    return arr if arr is not None and arr.shape[0] > 0 else empty
