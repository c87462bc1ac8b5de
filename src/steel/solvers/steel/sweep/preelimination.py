"""Bilateral pre-elimination (``enable_bilateral_preelimination``): one block solve of each articulation's
mimic and connect rows before the sweep.

The bilateral rows of one articulation (mimic rows, ``joints/mimic.py``, and loop-closure rows,
``joints/loop_closures.py``) act on the same DOF range and couple strongly: a four-bar's five hinge-closure
rows share the coupler and rocker, and Gauss-Seidel passes over them one at a time converge slowly. After
the warm start the sweep calls :func:`preeliminate`, which for each articulation assembles the bilateral
block ``S = J_B H^-1 J_B^T`` (the Schur complement of the joint-space mass matrix in the KKT system
``[H J^T; J 0]``, Featherstone, "Rigid Body Dynamics Algorithms", 2008, sec. 8.2), regularizes its
diagonal by ``R_ii = max(1e-3 S_ii, max(cfm, 1e-7))`` and solves ``(S + R) dlambda = target - J_B qd`` by Cholesky
(Golub and Van Loan, "Matrix Computations", 4th ed., alg. 4.2.1), then applies ``dlambda``. Every other row
acting on the articulation (contacts, limits, drive rows, mimics left out) then has its response projected,
``Y <- Y - Y_B (S + R)^-1 J_B Y``, so the sweep's impulses on it move the articulation without breaking the
eliminated rows (up to the regularization): the row sees the articulation's effective mass with the closures
held. Projecting only the velocity would not do: a four-bar's crank stopped by a joint limit at one iteration
per step parts its closure by 0.93 mm that way, 0.045 mm with the responses projected, 0.87 mm without either
(the last two: ``tests/solvers/steel/test_preelimination.py::
test_a_joint_limit_impulse_does_not_break_an_eliminated_closure``).
The regularization keeps a block whose rows nearly repeat (a mimic duplicating a closure's motion) solvable
and makes the elimination intentionally inexact: it leaves a residual of about 1e-3 of the velocity error,
which the sweep removes, since the rows stay allocated and in the sweep with their pre-eliminated impulse as
a warm start. Those projected responses are formed eagerly, not lazily.
``bilateral_preelimination_include_mimics=False`` eliminates only the connect (closure) rows.

Construction (:func:`preelimination_plan`) decides it for the whole solver. It falls back to the plain
sweep, with a ``UserWarning``, when ``velocity_iterations > 0``, with ``articulated_contact_response=
"propagation"``, when a closure's parent is the world or a kinematic body, or when an articulation would
own more than :data:`BLOCK_CAPACITY` eliminated rows (a FIXED closure takes 6). Joint friction raises
``NotImplementedError``. The ``body_parent_f`` observable is the same inverse-dynamics evaluation as
without it, which never counts closure reactions as loads of their own; the solver warns once.
"""

from __future__ import annotations

import warnings

import numpy as np
import warp as wp

import newton

from ....articulation.factor import FactorView
from ..data import ROW_BOX, UNBOUNDED_AT_LEAST, RowBuffers
from ..rows.common import apply_impulse, block_entry, ensure_response, response_size, row_velocity, side_offset

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

BLOCK_CAPACITY = 8  # eliminated rows per articulation: a FIXED closure (6) and two mimic DOFs
BILATERAL_BOX = UNBOUNDED_AT_LEAST  # [N·s or N·m·s] boxes at least this wide are bilateral rows (UNBOUNDED)
REGULARIZATION = 1.0e-3  # of each row's diagonal
REGULARIZATION_FLOOR = 1.0e-7  # [1/kg or 1/(kg·m²)] lower bound of the diagonal shift, with cfm

_block_ids = wp.types.vector(length=BLOCK_CAPACITY, dtype=wp.int32)
_block_vec = wp.types.vector(length=BLOCK_CAPACITY, dtype=float)
_block_mat = wp.types.matrix(shape=(BLOCK_CAPACITY, BLOCK_CAPACITY), dtype=float)

_FALLBACK = ("; pre-elimination is disabled for the whole solver and every articulation keeps iterative mimic "
             "and connect rows")


@wp.func(inline=True)
def _eliminated(rows: RowBuffers, r: int, include_mimics: int):
    """Row ``r`` is a bilateral row to eliminate: a mimic row (when included) or a connect row, which carries its
    world direction in ``rows.dir`` (one-DOF rows carry none)."""
    if rows.kind[r] != ROW_BOX or rows.mu[r] < BILATERAL_BOX:
        return False
    return include_mimics != 0 or wp.length_sq(rows.dir[r]) > 0.0


