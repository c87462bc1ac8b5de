"""SolverVBD's step observables: ``contact_f``, one wrench per contact record at the final configuration.

Layout and convention (Newton 1.8.0's ``Observables.contact_f``, the same as the deprecated
``Contacts.force``): shape ``(rigid_contact_max + soft_contact_max,)`` of the allocation contacts,
``(force [N], torque [N·m])`` in world frame.

* Rigid row ``i``: the wrench body 1 exerts on body 0 (the bodies of ``rigid_contact_shape0/1``),
  torque about body 0's COM at the final pose, or about the world origin when shape 0 is static.
  The force is minus ``force_on_body1`` of :meth:`SolverVBD.collect_rigid_contact_forces` with the
  step's input poses as the previous poses (what the solve used), applied at shape 0's surface anchor.
* Soft row ``rigid_contact_max + c``: the wrench the soft feature of record ``c`` (a particle, or with
  full-surface contacts an edge or triangle) exerts on the body of ``soft_contact_shape[c]``: minus the
  contact's force on the soft point (:func:`.particles.contacts.record_force_hessian`, the law the
  vertex step uses: penalty or log barrier, damper and IPC friction, at the particles' final positions
  and, on a body VBD integrates, the body's final pose), applied at the shape's contact point
  ``soft_contact_body_pos`` in world frame; torque about that body's COM, or about the world origin on a
  static shape.

Measured on Newton's SolverVBD (a box resting on a ground plane, shape 0 the plane): each row holds
``(0, 0, -f)`` and the torque ``p × (0, 0, -f)`` about the origin, with ``p`` the contact point; the
rows sum to ``-m g``.

Zero: rows past the live counts, rigid rows when another solver integrates the bodies
(``integrate_with_external_rigid_solver``) or no body is dynamic, soft records a particle did not
keep (past a list's capacity: they exerted nothing).
Soft self-contact is not reported.

The evaluation only reads the solve's data (contact rows, multipliers, particle contact lists) and
writes the observable array, so a step with and without observables gives bitwise the same states.
Launches: a clear, then one over the rigid rows and one over the soft records; no host reads, so it is
graph-capture safe once :func:`reserve` has sized the rigid outputs (done when the container is
allocated).
"""

from __future__ import annotations

import warp as wp

from .particles.contacts import ContactData, record_force_hessian
from ...launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.kernel
def _rigid_contact_wrenches(
    count: wp.array[wp.int32],
    body0: wp.array[wp.int32],
    point0: wp.array[wp.vec3],
    force_on_body1: wp.array[wp.vec3],
    body_q: wp.array[wp.transform],
    body_com: wp.array[wp.vec3],
    contact_f_out: wp.array[wp.spatial_vector],
):
    i = wp.tid()  # one thread per rigid contact row
    if i >= count[0]:
        return
    f = -force_on_body1[i]
    b = body0[i]
    origin = wp.vec3(0.0)
    if b >= 0:
        origin = wp.transform_point(body_q[b], body_com[b])
    contact_f_out[i] = wp.spatial_vector(f, wp.cross(point0[i] - origin, f))


@wp.kernel
def _soft_contact_wrenches(
    cd: ContactData,
    record_count: wp.array[wp.int32],
    particle_q: wp.array[wp.vec3],
    particle_q_prev: wp.array[wp.vec3],
    shape_body: wp.array[wp.int32],
    contact_shape: wp.array[int],
    contact_body_pos: wp.array[wp.vec3],
    body_q: wp.array[wp.transform],
    body_com: wp.array[wp.vec3],
    row0: int,
    dt: float,
    contact_f_out: wp.array[wp.spatial_vector],
):
    c = wp.tid()  # one thread per soft-contact record (a record not kept has zero material: a zero row)
    if c >= record_count[0] or cd.corners[c][0] < 0 or contact_shape[c] < 0:
        return
    f, h = record_force_hessian(cd, c, particle_q, particle_q_prev, dt)
    force = -f  # on the shape's body
    b = shape_body[contact_shape[c]]
    x = contact_body_pos[c]
    origin = wp.vec3(0.0)
    if b >= 0:
        x = wp.transform_point(body_q[b], x)
        origin = wp.transform_point(body_q[b], body_com[b])
    contact_f_out[row0 + c] = wp.spatial_vector(force, wp.cross(x - origin, force))


def reserve(solver, contacts) -> None:
    """Size the rigid force outputs for ``contacts`` now, so no step allocates them (graph capture)."""
    rc = solver.rigid.contacts if solver.rigid is not None else None
    if rc is not None and contacts is not None:
        rc.forces(solver.model.body_q, solver.model.body_q, contacts, 1.0)


def write_observables(solver, observables, contacts, state_in, state_out, dt: float) -> None:
    """Fill ``observables.contact_f`` for the step that just wrote ``state_out`` (see the module)."""
    if observables is None or not observables.is_requested("contact_f") or observables.contact_f is None:
        return
    out, model = observables.contact_f, solver.model
    out.zero_()
    if contacts is None:
        return
    dev = model.device
    rc = solver.rigid.contacts if solver.rigid is not None else None
    if rc is not None and contacts.rigid_contact_max > 0:
        body0, _, point0, _, force1, count = rc.forces(state_out.body_q, state_in.body_q, contacts, dt)
        launch(_rigid_contact_wrenches, dim=force1.shape[0],
               inputs=[count, body0, point0, force1, state_out.body_q, model.body_com], outputs=[out], device=dev)
    work = solver.work
    if work is None or work.ramp_records is None or contacts.soft_contact_max == 0:
        return
    body_q = state_out.body_q if model.body_count else work.empty_transform
    body_com = model.body_com if model.body_count else work.empty_vec3
    launch(_soft_contact_wrenches, dim=contacts.soft_contact_max,
           inputs=[work.contact_data, contacts.soft_contact_count, state_out.particle_q, work.particle_q_prev,
                   model.shape_body,
                   contacts.soft_contact_shape, contacts.soft_contact_body_pos, body_q, body_com,
                   int(contacts.rigid_contact_max), float(dt)],
           outputs=[out], device=dev)


__all__ = ["reserve", "write_observables"]
