"""Sleeping of SolverSteel (``enable_sleeping=True``): quiet timers, freeze, and one function per wake reason.

Owns, per articulation (the unit that sleeps): the quiet timer [s], the asleep flag, and the frozen
published state of asleep articulations (``joint_q`` per coordinate, ``body_q`` per body; their
velocities publish as zero). Connectivity comes from :mod:`.islands`; this module decides.

A step with sleeping on (``SolverSteel._advance_with_sleeping``, the recipe's sleeping branch), in order:

1. :func:`begin_step`, one kernel: the wake events that read the input (``joint_q`` or
   ``body_q`` of an asleep articulation differ from what it published or its ``joint_qd`` is not
   zero: the user wrote the state; nonzero or non-finite ``State.body_f`` / ``Control.joint_f``;
   a changed ``Model.gravity``, which wakes its world; contacts the producer dropped, which wake
   every world and keep it awake while they are dropped), one function each, and the start of the
   island labels.
2. Islands of this step's contacts (:func:`.islands.label_islands`), then
   :func:`collect_island_awake`: an island is awake when any member is awake (contact with an
   awake body joins its island), asked to wake (the input checks above, or a moving kinematic
   support found by the island pass), unsupported (lost support) or in a world whose rows
   overflowed (lost row capacity). When no island is awake, nothing else of sleeping runs: no
   forward kinematics of the input, no timers, no solve, and :func:`publish_frozen` writes the
   output in one launch (``wp.capture_if`` on a device flag, so a captured step skips them too).
   With ``sleep_skip_constraints=False`` the solve always runs, so this skip does not apply.
3. Otherwise :func:`wake_islands` wakes every member of a marked island (before the kinematics,
   which skip asleep articulations), then, after forward kinematics of the input,
   :func:`update_sleep`: each member of an awake
   island advances its timer by ``dt`` when its bodies are quiet (``|v| < sleep_linear_threshold``
   [m/s] and ``|w| < sleep_angular_threshold`` [rad/s], COM velocity of the input state), the
   island is supported, the articulation may sleep (no drive gains, augmented or drive rows alike;
   no passive springs: :func:`.state.articulation_stays_awake`), its world has not overflowed and no
   contact was dropped; otherwise the timer restarts at 0. The timer is float32 and accumulates
   ``dt`` as float32, as the reference's does, so "quiet for ``sleep_quiet_time``" means the first
   step ``n`` at which ``sum(float32(dt), n times) >= sleep_quiet_time`` (0.5 s at 1/240 s: step
   121, since 120 float32 additions give 0.49999997 s;
   ``tests/solvers/steel/test_sleeping.py::test_resting_box_falls_asleep_at_the_quiet_time_to_the_step``).
   An island whose smallest member timer reaches the quiet time falls asleep *in that step*: its
   output is its input pose with zero velocity, recorded as its frozen state.
4. The solve (stages 1-6 of the step) runs unless no articulation is awake after that decision
   (``wp.capture_if`` again; skipped, the output is :func:`publish_frozen`'s), and
   :func:`freeze_outputs` writes the frozen state over every asleep articulation's output (with
   ``sleep_skip_constraints=False``, unless its solved output is not finite: then it wakes).
   With ``sleep_skip_constraints`` the solve of a partly awake world leaves the asleep islands out:
   ``JointModel.articulation_skip`` is ``articulation_asleep`` itself, so forward kinematics,
   RNEA/CRBA, the predicted and finished velocities, the integration and the joint-limit rows skip
   asleep articulations, and their contacts get no rows (an asleep island touches nothing awake: it
   would have woken). That is what makes a mostly asleep scene of many worlds cheaper than the same
   step with sleeping off; at 1 world the step is launch-bound and costs about the same (timings in
   benchmarks/README.md's performance log).

Contact history (``contacts/history.py``): a contact of an asleep articulation keeps the record it had
when the island fell asleep (the contact-row kernel finds it and the recording copies it unchanged),
whether its rows are skipped or, with ``sleep_skip_constraints=False``, solved. A woken island so
resumes from the same friction anchors and warm start either way, and both settings publish the
same trajectory bit for bit (tested through a wake in an all-asleep and in a partly awake world).

Kernels take the arrays of sleeping as one :class:`.state.SleepArrays` struct built at construction, so
a launch packs a few arguments rather than two dozen: on the CPU a launch's cost is mostly argument
packing; an all-asleep step of the tower scene is five launches (begin, two island passes,
collect, publish).

Wake events outside the step: :func:`wake_worlds` (``reset`` of its worlds) and :func:`wake_changed`
(``notify_model_changed``: only the articulations whose arrays changed, :mod:`.model_diff`).

Invariants tests check: an asleep articulation's published ``body_q`` is bitwise constant; the
fall-asleep step equals the float32 rule above; solving or skipping an asleep island's rows gives
the same published state (an asleep island touching an awake body wakes first, so its rows never
act on an awake body); ``body_parent_f`` of an asleep body keeps its last awake value
(``observables.py`` evaluates it with ``SleepState.joints_skipping_asleep``, whose skip list is the asleep flags).
"""

