"""Exact self-intersection counts of a triangle mesh, in NumPy float64, independent of any solver.

A cloth that has passed through itself has mesh edges that pierce triangles of the same mesh. This
module counts those pairs on one snapshot of the positions, with no tolerance and no history:

* **edge–triangle pairs**: a mesh edge and a triangle that share no vertex, where the open segment
  crosses the closed triangle (Möller–Trumbore segment test in float64);
* **vertex–triangle pairs**: for two snapshots ``x0`` -> ``x1`` of a linear motion, a vertex and a
  triangle without a shared vertex whose vertex–triangle coplanarity time lies in ``[0, 1]`` with
  the vertex inside the triangle at that time (continuous test on the linear interpolation of the
  four points: the cubic ``det[b - a, c - a, p - a](t) = 0``, Provot 1997; Bridson et al. 2002).

A broad phase on a uniform grid (cell = the longest edge) keeps the candidate pairs near-linear in
the mesh size; everything after it is exact in float64. The solver's own detector is not used, so
these counts check it rather than repeat it.
"""

from __future__ import annotations

import numpy as np


def mesh_edges(tris: np.ndarray) -> np.ndarray:
    """Unique undirected edges ``(E, 2)`` of a triangle index array ``(T, 3)``."""
    tris = np.asarray(tris, dtype=np.int64).reshape(-1, 3)
    e = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    e.sort(axis=1)
    return np.unique(e, axis=0)


def _grid_pairs(lo_a: np.ndarray, hi_a: np.ndarray, lo_b: np.ndarray, hi_b: np.ndarray) -> np.ndarray:
    """Candidate ``(i, j)`` pairs of boxes ``a[i]`` and ``b[j]`` that overlap (uniform-grid broad phase)."""
    if len(lo_a) == 0 or len(lo_b) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    cell = max(float(np.max(hi_a - lo_a)), float(np.max(hi_b - lo_b)), 1e-9)
    origin = np.minimum(lo_a.min(axis=0), lo_b.min(axis=0))

    def cells(lo, hi):
        c0 = np.floor((lo - origin) / cell).astype(np.int64)
        c1 = np.floor((hi - origin) / cell).astype(np.int64)
        ids, keys = [], []
        # Each box spans at most two cells per axis (its extent is at most one cell).
        for dx in (0, 1):
            for dy in (0, 1):
                for dz in (0, 1):
                    c = c0 + np.array([dx, dy, dz])
                    ok = np.all(c <= c1, axis=1)
                    idx = np.flatnonzero(ok)
                    ids.append(idx)
                    keys.append(c[idx])
        keys = np.concatenate(keys)
        h = (keys[:, 0] * 73856093) ^ (keys[:, 1] * 19349663) ^ (keys[:, 2] * 83492791)
        return np.concatenate(ids), h

    ia, ha = cells(lo_a, hi_a)
    ib, hb = cells(lo_b, hi_b)
    order = np.argsort(hb, kind="stable")
    ib, hb = ib[order], hb[order]
    left = np.searchsorted(hb, ha, side="left")
    right = np.searchsorted(hb, ha, side="right")
    counts = right - left
    rows = np.repeat(np.arange(len(ha)), counts)
    offs = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    pairs = np.stack([ia[rows], ib[left[rows] + offs]], axis=1)
    pairs = np.unique(pairs, axis=0)
    i, j = pairs[:, 0], pairs[:, 1]
    overlap = np.all((lo_a[i] <= hi_b[j]) & (lo_b[j] <= hi_a[i]), axis=1)
    return pairs[overlap]


