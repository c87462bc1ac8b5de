"""Vertex -> element adjacency for the per-vertex VBD solve, built once on the host from the model.

Each vertex block step needs every element touching the vertex and the vertex's place in it
(Chen et al., "Vertex Block Descent", ACM TOG 43(4) 2024, sec. 3.2). For each element family
(triangles, bending edges, tetrahedra, springs) this builds a compressed row table: the entries of
vertex ``v`` are ``[start[v], start[v+1])`` of one packed array whose values are
``element * 4 + v_order`` (``v_order`` < 4 in every family), so one int32 load gives both.

Bending edges whose opposite vertex is missing (``-1``: a boundary edge) carry no bending energy and
are left out, as are elements without stiffness or damping (``add_soft_grid`` adds zero-material
surface triangles and edges for rendering and collision): their forces are exactly zero. The tables depend only on topology; nothing here changes after construction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp


@dataclass
class ElementAdjacency:
    """Per-vertex element lists, one pair of arrays per family (shapes in the field comments).

    ``*_start``: ``(particle_count + 1,)`` int32 offsets; ``*_entry``: ``(entries,)`` int32 of
    ``element * 4 + v_order`` (at least one entry, so an empty family still has a valid array).
    """

    tri_start: wp.array
    tri_entry: wp.array
    edge_start: wp.array
    edge_entry: wp.array
    tet_start: wp.array
    tet_entry: wp.array
    spring_start: wp.array
    spring_entry: wp.array


def _table(indices: np.ndarray, particle_count: int, keep: np.ndarray | None = None):
    """Compressed vertex -> (element, order) table of an ``(elements, k)`` index array."""
    elements, k = indices.shape if indices.size else (0, 1)
    if keep is None:
        keep = np.ones(elements, dtype=bool)
    elem = np.repeat(np.arange(elements, dtype=np.int64), k)
    order = np.tile(np.arange(k, dtype=np.int64), elements)
    vert = indices.reshape(-1).astype(np.int64) if elements else np.zeros(0, dtype=np.int64)
    mask = np.repeat(keep, k) & (vert >= 0)
    elem, order, vert = elem[mask], order[mask], vert[mask]
    sort = np.lexsort((order, elem, vert))  # by vertex, then element: a fixed summation order
    counts = np.bincount(vert, minlength=particle_count)
    start = np.zeros(particle_count + 1, dtype=np.int32)
    start[1:] = np.cumsum(counts)
    entry = (elem[sort] * 4 + order[sort]).astype(np.int32)
    if entry.size == 0:
        entry = np.zeros(1, dtype=np.int32)
    return start, entry


def _numpy(arr, shape_k: int) -> np.ndarray:
    if arr is None or arr.shape[0] == 0:
        return np.zeros((0, shape_k), dtype=np.int32)
    return arr.numpy().reshape(-1, shape_k)


def build_element_adjacency(model) -> ElementAdjacency:
    """Build the four per-vertex element tables of ``model`` on its device."""
    n = int(model.particle_count)
    tris = _numpy(model.tri_indices, 3) if model.tri_count else np.zeros((0, 3), np.int32)
    edges = _numpy(model.edge_indices, 4) if model.edge_count else np.zeros((0, 4), np.int32)
    tets = _numpy(model.tet_indices, 4) if model.tet_count else np.zeros((0, 4), np.int32)
    springs = _numpy(model.spring_indices, 2) if model.spring_count else np.zeros((0, 2), np.int32)
    tri_keep = (model.tri_materials.numpy()[:, :3] != 0.0).any(axis=1) if len(tris) else None
    edge_keep = None
    if len(edges):
        edge_keep = (edges >= 0).all(axis=1) & (model.edge_bending_properties.numpy() != 0.0).any(axis=1)
    tables = [_table(tris, n, tri_keep), _table(edges, n, edge_keep), _table(tets, n), _table(springs, n)]
    arrays = [wp.array(a, dtype=wp.int32, device=model.device) for pair in tables for a in pair]
    return ElementAdjacency(*arrays)


def tet_rest_volumes(model) -> wp.array:
    """Rest volume of each tetrahedron [m³] from its rest-shape inverse ``tet_poses = Dm⁻¹``: ``det(Dm) / 6``."""
    count = int(model.tet_count)
    if count == 0:
        return wp.zeros(1, dtype=float, device=model.device)
    dm_inv = model.tet_poses.numpy().reshape(count, 3, 3).astype(np.float64)
    volume = 1.0 / (6.0 * np.abs(np.linalg.det(dm_inv)))
    return wp.array(volume.astype(np.float32), dtype=float, device=model.device)
