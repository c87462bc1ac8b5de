"""Routed tendons in the rigid AVBD solve: massless cables through waypoints on bodies, tension only.

A tendon (``ModelBuilder.add_tendon``) is an ordered route of guides, each a body-local point (``body`` -1:
a world point), with straight spans (segments) between consecutive guides; each span after guide ``i``
carries the incoming material of guide ``i + 1``: compliance ``c`` [m/N], damping ``d`` [N·s/m] and rest
length (negative: measured from ``model.body_q``).

Runs. Material cannot pass an ANCHOR guide; it slides freely through a frictionless PINHOLE (``mu`` 0)
and around a frictionless ROLLER (``mu`` 0: a circle of ``radius`` in the plane normal to ``axis``
about its body-local centre ``offset``, the cable winding on the ``orientation`` side: +1 turns it
positively about the axis). The route therefore splits at its internal anchors into runs: maximal chains
of spans joined by frictionless guides. The tension ``T`` is one number along a run (a frictionless
guide cannot hold a difference), so a run is one scalar row:

    C = Σ_i |e_i,r - e_i,l| + Σ_rollers radius · wrap - L    [m],   L the run's material
    T = max(0, C / c_run)                                   [N],   c_run = Σ_i c_i (springs in series)

with ``e`` a span's ends: the guide's point, or on a roller the tangent point of the straight cable
from the span's other end (so a roller's neighbours must be points), and ``wrap`` the turn from a
roller's incoming to its outgoing tangent point [rad].

Zero compliance is taken as 1e-8 m/N per span, as Newton 1.8.0's SolverVBD documents (an inextensible
span stretches 1e-8 m per newton). The gradient of ``C`` at waypoint ``p_j`` is ``u_{j-1} - u_j`` (unit
span directions, route order; for a roller at its centre: tangent length plus wrap changes with the
centre by the span directions, and the wrap's radial pressure has no moment about the centre), so an end
anchor is pulled along its span, a pinhole or roller by the sum of its two spans, and a body holding
several waypoints of a run takes them all: linear Jacobian ``J_l = Σ g_j``, angular
``J_a = Σ (p_j - x) × g_j`` about the COM ``x``.

The row (one home for it, here). It enters each body's 6x6 block as the compliant augmented-Lagrangian
row of :mod:`.compliant` (Giles, Diaz, Yuksel, "Augmented Vertex Block Descent", SIGGRAPH 2025; Chen et al.,
"Vertex Block Descent", 2024, for the block step): force ``-J F`` with ``F = k_eff C + w λ`` and Hessian
``k_eff J Jᵀ`` (Gauss-Newton), ``k_eff = k ρ / (k + ρ)``, ``w = k / (k + ρ)``, ``k = 1 / c_run``, and the dual
step ``λ ← max(0, k_eff C + w λ)`` after every sweep, whose fixed point is ``λ = k C``: the material
tension, the same for any ``dt``. Unilateral: a row with ``F <= 0`` (slack) adds neither force nor
Hessian, and ``λ`` never goes negative. ``λ`` (the run's tension [N]) is kept across steps by
``rigid_avbd_gamma``. ``ρ = 1 / (dt² Σ_b (|J_l|²/m_b + J_aᵀ I_b⁻¹ J_a))`` over the run's dynamic bodies at the
step's start pose: the run's effective mass over ``dt²``, as the compliant contacts' ``ρ``. Rejected: the
joints' ``ρ = max(9 k, M)``: for a stiff cable it is a huge penalty, and in the Gauss-Seidel sweep the body
visited first then takes the whole correction (measured on the tests' Atwood machine, 3 kg against 1 kg:
the heavy side rose 5.4 cm in 0.25 s, the tension at 8.6 N instead of 14.7). The same row runs in both formulations (``rigid_compliant_alm`` True or False): a
tendon is a material in Newton 1.8.0, which introduced it.

Damping ``d`` acts along the run while it is taut: ``F += d_run (C - C_0) / dt`` (``C_0`` at the step's
start, Hessian ``+ d_run / dt``), inside the clamp, so a slack or slackening cable is never pushed
(dashpots in series: ``1/d_run = Σ 1/d_i``; one span without damping makes the run undamped).

State. The State's tendon arrays (Newton 1.8.0's ``TendonStateMixin`` layout) carry the material: a run's
``L`` is the sum of ``state_in.tendon_segment_rest_length`` over its spans plus the cable on its rollers
at ``state_in``'s pose once the tendon is initialized there (``state._tendon_initialized``), else the
initial material (the model's rest lengths, negative ones measured between the span ends at
``model.body_q``, plus the wraps there); after the step ``state_out`` gets each span's share
(``ℓ_i - T c_i``, the remainder spread by length, the spans' sum ``L`` minus the wraps), the span ends in
body coordinates, which guides are engaged (all but bypassed dynamic rollers), and the tendon marked
initialized. Shortening the state's rest
lengths between steps reels a tendon in.

Colouring. Bodies at the two ends of a span must differ in ``model.body_color_groups`` (Newton's
``ModelBuilder.color()`` after ``add_tendon`` ensures it; otherwise ``ValueError``, as the reference). Bodies
of one run that are not span neighbours (the two sides of an Atwood machine hung over two pinholes) may
share a colour there; the colour groups are split here so that no two bodies of a run move in the same
parallel pass. On CUDA a colour's bodies move at once, each against the others' poses from before the pass
(or torn mid-write), so two bodies sharing one stiff row would each take the whole correction. On the CPU,
where Warp runs a launch's threads in order, the split changes nothing (the tests' Atwood pair runs bitwise
alike with and without it); the CUDA case is not measured.

Rollers, static and dynamic (:func:`roller_contact`). A static roller stays in its route: a cable pulled off
it winds back by a negative turn (down to -90 degrees), as the reference keeps static routes (it warns beyond
its supported wrap of 0 to 180 degrees). A dynamic roller (``TendonGuide(dynamic=True)``) is engaged while
the cable presses on its winding side and bypassed by a straight span otherwise; the switch is geometric, per
iterate, and continuous (at zero turn both paths are the line touching the circle), so it needs no
activation hysteresis: ``tendon_activation_tol`` has nothing to tune here (validated only).

Not run, refused with ``NotImplementedError`` naming them (:func:`check_tendon_features`): friction at rollers
and pinholes (``mu > 0``: capstan slip, rolling, and with them motorized pulleys, which drive the cable
through it), rollers at a route's end or next to another roller, a radius on an ANCHOR or PINHOLE guide, and
guide flags other than DYNAMIC.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from .joints import add_scalar_row
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

ZERO_COMPLIANCE = 1.0e-8  # [m/N] an inextensible span's stand-in (Newton 1.8.0's SolverVBD documents the same)
_EPS_LENGTH = wp.constant(1.0e-9)  # [m] a span shorter than this has no direction (coincident waypoints)
_ROLLER = wp.constant(int(newton.TendonGuideType.ROLLER))
_DYNAMIC = wp.constant(int(newton.TendonGuideFlags.DYNAMIC))


@wp.struct
class TendonData:
    """One row per run (see the module); the waypoints are the model's guides ``first..last`` (inclusive)."""

    guide_body: wp.array[wp.int32]  # model.tendon_guide_body, (guide,), -1 = world
    guide_offset: wp.array[wp.vec3]  # model.tendon_guide_offset: point or roller centre, body frame [m], (guide,)
    guide_type: wp.array[wp.int32]  # model.tendon_guide_type (TendonGuideType), (guide,)
    guide_radius: wp.array[wp.float32]  # model.tendon_guide_radius, rollers [m], (guide,)
    guide_orientation: wp.array[wp.int32]  # model.tendon_guide_orientation, winding side +1 / -1, (guide,)
    guide_axis: wp.array[wp.vec3]  # model.tendon_guide_axis, roller plane normal, body frame, (guide,)
    guide_flags: wp.array[wp.int32]  # model.tendon_guide_flags (TendonGuideFlags), (guide,)
    first: wp.array[wp.int32]  # first guide of the run (an end or internal anchor), (run,)
    last: wp.array[wp.int32]  # last guide of the run, (run,)
    tendon: wp.array[wp.int32]  # the run's tendon, (run,)
    world: wp.array[wp.int32]  # the tendon's world, (run,)
    rest0: wp.array[wp.float32]  # initial rest length (reset value) [m], (run,)
    rest: wp.array[wp.float32]  # this step's rest length [m], (run,)
    seg_rest0: wp.array[wp.float32]  # initial rest length per span [m], (segment,)
    seg_compliance: wp.array[wp.float32]  # per span, zero replaced by ZERO_COMPLIANCE [m/N], (segment,)
    k: wp.array[wp.float32]  # material stiffness 1 / Σ c [N/m], (run,)
    kd: wp.array[wp.float32]  # series damping [N·s/m], (run,)
    k_eff: wp.array[wp.float32]  # conditioned penalty [N/m], (run,)
    w: wp.array[wp.float32]  # multiplier weight, non-dimensional, (run,)
    lam: wp.array[wp.float32]  # tension [N], (run,)
    c0: wp.array[wp.float32]  # C at the step's start [m], (run,)
    body_start: wp.array[wp.int32]  # CSR of the runs acting on each body, (body + 1,)
    body_runs: wp.array[wp.int32]


