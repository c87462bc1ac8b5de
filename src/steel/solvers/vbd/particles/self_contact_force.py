"""Particle self-contact: closest points, the contact law, per-vertex force/Hessian and truncation.

Two kinds of pair act between mesh primitives that are near each other but not topological
neighbours (found by :mod:`.self_contact_detect`): a vertex against a triangle (VT) and an edge
against an edge (EE). Each pair has a separation vector ``u = Σ_k β_k x_k`` over its four vertices:

* VT: ``u = x_v - (w_a x_a + w_b x_b + w_c x_c)`` with the barycentric weights of the closest point
  on the triangle, ``β = (1, -w_a, -w_b, -w_c)``;
* EE: ``u = (x_a1 + s (x_b1 - x_a1)) - (x_a2 + t (x_b2 - x_a2))`` with the closest-point parameters
  of the two segments, ``β = (1 - s, s, t - 1, -t)``.

The pair distance ``d = |u|`` is the minimum over the weights, so by the envelope theorem
``∂d/∂x_k = β_k n`` with ``n = u/d`` and the weights held fixed: the force below is the exact
negative gradient of the pair energy (checked against finite differences in the tests).

Both kinds are summed as they are: where an edge pair's closest points are edge endpoints the
same proximity is also a vertex–triangle pair, and the push there is stronger (IPC's distance
types would count it once; not built, since the truncation, not the force, is what prevents
crossing).

Contact law (a C2 log barrier after Li et al., "Incremental Potential Contact", ACM TOG 39(4) 2020,
joined to a quadratic penalty so its stiffness ``k`` = ``model.soft_contact_ke`` [N/m] keeps the
meaning it has for shape contacts). With the interaction radius ``r`` [m] and ``τ = r/2``:

    E(d) = k/2 (r - d)²                       τ <= d < r      (quadratic penalty)
    E(d) = k τ²/2 - k τ² log(d/τ)             d_min <= d < τ  (log barrier)
    E(d) = 0                                  d >= r

Both pieces have ``E(τ) = k τ²/2``, ``E'(τ) = -k τ`` and ``E''(τ) = k``, so ``E`` is C2 at ``τ``;
at ``r`` value and slope vanish (C1, the penalty's usual kink in stiffness). The barrier grows
without bound as ``d → 0``, so a Newton step that would close the gap meets a rising force; below
``d_min = 1e-5 m`` the barrier is continued by its own second-order Taylor polynomial (C2 at
``d_min``, finite in float32). When ``τ <= d_min`` (a tiny radius) the quadratic piece is used down
to zero distance. A pair closer than ``d_min`` is coincident and exerts no force: at zero distance it
has no normal, and a rounding error apart (a Gauss-Seidel sweep leaves the coincident vertices of two
sheets laid on each other 1e-9 m apart) its normal is noise, along which the continuation pushed with
its full ``-E'(0)`` (5 N at k 1e3 N/m, r 1 cm, on 4 mg vertices): the two sheets burst apart and their
truncation bounds then held them in mid-air (z 0.21-0.30 m after 0.1 s of fall). Such pairs bound
nothing either (:mod:`.self_contact_detect`), so coincident vertices fall together, as on Newton's
SolverVBD. The price: a pair squeezed below ``d_min`` by other forces is no longer pushed apart or
truncated. Rejected: a smaller absolute threshold, since the rounding of float32 positions grows with
their size (4.8e-7 m at 4.6 m).

The Hessian kept per vertex is ``E''(d) β_k² n nᵀ``. The exact block adds ``E'(d) β_k² ∂n/∂x``,
whose eigenvalues along the tangent plane are ``E'(d) β_k²/d <= 0`` (in the edge/corner regions) or
which vanishes (face region, for the vertex side): dropping it is the SPD projection of the block.

Damping and friction use the relative displacement over the step ``Δ = Σ_k β_k (x_k - x_k^t)`` [m]:
an absolute normal damper ``kd`` = ``model.soft_contact_kd`` [N·s/m] on ``n·Δ/dt``, and smoothed
Coulomb friction with ``μ`` = ``model.soft_contact_mu`` and the IPC lagged law of
:mod:`.contacts` (normal force ``f_n = -E'(d)``, tangential slip ``T Δ``, ``ε = friction_epsilon dt``).

Truncation (Chen et al., "Vertex Block Descent", ACM TOG 43(4) 2024, sec. 4): every vertex keeps
within ``bound_i`` [m] of its position at the last detection, see :func:`truncate_displacement`.
"""

