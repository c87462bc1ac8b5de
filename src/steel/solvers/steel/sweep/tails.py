"""A unit's tail rows in the serial sweep (``sweep/pgs.py``): friction and rolling disks, spin and torsion
intervals, coupled units.

The sweep solves a group's normal rows first, then each unit's tail on the updated normal impulse
(see ``sweep/pgs.py`` for the row kinds); this module holds that second half: the tail walk
(:func:`solve_tail`), the pair and single-row projections, the coupled 3x3 update, and the row
ranges a walk must stay within (:func:`world_ends`).

In the inner loops the sweep reads its world's reserved-row ends from a triple computed once per
sweep instead of dividing the row index by the world's capacity per call, and a tail pair's two
rows (one contact's tangents, so the same sides) are read and applied in one pass over their DOFs
(``rows/dof_loops.py``); neither changes a bit of the iterate. A pair at rest, both impulses +0 and both
velocities exactly on their targets, would apply +0 and keep its impulses at +0: it forms no response and
applies nothing but the drift floor (``_idle`` states the conditions and the one assumption, a finite response).
"""

from __future__ import annotations

import warp as wp

from ....articulation.factor import FactorView
from ..data import ROW_COUPLED, ROW_PATCH, ROW_TORSION, UNBOUNDED, RowBuffers
from .order import is_pair, is_sliding_friction, is_unit
from ..rows.common import add_world_drift
from ..rows.common import apply_impulse as _apply
from ..rows.common import apply_world_impulse as _apply_in
from ..rows.common import block_entry as _block
from ..rows.common import ensure_response as _ensure_response
from ..rows.common import row_velocity as _row_velocity
from ..rows.dof_loops import pair_axpy, pair_dot, zero_step_is_idle
from ..contacts.friction_modes import coupled_contact_impulse
from ..contacts.patches import group_patch_load, patch_bound
from ..contacts.torsion import torsion_bound


@wp.func(inline=True)
def world_ends(rows: RowBuffers, world: int, base: int):
    """``(start of the free-body family, end of the articulated rows, end of the free-body rows)`` of a world.

    What ``rows.common.reserved_end`` returns, computed once per sweep: that function finds the world
    by an integer division, which in the sweep's inner loops cost more than the comparison it guards.
    """
    split = base + rows.articulation_capacity
    return wp.vec3i(split, base + wp.min(rows.world_row_count[world, 0], rows.articulation_capacity),
                    split + wp.min(rows.world_row_count[world, 1], rows.free_body_capacity))


@wp.func(inline=True)
def unit_end(ends: wp.vec3i, r: int):
    """One past the last row reserved in row ``r``'s family (``ends`` from :func:`world_ends`)."""
    if r < ends[0]:
        return ends[1]
    return ends[2]


@wp.func(inline=True)
def is_coupled(rows: RowBuffers, ends: wp.vec3i, r: int):
    """Unit row ``r`` is solved together with the tangent pair that follows it (a coupled ``friction_mode``)."""
    return r + 1 < unit_end(ends, r) and rows.kind[r + 1] == ROW_COUPLED


@wp.func(inline=True)
def unit_last(rows: RowBuffers, ends: wp.vec3i, r: int):
    """Last row of the unit that starts at ``r``: the end of its tail."""
    end = unit_end(ends, r)
    last = r
    while last + 1 < end and not is_unit(rows, last + 1):
        last += 1
    return last


@wp.func(inline=True)
def _pair_velocity(rows: RowBuffers, f: int, joint_qd: wp.array[float]):
    """``J qd`` of rows ``f`` and ``f + 1`` [m/s or rad/s], a tail pair: one pass over the DOFs they share.

    A pair's rows are one contact's, so they share their sides; each sum is formed as ``row_velocity``
    forms it (side by side), so the result is bitwise the same as two calls.
    """
    return pair_dot(rows.J, rows.dof_start, rows.dof_count, f, rows.stride, joint_qd)


@wp.func(inline=True)
def _apply_pair(rows: RowBuffers, world: int, f: int, impulse1: float, impulse2: float, joint_qd: wp.array[float]):
    """``qd += Y_f impulse1`` then ``qd += Y_(f+1) impulse2`` in one pass over the pair's shared DOFs (each
    DOF takes the two products in that order, bitwise what two ``apply_impulse`` calls give)."""
    pair_axpy(rows.Y, rows.dof_start, rows.dof_count, f, rows.stride, impulse1, impulse2, joint_qd)
    # Two roundings per DOF, each within its own product of the exact sum: the changes add.
    add_world_drift(rows, world, wp.abs(impulse1) * rows.y_max[f] + wp.abs(impulse2) * rows.y_max[f + 1])