@wp.func(inline=True)
def preeliminate(
    rows: RowBuffers,
    world: int,
    base: int,
    include_mimics: int,
    cfm: float,
    factor: FactorView,
    joint_qd: wp.array[float],
):
    """Solve each articulation's eliminated rows of ``world`` as one regularized block on ``joint_qd`` (in place)."""
    count = wp.min(rows.world_row_count[world, 0], rows.articulation_capacity)
    floor = wp.max(cfm, REGULARIZATION_FLOOR)
    for i in range(count):
        r = base + i
        if not _eliminated(rows, r, include_mimics):
            continue
        # Row r leads its articulation's block unless an earlier eliminated row has the same factor block.
        lead = int(1)
        for k in range(i):
            if _eliminated(rows, base + k, include_mimics) and rows.mass_start[base + k, 0] == rows.mass_start[r, 0]:
                lead = 0
                break
        if lead == 0:
            continue
        ids = _block_ids()
        n = int(0)
        for k in range(i, count):
            q = base + k
            same = rows.mass_start[q, 0] == rows.mass_start[r, 0]
            if n < BLOCK_CAPACITY and same and _eliminated(rows, q, include_mimics):
                ids[n] = q
                n += 1
        a = _block_mat()
        b = _block_vec()
        for x in range(n):
            ensure_response(rows, ids[x], cfm, factor)
        for x in range(n):
            b[x] = rows.target[ids[x]] - row_velocity(rows, ids[x], joint_qd)
            for y in range(x + 1):
                e = block_entry(rows, ids[x], ids[y])
                a[x, y] = e
                a[y, x] = e
            a[x, x] = a[x, x] + wp.max(REGULARIZATION * a[x, x], floor)
        a = _factor(a, n, floor)
        b = _solve(a, b, n)
        for x in range(n):
            apply_impulse(rows, ids[x], b[x], joint_qd)
            rows.impulse[ids[x]] = rows.impulse[ids[x]] + b[x]
        # The other rows' responses on this articulation, projected onto the bilateral rows' null space.
        for k in range(count):
            q = base + k
            if _eliminated(rows, q, include_mimics):
                continue
            for s in range(2):
                if rows.mass_start[q, s] == rows.mass_start[r, 0] and rows.dof_count[q, s] == rows.dof_count[r, 0]:
                    _project_response(rows, q, s, ids, n, a, cfm, factor)


@wp.func(inline=True)
def _project_response(
    rows: RowBuffers,
    q: int,
    s: int,
    ids: _block_ids,
    n: int,
    block_factor: _block_mat,
    cfm: float,
    factor: FactorView,
):
    """``Y_q <- Y_q - Y_B (S + R)^-1 J_B Y_q`` on side ``s`` of row ``q``, and its ``1 / (J Y + cfm)`` anew.

    An impulse of row ``q`` then moves the articulation (up to the regularization) without breaking its
    eliminated rows: the row sees the articulation's effective mass with the closures and mimics held.
    """
    ensure_response(rows, q, cfm, factor)
    oq = side_offset(rows, q, s)
    c = _block_vec()
    for x in range(n):
        ox = side_offset(rows, ids[x], 0)
        v = float(0.0)
        for i in range(rows.dof_count[q, s]):
            v += rows.J[ox + i] * rows.Y[oq + i]
        c[x] = v
    z = _solve(block_factor, c, n)
    for x in range(n):
        ox = side_offset(rows, ids[x], 0)
        for i in range(rows.dof_count[q, s]):
            rows.Y[oq + i] = rows.Y[oq + i] - rows.Y[ox + i] * z[x]
    rows.inv_mass[q] = 1.0 / (wp.max(block_entry(rows, q, q), 0.0) + cfm)
    response_size(rows, q)  # the sweep's drift bound reads it (sweep/pgs.py, "Gate")


@wp.func
def _factor(a: _block_mat, n: int, floor: float):
    """Cholesky factor of the leading ``n x n`` block of ``a``, lower triangle (Golub and Van Loan,
    alg. 4.2.1); pivots below ``sqrt(floor)`` are raised to it (the regularized block is positive definite, so
    this guards only rounding)."""
    for x in range(n):
        d = a[x, x]
        for k in range(x):
            d -= a[x, k] * a[x, k]
        d = wp.sqrt(wp.max(d, floor))
        a[x, x] = d
        for y in range(x + 1, n):
            s = a[y, x]
            for k in range(x):
                s -= a[y, k] * a[x, k]
            a[y, x] = s / d
    return a


