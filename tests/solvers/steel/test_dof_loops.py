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

from steel.solvers.steel.rows.dof_loops import pair_axpy, pair_dot, row_axpy, row_dot, row_dot_bounds

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