from __future__ import annotations

import warp as wp

import newton

from ..data import UNBOUNDED
from .islands import start_label
from .state import SleepArrays, SleepState
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

BIG_TIME = UNBOUNDED  # [s] the island timer's identity for atomic_min


# -- wake reasons, read from the input in the step's first kernel ------------------------------------


@wp.func
def _state_written(
    a: int,
    sl: SleepArrays,
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    body_q: wp.array[wp.transform],
):
    """Asleep articulation ``a``'s input ``joint_q`` or ``body_q`` differs from what it published,
    or its ``joint_qd`` is not zero: the user wrote the state. Bitwise comparisons: NaN != NaN, so a
    non-finite write wakes too. Reads ``body_q`` before forward kinematics rewrites it."""
    written = int(0)
    for j in range(sl.articulation_start[a], sl.articulation_start[a + 1]):
        for c in range(sl.joint_q_start[j], sl.joint_q_start[j + 1]):
            if not (joint_q[c] == sl.frozen_joint_q[c]):
                written = 1
        for d in range(sl.joint_qd_start[j], sl.joint_qd_start[j + 1]):
            if not (joint_qd[d] == 0.0):
                written = 1
        b = sl.joint_child[j]
        x, f = body_q[b], sl.frozen_body_q[b]
        for k in range(7):
            if not (x[k] == f[k]):
                written = 1
    return written


@wp.func
def _forces_applied(
    a: int,
    sl: SleepArrays,
    check_body_f: int,
    check_joint_f: int,
    # Data in:
    body_f: wp.array[wp.spatial_vector],
    joint_f: wp.array[float],
):
    """A nonzero or non-finite ``State.body_f`` or ``Control.joint_f`` on articulation ``a``."""
    applied = int(0)
    for j in range(sl.articulation_start[a], sl.articulation_start[a + 1]):
        if check_joint_f != 0:
            for d in range(sl.joint_qd_start[j], sl.joint_qd_start[j + 1]):
                if not (joint_f[d] == 0.0):  # nonzero or NaN
                    applied = 1
        if check_body_f != 0:
            f = body_f[sl.joint_child[j]]
            for k in range(6):
                if not (f[k] == 0.0):
                    applied = 1
    return applied


@wp.func
def _gravity_changed(w: int, gravity: wp.array[wp.vec3], gravity_seen: wp.array[wp.vec3]):
    """World ``w``'s ``Model.gravity`` changed since the last step (and is recorded as seen)."""
    if gravity[w] == gravity_seen[w]:
        return 0
    gravity_seen[w] = gravity[w]
    return 1


@wp.func
def _contacts_dropped(contact_count: wp.array[wp.int32], contact_max: int, reduction_overflow: wp.array[wp.int32]):
    """The contact producer reported dropped contacts this step: Newton's rigid contact count past the
    buffer's capacity (its overflow sentinel: the count keeps growing while the writes stop) or the
    contact reduction's overflow flag. The buffer is shared by every world, so which world lost them is
    not known: every world counts as having lost contact capacity."""
    return contact_count[0] > contact_max or reduction_overflow[0] != 0


