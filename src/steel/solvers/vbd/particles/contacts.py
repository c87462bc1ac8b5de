"""Particle–shape soft contacts: per-step preparation and the per-vertex force and Hessian.

Contacts come from ``newton.CollisionPipeline`` (``contacts.soft_contact_*``): one record per
(particle, shape) pair near each other, with the point on the shape in the body frame and the
normal pointing out of the shape. Edge and face records of full-surface contacts
(``soft_contact_particle == -1``) are not consumed here.

``prepare_contacts`` (one launch per step) turns each record into world-space data and files it in
its particle's list (``PARTICLE_CONTACT_CAPACITY`` slots; more than that in one step are dropped and
counted in ``contact_overflow``). Per contact ``c``:

* the shape point at the end of the step ``p_c`` [m] and normal ``n_c``. On static shapes and
  kinematic bodies: the body's pose in ``state_in`` moved by its velocity over ``dt`` (with an external
  rigid solver, the poses of ``state_in`` and ``state_out``, as the reference documents for one-way
  coupling). On a body VBD integrates (two-way coupling, :mod:`..coupling`) the point and normal
  follow the body's current iterate instead: the record keeps them in the body frame and
  :func:`contact_frame` places them with ``ContactData.body_q`` at every vertex visit;
* the shape point's displacement over the step ``du_c`` [m], the frame friction is relative to;
* the material: stiffness and damping are the arithmetic means of ``model.soft_contact_ke/kd`` and
  the shape's ``shape_material_ke/kd``, the friction coefficient the geometric mean
  ``sqrt(soft_contact_mu * shape_material_mu)`` (so a frictionless shape or particle set gives no
  friction), the contact offset the particle radius plus the shape margin. These are the rules of
  Newton's SolverVBD, measured with different particle and shape values (rest depth ``m g / ke``
  for ``ke``, a drop for ``kd``, incline deceleration for ``mu``; see test_particle_contacts.py).

Penalty ramp (seed: ``rigid_contact_k_start`` "also seeds body–particle contact ramps"): with a linear
AVBD beta > 0 (``rigid_avbd_linear_beta``, else ``rigid_avbd_beta``) the stiffness of every
particle–shape contact, static shapes and kinematic bodies included, is a per-contact ``k`` that starts
at ``min(rigid_contact_k_start, ke)`` at every step and grows before each sweep by ``β depth`` at the
current iterate, up to ``ke`` (:func:`ramp_contacts`, one launch per iteration; damping stays absolute).
So measured on Newton's SolverVBD: a 0.01 kg particle on a box follows its depth within 0.05 % at β 1e4
and 1e7 (0.64 and 0.026 mm after 60 steps; ramping after the sweep instead left it 9 % deeper at 1e7),
and at a vanishing β rests ``m g / k_start`` deep.

``contact_force_hessian`` is the penalty energy ``ke/2 d²`` of the penetration depth
``d = r + margin - n·(x - p)`` (positive inside), an absolute normal damper ``kd`` on the relative
normal rate, and smoothed Coulomb friction after IPC (Li et al., "Incremental Potential Contact",
ACM TOG 39(4) 2020, eq. 14-16): with the relative tangential slip over the step
``u = T (x - x_t - du)``, ``T = I - n nᵀ``, and ``ε = friction_epsilon · dt``,

    f = -μ f_n f₁(|u|) u/|u|,   f₁(s) = 2s/ε - s²/ε² for s < ε else 1,   H ≈ μ f_n f₁(|u|)/|u| T

(``f_n = ke d``; the lagged, positive semi-definite Hessian of IPC). Below ``ε`` the friction is a
stiff spring ``2 μ f_n / ε`` that holds a particle on a slope below the friction angle.
"""

from __future__ import annotations

import warp as wp

from ....launches import launch
from .attachments import AttachmentData

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

PARTICLE_CONTACT_CAPACITY = 8  # shape contacts one particle can use in one step


@wp.struct
class ContactData:
    """This step's particle–shape contacts, filed per particle by :func:`prepare_contacts`.

    ``body[c] >= 0`` marks a contact on a body VBD integrates: ``point``/``normal`` are then in that
    body's frame and ``disp`` holds the shape point's world position at the step's start [m]
    (:func:`contact_frame` turns them into world data at ``body_q``, the current iterate).
    """

    particle_contact_count: wp.array[wp.int32]
    particle_contact: wp.array2d[wp.int32]
    body: wp.array[wp.int32]
    point: wp.array[wp.vec3]
    normal: wp.array[wp.vec3]
    disp: wp.array[wp.vec3]
    material: wp.array[wp.vec4]
    k: wp.array[float]  # ramped penalty stiffness [N/m] (read only when ramp != 0)
    body_q: wp.array[wp.transform]
    friction_epsilon: float
    ramp: int  # 1: the penalty ramps from rigid_contact_k_start (see ramp_contacts)
    attach: AttachmentData  # the model's particle–body attachments (.attachments; empty without)