@wp.func
def _frame(td: TendonData, body_q: wp.array[wp.transform], g: wp.int32):
    """Guide ``g``'s body pose (identity for the world)."""
    b = td.guide_body[g]
    if b < 0:
        return wp.transform_identity()
    return body_q[b]


@wp.func
def _centre(td: TendonData, body_q: wp.array[wp.transform], g: wp.int32):
    """Guide ``g``'s point (anchor, pinhole) or roller centre, world [m]."""
    return wp.transform_point(_frame(td, body_q, g), td.guide_offset[g])


@wp.func
def _tangent(point: wp.vec3, centre: wp.vec3, radius: wp.float32, normal: wp.vec3, side: wp.int32):
    """Where a straight cable from ``point`` touches the circle (``centre``, ``radius``, plane ``normal``), on the
    winding ``side`` (+1: the cable then turns positively about ``normal``). A point inside the circle's cylinder
    has no tangent: the nearest rim point stands in."""
    d = centre - point
    d = d - wp.dot(d, normal) * normal
    dist = wp.length(d)
    if dist <= radius:
        if dist < _EPS_LENGTH:
            d = wp.cross(normal, wp.vec3(1.0, 0.0, 0.0))
            if wp.length(d) < 0.5:
                d = wp.cross(normal, wp.vec3(0.0, 1.0, 0.0))
            return centre + radius * wp.normalize(d)
        return centre - radius * d / dist
    u = d / dist
    v = wp.cross(normal, u)
    phi = wp.asin(wp.min(radius / dist, 1.0))
    angle = wp.where(side > 0, -0.5 * wp.pi - phi, 0.5 * wp.pi + phi)
    return centre + radius * (wp.cos(angle) * u + wp.sin(angle) * v)


