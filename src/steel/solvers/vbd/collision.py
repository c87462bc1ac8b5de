"""SolverVBD with a solver-owned ``newton.CollisionPipeline`` (the later revision's execution mode).

Newton 1.8.0's examples may hand the solver its own pipeline (``collision_pipeline=``) and then call
``step(..., contacts=None)``; the solver detects into its own buffer, ``solver.contacts``.
:class:`newton.solvers.SolverBase` keeps the pipeline, the buffer and the per-slot schedule
(``collision_frequency[_type]``, ``set_collision_frequency``); this module runs the schedule of the
``RIGID`` slot, which is where particle–shape (soft) contacts come from:

* ``AUTO`` (= ``PRE_INIT`` with an owned pipeline) and ``PRE_INIT``: detect on ``state_in`` before
  the step, as a user's collide-then-step loop does;
* ``PRE_POST_INIT``: also detect again right after initialization, the particles at their initial
  guess and the bodies at their input pose (2 passes per step, as the reference's): a pass before the
  first iteration, refreshed as ``ITERATIONS``' passes are (below). Detecting with the bodies at their
  predicted pose instead broke the pipeline's matches of a resting box (2.7 mm below its start at
  1/60 s, beyond the 0.5 mm matching threshold) at the next step's first pass, which then started cold.
  With rigid–soft DAT (:mod:`.dat`, where AUTO resolves to PRE_POST_INIT) the bodies are detected at their
  truncated first iterate instead, so its division planes describe where they move on from;
* ``NONE``: no detection; the user may fill ``solver.contacts`` (``pipeline.collide(state,
  solver.contacts)``). Detecting every N steps is the calling loop toggling the slot between NONE and
  an active type (``set_collision_frequency``); the solver keeps no scheduling state across steps;
* ``ITERATIONS`` with ``collision_frequency[RIGID] = k``: ``PRE_INIT``, then again before the n-th
  iteration (counted from 1) for every n divisible by k, on the current iterate (measured on the
  reference: 6 iterations with k = 1, 2, 4, 7 make 7, 4, 2, 1 passes per step). Each pass re-files the
  particle contacts and the coupled bodies' lists, and refreshes the body–body rows carrying the
  multipliers of the rows in flight through the pipeline's match indices
  (:meth:`.rigid.contacts.RigidContacts.begin`), which is why Newton's ``SolverBase`` requires a
  matching pipeline for it (``ValueError`` otherwise). Hard contacts' damper flags come from the
  step's first iterate at every pass, as at the step's start (flagging from the current iterate
  switched a landing box's damper off and on between passes, and the last pass left it inside the
  ground); the particle contacts' penalty ramp (``beta`` > 0 only) starts again at each pass.

Contact history across steps follows the contact set the previous step solved (same set again: from
itself; one pass since into the same buffer: through its match indices; otherwise cold), so
interleaved buffers and repeated passes never restore a row from another contact.

The ``SOFT_SELF_CONTACT`` slot is the seed's ``particle_collision_detection_interval`` and is mapped
onto it by :mod:`.options`; self-contact detection is the solver's own (BVH), not the pipeline's.
"""

from __future__ import annotations

import warp as wp

import newton
from newton.solvers import SolverBase

from .options import soft_self_contact_interval
from .particles.contacts import prepare_contacts

Slot = SolverBase.CollisionSlot
Frequency = SolverBase.CollisionFrequencyType


def check_pipeline(pipeline, history: bool) -> None:
    """Refuse a ``collision_pipeline`` that is not a ``newton.CollisionPipeline`` (TypeError), or one without
    contact matching while contact history is on (ValueError, naming the option and the scene attribute)."""
    if pipeline is None:
        return
    if not isinstance(pipeline, newton.CollisionPipeline):
        raise TypeError(f"collision_pipeline must be a newton.CollisionPipeline or None, got {pipeline!r}")
    if history and getattr(pipeline, "contact_matching", "disabled") == "disabled":
        raise ValueError(
            "SolverVBD(rigid_contact_history=True) with an owned pipeline requires contact matching for the "
            "warm-start restore; construct the pipeline with contact_matching='latest'. Alternatively, set "
            "rigid_contact_history=False (the option, or the scene's vbd:rigid_contact_history, USD "
            "newton:vbd:rigid:contactHistory).")


def rigid_schedule(solver: SolverBase) -> Frequency:
    """The resolved ``RIGID`` slot schedule."""
    return solver._resolved_collision_frequency_type(Slot.RIGID)


