"""Hooks through which Newton's proxy coupler (``SolverCoupledProxy``) drives SolverVBD as a destination.

In proxy coupling another solver (the source) integrates some bodies or particles; VBD receives copies
of them (proxies, flagged ``BodyFlags.PROXY`` / ``ParticleFlags.PROXY`` in its model view), steps them
with its own entities, and hands back the force its entities put on each proxy over the step.

Feedback here is **contact-force based**, not the coupler's default momentum estimate
``m Δv / dt``: VBD also resolves proxy–proxy and proxy–static contacts inside its solve (they make the
coupled solve stiffer), and those must not reach the source. So the harvest sums only the contact
forces between a proxy and a non-proxy entity VBD integrates, evaluated with the same contact
law as the solve (:func:`.particles.contacts.contact_force_hessian`: penalty normal force, absolute
damper and IPC-smoothed friction; Chen et al., "Vertex Block Descent", ACM TOG 43(4) 2024, sec. 3.7):

* proxy body ``b`` touched by a non-proxy particle: the reaction ``-f`` of the force ``f`` the
  particle's last vertex step applied (see :func:`harvest_contact_feedback`) and its torque
  ``(x_t - x_com) × (-f)`` about the body's COM, with ``x_t`` the particle's start-of-step position
  [N, N·m], in Newton's ``(force, torque)`` order;
* proxy particle touching a non-proxy body VBD integrates: the contact force ``f`` on it at the
  step's final iterate [N];
* proxy body touching a non-proxy body VBD integrates: the body–body contact force of
  :meth:`SolverVBD.collect_rigid_contact_forces` and its torque about the proxy's COM;
* proxy particle in a self-contact pair (vertex–triangle or edge–edge, with
  ``particle_enable_self_contact``) that has a non-proxy vertex: the pair's force on it at the final
  iterate, ``β_k`` times the pair force (:mod:`.particles.self_contact_force`). The weights of a pair sum
  to zero, so what the proxies get is minus what the non-proxy vertices got at the same iterate.
  Fixed (zero inverse mass) non-proxy vertices count too: the source knows nothing of them.

Contacts against static, kinematic or externally integrated shapes are proxy–static and give nothing.

A full-surface (edge or face) record counts as the shares ``b_i f`` its particles took
(:mod:`.particles.contacts`): each particle's thread adds its own share's reaction, about its own
start-of-step position, so the record's whole reaction reaches a proxy body. Its linear continuation
evaluates the record with all its particles at the snapshot and continues only the thread's own
particle (``b_i² H``), an approximation where the other particles moved within the last sweep.
Proxy-particle harvesting after a step on full-surface contacts is refused (``NotImplementedError``,
the specification's choice).

Coupled iteration restarts (``SolverCoupledProxy`` with ``iterations > 1``) re-solve a step from the
history its first pass started from (:class:`StepRewind`).
"""

from __future__ import annotations

import warp as wp

import newton

from .particles.contacts import ContactData, record_force_hessian, record_weight
from .particles.self_contact_force import SelfContactData, entry_force_hessian, entry_vertices
from .rigid.bodies import BodyData
from .rigid.contacts import ContactData as RigidContactData
from .rigid.contacts import ContactHistory
from .rigid.joints import JointData
from .rigid.tendons import TendonData
from ..inputs import check_bool
from ...launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.kernel
def _clear_body_feedback(body_map: wp.array[int], out: wp.array[wp.spatial_vector]):
    g = body_map[wp.tid()]
    if g >= 0:
        out[g] = wp.spatial_vector()


@wp.kernel
def _clear_particle_feedback(particle_map: wp.array[int], out: wp.array[wp.vec3]):
    g = particle_map[wp.tid()]
    if g >= 0:
        out[g] = wp.vec3(0.0)


