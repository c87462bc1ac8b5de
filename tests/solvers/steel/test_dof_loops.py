"""The sweep's native DOF loops (``rows/dof_loops.py``) against the same sums written out in NumPy.

The loops walk the row pool's arrays by pointer: side ``s`` of row ``r`` at ``(2 r + s) stride`` in
``J``/``Y``, its DOFs from ``dof_start[r, s]`` for ``dof_count[r, s]``. Each is checked on rows with
two sides, one side (the other empty) and a ragged count, at rows other than 0 so a wrong offset
shows, and against float32 sums accumulated in the loops' order, which they must match bit for bit
(the sweep's results are bitwise those of the Warp loops they replaced).
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from steel.articulation.factor import tree_factor, tree_solve, tree_solve_native
from steel.solvers.steel.rows.dof_loops import (chain_response, pair_axpy, pair_dot, response_max, row_axpy, row_dot,
                                               row_dot_bounds, zero_step_is_idle)

STRIDE = 6
DOFS = 24
ROWS = 5
# (dof_start, dof_count) per row and side; row 2 is a tail pair's first row (rows 2 and 3 share sides).
SIDES = [
    [(0, 6), (6, 6)],
    [(12, 3), (0, 0)],
    [(3, 6), (15, 4)],
    [(3, 6), (15, 4)],
    [(0, 0), (20, 1)],
]


@wp.kernel
def _loops(J: wp.array[float], Y: wp.array[float], dof_start: wp.array2d[wp.int32], dof_count: wp.array2d[wp.int32],
           stride: int, qd: wp.array[float], impulse: wp.array[float], dots: wp.array[float],
           bounds: wp.array[wp.vec3], pairs: wp.array[wp.vec2], qd_row: wp.array2d[float],
           qd_pair: wp.array[float]):
    r = wp.tid()
    dots[r] = row_dot(J, dof_start, dof_count, r, stride, qd)
    bounds[r] = row_dot_bounds(J, dof_start, dof_count, r, stride, qd)
    q = qd_row[r]
    row_axpy(Y, dof_start, dof_count, r, stride, impulse[r], q)
    if r == 2:
        pairs[0] = pair_dot(J, dof_start, dof_count, r, stride, qd)
        pair_axpy(Y, dof_start, dof_count, r, stride, impulse[2], impulse[3], qd_pair)


def _sides(r):
    return [(s, start, count) for s, (start, count) in enumerate(SIDES[r]) if count > 0]


def _expected(J, Y, qd, impulse):
    f = np.float32
    dots, bounds, rows_after = [], [], []
    for r in range(ROWS):
        v, size, norm = f(0), f(0), f(0)
        after = qd.copy()
        for s, start, count in _sides(r):
            side = f(0)
            for k in range(count):
                jk = J[(2 * r + s) * STRIDE + k]
                p = f(jk * qd[start + k])
                side = f(side + p)
                size = f(size + abs(p))
                norm = f(norm + abs(jk))
                after[start + k] = f(after[start + k] + f(Y[(2 * r + s) * STRIDE + k] * impulse[r]))
            v = f(v + side)
        dots.append(v)
        bounds.append((v, size, norm))
        rows_after.append(after)
    pair = [f(0), f(0)]
    pair_after = qd.copy()
    for s, start, count in _sides(2):
        a, b = f(0), f(0)
        for k in range(count):
            a = f(a + f(J[(4 + s) * STRIDE + k] * qd[start + k]))
            b = f(b + f(J[(6 + s) * STRIDE + k] * qd[start + k]))
            t = f(pair_after[start + k] + f(Y[(4 + s) * STRIDE + k] * impulse[2]))
            pair_after[start + k] = f(t + f(Y[(6 + s) * STRIDE + k] * impulse[3]))
        pair = [f(pair[0] + a), f(pair[1] + b)]
    return np.array(dots), np.array(bounds), np.array(pair), np.array(rows_after), pair_after


@pytest.mark.parametrize("seed", [0, 1])
def test_native_loops_match_the_sums_in_order(seed):
    rng = np.random.default_rng(seed)
    J = rng.standard_normal(2 * ROWS * STRIDE).astype(np.float32)
    Y = rng.standard_normal(2 * ROWS * STRIDE).astype(np.float32)
    qd = rng.standard_normal(DOFS).astype(np.float32)
    impulse = rng.standard_normal(ROWS).astype(np.float32)
    start = np.array([[s for s, _ in row] for row in SIDES], dtype=np.int32)
    count = np.array([[c for _, c in row] for row in SIDES], dtype=np.int32)
    dev = "cpu"
    dots = wp.zeros(ROWS, dtype=float, device=dev)
    bounds = wp.zeros(ROWS, dtype=wp.vec3, device=dev)
    pairs = wp.zeros(1, dtype=wp.vec2, device=dev)
    qd_row = wp.array(np.tile(qd, (ROWS, 1)), dtype=float, device=dev)
    qd_pair = wp.array(qd, dtype=float, device=dev)
    wp.launch(_loops, dim=ROWS, device=dev, inputs=[
        wp.array(J, dtype=float, device=dev), wp.array(Y, dtype=float, device=dev),
        wp.array(start, dtype=wp.int32, device=dev), wp.array(count, dtype=wp.int32, device=dev), STRIDE,
        wp.array(qd, dtype=float, device=dev), wp.array(impulse, dtype=float, device=dev), dots, bounds, pairs,
        qd_row, qd_pair])

    want_dots, want_bounds, want_pair, want_rows, want_pair_qd = _expected(J, Y, qd, impulse)
    np.testing.assert_array_equal(dots.numpy(), want_dots)
    np.testing.assert_array_equal(bounds.numpy(), want_bounds)
    np.testing.assert_array_equal(pairs.numpy()[0], want_pair)
    np.testing.assert_array_equal(qd_row.numpy(), want_rows)
    np.testing.assert_array_equal(qd_pair.numpy(), want_pair_qd)
    # The checks above are not vacuous: every row moved some DOF and has a nonzero product.
    assert np.all(want_dots != 0.0)
    assert np.all(np.any(want_rows != qd, axis=1))


@wp.kernel
def _factor_block(n: int, first_dof: int, dof_parent: wp.array[int], H: wp.array[float], L: wp.array[float]):
    tree_factor(n, 0, first_dof, dof_parent, H, L)


@wp.kernel
def _responses(n: int, first_dof: int, dof_parent: wp.array[int], L: wp.array[float], J: wp.array[float],
               Y_native: wp.array[float], Y_warp: wp.array[float], jy: wp.array2d[float]):
    t = wp.tid()  # one right-hand side each, at offset t * n
    # rows/common.side_response's tree path: the chain solve, else the native tree solve and the Warp sum.
    chain = chain_response(n, 0, first_dof, t * n, dof_parent, L, J, Y_native)
    jy[t, 2] = chain[1]
    if chain[1] != 0.0:
        jy[t, 0] = chain[0]
    else:
        tree_solve_native(n, 0, first_dof, dof_parent, L, J, t * n, 1.0, Y_native)
        s_native = float(0.0)
        for k in range(n):
            s_native += J[t * n + k] * Y_native[t * n + k]
        jy[t, 0] = s_native
    tree_solve(n, 0, first_dof, dof_parent, L, J, t * n, 1.0, Y_warp, t * n)
    s = float(0.0)
    for k in range(n):
        s += J[t * n + k] * Y_warp[t * n + k]
    jy[t, 1] = s


@pytest.mark.parametrize("parents, chain", [
    ([-1, 0, 1, 2, 3, 4], 1.0),  # a free body's six DOFs: the chain solve with constant loop lengths
    ([-1, 0, 1], 1.0),  # a three-DOF chain: the chain solve
    ([-1, 0, 1, 1, 3, 0], 0.0),  # a branched block: the native tree solve
    ([-1, 0, 1, 2, 3, 4, 5, 6, 7], 0.0),  # a chain longer than the local copy holds: the native tree solve
])
def test_side_response_is_the_tree_solve_bit_for_bit(parents, chain):
    """``chain_response``, else ``tree_solve_native``, against ``articulation.factor.tree_solve`` and the Warp sum of ``J Y`` it replaced in
    the sweep (``rows/common.side_response``): the same bits, on blocks that start at DOF 2 (a wrong offset shows)."""
    rng = np.random.default_rng(len(parents))
    n, first, cases = len(parents), 2, 4
    dof_parent = np.full(first + n, -1, dtype=np.int32)
    dof_parent[first:] = [p + first if p >= 0 else -1 for p in parents]
    # A mass matrix with the tree's sparsity: H = L^T L of a random factor on the ancestor pattern.
    Lt = np.zeros((n, n))
    for k in range(n):
        Lt[k, k] = 1.0 + rng.random()
        i = parents[k]
        while i >= 0:
            Lt[k, i] = rng.standard_normal()
            i = parents[i]
    H = (Lt.T @ Lt).astype(np.float32)
    J = rng.standard_normal(cases * n).astype(np.float32)
    J[:n] = 0.0
    J[2] = 1.0  # a sparse right-hand side: zero steps of the leaves-first pass are skipped
    dev = "cpu"
    parent_arr = wp.array(dof_parent, dtype=int, device=dev)
    L = wp.zeros(n * n, dtype=float, device=dev)
    wp.launch(_factor_block, dim=1, device=dev, inputs=[n, first, parent_arr, wp.array(H.ravel(), dtype=float,
                                                                                        device=dev), L])
    Y_native = wp.zeros(cases * n, dtype=float, device=dev)
    Y_warp = wp.zeros(cases * n, dtype=float, device=dev)
    jy = wp.zeros((cases, 3), dtype=float, device=dev)
    wp.launch(_responses, dim=cases, device=dev, inputs=[n, first, parent_arr, L, wp.array(J, dtype=float, device=dev),
                                                         Y_native, Y_warp, jy])
    np.testing.assert_array_equal(Y_native.numpy().view(np.uint32), Y_warp.numpy().view(np.uint32))
    np.testing.assert_array_equal(jy.numpy()[:, 0].view(np.uint32), jy.numpy()[:, 1].view(np.uint32))
    np.testing.assert_array_equal(jy.numpy()[:, 2], chain)  # the path the block took
    # Not vacuous: the solve is H^-1 J (float32, relative 1e-4 for these well-conditioned blocks).
    want = np.linalg.solve(H.astype(np.float64), J.reshape(cases, n).T).T.ravel()
    np.testing.assert_allclose(Y_native.numpy(), want, rtol=1e-3, atol=1e-5)


@wp.kernel
def _max(Y: wp.array[float], dof_count: wp.array2d[wp.int32], stride: int, out: wp.array[float]):
    r = wp.tid()
    out[r] = response_max(Y, dof_count, r, stride)


def test_response_max_covers_both_sides_only():
    """``response_max``: ``max_k |Y_k|`` over each side's counted entries, none past them."""
    rng = np.random.default_rng(3)
    Y = rng.standard_normal(2 * ROWS * STRIDE).astype(np.float32)
    count = np.array([[c for _, c in row] for row in SIDES], dtype=np.int32)
    want = []
    for r in range(ROWS):
        m = np.float32(0.0)
        for s in range(2):
            block = Y[(2 * r + s) * STRIDE:(2 * r + s) * STRIDE + count[r, s]]
            m = max(m, np.abs(block).max(initial=0.0))
        want.append(m)
    out = wp.zeros(ROWS, dtype=float, device="cpu")
    wp.launch(_max, dim=ROWS, device="cpu", inputs=[wp.array(Y, dtype=float), wp.array(count, dtype=wp.int32),
                                                      STRIDE, out])
    np.testing.assert_array_equal(out.numpy(), np.array(want, dtype=np.float32))
    assert len(set(want)) == ROWS  # each row's maximum is its own (an entry past a side's count would show)