def _share_vertex(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise: does index row ``a[k]`` share any entry with ``b[k]``."""
    return (a[:, :, None] == b[:, None, :]).any(axis=(1, 2))


def edge_triangle_intersections(x: np.ndarray, tris: np.ndarray, edges: np.ndarray | None = None) -> np.ndarray:
    """``(K, 2)`` pairs ``(edge, triangle)`` where a mesh edge crosses a triangle it shares no vertex with."""
    x = np.asarray(x, dtype=np.float64).reshape(-1, 3)
    tris = np.asarray(tris, dtype=np.int64).reshape(-1, 3)
    edges = mesh_edges(tris) if edges is None else np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    pe, pt = x[edges], x[tris]
    pairs = _grid_pairs(pe.min(axis=1), pe.max(axis=1), pt.min(axis=1), pt.max(axis=1))
    if len(pairs) == 0:
        return pairs
    pairs = pairs[~_share_vertex(edges[pairs[:, 0]], tris[pairs[:, 1]])]
    p, q = pe[pairs[:, 0], 0], pe[pairs[:, 0], 1]
    a, b, c = pt[pairs[:, 1], 0], pt[pairs[:, 1], 1], pt[pairs[:, 1], 2]
    d = q - p
    e1, e2 = b - a, c - a
    h = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, h)
    ok = np.abs(det) > 1e-300  # a segment parallel to the triangle's plane does not pierce it
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = p - a
    u = inv * np.einsum("ij,ij->i", s, h)
    qv = np.cross(s, e1)
    v = inv * np.einsum("ij,ij->i", d, qv)
    t = inv * np.einsum("ij,ij->i", e2, qv)
    hit = ok & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0) & (t > 0.0) & (t < 1.0)
    return pairs[hit]


def _roots_01(k3: np.ndarray, k2: np.ndarray, k1: np.ndarray, k0: np.ndarray) -> np.ndarray:
    """Real roots in [0, 1] of ``k3 t³ + k2 t² + k1 t + k0`` per row, ``(K, 3)`` with NaN where none.

    Cubics by the eigenvalues of their companion matrices (batched); rows whose leading terms vanish
    relative to the others fall back to the quadratic or linear formula. A polynomial that is zero
    throughout (coplanar all the time) reports ``t = 0`` so the caller tests the start.
    """
    scale = np.maximum.reduce([np.abs(k3), np.abs(k2), np.abs(k1), np.abs(k0)])
    out = np.full((len(k0), 3), np.nan)
    tiny = 1e-12 * np.maximum(scale, 1e-300)
    cubic = np.abs(k3) > tiny
    if cubic.any():
        a2, a1, a0 = k2[cubic] / k3[cubic], k1[cubic] / k3[cubic], k0[cubic] / k3[cubic]
        comp = np.zeros((len(a0), 3, 3))
        comp[:, 0, :] = np.stack([-a2, -a1, -a0], axis=1)
        comp[:, 1, 0] = comp[:, 2, 1] = 1.0
        ev = np.linalg.eigvals(comp)
        out[cubic] = np.where(np.abs(ev.imag) <= 1e-7 * (1.0 + np.abs(ev.real)), ev.real, np.nan)
    quad = ~cubic & (np.abs(k2) > tiny)
    if quad.any():
        a, b, c = k2[quad], k1[quad], k0[quad]
        disc = b * b - 4.0 * a * c
        sq = np.sqrt(np.where(disc >= 0.0, disc, np.nan))
        out[quad, 0], out[quad, 1] = (-b - sq) / (2.0 * a), (-b + sq) / (2.0 * a)
    lin = ~cubic & ~quad & (np.abs(k1) > tiny)
    out[lin, 0] = -k0[lin] / k1[lin]
    const = ~cubic & ~quad & ~lin
    out[const & (np.abs(k0) <= tiny), 0] = 0.0
    out[(out < 0.0) | (out > 1.0)] = np.nan
    return out


def vertex_triangle_crossings(x0: np.ndarray, x1: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """``(K, 2)`` pairs ``(vertex, triangle)`` where a vertex passes through a triangle as ``x0`` moves linearly to ``x1``.

    Pairs sharing a vertex are skipped. The vertex counts as through when, at a root ``t`` in [0, 1]
    of the coplanarity cubic, its barycentric coordinates in the triangle are all in [0, 1].
    """
    x0 = np.asarray(x0, dtype=np.float64).reshape(-1, 3)
    x1 = np.asarray(x1, dtype=np.float64).reshape(-1, 3)
    tris = np.asarray(tris, dtype=np.int64).reshape(-1, 3)
    lo_v, hi_v = np.minimum(x0, x1), np.maximum(x0, x1)
    t0, t1 = x0[tris], x1[tris]
    lo_t = np.minimum(t0.min(axis=1), t1.min(axis=1))
    hi_t = np.maximum(t0.max(axis=1), t1.max(axis=1))
    pairs = _grid_pairs(lo_v, hi_v, lo_t, hi_t)
    if len(pairs) == 0:
        return pairs
    pairs = pairs[~(tris[pairs[:, 1]] == pairs[:, [0]]).any(axis=1)]
    if len(pairs) == 0:
        return pairs
    v, tr = pairs[:, 0], tris[pairs[:, 1]]
    # Relative positions and velocities against the triangle's first vertex.
    p0, p1 = x0[v] - x0[tr[:, 0]], x1[v] - x1[tr[:, 0]]
    b0, b1 = x0[tr[:, 1]] - x0[tr[:, 0]], x1[tr[:, 1]] - x1[tr[:, 0]]
    c0, c1 = x0[tr[:, 2]] - x0[tr[:, 0]], x1[tr[:, 2]] - x1[tr[:, 0]]
    dp, db, dc = p1 - p0, b1 - b0, c1 - c0

    def triple(a, b, c):
        return np.einsum("ij,ij->i", a, np.cross(b, c))

    # det(b(t), c(t), p(t)) with each linear in t, expanded into cubic coefficients.
    k0 = triple(b0, c0, p0)
    k1 = triple(db, c0, p0) + triple(b0, dc, p0) + triple(b0, c0, dp)
    k2 = triple(db, dc, p0) + triple(db, c0, dp) + triple(b0, dc, dp)
    k3 = triple(db, dc, dp)
    hits = np.zeros(len(pairs), dtype=bool)
    roots = _roots_01(k3, k2, k1, k0)
    for r in range(3):
        t = roots[:, r:r + 1]
        ok = ~np.isnan(t[:, 0])
        t = np.where(ok[:, None], t, 0.0)
        b, c, p = b0 + t * db, c0 + t * dc, p0 + t * dp
        n = np.cross(b, c)
        nn = np.einsum("ij,ij->i", n, n)
        good = ok & (nn > 0.0)
        nn = np.where(good, nn, 1.0)
        w1 = np.einsum("ij,ij->i", np.cross(p, c), n) / nn
        w2 = np.einsum("ij,ij->i", np.cross(b, p), n) / nn
        hits |= good & (w1 >= 0.0) & (w2 >= 0.0) & (w1 + w2 <= 1.0)
    return pairs[hits]
