"""Particle–shape soft contacts: per-step preparation and the per-vertex force and Hessian.

Contacts come from ``newton.CollisionPipeline`` (``contacts.soft_contact_*``): one record per
soft feature near a shape, with the point on the shape in the body frame and the normal pointing out
of the shape. The feature is a particle, or with ``enable_rigid_soft_full_surface_contact=True`` also
an edge or triangle of the soft mesh: ``soft_contact_indices[c]`` names its one to three particles (-1 padded) and
``soft_contact_barycentric[c]`` their weights ``b_i`` (summing to 1), so the soft contact point is
``x_c = Σ b_i x_i``, re-evaluated at the current iterate (the pipeline's detection only chose the
feature, the shape point and the normal). One law serves all three kinds, written in ``x_c``: the
force on ``x_c`` is ``f``, particle ``i`` takes ``b_i f`` and the Hessian block ``b_i² H`` (the
diagonal block of ``Jᵀ H J`` with ``∂x_c/∂x_i = b_i I``), and the shape takes ``-f`` at its point
(:mod:`..coupling`). A particle record is the case ``b = (1, 0, 0)``: the same numbers as a law in
``x`` alone. Records of one surface patch are all summed, as Newton's SolverVBD does (measured: a
cloth lying on a box with full-surface contacts rests 5.1x shallower than with particle records
only, the ratio of records to particles, 241 to 49); rejected: deduplicating them, which would
change the depth the reference shows. Triangle-mesh shapes are refused (their records need Newton's
per-feature eligibility test at the current positions; see :func:`check_full_surface_contacts`).

``prepare_contacts`` (one launch per step) turns each record into world-space data and files it in
the list of each of its particles (``PARTICLE_CONTACT_CAPACITY`` slots, ``FULL_SURFACE_CAPACITY`` with
full-surface contacts: a cloth vertex sees up to six edges and six triangles besides itself, per shape;
Newton's vbd_dat_rigid_soft example, a vertex between stacked bodies, overflowed 32 slots once, never 64). A record
that does not fit some particle's list is dropped for all of them and for the body (its material is
zeroed, so every side sees the same nothing) and counted in ``contact_overflow``. Per contact ``c``:

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
  friction), the contact offset the particle radius plus the shape margin (an edge or triangle: the
  largest radius of its particles, the pipeline's detection threshold). These are the rules of
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

The normal force is spring and damper together, and a contact only pushes:

    f·n = max(0, f_n - (kd/dt) n·(x - x_t - du)),   Hessian (k_n + kd/dt) n nᵀ while it pushes, else 0,

with the damper switched on for the step where the record's soft point overlaps at the iterate it is
filed at (the first iterate; ``prepare_contacts`` zeroes ``kd`` in the material of the others, as the rigid
contacts' damper flags), and acting beyond the surface too while the point approaches. So the force is
continuous in ``x`` (zero at the surface from both sides), never pulls a separating particle back, and
damps while the contact is compressed. Friction needs a normal force (none where the clamp is 0). The
body (:mod:`..coupling`) and a proxy's harvest (:mod:`..proxy_coupling`) take ``-f`` of this same law.
Before, the damper ``-(kd/dt) n·rel`` acted wherever ``d > 0`` at the current iterate: it pulled separating
particles (a 0.5 kg cloth hit on a box spinning it stayed glued to it by the damper's tension) and switched
off with the depth, so a particle grazing the surface alternated in and out of contact between iterations
(``kd/dt`` = 3e4 N/m against ``m/dt²`` = 7.2e3 N/m of a 20 g particle at 1/600 s) and never converged: that
off-centre hit, proxied from XPBD, drifted +0.19 % in momentum (now 2.1e-5, undamped 3.4e-6; 7e-6 at 80
iterations), and -3.0 % with VBD integrating the box (now 3.0e-4, undamped 2.9e-4; test_proxy_coupling.py).
A 20 g particle thrown at 2 m/s onto a box (ke 1e4 N/m, 20 iterations) rebounds at 0.3982, 0.3615, 0.1463 m/s
at kd 0, 1, 10 N·s/m and stops at 100 (test_particle_contacts.py). Rejected: a damper on approach only (its
rebound equals Newton's SolverVBD's to four digits up to kd 10), which left a resting cloth on a box
oscillating at 10 iterations (0.02 N of its weight's 4.8 N unbalanced after 1.3 s); and the damper always on
while flagged, which kept the tension (the hit above 2.6e-4, at any iteration count). Newton's SolverVBD
rebounds faster with kd 100 (0.59 m/s) than without (0.40): not followed.

With ``rigid_soft_contact_use_log_barrier=True`` the normal law is instead the C2 log barrier of
particle self-contact (:func:`.self_contact_force.barrier_energy`, after IPC) in the distance
``δ = n·(x - p)`` to the raw shape surface with the interaction radius ``r + margin``: the same
quadratic penalty while ``δ >= (r + margin)/2``, and below it ``E = k τ²/2 - k τ² log(δ/τ)``, whose
force ``k τ²/δ`` grows without bound as the surface is approached, so a resting particle sits at
``δ = k τ²/(m g)`` when ``m g > k τ``. Measured on Newton's SolverVBD (a 0.1 kg particle of radius
1 cm on a box, k 100 N/m): it rests at 2.548 mm = ``k τ²/(m g)``, and with a 2 mm shape margin at
3.669 mm, which fixes both the distance (to the raw surface) and the radius (with the margin).
"""

