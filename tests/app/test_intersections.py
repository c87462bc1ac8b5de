"""steel.app.intersections: exact self-intersection counts used to check SolverVBD's self-contact."""

import numpy as np

from steel.app.intersections import edge_triangle_intersections, mesh_edges, vertex_triangle_crossings


def _grid(n: int, cell: float = 0.1):
    ij = np.stack(np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"), -1).reshape(-1, 2)
    x = np.c_[ij * cell, np.zeros(len(ij))]
    k = lambda i, j: i * (n + 1) + j  # noqa: E731
    tris = [t for i in range(n) for j in range(n)
            for t in ([k(i, j), k(i + 1, j), k(i + 1, j + 1)], [k(i, j), k(i + 1, j + 1), k(i, j + 1)])]
    return x, np.array(tris)


def test_piercing_edge_is_found_and_separate_triangles_are_not():
    """Two triangles piercing each other: each one's crossing edge is found; lifted clear, none."""
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.2, 0.2, -0.5], [0.2, 0.2, 0.5], [2, 2, 0.5]], float)
    tris = np.array([[0, 1, 2], [3, 4, 5]])
    hits = edge_triangle_intersections(x, tris)
    edges = mesh_edges(tris)
    # Edge 3-4 pierces triangle 0 at (0.2, 0.2, 0); edge 1-2 of triangle 0 pierces triangle 1 at (0.5, 0.5, 0).
    assert sorted((tuple(edges[e]), t) for e, t in hits) == [((1, 2), 1), ((3, 4), 0)]
    x[3:, 2] += 1.0
    assert len(edge_triangle_intersections(x, tris)) == 0


def test_flat_and_stacked_cloths_are_clean_and_a_folded_one_is_not():
    """A flat grid and two parallel layers 1 mm apart: 0 pairs; a layer folded through the other: many."""
    x, tris = _grid(12)
    assert len(edge_triangle_intersections(x, tris)) == 0
    x2 = np.concatenate([x, x + [0.03, 0.02, 0.001]])
    tris2 = np.concatenate([tris, tris + len(x)])
    assert len(edge_triangle_intersections(x2, tris2)) == 0
    wavy = x2.copy()
    wavy[len(x):, 2] = 0.01 * np.sin(40.0 * wavy[len(x):, 0])  # the second layer weaves through the first
    assert len(edge_triangle_intersections(wavy, tris2)) > 50


def test_grid_broad_phase_misses_nothing():
    """On random crumpled meshes the counts equal an all-pairs evaluation of the same exact tests."""
    rng = np.random.default_rng(3)
    for trial in range(3):
        x, tris = _grid(5)
        x = x + rng.normal(scale=0.06, size=x.shape)
        x1 = x + rng.normal(scale=0.05, size=x.shape)
        edges = mesh_edges(tris)
        brute = []
        for e, (a, b) in enumerate(edges):
            for t, tri in enumerate(tris):
                if a in tri or b in tri:
                    continue
                sub = np.array([x[a], x[b], *x[tri]])
                if len(edge_triangle_intersections(sub, np.array([[2, 3, 4]]), np.array([[0, 1]]))):
                    brute.append((e, t))
        fast = sorted(map(tuple, edge_triangle_intersections(x, tris, edges)))
        assert fast == sorted(brute), trial
        brute_v = []
        for v in np.unique(tris):
            for t, tri in enumerate(tris):
                if v in tri:
                    continue
                idx = np.array([v, *tri])
                if len(vertex_triangle_crossings(x[idx], x1[idx], np.array([[1, 2, 3]]))):
                    brute_v.append((v, t))
        fast_v = sorted(map(tuple, vertex_triangle_crossings(x, x1, tris)))
        assert fast_v == sorted(brute_v), trial


def test_vertex_crossing_through_a_moving_triangle():
    """A vertex passing through a triangle that itself moves is a crossing; one passing beside it is not."""
    x0 = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.2, 0.2, 0.3]], float)
    x1 = x0.copy()
    x1[:3, 2] += 0.5  # the triangle rises through the vertex, which stays put
    tris = np.array([[0, 1, 2]])
    assert vertex_triangle_crossings(x0, x1, tris).tolist() == [[3, 0]]
    x0[3, :2] = x1[3, :2] = [0.8, 0.8]  # outside the triangle in its plane
    assert len(vertex_triangle_crossings(x0, x1, tris)) == 0
