"""SolverVBD particle self-contact: the contact law against finite differences, detection filters and
buffers, the detection cadence, and a folded cloth that must not pass through itself.

The penetration checks are independent of the solver's detector: exact-in-float64 orientation tests
of every mesh edge against every triangle it does not touch (a crossing edge means a vertex–triangle
or edge–edge interpenetration), plus a per-step sign test of every vertex against every triangle.
"""

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.app.intersections import vertex_triangle_crossings
from steel.solvers import SolverVBD
from steel.solvers.vbd.options import build_options
from steel.solvers.vbd.particles.self_contact import SelfContact
from steel.solvers.vbd.particles.self_contact_detect import ring_table, mesh_edges
from steel.solvers.vbd.particles.self_contact_force import (
    barrier_derivatives,
    barrier_energy,
    edge_edge_force_hessian,
    vertex_triangle_force_hessian,
)

KE = 1.0e3  # [N/m]
RADIUS = 0.01  # [m]

# -- NumPy float64 twins of the distances and the law (written from the definitions) --------------------


def _point_segment(x, a, b):
    ab = b - a
    t = np.clip(np.dot(x - a, ab) / max(np.dot(ab, ab), 1e-300), 0.0, 1.0)
    return np.linalg.norm(x - (a + t * ab))


def _point_triangle(x, a, b, c):
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n)
    p = x - np.dot(x - a, n) * n
    # Inside test by the signs of the sub-triangle normals.
    s = [np.dot(np.cross(v1 - p, v2 - p), n) for v1, v2 in ((a, b), (b, c), (c, a))]
    if all(v >= 0 for v in s) or all(v <= 0 for v in s):
        return abs(np.dot(x - a, n))
    return min(_point_segment(x, a, b), _point_segment(x, b, c), _point_segment(x, c, a))


def _segment_segment(a1, b1, a2, b2):
    d1, d2, r = b1 - a1, b2 - a2, a1 - a2
    cands = [_point_segment(a1, a2, b2), _point_segment(b1, a2, b2), _point_segment(a2, a1, b1),
             _point_segment(b2, a1, b1)]
    m = np.array([[d1 @ d1, -(d1 @ d2)], [-(d1 @ d2), d2 @ d2]])
    if abs(np.linalg.det(m)) > 1e-14 * (d1 @ d1) * (d2 @ d2):
        s, t = np.linalg.solve(m, [-(d1 @ r), d2 @ r])
        if 0 <= s <= 1 and 0 <= t <= 1:
            cands.append(np.linalg.norm(a1 + s * d1 - a2 - t * d2))
    return min(cands)


def _energy(d, r=RADIUS, k=KE):
    tau, dmin = 0.5 * r, 1e-5
    if d >= r:
        return 0.0
    if d >= tau:
        return 0.5 * k * (r - d) ** 2
    if d >= dmin:
        return 0.5 * k * tau**2 - k * tau**2 * np.log(d / tau)
    e0 = 0.5 * k * tau**2 - k * tau**2 * np.log(dmin / tau)
    return e0 - k * tau**2 / dmin * (d - dmin) + 0.5 * k * tau**2 / dmin**2 * (d - dmin) ** 2


# -- Warp evaluation of the @wp.funcs -------------------------------------------------------------------


@wp.kernel
def _law_kernel(d: wp.array[float], out: wp.array[wp.vec3]):
    i = wp.tid()
    g, h = barrier_derivatives(d[i], RADIUS, KE)
    out[i] = wp.vec3(barrier_energy(d[i], RADIUS, KE), g, h)


@wp.kernel
def _pair_kernel(kind: int, x: wp.array[wp.vec3], xp: wp.array[wp.vec3], kd: float, mu: float, dt: float,
                 f_out: wp.array[wp.vec3], h_out: wp.array[wp.mat33]):
    role = wp.tid()
    if kind == 0:
        f, h = vertex_triangle_force_hessian(role, x[0], x[1], x[2], x[3], xp[0], xp[1], xp[2], xp[3], RADIUS, KE,
                                             kd, mu, 1.0e-2, dt)
    else:
        f, h = edge_edge_force_hessian(role, x[0], x[1], x[2], x[3], xp[0], xp[1], xp[2], xp[3], RADIUS, KE, kd, mu,
                                       1.0e-2, 1.0e-5, dt)
    f_out[role] = f
    h_out[role] = h


def _pair(kind, x, xp=None, kd=0.0, mu=0.0, dt=1e-2):
    xp = x if xp is None else xp
    f = wp.zeros(4, dtype=wp.vec3, device="cpu")
    h = wp.zeros(4, dtype=wp.mat33, device="cpu")
    wp.launch(_pair_kernel, 4, inputs=[kind, wp.array(x, dtype=wp.vec3, device="cpu"),
                                       wp.array(xp, dtype=wp.vec3, device="cpu"), kd, mu, dt], outputs=[f, h],
              device="cpu")
    return f.numpy().astype(np.float64), h.numpy().astype(np.float64)


def _pair_energy(kind, x):
    d = _point_triangle(*x) if kind == 0 else _segment_segment(*x)
    return _energy(d)