@wp.kernel
def _harvest_particle_contacts(
    cd: ContactData,
    cd_last: ContactData,
    particle_q: wp.array[wp.vec3],
    particle_q_last: wp.array[wp.vec3],
    particle_q_prev: wp.array[wp.vec3],
    body_com: wp.array[wp.vec3],
    particle_flags: wp.array[wp.int32],
    body_flags: wp.array[wp.int32],
    particle_proxy_flag: int,
    body_proxy_flag: int,
    dt: float,
    body_map: wp.array[int],
    particle_map: wp.array[int],
    out_body_f: wp.array[wp.spatial_vector],
    out_particle_f: wp.array[wp.vec3],
):
    p = wp.tid()  # one thread per particle: its kept contacts, exactly those the solve applied
    n = wp.min(cd.particle_contact_count[p], cd.particle_contact.shape[1])
    particle_is_proxy = (particle_flags[p] & particle_proxy_flag) != 0
    for k in range(n):
        c = cd.particle_contact[p, k]
        b = cd.body[c]
        if b < 0:
            continue  # a shape VBD does not integrate: proxy-static, no feedback
        body_is_proxy = (body_flags[b] & body_proxy_flag) != 0
        if body_is_proxy == particle_is_proxy:
            continue  # proxy-proxy (or no proxy at all): nothing crosses the coupling
        if body_is_proxy and body_map.shape[0] > 0:
            g = body_map[b]
            if g >= 0:
                # The force the particle's last vertex step applied: evaluated where that step
                # started, continued linearly to where it ended (see harvest_contact_feedback).
                # A full-surface record's share is this particle's weight b of it (b = 1 for its own record).
                w = record_weight(cd, c, p)
                fc, hc = record_force_hessian(cd_last, c, particle_q_last, particle_q_prev, dt)
                f = w * fc - (w * w) * (hc * (particle_q[p] - particle_q_last[p]))
                x_com = wp.transform_point(cd.body_q[b], body_com[b])
                wp.atomic_add(out_body_f, g, wp.spatial_vector(-f, wp.cross(particle_q_prev[p] - x_com, -f)))
        if particle_is_proxy and particle_map.shape[0] > 0:
            g = particle_map[p]
            if g >= 0:
                fc, hc = record_force_hessian(cd, c, particle_q, particle_q_prev, dt)
                wp.atomic_add(out_particle_f, g, record_weight(cd, c, p) * fc)


@wp.kernel
def _harvest_self_contacts(
    sc: SelfContactData,
    particle_q: wp.array[wp.vec3],
    particle_q_prev: wp.array[wp.vec3],
    particle_flags: wp.array[wp.int32],
    particle_proxy_flag: int,
    dt: float,
    particle_map: wp.array[int],
    out_particle_f: wp.array[wp.vec3],
):
    i = wp.tid()  # one thread per particle: the self-contact pairs it is a vertex of
    g = particle_map[i]
    if g < 0:
        return
    f = wp.vec3(0.0)
    end = sc.incident_end[i]
    for k in range(end - sc.incident_count[i], end):
        code = sc.incident_entry[k]
        p = entry_vertices(sc, code)
        mixed = False
        for r in range(4):
            if (particle_flags[p[r]] & particle_proxy_flag) == 0:
                mixed = True
        if mixed:  # a pair of proxy primitives only is proxy-proxy: its forces cancel among the proxies
            fc, hc = entry_force_hessian(sc, code, particle_q, particle_q_prev, dt)
            f += fc
    wp.atomic_add(out_particle_f, g, f)


