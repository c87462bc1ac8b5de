"""SolverVBD with a solver-owned ``newton.CollisionPipeline`` (the later revision's execution mode).

Newton 1.8.0's examples may hand the solver its own pipeline (``collision_pipeline=``) and then call
``step(..., contacts=None)``; the solver detects into its own buffer, ``solver.contacts``.
:class:`newton.solvers.SolverBase` keeps the pipeline, the buffer and the per-slot schedule
(``collision_frequency[_type]``, ``set_collision_frequency``); this module runs the schedule of the
``RIGID`` slot, which is where particle–shape (soft) contacts come from:

* ``AUTO`` (= ``PRE_INIT`` with an owned pipeline) and ``PRE_INIT``: detect on ``state_in`` before
  the step, as a user's collide-then-step loop does;
* ``PRE_POST_INIT``: also detect again on the step's first iterate, the particles at the initial
  guess and the colliders at their input pose;
* ``NONE``: no detection; the user may fill ``solver.contacts`` (``pipeline.collide(state,
  solver.contacts)``);
* ``ITERATIONS``: detection between VBD iterations is not built: ``NotImplementedError``.

The ``SOFT_SELF_CONTACT`` slot is the seed's ``particle_collision_detection_interval`` and is mapped
onto it by :mod:`.options`; self-contact detection is the solver's own (BVH), not the pipeline's.
"""

from __future__ import annotations

import newton
from newton.solvers import SolverBase

from .options import soft_self_contact_interval

Slot = SolverBase.CollisionSlot
Frequency = SolverBase.CollisionFrequencyType


def check_pipeline(pipeline) -> None:
    """Refuse a ``collision_pipeline`` value that is not a ``newton.CollisionPipeline`` (TypeError)."""
    if pipeline is not None and not isinstance(pipeline, newton.CollisionPipeline):
        raise TypeError(f"collision_pipeline must be a newton.CollisionPipeline or None, got {pipeline!r}")


def check_rigid_schedule(solver: SolverBase, kind: Frequency | None = None) -> Frequency:
    """The resolved ``RIGID`` slot schedule (or ``kind``); ``ITERATIONS`` raises ``NotImplementedError``."""
    kind = solver._resolved_collision_frequency_type(Slot.RIGID) if kind is None else kind
    if solver.collision_pipeline is not None and kind == Frequency.ITERATIONS:
        raise NotImplementedError(
            "SolverVBD collision_frequency_type[RIGID]=ITERATIONS: detection between VBD iterations is not "
            "implemented; use PRE_INIT, PRE_POST_INIT or NONE"
        )
    return kind


def check_schedule_change(solver: SolverBase, frequency, frequency_type) -> int | None:
    """Check a ``set_collision_frequency`` call before anything changes; returns the new self-contact interval.

    ``SOFT_SELF_CONTACT`` maps onto the seed's detection interval (None: unchanged); NONE there while
    self-contact is on raises ``ValueError``; ``RIGID`` at ITERATIONS with an owned pipeline raises
    ``NotImplementedError``.
    """
    options = solver.__dict__.get("options")
    self_contact = bool(options and options.particle_enable_self_contact)
    interval = soft_self_contact_interval(frequency_type, frequency, self_contact)
    for slot, value in (frequency_type or {}).items():
        if Slot(slot) == Slot.RIGID:
            check_rigid_schedule(solver, Frequency(value))
    return interval


def contacts_before_step(solver: SolverBase, state_in, contacts, dt: float):
    """This step's contacts: the caller's, or the owned buffer after detecting on ``state_in``."""
    contacts = solver._resolve_step_contacts(contacts)  # ValueError: contacts given while owning a pipeline
    if solver.collision_pipeline is not None and check_rigid_schedule(solver) in (Frequency.PRE_INIT,
                                                                                  Frequency.PRE_POST_INIT):
        solver._run_rigid_collision(state_in, dt)
    return contacts


def detect_after_init(solver: SolverBase, state_in, state_out, dt: float) -> bool:
    """``PRE_POST_INIT``: detect again with the particles at the first iterate; True when it ran.

    ``state_out`` holds the first iterate of the particles; its body poses are set to ``state_in``'s
    first so that colliders are detected where they start the step.
    """
    if solver.collision_pipeline is None or check_rigid_schedule(solver) != Frequency.PRE_POST_INIT:
        return False
    model = solver.model
    if model.body_count and state_out is not state_in:
        state_out.body_q.assign(state_in.body_q)
        state_out.body_qd.assign(state_in.body_qd)
    solver._run_rigid_collision(state_out, dt)
    return True