@wp.func
def roller_contact(td: TendonData, body_q: wp.array[wp.transform], g: wp.int32):
    """Internal roller ``g``'s incoming and outgoing tangent points (world [m]), the cable's turn between them
    about the winding side's normal [rad], and whether it is engaged (1) or bypassed (0).

    The tangent points are those of straight cables from the neighbouring point guides. A static roller stays
    engaged: a cable pulled off it turns negatively (kept down to -90 degrees, as Newton keeps static routes). A
    dynamic one (``TendonGuideFlags.DYNAMIC``) is bypassed while the turn is negative, i.e. while the straight
    line between its neighbours does not press on its winding side: both ends then sit at the point of that line
    nearest the centre, so the two spans are the straight bypass and their pulls on the roller cancel. At zero
    turn both geometries are the line touching the circle, so length and gradient change continuously.
    """
    t = _frame(td, body_q, g)
    centre = wp.transform_point(t, td.guide_offset[g])
    normal = wp.normalize(wp.transform_vector(t, td.guide_axis[g]))
    side = td.guide_orientation[g]
    p_in = _centre(td, body_q, g - 1)
    p_out = _centre(td, body_q, g + 1)
    t_in = _tangent(p_in, centre, td.guide_radius[g], normal, side)
    t_out = _tangent(p_out, centre, td.guide_radius[g], normal, -side)
    a = t_in - centre
    b = t_out - centre
    turn = wp.atan2(float(side) * wp.dot(normal, wp.cross(a, b)), wp.dot(a, b))
    if turn < -0.5 * wp.pi:
        turn = turn + 2.0 * wp.pi
    if (td.guide_flags[g] & _DYNAMIC) != 0 and turn < 0.0:
        line = p_out - p_in
        s = wp.clamp(wp.dot(centre - p_in, line) / wp.max(wp.dot(line, line), 1.0e-18), 0.0, 1.0)
        q = p_in + s * line
        return q, q, float(0.0), 0
    return t_in, t_out, turn, 1