from __future__ import annotations

import warp as wp

D_MIN = wp.constant(1.0e-5)  # [m] where the barrier hands over to its Taylor continuation

KIND_VT = wp.constant(0)
KIND_EE = wp.constant(1)


@wp.struct
class SelfContactData:
    """What the vertex step reads about self-contact (built by :class:`.self_contact.SelfContact`)."""

    enabled: int
    radius: float  # interaction distance r [m]
    ke: float  # [N/m]
    kd: float  # [N·s/m]
    mu: float
    friction_epsilon: float  # [m/s]
    parallel_epsilon: float
    tri_indices: wp.array2d[wp.int32]
    edge_indices: wp.array2d[wp.int32]
    vt_tri: wp.array2d[wp.int32]  # (particle, vertex buffer): triangles near each vertex
    ee_edge: wp.array2d[wp.int32]  # (edge, edge buffer): edges near each edge
    incident_count: wp.array[wp.int32]  # (particle,): contact entries touching each vertex
    incident_end: wp.array[wp.int32]  # (particle,): inclusive prefix sum of incident_count
    incident_entry: wp.array[wp.int32]  # packed (pair id, kind, role), see encode_entry
    q_detect: wp.array[wp.vec3]  # positions at the last detection [m]
    bound: wp.array[float]  # per-vertex displacement budget since the last detection [m]


@wp.func
def encode_entry(pair: int, kind: int, role: int):
    """One int32 per (pair, vertex): ``pair * 8 + kind * 4 + role`` (role < 4, kind < 2)."""
    return pair * 8 + kind * 4 + role


# -- closest points ---------------------------------------------------------------------------------


@wp.func
def triangle_closest_point(x: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3):
    """Barycentric weights ``(w_a, w_b, w_c)`` of the point of triangle ``abc`` closest to ``x``.

    Voronoi-region walk (vertex, edge, then face regions) as in Ericson, "Real-Time Collision
    Detection" (2005), sec. 5.1.5; degenerate triangles fall through to an edge or a vertex.
    """
    ab = b - a
    ac = c - a
    ap = x - a
    d1 = wp.dot(ab, ap)
    d2 = wp.dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return wp.vec3(1.0, 0.0, 0.0)
    bp = x - b
    d3 = wp.dot(ab, bp)
    d4 = wp.dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return wp.vec3(0.0, 1.0, 0.0)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        s = d1 / (d1 - d3)
        return wp.vec3(1.0 - s, s, 0.0)
    cp = x - c
    d5 = wp.dot(ab, cp)
    d6 = wp.dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return wp.vec3(0.0, 0.0, 1.0)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        s = d2 / (d2 - d6)
        return wp.vec3(1.0 - s, 0.0, s)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        s = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return wp.vec3(0.0, 1.0 - s, s)
    denom = va + vb + vc
    if denom <= 0.0:  # degenerate (zero-area) triangle that reached the face region: use a corner
        return wp.vec3(1.0, 0.0, 0.0)
    v = vb / denom
    w = vc / denom
    return wp.vec3(1.0 - v - w, v, w)


