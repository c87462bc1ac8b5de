"""Sleeping of SolverSteel (``enable_sleeping=True``): quiet timers, freeze, and one function per wake reason.

Owns, per articulation (the unit that sleeps): the quiet timer [s], the asleep flag, and the frozen
published state of asleep articulations (``joint_q`` per coordinate, ``body_q`` per body; their
velocities publish as zero). Connectivity comes from :mod:`.islands`; this module decides.

A step with sleeping on (:func:`step_with_sleeping`), in order:

1. Wake events that read the input: :func:`wake_on_state_change` (``joint_q``, ``joint_qd`` or
   ``body_q`` of an asleep articulation differ from what was published: the user wrote the state),
   then, after forward kinematics of the input, :func:`wake_on_applied_forces` (nonzero or
   non-finite ``State.body_f`` / ``Control.joint_f``) and :func:`wake_on_gravity_change`.
2. Islands of this step's contacts (:func:`.islands.label_islands`).
3. :func:`update_sleep`: an island wakes whole when any member is awake (contact with an awake or
   moving body), asked to wake, unsupported (lost support) or in a world whose rows overflowed
   (lost row capacity). Each member of an awake island then advances its timer by ``dt`` when its
   bodies are quiet (``|v| < sleep_linear_threshold`` [m/s] and ``|w| <
   sleep_angular_threshold`` [rad/s], COM velocity of the input state), the island is supported,
   the articulation may sleep (no drive gains, no passive springs: :func:`articulation_stays_awake`)
   and its world has not overflowed; otherwise the timer restarts at 0. The timer is float32 and
   accumulates ``dt`` as float32, as the reference's does, so "quiet for ``sleep_quiet_time``"
   means the first step ``n`` at which ``sum(float32(dt), n times) >= sleep_quiet_time`` (0.5 s at
   1/240 s: step 121, since 120 float32 additions give 0.49999997 s). An island whose smallest
   member timer reaches the quiet time falls asleep *in that step*: its output is its input pose
   with zero velocity.
4. The solve (stages 1-6 of the step) runs unless no articulation is awake; then the output is the
   input (``wp.capture_if`` on a device flag, so a captured step skips the solve too).
5. :func:`freeze_outputs` writes the frozen state over every asleep articulation's output.

Wake events outside the step: :func:`wake_worlds` (``reset`` of its worlds) and :func:`wake_all`
(``notify_model_changed``; the first version wakes every island rather than diffing arrays).

Invariants tests check: an asleep articulation's published ``body_q`` is bitwise constant; the
fall-asleep step equals the float32 rule above; solving or skipping an asleep island's rows gives
the same published state (an asleep island touching an awake body wakes first, so its rows never
act on an awake body).
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from .islands import Islands, label_islands

BIG_TIME = 1.0e30  # [s] the island timer's identity for atomic_min


def articulation_stays_awake(model: newton.Model, plan) -> np.ndarray:
    """Per articulation: 1 when a DOF has a drive gain (``joint_target_ke`` or ``joint_target_kd``)
    or a passive spring (``joint_stiffness``); such articulations never sleep (seed 000)."""
    n = plan.articulation_count
    out = np.zeros(max(n, 1), dtype=np.int32)
    if model.joint_dof_count == 0:
        return out
    active = ((model.joint_target_ke.numpy() != 0.0) | (model.joint_target_kd.numpy() != 0.0)
              | (model.joint_stiffness.numpy() != 0.0))
    dof_articulation = _dof_articulation(model)
    for d in np.nonzero(active)[0]:
        if dof_articulation[d] >= 0:
            out[dof_articulation[d]] = 1
    return out


def _dof_articulation(model: newton.Model) -> np.ndarray:
    out = np.full(max(model.joint_dof_count, 1), -1, dtype=np.int32)
    starts, arts = model.joint_qd_start.numpy(), model.joint_articulation.numpy()
    for j in range(model.joint_count):
        out[starts[j]:starts[j + 1]] = arts[j]
    return out


def _coord_articulation(model: newton.Model) -> np.ndarray:
    out = np.full(max(model.joint_coord_count, 1), -1, dtype=np.int32)
    starts, arts = model.joint_q_start.numpy(), model.joint_articulation.numpy()
    for j in range(model.joint_count):
        out[starts[j]:starts[j + 1]] = arts[j]
    return out


def _fixed_base(model: newton.Model, plan, body_responds: np.ndarray) -> np.ndarray:
    """Per articulation: 1 when its root joint is welded to the world (not FREE/DISTANCE) and some body responds."""
    n = plan.articulation_count
    out = np.zeros(max(n, 1), dtype=np.int32)
    if n == 0:
        return out
    types, parents, children = model.joint_type.numpy(), model.joint_parent.numpy(), model.joint_child.numpy()
    floating = (int(newton.JointType.FREE), int(newton.JointType.DISTANCE))
    for a in range(n):
        joints = plan.articulation_joints(a)
        roots = [j for j in joints if parents[j] < 0]
        welded = any(int(types[j]) not in floating for j in roots)
        out[a] = int(welded and any(body_responds[children[j]] for j in joints))
    return out


class SleepState:
    """Device state of sleeping (see the module docstring); ``None`` on a solver without sleeping."""

    def __init__(self, solver):
        model, plan, dev = solver.model, solver.core.plan, solver.model.device
        opts = solver.options
        self.linear_threshold = float(opts.sleep_linear_threshold)
        self.angular_threshold = float(opts.sleep_angular_threshold)
        self.quiet_time = float(opts.sleep_quiet_time)
        self.skip_constraints = bool(opts.sleep_skip_constraints)
        n = max(plan.articulation_count, 1)
        self.articulation_count = plan.articulation_count
        body_art = plan.body_articulation_np if model.body_count else np.zeros(0, np.int32)
        self.body_articulation = wp.array(body_art if len(body_art) else np.full(1, -1, np.int32), dtype=wp.int32,
                                          device=dev)
        self.dof_articulation = wp.array(_dof_articulation(model), dtype=wp.int32, device=dev)
        self.coord_articulation = wp.array(_coord_articulation(model), dtype=wp.int32, device=dev)
        self.articulation_world = wp.array(solver.tables.articulation_row_world.numpy()[:n], dtype=wp.int32,
                                           device=dev)
        responds = solver.tables.body_responds_np
        self.islands = Islands(wp.array(_fixed_base(model, plan, responds), dtype=wp.int32, device=dev), dev)
        self.articulation_stay_awake = wp.array(articulation_stays_awake(model, plan), dtype=wp.int32, device=dev)
        self.articulation_asleep = wp.zeros(n, dtype=wp.int32, device=dev)
        self.articulation_timer = wp.zeros(n, dtype=wp.float32, device=dev)  # [s]
        self.articulation_wake = wp.zeros(n, dtype=wp.int32, device=dev)  # wake requested this step
        self.island_awake = wp.zeros(n, dtype=wp.int32, device=dev)  # at labels
        self.island_timer = wp.zeros(n, dtype=wp.float32, device=dev)  # at labels: smallest member timer [s]
        self.any_awake = wp.zeros(1, dtype=wp.int32, device=dev)
        self.frozen_joint_q = wp.zeros(max(model.joint_coord_count, 1), dtype=float, device=dev)
        self.frozen_body_q = wp.zeros(max(model.body_count, 1), dtype=wp.transform, device=dev)
        world_count = max(int(model.world_count), 1)
        self.world_wake = wp.zeros(world_count, dtype=wp.int32, device=dev)
        self.gravity_seen = wp.clone(model.gravity) if model.gravity is not None else None

    def refresh(self, solver) -> None:
        """Re-read the stay-awake table (drive gains and springs may have changed)."""
        self.articulation_stay_awake.assign(articulation_stays_awake(solver.model, solver.core.plan))


# -- wake reasons ----------------------------------------------------------------------------------


@wp.kernel
def _wake_on_coords(
    coord_articulation: wp.array[wp.int32],
    articulation_asleep: wp.array[wp.int32],
    frozen_joint_q: wp.array[float],
    joint_q: wp.array[float],
    articulation_wake_out: wp.array[wp.int32],
):
    c = wp.tid()  # one thread per joint coordinate
    a = coord_articulation[c]
    # Bitwise comparison: NaN != NaN, so a non-finite write wakes too.
    if a >= 0 and articulation_asleep[a] != 0 and not (joint_q[c] == frozen_joint_q[c]):
        articulation_wake_out[a] = 1


@wp.kernel
def _wake_on_dof_values(
    dof_articulation: wp.array[wp.int32],
    articulation_asleep: wp.array[wp.int32],
    values: wp.array[float],
    articulation_wake_out: wp.array[wp.int32],
):
    d = wp.tid()  # one thread per DOF: an asleep articulation publishes zero joint_qd and needs zero joint_f
    a = dof_articulation[d]
    if a >= 0 and not (values[d] == 0.0):
        if articulation_asleep[a] != 0:
            articulation_wake_out[a] = 1


@wp.kernel
def _wake_on_body_q(
    body_articulation: wp.array[wp.int32],
    articulation_asleep: wp.array[wp.int32],
    frozen_body_q: wp.array[wp.transform],
    body_q: wp.array[wp.transform],
    articulation_wake_out: wp.array[wp.int32],
):
    b = wp.tid()  # one thread per body
    a = body_articulation[b]
    if a < 0 or articulation_asleep[a] == 0:
        return
    x, f = body_q[b], frozen_body_q[b]
    for k in range(7):
        if not (x[k] == f[k]):
            articulation_wake_out[a] = 1


@wp.kernel
def _wake_on_body_f(
    body_articulation: wp.array[wp.int32],
    articulation_asleep: wp.array[wp.int32],
    body_f: wp.array[wp.spatial_vector],
    articulation_wake_out: wp.array[wp.int32],
):
    b = wp.tid()  # one thread per body
    a = body_articulation[b]
    if a < 0 or articulation_asleep[a] == 0:
        return
    f = body_f[b]
    for k in range(6):
        if not (f[k] == 0.0):  # nonzero or NaN
            articulation_wake_out[a] = 1


def wake_on_state_change(solver, sleep: SleepState, state_in) -> None:
    """Wake asleep articulations whose input ``joint_q``, ``joint_qd`` or ``body_q`` differs from what
    they published (the user wrote the state). Call before forward kinematics rewrites ``body_q``."""
    model, dev = solver.model, solver.model.device
    if model.joint_coord_count:
        wp.launch(_wake_on_coords, dim=model.joint_coord_count,
                  inputs=[sleep.coord_articulation, sleep.articulation_asleep, sleep.frozen_joint_q, state_in.joint_q],
                  outputs=[sleep.articulation_wake], device=dev)
    if model.joint_dof_count:
        wp.launch(_wake_on_dof_values, dim=model.joint_dof_count,
                  inputs=[sleep.dof_articulation, sleep.articulation_asleep, state_in.joint_qd],
                  outputs=[sleep.articulation_wake], device=dev)
    if model.body_count:
        wp.launch(_wake_on_body_q, dim=model.body_count,
                  inputs=[sleep.body_articulation, sleep.articulation_asleep, sleep.frozen_body_q, state_in.body_q],
                  outputs=[sleep.articulation_wake], device=dev)


def wake_on_applied_forces(solver, sleep: SleepState, state_in, control) -> None:
    """Wake asleep articulations with a nonzero or non-finite ``State.body_f`` or ``Control.joint_f``."""
    model, dev = solver.model, solver.model.device
    if model.body_count and state_in.body_f is not None:
        wp.launch(_wake_on_body_f, dim=model.body_count,
                  inputs=[sleep.body_articulation, sleep.articulation_asleep, state_in.body_f],
                  outputs=[sleep.articulation_wake], device=dev)
    if model.joint_dof_count and control is not None and control.joint_f is not None:
        wp.launch(_wake_on_dof_values, dim=model.joint_dof_count,
                  inputs=[sleep.dof_articulation, sleep.articulation_asleep, control.joint_f],
                  outputs=[sleep.articulation_wake], device=dev)


@wp.kernel
def _wake_on_gravity(gravity: wp.array[wp.vec3], gravity_seen: wp.array[wp.vec3], world_wake_out: wp.array[wp.int32]):
    w = wp.tid()  # one thread per world
    if not (gravity[w] == gravity_seen[w]):
        world_wake_out[w] = 1
        gravity_seen[w] = gravity[w]


def wake_on_gravity_change(solver, sleep: SleepState) -> None:
    """Wake every island of a world whose ``Model.gravity`` changed since the last step."""
    gravity = solver.model.gravity
    if gravity is None or sleep.gravity_seen is None:
        return
    n = min(gravity.shape[0], sleep.world_wake.shape[0])
    wp.launch(_wake_on_gravity, dim=n, inputs=[gravity, sleep.gravity_seen], outputs=[sleep.world_wake],
              device=solver.model.device)


@wp.kernel
def _wake_masked_worlds(articulation_world: wp.array[wp.int32], mask: wp.array[wp.bool],
                        articulation_asleep: wp.array[wp.int32], articulation_timer: wp.array[wp.float32]):
    a = wp.tid()  # one thread per articulation
    if mask[articulation_world[a]]:
        articulation_asleep[a] = 0
        articulation_timer[a] = 0.0


def wake_worlds(solver, sleep: SleepState, mask) -> None:
    """``reset``: wake the articulations of the worlds ``mask`` selects (``None``: all) and restart their timers."""
    if mask is None:
        wake_all(sleep)
        return
    if sleep.articulation_count:
        wp.launch(_wake_masked_worlds, dim=sleep.articulation_count, inputs=[sleep.articulation_world, mask],
                  outputs=[sleep.articulation_asleep, sleep.articulation_timer], device=solver.model.device)


def wake_all(sleep: SleepState) -> None:
    """``notify_model_changed`` (first version: any flag) and a full ``reset``: every island wakes."""
    sleep.articulation_asleep.zero_()
    sleep.articulation_timer.zero_()


# -- timers and the fall-asleep decision -------------------------------------------------------------


@wp.kernel
def _collect_island_awake(
    articulation_label: wp.array[wp.int32],
    articulation_world: wp.array[wp.int32],
    articulation_asleep: wp.array[wp.int32],
    articulation_wake: wp.array[wp.int32],
    world_wake: wp.array[wp.int32],
    world_overflow: wp.array[wp.bool],
    island_supported: wp.array[wp.int32],
    island_awake_out: wp.array[wp.int32],
    island_timer_out: wp.array[wp.float32],
):
    a = wp.tid()  # one thread per articulation
    r = articulation_label[a]
    w = articulation_world[a]
    island_timer_out[a] = BIG_TIME  # every index is reset; labels are a subset of indices
    if (articulation_asleep[a] == 0 or articulation_wake[a] != 0 or world_wake[w] != 0 or world_overflow[w]
            or island_supported[r] == 0):
        island_awake_out[r] = 1


@wp.kernel
def _advance_timers(
    dt: float,
    linear_threshold: float,
    angular_threshold: float,
    # Model:
    articulation_start: wp.array[int],
    joint_child: wp.array[int],
    # Tables:
    articulation_label: wp.array[wp.int32],
    articulation_world: wp.array[wp.int32],
    articulation_stay_awake: wp.array[wp.int32],
    articulation_wake: wp.array[wp.int32],
    world_wake: wp.array[wp.int32],
    world_overflow: wp.array[wp.bool],
    island_supported: wp.array[wp.int32],
    island_awake: wp.array[wp.int32],
    # Data in:
    body_qd: wp.array[wp.spatial_vector],
    # Data in/out:
    articulation_asleep: wp.array[wp.int32],
    articulation_timer: wp.array[wp.float32],
    island_timer: wp.array[wp.float32],
):
    a = wp.tid()  # one thread per articulation
    r = articulation_label[a]
    if island_awake[r] == 0:
        return  # the whole island sleeps on
    articulation_asleep[a] = 0
    w = articulation_world[a]
    quiet = (island_supported[r] != 0 and articulation_stay_awake[a] == 0 and articulation_wake[a] == 0
             and world_wake[w] == 0 and not world_overflow[w])
    for j in range(articulation_start[a], articulation_start[a + 1]):
        v = body_qd[joint_child[j]]
        if not (wp.length(wp.spatial_top(v)) < linear_threshold and wp.length(wp.spatial_bottom(v)) < angular_threshold):
            quiet = False  # a NaN velocity is not quiet either
    t = wp.float32(0.0)
    if quiet:
        t = articulation_timer[a] + wp.float32(dt)
    articulation_timer[a] = t
    wp.atomic_min(island_timer, r, t)


@wp.kernel
def _fall_asleep(
    quiet_time: wp.float32,
    articulation_label: wp.array[wp.int32],
    island_awake: wp.array[wp.int32],
    island_timer: wp.array[wp.float32],
    articulation_asleep: wp.array[wp.int32],
    any_awake_out: wp.array[wp.int32],
):
    a = wp.tid()  # one thread per articulation
    r = articulation_label[a]
    if island_awake[r] != 0 and island_timer[r] >= quiet_time:
        articulation_asleep[a] = 1
    if articulation_asleep[a] == 0:
        any_awake_out[0] = 1


@wp.kernel
def _record_frozen_coords(coord_articulation: wp.array[wp.int32], articulation_asleep: wp.array[wp.int32],
                          joint_q: wp.array[float], frozen_joint_q_out: wp.array[float]):
    c = wp.tid()  # one thread per coordinate; an asleep articulation's input equals its frozen state
    a = coord_articulation[c]
    if a >= 0 and articulation_asleep[a] != 0:
        frozen_joint_q_out[c] = joint_q[c]


@wp.kernel
def _record_frozen_bodies(body_articulation: wp.array[wp.int32], articulation_asleep: wp.array[wp.int32],
                          body_q: wp.array[wp.transform], frozen_body_q_out: wp.array[wp.transform]):
    b = wp.tid()  # one thread per body
    a = body_articulation[b]
    if a >= 0 and articulation_asleep[a] != 0:
        frozen_body_q_out[b] = body_q[b]


def update_sleep(solver, sleep: SleepState, state_in, dt: float) -> None:
    """Wake islands that must wake, advance the quiet timers, put quiet islands to sleep and record
    the frozen state of every asleep articulation from the (kinematically consistent) input."""
    model, dev, n = solver.model, solver.model.device, sleep.articulation_count
    isl = sleep.islands
    sleep.any_awake.zero_()
    if n:
        sleep.island_awake.zero_()
        overflow = solver.rows.constraint_overflow
        wp.launch(_collect_island_awake, dim=n,
                  inputs=[isl.articulation_label, sleep.articulation_world, sleep.articulation_asleep,
                          sleep.articulation_wake, sleep.world_wake, overflow, isl.island_supported],
                  outputs=[sleep.island_awake, sleep.island_timer], device=dev)
        wp.launch(_advance_timers, dim=n,
                  inputs=[float(dt), sleep.linear_threshold, sleep.angular_threshold, model.articulation_start,
                          model.joint_child, isl.articulation_label, sleep.articulation_world,
                          sleep.articulation_stay_awake, sleep.articulation_wake, sleep.world_wake, overflow,
                          isl.island_supported, sleep.island_awake, state_in.body_qd],
                  outputs=[sleep.articulation_asleep, sleep.articulation_timer, sleep.island_timer], device=dev)
        wp.launch(_fall_asleep, dim=n,
                  inputs=[wp.float32(sleep.quiet_time), isl.articulation_label, sleep.island_awake, sleep.island_timer],
                  outputs=[sleep.articulation_asleep, sleep.any_awake], device=dev)
    if model.joint_coord_count:
        wp.launch(_record_frozen_coords, dim=model.joint_coord_count,
                  inputs=[sleep.coord_articulation, sleep.articulation_asleep, state_in.joint_q],
                  outputs=[sleep.frozen_joint_q], device=dev)
    if model.body_count:
        wp.launch(_record_frozen_bodies, dim=model.body_count,
                  inputs=[sleep.body_articulation, sleep.articulation_asleep, state_in.body_q],
                  outputs=[sleep.frozen_body_q], device=dev)
    sleep.articulation_wake.zero_()
    sleep.world_wake.zero_()


# -- freeze ------------------------------------------------------------------------------------------


@wp.kernel
def _freeze_coords(coord_articulation: wp.array[wp.int32], articulation_asleep: wp.array[wp.int32],
                   frozen_joint_q: wp.array[float], joint_q_out: wp.array[float]):
    c = wp.tid()
    a = coord_articulation[c]
    if a >= 0 and articulation_asleep[a] != 0:
        joint_q_out[c] = frozen_joint_q[c]


@wp.kernel
def _freeze_dofs(dof_articulation: wp.array[wp.int32], articulation_asleep: wp.array[wp.int32],
                 joint_qd_out: wp.array[float]):
    d = wp.tid()
    a = dof_articulation[d]
    if a >= 0 and articulation_asleep[a] != 0:
        joint_qd_out[d] = 0.0


@wp.kernel
def _freeze_bodies(body_articulation: wp.array[wp.int32], articulation_asleep: wp.array[wp.int32],
                   frozen_body_q: wp.array[wp.transform], body_q_out: wp.array[wp.transform],
                   body_qd_out: wp.array[wp.spatial_vector]):
    b = wp.tid()
    a = body_articulation[b]
    if a >= 0 and articulation_asleep[a] != 0:
        body_q_out[b] = frozen_body_q[b]
        body_qd_out[b] = wp.spatial_vector()


def freeze_outputs(solver, sleep: SleepState, state_out) -> None:
    """Publish the frozen state of every asleep articulation: its pose, zero velocity.

    ``body_q`` is written from the frozen copy rather than by forward kinematics of the frozen
    ``joint_q``: both are bitwise equal (the copy was made by the same kinematics), and the copy
    saves a kinematics pass.
    """
    model, dev = solver.model, solver.model.device
    if model.joint_coord_count:
        wp.launch(_freeze_coords, dim=model.joint_coord_count,
                  inputs=[sleep.coord_articulation, sleep.articulation_asleep, sleep.frozen_joint_q],
                  outputs=[state_out.joint_q], device=dev)
    if model.joint_dof_count:
        wp.launch(_freeze_dofs, dim=model.joint_dof_count, inputs=[sleep.dof_articulation, sleep.articulation_asleep],
                  outputs=[state_out.joint_qd], device=dev)
    if model.body_count:
        wp.launch(_freeze_bodies, dim=model.body_count,
                  inputs=[sleep.body_articulation, sleep.articulation_asleep, sleep.frozen_body_q],
                  outputs=[state_out.body_q, state_out.body_qd], device=dev)


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


def write_body_awake(solver, sleep: SleepState, body_awake) -> None:
    """``body_awake[b]``: True unless body ``b``'s articulation is asleep."""
    if solver.model.body_count:
        wp.launch(_body_awake, dim=solver.model.body_count, inputs=[sleep.body_articulation, sleep.articulation_asleep],
                  outputs=[body_awake], device=solver.model.device)