def check_schedule_change(solver: SolverBase, frequency, frequency_type) -> int | None:
    """Check a ``set_collision_frequency`` call before anything changes; returns the new self-contact interval.

    ``SOFT_SELF_CONTACT`` maps onto the seed's detection interval (None: unchanged); NONE there while
    self-contact is on raises ``ValueError``. The ``RIGID`` slot is checked by ``SolverBase``.
    """
    options = solver.__dict__.get("options")
    self_contact = bool(options and options.particle_enable_self_contact)
    return soft_self_contact_interval(frequency_type, frequency, self_contact)


def contacts_before_step(solver: SolverBase, state_in, contacts, dt: float):
    """This step's contacts: the caller's, or the owned buffer after detecting on ``state_in``."""
    contacts = solver._resolve_step_contacts(contacts)  # ValueError: contacts given while owning a pipeline
    if solver.collision_pipeline is not None and rigid_schedule(solver) != Frequency.NONE:
        solver._run_rigid_collision(state_in, dt)
    return contacts


def iteration_detection(solver, state_in, state_out, contacts, dt: float):
    """``ITERATIONS`` / ``PRE_POST_INIT``: a callable ``redetect(iteration)`` to run before each iteration
    (0-based), or None for the other schedules.

    It detects before iteration ``i`` when ``(i + 1) % k == 0`` (ITERATIONS, the reference's count) or
    ``i == 0`` (PRE_POST_INIT), on ``state_out``: ITERATIONS on the current iterate, PRE_POST_INIT with the
    particles at their first iterate and every body at its input pose (as without a rigid solve, where the
    bodies are the colliders), so its body–body rows are the first pass's and a run of bodies alone is
    bitwise the PRE_INIT run. Then it re-files particle contacts, rebinds the coupling and refreshes the
    body–body rows in flight.
    """
    kind = rigid_schedule(solver) if solver.collision_pipeline is not None else None
    if kind not in (Frequency.ITERATIONS, Frequency.PRE_POST_INIT):
        return None
    k = solver.collision_frequency[Slot.RIGID] if kind == Frequency.ITERATIONS else 0
    model, external, rigid = solver.model, solver.options.integrate_with_external_rigid_solver, solver.rigid
    rc = rigid.contacts if rigid is not None else None
    if rigid is not None and solver.__dict__.get("_first_iterate") is None:
        solver._first_iterate = wp.empty_like(model.body_q)  # kept: a captured step must not allocate
    # With rigid–soft DAT (.dat) PRE_POST_INIT detects with the bodies at their (truncated) first iterate, where they
    # move on from: at the input pose they would get one motion budget per step instead of two (measured: a sphere
    # falling on cloth 8.5 mm per step that way; the reference and this 17 mm).
    input_pose = kind == Frequency.PRE_POST_INIT and solver.dat is None
    at_input = (input_pose or rigid is None) and model.body_count and state_out is not state_in

    def redetect(iteration: int) -> None:
        if iteration == 0 and rigid is not None:
            wp.copy(solver._first_iterate, state_out.body_q)  # the hard contacts' damper flags come from it
        if (k == 0 and iteration > 0) or (k > 0 and (iteration + 1) % k):
            return
        if rc is not None:
            rc.keep_in_flight()  # before the pass: the kept rows belong to the set being solved
        if at_input:
            state_out.body_q.assign(state_in.body_q)
            if rigid is None:
                state_out.body_qd.assign(state_in.body_qd)
        # A rigid solve's iterate is its end pose guess and state_out's velocities are stale: no velocity term.
        solver.collision_pipeline.collide(state_out, contacts, dt=dt if rigid is None else 0.0)
        if at_input and rigid is not None:
            wp.copy(state_out.body_q, solver._first_iterate)
        if solver.work is not None:
            prepare_contacts(model, state_in, state_out, contacts, solver.work, dt, external, solver.coupling)
        if solver.dat is not None:  # this pass's planes, at the configuration the pipeline saw (.dat)
            solver.dat.record(model, contacts, state_out.particle_q if model.particle_count else None,
                              (state_in.body_q if at_input else state_out.body_q) if model.body_count else None)
        if solver.work is not None:
            if solver.coupling is not None:
                solver.coupling.bind(solver.work, state_out, contacts)
        if rc is not None:
            rc.begin(contacts, state_in.body_q, in_flight=True)
            rc.mark_damped(solver._first_iterate)  # once per step, as at the step's start

    return redetect