from __future__ import annotations

import operator
import weakref

import numpy as np
import warp as wp

import newton

from ....launches import launch
from ..dat import RigidSoftDatData
from .attachments import AttachmentData
from .self_contact_force import barrier_derivatives

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

PARTICLE_CONTACT_CAPACITY = 8  # shape contacts one particle can use in one step
FULL_SURFACE_CAPACITY = 64  # the same with edge and face records (13 records of a grid vertex per shape, 4 shapes deep)


@wp.struct
class ContactData:
    """This step's particle–shape contacts, filed per particle by :func:`prepare_contacts`.

    ``body[c] >= 0`` marks a contact on a body VBD integrates: ``point``/``normal`` are then in that
    body's frame and ``disp`` holds the shape point's world position at the step's start [m]
    (:func:`contact_frame` turns them into world data at ``body_q``, the current iterate).
    ``corners``/``weights`` are the records' soft features (``Contacts.soft_contact_indices`` and
    ``soft_contact_barycentric``).
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
    barrier: int  # 1: the normal law is the log barrier (rigid_soft_contact_use_log_barrier)
    corners: wp.array[wp.vec3i]  # record -> its one to three particles, -1 padded
    weights: wp.array[wp.vec3]  # record -> their barycentric weights (sum 1)
    attach: AttachmentData  # the model's particle–body attachments (.attachments; empty without)
    dat: RigidSoftDatData  # rigid–soft DAT references (..dat; enabled = 0 without)


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


@wp.func
def record_point(cd: ContactData, c: int, particle_q: wp.array[wp.vec3]):
    """Soft contact point ``x_c = Σ b_i x_i`` [m] of record ``c`` at positions ``particle_q``."""
    v = cd.corners[c]
    b = cd.weights[c]
    x = b[0] * particle_q[v[0]]
    if v[1] >= 0:
        x += b[1] * particle_q[v[1]]
    if v[2] >= 0:
        x += b[2] * particle_q[v[2]]
    return x


@wp.func
def record_weight(cd: ContactData, c: int, i: int):
    """Weight ``b_i`` of particle ``i`` in record ``c`` (0 when it is not one of its corners)."""
    v = cd.corners[c]
    b = cd.weights[c]
    w = float(0.0)
    for k in range(3):
        if v[k] == i:
            w += b[k]
    return w


@wp.func
def record_force_hessian(cd: ContactData, c: int, particle_q: wp.array[wp.vec3],
                         particle_q_prev: wp.array[wp.vec3], dt: float):
    """Force [N] on record ``c``'s soft contact point and its Hessian [N/m] in that point, at ``particle_q``.

    Particle ``i`` of the record takes ``record_weight * f`` and ``record_weight² * H``; the shape ``-f``.
    """
    point, normal, disp = contact_frame(cd, c)
    return contact_force_hessian(record_point(cd, c, particle_q), record_point(cd, c, particle_q_prev), point,
                                 normal, disp, contact_material(cd, c), cd.friction_epsilon, dt, cd.barrier)


@wp.struct
class ShapeContactModel:
    """The model's arrays a particle–shape contact's material and offset are mixed from (``prepare_contacts``).
    Comments: meaning [units] (shape)."""

    particle_radius: wp.array[float]  # particle radius [m]  (particle,)
    shape_body: wp.array[wp.int32]  # body of each shape, -1: static  (shape,)
    shape_margin: wp.array[float]  # shape margin [m]  (shape,)
    shape_ke: wp.array[float]  # contact stiffness [N/m]  (shape,)
    shape_kd: wp.array[float]  # contact damping [N·s/m]  (shape,)
    shape_mu: wp.array[float]  # friction coefficient, non-dimensional  (shape,)
    body_com: wp.array[wp.vec3]  # body COM in the body frame [m]; one zero entry in a model without bodies  (body,)


@wp.struct
class SoftContactRecords:
    """One particle–shape contact buffer as the pipeline hands it over (``newton.Contacts.soft_contact_*``).
    Comments: meaning [units] (shape)."""

    count: wp.array[wp.int32]  # live records  (1,)
    corners: wp.array[wp.vec3i]  # the record's one to three particles, -1 padded (soft_contact_indices)  (capacity,)
    weights: wp.array[wp.vec3]  # their barycentric weights, summing to 1 (soft_contact_barycentric)  (capacity,)
    shape: wp.array[int]  # shape of each record  (capacity,)
    body_pos: wp.array[wp.vec3]  # contact point on the shape, its body frame [m]  (capacity,)
    normal: wp.array[wp.vec3]  # contact normal out of the shape, world  (capacity,)


@wp.struct
class BodyContactLists:
    """The per-body lists of two-way coupling (:mod:`..coupling`, ``lists()``), or placeholders without it.
    Comments: meaning (shape)."""

    coupled: wp.array[wp.int32]  # 1 where VBD integrates the body  (body,)
    count: wp.array[wp.int32]  # records filed with each body this step  (body,)
    slots: wp.array2d[wp.int32]  # their record indices  (body, capacity)
    overflow: wp.array[wp.int32]  # records filed past a body's list this step  (1,)


@wp.kernel
def _prepare_contacts(
    # Model:
    shapes: ShapeContactModel,
    soft_ke: float,
    soft_kd: float,
    soft_mu: float,
    dt: float,
    external_bodies: int,
    k_start: float,
    # Contacts:
    records: SoftContactRecords,
    # Data in:
    particle_q: wp.array[wp.vec3],
    body_q_in: wp.array[wp.transform],
    body_qd_in: wp.array[wp.spatial_vector],
    body_q_out: wp.array[wp.transform],
    # Data out: the per-particle lists and per-record fields of cd, the overflow count, the per-body lists.
    cd: ContactData,
    contact_overflow: wp.array[wp.int32],
    body_lists: BodyContactLists,
):
    shape_ke = shapes.shape_ke
    shape_kd = shapes.shape_kd
    shape_mu = shapes.shape_mu
    c = wp.tid()  # one thread per soft-contact record
    if c >= records.count[0]:
        return
    cd.body[c] = -1  # every live record says whether it is coupled (a body's overflow scan reads it)
    cd.material[c] = wp.vec4(0.0)  # a record not kept exerts nothing, wherever it is evaluated
    cd.k[c] = 0.0
    corners = records.corners[c]
    shape = records.shape[c]
    if corners[0] < 0 or shape < 0:
        return
    # File the record with each of its particles; one that does not fit drops it for every side.
    kept = int(1)
    radius = float(0.0)
    for k in range(3):
        v = corners[k]
        if v >= 0:
            radius = wp.max(radius, shapes.particle_radius[v])
            slot = wp.atomic_add(cd.particle_contact_count, v, 1)
            if slot < cd.particle_contact.shape[1]:
                cd.particle_contact[v, slot] = c
            else:
                kept = 0
    if kept == 0:
        wp.atomic_add(contact_overflow, 0, 1)
        return
    ke = 0.5 * (soft_ke + shape_ke[shape])
    offset = radius + shapes.shape_margin[shape]
    kd = 0.5 * (soft_kd + shape_kd[shape])
    mu = wp.sqrt(wp.max(soft_mu * shape_mu[shape], 0.0))
    # The damper's flag (kd kept only where the soft point overlaps at the iterate the contacts are filed at: the
    # first iterate, the shape at a coupled body's start pose, else where the step takes it; see the module).
    x_c = wp.vec3(0.0)
    for k in range(3):
        if corners[k] >= 0:
            x_c += records.weights[c][k] * particle_q[corners[k]]
    cd.k[c] = wp.min(k_start, ke)  # every step starts the ramp from the seed (measured, see module)
    body = shapes.shape_body[shape]
    local = records.body_pos[c]
    point = local
    normal = records.normal[c]
    disp = wp.vec3(0.0)
    if body >= 0 and body_lists.coupled[body] != 0:
        # Body frame point and normal; disp holds the point's world position at the step's start.
        X = body_q_in[body]
        if wp.dot(normal, x_c - wp.transform_point(X, local)) >= offset:
            kd = 0.0
        cd.material[c] = wp.vec4(ke, kd, mu, offset)
        cd.body[c] = body
        cd.point[c] = local
        cd.normal[c] = wp.quat_rotate_inv(wp.transform_get_rotation(X), normal)
        cd.disp[c] = wp.transform_point(X, local)
        # The body gathers it too (only what its particle kept, so the pair stays equal and opposite);
        # past its list's capacity the body scans every record instead (counted).
        bslot = wp.atomic_add(body_lists.count, body, 1)
        if bslot < body_lists.slots.shape[1]:
            body_lists.slots[body, bslot] = c
        else:
            wp.atomic_add(body_lists.overflow, 0, 1)
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
            com = wp.transform_point(X, shapes.body_com[body])
            disp = dt * (wp.spatial_top(qd) + wp.cross(wp.spatial_bottom(qd), point - com))
    if wp.dot(normal, x_c - (point + disp)) >= offset:
        kd = 0.0
    cd.material[c] = wp.vec4(ke, kd, mu, offset)
    cd.point[c] = point + disp
    cd.normal[c] = normal
    cd.disp[c] = disp


def prepare_contacts(model, state_in, state_out, contacts, work, dt: float, external_bodies: bool,
                     coupling=None) -> None:
    """File this step's particle–shape contacts per particle (clears the lists first).

    ``coupling`` (a :class:`..coupling.BodyParticleCoupling` or None) names the bodies VBD integrates:
    their contacts follow the body's iterate and are filed in per-body lists too.
    """
    work.particle_contact_count.zero_()
    work.ramp_records = None
    work.full_surface = False
    if coupling is not None:
        coupling.begin_step()
    if contacts is None or contacts.soft_contact_max == 0:
        return
    full_surface = bool(getattr(contacts, "_enable_rigid_soft_full_surface_contact", False))
    work.full_surface = full_surface  # the harvest of proxy particles refuses them (.proxy_coupling)
    work.ensure_contact_capacity(contacts.soft_contact_max, full_surface)
    if model.body_count:
        # The vertex step places coupled contacts at the bodies' current iterate.
        work.contact_data.body_q = state_out.body_q
    work.contact_data.corners = contacts.soft_contact_indices
    work.contact_data.weights = contacts.soft_contact_barycentric
    work.ramp_records = (contacts.soft_contact_count, contacts.soft_contact_max)
    body_q_in = state_in.body_q if model.body_count else work.empty_transform
    body_qd_in = state_in.body_qd if model.body_count else work.empty_twist
    body_q_out = state_out.body_q if model.body_count else work.empty_transform
    args = _prepare_args.get(work)
    if args is None:
        args = _prepare_args[work] = _PrepareArgs()
    lists = coupling.lists() if coupling is not None else work.no_body_lists
    shapes, records, body_lists = args.bind(model, contacts, lists, work.empty_vec3)
    launch(
        _prepare_contacts,
        dim=contacts.soft_contact_max,
        inputs=[shapes, float(model.soft_contact_ke), float(model.soft_contact_kd), float(model.soft_contact_mu),
                float(dt), int(external_bodies), float(work.ramp_k_start), records,
                state_out.particle_q, body_q_in, body_qd_in, body_q_out],
        outputs=[work.contact_data, work.contact_overflow, body_lists],
        device=model.device,
    )


_SHAPE_ARRAYS = operator.attrgetter("particle_radius", "shape_body", "shape_margin", "shape_material_ke",
                                    "shape_material_kd", "shape_material_mu")
_RECORD_ARRAYS = operator.attrgetter("soft_contact_count", "soft_contact_indices", "soft_contact_barycentric",
                                     "soft_contact_shape", "soft_contact_body_pos", "soft_contact_normal")


class _PrepareArgs:
    """The struct arguments of ``_prepare_contacts`` for one solver, kept between steps.

    A struct is packed by reference and keyed by identity in :func:`steel.launches.launch`: kept, it replays its
    recorded launch; rebuilt per step, it would record a new one every step. So each struct is built once and
    its fields are reassigned only when an array they hold is rebound: the model's (compared by identity each
    step), a new or changed ``Contacts`` (another object, or an array rebound on it), or the coupling's lists.
    """

    def __init__(self):
        self.shapes = ShapeContactModel()
        self.records = SoftContactRecords()
        self.body_lists = BodyContactLists()
        self._bound = (None, None, None)  # the arrays each struct holds

    def bind(self, model, contacts, lists: tuple, empty_vec3) -> tuple:
        """``(shapes, records, body_lists)`` holding the arrays of ``model``, ``contacts`` and ``lists``."""
        shape_arrays = _SHAPE_ARRAYS(model) + (model.body_com if model.body_count else empty_vec3,)
        record_arrays = _RECORD_ARRAYS(contacts)
        bound = self._bound
        if shape_arrays != bound[0]:
            for field, array in zip(ShapeContactModel.vars, shape_arrays):
                setattr(self.shapes, field, array)
        if record_arrays != bound[1]:
            for field, array in zip(SoftContactRecords.vars, record_arrays):
                setattr(self.records, field, array)
        if lists != bound[2]:
            for field, array in zip(BodyContactLists.vars, lists):
                setattr(self.body_lists, field, array)
        self._bound = (shape_arrays, record_arrays, lists)
        return self.shapes, self.records, self.body_lists


_prepare_args: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # ParticleWork -> its _PrepareArgs


@wp.kernel
def _ramp_contacts(
    cd: ContactData,
    record_count: wp.array[wp.int32],
    particle_q: wp.array[wp.vec3],
    beta: float,
):
    c = wp.tid()  # one thread per soft-contact record
    if c >= record_count[0] or cd.corners[c][0] < 0:
        return
    point, normal, disp = contact_frame(cd, c)
    m = cd.material[c]
    depth = m[3] - wp.dot(normal, record_point(cd, c, particle_q) - point)
    if depth > 0.0:
        cd.k[c] = wp.min(cd.k[c] + beta * depth, m[0])


def ramp_contacts(model, state_out, work) -> None:
    """After a sweep: grow each overlapping contact's penalty by ``β depth`` up to its ``ke`` (one launch)."""
    if work.contact_data.ramp == 0 or work.ramp_records is None:
        return
    count, size = work.ramp_records
    launch(_ramp_contacts, dim=size, inputs=[work.contact_data, count, state_out.particle_q, float(work.ramp_beta)],
           device=model.device)


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
    barrier: int,
):
    """Force [N] and Hessian [N/m] of one particle–shape contact on its soft point ``x`` (module docstring).

    ``barrier`` 0: the quadratic penalty in the depth; 1: the self-contact log barrier in the distance.
    """
    gap = wp.dot(normal, x - point)  # distance of the soft point from the raw shape surface [m]
    depth = material[3] - gap
    kd = material[1]  # 0 unless the record overlapped where it was filed (the damper's flag)
    if depth <= 0.0 and kd <= 0.0:
        return wp.vec3(0.0), wp.mat33(0.0)
    ke = material[0]
    mu = material[2]
    nn = wp.outer(normal, normal)
    rel = x - x_prev - disp  # particle motion relative to the shape point over the step [m]
    f_n = float(0.0)  # the elastic push [N]
    k_n = float(0.0)
    if depth > 0.0:
        f_n = ke * depth
        k_n = ke
        if barrier != 0:
            de, dde = barrier_derivatives(gap, material[3], ke)  # one home for the law: self-contact's
            f_n = -de
            k_n = dde
    # Push and damper together, never a pull (see the module docstring): continuous in x, zero at the surface.
    push = f_n - (kd / dt) * wp.dot(normal, rel)
    if push <= 0.0:
        return wp.vec3(0.0), wp.mat33(0.0)  # no friction without a normal force
    force = push * normal
    hessian = (k_n + kd / dt) * nn
    if depth <= 0.0:
        return force, hessian
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


