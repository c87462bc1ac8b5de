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

MIN_PIVOT = wp.constant(1.0e-12)


@wp.func
def cholesky_factor(n: int, base: int, mass_matrix: wp.array[float], mass_factor_out: wp.array[float]):
    """Factor one articulation's ``n x n`` block at ``base``: ``H = L L^T`` (a ``wp.func`` so solvers
    can fuse factor and solve in one launch)."""
    for j in range(n):
        s = mass_matrix[base + j * n + j]
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
    wp.launch(
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
    wp.launch(
        _solve,
        dim=plan.articulation_count,
        inputs=[plan.dof_start, plan.dof_count_per_articulation, plan.mass_start, data.mass_factor, rhs, float(scale)],
        outputs=[x],
        device=plan.device,
    )