@wp.func(inline=True)
def _idle(rows: RowBuffers, f: int, bound: float, relaxation: float, g: float, v: wp.vec2, old1: float, old2: float,
          joint_qd: wp.array[float]):
    """Tail pair ``f`` at rest: both impulses +0 and both velocities on their targets, so :func:`_solve_disk` would
    find the impulses +0 again and apply +0, bit for bit what skipping it leaves (most friction anchors of a
    resting stack whose boxes do not move sideways: their tangential velocities are exactly 0).

    The step is ``old + w (t - v) / d`` with ``t - v`` +0, ``w > 0`` finite, so ``w (t - v)`` is
    +0 and, with any finite ``1 / d``, ``old + (+-0)`` is +0 for ``old`` +0; ``/ (1 + g)`` keeps +0 for ``g >= 0``; the
    disk does not scale a zero pair for ``bound >= 0``; the apply adds ``y_k * 0 = +-0`` to each velocity, which
    changes no bits unless the velocity is -0 (``zero_step_is_idle`` tests that); its drift change is
    ``0 * y_max = 0``. What it assumes: a formed response would be finite, as the factor's clamped pivots keep it
    (``articulation/factor.py``). The impulses stay +0 and the response is not formed (it is formed later if
    the pair moves: it depends only on ``J`` and the factor, not on when it is formed).
    """
    # t - v == 0 holds only for finite t == v (inf - inf is NaN), and then t - v is +0. Nested tests: Warp evaluates
    # every operand of an ``and``, and the DOF scan is the one that costs (a moving pair fails at the first test).
    idle = False
    if rows.target[f] - v[0] == 0.0 and rows.target[f + 1] - v[1] == 0.0:
        if relaxation > 0.0 and relaxation < UNBOUNDED and g >= 0.0 and bound >= 0.0:
            idle = zero_step_is_idle(rows.dof_start, rows.dof_count, f, old1, old2, joint_qd) != 0
    return idle


@wp.func(inline=True)
def _solve_disk(
    rows: RowBuffers,
    world: int,
    f: int,
    bound: float,
    relaxation: float,
    cfm: float,
    factor: FactorView,
    joint_qd: wp.array[float],
):
    """Tail pair ``f``, ``f + 1`` on the disk ``|lambda| <= bound`` (``mu lambda_r``, or a patch share).

    Sliding friction (two tangents) and rolling friction (angular velocity about two tangents): both
    rows are updated from the same velocities (a Jacobi step within the pair) and projected together,
    which keeps the pair isotropic (maximum dissipation on the disk). A pair with a regularization ``g``
    (row ``f``'s; both rows carry the same) takes the regularized step before the projection.
    """
    rows.bound[f] = bound
    if bound == 0.0 and rows.impulse[f] == 0.0 and rows.impulse[f + 1] == 0.0:
        return
    v = _pair_velocity(rows, f, joint_qd)
    v1 = v[0]
    v2 = v[1]
    old1 = rows.impulse[f]
    old2 = rows.impulse[f + 1]
    g = rows.regularization[f]
    if _idle(rows, f, bound, relaxation, g, v, old1, old2, joint_qd):
        # Its step would be +0 for both rows (see _idle): only the apply's drift floor is left of it, and no response.
        add_world_drift(rows, world, 0.0)
        return
    _ensure_response(rows, f, cfm, factor)
    _ensure_response(rows, f + 1, cfm, factor)
    new1 = old1 + relaxation * (rows.target[f] - v1) * rows.inv_mass[f]
    new2 = old2 + relaxation * (rows.target[f + 1] - v2) * rows.inv_mass[f + 1]
    if g != 0.0:
        # A settled friction anchor's regularized step (contacts/rows.py, ANCHOR_REGULARIZATION), as sweep/pgs.py's
        # unit rows take it: the exact step of 1/2 l^T (A + g D) l - b^T l, then the disk.
        new1 = new1 / (1.0 + g)
        new2 = new2 / (1.0 + g)
    mag = wp.sqrt(new1 * new1 + new2 * new2)
    if mag > bound:
        scale = bound / mag
        new1 *= scale
        new2 *= scale
    _apply_pair(rows, world, f, new1 - old1, new2 - old2, joint_qd)
    rows.impulse[f] = new1
    rows.impulse[f + 1] = new2


