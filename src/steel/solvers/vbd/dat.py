"""Rigid–soft Divide-and-Truncate (DAT): penetration-free particle and body updates against shape contacts.

``rigid_soft_enable_dat=True`` (Newton 1.8.0's option) extends the conservative bound of particle
self-contact (Chen, Liu, Yang, Yuksel, "Vertex Block Descent", ACM TOG 43(4) 2024, sec. 4; the
truncation of :func:`.particles.self_contact_force.truncate_displacement`) to particle–shape
contacts. At every detection of the ``RIGID`` collision slot (the owned pipeline, :mod:`.collision`)
:meth:`RigidSoftDat.record` stores the particle positions ``x_d`` [m], the body poses ``q_d`` and, per
record ``c``, the world normal ``n_c`` out of the shape and, per corner ``k`` of the record's soft
feature (one particle, or with full-surface contacts the two of an edge or three of a triangle), the
gap ``g_ck = n_c·(x_k - p_c)`` [m] of that particle's centre above the shape point ``p_c`` (clamped
at 0). Until the next detection:

* every particle update is scaled back towards ``x_d`` (:func:`truncate_rigid_soft`): its
  displacement ``Δ`` keeps ``|Δ| <= b`` and, per record it is corner ``k`` of, ``n_c·Δ >= -γ g_ck / 2``;
* every dynamic body's pose update is scaled back towards ``q_d`` (translation and rotation angle
  by one fraction ``s``, :func:`_truncate_bodies`): every point of the body moves at most ``b`` and,
  per record on it, at most ``γ min_k g_ck / 2`` along ``n_c`` (the record's closest corner).

``γ`` = ``dat_conservative_bound_relaxation`` and ``b = γ R / 2`` with ``R`` the smallest rigid–soft
query radius (pipeline ``soft_contact_gap`` + smallest particle radius + smallest shape margin [m]),
fixed at construction. Invariant: for a convex shape the plane through ``p_c`` normal to ``n_c``
(the supporting plane at the closest point) separates the shape from the particle at detection;
corner ``k`` moves at most ``γ g_ck / 2`` towards it and the shape at most ``γ min_k g_ck / 2 <=
γ g_ck / 2``, so every corner's gap stays above ``(1 - γ) g_ck >= 0``; the edge or triangle, the
convex hull of its corners, stays on the corners' side too. A particle (or, with full-surface
contacts, an edge or triangle) with no record lay at least ``R`` from every shape, and every point of
it and of the shape moves at most ``b``: the gap stays above ``(1 - γ) R``. Both truncations are a scaling of the update towards the detection
configuration, which satisfies every constraint (the constraints are convex and hold at ``s = 0``),
so the largest admissible fraction is the minimum over the constraints.

Rotation makes a body point's path curved. Rather than sampling and bisecting the path (the
reference's default, which can miss a crossing between samples), the body bound uses the chord
bound ``|(R(sθ) - I) r| <= s θ |r|`` with ``|r| <= ρ`` (the body's shapes' farthest reach from its
origin, ``shape_transform`` plus ``shape_collision_radius``): every point's motion towards a plane
is at most ``s (n·Δt + θ ρ)``, linear in ``s``, so the whole prefix is certified without sampling.
The price: a spinning body near cloth is slowed earlier than a sampled bound would slow it.

Full-surface records (``enable_rigid_soft_full_surface_contact=True``) place ``p_c`` at the shape
point nearest the pipeline's (approximate) closest point of the edge or triangle, so at an exact
closest pair every corner lies on the far side of the plane; a corner the pipeline's minimiser
left behind the plane has gap 0: it and the body are frozen along ``n_c`` for that record
(conservative, never unsafe). Not covered (refused where the solver can tell): non-convex shapes
colliding with particles (meshes, heightfields), whose closest-point plane separates nothing. Kinematic bodies and static shapes are not truncated (they move outside the solver);
records dropped by a full particle list bound nothing (coverage is incomplete then, as in Newton).
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton
from newton.solvers import SolverBase

from ...launches import launch
from .particles.predict import particle_is_free

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

# Shapes whose closest-point plane is no separating plane (refused with DAT on).
NON_CONVEX = (int(newton.GeoType.MESH), int(newton.GeoType.HFIELD))


@wp.struct
class RigidSoftDatData:
    """What the vertex step reads about rigid–soft DAT (``enabled = 0``: no truncation)."""

    enabled: int
    budget: float  # b = γ R / 2, each side's isotropic motion budget per detection [m]
    half_relaxation: float  # γ / 2
    particle_origin: wp.array[wp.vec3]  # (particle,) positions at the last detection [m]
    record_normal: wp.array[wp.vec3]  # (record,) world normal out of the shape at detection
    record_gap: wp.array[wp.vec3]  # (record,) each corner's centre-to-plane gap at detection, >= 0 [m]
    record_corners: wp.array[wp.vec3i]  # (record,) the record's one to three particles, -1 padded


@wp.func
def truncate_rigid_soft(i: int, dat: RigidSoftDatData, contact_count: wp.array[wp.int32],
                        contact: wp.array2d[wp.int32], x_new: wp.vec3):
    """``x_new`` scaled back towards particle ``i``'s detection position until every bound holds.

    ``contact_count``/``contact`` are the particle's filed records (``ContactData`` lists).
    """
    if dat.enabled == 0:
        return x_new
    origin = dat.particle_origin[i]
    delta = x_new - origin
    s = float(1.0)
    length = wp.length(delta)
    if length > dat.budget:
        s = dat.budget / length
    for k in range(wp.min(contact_count[i], contact.shape[1])):
        c = contact[i, k]
        toward = -wp.dot(dat.record_normal[c], delta)  # motion towards the division plane [m]
        corners = dat.record_corners[c]
        gaps = dat.record_gap[c]
        for j in range(3):  # every corner slot that is i (a feature names a particle once)
            if corners[j] == i:
                limit = dat.half_relaxation * gaps[j]
                if toward * s > limit:
                    s = limit / toward
    return origin + s * delta


@wp.kernel
def _record(
    # Model:
    shape_body: wp.array[wp.int32],
    # Contacts:
    contact_count: wp.array[wp.int32],
    contact_corners: wp.array[wp.vec3i],
    contact_shape: wp.array[int],
    contact_body_pos: wp.array[wp.vec3],
    contact_normal: wp.array[wp.vec3],
    # Data in:
    particle_q: wp.array[wp.vec3],
    body_q: wp.array[wp.transform],
    # Data out:
    record_normal: wp.array[wp.vec3],
    record_gap: wp.array[wp.vec3],
):
    c = wp.tid()  # one thread per soft-contact record
    if c >= contact_count[0]:
        return
    record_gap[c] = wp.vec3(0.0)
    record_normal[c] = wp.vec3(0.0)
    corners = contact_corners[c]
    shape = contact_shape[c]
    if corners[0] < 0 or shape < 0:
        return
    point = contact_body_pos[c]
    body = shape_body[shape]
    if body >= 0:
        point = wp.transform_point(body_q[body], point)
    n = contact_normal[c]  # world frame, at the pose the pipeline saw
    record_normal[c] = n
    gaps = wp.vec3(0.0)
    for k in range(3):
        v = corners[k]
        if v >= 0:  # a corner behind the plane (approximate closest pair) gets 0: frozen along n
            gaps[k] = wp.max(wp.dot(n, particle_q[v] - point), 0.0)
    record_gap[c] = gaps


@wp.func
def record_body_gap(corners: wp.vec3i, gaps: wp.vec3):
    """The record's smallest corner gap [m]: the body's share is bounded by its closest corner."""
    g = gaps[0]
    for k in range(1, 3):
        if corners[k] >= 0:
            g = wp.min(g, gaps[k])
    return g


@wp.func
def _pose_change(q: wp.transform, q_d: wp.transform):
    """Translation [m], rotation axis and angle [rad] (in [0, π]) from ``q_d`` to ``q``."""
    dq = wp.transform_get_rotation(q) * wp.quat_inverse(wp.transform_get_rotation(q_d))
    if dq[3] < 0.0:
        dq = -dq  # the shorter way round
    v = wp.vec3(dq[0], dq[1], dq[2])
    sin_half = wp.length(v)
    axis = wp.vec3(1.0, 0.0, 0.0)
    if sin_half > 0.0:
        axis = v / sin_half
    angle = 2.0 * wp.atan2(sin_half, dq[3])
    return wp.transform_get_translation(q) - wp.transform_get_translation(q_d), axis, angle


@wp.kernel
def _body_plane_limits(
    # Model:
    shape_body: wp.array[wp.int32],
    body_dynamic: wp.array[wp.int32],
    body_reach: wp.array[float],
    half_relaxation: float,
    # Contacts:
    contact_count: wp.array[wp.int32],
    contact_corners: wp.array[wp.vec3i],
    contact_shape: wp.array[int],
    record_normal: wp.array[wp.vec3],
    record_gap: wp.array[wp.vec3],
    # Data in:
    body_origin: wp.array[wp.transform],
    body_q: wp.array[wp.transform],
    # Data out:
    body_scale: wp.array[float],
):
    c = wp.tid()  # one thread per soft-contact record
    if c >= contact_count[0] or contact_corners[c][0] < 0 or contact_shape[c] < 0:
        return
    b = shape_body[contact_shape[c]]
    if b < 0 or body_dynamic[b] == 0:
        return
    dx, axis, angle = _pose_change(body_q[b], body_origin[b])
    toward = wp.dot(record_normal[c], dx) + angle * body_reach[b]  # bound on any point's motion along n [m]
    limit = half_relaxation * record_body_gap(contact_corners[c], record_gap[c])
    if toward > limit:
        wp.atomic_min(body_scale, b, limit / toward)  # min is order-free: deterministic


@wp.kernel
def _truncate_bodies(
    # Model:
    body_dynamic: wp.array[wp.int32],
    body_reach: wp.array[float],
    budget: float,
    # Data in:
    body_origin: wp.array[wp.transform],
    # Data in/out:
    body_scale: wp.array[float],
    body_q: wp.array[wp.transform],
):
    b = wp.tid()  # one thread per body
    s = body_scale[b]
    body_scale[b] = 1.0  # ready for the next truncation
    if body_dynamic[b] == 0:
        return
    q_d = body_origin[b]
    dx, axis, angle = _pose_change(body_q[b], q_d)
    reach = wp.length(dx) + angle * body_reach[b]  # bound on any point's motion [m]
    if reach * s > budget:
        s = budget / reach
    if s < 1.0:
        rot = wp.quat_from_axis_angle(axis, s * angle) * wp.transform_get_rotation(q_d)
        body_q[b] = wp.transform(wp.transform_get_translation(q_d) + s * dx, rot)


def query_radius(model, pipeline) -> float:
    """The smallest rigid–soft query radius [m]: pipeline soft gap + smallest particle radius + smallest margin."""
    gap = float(getattr(pipeline, "soft_contact_gap", 0.0) or 0.0)
    radius = float(model.particle_radius.numpy().min()) if model.particle_count else 0.0
    margin = float(model.shape_margin.numpy().min()) if model.shape_count else 0.0
    return gap + radius + margin


def check_dat(model, opts, extras) -> None:
    """Refuse what rigid–soft DAT cannot run (before anything is allocated).

    Raises:
        ValueError: no ``collision_pipeline``; ``integrate_with_external_rigid_solver=True``; a query
            radius that is not positive.
        NotImplementedError: a mesh or heightfield shape colliding with particles
            (``rigid_soft_dat_use_interval_arithmetic=True`` is refused by :mod:`.options`).
    """
    if not extras.get("rigid_soft_enable_dat"):
        return
    pipeline = extras.get("collision_pipeline")
    if pipeline is None:
        raise ValueError("SolverVBD(rigid_soft_enable_dat=True) requires a solver-owned collision_pipeline: the "
                         "division planes come from the solver's own RIGID detections")
    if opts.integrate_with_external_rigid_solver:
        raise ValueError("SolverVBD(rigid_soft_enable_dat=True) cannot truncate bodies another solver integrates "
                         "(integrate_with_external_rigid_solver=True)")
    radius = query_radius(model, pipeline)
    if not radius > 0.0:
        raise ValueError(f"SolverVBD(rigid_soft_enable_dat=True) needs a positive rigid-soft query radius (pipeline "
                         f"soft_contact_gap + smallest particle radius + smallest shape margin), got {radius!r} m")
    if model.shape_count:
        types = model.shape_type.numpy()
        collide = model.shape_flags.numpy() & int(newton.ShapeFlags.COLLIDE_PARTICLES)
        bad = sorted({newton.GeoType(int(t)).name for t, f in zip(types, collide) if f and int(t) in NON_CONVEX})
        if bad:
            raise NotImplementedError(f"SolverVBD(rigid_soft_enable_dat=True) with {', '.join(bad)} shapes colliding "
                                      "with particles is not implemented (their closest-point plane separates nothing)")


def check_dat_schedule(solver) -> None:
    """At ``step``: ``ValueError`` when the ``RIGID`` slot is NONE (no detection, no planes), or when self-contact
    DAT is on too and the two slots do not detect at the same configurations (both truncations scale towards
    one detection position, so it must be the same): PRE_INIT with interval -1, PRE_POST_INIT with 0,
    ITERATIONS every 1 with 1."""
    frequency = SolverBase.CollisionFrequencyType
    kind = solver._resolved_collision_frequency_type(SolverBase.CollisionSlot.RIGID)
    if kind == frequency.NONE:
        raise ValueError("SolverVBD(rigid_soft_enable_dat=True): collision_frequency_type[RIGID] is NONE; rigid-soft "
                         "DAT takes its division planes from the RIGID detections")
    sc = solver.self_contact
    if sc is None:
        return
    every = solver.collision_frequency[SolverBase.CollisionSlot.RIGID] if kind == frequency.ITERATIONS else None
    rigid = {frequency.PRE_INIT: -1, frequency.PRE_POST_INIT: 0}.get(kind, 1 if every == 1 else None)
    if rigid != sc.interval:
        raise ValueError(f"SolverVBD: with rigid_soft_enable_dat and particle_enable_self_contact the RIGID and "
                         f"SOFT_SELF_CONTACT schedules must be equivalent (RIGID {kind.name} every {every}, "
                         f"self-contact interval {sc.interval}); both DATs truncate towards the same detection "
                         "positions")


def disabled_dat(device) -> RigidSoftDatData:
    """A ``RigidSoftDatData`` with ``enabled = 0`` and one-element placeholder arrays."""
    data = RigidSoftDatData()
    data.enabled = 0
    data.particle_origin = wp.zeros(1, dtype=wp.vec3, device=device)
    data.record_normal = wp.zeros(1, dtype=wp.vec3, device=device)
    data.record_gap = wp.zeros(1, dtype=wp.vec3, device=device)
    data.record_corners = wp.zeros(1, dtype=wp.vec3i, device=device)
    return data


class RigidSoftDat:
    """Detection-time references and the truncation launches of one solver (see the module docstring)."""

    def __init__(self, model, relaxation: float, pipeline, dynamic: np.ndarray, work=None):
        dev = model.device
        self.work = work  # the particle solve, whose ContactData carries self.data
        self.device = dev
        self.radius = query_radius(model, pipeline)  # [m], fixed here (later changes are not reflected)
        data = RigidSoftDatData()
        data.enabled = 1
        data.half_relaxation = 0.5 * float(relaxation)
        data.budget = data.half_relaxation * self.radius
        data.particle_origin = wp.zeros(max(int(model.particle_count), 1), dtype=wp.vec3, device=dev)
        data.record_normal = wp.zeros(1, dtype=wp.vec3, device=dev)
        data.record_gap = wp.zeros(1, dtype=wp.vec3, device=dev)
        data.record_corners = wp.zeros(1, dtype=wp.vec3i, device=dev)
        self.data = data
        nb = int(model.body_count)
        self.body_origin = wp.zeros(max(nb, 1), dtype=wp.transform, device=dev)
        self.body_scale = wp.ones(max(nb, 1), dtype=float, device=dev)
        self.body_dynamic = wp.array(np.append(np.asarray(dynamic, dtype=np.int32), 0)[:max(nb, 1)],
                                     dtype=wp.int32, device=dev)
        self.body_reach = wp.array(_body_reach(model), dtype=float, device=dev)
        self.contacts = None  # the buffer of the last detection
        self._publish()

    def _publish(self) -> None:
        if self.work is not None:  # the vertex step reads the references through its ContactData
            self.work.dat = self.data
            self.work.contact_data.dat = self.data

    def reserve(self, capacity: int) -> None:
        """Per-record arrays for ``capacity`` soft-contact records (grown, never shrunk)."""
        d = self.data
        if d.record_gap.shape[0] < capacity:
            d.record_normal = wp.zeros(capacity, dtype=wp.vec3, device=self.device)
            d.record_gap = wp.zeros(capacity, dtype=wp.vec3, device=self.device)

    def record(self, model, contacts, particle_q, body_q) -> None:
        """Store the configuration the pipeline just saw (``particle_q``, ``body_q``) and each record's plane."""
        d = self.data
        if model.particle_count:
            wp.copy(d.particle_origin, particle_q)
        if model.body_count:
            wp.copy(self.body_origin, body_q)
        self.contacts = contacts
        if contacts is None or contacts.soft_contact_max == 0 or particle_q is None:
            return
        self.reserve(contacts.soft_contact_max)
        d.record_corners = contacts.soft_contact_indices  # the buffer the particle lists index
        self._publish()  # ContactData may also have been rebuilt by a capacity growth
        launch(_record, dim=contacts.soft_contact_max,
               inputs=[model.shape_body, contacts.soft_contact_count, contacts.soft_contact_indices,
                       contacts.soft_contact_shape, contacts.soft_contact_body_pos, contacts.soft_contact_normal,
                       particle_q, body_q if model.body_count else self.body_origin],
               outputs=[d.record_normal, d.record_gap], device=self.device)

    def truncate_particles(self, model, work, particle_q) -> None:
        """Scale every free particle of ``particle_q`` back within its bounds (the first iterate)."""
        launch(_truncate_particles, dim=model.particle_count,
               inputs=[model.particle_flags, model.particle_inv_mass, self.data, work.particle_contact_count,
                       work.particle_contact], outputs=[particle_q], device=self.device)

    def truncate_bodies(self, model, body_q) -> None:
        """Scale every dynamic body's pose in ``body_q`` back within its bounds (after a body sweep)."""
        c = self.contacts
        if c is not None and c.soft_contact_max:
            launch(_body_plane_limits, dim=c.soft_contact_max,
                   inputs=[model.shape_body, self.body_dynamic, self.body_reach, self.data.half_relaxation,
                           c.soft_contact_count, c.soft_contact_indices, c.soft_contact_shape,
                           self.data.record_normal, self.data.record_gap, self.body_origin, body_q],
                   outputs=[self.body_scale], device=self.device)
        launch(_truncate_bodies, dim=model.body_count,
               inputs=[self.body_dynamic, self.body_reach, self.data.budget, self.body_origin],
               outputs=[self.body_scale, body_q], device=self.device)