@wp.func
def contact_material(cd: ContactData, c: int):
    """Contact ``c``'s material ``(k, kd, mu, offset)``: the mixed ``ke`` as stiffness, or the ramped ``k``."""
    m = cd.material[c]
    if cd.ramp != 0:
        return wp.vec4(cd.k[c], m[1], m[2], m[3])
    return m


@wp.func
def contact_frame(cd: ContactData, c: int):
    """World shape point at the end of the step [m], normal and the point's displacement over the step [m].

    A contact on a coupled body is placed at the body's current pose ``cd.body_q``: the point moves
    with the body, the normal turns with it, and the displacement is measured from the step's start.
    """
    b = cd.body[c]
    if b < 0:
        return cd.point[c], cd.normal[c], cd.disp[c]
    X = cd.body_q[b]
    point = wp.transform_point(X, cd.point[c])
    return point, wp.quat_rotate(wp.transform_get_rotation(X), cd.normal[c]), point - cd.disp[c]


@wp.kernel
def _prepare_contacts(
    # Model:
    particle_radius: wp.array[float],
    shape_body: wp.array[wp.int32],
    shape_margin: wp.array[float],
    shape_ke: wp.array[float],
    shape_kd: wp.array[float],
    shape_mu: wp.array[float],
    body_com: wp.array[wp.vec3],
    soft_ke: float,
    soft_kd: float,
    soft_mu: float,
    dt: float,
    external_bodies: int,
    k_start: float,
    coupled: wp.array[wp.int32],
    # Contacts:
    contact_count: wp.array[wp.int32],
    contact_particle: wp.array[int],
    contact_shape: wp.array[int],
    contact_body_pos: wp.array[wp.vec3],
    contact_normal: wp.array[wp.vec3],
    # Data in:
    body_q_in: wp.array[wp.transform],
    body_qd_in: wp.array[wp.spatial_vector],
    body_q_out: wp.array[wp.transform],
    # Data out:
    particle_contact_count: wp.array[wp.int32],
    particle_contact: wp.array2d[wp.int32],
    contact_body_out: wp.array[wp.int32],
    contact_point_out: wp.array[wp.vec3],
    contact_normal_out: wp.array[wp.vec3],
    contact_disp_out: wp.array[wp.vec3],
    contact_material_out: wp.array[wp.vec4],
    contact_k_out: wp.array[float],
    contact_overflow: wp.array[wp.int32],
    body_contact_count: wp.array[wp.int32],
    body_contact: wp.array2d[wp.int32],
    body_contact_overflow: wp.array[wp.int32],
):
    c = wp.tid()  # one thread per soft-contact record
    if c >= contact_count[0]:
        return
    contact_body_out[c] = -1  # every live record says whether it is coupled (a body's overflow scan reads it)
    p = contact_particle[c]
    shape = contact_shape[c]
    if p < 0 or shape < 0:
        return
    slot = wp.atomic_add(particle_contact_count, p, 1)
    if slot >= particle_contact.shape[1]:
        wp.atomic_add(contact_overflow, 0, 1)
        return
    particle_contact[p, slot] = c
    ke = 0.5 * (soft_ke + shape_ke[shape])
    contact_material_out[c] = wp.vec4(
        ke,
        0.5 * (soft_kd + shape_kd[shape]),
        wp.sqrt(wp.max(soft_mu * shape_mu[shape], 0.0)),
        particle_radius[p] + shape_margin[shape],
    )
    contact_k_out[c] = wp.min(k_start, ke)  # every step starts the ramp from the seed (measured, see module)
    body = shape_body[shape]
    local = contact_body_pos[c]
    point = local
    normal = contact_normal[c]
    disp = wp.vec3(0.0)
    if body >= 0 and coupled[body] != 0:
        # Body frame point and normal; disp holds the point's world position at the step's start.
        X = body_q_in[body]
        contact_body_out[c] = body
        contact_point_out[c] = local
        contact_normal_out[c] = wp.quat_rotate_inv(wp.transform_get_rotation(X), normal)
        contact_disp_out[c] = wp.transform_point(X, local)
        # The body gathers it too (only what its particle kept, so the pair stays equal and opposite);
        # past its list's capacity the body scans every record instead (counted).
        bslot = wp.atomic_add(body_contact_count, body, 1)
        if bslot < body_contact.shape[1]:
            body_contact[body, bslot] = c
        else:
            wp.atomic_add(body_contact_overflow, 0, 1)
        return
    if body >= 0:
        X = body_q_in[body]
        point = wp.transform_point(X, local)
        if external_bodies != 0:
            X1 = body_q_out[body]
            end = wp.transform_point(X1, local)
            disp = end - point
            # The normal was detected at the input pose; carry it with the body's rotation.
            normal = wp.quat_rotate(wp.transform_get_rotation(X1), wp.quat_rotate_inv(wp.transform_get_rotation(X), normal))
        else:
            qd = body_qd_in[body]
            com = wp.transform_point(X, body_com[body])
            disp = dt * (wp.spatial_top(qd) + wp.cross(wp.spatial_bottom(qd), point - com))
    contact_point_out[c] = point + disp
    contact_normal_out[c] = normal
    contact_disp_out[c] = disp


