"""Particle self-contact detection: filter tables (host, once) and the detection kernels.

Candidates come from two Warp BVHs, one over the triangles of ``model.tri_indices`` and one over
the edges of ``model.edge_indices`` (columns 2, 3 are the edge's vertices), refitted to the current
positions at every detection. Each vertex queries the triangle BVH and each edge the edge BVH with
its own box grown by the detection margin [m]; a box query finds every primitive within the margin
(a primitive whose box is farther than that is farther too). A candidate is kept when it passes the
filters and its exact distance is below the margin:

* topology: a vertex and a triangle (an edge and an edge) are neighbours when the ring distance
  between the vertex and a corner (between an endpoint and an endpoint) is below
  ``particle_topological_contact_filter_threshold`` ("the distance under which pairs are
  discarded"; measured on the reference solver, whose threshold 2 keeps 2-ring pairs and drops
  1-ring ones); ring 0 (sharing a vertex) is always excluded, so 0 and 1 act alike. Rings follow
  the mesh's edges (triangle sides and ``edge_indices``).
* rest shape: pairs closer than ``particle_rest_shape_contact_exclusion_radius`` in
  ``model.particle_q`` are excluded (distance evaluated on the fly from the rest positions).
* the external maps: vertex -> triangles, and edge -> edges (an edge pair is excluded when either
  edge lists the other).
* worlds: particles of two different worlds never touch (``particle_world`` -1 touches all).

Kept pairs go into fixed per-primitive buffers: vertex -> triangles (``vertex_buffer`` slots) and
edge -> edges (``edge_buffer`` slots, both directions). A full buffer drops further pairs and
counts them in ``overflow`` ([0] vertex–triangle, [1] edge–edge); nothing is written past a buffer.

The same pass records, for the conservative bounds, the smallest distance of every vertex to a kept
triangle, of every triangle to a kept vertex and of every edge to a kept edge (the margin when there
is none). Dropped-by-overflow pairs still count there, so the bound stays safe when buffers are full.
Pairs closer than ``D_MIN`` (1e-5 m) do not count: they are coincident (no force, see
:mod:`.self_contact_force`), and half their distance is no bound at all: two sheets laid exactly on
each other, or a cloth collapsed to one point, were pinned where they were and hung in mid-air under
gravity (Newton's SolverVBD lets them fall). The truncation's guarantee (nothing crosses between
detections) holds for the pairs at least ``D_MIN`` apart at detection; the neighbours' pairs still
bound such a vertex.

Each stored pair then lists itself under its four vertices (``incident_*``, one int32 per entry, see
:func:`.self_contact_force.encode_entry`) so the vertex step loops over one range per vertex. An
edge pair is listed once, from the lower edge index's buffer.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from .self_contact_force import D_MIN, KIND_EE, KIND_VT, edge_edge_distance, encode_entry, vertex_triangle_distance

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

# -- host tables ------------------------------------------------------------------------------------------


def csr_from_pairs(keys: np.ndarray, values: np.ndarray, rows: int):
    """Compressed rows of the unique ``(key, value)`` pairs, each row's values sorted."""
    keys = np.asarray(keys, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    width = int(values.max()) + 1 if values.size else 1
    code = np.unique(keys * width + values)
    keys, values = code // width, code % width
    start = np.zeros(rows + 1, dtype=np.int32)
    start[1:] = np.cumsum(np.bincount(keys, minlength=rows))
    entries = values.astype(np.int32) if values.size else np.zeros(1, dtype=np.int32)
    return start, entries


def mesh_edges(tri_indices: np.ndarray, edge_indices: np.ndarray) -> np.ndarray:
    """Unique undirected vertex pairs ``(a, b)``, ``a < b``, of triangle sides and bending edges."""
    pairs = [tri_indices[:, [0, 1]], tri_indices[:, [1, 2]], tri_indices[:, [2, 0]], edge_indices[:, [2, 3]]]
    pairs = np.concatenate(pairs).astype(np.int64)
    pairs = pairs[(pairs >= 0).all(axis=1)]
    pairs = np.sort(pairs, axis=1)
    return np.unique(pairs, axis=0)


def ring_table(particle_count: int, edges: np.ndarray, rings: int):
    """For each vertex the sorted vertices within ``rings`` mesh edges of it (itself included)."""
    n = particle_count
    adj_start, adj = csr_from_pairs(np.concatenate([edges[:, 0], edges[:, 1]]),
                                    np.concatenate([edges[:, 1], edges[:, 0]]), n)
    if edges.size == 0:
        adj = adj[:0]
    src = np.arange(n, dtype=np.int64)
    dst = src.copy()
    for _ in range(rings):
        # Grow every (source, reached) pair by the neighbours of the reached vertex.
        degree = (adj_start[dst + 1] - adj_start[dst]).astype(np.int64)
        first = np.repeat(adj_start[dst].astype(np.int64), degree)
        offset = np.arange(int(degree.sum()), dtype=np.int64) - np.repeat(np.cumsum(degree) - degree, degree)
        new_src = np.repeat(src, degree)
        new_dst = adj[first + offset].astype(np.int64)
        code = np.unique(np.concatenate([src * n + dst, new_src * n + new_dst]))
        src, dst = code // n, code % n
    return csr_from_pairs(src, dst, n)


def filter_map_table(mapping: dict | None, rows: int, targets: int, name: str):
    """CSR of an external filtering map ``id -> iterable of ids``; ids out of range raise ``ValueError``."""
    if not mapping:
        return np.zeros(rows + 1, dtype=np.int32), np.zeros(1, dtype=np.int32)
    keys, values = [], []
    for key, items in mapping.items():
        if key >= rows:
            raise ValueError(f"{name}: key {key} is not a primitive id (there are {rows})")
        for item in items:
            if item >= targets:
                raise ValueError(f"{name}[{key}]: {item} is not a primitive id (there are {targets})")
            keys.append(key)
            values.append(item)
    return csr_from_pairs(np.array(keys), np.array(values), rows)


def vertex_primitive_table(indices: np.ndarray, particle_count: int):
    """Vertex -> primitives that contain it (CSR), for an ``(primitives, k)`` index array."""
    k = indices.shape[1] if indices.ndim == 2 else 1
    prim = np.repeat(np.arange(indices.shape[0], dtype=np.int64), k)
    vert = indices.reshape(-1).astype(np.int64)
    keep = vert >= 0
    return csr_from_pairs(vert[keep], prim[keep], particle_count)


@wp.struct
class FilterData:
    """Filter tables and scalars read by the detection kernels."""

    ring_start: wp.array[wp.int32]
    ring_vertex: wp.array[wp.int32]
    vertex_map_start: wp.array[wp.int32]
    vertex_map_tri: wp.array[wp.int32]
    edge_map_start: wp.array[wp.int32]
    edge_map_edge: wp.array[wp.int32]
    particle_world: wp.array[wp.int32]
    rest_q: wp.array[wp.vec3]
    rest_exclusion: float  # [m]
    parallel_epsilon: float


@wp.func
def _row_contains(start: wp.array[wp.int32], values: wp.array[wp.int32], row: int, key: int):
    """Binary search for ``key`` in the sorted row ``row`` of a CSR table."""
    lo = start[row]
    hi = start[row + 1]
    while lo < hi:
        mid = (lo + hi) / 2
        v = values[mid]
        if v == key:
            return True
        if v < key:
            lo = mid + 1
        else:
            hi = mid
    return False


@wp.func
def _other_world(flt: FilterData, p: int, q: int):
    wp_ = flt.particle_world[p]
    wq = flt.particle_world[q]
    return wp_ >= 0 and wq >= 0 and wp_ != wq


@wp.func
def vertex_triangle_filtered(flt: FilterData, v: int, t: int, a: int, b: int, c: int):
    """True when the pair (vertex ``v``, triangle ``t`` = ``abc``) must not make a contact."""
    if v == a or v == b or v == c:
        return True
    if _row_contains(flt.ring_start, flt.ring_vertex, v, a) or _row_contains(flt.ring_start, flt.ring_vertex, v, b) \
            or _row_contains(flt.ring_start, flt.ring_vertex, v, c):
        return True
    if _other_world(flt, v, a):
        return True
    if _row_contains(flt.vertex_map_start, flt.vertex_map_tri, v, t):
        return True
    if flt.rest_exclusion > 0.0:
        r = flt.rest_q
        if vertex_triangle_distance(r[v], r[a], r[b], r[c]) < flt.rest_exclusion:
            return True
    return False


@wp.func
def edge_edge_filtered(flt: FilterData, e1: int, p0: int, p1: int, e2: int, p2: int, p3: int):
    """True when edges ``e1`` = ``p0 p1`` and ``e2`` = ``p2 p3`` must not make a contact."""
    if e1 == e2 or p0 == p2 or p0 == p3 or p1 == p2 or p1 == p3:
        return True
    rs = flt.ring_start
    rv = flt.ring_vertex
    if _row_contains(rs, rv, p0, p2) or _row_contains(rs, rv, p0, p3) or _row_contains(rs, rv, p1, p2) \
            or _row_contains(rs, rv, p1, p3):
        return True
    if _other_world(flt, p0, p2):
        return True
    if _row_contains(flt.edge_map_start, flt.edge_map_edge, e1, e2) \
            or _row_contains(flt.edge_map_start, flt.edge_map_edge, e2, e1):
        return True
    if flt.rest_exclusion > 0.0:
        r = flt.rest_q
        if edge_edge_distance(r[p0], r[p1], r[p2], r[p3], flt.parallel_epsilon) < flt.rest_exclusion:
            return True
    return False


# -- detection kernels --------------------------------------------------------------------------------------


@wp.kernel
def prepare_detection(
    # Model:
    tri_indices: wp.array2d[wp.int32],
    edge_indices: wp.array2d[wp.int32],
    margin: float,
    tri_count: int,
    edge_count: int,
    particle_count: int,
    # Data in:
    particle_q: wp.array[wp.vec3],
    # Data out:
    tri_lower_out: wp.array[wp.vec3],
    tri_upper_out: wp.array[wp.vec3],
    edge_lower_out: wp.array[wp.vec3],
    edge_upper_out: wp.array[wp.vec3],
    tri_min_dist_out: wp.array[float],
    incident_count_out: wp.array[wp.int32],
    incident_fill_out: wp.array[wp.int32],
):
    i = wp.tid()  # one thread per max(triangle, edge, particle)
    if i < tri_count:
        a = particle_q[tri_indices[i, 0]]
        b = particle_q[tri_indices[i, 1]]
        c = particle_q[tri_indices[i, 2]]
        tri_lower_out[i] = wp.min(wp.min(a, b), c)
        tri_upper_out[i] = wp.max(wp.max(a, b), c)
        tri_min_dist_out[i] = margin
    if i < edge_count:
        a = particle_q[edge_indices[i, 2]]
        b = particle_q[edge_indices[i, 3]]
        edge_lower_out[i] = wp.min(a, b)
        edge_upper_out[i] = wp.max(a, b)
    if i < particle_count:
        incident_count_out[i] = 0
        incident_fill_out[i] = 0


@wp.kernel
def detect_vertex_triangle(
    # Model:
    tri_bvh: wp.uint64,
    tri_indices: wp.array2d[wp.int32],
    flt: FilterData,
    margin: float,
    # Data in:
    particle_q: wp.array[wp.vec3],
    # Data out:
    vt_tri_out: wp.array2d[wp.int32],
    vt_count_out: wp.array[wp.int32],
    vertex_min_dist_out: wp.array[float],
    tri_min_dist_out: wp.array[float],
    incident_count_out: wp.array[wp.int32],
    overflow_out: wp.array[wp.int32],
):
    v = wp.tid()  # one thread per particle
    x = particle_q[v]
    reach = wp.vec3(margin)
    query = wp.bvh_query_aabb(tri_bvh, x - reach, x + reach)
    t = int(0)
    capacity = vt_tri_out.shape[1]
    count = int(0)
    dropped = int(0)
    d_min = margin
    while wp.bvh_query_next(query, t):
        a = tri_indices[t, 0]
        b = tri_indices[t, 1]
        c = tri_indices[t, 2]
        if vertex_triangle_filtered(flt, v, t, a, b, c):
            continue
        d = vertex_triangle_distance(x, particle_q[a], particle_q[b], particle_q[c])
        if d >= margin:
            continue
        if d >= D_MIN:  # a pair closer than that bounds nothing (module docstring: coincident pairs)
            d_min = wp.min(d_min, d)
            wp.atomic_min(tri_min_dist_out, t, d)
        if count < capacity:
            vt_tri_out[v, count] = t
            count += 1
            wp.atomic_add(incident_count_out, v, 1)
            wp.atomic_add(incident_count_out, a, 1)
            wp.atomic_add(incident_count_out, b, 1)
            wp.atomic_add(incident_count_out, c, 1)
        else:
            dropped += 1
    vt_count_out[v] = count
    vertex_min_dist_out[v] = d_min
    if dropped > 0:
        wp.atomic_add(overflow_out, 0, dropped)


@wp.kernel
def detect_edge_edge(
    # Model:
    edge_bvh: wp.uint64,
    edge_indices: wp.array2d[wp.int32],
    flt: FilterData,
    margin: float,
    # Data in:
    particle_q: wp.array[wp.vec3],
    # Data out:
    ee_edge_out: wp.array2d[wp.int32],
    ee_count_out: wp.array[wp.int32],
    edge_min_dist_out: wp.array[float],
    incident_count_out: wp.array[wp.int32],
    overflow_out: wp.array[wp.int32],
):
    e1 = wp.tid()  # one thread per edge
    p0 = edge_indices[e1, 2]
    p1 = edge_indices[e1, 3]
    x0 = particle_q[p0]
    x1 = particle_q[p1]
    reach = wp.vec3(margin)
    query = wp.bvh_query_aabb(edge_bvh, wp.min(x0, x1) - reach, wp.max(x0, x1) + reach)
    e2 = int(0)
    capacity = ee_edge_out.shape[1]
    count = int(0)
    dropped = int(0)
    d_min = margin
    while wp.bvh_query_next(query, e2):
        p2 = edge_indices[e2, 2]
        p3 = edge_indices[e2, 3]
        if edge_edge_filtered(flt, e1, p0, p1, e2, p2, p3):
            continue
        d = edge_edge_distance(x0, x1, particle_q[p2], particle_q[p3], flt.parallel_epsilon)
        if d >= margin:
            continue
        if d >= D_MIN:
            d_min = wp.min(d_min, d)
        if count < capacity:
            ee_edge_out[e1, count] = e2
            count += 1
            if e1 < e2:  # the pair's force entries are listed once, by its lower edge
                wp.atomic_add(incident_count_out, p0, 1)
                wp.atomic_add(incident_count_out, p1, 1)
                wp.atomic_add(incident_count_out, p2, 1)
                wp.atomic_add(incident_count_out, p3, 1)
        else:
            dropped += 1
    ee_count_out[e1] = count
    edge_min_dist_out[e1] = d_min
    if dropped > 0:
        wp.atomic_add(overflow_out, 1, dropped)


@wp.func
def _file_entry(p: int, code: int, incident_count: wp.array[wp.int32], incident_end: wp.array[wp.int32],
                incident_fill: wp.array[wp.int32], incident_entry: wp.array[wp.int32]):
    slot = wp.atomic_add(incident_fill, p, 1)
    incident_entry[incident_end[p] - incident_count[p] + slot] = code


@wp.kernel
def file_incident_entries(
    # Model:
    tri_indices: wp.array2d[wp.int32],
    edge_indices: wp.array2d[wp.int32],
    particle_count: int,
    # Data in:
    vt_tri: wp.array2d[wp.int32],
    vt_count: wp.array[wp.int32],
    ee_edge: wp.array2d[wp.int32],
    ee_count: wp.array[wp.int32],
    incident_count: wp.array[wp.int32],
    incident_end: wp.array[wp.int32],
    # Data out:
    incident_fill_out: wp.array[wp.int32],
    incident_entry_out: wp.array[wp.int32],
):
    i = wp.tid()  # one thread per particle, then per edge (i - particle_count)
    if i < particle_count:
        width = vt_tri.shape[1]
        for k in range(vt_count[i]):
            t = vt_tri[i, k]
            pair = i * width + k
            _file_entry(i, encode_entry(pair, KIND_VT, 0), incident_count, incident_end, incident_fill_out,
                        incident_entry_out)
            for r in range(3):
                _file_entry(tri_indices[t, r], encode_entry(pair, KIND_VT, r + 1), incident_count, incident_end,
                            incident_fill_out, incident_entry_out)
        return
    e1 = i - particle_count
    width = ee_edge.shape[1]
    for k in range(ee_count[e1]):
        e2 = ee_edge[e1, k]
        if e1 < e2:
            pair = e1 * width + k
            _file_entry(edge_indices[e1, 2], encode_entry(pair, KIND_EE, 0), incident_count, incident_end,
                        incident_fill_out, incident_entry_out)
            _file_entry(edge_indices[e1, 3], encode_entry(pair, KIND_EE, 1), incident_count, incident_end,
                        incident_fill_out, incident_entry_out)
            _file_entry(edge_indices[e2, 2], encode_entry(pair, KIND_EE, 2), incident_count, incident_end,
                        incident_fill_out, incident_entry_out)
            _file_entry(edge_indices[e2, 3], encode_entry(pair, KIND_EE, 3), incident_count, incident_end,
                        incident_fill_out, incident_entry_out)


@wp.kernel
def vertex_bounds(
    # Model:
    vertex_tri_start: wp.array[wp.int32],
    vertex_tri: wp.array[wp.int32],
    vertex_edge_start: wp.array[wp.int32],
    vertex_edge: wp.array[wp.int32],
    half_relaxation: float,
    # Data in:
    particle_q: wp.array[wp.vec3],
    vertex_min_dist: wp.array[float],
    tri_min_dist: wp.array[float],
    edge_min_dist: wp.array[float],
    # Data out:
    q_detect_out: wp.array[wp.vec3],
    bound_out: wp.array[float],
):
    v = wp.tid()  # one thread per particle
    d = vertex_min_dist[v]
    for k in range(vertex_tri_start[v], vertex_tri_start[v + 1]):
        d = wp.min(d, tri_min_dist[vertex_tri[k]])
    for k in range(vertex_edge_start[v], vertex_edge_start[v + 1]):
        d = wp.min(d, edge_min_dist[vertex_edge[k]])
    q_detect_out[v] = particle_q[v]
    bound_out[v] = half_relaxation * d
