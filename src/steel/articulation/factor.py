"""Dense Cholesky factorization of each articulation's mass matrix, and solves with it.

Owns: ``data.mass_factor``. ``H = L L^T`` per articulation, ``L`` lower triangular with the
upper triangle zeroed, in the same flat row-major layout as ``data.mass_matrix``. One thread per
articulation; the cost is ``n^3 / 6`` multiply-adds for ``n`` DOFs, small for robots
(``n <= ~40``). A tree-sparse factorization (Featherstone, *Rigid Body Dynamics Algorithms*,
sec. 6.5) would exploit the branch structure and can replace this behind the same functions.

A pivot that is not positive (a DOF without inertia and without armature, or an indefinite
``H`` from bad inertial data) is clamped to ``MIN_PIVOT`` so that the solve stays finite; the
affected DOF then responds very stiffly instead of producing NaN.
"""

from __future__ import annotations

import warp as wp

from .data import ArticulationData
from .topology import ArticulationPlan
from ..launches import launch

MIN_PIVOT = wp.constant(1.0e-12)


@wp.func
def cholesky_factor_shifted(
    n: int,
    base: int,
    first_dof: int,
    mass_matrix: wp.array[float],
    dof_shift: wp.array[float],
    use_shift: int,
    mass_factor_out: wp.array[float],
):
    """Factor ``H + diag(dof_shift)`` of one articulation's block at ``base`` without forming the sum.

    Each DOF's shift (``dof_shift[first_dof + j]``, when ``use_shift``) is added to its pivot as it is
    read, so a stale ``H`` stays intact for later refactors with new implicit terms (drive, damping
    and limit stiffness on the diagonal) without an ``n^2`` copy. ``mass_factor_out`` may alias
    ``mass_matrix``: only the lower triangle is read.
    """
    for j in range(n):
        s = mass_matrix[base + j * n + j]
        if use_shift != 0:
            s += dof_shift[first_dof + j]
        for k in range(j):
            ljk = mass_factor_out[base + j * n + k]
            s -= ljk * ljk
        ljj = wp.sqrt(wp.max(s, MIN_PIVOT))
        mass_factor_out[base + j * n + j] = ljj
        inv = 1.0 / ljj
        for i in range(j + 1, n):
            s = mass_matrix[base + i * n + j]
            for k in range(j):
                s -= mass_factor_out[base + i * n + k] * mass_factor_out[base + j * n + k]
            mass_factor_out[base + i * n + j] = s * inv
            mass_factor_out[base + j * n + i] = 0.0


@wp.func
def cholesky_factor(n: int, base: int, mass_matrix: wp.array[float], mass_factor_out: wp.array[float]):
    """Factor one articulation's ``n x n`` block at ``base``: ``H = L L^T`` (a ``wp.func`` so solvers
    can fuse factor and solve in one launch)."""
    cholesky_factor_shifted(n, base, 0, mass_matrix, mass_matrix, 0, mass_factor_out)


@wp.kernel
def _cholesky(
    # Plan:
    dof_count: wp.array[int],
    mass_start: wp.array[int],
    # Data in:
    mass_matrix: wp.array[float],
    # Data out:
    mass_factor_out: wp.array[float],
):
    art = wp.tid()  # one thread per articulation
    cholesky_factor(dof_count[art], mass_start[art], mass_matrix, mass_factor_out)


@wp.func
def cholesky_solve(
    n: int,
    base: int,
    first_dof: int,
    mass_factor: wp.array[float],
    rhs: wp.array[float],
    scale: float,
    x_out: wp.array[float],
):
    """Solve ``L L^T x = scale * rhs`` for one articulation; ``x_out`` may alias ``rhs``."""
    for i in range(n):  # forward: L y = b
        s = scale * rhs[first_dof + i]
        for k in range(i):
            s -= mass_factor[base + i * n + k] * x_out[first_dof + k]
        x_out[first_dof + i] = s / mass_factor[base + i * n + i]
    for r in range(n):  # backward: L^T x = y
        i = n - 1 - r
        s = x_out[first_dof + i]
        for k in range(i + 1, n):
            s -= mass_factor[base + k * n + i] * x_out[first_dof + k]
        x_out[first_dof + i] = s / mass_factor[base + i * n + i]