@wp.kernel
def _harvest_body_contacts(
    count: wp.array[wp.int32],
    body0: wp.array[wp.int32],
    body1: wp.array[wp.int32],
    point0: wp.array[wp.vec3],
    point1: wp.array[wp.vec3],
    force_on_body1: wp.array[wp.vec3],
    body_q: wp.array[wp.transform],
    body_com: wp.array[wp.vec3],
    body_inv_mass: wp.array[float],
    body_flags: wp.array[wp.int32],
    body_proxy_flag: int,
    body_map: wp.array[int],
    out_body_f: wp.array[wp.spatial_vector],
):
    i = wp.tid()  # one thread per reported body–body contact
    if i >= count[0]:
        return
    b0 = body0[i]
    b1 = body1[i]
    if b0 < 0 or b1 < 0 or body_inv_mass[b0] == 0.0 or body_inv_mass[b1] == 0.0:
        return  # against a static or kinematic body: proxy-static, no feedback
    proxy0 = (body_flags[b0] & body_proxy_flag) != 0
    proxy1 = (body_flags[b1] & body_proxy_flag) != 0
    if proxy0 == proxy1:
        return  # proxy-proxy (or no proxy)
    f1 = force_on_body1[i]
    if proxy0:
        g = body_map[b0]
        if g >= 0:
            x_com = wp.transform_point(body_q[b0], body_com[b0])
            wp.atomic_add(out_body_f, g, wp.spatial_vector(-f1, wp.cross(point0[i] - x_com, -f1)))
    else:
        g = body_map[b1]
        if g >= 0:
            x_com = wp.transform_point(body_q[b1], body_com[b1])
            wp.atomic_add(out_body_f, g, wp.spatial_vector(f1, wp.cross(point1[i] - x_com, f1)))


def harvest_body_contact_feedback(solver, state, state_out, contacts, dt: float, body_map, out_body_f) -> None:
    """Add the body–body contact wrenches between proxy and non-proxy VBD bodies (after the particle harvest).

    Forces come from :meth:`SolverVBD.collect_rigid_contact_forces` with the step's input poses
    ``state.body_q`` as the previous poses (the coupler wrote the proxies' rows there).
    """
    model = solver.model
    if solver.rigid is None or contacts is None or not model.body_count or not body_map.shape[0]:
        return
    b0, b1, p0, p1, f1, count = solver.collect_rigid_contact_forces(state_out.body_q, state.body_q, contacts, dt)
    launch(_harvest_body_contacts, dim=f1.shape[0],
              inputs=[count, b0, b1, p0, p1, f1, state_out.body_q, model.body_com, model.body_inv_mass,
                      model.body_flags, int(newton.BodyFlags.PROXY), body_map],
              outputs=[out_body_f], device=model.device)


def harvest_contact_feedback(solver, state_out, dt: float, body_map=None, out_body_f=None, particle_map=None,
                             out_particle_f=None) -> None:
    """Write the last step's proxy contact forces into ``out_body_f`` / ``out_particle_f`` (global proxy ids).

    ``body_map`` / ``particle_map`` are the coupler's dense local -> global proxy id maps (-1: not a proxy).
    The proxies' entries are overwritten, not added to: in lagged mode the buffer still holds the
    previous step's feedback, which the rewind already took out of this step's input (the default
    momentum harvest adds ``f_new - f_prev`` to it; a contact force is ``f_new`` itself).
    Launches: clear the proxies' entries, then one over the particles for self-contact pairs (proxy
    particles, with self-contact on) and one for shape contacts.

    On a proxy body the force is the one each particle's last vertex step applied, not the force at
    the final iterate: ``f(x_s) - H (x - x_s)`` with ``x_s`` the particle and the body pose where the
    last sweep started (:class:`ProxySnapshot`) and ``x`` where the particle ended. A vertex step is a
    Newton step, so the contact part of ``m (v - v_t) / dt`` is exactly that linear model's force, also
    where the solve has not converged: a particle grazing a contact can alternate in and out of it
    from one iteration to the next and at the final iterate show a force it never felt (the
    off-centre cloth thrown on a proxy box drifted the momentum +1.33 % that way, at 20 and at 80
    iterations, while the contact damper still switched with the depth; +0.146 % this way, the rest being
    the cloth's own unconverged forces; with the damper continuous, 2.1e-5). The torque is
    taken about the particle's start-of-step position ``x_t``: a particle's angular momentum changes
    by ``x_t × m Δv`` over an implicit-Euler step, so the pair keeps the total angular momentum.
    """
    _check_dt(dt)
    model, work = solver.model, solver.work
    if body_map is not None and body_map.shape[0]:
        launch(_clear_body_feedback, dim=body_map.shape[0], inputs=[body_map], outputs=[out_body_f],
                  device=model.device)
    if particle_map is not None and particle_map.shape[0]:
        launch(_clear_particle_feedback, dim=particle_map.shape[0], inputs=[particle_map],
                  outputs=[out_particle_f], device=model.device)
    dev = model.device
    sc = solver.self_contact
    if sc is not None and particle_map is not None and particle_map.shape[0]:
        launch(_harvest_self_contacts, dim=model.particle_count,
                  inputs=[sc.data, state_out.particle_q, work.particle_q_prev, model.particle_flags,
                          int(newton.ParticleFlags.PROXY), float(dt), particle_map],
                  outputs=[out_particle_f], device=dev)
    if work is None or work.ramp_records is None:
        return  # no particles, or the last step ran without soft contacts
    empty_map = wp.empty(0, dtype=int, device=dev)
    cd, q_last = work.contact_data, state_out.particle_q
    last = solver.proxy_snapshot
    if last is not None:
        cd, q_last = last.contact_data(work.contact_data), last.particle_q
    launch(
        _harvest_particle_contacts,
        dim=model.particle_count,
        inputs=[work.contact_data, cd, state_out.particle_q, q_last, work.particle_q_prev,
                model.body_com if model.body_count else wp.empty(1, dtype=wp.vec3, device=dev),
                model.particle_flags,
                model.body_flags if model.body_count else wp.empty(1, dtype=wp.int32, device=dev),
                int(newton.ParticleFlags.PROXY), int(newton.BodyFlags.PROXY), float(dt),
                empty_map if body_map is None else body_map,
                empty_map if particle_map is None else particle_map],
        outputs=[wp.empty(1, dtype=wp.spatial_vector, device=dev) if out_body_f is None else out_body_f,
                 wp.empty(1, dtype=wp.vec3, device=dev) if out_particle_f is None else out_particle_f],
        device=dev,
    )