@wp.kernel
def _begin_step(
    articulation_count: int,
    world_count: int,
    gravity_count: int,
    check_body_f: int,
    check_joint_f: int,
    contact_max: int,
    sl: SleepArrays,
    # Model:
    gravity: wp.array[wp.vec3],
    # Contacts:
    contact_count: wp.array[wp.int32],
    reduction_overflow: wp.array[wp.int32],
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    body_q: wp.array[wp.transform],
    body_f: wp.array[wp.spatial_vector],
    joint_f: wp.array[float],
):
    """The step's first kernel: every wake event that reads the input, and the start of the islands.
    Writes ``articulation_wake``, ``world_wake``, ``gravity_seen``, the labels and support, and
    clears ``island_awake``, ``island_timer`` and the step's two flags."""
    i = wp.tid()  # one thread per articulation and per world (the larger count of the two)
    if i == 0:
        sl.some_island_awake[0] = 0
        sl.any_awake[0] = 0
    if i < world_count:
        wake = int(0)
        if i < gravity_count:
            wake = _gravity_changed(i, gravity, sl.gravity_seen)
        if _contacts_dropped(contact_count, contact_max, reduction_overflow):
            wake = 1  # lost contact capacity: no island of the world may sleep this step
        sl.world_wake[i] = wake
    if i < articulation_count:
        start_label(i, sl.articulation_fixed_base, sl.articulation_label, sl.articulation_supported,
                    sl.articulation_previous)
        sl.island_awake[i] = 0
        sl.island_timer[i] = BIG_TIME  # every index is reset; labels are a subset of indices
        wake = int(0)
        if sl.articulation_asleep[i] != 0:
            wake = _state_written(i, sl, joint_q, joint_qd, body_q)
            wake = wake | _forces_applied(i, sl, check_body_f, check_joint_f, body_f, joint_f)
        sl.articulation_wake[i] = wake


def begin_step(sm, sleep: SleepState, state_in, control, contacts) -> None:
    """Wake events that read the input (written state, applied forces, changed gravity, contacts the
    producer dropped) and the start of this step's island labels, in one launch. Runs before forward
    kinematics of the input."""
    model = sm.model
    has_contacts = contacts is not None and contacts.rigid_contact_max > 0
    # Newton keeps the reduction's overflow flag on the contact buffer (contact_counters[2]).
    reduction_overflow = getattr(contacts, "_reduction_overflow", None) if has_contacts else None
    gravity = model.gravity if sleep.gravity_seen is not None else None
    gravity_count = min(gravity.shape[0], sleep.world_count) if gravity is not None else 0
    body_f = state_in.body_f if model.body_count and state_in.body_f is not None else None
    joint_f = control.joint_f if model.joint_dof_count and control is not None else None
    launch(_begin_step, dim=max(sleep.articulation_count, sleep.world_count),
              inputs=[sleep.articulation_count, sleep.world_count, gravity_count, int(body_f is not None),
                      int(joint_f is not None), int(contacts.rigid_contact_max) if has_contacts else 0, sleep.arrays,
                      gravity if gravity is not None else sleep.no_vec3,
                      contacts.rigid_contact_count if has_contacts else sleep.no_int32,
                      reduction_overflow if reduction_overflow is not None else sleep.no_int32,
                      state_in.joint_q, state_in.joint_qd, state_in.body_q,
                      body_f if body_f is not None else sleep.no_spatial,
                      joint_f if joint_f is not None else sleep.no_float],
              device=model.device)


@wp.kernel
def _wake_masked_worlds(articulation_world: wp.array[wp.int32], mask: wp.array[wp.bool],
                        articulation_asleep: wp.array[wp.int32], articulation_timer: wp.array[wp.float32]):
    a = wp.tid()  # one thread per articulation
    if mask[articulation_world[a]]:
        articulation_asleep[a] = 0
        articulation_timer[a] = 0.0


def wake_worlds(sm, sleep: SleepState, mask) -> None:
    """``reset``: wake the articulations of the worlds ``mask`` selects (``None``: all) and restart their timers."""
    if mask is None:
        wake_all(sleep)
        return
    if sleep.articulation_count:
        launch(_wake_masked_worlds, dim=sleep.articulation_count, inputs=[sleep.articulation_world, mask],
                  outputs=[sleep.articulation_asleep, sleep.articulation_timer], device=sm.model.device)


def wake_all(sleep: SleepState) -> None:
    """A full ``reset``, and a ``notify_model_changed`` that may have changed any island: every island wakes."""
    sleep.articulation_asleep.zero_()
    sleep.articulation_timer.zero_()


def wake_changed(sleep: SleepState, flags: int) -> None:
    """``notify_model_changed(flags)``: wake the articulations whose flagged arrays changed
    (:mod:`.model_diff`; their islands wake with them in the next step), or every island.

    Raises:
        ValueError: a flagged array was replaced by one with a different entity count (before
            anything changes).
    """
    changed = sleep.snapshot.changed(int(flags))
    if changed is None:
        wake_all(sleep)
        return
    if len(changed):
        asleep, timer = sleep.articulation_asleep.numpy(), sleep.articulation_timer.numpy()
        asleep[changed] = 0
        timer[changed] = 0.0
        sleep.articulation_asleep.assign(asleep)
        sleep.articulation_timer.assign(timer)