@wp.func
def _solve(factor: _block_mat, b: _block_vec, n: int):
    """``(L L^T)^-1 b`` for the factor of :func:`_factor` (forward, then back substitution)."""
    y = _block_vec()
    for x in range(n):
        s = b[x]
        for k in range(x):
            s -= factor[x, k] * y[k]
        y[x] = s / factor[x, x]
    for xx in range(n):
        x = n - 1 - xx
        s = y[x]
        for k in range(x + 1, n):
            s -= factor[k, x] * y[k]
        y[x] = s / factor[x, x]
    return y


def check_preelimination_options(opts) -> None:
    """Joint friction with pre-elimination raises ``NotImplementedError`` (before anything is allocated)."""
    if opts.enable_bilateral_preelimination and opts.enable_joint_friction:
        raise NotImplementedError("SolverSteel enable_bilateral_preelimination=True with enable_joint_friction=True "
                                  "is not implemented (the friction rows would act on a pre-eliminated block)")


def preelimination_plan(model: newton.Model, opts, closures: list[int]) -> bool:
    """Whether the sweep pre-eliminates bilateral rows; warns when the option falls back for the whole solver."""
    if not opts.enable_bilateral_preelimination:
        return False
    reason = None
    if opts.velocity_iterations > 0:
        reason = "does not support velocity_iterations > 0"
    elif opts.articulated_contact_response == "propagation":
        reason = "does not support articulated_contact_response='propagation'"
    else:
        parent = model.joint_parent.numpy()
        kinematic = (model.body_flags.numpy() & int(newton.BodyFlags.KINEMATIC)) != 0
        if any(int(parent[j]) < 0 or kinematic[int(parent[j])] for j in closures):
            reason = "does not support loop closures with a kinematic or world parent"
        else:
            most = int(eliminated_rows_per_articulation(model, closures, opts.bilateral_preelimination_include_mimics)
                       .max(initial=0))
            if most > BLOCK_CAPACITY:
                reason = (f"found an articulation that owns {most} bilateral rows, more than the pre-elimination "
                          f"capacity of {BLOCK_CAPACITY}")
    if reason is None:
        return True
    hint = (" Set bilateral_preelimination_include_mimics=False to pre-eliminate only the connect rows."
            if "capacity" in reason and opts.bilateral_preelimination_include_mimics else "")
    warnings.warn(f"SolverSteel: enable_bilateral_preelimination {reason}{_FALLBACK}.{hint}", UserWarning,
                  stacklevel=4)
    return False


def eliminated_rows_per_articulation(model: newton.Model, closures: list[int], include_mimics: bool) -> np.ndarray:
    """Rows each articulation would eliminate (host): 3, 5 or 6 per closure, one per mimic follower DOF."""
    art = model.joint_articulation.numpy()
    counts = np.zeros(max(int(model.articulation_count), 1), dtype=np.int64)
    child = model.joint_child.numpy()
    body_art = np.full(max(model.body_count, 1), -1, dtype=np.int64)
    body_art[child[art >= 0]] = art[art >= 0]
    jtype = model.joint_type.numpy()
    rows_of = {int(newton.JointType.BALL): 3, int(newton.JointType.REVOLUTE): 5}
    for j in closures:
        counts[body_art[child[j]]] += rows_of.get(int(jtype[j]), 6)
    if include_mimics:
        dofs = np.diff(model.joint_qd_start.numpy())
        followers = set(np.nonzero(model.joint_mimic_joint.numpy() >= 0)[0].tolist())
        if int(getattr(model, "constraint_mimic_count", 0) or 0):
            followers |= set(model.constraint_mimic_joint0.numpy().tolist())
        for f in followers:
            if art[f] >= 0:
                counts[art[f]] += int(dofs[f])
    return counts


def warn_body_parent_f_once(sm, sd, observables) -> None:
    """``body_parent_f`` with pre-elimination on: say once that it leaves the closure reactions out."""
    if (not sm.preeliminate or "preelimination_parent_f" in sd.warned or observables is None
            or not observables.is_requested("body_parent_f") or not sm.closures.count):
        return
    sd.warned.add("preelimination_parent_f")
    warnings.warn("SolverSteel: body_parent_f leaves out the pre-eliminated loop-closure reactions (it is the "
                  "inverse dynamics of the solved accelerations under gravity, body_f and contact forces)", UserWarning,
                  stacklevel=4)