@wp.func
def segment_closest_params(a1: wp.vec3, b1: wp.vec3, a2: wp.vec3, b2: wp.vec3, parallel_epsilon: float):
    """Parameters ``(s, t)`` in [0, 1] of the closest points of segments ``a1 b1`` and ``a2 b2``.

    Minimizes ``|a1 + s d1 - a2 - t d2|²`` on the unit square (Ericson 2005, sec. 5.1.9). Edges count
    as near-parallel when ``|d1 × d2|² <= parallel_epsilon |d1|² |d2|²``: the unconstrained ``s`` is
    then ill-conditioned, so ``s`` starts at the point of segment 1 facing the middle of segment 2
    (any point of the overlap is a closest point; the distance, and so the force, stays continuous).
    """
    d1 = b1 - a1
    d2 = b2 - a2
    r = a1 - a2
    aa = wp.dot(d1, d1)
    ee = wp.dot(d2, d2)
    f = wp.dot(d2, r)
    tiny = float(1.0e-20)
    if aa <= tiny and ee <= tiny:
        return wp.vec2(0.0, 0.0)
    if aa <= tiny:
        return wp.vec2(0.0, wp.clamp(f / ee, 0.0, 1.0))
    c = wp.dot(d1, r)
    if ee <= tiny:
        return wp.vec2(wp.clamp(-c / aa, 0.0, 1.0), 0.0)
    bb = wp.dot(d1, d2)
    denom = aa * ee - bb * bb  # = |d1 × d2|²
    s = float(0.0)
    if denom > parallel_epsilon * aa * ee:
        s = wp.clamp((bb * f - c * ee) / denom, 0.0, 1.0)
    else:
        # Near-parallel: take the point of segment 1 facing the middle of segment 2.
        s = wp.clamp(wp.dot(0.5 * (a2 + b2) - a1, d1) / aa, 0.0, 1.0)
    t = (bb * s + f) / ee
    if t < 0.0:
        t = 0.0
        s = wp.clamp(-c / aa, 0.0, 1.0)
    elif t > 1.0:
        t = 1.0
        s = wp.clamp((bb - c) / aa, 0.0, 1.0)
    return wp.vec2(s, t)


@wp.func
def vertex_triangle_distance(x: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3):
    """Distance [m] from ``x`` to triangle ``abc``."""
    w = triangle_closest_point(x, a, b, c)
    return wp.length(x - (w[0] * a + w[1] * b + w[2] * c))


@wp.func
def edge_edge_distance(a1: wp.vec3, b1: wp.vec3, a2: wp.vec3, b2: wp.vec3, parallel_epsilon: float):
    """Distance [m] between segments ``a1 b1`` and ``a2 b2``."""
    st = segment_closest_params(a1, b1, a2, b2, parallel_epsilon)
    return wp.length(a1 + st[0] * (b1 - a1) - a2 - st[1] * (b2 - a2))


# -- the contact law ----------------------------------------------------------------------------------


@wp.func
def barrier_energy(d: float, radius: float, ke: float):
    """Contact energy ``E(d)`` [J] at distance ``d`` [m] (module docstring)."""
    if d >= radius:
        return 0.0
    tau = 0.5 * radius
    if d >= tau or tau <= D_MIN:
        return 0.5 * ke * (radius - d) * (radius - d)
    k_tau2 = ke * tau * tau
    if d >= D_MIN:
        return 0.5 * k_tau2 - k_tau2 * wp.log(d / tau)
    # Second-order Taylor continuation of the barrier about d_min.
    e0 = 0.5 * k_tau2 - k_tau2 * wp.log(D_MIN / tau)
    g0 = -k_tau2 / D_MIN
    h0 = k_tau2 / (D_MIN * D_MIN)
    dd = d - D_MIN
    return e0 + g0 * dd + 0.5 * h0 * dd * dd


@wp.func
def barrier_derivatives(d: float, radius: float, ke: float):
    """``(E'(d) [N], E''(d) [N/m])`` of :func:`barrier_energy`; ``E' <= 0`` and ``E'' >= 0``."""
    if d >= radius:
        return 0.0, 0.0
    tau = 0.5 * radius
    if d >= tau or tau <= D_MIN:
        return -ke * (radius - d), ke
    k_tau2 = ke * tau * tau
    if d >= D_MIN:
        return -k_tau2 / d, k_tau2 / (d * d)
    h0 = k_tau2 / (D_MIN * D_MIN)
    return -k_tau2 / D_MIN + h0 * (d - D_MIN), h0