# -- timers and the fall-asleep decision -------------------------------------------------------------


@wp.kernel
def _collect_island_awake(sl: SleepArrays):
    a = wp.tid()  # one thread per articulation
    w = sl.articulation_world[a]
    # A member awake (contact with an awake or moving body), asked to wake, lost support or lost row capacity.
    if (sl.articulation_asleep[a] == 0 or sl.articulation_wake[a] != 0 or sl.world_wake[w] != 0
            or sl.world_overflow[w] or sl.articulation_supported[a] == 0):
        sl.island_awake[sl.articulation_label[a]] = 1
        sl.some_island_awake[0] = 1


def collect_island_awake(sm, sleep: SleepState) -> None:
    """Mark every island that is awake or must wake (``island_awake`` at its label) and set the
    step's flag when there is one; nothing else of sleeping runs in a step without one."""
    launch(_collect_island_awake, dim=sleep.articulation_count, inputs=[sleep.arrays], device=sm.model.device)


@wp.kernel
def _wake_islands(sl: SleepArrays):
    a = wp.tid()  # one thread per articulation
    if sl.island_awake[sl.articulation_label[a]] != 0:
        sl.articulation_asleep[a] = 0


def wake_islands(sm, sleep: SleepState) -> None:
    """Every member of an island ``collect_island_awake`` marked is awake from here on, before the
    input's forward kinematics, which skips asleep articulations when their rows are skipped."""
    launch(_wake_islands, dim=sleep.articulation_count, inputs=[sleep.arrays], device=sm.model.device)


@wp.kernel
def _advance_timers(
    dt: float,
    linear_threshold: float,
    angular_threshold: float,
    sl: SleepArrays,
    # Data in:
    body_qd: wp.array[wp.spatial_vector],
):
    a = wp.tid()  # one thread per articulation
    r = sl.articulation_label[a]
    if sl.island_awake[r] == 0:
        return  # the whole island sleeps on
    w = sl.articulation_world[a]
    quiet = (sl.articulation_supported[a] != 0 and sl.articulation_stay_awake[a] == 0
             and sl.articulation_wake[a] == 0 and sl.world_wake[w] == 0 and not sl.world_overflow[w])
    for j in range(sl.articulation_start[a], sl.articulation_start[a + 1]):
        v = body_qd[sl.joint_child[j]]
        if not (wp.length(wp.spatial_top(v)) < linear_threshold and wp.length(wp.spatial_bottom(v)) < angular_threshold):
            quiet = False  # a NaN velocity is not quiet either
    t = wp.float32(0.0)
    if quiet:
        t = sl.articulation_timer[a] + wp.float32(dt)
    sl.articulation_timer[a] = t
    wp.atomic_min(sl.island_timer, r, t)


@wp.kernel
def _fall_asleep(
    quiet_time: wp.float32,
    sl: SleepArrays,
    # Data in:
    joint_q: wp.array[float],
    body_q: wp.array[wp.transform],
):
    a = wp.tid()  # one thread per articulation
    r = sl.articulation_label[a]
    if sl.island_awake[r] != 0 and sl.island_timer[r] >= quiet_time:
        sl.articulation_asleep[a] = 1
    if sl.articulation_asleep[a] == 0:
        sl.any_awake[0] = 1
        return
    # Asleep: record the frozen state from the (kinematically consistent) input; an articulation
    # that slept through the step's wake checks has an input equal to its frozen state already.
    for j in range(sl.articulation_start[a], sl.articulation_start[a + 1]):
        for c in range(sl.joint_q_start[j], sl.joint_q_start[j + 1]):
            sl.frozen_joint_q[c] = joint_q[c]
        b = sl.joint_child[j]
        sl.frozen_body_q[b] = body_q[b]


def update_sleep(sm, sd, sleep: SleepState, state_in, dt: float) -> None:
    """In a step with an awake island, after :func:`wake_islands` and forward kinematics of the
    input: advance the quiet timers, put quiet islands to sleep and record the frozen state of
    every asleep articulation."""
    dev, n = sm.model.device, sleep.articulation_count
    launch(_advance_timers, dim=n,
              inputs=[float(dt), sleep.linear_threshold, sleep.angular_threshold, sleep.arrays, sd.body_qd_in],
              device=dev)
    launch(_fall_asleep, dim=n, inputs=[wp.float32(sleep.quiet_time), sleep.arrays, state_in.joint_q,
                                           state_in.body_q], device=dev)


# -- publishing the frozen state -----------------------------------------------------------------------