@wp.kernel
def _truncate_particles(
    # Model:
    particle_flags: wp.array[wp.int32],
    particle_inv_mass: wp.array[float],
    dat: RigidSoftDatData,
    contact_count: wp.array[wp.int32],
    contact: wp.array2d[wp.int32],
    # Data in/out:
    particle_q: wp.array[wp.vec3],
):
    i = wp.tid()  # one thread per particle
    if particle_is_free(particle_flags[i], particle_inv_mass[i]):
        particle_q[i] = truncate_rigid_soft(i, dat, contact_count, contact, particle_q[i])


def _body_reach(model) -> np.ndarray:
    """Per body: the farthest any of its shapes reaches from the body origin [m] (>= 1 element)."""
    reach = np.zeros(max(int(model.body_count), 1))
    if model.shape_count and model.body_count:
        body = model.shape_body.numpy()
        offset = np.linalg.norm(model.shape_transform.numpy()[:, :3], axis=1)
        radius = model.shape_collision_radius.numpy()
        for s in np.nonzero(body >= 0)[0]:
            reach[body[s]] = max(reach[body[s]], offset[s] + radius[s])
    return reach


__all__ = ["RigidSoftDat", "RigidSoftDatData", "check_dat", "check_dat_schedule", "disabled_dat", "query_radius",
           "truncate_rigid_soft"]