@wp.func
def span_ends(td: TendonData, body_q: wp.array[wp.transform], g: wp.int32):
    """World ends [m] of the span from guide ``g`` to ``g + 1``: points, or a roller's tangent point (a roller's
    neighbours are points, :func:`check_tendon_features`)."""
    e_l = _centre(td, body_q, g)
    e_r = _centre(td, body_q, g + 1)
    if td.guide_type[g] == _ROLLER:
        t_in, t_out, turn, engaged = roller_contact(td, body_q, g)
        e_l = t_out
    if td.guide_type[g + 1] == _ROLLER:
        t_in, t_out, turn, engaged = roller_contact(td, body_q, g + 1)
        e_r = t_in
    return e_l, e_r


@wp.func
def wrap_length(td: TendonData, body_q: wp.array[wp.transform], g: wp.int32):
    """Cable lying on internal guide ``g`` [m]: a roller's radius times its turn (:func:`roller_contact`); 0 else."""
    if td.guide_type[g] != _ROLLER:
        return float(0.0)
    t_in, t_out, turn, engaged = roller_contact(td, body_q, g)
    return td.guide_radius[g] * turn


@wp.func
def run_arcs(td: TendonData, body_q: wp.array[wp.transform], r: wp.int32):
    """Cable lying on run ``r``'s rollers [m]."""
    arcs = float(0.0)
    for g in range(td.first[r] + 1, td.last[r]):
        arcs = arcs + wrap_length(td, body_q, g)
    return arcs


@wp.func
def run_geometry(td: TendonData, body_q: wp.array[wp.transform], body_com: wp.array[wp.vec3], r: wp.int32,
                 b: wp.int32):
    """Run ``r``'s length [m] (spans and wraps) and the Jacobian of its length for body ``b`` (linear, angular about
    the COM; zero when ``b`` holds none of its waypoints, e.g. -2). A frictionless roller takes its spans' pulls
    at its centre: the wrap presses radially, so the equal tensions on its two sides exert no torque about it."""
    x = wp.vec3(0.0)
    if b >= 0:
        x = wp.transform_point(body_q[b], body_com[b])
    length = run_arcs(td, body_q, r)
    j_l = wp.vec3(0.0)
    j_a = wp.vec3(0.0)
    for g in range(td.first[r], td.last[r]):
        e_l, e_r = span_ends(td, body_q, g)
        d = e_r - e_l
        span = wp.length(d)
        u = wp.vec3(0.0)
        if span > _EPS_LENGTH:
            u = d / span
        length = length + span
        if td.guide_body[g] == b:
            at = wp.where(td.guide_type[g] == _ROLLER, _centre(td, body_q, g), e_l)
            j_l = j_l - u
            j_a = j_a - wp.cross(at - x, u)
        if td.guide_body[g + 1] == b:
            at = wp.where(td.guide_type[g + 1] == _ROLLER, _centre(td, body_q, g + 1), e_r)
            j_l = j_l + u
            j_a = j_a + wp.cross(at - x, u)
    return length, j_l, j_a


@wp.func
def tendon_force_on_body(td: TendonData, body_q: wp.array[wp.transform], body_com: wp.array[wp.vec3],
                         b: wp.int32, dt: wp.float32):
    """Force, torque [N, N·m] and Hessian blocks (lin-lin, lin-ang, ang-ang) of the taut runs on body ``b``."""
    f_l = wp.vec3(0.0)
    f_a = wp.vec3(0.0)
    h_ll = wp.mat33(0.0)
    h_la = wp.mat33(0.0)
    h_aa = wp.mat33(0.0)
    for i in range(td.body_start[b], td.body_start[b + 1]):
        r = td.body_runs[i]
        length, j_l, j_a = run_geometry(td, body_q, body_com, r, b)
        c = length - td.rest[r]
        f = td.k_eff[r] * c + td.w[r] * td.lam[r]
        k = td.k_eff[r]
        if td.kd[r] > 0.0:
            f = f + td.kd[r] * (c - td.c0[r]) / dt
            k = k + td.kd[r] / dt
        if f <= 0.0:
            continue  # slack: no push, no stiffness
        f_l, f_a, h_ll, h_la, h_aa = add_scalar_row(f_l, f_a, h_ll, h_la, h_aa, j_l, j_a, f, k)
    return f_l, f_a, h_ll, h_la, h_aa