@wp.kernel
def _publish(
    coord_count: int,
    dof_count: int,
    body_count: int,
    copy_others: int,
    sl: SleepArrays,
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    # Data out:
    joint_q_out: wp.array[float],
    joint_qd_out: wp.array[float],
    body_q_out: wp.array[wp.transform],
    body_qd_out: wp.array[wp.spatial_vector],
):
    i = wp.tid()  # one thread per coordinate, DOF and body (the largest count of the three)
    if i < coord_count:
        a = sl.coord_articulation[i]
        if a >= 0 and sl.articulation_asleep[a] != 0:
            joint_q_out[i] = sl.frozen_joint_q[i]
        elif copy_others != 0:
            joint_q_out[i] = joint_q[i]
    if i < dof_count:
        a = sl.dof_articulation[i]
        if a >= 0 and sl.articulation_asleep[a] != 0:
            joint_qd_out[i] = 0.0
        elif copy_others != 0:
            joint_qd_out[i] = joint_qd[i]
    if i < body_count:
        a = sl.body_articulation[i]
        if a >= 0 and sl.articulation_asleep[a] != 0:
            body_q_out[i] = sl.frozen_body_q[i]
            body_qd_out[i] = wp.spatial_vector()
        elif copy_others != 0:
            body_q_out[i] = body_q[i]
            body_qd_out[i] = body_qd[i]


def publish_frozen(sm, sd, sleep: SleepState, state_in, state_out) -> None:
    """The output of a skipped solve in one launch: every asleep articulation publishes its frozen
    state (pose, zero velocity), everything else passes ``state_in`` through."""
    _launch_publish(sm, sleep, state_in, state_out, copy_others=True)


@wp.kernel
def _freeze_finite_trials(
    sl: SleepArrays,
    # Data in/out (the solved trial state):
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
):
    a = wp.tid()  # one thread per articulation
    if sl.articulation_asleep[a] == 0:
        return
    finite = int(1)
    for j in range(sl.articulation_start[a], sl.articulation_start[a + 1]):
        for c in range(sl.joint_q_start[j], sl.joint_q_start[j + 1]):
            if not wp.isfinite(joint_q[c]):
                finite = 0
        for d in range(sl.joint_qd_start[j], sl.joint_qd_start[j + 1]):
            if not wp.isfinite(joint_qd[d]):
                finite = 0
        b = sl.joint_child[j]
        x = body_q[b]
        for k in range(7):
            if not wp.isfinite(x[k]):
                finite = 0
        if not wp.isfinite(body_qd[b]):
            finite = 0
    if finite == 0:
        # A non-finite trial is not hidden by freezing: the articulation wakes and publishes it.
        sl.articulation_asleep[a] = 0
        sl.articulation_timer[a] = 0.0
        return
    for j in range(sl.articulation_start[a], sl.articulation_start[a + 1]):
        for c in range(sl.joint_q_start[j], sl.joint_q_start[j + 1]):
            joint_q[c] = sl.frozen_joint_q[c]
        for d in range(sl.joint_qd_start[j], sl.joint_qd_start[j + 1]):
            joint_qd[d] = 0.0
        b = sl.joint_child[j]
        body_q[b] = sl.frozen_body_q[b]
        body_qd[b] = wp.spatial_vector()


def freeze_outputs(sm, sd, sleep: SleepState, state_out) -> None:
    """After a solve: write the frozen state of every asleep articulation over its output.

    ``body_q`` is written from the frozen copy rather than by forward kinematics of the frozen
    ``joint_q``: both are bitwise equal (the copy was made by the same kinematics), and the copy
    saves a kinematics pass. With ``sleep_skip_constraints=False`` the asleep articulations were
    solved too, and one whose solved (trial) output is not finite wakes and publishes it rather than
    the frozen state (spec: a non-finite trial output is not hidden by freezing); its island wakes
    with it in the next step.
    """
    if sleep.skip_constraints:
        _launch_publish(sm, sleep, state_out, state_out, copy_others=False)
        return
    model = sm.model
    nc, nd, nb = model.joint_coord_count, model.joint_dof_count, model.body_count
    launch(_freeze_finite_trials, dim=sleep.articulation_count,
              inputs=[sleep.arrays, state_out.joint_q if nc else sleep.no_float,
                      state_out.joint_qd if nd else sleep.no_float, state_out.body_q if nb else sleep.no_transform,
                      state_out.body_qd if nb else sleep.no_spatial], device=model.device)