def mesh_particle_shapes(model) -> list[int]:
    """Triangle-mesh shapes that collide with particles (read once from the model; refreshed on model changes)."""
    if not model.shape_count:
        return []
    mesh = np.isin(model.shape_type.numpy(), (int(newton.GeoType.MESH), int(newton.GeoType.CONVEX_MESH)))
    collide = (model.shape_flags.numpy() & int(newton.ShapeFlags.COLLIDE_PARTICLES)) != 0
    return np.flatnonzero(mesh & collide).tolist()


def check_full_surface_contacts(contacts, mesh_shapes: list[int]) -> None:
    """``NotImplementedError`` for full-surface contacts with triangle-mesh shapes ``mesh_shapes`` colliding with
    particles, before the step changes anything (no device read). Rigid–soft DAT bounds edge and face records
    per corner (``..dat``).

    Newton's mesh pass reports every vertex–face, face–vertex and edge–edge pair in its band, redundant and
    inactive ones included, and leaves the consumer to test each at the current positions against the
    mesh's feature topology; that test is not built, and reading those records as the analytic ones
    would push along stale, duplicated normals. Analytic primitives and heightfields are consumed.
    """
    full_surface = contacts is not None and getattr(contacts, "_enable_rigid_soft_full_surface_contact", False)
    if mesh_shapes and full_surface:
        raise NotImplementedError(
            "SolverVBD consumes full-surface soft contacts (enable_rigid_soft_full_surface_contact=True) on analytic "
            f"shapes and heightfields only; triangle-mesh shapes colliding with particles are not supported (shapes "
            f"{mesh_shapes}); build the pipeline without the flag")