@wp.kernel
def _begin_runs(
    td: TendonData,
    body_q: wp.array[wp.transform],
    body_com: wp.array[wp.vec3],
    body_mass: wp.array[wp.float32],
    body_inertia: wp.array[wp.mat33],
    dynamic: wp.array[wp.int32],
    seg_rest_in: wp.array[wp.float32],
    initialized_in: wp.array[wp.bool],
    keep: wp.float32,
    dt: wp.float32,
):
    r = wp.tid()  # one thread per run, at the step's start poses
    t = td.tendon[r]
    rest = td.rest0[r]
    if initialized_in[t]:
        rest = run_arcs(td, body_q, r)  # the State keeps the spans' material; the wraps' lies on the rollers
        for g in range(td.first[r], td.last[r]):
            rest = rest + seg_rest_in[g - t]  # span (g, g + 1) of tendon t is segment g - t
    td.rest[r] = rest
    td.lam[r] = keep * td.lam[r]
    # ρ: the run's effective mass over dt², each dynamic body counted once with all its waypoints.
    compliance = float(0.0)  # [m/N] times dt²
    for g in range(td.first[r], td.last[r] + 1):
        b = td.guide_body[g]
        seen = int(0)
        for h in range(td.first[r], g):
            if td.guide_body[h] == b:
                seen = 1
        if b < 0 or seen != 0:
            continue
        if dynamic[b] == 0:
            continue
        length, j_l, j_a = run_geometry(td, body_q, body_com, r, b)
        rot = wp.quat_to_matrix(wp.transform_get_rotation(body_q[b]))
        inv_inertia = rot * wp.inverse(body_inertia[b]) * wp.transpose(rot)
        compliance = compliance + wp.dot(j_l, j_l) / body_mass[b] + wp.dot(j_a, inv_inertia * j_a)
    length, j_l, j_a = run_geometry(td, body_q, body_com, r, -2)
    td.c0[r] = length - rest
    k = td.k[r]
    if compliance > 0.0:
        rho = 1.0 / (compliance * dt * dt)
        td.k_eff[r] = k * rho / (k + rho)  # the compliant ALM conditioning (.compliant)
        td.w[r] = k / (k + rho)
    else:  # no dynamic body on the run: the row moves nothing
        td.k_eff[r] = k
        td.w[r] = 0.0


@wp.kernel
def _run_duals(td: TendonData, body_q: wp.array[wp.transform], body_com: wp.array[wp.vec3]):
    r = wp.tid()  # one thread per run, after every sweep
    length, j_l, j_a = run_geometry(td, body_q, body_com, r, -2)
    td.lam[r] = wp.max(0.0, td.k_eff[r] * (length - td.rest[r]) + td.w[r] * td.lam[r])


@wp.func
def _local(td: TendonData, body_q: wp.array[wp.transform], g: wp.int32, p: wp.vec3):
    """World point ``p`` in guide ``g``'s body frame [m]."""
    return wp.transform_point(wp.transform_inverse(_frame(td, body_q, g)), p)


@wp.kernel
def _publish_runs(
    td: TendonData,
    body_q: wp.array[wp.transform],
    seg_rest_out: wp.array[wp.float32],
    attach_l_out: wp.array[wp.vec3],
    attach_r_out: wp.array[wp.vec3],
    active_out: wp.array[wp.bool],
    initialized_out: wp.array[wp.bool],
):
    r = wp.tid()  # one thread per run, at the step's end poses
    t = td.tendon[r]
    tension = td.lam[r]
    spans = td.rest[r] - run_arcs(td, body_q, r)  # the spans' material [m]
    total = float(0.0)  # Σ ℓ [m]
    stretched = float(0.0)  # Σ (ℓ - T c) [m]
    for g in range(td.first[r], td.last[r]):
        e_l, e_r = span_ends(td, body_q, g)
        span = wp.length(e_r - e_l)
        total = total + span
        stretched = stretched + span - tension * td.seg_compliance[g - t]
    spread = spans - stretched  # what the shares lack to sum to the spans' material, spread by length
    n = float(td.last[r] - td.first[r])
    given = float(0.0)
    for g in range(td.first[r], td.last[r]):
        s = g - t
        e_l, e_r = span_ends(td, body_q, g)
        span = wp.length(e_r - e_l)
        share = span - tension * td.seg_compliance[s] + wp.where(total > 0.0, spread * span / total, spread / n)
        if g == td.last[r] - 1:
            share = spans - given  # the last span closes the sum exactly
        given = given + share
        seg_rest_out[s] = share
        attach_l_out[s] = _local(td, body_q, g, e_l)
        attach_r_out[s] = _local(td, body_q, g + 1, e_r)
        engaged = int(1)
        if g > td.first[r] and td.guide_type[g] == _ROLLER:
            t_in, t_out, turn, engaged = roller_contact(td, body_q, g)
        active_out[g] = engaged != 0
    active_out[td.last[r]] = True
    initialized_out[t] = True