def _launch_publish(sm, sleep: SleepState, state_in, state_out, copy_others: bool) -> None:
    model = sm.model
    nc, nd, nb = model.joint_coord_count, model.joint_dof_count, model.body_count
    if max(nc, nd, nb) == 0:
        return
    arrays = []
    for state in (state_in, state_out):
        arrays += [state.joint_q if nc else sleep.no_float, state.joint_qd if nd else sleep.no_float,
                   state.body_q if nb else sleep.no_transform, state.body_qd if nb else sleep.no_spatial]
    launch(_publish, dim=max(nc, nd, nb), inputs=[nc, nd, nb, int(copy_others), sleep.arrays, *arrays],
              device=model.device)


# -- observables -----------------------------------------------------------------------------------


@wp.kernel
def _body_awake(body_articulation: wp.array[wp.int32], articulation_asleep: wp.array[wp.int32],
                body_awake_out: wp.array[wp.bool]):
    b = wp.tid()  # bodies outside every articulation pass through and report awake
    a = body_articulation[b]
    body_awake_out[b] = a < 0 or articulation_asleep[a] == 0


@wp.kernel
def _zero_asleep_contact_f(
    shape_body: wp.array[int],
    body_articulation: wp.array[wp.int32],
    articulation_asleep: wp.array[wp.int32],
    contact_count: wp.array[wp.int32],
    contact_shape0: wp.array[wp.int32],
    contact_shape1: wp.array[wp.int32],
    contact_f_out: wp.array[wp.spatial_vector],
):
    c = wp.tid()  # one thread per contact slot
    if c >= contact_count[0]:
        return
    asleep = int(0)
    for side in range(2):
        s = contact_shape0[c]
        if side == 1:
            s = contact_shape1[c]
        if s >= 0:
            b = shape_body[s]
            if b >= 0:
                a = body_articulation[b]
                if a >= 0 and articulation_asleep[a] != 0:
                    asleep = 1
    if asleep != 0:
        contact_f_out[c] = wp.spatial_vector()


def write_body_awake(sm, sleep: SleepState, body_awake) -> None:
    """``body_awake[b]``: True unless body ``b``'s articulation is asleep."""
    if sm.model.body_count:
        launch(_body_awake, dim=sm.model.body_count, inputs=[sleep.body_articulation, sleep.articulation_asleep],
                  outputs=[body_awake], device=sm.model.device)


def write_sleep_observables(sm, sd, sleep: SleepState, observables, contacts) -> None:
    """``body_awake`` when requested; with ``sleep_skip_constraints`` the contacts of asleep
    articulations report zero ``contact_f`` (their rows count as skipped)."""
    if observables is None:
        return
    if observables.is_requested("body_awake") and observables.body_awake is not None:
        write_body_awake(sm, sleep, observables.body_awake)
    if (sleep.skip_constraints and observables.is_requested("contact_f") and observables.contact_f is not None
            and contacts is not None and contacts.rigid_contact_max > 0):
        launch(_zero_asleep_contact_f, dim=contacts.rigid_contact_max,
                  inputs=[sm.model.shape_body, sleep.body_articulation, sleep.articulation_asleep,
                          contacts.rigid_contact_count, contacts.rigid_contact_shape0, contacts.rigid_contact_shape1],
                  outputs=[observables.contact_f], device=sm.model.device)


# -- the step ----------------------------------------------------------------------------------------


# -- construction checks -------------------------------------------------------------------------------


def check_sleeping_model(model: newton.Model, opts) -> None:
    """The rejections of ``enable_sleeping`` that depend on the model or the device (the option
    combinations ``contact_warmstart`` and ``velocity_iterations > 0`` raise in ``options.py``).

    Raises:
        ValueError: the model has no articulation (nothing could sleep).
        NotImplementedError: ``articulated_contact_response='propagation'`` with the serial sweep,
            or ``solve_mode='colored'`` on the CPU (which runs that serial sweep), as the reference.
    """
    if int(model.articulation_count) == 0:
        raise ValueError("enable_sleeping=True requires at least one articulation; the model has none")
    if opts.articulated_contact_response == "propagation" and opts.solve_mode == "serial":
        raise NotImplementedError("enable_sleeping=True is not supported with articulated_contact_response="
                                  "'propagation' and solve_mode='serial'")
    if opts.solve_mode == "colored" and model.device.is_cpu:
        raise NotImplementedError("enable_sleeping=True with solve_mode='colored' requires CUDA: on the CPU the "
                                  "colored mode runs the serial propagation sweep, which sleeping does not support")