class ProxySnapshot:
    """Particle and body poses where the last particle sweep of a step starts (proxy-body destinations only).

    Two copies per step (:meth:`take`, called by the step before its last sweep); the harvest of
    :func:`harvest_contact_feedback` evaluates the particles' proxy-body contacts there.
    """

    def __init__(self, model):
        self.particle_q = wp.zeros(model.particle_count, dtype=wp.vec3, device=model.device)  # [m]
        self.body_q = wp.zeros(model.body_count, dtype=wp.transform, device=model.device)

    def take(self, state) -> None:
        wp.copy(self.particle_q, state.particle_q)
        wp.copy(self.body_q, state.body_q)

    def contact_data(self, cd: ContactData) -> ContactData:
        """``cd`` with its contacts placed at the snapshot's body poses."""
        out = ContactData()
        for name in ContactData.vars:
            setattr(out, name, getattr(cd, name))
        out.body_q = self.body_q
        return out


def proxy_snapshot(model, coupling) -> ProxySnapshot | None:
    """A :class:`ProxySnapshot` when particles may touch proxy bodies VBD integrates (flags read here, once).

    ``coupling``: the solver's body–particle coupling; None means no particle contact on a dynamic
    body, so no snapshot is needed (nor taken: only the coupled step takes it).
    """
    if coupling is None:
        return None
    proxy = (model.body_flags.numpy() & int(newton.BodyFlags.PROXY)) != 0
    return ProxySnapshot(model) if proxy.any() else None


def check_input_update(flags, dt) -> None:
    """Validate a ``coupling_notify_input_state_update`` call (before anything changes)."""
    if isinstance(flags, bool) or not isinstance(flags, int):
        raise TypeError(f"flags must be newton.StateFlags or int, got {flags!r}")
    if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not dt >= 0.0:
        raise ValueError(f"dt must be a number >= 0 [s], got {dt!r}")


def check_iteration_restarts(enabled) -> None:
    """Validate a ``coupling_notify_iteration_restarts`` call."""
    check_bool("enabled", enabled)