@wp.kernel
def _measure_spans(td: TendonData, body_q: wp.array[wp.transform], seg_length: wp.array[wp.float32],
                   run_arc: wp.array[wp.float32]):
    r = wp.tid()  # one thread per run: its spans' lengths and its wraps at the poses body_q (construction)
    for g in range(td.first[r], td.last[r]):
        e_l, e_r = span_ends(td, body_q, g)
        seg_length[g - td.tendon[r]] = wp.length(e_r - e_l)
    run_arc[r] = run_arcs(td, body_q, r)


@wp.kernel
def _reset_runs(
    td: TendonData,
    mask: wp.array[wp.bool],
    use_mask: wp.int32,
    local_only: wp.int32,
    seg_rest_out: wp.array[wp.float32],
    initialized_out: wp.array[wp.bool],
):
    r = wp.tid()  # one thread per run
    w = td.world[r]
    if use_mask != 0:
        if w < 0:
            if local_only != 0 or not mask[mask.shape[0] - 1]:
                return
        elif w >= mask.shape[0] or not mask[w]:
            return
    td.lam[r] = 0.0
    t = td.tendon[r]
    for g in range(td.first[r], td.last[r]):
        seg_rest_out[g - t] = td.seg_rest0[g - t]
    initialized_out[t] = False


def _runs(model) -> list[tuple[int, int, int]]:
    """``(first guide, last guide, tendon)`` per run: each route split at its internal ANCHOR guides."""
    start = model.tendon_start.numpy()
    kind = model.tendon_guide_type.numpy()
    anchor = int(newton.TendonGuideType.ANCHOR)
    runs = []
    for t in range(int(model.tendon_count)):
        first = int(start[t])
        for g in range(int(start[t]) + 1, int(start[t + 1])):
            if g == int(start[t + 1]) - 1 or kind[g] == anchor:
                runs.append((first, g, t))
                first = g
    return runs