def prepare_contacts(model, state_in, state_out, contacts, work, dt: float, external_bodies: bool,
                     coupling=None) -> None:
    """File this step's particle–shape contacts per particle (clears the lists first).

    ``coupling`` (a :class:`..coupling.BodyParticleCoupling` or None) names the bodies VBD integrates:
    their contacts follow the body's iterate and are filed in per-body lists too.
    """
    work.particle_contact_count.zero_()
    work.ramp_records = None
    if coupling is not None:
        coupling.begin_step()
    if contacts is None or contacts.soft_contact_max == 0:
        return
    work.ensure_contact_capacity(contacts.soft_contact_max)
    if model.body_count:
        # The vertex step places coupled contacts at the bodies' current iterate.
        work.contact_data.body_q = state_out.body_q
    work.ramp_records = (contacts.soft_contact_count, contacts.soft_contact_particle, contacts.soft_contact_max)
    body_q_in = state_in.body_q if model.body_count else work.empty_transform
    body_qd_in = state_in.body_qd if model.body_count else work.empty_twist
    body_q_out = state_out.body_q if model.body_count else work.empty_transform
    lists = coupling.lists() if coupling is not None else work.no_body_lists
    launch(
        _prepare_contacts,
        dim=contacts.soft_contact_max,
        inputs=[model.particle_radius, model.shape_body, model.shape_margin, model.shape_material_ke,
                model.shape_material_kd, model.shape_material_mu,
                model.body_com if model.body_count else work.empty_vec3,
                float(model.soft_contact_ke), float(model.soft_contact_kd), float(model.soft_contact_mu), float(dt),
                int(external_bodies), float(work.ramp_k_start), lists[0],
                contacts.soft_contact_count, contacts.soft_contact_particle, contacts.soft_contact_shape,
                contacts.soft_contact_body_pos, contacts.soft_contact_normal, body_q_in, body_qd_in, body_q_out],
        outputs=[work.particle_contact_count, work.particle_contact, work.contact_body, work.contact_point,
                 work.contact_normal, work.contact_disp, work.contact_material, work.contact_k, work.contact_overflow,
                 *lists[1:]],
        device=model.device,
    )


@wp.kernel
def _ramp_contacts(
    cd: ContactData,
    record_count: wp.array[wp.int32],
    record_particle: wp.array[int],
    particle_q: wp.array[wp.vec3],
    beta: float,
):
    c = wp.tid()  # one thread per soft-contact record
    if c >= record_count[0]:
        return
    p = record_particle[c]
    if p < 0:
        return
    point, normal, disp = contact_frame(cd, c)
    m = cd.material[c]
    depth = m[3] - wp.dot(normal, particle_q[p] - point)
    if depth > 0.0:
        cd.k[c] = wp.min(cd.k[c] + beta * depth, m[0])


def ramp_contacts(model, state_out, work) -> None:
    """After a sweep: grow each overlapping contact's penalty by ``β depth`` up to its ``ke`` (one launch)."""
    if work.contact_data.ramp == 0 or work.ramp_records is None:
        return
    count, particle, size = work.ramp_records
    launch(_ramp_contacts, dim=size, inputs=[work.contact_data, count, particle, state_out.particle_q,
                                                float(work.ramp_beta)], device=model.device)


@wp.func
def contact_force_hessian(
    x: wp.vec3,
    x_prev: wp.vec3,
    point: wp.vec3,
    normal: wp.vec3,
    disp: wp.vec3,
    material: wp.vec4,
    friction_epsilon: float,
    dt: float,
):
    """Force [N] and Hessian [N/m] of one particle–shape contact on its particle (see the module docstring)."""
    depth = material[3] - wp.dot(normal, x - point)
    if depth <= 0.0:
        return wp.vec3(0.0), wp.mat33(0.0)
    ke = material[0]
    kd = material[1]
    mu = material[2]
    nn = wp.outer(normal, normal)
    rel = x - x_prev - disp  # particle motion relative to the shape point over the step [m]
    f_n = ke * depth
    force = f_n * normal - (kd / dt) * wp.dot(normal, rel) * normal
    hessian = (ke + kd / dt) * nn
    if mu > 0.0:
        u = rel - wp.dot(normal, rel) * normal
        slip = wp.length(u)
        eps = wp.max(friction_epsilon * dt, 1.0e-12)
        # f1(s)/s: 2/eps - s/eps² inside the ramp, 1/s on the Coulomb cone.
        ratio = 2.0 / eps - slip / (eps * eps)
        if slip >= eps:
            ratio = 1.0 / slip
        force = force - mu * f_n * ratio * u
        hessian = hessian + mu * f_n * ratio * (wp.identity(3, dtype=float) - nn)
    return force, hessian