@wp.kernel
def _solve(
    # Plan:
    dof_start: wp.array[int],
    dof_count: wp.array[int],
    mass_start: wp.array[int],
    # Data in:
    mass_factor: wp.array[float],
    rhs: wp.array[float],
    scale: float,
    # Data out:
    x_out: wp.array[float],
):
    art = wp.tid()  # one thread per articulation
    cholesky_solve(dof_count[art], mass_start[art], dof_start[art], mass_factor, rhs, scale, x_out)


def factor_mass_matrix(plan: ArticulationPlan, data: ArticulationData) -> None:
    """Cholesky-factor every articulation's ``data.mass_matrix`` into ``data.mass_factor``."""
    if plan.articulation_count == 0:
        return
    launch(
        _cholesky,
        dim=plan.articulation_count,
        inputs=[plan.dof_count_per_articulation, plan.mass_start, data.mass_matrix],
        outputs=[data.mass_factor],
        device=plan.device,
    )


def solve_mass_matrix(
    plan: ArticulationPlan, data: ArticulationData, rhs: wp.array, x: wp.array, scale: float = 1.0
) -> None:
    """``x = scale * H^-1 rhs`` for every articulation (per-DOF arrays); needs the factor.

    ``scale = -1`` with ``rhs = data.dof_bias`` gives the unconstrained joint acceleration.
    """
    if plan.articulation_count == 0:
        return
    launch(
        _solve,
        dim=plan.articulation_count,
        inputs=[plan.dof_start, plan.dof_count_per_articulation, plan.mass_start, data.mass_factor, rhs, float(scale)],
        outputs=[x],
        device=plan.device,
    )


# ----------------------------------------------------------------------------------------------
# Tree-sparse factorization H = L^T L (Featherstone, *Rigid Body Dynamics Algorithms*, sec. 6.5)
# ----------------------------------------------------------------------------------------------
# With the DOFs numbered parent before child, eliminating from the leaves toward the root creates
# no fill: L has nonzeros only at (i, j) with j an ancestor DOF of i (``dof_parent`` chains), so a
# factorization costs O(n d^2) and a solve O(n d) for tree depth d, against O(n^3) and O(n^2)
# dense. L is stored in the same dense block layout (zeros elsewhere) so both factors share
# buffers. Only used where ``plan.tree_factor_ok`` (every DOF's parent has a smaller index).
# The factor runs as native C++ on the arrays' data (``_TREE_FACTOR``): Warp's array indexing wraps
# negative indices and multiplies by the byte stride on every access, which was most of a small block's
# factor; the buffers are contiguous (``wp.zeros``), so pointer arithmetic gives the same addresses. Each
# float operation is Warp's own (``wp::sqrt``, ``wp::max``, ``wp::div``, ``wp::mul``, ``wp::sub``), one per
# statement as Warp emits them, in the order of the Warp loops it replaced, so the factor is bitwise the
# same; a free body goes through it too (rejected: a separate local-matrix 6-DOF factor). Rejected: walking
# each ancestor path as runs of consecutive DOFs from a per-block table on the stack, instead of chasing
# ``dof_parent`` (slower: the loads it spares were not the bottleneck). The free dynamics' solve is native
# too (``tree_solve_native``, replacing a 6-DOF solve in a local vector); the sweep keeps the Warp
# :func:`tree_solve`, which its kernels inline. Timings in benchmarks/README.md's performance log.


_TREE_FACTOR = """
const float* H = mass_matrix.data + base;
float* F = mass_factor_out.data + base;
const int* parent = dof_parent.data;
for (int i = 0; i < n * n; ++i) {
    F[i] = 0.0f;
}
for (int i = 0; i < n; ++i) {
    F[i * n + i] = H[i * n + i];
    for (int j = parent[first_dof + i]; j >= 0; j = parent[j]) {
        int jl = j - first_dof;
        F[i * n + jl] = H[i * n + jl];
    }
}
for (int r = 0; r < n; ++r) {
    int k = n - 1 - r;
    float* Fk = F + k * n;
    float lkk = wp::sqrt(wp::max(Fk[k], min_pivot));
    Fk[k] = lkk;
    for (int i = parent[first_dof + k]; i >= 0; i = parent[i]) {
        int il = i - first_dof;
        Fk[il] = wp::div(Fk[il], lkk);
    }
    for (int i = parent[first_dof + k]; i >= 0; i = parent[i]) {
        int il = i - first_dof;
        float lki = Fk[il];
        float* Fi = F + il * n;
        for (int j = i; j >= 0; j = parent[j]) {
            int jl = j - first_dof;
            float p = wp::mul(lki, Fk[jl]);
            Fi[jl] = wp::sub(Fi[jl], p);
        }
    }
}
"""