def _materials(model, runs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per span compliance (zero → ZERO_COMPLIANCE) [m/N]; per run series stiffness [N/m] and damping [N·s/m]."""
    c = np.maximum(model.tendon_segment_compliance.numpy().astype(np.float64), ZERO_COMPLIANCE)
    d = model.tendon_segment_damping.numpy().astype(np.float64)
    k = np.zeros(max(len(runs), 1))
    kd = np.zeros(max(len(runs), 1))
    for i, (first, last, t) in enumerate(runs):
        s = np.arange(first - t, last - t)
        k[i] = 1.0 / c[s].sum()
        kd[i] = 1.0 / (1.0 / d[s]).sum() if (d[s] > 0.0).all() else 0.0
    return c.astype(np.float32), k.astype(np.float32), kd.astype(np.float32)


class Tendons:
    """The model's tendon runs (:class:`TendonData`) and their per-step launches; ``count`` 0 without tendons."""

    def __init__(self, model, dynamic: np.ndarray):
        dev = model.device
        runs = _runs(model) if int(getattr(model, "tendon_count", 0) or 0) else []
        self.count = len(runs)
        self.device = dev
        self.runs = runs
        nb = max(int(model.body_count), 1)
        n = max(self.count, 1)
        td = TendonData()
        f32 = {"dtype": wp.float32, "device": dev}
        if self.count:
            td.guide_body, td.guide_offset = model.tendon_guide_body, model.tendon_guide_offset
            td.guide_type, td.guide_radius = model.tendon_guide_type, model.tendon_guide_radius
            td.guide_orientation, td.guide_axis = model.tendon_guide_orientation, model.tendon_guide_axis
            td.guide_flags = model.tendon_guide_flags
            body = model.tendon_guide_body.numpy()
            world = model.tendon_world.numpy()
            segments = int(model.tendon_segment_count)
        else:
            td.guide_body = td.guide_type = td.guide_orientation = td.guide_flags = wp.zeros(1, dtype=wp.int32,
                                                                                             device=dev)
            td.guide_offset = td.guide_axis = wp.zeros(1, dtype=wp.vec3, device=dev)
            td.guide_radius = wp.zeros(1, **f32)
            body, world, segments = np.zeros(1, np.int32), np.zeros(1, np.int32), 1
        cols = np.array(runs, np.int32).reshape(-1, 3) if runs else np.zeros((1, 3), np.int32)
        td.first, td.last, td.tendon = (wp.array(cols[:, i], dtype=wp.int32, device=dev) for i in range(3))
        td.world = wp.array(world[cols[:, 2]].astype(np.int32), dtype=wp.int32, device=dev)
        # Initial material: the model's rest lengths, negative ones measured between the spans' ends (tangent
        # points on rollers) at model.body_q, plus the cable lying on the rollers there.
        seg_length, arc = wp.zeros(segments, **f32), wp.zeros(n, **f32)
        if self.count:
            launch(_measure_spans, dim=self.count, inputs=[td, model.body_q], outputs=[seg_length, arc], device=dev)
            given = model.tendon_segment_rest_length.numpy()
            seg_rest0 = np.where(given < 0.0, seg_length.numpy(), given).astype(np.float32)
        else:
            seg_rest0 = np.zeros(1, np.float32)
        arc = arc.numpy()
        rest0 = np.array([seg_rest0[f - t:l - t].sum() + arc[r] for r, (f, l, t) in enumerate(runs)] or [0.0],
                         np.float32)
        td.rest0 = wp.array(rest0, **f32)
        td.rest = wp.array(rest0, **f32)
        td.seg_rest0 = wp.array(seg_rest0, **f32)
        td.seg_compliance = wp.zeros(max(seg_rest0.shape[0], 1), **f32)
        td.k, td.kd = wp.zeros(n, **f32), wp.zeros(n, **f32)
        td.k_eff, td.w = wp.zeros(n, **f32), wp.zeros(n, **f32)
        td.lam, td.c0 = wp.zeros(n, **f32), wp.zeros(n, **f32)
        lists = [[] for _ in range(nb)]
        self.run_bodies = []  # per run: the dynamic bodies it moves
        for r, (first, last, _t) in enumerate(runs):
            held = sorted({int(b) for b in body[first:last + 1] if b >= 0 and dynamic[b]})
            self.run_bodies.append(held)
            for b in held:
                lists[b].append(r)
        start = np.zeros(nb + 1, np.int32)
        start[1:] = np.cumsum([len(x) for x in lists])
        td.body_start = wp.array(start, dtype=wp.int32, device=dev)
        td.body_runs = wp.array(np.array([r for x in lists for r in x] or [0], np.int32), dtype=wp.int32, device=dev)
        self.data = td
        self.refresh(model)

    def refresh(self, model) -> None:
        """Read the spans' compliance and damping; rest lengths live in the State."""
        if self.count:
            c, k, kd = _materials(model, self.runs)
            self.data.seg_compliance.assign(c)
            self.data.k.assign(k)
            self.data.kd.assign(kd)

    def begin(self, bd, state_in, dt: float, keep: float) -> None:
        """The step's rest lengths (from ``state_in``), conditioning, ``C_0``, and ``λ`` kept by ``keep``."""
        if not self.count:
            return
        launch(_begin_runs, dim=self.count,
               inputs=[self.data, state_in.body_q, bd.com, bd.mass, bd.inertia, bd.dynamic,
                       state_in.tendon_segment_rest_length, state_in._tendon_initialized, float(keep), float(dt)],
               device=self.device)

    def update_duals(self, body_q, body_com) -> None:
        """Dual step after a sweep: ``λ ← max(0, k_eff C + w λ)``."""
        if self.count:
            launch(_run_duals, dim=self.count, inputs=[self.data, body_q, body_com], device=self.device)

    def publish(self, state_out) -> None:
        """Write the material (rest length shares), attachment points and activity into ``state_out``."""
        if self.count:
            launch(_publish_runs, dim=self.count, inputs=[self.data, state_out.body_q],
                   outputs=[state_out.tendon_segment_rest_length, state_out.tendon_segment_attachment_l_local,
                            state_out.tendon_segment_attachment_r_local, state_out.tendon_guide_active,
                            state_out._tendon_initialized], device=self.device)

    def reset(self, model, state, world_mask) -> None:
        """Zero the selected worlds' tensions; restore their spans' rest lengths in ``state`` (if it has them)."""
        if not self.count:
            return
        use_mask = int(world_mask is not None)
        mask = world_mask if world_mask is not None else wp.zeros(1, dtype=wp.bool, device=self.device)
        local_only = int(use_mask and mask.shape[0] == int(model.world_count))
        rest = getattr(state, "tendon_segment_rest_length", None) if state is not None else None
        init = getattr(state, "_tendon_initialized", None) if state is not None else None
        if rest is None or init is None:  # no tendon arrays to restore: a scratch pair takes the writes
            rest = wp.zeros(self.data.seg_rest0.shape[0], **{"dtype": wp.float32, "device": self.device})
            init = wp.zeros(int(model.tendon_count), dtype=wp.bool, device=self.device)
        launch(_reset_runs, dim=self.count, inputs=[self.data, mask, use_mask, local_only], outputs=[rest, init],
               device=self.device)

    def tensions(self) -> np.ndarray:
        """Each run's tension [N] at the end of the last step (reads the device)."""
        return self.data.lam.numpy()[:self.count].copy()


def check_tendon_features(model) -> None:
    """Raise ``NotImplementedError`` naming the first tendon feature the solve does not run (see the module)."""
    if not int(getattr(model, "tendon_count", 0) or 0):
        return
    kind = model.tendon_guide_type.numpy()
    mu = model.tendon_guide_mu.numpy()
    radius = model.tendon_guide_radius.numpy()
    flags = model.tendon_guide_flags.numpy()
    start = model.tendon_start.numpy()
    T = newton.TendonGuideType
    roller = kind == int(T.ROLLER)
    end = np.zeros(kind.shape[0], bool)
    end[start[:-1]] = True
    end[start[1:] - 1] = True
    neighbour = np.zeros(kind.shape[0], bool)  # a roller whose next guide in the same route is a roller
    neighbour[:-1] = roller[:-1] & roller[1:] & ~end[:-1]
    checks = (
        ((flags & ~int(newton.TendonGuideFlags.DYNAMIC)) != 0, "tendon guide flags other than DYNAMIC"),
        (roller & (mu > 0.0), "friction at tendon ROLLER guides (capstan slip and rolling, mu > 0; motorized "
                              "pulleys drive the cable through it)"),
        ((kind == int(T.PINHOLE)) & (mu > 0.0), "friction at tendon PINHOLE guides (capstan slip, mu > 0)"),
        (roller & end, "tendon ROLLER guides at a route's end"),
        (neighbour, "spans between two tendon ROLLER guides"),
        (~roller & (radius > 0.0), "a radius on tendon ANCHOR or PINHOLE guides"),
    )
    for bad, what in checks:
        idx = np.flatnonzero(bad)
        if idx.size:
            raise NotImplementedError(f"SolverVBD does not implement {what}: {idx.size} guides, e.g. guide "
                                      f"{int(idx[0])}; supported: ANCHOR guides, frictionless PINHOLE guides and "
                                      "frictionless static ROLLER guides between point guides")


def check_tendon_colouring(model, runs) -> None:
    """``ValueError`` unless the bodies at the ends of every span (and of a dynamic roller's bypass) differ in
    colour."""
    if not runs or not model.body_color_groups:
        return
    colour = np.full(int(model.body_count), -1, np.int64)
    for c, group in enumerate(model.body_color_groups):
        colour[group.numpy()] = c
    body = model.tendon_guide_body.numpy()
    dynamic = (model.tendon_guide_flags.numpy() & int(newton.TendonGuideFlags.DYNAMIC)) != 0
    for first, last, t in runs:
        # The spans, and the bypass span of each dynamic roller (its neighbours), as Newton's color() joins them.
        pairs = [(g, g + 1) for g in range(first, last)] + [(g - 1, g + 1) for g in range(first + 1, last)
                                                             if dynamic[g]]
        for i, j in pairs:
            a, b = int(body[i]), int(body[j])
            if a >= 0 and b >= 0 and a != b and colour[a] >= 0 and colour[a] == colour[b]:
                raise ValueError(f"SolverVBD: tendon {t} joins bodies {a} and {b} of the same colour; call "
                                 "builder.color() (newton.ModelBuilder.color) after add_tendon, before finalize()")


def split_groups(groups: list, run_bodies: list[list[int]], device) -> list:
    """The colour groups split so that no group holds two bodies of one run (greedy, order kept)."""
    if not any(len(x) > 1 for x in run_bodies):
        return groups
    partners: dict[int, set[int]] = {}
    for held in run_bodies:
        for b in held:
            partners.setdefault(b, set()).update(held)
    out = []
    for group in groups:
        subs: list[list[int]] = []
        for b in group.numpy().tolist():
            for sub in subs:
                if not partners.get(b, set()).intersection(sub):
                    sub.append(b)
                    break
            else:
                subs.append([b])
        out.extend(wp.array(np.array(s, np.int32), dtype=wp.int32, device=device) for s in subs)
    return out


__all__ = ["TendonData", "Tendons", "check_tendon_colouring", "check_tendon_features", "run_geometry",
           "split_groups", "tendon_force_on_body"]
