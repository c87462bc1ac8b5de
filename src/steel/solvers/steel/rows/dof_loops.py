"""The sweep's innermost loops over a row's DOFs, as native C++ on the arrays' data.

Warp indexes an array through ``index``: every load wraps a negative index (``i += shape`` when
``i < 0``) and multiplies by the array's byte stride, and a two-index load of the ``(row, 2)`` side
tables does both twice. A perf annotation of the tower's sweep put the hottest instructions of its
6-DOF sums on that address arithmetic. The row pool's arrays are contiguous (``wp.zeros``), so these
functions walk ``data`` with pointers: side ``s`` of row ``r`` starts at ``(2 r + s) stride`` in ``J``
and ``Y``, and its DOF range is ``dof_start``/``dof_count`` entry ``2 r + s``.

Each loop does the float operations of the Warp loop it replaced in the same order, one per statement,
as Warp emits them: joint_q/joint_qd after 300 steps are bitwise what they were (tower x1/x16, humanoid
x16, ant x64, chain x64). Timings in benchmarks/README.md's performance log.
"""

from __future__ import annotations

import warp as wp

_ROW_DOT = """
float v = 0.0f;
for (int s = 0; s < 2; ++s) {
    int n = dof_count.data[2 * r + s];
    if (n > 0) {
        const float* j = J.data + (2 * r + s) * stride;
        const float* q = qd.data + dof_start.data[2 * r + s];
        float side = 0.0f;
        for (int k = 0; k < n; ++k) {
            float p = j[k] * q[k];
            side = side + p;
        }
        v = v + side;
    }
}
return v;
"""


@wp.func_native(_ROW_DOT)
def row_dot(J: wp.array[float], dof_start: wp.array2d[wp.int32], dof_count: wp.array2d[wp.int32], r: int,
            stride: int, qd: wp.array[float]) -> float:
    """``J qd`` of row ``r``: each side's sum in DOF order, the sides added in order [m/s or rad/s]."""
    ...


_ROW_DOT_BOUNDS = """
float v = 0.0f;
float size = 0.0f;
float norm = 0.0f;
for (int s = 0; s < 2; ++s) {
    int n = dof_count.data[2 * r + s];
    if (n > 0) {
        const float* j = J.data + (2 * r + s) * stride;
        const float* q = qd.data + dof_start.data[2 * r + s];
        float side = 0.0f;
        for (int k = 0; k < n; ++k) {
            float jk = j[k];
            float p = jk * q[k];
            side = side + p;
            size = size + fabsf(p);
            norm = norm + fabsf(jk);
        }
        v = v + side;
    }
}
return wp::vec3(v, size, norm);
"""


@wp.func_native(_ROW_DOT_BOUNDS)
def row_dot_bounds(J: wp.array[float], dof_start: wp.array2d[wp.int32], dof_count: wp.array2d[wp.int32], r: int,
                   stride: int, qd: wp.array[float]) -> wp.vec3:
    """:func:`row_dot` with ``sum_k |J_k qd_k|`` and ``sum_k |J_k|`` over both sides."""
    ...


_ROW_AXPY = """
for (int s = 0; s < 2; ++s) {
    int n = dof_count.data[2 * r + s];
    if (n > 0) {
        const float* y = Y.data + (2 * r + s) * stride;
        float* q = qd.data + dof_start.data[2 * r + s];
        for (int k = 0; k < n; ++k) {
            float p = y[k] * impulse;
            q[k] = q[k] + p;
        }
    }
}
"""


@wp.func_native(_ROW_AXPY)
def row_axpy(Y: wp.array[float], dof_start: wp.array2d[wp.int32], dof_count: wp.array2d[wp.int32], r: int,
             stride: int, impulse: float, qd: wp.array[float]):
    """``qd += Y_r impulse`` over both sides of row ``r``."""
    ...


_PAIR_DOT = """
float v1 = 0.0f;
float v2 = 0.0f;
for (int s = 0; s < 2; ++s) {
    int n = dof_count.data[2 * f + s];
    if (n > 0) {
        const float* j1 = J.data + (2 * f + s) * stride;
        const float* j2 = j1 + 2 * stride;
        const float* q = qd.data + dof_start.data[2 * f + s];
        float a = 0.0f;
        float b = 0.0f;
        for (int k = 0; k < n; ++k) {
            float qk = q[k];
            float p1 = j1[k] * qk;
            a = a + p1;
            float p2 = j2[k] * qk;
            b = b + p2;
        }
        v1 = v1 + a;
        v2 = v2 + b;
    }
}
return wp::vec2(v1, v2);
"""


@wp.func_native(_PAIR_DOT)
def pair_dot(J: wp.array[float], dof_start: wp.array2d[wp.int32], dof_count: wp.array2d[wp.int32], f: int,
             stride: int, qd: wp.array[float]) -> wp.vec2:
    """``J qd`` of rows ``f`` and ``f + 1``, which share their sides (row ``f``'s DOF ranges), in one pass."""
    ...


_PAIR_AXPY = """
for (int s = 0; s < 2; ++s) {
    int n = dof_count.data[2 * f + s];
    if (n > 0) {
        const float* y1 = Y.data + (2 * f + s) * stride;
        const float* y2 = y1 + 2 * stride;
        float* q = qd.data + dof_start.data[2 * f + s];
        for (int k = 0; k < n; ++k) {
            float p1 = y1[k] * impulse1;
            float p2 = y2[k] * impulse2;
            float t = q[k] + p1;
            q[k] = t + p2;
        }
    }
}
"""