def _fd(kind, x, step=1e-7):
    """Central differences of the float64 twin: forces (4, 3) and Hessian blocks (4, 3, 3)."""
    grad = np.zeros((4, 3))
    hess = np.zeros((4, 3, 3))
    for r in range(4):
        for j in range(3):
            xp, xm = x.copy(), x.copy()
            xp[r, j] += step
            xm[r, j] -= step
            grad[r, j] = (_pair_energy(kind, xp) - _pair_energy(kind, xm)) / (2 * step)
    for r in range(4):
        for j in range(3):
            xp, xm = x.copy(), x.copy()
            xp[r, j] += 1e-6
            xm[r, j] -= 1e-6
            for k in range(3):
                gp, gm = [], []
                for xs, store in ((xp, gp), (xm, gm)):
                    a, b = xs.copy(), xs.copy()
                    a[r, k] += step
                    b[r, k] -= step
                    store.append((_pair_energy(kind, a) - _pair_energy(kind, b)) / (2 * step))
                hess[r, j, k] = (gp[0] - gm[0]) / 2e-6
    return -grad, hess


# Configurations: (kind, positions, Hessian of the role-0 block exact = rank one?)
_VT_FACE = np.array([[0.3, 0.3, 0.004], [0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float64)
_VT_FACE_FAR = np.array([[0.2, 0.25, 0.008], [0, 0, 0.001], [1, 0, 0], [0, 1, -0.002]], dtype=np.float64)
_VT_EDGE = np.array([[0.5, -0.003, 0.004], [0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float64)
_VT_CORNER = np.array([[-0.002, -0.003, 0.002], [0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float64)
_EE_CROSS = np.array([[-0.5, 0.1, 0.003], [0.5, 0.2, 0.003], [0.1, -0.5, 0], [0.0, 0.5, 0]], dtype=np.float64)
_EE_END = np.array([[0.002, 0.004, 0.006], [0.5, 0.6, 0.7], [-0.5, 0, 0], [0.5, 0, 0]], dtype=np.float64)


def test_barrier_law_derivatives_and_c2_joins():
    """E', E'' match central differences of E (float64 twin) in every piece; E, E', E'' continuous at tau and d_min."""
    tau, dmin = 0.5 * RADIUS, 1e-5
    d = np.array([2e-6, 5e-6, dmin, 3e-5, 1e-3, 3e-3, tau, 6e-3, 9e-3, 0.0099, 0.02], dtype=np.float32)
    out = wp.zeros(len(d), dtype=wp.vec3, device="cpu")
    wp.launch(_law_kernel, len(d), inputs=[wp.array(d, dtype=float, device="cpu")], outputs=[out], device="cpu")
    e, g, h = out.numpy().astype(np.float64).T
    for di, ei, gi, hi in zip(d.astype(np.float64), e, g, h):
        step = 1e-3 * min(di, dmin) if di < 2 * dmin else 1e-3 * min(di, tau)
        g_fd = (_energy(di + step) - _energy(di - step)) / (2 * step)
        h_fd = (_energy(di + step) - 2 * _energy(di) + _energy(di - step)) / step**2
        assert abs(ei - _energy(di)) <= 1e-5 * max(1.0, abs(_energy(di)))
        assert abs(gi - g_fd) <= 2e-4 * max(abs(g_fd), 1e-3), (di, gi, g_fd)
        if abs(di - RADIUS) > 2 * step and di < RADIUS:
            assert abs(hi - h_fd) <= 2e-3 * abs(h_fd), (di, hi, h_fd)
        assert gi <= 0.0 and hi >= 0.0
    # C2 joins: one-sided values agree.
    for join in (tau, dmin):
        lo, hi_ = join * (1 - 1e-9), join * (1 + 1e-9)
        dl = max(lo, dmin)
        gl, hl = (-KE * (RADIUS - lo), KE) if lo >= tau else (-KE * tau**2 / dl, KE * tau**2 / dl**2)
        gh, hh = (-KE * (RADIUS - hi_), KE) if hi_ >= tau else (-KE * tau**2 / hi_, KE * tau**2 / hi_**2)
        assert abs(gl - gh) <= 1e-6 * abs(gh) + 1e-9 and abs(hl - hh) <= 1e-6 * abs(hh)
    assert _energy(RADIUS) == 0.0


@pytest.mark.parametrize("name", ["vt_face", "vt_face_tilted", "vt_edge", "vt_corner", "ee_cross", "ee_endpoint"])
def test_pair_force_is_minus_gradient_and_hessian_is_its_spd_projection(name):
    """Per-vertex force = -dE/dx (central FD of the float64 twin) on all four vertices; Hessian blocks are
    symmetric PSD and match the FD block along the normal (the whole SPD-projected block for a VT pair's vertex)."""
    kind, x = {"vt_face": (0, _VT_FACE), "vt_face_tilted": (0, _VT_FACE_FAR), "vt_edge": (0, _VT_EDGE),
               "vt_corner": (0, _VT_CORNER), "ee_cross": (1, _EE_CROSS), "ee_endpoint": (1, _EE_END)}[name]
    f, h = _pair(kind, x)
    f_fd, h_fd = _fd(kind, x)
    scale = np.abs(f_fd).max()
    assert scale > 0.1  # the pair is inside the radius: the check is not vacuous
    err_f = np.abs(f - f_fd).max() / scale
    print(f"{name}: max |f - f_fd| / max|f| = {err_f:.2e}")
    assert err_f < 2e-4
    for r in range(4):
        hr = h[r]
        assert np.allclose(hr, hr.T, atol=1e-6 * np.abs(hr).max() + 1e-12)
        assert np.linalg.eigvalsh(hr).min() >= -1e-6 * np.abs(hr).max()
        sym = 0.5 * (h_fd[r] + h_fd[r].T)
        w, v = np.linalg.eigh(sym)
        proj = (v * np.clip(w, 0, None)) @ v.T  # SPD projection of the exact block
        if np.abs(proj).max() > 0:
            rel = np.abs(hr - proj).max() / np.abs(proj).max()
            print(f"  role {r}: |H - proj(H_fd)| / |H| = {rel:.2e}")
            # The dropped part is the normal's rotation: for the vertex of a vertex-triangle pair the
            # whole block is the projection; elsewhere (the normal turns with the primitive) only the
            # normal-normal entry is compared.
            if kind == 0 and r == 0:
                assert rel < 2e-3
            else:
                u = f[r] / max(np.linalg.norm(f[r]), 1e-30)
                if np.linalg.norm(f[r]) > 1e-6 * scale:
                    assert abs(u @ hr @ u - u @ sym @ u) <= 2e-3 * abs(u @ sym @ u) + 1e-6 * np.abs(hr).max()


def test_friction_and_damping_oppose_relative_motion():
    """Sliding friction is mu f_n against the slip; sticking is a spring; damping resists approach; Hessians PSD."""
    x = _VT_FACE
    f0, _ = _pair(0, x)
    f_n = np.linalg.norm(f0[0])
    xp = x.copy()
    xp[0, 0] -= 0.01  # the vertex slid +x by 1 cm over the step: dt*eps = 1e-4 m, so sliding
    f, h = _pair(0, x, xp, mu=0.5)
    ft = f[0] - f0[0]
    assert abs(ft[0] + 0.5 * f_n) < 1e-3 * f_n and abs(ft[1]) < 1e-6 and abs(ft[2]) < 1e-6
    assert np.allclose(f[1:].sum(axis=0) + f[0], 0.0, atol=1e-4 * f_n)  # action = reaction
    xp = x.copy()
    xp[0, 2] += 0.001  # approaching the triangle by 1 mm over the step
    fd_, h_ = _pair(0, x, xp, kd=10.0, dt=1e-2)
    assert fd_[0, 2] - f0[0, 2] == pytest.approx(10.0 / 1e-2 * 1e-3, rel=1e-3)
    for blocks in (h, h_):
        for b in blocks:
            assert np.linalg.eigvalsh(0.5 * (b + b.T)).min() >= -1e-6 * max(np.abs(b).max(), 1)


# -- detection: filters and buffers -------------------------------------------------------------------------


def _grid_model(n=4, cell=0.1, color=True):
    b = newton.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(0, 0, 0), rot=wp.quat_identity(), vel=wp.vec3(0, 0, 0), dim_x=n, dim_y=n,
                     cell_x=cell, cell_y=cell, mass=0.1, tri_ke=1e3, tri_ka=1e3, tri_kd=0.0)
    if color:
        b.color()
    return b.finalize(device="cpu")


def _detect(model, q, **kw):
    opts, _ = build_options(particle_enable_self_contact=True, **kw)
    sc = SelfContact(model, opts)
    qa = wp.array(q, dtype=wp.vec3, device="cpu")
    sc.detect(qa)
    vt = {(v, int(t)) for v in range(model.particle_count) for t in sc.vt_tri.numpy()[v, : sc.vt_count.numpy()[v]]}
    ee = {(e, int(f)) for e in range(model.edge_count) for f in sc.ee_edge.numpy()[e, : sc.ee_count.numpy()[e]]}
    return sc, vt, ee


def _graph_distances(model):
    """All-pairs ring distance by breadth-first search (independent of the solver's ring table)."""
    n = model.particle_count
    adj = [set() for _ in range(n)]
    for t in model.tri_indices.numpy():
        for a, b in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
            adj[a].add(b)
            adj[b].add(a)
    dist = np.full((n, n), 10**6)
    for s in range(n):
        dist[s, s] = 0
        frontier = [s]
        while frontier:
            nxt = []
            for u in frontier:
                for w in adj[u]:
                    if dist[s, w] > dist[s, u] + 1:
                        dist[s, w] = dist[s, u] + 1
                        nxt.append(w)
            frontier = nxt
    return dist


@pytest.mark.parametrize("threshold", [0, 1, 2, 3])
def test_topological_filter_keeps_exactly_the_pairs_beyond_the_threshold(threshold):
    """A 4x4 cloth shrunk into a 1 mm blob (every pair within the margin): the kept pairs are exactly those
    whose ring distance (BFS here) is at least the threshold (as measured on newton's SolverVBD, see
    test_topological_filter_matches_newton); ring 0 never makes a contact."""
    model = _grid_model()
    q = model.particle_q.numpy() * 0.01 + np.random.default_rng(0).normal(0, 1e-4, (model.particle_count, 3))
    _, vt, ee = _detect(model, q, particle_topological_contact_filter_threshold=threshold,
                        particle_self_contact_margin=1.0, particle_vertex_contact_buffer_size=64,
                        particle_edge_contact_buffer_size=128)
    dist = _graph_distances(model)
    tris, edges = model.tri_indices.numpy(), model.edge_indices.numpy()[:, 2:]
    want_vt = {(v, t) for v in range(model.particle_count) for t in range(len(tris))
               if min(dist[v, c] for c in tris[t]) >= max(threshold, 1)}
    want_ee = {(e, f) for e in range(len(edges)) for f in range(len(edges))
               if min(dist[a, b] for a in edges[e] for b in edges[f]) >= max(threshold, 1)}
    assert vt == want_vt
    assert ee == want_ee
    assert len(want_vt) > 0


def _probe_lift(cls, threshold, column):
    """One step of a weightless 8x1 strip whose only free vertex (0, at column 0) hovers 2 mm over the cell
    between ``column`` and ``column + 1``; elastic energies are off, so only self-contact can move it.
    Returns the vertex's rise [m]."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_cloth_grid(pos=wp.vec3(0, 0, 0), rot=wp.quat_identity(), vel=wp.vec3(0, 0, 0), dim_x=8, dim_y=1,
                     cell_x=0.1, cell_y=0.1, mass=0.1, tri_ke=0.0, tri_ka=0.0, tri_kd=0.0, edge_ke=0.0)
    b.color()
    model = b.finalize(device="cpu")
    flags = model.particle_flags.numpy()
    flags[1:] &= ~int(newton.ParticleFlags.ACTIVE)
    model.particle_flags.assign(flags)
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 1e3, 0.0, 0.0
    s0, s1 = model.state(), model.state()
    q = s0.particle_q.numpy()
    q[0] = [0.1 * column + 0.05, 0.03, 0.002]
    s0.particle_q.assign(q)
    s1.particle_q.assign(q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reference calls the seed's radius deprecated
        solver = cls(model, iterations=5, particle_enable_self_contact=True, particle_self_contact_radius=0.005,
                     particle_self_contact_margin=0.01, particle_topological_contact_filter_threshold=threshold,
                     particle_enable_tile_solve=False)
    solver.step(s0, s1, None, None, 1e-3)
    return float(s1.particle_q.numpy()[0, 2]) - 0.002


def test_topological_filter_matches_newton():
    """Which primitives repel a hovering vertex, per threshold 0..3 and per cell 1..3 columns away, is the same
    as on newton's SolverVBD (pairs at ring distance below the threshold are dropped); the lift agrees
    within 15 % (measured: equal to 3 digits where only vertex-triangle pairs act, 12 % apart where
    1-ring edge-edge pairs join in)."""
    for column in (1, 2, 3):
        for threshold in range(4):
            ours = _probe_lift(SolverVBD, threshold, column)
            ref = _probe_lift(newton.solvers.SolverVBD, threshold, column)
            assert (ours > 1e-7) == (ref > 1e-7), (column, threshold, ours, ref)
            assert ours == pytest.approx(ref, rel=0.15, abs=1e-8)


def test_ring_table_matches_breadth_first_search():
    """The host ring table equals BFS rings on a 5x5 grid for 0..3 rings."""
    model = _grid_model(5)
    dist = _graph_distances(model)
    edges = mesh_edges(model.tri_indices.numpy(), model.edge_indices.numpy())
    for k in range(4):
        start, vals = ring_table(model.particle_count, edges, k)
        for v in range(model.particle_count):
            assert set(vals[start[v]: start[v + 1]]) == set(np.flatnonzero(dist[v] <= k))


def test_rest_shape_exclusion_and_external_maps():
    """Pairs closer than the exclusion radius in model.particle_q are dropped; the vertex map drops its
    (vertex, triangle) pairs and the edge map its edge pairs in both directions."""
    model = _grid_model()
    rest = model.particle_q.numpy().astype(np.float64)
    q = rest * 0.01
    base = dict(particle_topological_contact_filter_threshold=0, particle_self_contact_margin=1.0,
                particle_vertex_contact_buffer_size=64, particle_edge_contact_buffer_size=128)
    _, vt_all, ee_all = _detect(model, q, **base)
    _, vt, ee = _detect(model, q, particle_rest_shape_contact_exclusion_radius=0.25, **base)
    tris, edges = model.tri_indices.numpy(), model.edge_indices.numpy()[:, 2:]
    assert vt == {(v, t) for v, t in vt_all if _point_triangle(rest[v], *rest[tris[t]]) >= 0.25}
    assert ee == {(e, f) for e, f in ee_all if _segment_segment(*rest[edges[e]], *rest[edges[f]]) >= 0.25}
    assert len(vt) < len(vt_all) and len(vt) > 0
    v0, t0 = sorted(vt_all)[0]
    e0, f0 = sorted(ee_all)[0]
    _, vt_m, ee_m = _detect(model, q, particle_external_vertex_contact_filtering_map={v0: [t0]},
                            particle_external_edge_contact_filtering_map={e0: {f0}}, **base)
    assert vt_m == vt_all - {(v0, t0)}
    assert ee_m == ee_all - {(e0, f0), (f0, e0)}


def test_buffer_overflow_is_counted_and_reported():
    """With 2-slot buffers in a dense blob the dropped pairs are counted, check_self_contact_overflow warns,
    nothing is written past a buffer and the step stays finite."""
    model = _grid_model()
    q = model.particle_q.numpy() * 0.01
    sc, vt, ee = _detect(model, q, particle_self_contact_margin=1.0, particle_vertex_contact_buffer_size=2,
                         particle_edge_contact_buffer_size=2)
    vt_drop, ee_drop = sc.overflow()
    assert sc.vt_count.numpy().max() == 2 and sc.ee_count.numpy().max() == 2
    _, vt_big, ee_big = _detect(model, q, particle_self_contact_margin=1.0, particle_vertex_contact_buffer_size=64,
                                particle_edge_contact_buffer_size=128)
    assert vt_drop == len(vt_big) - len(vt) > 0
    assert ee_drop == len(ee_big) - len(ee) > 0
    solver = SolverVBD(model, particle_enable_self_contact=True, particle_self_contact_margin=1.0,
                       particle_vertex_contact_buffer_size=2, particle_edge_contact_buffer_size=2)
    s0, s1 = model.state(), model.state()
    s0.particle_q.assign(q)
    solver.step(s0, s1, None, None, 1e-3)
    assert np.isfinite(s1.particle_q.numpy()).all()
    with pytest.warns(UserWarning, match="particle_vertex_contact_buffer_size"):
        counts = solver.check_self_contact_overflow()
    assert counts[0] > 0 and counts[1] > 0


def test_particles_of_different_worlds_never_pair():
    """Two worlds holding the same cloth at the same place: every kept pair lies within one world."""
    b = newton.ModelBuilder()
    for _ in range(2):
        b.begin_world()
        b.add_cloth_grid(pos=wp.vec3(0, 0, 0), rot=wp.quat_identity(), vel=wp.vec3(0, 0, 0), dim_x=3, dim_y=3,
                         cell_x=0.1, cell_y=0.1, mass=0.1, tri_ke=1e3, tri_ka=1e3, tri_kd=0.0)
        b.end_world()
    b.color()
    model = b.finalize(device="cpu")
    q = model.particle_q.numpy() * 0.01
    _, vt, ee = _detect(model, q, particle_self_contact_margin=1.0, particle_vertex_contact_buffer_size=64,
                        particle_edge_contact_buffer_size=128)
    world = model.particle_world.numpy()
    tris, edges = model.tri_indices.numpy(), model.edge_indices.numpy()[:, 2:]
    assert len(vt) > 0 and len(ee) > 0
    assert all(world[v] == world[tris[t][0]] for v, t in vt)
    assert all(world[edges[e][0]] == world[edges[f][0]] for e, f in ee)


@pytest.mark.parametrize("interval, expected", [(-1, 1), (0, 2), (1, 11), (3, 5)])
def test_detection_cadence(interval, expected, monkeypatch):
    """Detections per step with 10 iterations: <0 once before initialization; 0 before and right after it;
    n >= 1 before initialization and before iterations 0, n, 2n, ..."""
    model = _grid_model(2)
    solver = SolverVBD(model, iterations=10, particle_enable_self_contact=True,
                       particle_collision_detection_interval=interval)
    calls = []
    original = solver.self_contact.detect
    monkeypatch.setattr(solver.self_contact, "detect", lambda q: (calls.append(1), original(q)))
    s0, s1 = model.state(), model.state()
    solver.step(s0, s1, None, None, 1e-3)
    assert len(calls) == expected


def test_rebuild_bvh_after_a_large_move():
    """rebuild_bvh(state) rebuilds in place from the state's positions, also replayed from a captured graph;
    detection after it finds the same pairs as a fresh solver at those positions."""
    model = _grid_model()
    q = model.particle_q.numpy() * 0.01 + np.array([5.0, -3.0, 2.0])
    solver = SolverVBD(model, particle_enable_self_contact=True, particle_self_contact_margin=1.0,
                       particle_vertex_contact_buffer_size=64)
    state = model.state()
    ids = (solver.self_contact.tri_bvh.id, solver.self_contact.edge_bvh.id)
    with wp.ScopedCapture(device="cpu") as capture:
        solver.rebuild_bvh(state)
        solver.self_contact.detect(state.particle_q)
    state.particle_q.assign(q)  # moved after capture: the replay must see the new positions
    wp.capture_launch(capture.graph)
    assert (solver.self_contact.tri_bvh.id, solver.self_contact.edge_bvh.id) == ids
    _, vt, _ = _detect(model, q, particle_self_contact_margin=1.0, particle_vertex_contact_buffer_size=64)
    got = {(v, int(t)) for v in range(model.particle_count)
           for t in solver.self_contact.vt_tri.numpy()[v, : solver.self_contact.vt_count.numpy()[v]]}
    assert got == vt and len(vt) > 0


# -- the folded cloth --------------------------------------------------------------------------------------------

N = 8  # cells per side of each layer
CELL = 0.05  # [m]
GAP = 0.04  # [m] between the layers at rest
Z0 = 0.5  # [m] height of the (pinned) bottom layer


def _folded_cloth(speed=0.5):
    """An 8x8-cell cloth folded in two (a U): columns 0..N are the bottom layer, flat at Z0; N+1..2N the top
    layer, GAP above it, shifted and tilted a little so it lands corner first. The bottom layer and the
    hinge (columns up to N+1) are pinned, so the free top layer is at least 3 rings from the bottom layer
    (beyond the default topological filter): every pair that can meet is one the solver must handle."""
    cols = 2 * N + 1
    verts = []
    for j in range(N + 1):
        for i in range(cols):
            if i <= N:
                verts.append((i * CELL, j * CELL, 0.0))
            else:
                x = (2 * N - i) * CELL
                verts.append((x + 0.3 * CELL, j * CELL + 0.2 * CELL, GAP + 0.02 * (x + j * CELL)))
    tris = []
    for j in range(N):
        for i in range(cols - 1):
            a = j * cols + i
            tris += [a, a + 1, a + cols + 1, a, a + cols + 1, a + cols]
    b = newton.ModelBuilder()
    b.add_cloth_mesh(pos=wp.vec3(0, 0, Z0), rot=wp.quat_identity(), scale=1.0, vel=wp.vec3(0, 0, -speed),
                     vertices=[wp.vec3(*p) for p in verts], indices=tris, density=0.2, tri_ke=1e3, tri_ka=1e3,
                     tri_kd=1e-3, edge_ke=1e-3)
    b.color()
    model = b.finalize(device="cpu")
    column = np.arange(model.particle_count) % cols
    inv_mass = model.particle_inv_mass.numpy()
    inv_mass[column <= N + 1] = 0.0
    model.particle_inv_mass.assign(inv_mass)
    model.soft_contact_ke = KE
    model.soft_contact_kd = 0.0
    model.soft_contact_mu = 0.2
    return model, column


def _orient(a, b, c, d):
    return np.einsum("...i,...i->...", np.cross(b - a, c - a), d - a)


def _grid_pairs(lo_a, hi_a, lo_b, hi_b):
    """Index pairs (i, j) of boxes of set a and set b that share a grid cell (a superset of overlapping boxes).

    Cells are as large as the largest box, so a box touches at most 2 cells per axis; two boxes that
    share a point both touch the cell containing it."""
    h = max(float((hi_a - lo_a).max()), float((hi_b - lo_b).max()), 1e-9) * 1.0001
    origin = np.minimum(lo_a.min(axis=0), lo_b.min(axis=0))

    def cells(lo, hi):
        i0 = np.floor((lo - origin) / h).astype(np.int64)
        i1 = np.floor((hi - origin) / h).astype(np.int64)
        idx, keys = [], []
        for off in np.ndindex(2, 2, 2):
            c = i0 + np.array(off)
            ok = (c <= i1).all(axis=1)
            idx.append(np.flatnonzero(ok))
            keys.append((c[ok, 0] * 1_000_003 + c[ok, 1]) * 1_000_003 + c[ok, 2])
        return np.concatenate(idx), np.concatenate(keys)

    ia, ka = cells(lo_a, hi_a)
    ib, kb = cells(lo_b, hi_b)
    order = np.argsort(kb, kind="stable")
    ib, kb = ib[order], kb[order]
    first, last = np.searchsorted(kb, ka, "left"), np.searchsorted(kb, ka, "right")
    count = last - first
    rep_a = np.repeat(ia, count)
    pos = np.repeat(first - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
    pairs = np.unique(np.stack([rep_a, ib[pos]], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]


def count_edge_triangle_crossings(q, tris, edges):
    """Mesh edges passing through a triangle they do not touch (float64 orientation tests on grid-culled pairs)."""
    q = q.astype(np.float64)
    e_pts, t_pts = q[edges], q[tris]
    e_idx, t_idx = _grid_pairs(e_pts.min(axis=1), e_pts.max(axis=1), t_pts.min(axis=1), t_pts.max(axis=1))
    e, t = edges[e_idx], tris[t_idx]
    apart = (e[:, :1] != t).all(axis=1) & (e[:, 1:] != t).all(axis=1)
    e, t = e[apart], t[apart]
    p, r = q[e[:, 0]], q[e[:, 1]]
    a, b, c = q[t[:, 0]], q[t[:, 1]], q[t[:, 2]]
    sp, sr = _orient(a, b, c, p), _orient(a, b, c, r)
    o1, o2, o3 = _orient(p, r, a, b), _orient(p, r, b, c), _orient(p, r, c, a)
    straddles = sp * sr < 0
    inside = ((o1 > 0) & (o2 > 0) & (o3 > 0)) | ((o1 < 0) & (o2 < 0) & (o3 < 0))
    return int((straddles & inside).sum())


def count_vertex_triangle_sign_changes(q0, q1, tris):
    """Vertices that crossed the plane of a triangle they do not touch over a step while inside it at both ends."""
    q0, q1 = q0.astype(np.float64), q1.astype(np.float64)
    n = len(q0)
    v = np.repeat(np.arange(n), len(tris))
    t = np.tile(np.arange(len(tris)), (n, 1)).reshape(-1)
    apart = (tris[t] != v[:, None]).all(axis=1)
    v, t = v[apart], tris[t[apart]]
    crossed = np.zeros(len(v), dtype=bool)
    signs = []
    for q in (q0, q1):
        a, b, c, x = q[t[:, 0]], q[t[:, 1]], q[t[:, 2]], q[v]
        nrm = np.cross(b - a, c - a)
        s = np.einsum("ij,ij->i", nrm, x - a)
        inside = (np.einsum("ij,ij->i", np.cross(b - a, x - a), nrm) >= 0) & \
            (np.einsum("ij,ij->i", np.cross(c - b, x - b), nrm) >= 0) & \
            (np.einsum("ij,ij->i", np.cross(a - c, x - c), nrm) >= 0)
        signs.append((s, inside))
    crossed = (signs[0][0] * signs[1][0] < 0) & signs[0][1] & signs[1][1]
    return int(crossed.sum())


def _run_folded(self_contact: bool, steps=60, dt=1.0 / 240.0, interval=0, speed=0.5):
    model, column = _folded_cloth(speed)
    tris = model.tri_indices.numpy()
    edges = model.edge_indices.numpy()[:, 2:]
    solver = SolverVBD(model, iterations=10, particle_enable_self_contact=self_contact,
                       particle_self_contact_radius=RADIUS, particle_self_contact_margin=2 * RADIUS,
                       particle_collision_detection_interval=interval)
    s0, s1 = model.state(), model.state()
    crossings, sign_changes, below, budget = [], [], [], 0.0
    for _ in range(steps):
        q0 = s0.particle_q.numpy()
        solver.step(s0, s1, None, None, dt)
        q1 = s1.particle_q.numpy()
        assert np.isfinite(q1).all()
        crossings.append(count_edge_triangle_crossings(q1, tris, edges))
        sign_changes.append(count_vertex_triangle_sign_changes(q0, q1, tris))
        below.append(int((q1[column > N + 1, 2] < Z0).sum()))
        if self_contact:
            sc = solver.self_contact
            moved = np.linalg.norm(q1 - sc.q_detect.numpy(), axis=1)
            budget = max(budget, float((moved - sc.bound.numpy()).max()))
        s0, s1 = s1, s0
    return np.array(crossings), np.array(sign_changes), np.array(below), budget, s0.particle_q.numpy(), column


@pytest.mark.parametrize("interval", [0, -1, 3])
def test_folded_cloth_never_passes_through_itself(interval):
    """The top layer of a folded 8x8 cloth falls onto the pinned bottom layer: with self-contact no edge
    crosses a triangle and no vertex crosses a triangle at any of 60 steps, every vertex stays within its
    truncation bound, and the top layer comes to rest above the bottom one within the contact radius
    (for each detection cadence: the truncation, not the cadence, is what guarantees it)."""
    crossings, sign_changes, below, budget, q, column = _run_folded(True, interval=interval)
    print("with self-contact: crossings", crossings.sum(), "sign changes", sign_changes.sum(), "below", below.max())
    assert crossings.sum() == 0 and sign_changes.sum() == 0 and below.max() == 0
    assert budget <= 1e-6
    top = q[column > N, 2]
    assert top.min() > Z0 and top.min() < Z0 + RADIUS  # landed, held within the interaction radius


def test_thrown_cloth_never_passes_through_the_pinned_one():
    """The same top layer thrown down at 3 m/s (a 0.04 m gap closed in under two steps of 1/240 s): no
    edge crosses a triangle, no vertex crosses one, and no top-layer vertex ends below the bottom layer
    over 30 steps. This checks the size of the truncation bound, not only that vertices respect it:
    with every bound doubled two vertices end below the bottom layer (measured; 0 here)."""
    crossings, sign_changes, below, _, _, _ = _run_folded(True, steps=30, speed=3.0)
    assert crossings.sum() == 0 and sign_changes.sum() == 0 and below.max() == 0


def test_folded_cloth_interpenetrates_without_self_contact():
    """Control: the same scene without self-contact passes through itself (the checks above can fail)."""
    crossings, sign_changes, below, _, _, _ = _run_folded(False)
    print("without self-contact: crossings", crossings.sum(), "sign changes", sign_changes.sum(), "below", below.max())
    assert crossings.sum() > 0 and sign_changes.sum() > 0 and below.max() > 0


def _hinge_folded_flat():
    """A 3x2-vertex strip whose first column is folded over the second cell, 4 mm above it; only the
    corner ``v`` (vertex 0) is free. ``v`` lies over a triangle of the second cell that shares no vertex with it but
    has corners next to it in the mesh: a one-ring pair, which the default filter threshold 2 drops."""
    h = 0.01  # [m] cell size
    pts = [(1.6 * h, j * h, 0.004) if i == 0 else (i * h, j * h, 0.0) for j in range(2) for i in range(3)]
    tris = [0, 1, 4, 0, 4, 3, 1, 2, 5, 1, 5, 4]
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_cloth_mesh(pos=wp.vec3(0.0), rot=wp.quat_identity(), scale=1.0, vertices=[wp.vec3(*p) for p in pts],
                     indices=tris, vel=wp.vec3(0.0), density=0.1, tri_ke=1e-4, tri_ka=1e-4, tri_kd=0.0, edge_ke=0.0)
    b.color()
    model = b.finalize(device="cpu")
    flags = model.particle_flags.numpy()
    flags[1:] &= ~int(newton.ParticleFlags.ACTIVE)
    model.particle_flags = wp.array(flags, dtype=wp.int32, device="cpu")
    return model


def _fling_corner(cls, model, threshold, **kw):
    """Fling the free corner down at 1 m/s for 40 steps of 1/600 s (cloth_twist's self-contact distances, in
    the later spelling both solvers take); its end position and the vertex-triangle crossings along the
    way (exact continuous test, steel.app.intersections)."""
    solver = cls(model, iterations=4, particle_enable_self_contact=True, particle_self_contact_margin=0.002,
                 particle_self_contact_gap=0.0015, particle_topological_contact_filter_threshold=threshold, **kw)
    s0, s1 = model.state(), model.state()
    qd = s0.particle_qd.numpy()
    qd[0] = (0.0, 0.0, -1.0)
    s0.particle_qd.assign(qd)
    crossings = 0
    for _ in range(40):
        q0 = s0.particle_q.numpy().copy()
        solver.step(s0, s1, None, None, 1.0 / 600.0)
        s0, s1 = s1, s0
        crossings += len(vertex_triangle_crossings(q0, s0.particle_q.numpy(), model.tri_indices.numpy()))
    return s0.particle_q.numpy()[0], crossings


# Ours and newton's follow the same unprotected path to float32 rounding (measured 1.6e-7 m).
RING_PAIR_TOL = 1.0e-6  # [m]


def test_one_ring_pairs_are_unprotected_at_the_default_threshold_as_in_newton():
    """A vertex flung at a one-ring triangle (a hinge folded flat; cloth_twist's self-crossings are such
    pairs) passes through it at the default threshold 2, in newton's SolverVBD as in ours and along the
    same path (the filter drops the pair from forces and from the conservative bounds); at threshold 1
    the pair makes contact and the vertex never crosses."""
    model = _hinge_folded_flat()
    ours, ours_crossings = _fling_corner(SolverVBD, model, 2)
    ref, ref_crossings = _fling_corner(newton.solvers.SolverVBD, model, 2, particle_enable_tile_solve=False)
    print("threshold 2: ours", ours, ours_crossings, "newton", ref, ref_crossings)
    assert ours_crossings == 1 and ref_crossings == 1
    assert np.abs(ours - ref).max() < RING_PAIR_TOL
    kept, kept_crossings = _fling_corner(SolverVBD, model, 1)
    print("threshold 1: ours", kept, kept_crossings)
    assert kept_crossings == 0 and kept[2] > 0.0


def _hovering_vertex(height):
    """A pinned triangle at z = 0 and, ``height`` [m] above its interior, the free corner of a second
    (pinned) triangle; no gravity."""
    pts = [(-0.05, -0.05, 0.0), (0.05, -0.05, 0.0), (0.0, 0.05, 0.0), (0.0, 0.0, height),
           (0.03, 0.0, height + 0.03), (0.0, 0.03, height + 0.03)]
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_cloth_mesh(pos=wp.vec3(0.0), rot=wp.quat_identity(), scale=1.0, vertices=[wp.vec3(*p) for p in pts],
                     indices=[0, 1, 2, 3, 4, 5], vel=wp.vec3(0.0), density=0.1, tri_ke=1e-4, tri_ka=1e-4,
                     tri_kd=0.0, edge_ke=0.0)
    b.color()
    model = b.finalize(device="cpu")
    flags = model.particle_flags.numpy()
    flags[[0, 1, 2, 4, 5]] &= ~int(newton.ParticleFlags.ACTIVE)
    model.particle_flags = wp.array(flags, dtype=wp.int32, device="cpu")
    return model


@pytest.mark.parametrize("height, pushed", [(0.0007, True), (0.0012, False)])
def test_later_spelling_margin_is_the_interaction_distance(height, pushed):
    """The later revision's margin 1 mm + gap 0.5 mm: a vertex 0.7 mm over a triangle is pushed away and
    one 1.2 mm over it is not, in newton's SolverVBD as in ours (read as the seed's radius 1 mm, detection
    1.5 mm; with the gap read as the radius, as before, ours did not push at 0.7 mm). One step, 1/600 s."""
    model = _hovering_vertex(height)
    lift = {}
    for name, cls, kw in (("ours", SolverVBD, {}), ("newton", newton.solvers.SolverVBD,
                                                      {"particle_enable_tile_solve": False})):
        solver = cls(model, iterations=4, particle_enable_self_contact=True, particle_self_contact_margin=0.001,
                     particle_self_contact_gap=0.0005, **kw)
        s0, s1 = model.state(), model.state()
        solver.step(s0, s1, None, None, 1.0 / 600.0)
        lift[name] = float(s1.particle_q.numpy()[3, 2]) - height
    print(f"height {height} m: lift [m] {lift}")
    for value in lift.values():
        assert (value > 1.0e-6) == pushed  # [m]; measured 4e-5 (ours) and 3e-4 (newton) or exactly 0


def _coincident_cloth(case):
    """A 3x3-cell cloth 0.3 m up, with self-contact: ``sheets`` lays two copies exactly on each other,
    ``point`` collapses one copy to a single point. Returns (model, start positions)."""
    b = newton.ModelBuilder()
    for _ in range(2 if case == "sheets" else 1):
        b.add_cloth_grid(pos=wp.vec3(0, 0, 0.3), rot=wp.quat_identity(), vel=wp.vec3(0, 0, 0), dim_x=3, dim_y=3,
                         cell_x=0.1, cell_y=0.1, mass=0.1, tri_ke=1e3, tri_ka=1e3, tri_kd=0.0)
    b.color()
    model = b.finalize(device="cpu")
    q = model.particle_q.numpy()
    if case == "point":
        q[:] = (0.0, 0.0, 0.3)
    return model, q


@pytest.mark.parametrize("case", ["sheets", "point"])
def test_coincident_vertices_fall_freely(case):
    """Coincident vertices (two sheets laid exactly on each other; a cloth collapsed to one point) under
    gravity with self-contact: every vertex falls as symplectic Euler's ``g dt² n (n + 1) / 2`` (0.19784 m in
    0.2 s), as on Newton's SolverVBD. Measured 5.1e-5 m short (float32 rounding of the velocities read from
    positions); limit 1.5e-4 m. Regression: a pair at zero distance set its vertices' truncation bound to zero,
    so the cloth hung at z 0.300 m (drop 0)."""
    model, q = _coincident_cloth(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = SolverVBD(model, iterations=10, particle_enable_self_contact=True,
                           particle_self_contact_radius=RADIUS, particle_self_contact_margin=2 * RADIUS)
    s0, s1 = model.state(), model.state()
    s0.particle_q.assign(q)
    dt, n = 1.0 / 600.0, 120
    for _ in range(n):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
    drop = q[:, 2] - s0.particle_q.numpy()[:, 2]
    np.testing.assert_allclose(drop, 9.81 * dt * dt * n * (n + 1) / 2, atol=1.5e-4)