@wp.kernel
def _idle_kernel(dof_start: wp.array2d[wp.int32], dof_count: wp.array2d[wp.int32], olds: wp.array[wp.vec2],
                 qd: wp.array[float], out: wp.array[int]):
    i = wp.tid()
    out[i] = zero_step_is_idle(dof_start, dof_count, 0, olds[i][0], olds[i][1], qd)


def test_zero_step_is_idle_reads_the_sign_of_zero_on_impulses_and_velocities():
    """A tail pair is idle only with both impulses +0 and no DOF of its sides at -0 (the skip must keep every
    velocity's bits: ``q + y * 0`` is ``q`` unless ``q`` is -0). The sign bit is read through a union, which
    NVRTC compiles too (``tests/test_cuda_compile.py``)."""
    starts = wp.array(np.array([[0, 3]], dtype=np.int32), dtype=wp.int32, device="cpu")
    counts = wp.array(np.array([[3, 2]], dtype=np.int32), dtype=wp.int32, device="cpu")
    cases = [((0.0, 0.0), [0.0, 0.5, -1.0, 2.0, 0.0], 1),  # +0 impulses, no -0 velocity: idle
             ((-0.0, 0.0), [0.0] * 5, 0),  # an impulse at -0
             ((0.0, -0.0), [0.0] * 5, 0),
             ((1e-30, 0.0), [0.0] * 5, 0),  # a non-zero impulse
             ((0.0, 0.0), [0.0, 0.0, 0.0, -0.0, 0.0], 0),  # a -0 velocity on side 1
             ((0.0, 0.0), [0.0, 0.0, 0.0, 0.0, 0.0, -0.0], 1)]  # -0 outside both sides' DOFs
    for olds, q, expected in cases:
        out = wp.zeros(1, dtype=int, device="cpu")
        wp.launch(_idle_kernel, dim=1, device="cpu",
                  inputs=[starts, counts, wp.array([wp.vec2(*olds)], dtype=wp.vec2, device="cpu"),
                          wp.array(np.array(q, dtype=np.float32), dtype=float, device="cpu"), out])
        assert int(out.numpy()[0]) == expected, (olds, q)