class StepRewind:
    """The solver's history at a step's start, put back before each coupled iteration restart of that step.

    A proxy coupler with ``iterations > 1`` solves one step several times from the same input
    state (only the proxies' feedback changes between passes). Every pass must then start from the
    same history: the rigid stage's augmented-Lagrangian state (joint, mimic, tendon and contact
    multipliers ``λ`` and penalties ``k``, contact rows and their warm-start history, start-of-step joint coordinates,
    the previous step's body velocities of the adaptive start) and the particles' previous-step
    velocities (their adaptive start). :meth:`save` copies every array of the rigid state structs
    (joints, bodies, contact rows and history, reset marks), the particles' two history arrays and
    the one-shot contact flags at the start of a step's first pass; :meth:`restore` copies them back
    at the start of a restart, so a restart repeats the first pass bitwise when nothing else
    changed. Arrays that only mirror the model or the step's ``Contacts`` are copied too: they do
    not change within a step, so copying them back changes nothing. Where the first pass regrew the
    contact rows (a larger contact buffer), the new history arrays are zeroed (what a fresh
    allocation held) and the new rows are left alone: a contact refresh files them anew, and a field
    that now points at the step's ``Contacts`` must not be overwritten.
    """

    def __init__(self, solver):
        self.solver = solver
        self.saved = []  # (owner path, field, the live array when saved, its copy)
        self.copies = {}  # (owner path, field) -> the copy, reused from step to step while its shape holds
        self.rigid = None  # the rigid stage saved from (a model rebuild in between leaves nothing to restore)
        self.flags = None  # (update_next, filed) of the body–body contacts
        self.restart = False  # set by an iteration-restart notice: the next step restores

    def _owners(self):
        """(path, object, field names) of everything saved; read from the solver each time (rebuilds)."""
        rigid, work = self.solver.rigid, self.solver.work
        owners = [] if work is None else [("particles", work, ("particle_qd_last", "particle_has_last"))]
        if rigid is not None:
            owners += [("joints", rigid.joints, JointData.vars), ("bodies", rigid.bodies, BodyData.vars)]
            if rigid.contacts is not None:
                owners += [("contacts.data", rigid.contacts.data, RigidContactData.vars),
                           ("contacts.prev", rigid.contacts.prev, ContactHistory.vars),
                           ("contacts", rigid.contacts, ("cold_worlds",))]
            if rigid.mimics.count:
                owners.append(("mimics", rigid.mimics.data, ("lam",)))
            if rigid.tendons.count:  # tensions kept across steps by gamma (Newton's coupler refuses tendons;
                owners.append(("tendons", rigid.tendons.data, TendonData.vars))  # the hooks alone can restart)
        return owners

    def save(self) -> None:
        self.saved, seen = [], set()
        for path, owner, names in self._owners():
            for name in names:
                arr = getattr(owner, name)
                if not isinstance(arr, wp.array) or id(arr) in seen:
                    continue
                seen.add(id(arr))
                copy = self.copies.get((path, name))
                if copy is None or copy.shape != arr.shape or copy.dtype != arr.dtype:
                    copy = self.copies[(path, name)] = wp.clone(arr)
                else:
                    wp.copy(copy, arr)
                self.saved.append((path, name, arr, copy))
        self.rigid = self.solver.rigid
        rc = self.rigid.contacts if self.rigid is not None else None
        self.flags = None if rc is None else (rc.update_next, rc.filed)

    def restore(self) -> None:
        if self.solver.rigid is not self.rigid:
            return  # the model changed in between and the rigid stage was rebuilt cold
        owners = {path: owner for path, owner, _ in self._owners()}
        for path, name, arr, copy in self.saved:
            live = getattr(owners[path], name)
            if live is arr:
                wp.copy(live, copy)
            elif path == "contacts.prev":
                live.zero_()  # history regrown in the first pass: a fresh allocation held zeros
        rc = self.rigid.contacts if self.rigid is not None else None
        if rc is not None and self.flags is not None:
            rc.update_next, rc.filed = self.flags

    def begin_step(self) -> None:
        """At a step's start: restore after a restart notice, else save (a new step's first pass)."""
        if self.restart:
            self.restore()
        else:
            self.save()
        self.restart = False


def _check_dt(dt) -> None:
    if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not dt > 0.0:
        raise ValueError(f"dt must be a positive number of seconds, got {dt!r}")