@wp.func_native(_TREE_FACTOR)
def _tree_factor_native(n: int, base: int, first_dof: int, dof_parent: wp.array[int], mass_matrix: wp.array[float],
                        min_pivot: float, mass_factor_out: wp.array[float]):
    ...


@wp.func
def tree_factor(
    n: int,
    base: int,
    first_dof: int,
    dof_parent: wp.array[int],
    mass_matrix: wp.array[float],
    mass_factor_out: wp.array[float],
):
    """``H = L^T L`` of one articulation block, leaves first; entries off the ancestor pattern stay 0."""
    _tree_factor_native(n, base, first_dof, dof_parent, mass_matrix, MIN_PIVOT, mass_factor_out)


@wp.func
def tree_solve(
    n: int,
    base: int,
    first_dof: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    rhs: wp.array[float],
    rhs_offset: int,
    scale: float,
    x_out: wp.array[float],
    x_offset: int,
):
    """Solve ``L^T L x = scale * rhs`` for one articulation; ``x_out`` may alias ``rhs`` (same offset).

    ``rhs[rhs_offset + k]`` and ``x_out[x_offset + k]`` hold DOF ``first_dof + k``.
    """
    for k in range(n):
        x_out[x_offset + k] = scale * rhs[rhs_offset + k]
    for r in range(n):  # L^T y = b, leaves first: only ancestors receive updates
        k = n - 1 - r
        yk = x_out[x_offset + k] / mass_factor[base + k * n + k]
        x_out[x_offset + k] = yk
        if yk != 0.0:
            i = dof_parent[first_dof + k]
            while i >= 0:
                il = i - first_dof
                x_out[x_offset + il] = x_out[x_offset + il] - mass_factor[base + k * n + il] * yk
                i = dof_parent[i]
    for k in range(n):  # L x = y, root first
        s = x_out[x_offset + k]
        i = dof_parent[first_dof + k]
        while i >= 0:
            il = i - first_dof
            s -= mass_factor[base + k * n + il] * x_out[x_offset + il]
            i = dof_parent[i]
        x_out[x_offset + k] = s / mass_factor[base + k * n + k]


_TREE_SOLVE = """
const float* L = mass_factor.data + base;
const float* b = rhs.data + offset;
float* x = x_out.data + offset;
const int* parent = dof_parent.data;
for (int k = 0; k < n; ++k) {
    x[k] = wp::mul(scale, b[k]);
}
for (int r = 0; r < n; ++r) {
    int k = n - 1 - r;
    const float* Lk = L + k * n;
    float yk = wp::div(x[k], Lk[k]);
    x[k] = yk;
    if (yk != 0.0f) {
        for (int i = parent[first_dof + k]; i >= 0; i = parent[i]) {
            int il = i - first_dof;
            float p = wp::mul(Lk[il], yk);
            x[il] = wp::sub(x[il], p);
        }
    }
}
for (int k = 0; k < n; ++k) {
    const float* Lk = L + k * n;
    float s = x[k];
    for (int i = parent[first_dof + k]; i >= 0; i = parent[i]) {
        int il = i - first_dof;
        float p = wp::mul(Lk[il], x[il]);
        s = wp::sub(s, p);
    }
    x[k] = wp::div(s, Lk[k]);
}
"""


@wp.func_native(_TREE_SOLVE)
def tree_solve_native(n: int, base: int, first_dof: int, dof_parent: wp.array[int], mass_factor: wp.array[float],
                      rhs: wp.array[float], offset: int, scale: float, x_out: wp.array[float]):
    """:func:`tree_solve` (with ``rhs_offset == x_offset == offset``) as native C++ on the arrays' data: the same
    float operations in the same order, bitwise the same. Kept apart from :func:`tree_solve`, the Warp loops; the free
    dynamics and the sweep's responses of branched articulations (``rows/common.side_response``) call this one."""
    ...


@wp.kernel
def _tree_factor(
    dof_start: wp.array[int],
    dof_count: wp.array[int],
    mass_start: wp.array[int],
    dof_parent: wp.array[int],
    mass_matrix: wp.array[float],
    mass_factor_out: wp.array[float],
):
    art = wp.tid()  # one thread per articulation
    tree_factor(dof_count[art], mass_start[art], dof_start[art], dof_parent, mass_matrix, mass_factor_out)