@wp.func
def _pair_force_hessian(u: wp.vec3, delta: wp.vec3, beta: float, radius: float, ke: float, kd: float, mu: float,
                        friction_epsilon: float, dt: float):
    """Force [N] and SPD Hessian [N/m] on one vertex of a pair with separation ``u`` and weight ``beta``."""
    d = wp.length(u)
    if d >= radius or d < D_MIN:  # out of reach, or coincident (module docstring)
        return wp.vec3(0.0), wp.mat33(0.0)
    n = u / d
    de, dde = barrier_derivatives(d, radius, ke)
    nn = wp.outer(n, n)
    rate = wp.dot(n, delta)
    force = (-de * beta) * n - (kd / dt) * rate * beta * n
    hessian = (dde + kd / dt) * beta * beta * nn
    f_n = -de
    if mu > 0.0 and f_n > 0.0:
        slip_vec = delta - rate * n
        slip = wp.length(slip_vec)
        eps = wp.max(friction_epsilon * dt, 1.0e-12)
        ratio = 2.0 / eps - slip / (eps * eps)  # f1(s)/s of the IPC smoothed friction
        if slip >= eps:
            ratio = 1.0 / slip
        force = force - mu * f_n * ratio * beta * slip_vec
        hessian = hessian + mu * f_n * ratio * beta * beta * (wp.identity(3, dtype=float) - nn)
    return force, hessian


@wp.func
def vertex_triangle_force_hessian(
    role: int,
    x: wp.vec3,
    a: wp.vec3,
    b: wp.vec3,
    c: wp.vec3,
    x_prev: wp.vec3,
    a_prev: wp.vec3,
    b_prev: wp.vec3,
    c_prev: wp.vec3,
    radius: float,
    ke: float,
    kd: float,
    mu: float,
    friction_epsilon: float,
    dt: float,
):
    """Force [N] and Hessian [N/m] of a vertex–triangle pair on its vertex ``role`` (0 = x, 1..3 = a, b, c)."""
    w = triangle_closest_point(x, a, b, c)
    u = x - (w[0] * a + w[1] * b + w[2] * c)
    delta = (x - x_prev) - (w[0] * (a - a_prev) + w[1] * (b - b_prev) + w[2] * (c - c_prev))
    beta = float(1.0)
    if role > 0:
        beta = -w[role - 1]
    return _pair_force_hessian(u, delta, beta, radius, ke, kd, mu, friction_epsilon, dt)


@wp.func
def edge_edge_force_hessian(
    role: int,
    a1: wp.vec3,
    b1: wp.vec3,
    a2: wp.vec3,
    b2: wp.vec3,
    a1_prev: wp.vec3,
    b1_prev: wp.vec3,
    a2_prev: wp.vec3,
    b2_prev: wp.vec3,
    radius: float,
    ke: float,
    kd: float,
    mu: float,
    friction_epsilon: float,
    parallel_epsilon: float,
    dt: float,
):
    """Force [N] and Hessian [N/m] of an edge–edge pair on its vertex ``role`` (0, 1 = a1, b1; 2, 3 = a2, b2)."""
    st = segment_closest_params(a1, b1, a2, b2, parallel_epsilon)
    s = st[0]
    t = st[1]
    u = (1.0 - s) * a1 + s * b1 - (1.0 - t) * a2 - t * b2
    delta = (1.0 - s) * (a1 - a1_prev) + s * (b1 - b1_prev) - (1.0 - t) * (a2 - a2_prev) - t * (b2 - b2_prev)
    beta = 1.0 - s
    if role == 1:
        beta = s
    elif role == 2:
        beta = t - 1.0
    elif role == 3:
        beta = -t
    return _pair_force_hessian(u, delta, beta, radius, ke, kd, mu, friction_epsilon, dt)


