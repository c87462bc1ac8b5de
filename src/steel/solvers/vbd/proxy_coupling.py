"""Hooks through which Newton's proxy coupler (``SolverCoupledProxy``) drives SolverVBD as a destination.

In proxy coupling another solver (the source) integrates some bodies or particles; VBD receives copies
of them (proxies, flagged ``BodyFlags.PROXY`` / ``ParticleFlags.PROXY`` in its model view), steps them
with its own entities, and hands back the force its entities put on each proxy over the step.

Feedback here is **contact-force based**, not the coupler's default momentum estimate
``m Δv / dt``: VBD also resolves proxy–proxy and proxy–static contacts inside its solve (they make the
coupled solve stiffer), and those must not reach the source. So the harvest sums only the contact
forces between a proxy and a non-proxy entity VBD integrates, evaluated with the same contact
law as the solve (:func:`.particles.contacts.contact_force_hessian`: penalty normal force, absolute
damper and IPC-smoothed friction; Chen et al., "Vertex Block Descent", ACM TOG 43(4) 2024, sec. 3.7)
at the step's final iterate:

* proxy body ``b`` touched by a non-proxy particle: the reaction ``-f`` at the shape point ``p`` and the
  torque ``(p - x_com) × (-f)`` about the body's COM [N, N·m], in Newton's ``(force, torque)`` order;
* proxy particle touching a non-proxy body VBD integrates: the contact force ``f`` on it [N];
* proxy body touching a non-proxy body VBD integrates: the body–body contact force of
  :meth:`SolverVBD.collect_rigid_contact_forces` and its torque about the proxy's COM.

Contacts against static, kinematic or externally integrated shapes are proxy–static and give nothing.
"""

from __future__ import annotations

import warp as wp

import newton

from .particles.contacts import ContactData, contact_force_hessian, contact_frame, contact_material

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
    particle_q: wp.array[wp.vec3],
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
        point, normal, disp = contact_frame(cd, c)
        f, h = contact_force_hessian(particle_q[p], particle_q_prev[p], point, normal, disp,
                                     contact_material(cd, c), cd.friction_epsilon, dt)
        if body_is_proxy and body_map.shape[0] > 0:
            g = body_map[b]
            if g >= 0:
                x_com = wp.transform_point(cd.body_q[b], body_com[b])
                wp.atomic_add(out_body_f, g, wp.spatial_vector(-f, wp.cross(point - x_com, -f)))
        if particle_is_proxy and particle_map.shape[0] > 0:
            g = particle_map[p]
            if g >= 0:
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
    wp.launch(_harvest_body_contacts, dim=f1.shape[0],
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
    Two launches: clear the proxies' entries, then one over the particles.
    """
    _check_dt(dt)
    model, work = solver.model, solver.work
    if body_map is not None and body_map.shape[0]:
        wp.launch(_clear_body_feedback, dim=body_map.shape[0], inputs=[body_map], outputs=[out_body_f],
                  device=model.device)
    if particle_map is not None and particle_map.shape[0]:
        wp.launch(_clear_particle_feedback, dim=particle_map.shape[0], inputs=[particle_map],
                  outputs=[out_particle_f], device=model.device)
    if work is None or work.ramp_records is None:
        return  # no particles, or the last step ran without soft contacts
    dev = model.device
    empty_map = wp.empty(0, dtype=int, device=dev)
    wp.launch(
        _harvest_particle_contacts,
        dim=model.particle_count,
        inputs=[work.contact_data, state_out.particle_q, work.particle_q_prev,
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


def check_input_update(flags, dt) -> None:
    """Validate a ``coupling_notify_input_state_update`` call (before anything changes)."""
    if isinstance(flags, bool) or not isinstance(flags, int):
        raise TypeError(f"flags must be newton.StateFlags or int, got {flags!r}")
    if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not dt >= 0.0:
        raise ValueError(f"dt must be a number >= 0 [s], got {dt!r}")


def check_iteration_restarts(enabled, has_rigid: bool) -> None:
    """Refuse coupled iteration restarts where the rigid AVBD history would be advanced twice in one step."""
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool, got {enabled!r}")
    if enabled and has_rigid:
        raise NotImplementedError(
            "SolverVBD: coupled iteration restarts (SolverCoupledProxy iterations > 1) with bodies VBD integrates: "
            "the augmented-Lagrangian multipliers and penalties are not rewound to the step's start"
        )


def _check_dt(dt) -> None:
    if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not dt > 0.0:
        raise ValueError(f"dt must be a positive number of seconds, got {dt!r}")