def write_sleep_observables(solver, sleep: SleepState, observables, contacts) -> None:
    """``body_awake`` when requested; with ``sleep_skip_constraints`` the contacts of asleep
    articulations report zero ``contact_f`` (their rows count as skipped)."""
    if observables is None:
        return
    if observables.is_requested("body_awake") and observables.body_awake is not None:
        write_body_awake(solver, sleep, observables.body_awake)
    if (sleep.skip_constraints and observables.is_requested("contact_f") and observables.contact_f is not None
            and contacts is not None and contacts.rigid_contact_max > 0):
        wp.launch(_zero_asleep_contact_f, dim=contacts.rigid_contact_max,
                  inputs=[solver.model.shape_body, sleep.body_articulation, sleep.articulation_asleep,
                          contacts.rigid_contact_count, contacts.rigid_contact_shape0, contacts.rigid_contact_shape1],
                  outputs=[observables.contact_f], device=solver.model.device)


# -- the step ----------------------------------------------------------------------------------------


def step_with_sleeping(solver, sleep: SleepState, state_in, state_out, control, contacts, dt: float,
                       observables, advance) -> None:
    """One step with sleeping (module docstring, steps 1-5); ``advance(kinematics_done)`` runs the solve."""
    model = solver.model
    wake_on_state_change(solver, sleep, state_in)
    solver.core.kinematics(state_in.joint_q, state_in.joint_qd, state_in.body_q, state_in.body_qd)
    wake_on_applied_forces(solver, sleep, state_in, control)
    wake_on_gravity_change(solver, sleep)
    label_islands(solver, sleep.islands, contacts)
    update_sleep(solver, sleep, state_in, dt)

    if not sleep.skip_constraints:
        advance(True)  # keep every row and the dynamics; only the published state freezes
    else:
        def pass_through():
            if state_out is not state_in:
                for name, count in (("joint_q", model.joint_coord_count), ("joint_qd", model.joint_dof_count),
                                    ("body_q", model.body_count), ("body_qd", model.body_count)):
                    if count:
                        wp.copy(getattr(state_out, name), getattr(state_in, name))
            if observables is not None and observables.is_requested("contact_f") and observables.contact_f is not None:
                observables.contact_f.zero_()  # every row is skipped

        wp.capture_if(sleep.any_awake, on_true=lambda: advance(True), on_false=pass_through)
    freeze_outputs(solver, sleep, state_out)
    write_sleep_observables(solver, sleep, observables, contacts)


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