@wp.kernel
def _tree_solve(
    dof_start: wp.array[int],
    dof_count: wp.array[int],
    mass_start: wp.array[int],
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    rhs: wp.array[float],
    scale: float,
    x_out: wp.array[float],
):
    art = wp.tid()  # one thread per articulation
    d0 = dof_start[art]
    tree_solve(dof_count[art], mass_start[art], d0, dof_parent, mass_factor, rhs, d0, scale, x_out, d0)


def tree_factor_mass_matrix(plan: ArticulationPlan, data: ArticulationData) -> None:
    """``H = L^T L`` for every articulation into ``data.mass_factor`` (needs ``plan.tree_factor_ok``)."""
    if plan.articulation_count == 0:
        return
    launch(_tree_factor, dim=plan.articulation_count,
              inputs=[plan.dof_start, plan.dof_count_per_articulation, plan.mass_start, plan.dof_parent,
                      data.mass_matrix],
              outputs=[data.mass_factor], device=plan.device)


def tree_solve_mass_matrix(plan: ArticulationPlan, data: ArticulationData, rhs: wp.array, x: wp.array,
                           scale: float = 1.0) -> None:
    """``x = scale * H^-1 rhs`` with the tree-sparse factor."""
    if plan.articulation_count == 0:
        return
    launch(_tree_solve, dim=plan.articulation_count,
              inputs=[plan.dof_start, plan.dof_count_per_articulation, plan.mass_start, plan.dof_parent,
                      data.mass_factor, rhs, float(scale)],
              outputs=[x], device=plan.device)


@wp.struct
class FactorView:
    """The factor of every articulation's ``H`` as the impulse solves read it: which factor applies, the DOF
    parent chains and the factor entries. The sweep kernels take the three as plain arguments (Warp's CPU launch
    specializes those for unit strides, not arrays inside a struct argument) and build this struct inside, for
    the force-inlined functions that pass it down."""

    use_tree: int  # 1: the tree-sparse H = L^T L (parents numbered before children), 0: the dense H = L L^T
    dof_parent: wp.array[int]  # the DOF above each DOF in the tree-sparse factor, -1: a root  (dof,)
    mass_factor: wp.array[float]  # the factor L, one block per articulation at plan.mass_start  (sum n_a²,)


@wp.func(inline=True)
def factor_of(use_tree: int, dof_parent: wp.array[int], mass_factor: wp.array[float]):
    """The :class:`FactorView` of a kernel's plain factor arguments (see :class:`FactorView` for why plain)."""
    f = FactorView()
    f.use_tree = use_tree
    f.dof_parent = dof_parent
    f.mass_factor = mass_factor
    return f


def factor_arguments(plan: ArticulationPlan, data: ArticulationData) -> list:
    """``[use_tree, dof_parent, mass_factor]``: the plain kernel arguments :func:`factor_of` takes."""
    return [int(plan.tree_factor_ok), plan.dof_parent, data.mass_factor]


@wp.func
def factor_solve(
    use_tree: int,
    n: int,
    base: int,
    first_dof: int,
    offset: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    rhs: wp.array[float],
    scale: float,
    x_out: wp.array[float],
):
    """``x = scale * H^-1 rhs`` with whichever factor is stored (tree-sparse when ``use_tree``).

    ``rhs[offset + k]`` and ``x_out[offset + k]`` hold DOF ``first_dof + k``.
    """
    if use_tree != 0:
        tree_solve(n, base, first_dof, dof_parent, mass_factor, rhs, offset, scale, x_out, offset)
    else:
        cholesky_solve(n, base, offset, mass_factor, rhs, scale, x_out)


@wp.func
def factor_articulation(
    use_tree: int,
    n: int,
    base: int,
    first_dof: int,
    dof_parent: wp.array[int],
    mass_matrix: wp.array[float],
    mass_factor_out: wp.array[float],
):
    """Factor one articulation's block with whichever factor :func:`factor_solve` expects: tree-sparse
    ``H = L^T L`` when ``use_tree`` (``plan.tree_factor_ok``), else dense ``H = L L^T``."""
    if use_tree != 0:
        tree_factor(n, base, first_dof, dof_parent, mass_matrix, mass_factor_out)
    else:
        cholesky_factor(n, base, mass_matrix, mass_factor_out)