@wp.func(inline=True)
def _solve_interval(
    rows: RowBuffers,
    world: int,
    f: int,
    bound: float,
    relaxation: float,
    cfm: float,
    factor: FactorView,
    joint_qd: wp.array[float],
):
    """Single tail row ``f`` on ``|lambda| <= bound``: ``mu lambda_r`` (condim 4's spin row) or a torsion budget."""
    rows.bound[f] = bound
    if bound == 0.0 and rows.impulse[f] == 0.0:
        return
    _ensure_response(rows, f, cfm, factor)
    old = rows.impulse[f]
    new = old + relaxation * (rows.target[f] - _row_velocity(rows, f, joint_qd)) * rows.inv_mass[f]
    new = wp.clamp(new, -bound, bound)
    _apply_in(rows, world, f, new - old, joint_qd)
    rows.impulse[f] = new


@wp.func(inline=True)
def _solve_coupled(
    rows: RowBuffers,
    r: int,
    f: int,
    friction_mode: int,
    cfm: float,
    factor: FactorView,
    joint_qd: wp.array[float],
):
    """Unit row ``r`` and its tail pair ``f``, ``f + 1`` replaced by their coupled solution (unrelaxed).

    The sweep assembles the 3x3 block and the rows' velocities; the update itself is the row family's
    (``contacts/friction_modes.py``).
    """
    _ensure_response(rows, r, cfm, factor)
    _ensure_response(rows, f, cfm, factor)
    _ensure_response(rows, f + 1, cfm, factor)
    ids = wp.vec3i(r, f, f + 1)
    w = wp.mat33()
    c = wp.vec3()
    old = wp.vec3()
    for a in range(3):
        c[a] = _row_velocity(rows, ids[a], joint_qd) - rows.target[ids[a]]
        old[a] = rows.impulse[ids[a]]
        for b in range(a, 3):
            e = _block(rows, ids[a], ids[b])
            w[a, b] = e
            w[b, a] = e
    free_body = int(r % rows.world_row_capacity >= rows.articulation_capacity)
    new = coupled_contact_impulse(friction_mode, free_body, w, c, old, rows.mu[f])
    for a in range(3):
        _apply(rows, ids[a], new[a] - old[a], joint_qd)
        rows.impulse[ids[a]] = new[a]
    rows.bound[f] = rows.mu[f] * new[0]


@wp.func(inline=True)
def solve_tail(
    rows: RowBuffers,
    ends: wp.vec3i,
    world: int,
    r: int,
    base: int,
    first: int,
    last: int,
    loaded: int,
    group_load: wp.vec2,
    late: int,
    friction: int,
    friction_mode: int,
    relaxation: float,
    cfm: float,
    factor: FactorView,
    joint_qd: wp.array[float],
):
    """The tail of unit ``r`` in order (friction pair, spin row, rolling pair), on the updated ``lambda_r``;
    with ``late`` only its torsion row, which the group solves after every other tail.

    A patch anchor's pair (``ROW_PATCH``) is bounded by its share of the region's load, summed over
    the group ``first``..``last`` of ``rows.order`` (``contacts/patches.py``); a torsion row by what the
    region's normal and sliding rows leave of its budget (``contacts/torsion.py``). ``loaded`` 0: no normal row
    of the group carries an impulse, so every patch share is 0 without summing it (the sum of zeros
    ``patch_bound`` would form is +0 too, so the bound is bitwise the same). ``group_load``: the group's
    :func:`~.rows.patches.group_patch_load` when loaded, whose share replaces ``patch_bound``'s sum when its
    members share one normal (anchors >= 0).
    """
    end = unit_end(ends, r)
    f = r + 1
    while f < end and not is_unit(rows, f):
        if int(rows.kind[f] == ROW_TORSION) != late:
            f += 1  # not this pass's (torsion rows come last; in a late pass only they are solved)
            if is_pair(rows, f - 1):
                f += 1
        elif is_pair(rows, f) and friction == 0 and is_sliding_friction(rows, f):
            f += 2  # held at zero (contact_friction_position_iterations)
        elif rows.kind[f] == ROW_COUPLED:
            _solve_coupled(rows, r, f, friction_mode, cfm, factor, joint_qd)
            f += 2
        elif is_pair(rows, f):
            bound = rows.mu[f] * rows.impulse[r]
            if rows.kind[f] == ROW_PATCH:
                bound = 0.0
                if loaded != 0:
                    if group_load[1] >= 0.0:
                        bound = rows.mu[f] * group_load[0] / float(wp.max(int(group_load[1]), 1))
                    else:
                        bound = patch_bound(rows, r, f, first, last, base, end)
            _solve_disk(rows, world, f, bound, relaxation, cfm, factor, joint_qd)
            f += 2
        else:
            bound = rows.mu[f] * rows.impulse[r]
            if late != 0:
                bound = torsion_bound(rows, f, first, last, base)
            _solve_interval(rows, world, f, bound, relaxation, cfm, factor, joint_qd)
            f += 1