@wp.func_native(_PAIR_AXPY)
def pair_axpy(Y: wp.array[float], dof_start: wp.array2d[wp.int32], dof_count: wp.array2d[wp.int32], f: int,
              stride: int, impulse1: float, impulse2: float, qd: wp.array[float]):
    """``qd += Y_f impulse1`` then ``+= Y_(f+1) impulse2`` per DOF, over row ``f``'s sides."""
    ...


# One side's response when its articulation's DOFs form one chain (DOF k's parent is k - 1: a free body, a serial
# chain) of at most 8: articulation/factor.py's tree solve (``L^T L x = J``, leaves first, then root first), each
# operation as that function does it and in its order, then ``J Y`` summed in DOF order as rows/common.side_response
# sums it. Ancestors are walked by counting down instead of chasing dof_parent, in a local copy that the compiler
# keeps in registers (no store through Y can alias L); six DOFs, a free body, get loops of constant length. The
# ancestors are visited in the same order, so the result is the same bits; other blocks are left to the caller.
_CHAIN_RESPONSE = """
const int* parent = dof_parent.data;
bool chain = n <= 8 && parent[first_dof] < 0;
for (int k = 1; chain && k < n; ++k) {
    chain = parent[first_dof + k] == first_dof + k - 1;
}
if (!chain) {
    return wp::vec2(0.0f, 0.0f);
}
const float* L = mass_factor.data + base;
const float* b = J.data + offset;
float* y = Y.data + offset;
float x[8];
#define STEEL_CHAIN_SOLVE(NN)                               \\
for (int k = 0; k < NN; ++k) {                              \\
    x[k] = wp::mul(1.0f, b[k]);                             \\
}                                                           \\
for (int r = 0; r < NN; ++r) {                              \\
    int k = NN - 1 - r;                                     \\
    const float* Lk = L + k * NN;                           \\
    float yk = wp::div(x[k], Lk[k]);                        \\
    x[k] = yk;                                              \\
    if (yk != 0.0f) {                                       \\
        for (int i = k - 1; i >= 0; --i) {                  \\
            float p = wp::mul(Lk[i], yk);                   \\
            x[i] = wp::sub(x[i], p);                        \\
        }                                                   \\
    }                                                       \\
}                                                           \\
for (int k = 0; k < NN; ++k) {                              \\
    const float* Lk = L + k * NN;                           \\
    float s = x[k];                                         \\
    for (int i = k - 1; i >= 0; --i) {                      \\
        float p = wp::mul(Lk[i], x[i]);                     \\
        s = wp::sub(s, p);                                  \\
    }                                                       \\
    x[k] = wp::div(s, Lk[k]);                               \\
}
if (n == 6) {
    STEEL_CHAIN_SOLVE(6)
} else {
    STEEL_CHAIN_SOLVE(n)
}
#undef STEEL_CHAIN_SOLVE
float jy = 0.0f;
for (int k = 0; k < n; ++k) {
    y[k] = x[k];
    float p = wp::mul(b[k], x[k]);
    jy = wp::add(jy, p);
}
return wp::vec2(jy, 1.0f);
"""


@wp.func_native(_CHAIN_RESPONSE)
def chain_response(n: int, base: int, first_dof: int, offset: int, dof_parent: wp.array[int],
                   mass_factor: wp.array[float], J: wp.array[float], Y: wp.array[float]) -> wp.vec2:
    """``Y = H^-1 J^T`` over one side's ``n`` DOFs (``J``/``Y`` entries from ``offset``, DOF ``first_dof`` on) with the
    tree-sparse factor block at ``base``, if they form a chain of at most 8: ``(J Y [1/kg or 1/(kg·m²)], 1)``; else
    ``(0, 0)`` and ``Y`` untouched."""
    ...


_RESPONSE_MAX = """
float m = 0.0f;
for (int s = 0; s < 2; ++s) {
    int n = dof_count.data[2 * r + s];
    const float* y = Y.data + (2 * r + s) * stride;
    for (int k = 0; k < n; ++k) {
        m = wp::max(m, wp::abs(y[k]));
    }
}
return m;
"""


@wp.func_native(_RESPONSE_MAX)
def response_max(Y: wp.array[float], dof_count: wp.array2d[wp.int32], r: int, stride: int) -> float:
    """``max_k |Y_k|`` over both sides of row ``r`` [qd per N·s], side 0 first, in DOF order."""
    ...


# The sign bit is read through a union, not __builtin_signbit (clang's, which NVRTC does not know) nor a
# division 1/x (whose sign at zero a fast-math build may not keep): the same test on both devices.
_ZERO_STEP_IS_IDLE = """
union { float f; unsigned int u; } b1, b2;
b1.f = old1;
b2.f = old2;
if (old1 != 0.0f || old2 != 0.0f || (b1.u >> 31) != 0u || (b2.u >> 31) != 0u) {
    return 0;
}
for (int s = 0; s < 2; ++s) {
    int n = dof_count.data[2 * f + s];
    const float* q = qd.data + (n > 0 ? dof_start.data[2 * f + s] : 0);
    for (int k = 0; k < n; ++k) {
        union { float f; unsigned int u; } bq;
        bq.f = q[k];
        if (q[k] == 0.0f && (bq.u >> 31) != 0u) {
            return 0;
        }
    }
}
return 1;
"""


@wp.func_native(_ZERO_STEP_IS_IDLE)
def zero_step_is_idle(dof_start: wp.array2d[wp.int32], dof_count: wp.array2d[wp.int32], f: int, old1: float,
                      old2: float, qd: wp.array[float]) -> int:
    """1 when tail pair ``f``'s impulses are both +0 and no DOF of its sides holds -0: then applying the impulse
    change +0 leaves every velocity's bits as they are (``q + y * 0`` is ``q`` unless ``q`` is -0 and the product +0)
    and the impulses stay +0 (``sweep/tails.py``, ``_solve_disk``)."""
    ...