# -- per-vertex use in the block step ---------------------------------------------------------------------


@wp.func
def entry_vertices(sc: SelfContactData, code: int):
    """The four vertices of the pair behind incident entry ``code`` (VT: v, a, b, c; EE: a1, b1, a2, b2)."""
    pair = code >> 3
    if ((code >> 2) & 1) == KIND_VT:
        width = sc.vt_tri.shape[1]
        v = pair / width
        t = sc.vt_tri[v, pair - v * width]
        return wp.vec4i(v, sc.tri_indices[t, 0], sc.tri_indices[t, 1], sc.tri_indices[t, 2])
    width = sc.ee_edge.shape[1]
    e1 = pair / width
    e2 = sc.ee_edge[e1, pair - e1 * width]
    return wp.vec4i(sc.edge_indices[e1, 2], sc.edge_indices[e1, 3], sc.edge_indices[e2, 2], sc.edge_indices[e2, 3])


@wp.func
def entry_force_hessian(sc: SelfContactData, code: int, x: wp.array[wp.vec3], xp: wp.array[wp.vec3], dt: float):
    """Force [N] and Hessian [N/m] of incident entry ``code``'s pair on the entry's vertex."""
    role = code & 3
    p = entry_vertices(sc, code)
    if ((code >> 2) & 1) == KIND_VT:
        return vertex_triangle_force_hessian(role, x[p[0]], x[p[1]], x[p[2]], x[p[3]], xp[p[0]], xp[p[1]], xp[p[2]],
                                             xp[p[3]], sc.radius, sc.ke, sc.kd, sc.mu, sc.friction_epsilon, dt)
    return edge_edge_force_hessian(role, x[p[0]], x[p[1]], x[p[2]], x[p[3]], xp[p[0]], xp[p[1]], xp[p[2]], xp[p[3]],
                                   sc.radius, sc.ke, sc.kd, sc.mu, sc.friction_epsilon, sc.parallel_epsilon, dt)


@wp.func
def self_contact_force_hessian(i: int, sc: SelfContactData, x: wp.array[wp.vec3], xp: wp.array[wp.vec3], dt: float):
    """Sum of the self-contact forces [N] and Hessians [N/m] on vertex ``i`` at the current positions."""
    f = wp.vec3(0.0)
    h = wp.mat33(0.0)
    if sc.enabled == 0:
        return f, h
    end = sc.incident_end[i]
    for k in range(end - sc.incident_count[i], end):
        fc, hc = entry_force_hessian(sc, sc.incident_entry[k], x, xp, dt)
        f += fc
        h += hc
    return f, h


@wp.func
def truncate_displacement(i: int, sc: SelfContactData, x_new: wp.vec3):
    """``x_new`` pulled back onto the ball of radius ``bound[i]`` around the detection position.

    The bound is ``0.5 γ`` times the distance from vertex ``i``'s primitives to their nearest
    non-neighbour primitive at detection (at most the detection margin, beyond which no primitive
    was found). Two primitives at distance ``D`` then each move less than ``γ D / 2``: every point of
    a primitive is a convex combination of its vertices, so their gap stays above ``(1 - γ) D > 0``
    and nothing crosses between detections, whatever the forces do.
    """
    if sc.enabled == 0:
        return x_new
    origin = sc.q_detect[i]
    step = x_new - origin
    length = wp.length(step)
    b = sc.bound[i]
    if length > b:
        return origin + step * (b / length)
    return x_new


__all__ = [
    "SelfContactData",
    "barrier_derivatives",
    "barrier_energy",
    "edge_edge_distance",
    "edge_edge_force_hessian",
    "encode_entry",
    "entry_force_hessian",
    "entry_vertices",
    "segment_closest_params",
    "self_contact_force_hessian",
    "triangle_closest_point",
    "truncate_displacement",
    "vertex_triangle_distance",
    "vertex_triangle_force_hessian",
]
