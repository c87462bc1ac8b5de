"""The projected Gauss-Seidel impulse sweep, serial per world (``solve_mode="serial"``).

One thread per world walks the world's rows top down by height, alternating the direction each
iteration, ``iterations`` times, and applies each row's impulse change to the joint velocities at
once (Catto, "Iterative Dynamics with Temporal Coherence", GDC 2005; matrix-free: ``J qd`` is
recomputed from the current velocities each time, only ``Y`` and the diagonal ``J Y`` are stored).
The sweep does not know which family a row came from; it distinguishes only

* unilateral rows (contact normals, limits): ``lambda <- max(lambda + w (target - J qd) / (J Y + cfm), 0)``;
  velocity-limit rows (``ROW_SPEED_LIMIT``) take ``max(..., lambda)`` instead: their impulse only grows;
* boxed rows (joint friction, drive rows): the same step clamped to ``|lambda| <= mu`` instead; a drive
  row is soft (its spring-damper as ``compliance``) and, in velocity sweeps under
  ``velocity_drive_mode="freeze"``, keeps its impulse (``ROW_FROZEN``);
* fused velocity limits (``ROW_CLAMP``): no accumulated impulse; after each pass the impulse that puts the
  DOF's velocity on its bound is applied through the articulation's mass matrix;
* tail rows, which follow their unit's row and are bounded by its impulse: pairs (sliding
  friction, rolling friction) are updated from the same velocities (a Jacobi step within the
  pair) and projected onto the disk ``|lambda_t| <= mu lambda_n``, which keeps them isotropic
  (maximum dissipation on the disk); single rows (spin) are clamped to ``|lambda| <= mu lambda_n``;
* torsion rows (``ROW_TORSION``) follow their unit too but are solved after the whole group's
  tails, on the budget their row family computes from the group (``rows/torsion.py``);
* preloads: a row's ``preload`` impulse is applied once with the warm start and never projected;
* coupled units: a unit row followed by a ``ROW_COUPLED`` pair (a ``friction_mode`` other than
  "fixed_normal") skips the group's normal step; in its tail the sweep assembles the contact's 3x3
  block ``J Y`` and velocities and replaces the three impulses by the row family's coupled solution
  (``rows/friction_modes.py``), unrelaxed;
* soft rows: a unit row's step is regularized by ``g``, its ``contact_regularization`` plus, for a
  compliant contact, its softness ``s`` times ``1 / (J Y + cfm)`` (``rows/compliance.py``);
* contact groups: the normal rows of all contacts of one body pair (the four corners of a box
  face) take their projected steps ``delta`` from the same velocities (Jacobi within the group),
  scaled by the exact line search ``alpha = min(1, delta . (target - J qd) / delta^T A delta)``
  (``A = J Y``; ``delta^T A delta`` is read off the velocity change the step makes). The group
  result does not depend on the order of its contacts.

Why groups. Gauss-Seidel over the corners of a face is order-biased: the first corner alone
stops its own point, which for a cube (corner effective mass ``m / 4``) also spins the box about
a horizontal axis, and the later corners only undo that spin as the iterations go. In a stack
that lands, 12 iterations do not finish undoing it: each box keeps a tilt velocity proportional
to the impact, tilts (up to 1.3 degrees measured when the four towers land) and drags the boxes
above it sideways, and friction anchors then keep the offset. Measured on the four-tower scene at
dt = 1/240 s: 5.4 mm of drift over 10 s with the per-corner sweep (after 3 s: 4.8, 1.2, 1.0,
0.14 mm at 12, 24, 50, 100 iterations), none with groups; with the boxes randomly offset by up to
0.5 mm and turned by up to 0.3 degrees, 4.2-8.9 mm per-corner and 0.2-0.7 mm grouped (3 s).
A plain Jacobi step would not do: for a box taller than wide the corners' ``A`` has its uniform
mode at up to four times the diagonal and unscaled Jacobi diverges; the line search makes every
group step a descent step of the group's quadratic (and is exact for the uniform mode of a
symmetric face). Rejected: more
iterations (the fix is the order, not the count; the reference default of 12 stays), a 4x4
block LCP (the corners of a face make ``A`` singular, rank 3, so the block solve is ill posed).

``w`` is ``relaxation``. Rows of worlds are disjoint in DOFs, so worlds never race.

Order. Each world's units are sorted once per sweep by a stable bottom-up merge sort, O(n log n) in
the world's units: a world is one thread's work, and the insertion sort this replaced cost O(n^2),
most of the sweep of a 465-box pyramid (8,600 units). Measured on the same rows, old and new sweep
interleaved in one process: 10/20/30-level pyramids 2.35/22.0/75.4 ms before, 1.57/6.20/23.7 ms
after (exponent against rows 1.53 -> 1.17; the growth left is not the order's: the 30-level
pyramid's rows, ~180 bytes each that a pass reads, no longer fit the 1 MB L2 cache). In the inner
loops the sweep reads its world's reserved-row ends from a triple computed once per sweep instead of
dividing the row index by the world's capacity per call, and a tail pair's two rows (one contact's
tangents, so the same sides) are read and applied in one pass over their DOFs; neither changes a bit
of the iterate. Applies take the world from the sweep (``apply_world_impulse``) instead of dividing the row
index for it, and ``_normal_step`` has a single return: with the gate's early return the C++ compiler kept
its result in memory, and a perf profile of the tower put 4 % of the kernel's samples on the stalled load
that read it back. Both leave the float operations as they were (joint_q/joint_qd after 300 steps bitwise
equal on tower x1/x16, humanoid x16, ant x64, chain x64); ``_sweep`` tower x16 1.58 -> 1.51 ms (launch
replayed 30 times on 5 saved steps, median over 4 interleaved runs of the mean of per-step minima; the
runs' best per step 1.49 -> 1.47), humanoid x16 0.76 -> 0.76. Rejected: 6-DOF DOF loops unrolled (chunks
of a compile-time 6, then the rest, same order): within noise (1.55/1.54 -> 1.58/1.50 ms). The 6-DOF sums
are not what the tower's sweep waits on: they are a fifth of its samples, each term two indexed loads
whose index wrap and stride multiply stay, and the rest is row bookkeeping spread thin.

Responses are formed lazily: a row's ``Y = H^-1 J^T`` (a tree-sparse solve) is computed the first
time the row must apply an impulse. A speculative contact that stays open, or a friction pair whose
normal carries no load, costs only its ``J qd`` (measured on nv_humanoid lying down: 11 % of the
normal rows ever activate).

Gate. A unit row that cannot act costs a test instead of its ``J qd`` (2 sides of up to ``stride``
products). Each world keeps ``world_drift``, an upper bound on how far any of its joint velocities moved
since the sweep began: every apply adds ``2 |impulse| max_k |Y_k|`` (``add_drift``: a float add moves a
value by at most twice its addend, however it rounds), widened by ``2^-21`` so the float sum stays above
the exact one. When a unilateral row (contact, limit, velocity limit) over more than one DOF forms ``J qd``
in full it keeps ``v - 2 e sum_k |J_k qd_k|``, ``(1 + 2 e) sum_k |J_k|`` and the drift at that moment
(``rows.gate``; ``e``, ``gate_rounding``, is four times float32's bound on the rounding of such a sum). A
later visit of the row while its impulse is 0 first tests ``lower - norm (drift_now - drift_ref) > target``:
if it holds, the full sum would have come out above the target as well, the row would take no step, and
it is skipped (the zeros it returns add nothing to its group's line search). Its decisions are those of
the full computation, so the iterate is bitwise the same: joint_q and joint_qd after 300 steps of chain
x64, humanoid x16, tower x16 and ant x64 equal the ungated sweep's. The references are dropped at the start
of each step's sweep (rows are rebuilt every step) and stay valid into the velocity sweeps, whose new
targets the test reads. A group whose normal rows all carry no impulse also skips summing its patch
anchors' shares (``patch_bound``), which are then 0. Every apply also moves the drift by at least
``1e-30``, so a pass that leaves it where it was applied nothing: the velocities and impulses are as it
found them, and the passes after it in the same friction phase would repeat it exactly, so an
interleaved sweep skips them (``_run_passes``); a world whose rows all stay open runs one pass.
Measured, ``_sweep`` per step without -> with both (the launch replayed 20 times on each of 5 saved
steps, mean of the minima, two interleaved runs each): chain x64 2.1 -> 0.29-0.39 ms (48 speculative
link pairs per world, none acting: gated after the first pass, which applies nothing), humanoid x16
lying down 1.06 -> 0.82 ms (4 of 27 normal rows act; rows within ~1 m/s of their target are
re-evaluated as the drift grows), tower x16 1.47 -> 1.41-1.47 ms (its rows act), ant x64 0.45 ->
0.13-0.16 ms. The gate alone took chain x64 to 0.95 ms; the skipped passes, 0.95 -> 0.29.

Velocity sweeps (``velocity_iterations``, :func:`velocity_sweep`). After the position solve the
step keeps its velocity for the positions, then runs ``velocity_iterations`` more passes from the
same impulses with every row's ``velocity_target`` instead of its ``target``: penetrating
contacts and crossed limits ask for 0 instead of ``baumgarte * depth / dt``, friction rows for 0
(no anchor correction), an impact keeps its rebound, and a positive gap keeps its allowance
``-scale * phi / dt`` only while its linearized end-of-step gap stays open under the position-solve
velocity (``J qd > gap_speed``, tested once before the passes), else it is arrested (0). The pass
direction keeps alternating from where the position solve stopped. Its output is the published
velocity; the impulses it ends with are the step's contact forces.
"""

from __future__ import annotations

import warp as wp

from .data import (ROW_CLAMP, ROW_CONTACT, ROW_COUPLED, ROW_DRIVE, ROW_FRICTION, ROW_FROZEN, ROW_LIMIT, ROW_PATCH,
                   ROW_ROLLING, ROW_SPEED_LIMIT, ROW_SPIN, ROW_TORSION, RowBuffers)
from .rows.common import DRIFT_WIDENING, add_world_drift, dof_row_dof, row_velocity_bounds
from .rows.common import apply_impulse as _apply
from .rows.common import apply_world_impulse as _apply_in
from .rows.common import block_entry as _block
from .rows.common import ensure_response as _ensure_response
from .rows.common import is_boxed, side_offset
from .rows.common import row_velocity as _row_velocity
from .rows.friction_modes import MODE_INDEX, coupled_contact_impulse
from .rows.patches import patch_bound
from .rows.preelimination import preeliminate
from .rows.torsion import torsion_bound
from ...launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.func(inline=True)
def _sorts_before(rows: RowBuffers, a: int, b: int):
    """Unit ``a`` goes before unit ``b``: larger key first, ties by body pair (a pair's rows stay adjacent)."""
    if rows.key[a] != rows.key[b]:
        return rows.key[a] > rows.key[b]
    if rows.body[a, 1] != rows.body[b, 1]:
        return rows.body[a, 1] < rows.body[b, 1]
    return rows.body[a, 0] < rows.body[b, 0]


@wp.func(inline=True)
def _same_group(rows: RowBuffers, a: int, b: int):
    """Units ``a`` and ``b`` are contact normals of the same body pair (limit rows carry -1, -1)."""
    return (rows.body[a, 0] == rows.body[b, 0] and rows.body[a, 1] == rows.body[b, 1]
            and (rows.body[a, 0] >= 0 or rows.body[a, 1] >= 0))


@wp.func(inline=True)
def _pair_velocity(rows: RowBuffers, f: int, joint_qd: wp.array[float]):
    """``J qd`` of rows ``f`` and ``f + 1`` [m/s or rad/s], a tail pair: one pass over the DOFs they share.

    A pair's rows are one contact's, so they share their sides; each sum is formed as ``row_velocity``
    forms it (side by side), so the result is bitwise the same as two calls.
    """
    v = wp.vec2(0.0)
    for s in range(2):
        n = rows.dof_count[f, s]
        if n > 0:
            o1 = side_offset(rows, f, s)
            o2 = side_offset(rows, f + 1, s)
            d0 = rows.dof_start[f, s]
            v1 = float(0.0)
            v2 = float(0.0)
            for k in range(n):
                q = joint_qd[d0 + k]
                v1 += rows.J[o1 + k] * q
                v2 += rows.J[o2 + k] * q
            v[0] += v1
            v[1] += v2
    return v


@wp.func(inline=True)
def _apply_pair(rows: RowBuffers, world: int, f: int, impulse1: float, impulse2: float, joint_qd: wp.array[float]):
    """``qd += Y_f impulse1`` then ``qd += Y_(f+1) impulse2`` in one pass over the pair's shared DOFs (each
    DOF takes the two products in that order, bitwise what two ``apply_impulse`` calls give)."""
    for s in range(2):
        o1 = side_offset(rows, f, s)
        o2 = side_offset(rows, f + 1, s)
        d0 = rows.dof_start[f, s]
        for k in range(rows.dof_count[f, s]):
            joint_qd[d0 + k] = joint_qd[d0 + k] + rows.Y[o1 + k] * impulse1 + rows.Y[o2 + k] * impulse2
    # Two roundings per DOF, each within its own product of the exact sum: the changes add.
    add_world_drift(rows, world, wp.abs(impulse1) * rows.y_max[f] + wp.abs(impulse2) * rows.y_max[f + 1])


@wp.func(inline=True)
def _solve_disk(
    rows: RowBuffers,
    world: int,
    f: int,
    bound: float,
    relaxation: float,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    joint_qd: wp.array[float],
):
    """Tail pair ``f``, ``f + 1`` on the disk ``|lambda| <= bound`` (``mu lambda_r``, or a patch share).

    Sliding friction (two tangents) and rolling friction (angular velocity about two tangents): both
    rows are updated from the same velocities (a Jacobi step within the pair) and projected together,
    which keeps the pair isotropic (maximum dissipation on the disk).
    """
    rows.bound[f] = bound
    if bound == 0.0 and rows.impulse[f] == 0.0 and rows.impulse[f + 1] == 0.0:
        return
    _ensure_response(rows, f, cfm, use_tree, dof_parent, mass_factor)
    _ensure_response(rows, f + 1, cfm, use_tree, dof_parent, mass_factor)
    v = _pair_velocity(rows, f, joint_qd)
    v1 = v[0]
    v2 = v[1]
    old1 = rows.impulse[f]
    old2 = rows.impulse[f + 1]
    new1 = old1 + relaxation * (rows.target[f] - v1) * rows.inv_mass[f]
    new2 = old2 + relaxation * (rows.target[f + 1] - v2) * rows.inv_mass[f + 1]
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
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    joint_qd: wp.array[float],
):
    """Single tail row ``f`` on ``|lambda| <= bound``: ``mu lambda_r`` (condim 4's spin row) or a torsion budget."""
    rows.bound[f] = bound
    if bound == 0.0 and rows.impulse[f] == 0.0:
        return
    _ensure_response(rows, f, cfm, use_tree, dof_parent, mass_factor)
    old = rows.impulse[f]
    new = old + relaxation * (rows.target[f] - _row_velocity(rows, f, joint_qd)) * rows.inv_mass[f]
    new = wp.clamp(new, -bound, bound)
    _apply_in(rows, world, f, new - old, joint_qd)
    rows.impulse[f] = new


@wp.func(inline=True)
def _is_pair(rows: RowBuffers, r: int):
    """Row ``r`` starts a tail pair (solved on a disk, or coupled with its unit row)."""
    k = rows.kind[r]
    return k == ROW_FRICTION or k == ROW_ROLLING or k == ROW_PATCH or k == ROW_COUPLED


@wp.func(inline=True)
def _is_sliding_friction(rows: RowBuffers, r: int):
    """Row ``r`` starts a sliding-friction pair (point, patch or coupled), which contact_friction_position_iterations
    gates."""
    return rows.kind[r] == ROW_FRICTION or rows.kind[r] == ROW_PATCH or rows.kind[r] == ROW_COUPLED


@wp.func(inline=True)
def _world_ends(rows: RowBuffers, world: int, base: int):
    """``(start of the free-body family, end of the articulated rows, end of the free-body rows)`` of a world.

    What ``rows.common.reserved_end`` returns, computed once per sweep: that function finds the world
    by an integer division, which in the sweep's inner loops cost more than the comparison it guards.
    """
    split = base + rows.articulation_capacity
    return wp.vec3i(split, base + wp.min(rows.world_row_count[world, 0], rows.articulation_capacity),
                    split + wp.min(rows.world_row_count[world, 1], rows.free_body_capacity))


@wp.func(inline=True)
def _end(ends: wp.vec3i, r: int):
    """One past the last row reserved in row ``r``'s family (``ends`` from :func:`_world_ends`)."""
    if r < ends[0]:
        return ends[1]
    return ends[2]


@wp.func(inline=True)
def _is_coupled(rows: RowBuffers, ends: wp.vec3i, r: int):
    """Unit row ``r`` is solved together with the tangent pair that follows it (a coupled ``friction_mode``)."""
    return r + 1 < _end(ends, r) and rows.kind[r + 1] == ROW_COUPLED


@wp.func(inline=True)
def _solve_coupled(
    rows: RowBuffers,
    r: int,
    f: int,
    friction_mode: int,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    joint_qd: wp.array[float],
):
    """Unit row ``r`` and its tail pair ``f``, ``f + 1`` replaced by their coupled solution (unrelaxed).

    The sweep assembles the 3x3 block and the rows' velocities; the update itself is the row family's
    (``rows/friction_modes.py``).
    """
    _ensure_response(rows, r, cfm, use_tree, dof_parent, mass_factor)
    _ensure_response(rows, f, cfm, use_tree, dof_parent, mass_factor)
    _ensure_response(rows, f + 1, cfm, use_tree, dof_parent, mass_factor)
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
def _is_unit(rows: RowBuffers, r: int):
    """Row ``r`` starts a unit: a normal or limit row (tail rows follow their unit row)."""
    return not _is_pair(rows, r) and rows.kind[r] != ROW_SPIN and rows.kind[r] != ROW_TORSION


@wp.func(inline=True)
def _unit_last(rows: RowBuffers, ends: wp.vec3i, r: int):
    """Last row of the unit that starts at ``r``: the end of its tail."""
    end = _end(ends, r)
    last = r
    while last + 1 < end and not _is_unit(rows, last + 1):
        last += 1
    return last


@wp.func(inline=True)
def _solve_tail(
    rows: RowBuffers,
    ends: wp.vec3i,
    world: int,
    r: int,
    base: int,
    first: int,
    last: int,
    loaded: int,
    late: int,
    friction: int,
    friction_mode: int,
    relaxation: float,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    joint_qd: wp.array[float],
):
    """The tail of unit ``r`` in order (friction pair, spin row, rolling pair), on the updated ``lambda_r``;
    with ``late`` only its torsion row, which the group solves after every other tail.

    A patch anchor's pair (``ROW_PATCH``) is bounded by its share of the region's load, summed over
    the group ``first``..``last`` of ``rows.order`` (``rows/patches.py``); a torsion row by what the
    region's normal and sliding rows leave of its budget (``rows/torsion.py``). ``loaded`` 0: no normal row
    of the group carries an impulse, so every patch share is 0 without summing it (the sum of zeros
    ``patch_bound`` would form is +0 too, so the bound is bitwise the same).
    """
    end = _end(ends, r)
    f = r + 1
    while f < end and not _is_unit(rows, f):
        if int(rows.kind[f] == ROW_TORSION) != late:
            f += 1  # not this pass's (torsion rows come last; in a late pass only they are solved)
            if _is_pair(rows, f - 1):
                f += 1
        elif _is_pair(rows, f) and friction == 0 and _is_sliding_friction(rows, f):
            f += 2  # held at zero (contact_friction_position_iterations)
        elif rows.kind[f] == ROW_COUPLED:
            _solve_coupled(rows, r, f, friction_mode, cfm, use_tree, dof_parent, mass_factor, joint_qd)
            f += 2
        elif _is_pair(rows, f):
            bound = rows.mu[f] * rows.impulse[r]
            if rows.kind[f] == ROW_PATCH:
                bound = 0.0
                if loaded != 0:
                    bound = patch_bound(rows, r, f, first, last, base, end)
            _solve_disk(rows, world, f, bound, relaxation, cfm, use_tree, dof_parent, mass_factor, joint_qd)
            f += 2
        else:
            bound = rows.mu[f] * rows.impulse[r]
            if late != 0:
                bound = torsion_bound(rows, f, first, last, base)
            _solve_interval(rows, world, f, bound, relaxation, cfm, use_tree, dof_parent, mass_factor, joint_qd)
            f += 1


@wp.func(inline=True)
def _softness(rows: RowBuffers, r: int):
    """``g`` of unit row ``r``'s regularized step: ``contact_regularization``, plus a compliant contact's
    softness ``s`` over its diagonal ``d = 1 / inv_mass`` (``rows/compliance.py``); 0: rigid."""
    return rows.regularization[r] + rows.compliance[r] * rows.inv_mass[r]


@wp.func(inline=True)
def _gated(rows: RowBuffers, r: int):
    """Unit row ``r`` keeps a gate reference: a unilateral row (contact, limit, velocity limit) over more than
    one DOF (a one-DOF row's ``J qd`` costs no more than the gate)."""
    k = rows.kind[r]
    return (k == ROW_CONTACT or k == ROW_LIMIT or k == ROW_SPEED_LIMIT) and dof_row_dof(rows, r) < 0


@wp.func(inline=True)
def _stays_open(rows: RowBuffers, r: int, world: int):
    """Gated row ``r`` provably has ``J qd > target`` now, as the full sum would round it (see "Gate")."""
    ref = rows.gate[r]
    if ref[2] < 0.0:
        return False  # no full J qd yet this sweep
    moved = (rows.world_drift[world] - ref[2]) * DRIFT_WIDENING
    return ref[0] - ref[1] * moved > rows.target[r]


@wp.func(inline=True)
def _reset_gate(rows: RowBuffers, world: int, base: int, unit_count: int):
    """Forget the gate references of the world's units (rows are rebuilt every step) and restart its drift."""
    rows.world_drift[world] = 0.0
    for u in range(unit_count):
        rows.gate[rows.order[base + u]] = wp.vec3(0.0, 0.0, -1.0)


@wp.func(inline=True)
def _normal_step(
    rows: RowBuffers,
    world: int,
    r: int,
    relaxation: float,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    joint_qd: wp.array[float],
):
    """Projected step of unilateral row ``r`` from the current velocities: ``(delta, residual, J qd)``.

    A row with ``contact_regularization`` ``g`` takes the rigid update scaled by ``1 / (1 + g)``, which
    is the exact projected step of the regularized quadratic ``1/2 l^T (A + g D) l - b^T l`` (``D`` the
    diagonal of ``A``, ``d = 1 / inv_mass``): ``(l + (b - A l) / d) / (1 + g)``; its residual is that
    quadratic's, ``b - A l - g d l``. At rest (``A l = J qd = 0``) a row settles where its target
    ``-baumgarte phi / dt`` equals ``g d l``: the normal forces of an indeterminate support are then
    unique, in proportion to ``1 / d`` where the rows' depths agree.
    """
    old = rows.impulse[r]
    v = float(0.0)
    stays_open = False  # then no step: the zeros returned add nothing to the group's line search either
    if _gated(rows, r):
        if old == 0.0:
            stays_open = _stays_open(rows, r, world)
        if not stays_open:
            bounds = row_velocity_bounds(rows, r, joint_qd)
            v = bounds[0]
            rounding = rows.gate_rounding
            rows.gate[r] = wp.vec3(v - 2.0 * rounding * bounds[1], (1.0 + 2.0 * rounding) * bounds[2],
                                   rows.world_drift[world])
    else:
        v = _row_velocity(rows, r, joint_qd)
    delta = float(0.0)
    residual = float(0.0)
    if not stays_open:
        residual = rows.target[r] - v
    boxed = is_boxed(rows.kind[r])
    # An untouched row that is satisfied needs no response: most speculative rows never do.
    inert = rows.kind[r] == ROW_FROZEN or rows.kind[r] == ROW_CLAMP  # hold their impulse / act after the pass
    if (old != 0.0 or v < rows.target[r] or (boxed and v > rows.target[r])) and not inert and not stays_open:
        _ensure_response(rows, r, cfm, use_tree, dof_parent, mass_factor)
        g = _softness(rows, r)
        new = old + relaxation * (rows.target[r] - v) * rows.inv_mass[r]
        if boxed:
            new = wp.clamp(new / (1.0 + g), -rows.mu[r], rows.mu[r])  # a two-sided bound (rows/joint_friction.py)
        elif rows.kind[r] == ROW_SPEED_LIMIT:
            new = wp.max(new, old)  # pushes only, never hands an impulse back (rows/velocity_limits.py)
            residual = wp.max(residual, 0.0)
        else:
            new = wp.max(new, 0.0) / (1.0 + g)
        delta = new - old
        residual -= g * old / rows.inv_mass[r]
    # One return: with an early one the C++ compiler kept the result in memory, and the group's line search
    # waited on a store-forwarding stall at every row.
    return wp.vec3(delta, residual, v)


@wp.func(inline=True)
def _merge_runs(rows: RowBuffers, src: wp.array[wp.int32], dst: wp.array[wp.int32], base: int, n: int, width: int):
    """One merge-sort pass: the sorted runs of ``width`` units in ``src[base:base + n]``, merged pairwise into
    ``dst``."""
    lo = int(0)
    while lo < n:
        mid = wp.min(lo + width, n)
        hi = wp.min(lo + 2 * width, n)
        a = lo
        b = mid
        for k in range(lo, hi):
            take_right = b < hi
            if take_right and a < mid:
                # The right run's head goes first only if it sorts strictly before the left's: stable.
                take_right = _sorts_before(rows, src[base + b], src[base + a])
            if take_right:
                dst[base + k] = src[base + b]
                b += 1
            else:
                dst[base + k] = src[base + a]
                a += 1
        lo = hi


@wp.func(inline=True)
def _order_units(rows: RowBuffers, world: int, base: int):
    """Sort the world's row units into ``rows.order``, mark its groups in ``rows.span``; return the unit count."""
    # Order the world's row units (a normal or limit row, with the friction pair that follows it)
    # by descending key, so a stack's weight travels down it within one iteration; a body pair's
    # contacts share a key and end up side by side.
    unit_count = int(0)
    for family in range(2):
        start = base
        count = wp.min(rows.world_row_count[world, 0], rows.articulation_capacity)
        if family == 1:
            start = base + rows.articulation_capacity
            count = wp.min(rows.world_row_count[world, 1], rows.free_body_capacity)
        for i in range(count):
            r = start + i
            if _is_unit(rows, r):
                rows.order[base + unit_count] = r
                unit_count += 1
    # Bottom-up merge sort, stable (ties keep the row order, as the insertion sort it replaces did),
    # O(n log n): a large world is one thread's work (a pyramid of 465 boxes has ~4,000 units).
    # rows.span is the scratch half until the groups are marked below; the runs go back and forth.
    width = int(1)
    in_order = int(1)
    while width < unit_count:
        if in_order != 0:
            _merge_runs(rows, rows.order, rows.span, base, unit_count, width)
        else:
            _merge_runs(rows, rows.span, rows.order, base, unit_count, width)
        in_order = 1 - in_order
        width *= 2
    if in_order == 0:
        for u in range(unit_count):
            rows.order[base + u] = rows.span[base + u]
    # Groups: runs of contacts of one body pair. rows.span holds, at each end of a run, the other end.
    u = int(0)
    while u < unit_count:
        last = u
        while last + 1 < unit_count and _same_group(rows, rows.order[base + u], rows.order[base + last + 1]):
            last += 1
        rows.span[base + u] = last
        rows.span[base + last] = u
        u = last + 1
    return unit_count


@wp.func(inline=True)
def _warm_start(
    rows: RowBuffers,
    ends: wp.vec3i,
    base: int,
    unit_count: int,
    friction: int,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    joint_qd: wp.array[float],
):
    """Apply the impulses the rows start from and their preloads (zero rows are skipped)."""
    for uu in range(unit_count):
        r = rows.order[base + uu]
        k = r
        last = _unit_last(rows, ends, r)
        while k <= last:
            if friction == 0 and _is_sliding_friction(rows, k):
                rows.impulse[k] = 0.0  # held at zero until the friction iterations begin
            start = rows.impulse[k] + rows.preload[k]
            if start != 0.0:
                _ensure_response(rows, k, cfm, use_tree, dof_parent, mass_factor)
                _apply(rows, k, start, joint_qd)
            k += 1


# row_schedule: which units a pass visits (see _iterate) and how passes are arranged (see _run_passes).
SCHEDULE_INDEX = {"interleaved": 0, "contact_then_internal": 1, "phased": 2}
UNITS_ALL = wp.constant(0)
UNITS_CONTACT = wp.constant(1)
UNITS_INTERNAL = wp.constant(2)


@wp.func(inline=True)
def _iterate(
    rows: RowBuffers,
    ends: wp.vec3i,
    base: int,
    unit_count: int,
    it: int,
    units: int,
    friction: int,
    friction_mode: int,
    relaxation: float,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    joint_qd: wp.array[float],
):
    """One Gauss-Seidel pass over the world's groups, forward on even ``it`` and backward on odd.

    ``units`` selects the groups: all, contact groups only, or internal ones only (joint limits: the
    rows with no contact), for ``row_schedule``.
    """
    world = base // rows.world_row_capacity
    # Alternate the direction of the sweep over groups (symmetric Gauss-Seidel).
    done = int(0)
    while done < unit_count:
        at = done
        if it % 2 == 1:
            at = unit_count - 1 - done
        other = rows.span[base + at]
        first = wp.min(at, other)
        last = wp.max(at, other)
        done += last - first + 1
        if units != UNITS_ALL:
            is_internal = int(rows.contact[rows.order[base + first]] < 0)
            if is_internal != int(units == UNITS_INTERNAL):
                continue
        if first == last and rows.contact[rows.order[base + first]] < 0:
            # An internal row (limit, joint friction, drive, velocity limit) is a group of one without a
            # tail: its projected step alone (the line search and the tail pass would be no-ops).
            r = rows.order[base + first]
            step = _normal_step(rows, world, r, relaxation, cfm, use_tree, dof_parent, mass_factor, joint_qd)
            if step[0] != 0.0:
                _apply_in(rows, world, r, step[0], joint_qd)
                rows.impulse[r] = rows.impulse[r] + step[0]
            continue
        # Normal rows of the group: one projected Jacobi step from the same velocities, then
        # an exact line search along it (see the module docstring).
        gain = float(0.0)  # delta . residual
        moved = float(0.0)  # delta . (J qd before)
        any_step = int(0)
        for g in range(first, last + 1):
            r = rows.order[base + g]
            step = wp.vec3(0.0)
            if friction == 0 or not _is_coupled(rows, ends, r):  # a coupled unit is solved with its tail
                step = _normal_step(rows, world, r, relaxation, cfm, use_tree, dof_parent, mass_factor, joint_qd)
            rows.step[r] = step[0]
            gain += step[0] * step[1]
            moved += step[0] * step[2]
            if step[0] != 0.0:
                any_step = 1
        if any_step != 0:
            for g in range(first, last + 1):
                r = rows.order[base + g]
                if rows.step[r] != 0.0:
                    _apply_in(rows, world, r, rows.step[r], joint_qd)
            alpha = float(1.0)
            if last > first:
                curvature = -moved  # delta^T A delta = delta . (J qd after - J qd before)
                for g in range(first, last + 1):
                    r = rows.order[base + g]
                    if rows.step[r] != 0.0:
                        curvature += rows.step[r] * _row_velocity(rows, r, joint_qd)
                        # The regularized quadratic's own curvature (see _normal_step).
                        curvature += _softness(rows, r) * rows.step[r] * rows.step[r] / rows.inv_mass[r]
                if curvature > 0.0 and gain < curvature:
                    alpha = wp.max(gain / curvature, 0.0)
            for g in range(first, last + 1):
                r = rows.order[base + g]
                if rows.step[r] != 0.0:
                    if alpha < 1.0:
                        _apply_in(rows, world, r, (alpha - 1.0) * rows.step[r], joint_qd)
                    rows.impulse[r] = rows.impulse[r] + alpha * rows.step[r]
        # Tails of the group (friction, spin, rolling), bounded by the updated normal rows; then its
        # torsion rows, whose budget is what the normal and sliding rows leave.
        loaded = int(0)
        for g in range(first, last + 1):
            if rows.impulse[rows.order[base + g]] != 0.0:
                loaded = 1
        # One call site for both passes: _solve_tail is inlined.
        for pass_index in range(1 + rows.late_rows):
            for g in range(first, last + 1):
                _solve_tail(rows, ends, world, rows.order[base + g], base, first, last, loaded, pass_index, friction,
                            friction_mode, relaxation, cfm, use_tree, dof_parent, mass_factor, joint_qd)


@wp.func(inline=True)
def _clamp_velocities(
    rows: RowBuffers,
    base: int,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    joint_qd: wp.array[float],
):
    """Fused velocity limits: each ``ROW_CLAMP`` entry's DOF velocity into ``[-mu, mu]`` (rows/velocity_limits.py).

    The clamp is the impulse along the DOF that lands it exactly on the bound, ``(bound - qd_d) / Y_d``
    (``Y = H^-1 e_d``, no cfm), applied through the articulation's mass matrix, so the DOFs coupled to it move
    too (the reference's behaviour, measured); no impulse is accumulated.
    """
    world = base // rows.world_row_capacity
    for i in range(wp.min(rows.world_row_count[world, 0], rows.articulation_capacity)):
        r = base + i
        if rows.kind[r] == ROW_CLAMP:
            d = rows.dof_start[r, 1]
            v = joint_qd[d]
            bound = wp.clamp(v, -rows.mu[r], rows.mu[r])
            if bound != v:
                _ensure_response(rows, r, cfm, use_tree, dof_parent, mass_factor)
                y = rows.Y[side_offset(rows, r, 0) + d - rows.dof_start[r, 0]]
                if y > 0.0:
                    _apply(rows, r, (bound - v) / y, joint_qd)


@wp.func(inline=True)
def _run_passes(
    rows: RowBuffers,
    ends: wp.vec3i,
    base: int,
    unit_count: int,
    it0: int,
    count: int,
    schedule: int,
    friction_start: int,
    friction_mode: int,
    relaxation: float,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    joint_qd: wp.array[float],
):
    """``count`` iterations numbered from ``it0``, arranged by ``row_schedule``.

    "interleaved" (0): every iteration one pass over all groups in sweep order. "contact_then_internal"
    (1): every iteration over the contact groups, then every iteration over the internal rows, which
    thus have the last word. "phased" (2): each iteration the internal rows, then the contacts, which
    have the last word (the order PhysX uses for grasping).

    An interleaved pass that applied nothing (its world's drift did not move; every apply moves it) left
    the velocities and impulses as they were, so the passes after it with the same friction phase would
    repeat it exactly: they are skipped (a world whose rows all stay open runs one pass).
    """
    world = base // rows.world_row_capacity
    quiet_phase = int(-1)  # friction flag of the last pass that applied nothing; -1: none
    # One call site for every schedule: _iterate is inlined, and each call would be compiled again.
    passes = count
    if schedule != 0:
        passes = 2 * count
    for p in range(passes):
        k = p
        units = UNITS_ALL
        if schedule == 1:
            units = UNITS_CONTACT
            if p >= count:
                k = p - count
                units = UNITS_INTERNAL
        elif schedule == 2:
            k = p // 2
            units = UNITS_CONTACT
            if p % 2 == 0:
                units = UNITS_INTERNAL
        friction = int(it0 + k >= friction_start)
        if friction == quiet_phase:
            continue
        drift = rows.world_drift[world]
        _iterate(rows, ends, base, unit_count, it0 + k, units, friction, friction_mode, relaxation, cfm, use_tree,
                 dof_parent, mass_factor, joint_qd)
        if rows.clamp_rows != 0:
            _clamp_velocities(rows, base, cfm, use_tree, dof_parent, mass_factor, joint_qd)
        if schedule == 0 and rows.world_drift[world] == drift and rows.gate_rounding < 1.0:
            quiet_phase = friction



@wp.kernel
def _sweep(
    # Options:
    iterations: int,
    schedule: int,
    friction_start: int,
    friction_mode: int,
    relaxation: float,
    cfm: float,
    # Factor of the core:
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    # enable_bilateral_preelimination in effect, bilateral_preelimination_include_mimics:
    bilateral: int,
    include_mimics: int,
    # Data in/out: the rows (impulses, responses and sweep scratch written), then the velocities.
    rows: RowBuffers,
    joint_qd: wp.array[float],
):
    world = wp.tid()  # one thread per world
    base = world * rows.world_row_capacity
    unit_count = _order_units(rows, world, base)
    _reset_gate(rows, world, base, unit_count)
    ends = _world_ends(rows, world, base)
    # contact_friction_position_iterations: sliding friction is solved from iteration friction_start
    # on, and held at zero (its warm start too) before it.
    _warm_start(rows, ends, base, unit_count, int(friction_start == 0), cfm, use_tree, dof_parent, mass_factor,
                joint_qd)
    if bilateral != 0:
        preeliminate(rows, world, base, include_mimics, cfm, use_tree, dof_parent, mass_factor, joint_qd)
    _run_passes(rows, ends, base, unit_count, 0, iterations, schedule, friction_start, friction_mode, relaxation, cfm,
                use_tree, dof_parent, mass_factor, joint_qd)


@wp.kernel
def _velocity_sweep(
    # Options:
    iterations: int,
    velocity_iterations: int,
    freeze_drives: int,
    schedule: int,
    friction_mode: int,
    relaxation: float,
    cfm: float,
    # Factor of the core:
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    # Data in/out: the rows (targets replaced, impulses refined), then the velocities.
    rows: RowBuffers,
    joint_qd: wp.array[float],
):
    world = wp.tid()  # one thread per world
    base = world * rows.world_row_capacity
    ends = _world_ends(rows, world, base)
    unit_count = int(0)
    if iterations == 0:
        # No position sweep ran: order and warm-start here.
        unit_count = _order_units(rows, world, base)
        _reset_gate(rows, world, base, unit_count)
        _warm_start(rows, ends, base, unit_count, 1, cfm, use_tree, dof_parent, mass_factor, joint_qd)
    # Replace every target by its velocity target. A positive gap whose linearized end-of-step gap
    # closes under the position-solve velocity (J qd <= -phi / dt) is arrested (target 0).
    for family in range(2):
        start = base
        count = wp.min(rows.world_row_count[world, 0], rows.articulation_capacity)
        if family == 1:
            start = base + rows.articulation_capacity
            count = wp.min(rows.world_row_count[world, 1], rows.free_body_capacity)
        for i in range(count):
            r = start + i
            target = rows.velocity_target[r]
            if freeze_drives != 0 and rows.kind[r] == ROW_DRIVE:
                rows.kind[r] = ROW_FROZEN  # velocity_drive_mode="freeze": keeps the position solve's impulse
            if _is_unit(rows, r):
                if iterations != 0:
                    unit_count += 1
                if rows.gap_speed[r] > -1.0e29 and _row_velocity(rows, r, joint_qd) <= rows.gap_speed[r]:
                    target = 0.0
            rows.target[r] = target
            rows.regularization[r] = 0.0  # the velocity sweeps stay rigid
    _run_passes(rows, ends, base, unit_count, iterations, velocity_iterations, schedule, 0, friction_mode, relaxation,
                cfm, use_tree, dof_parent, mass_factor, joint_qd)


def _factor_inputs(solver) -> list:
    """Sweep arguments after the iteration counts: relaxation, cfm and the factor for lazy responses."""
    return [
        float(solver.options.relaxation),
        float(solver.options.cfm),
        int(solver.core.plan.tree_factor_ok),
        solver.core.plan.dof_parent,
        solver.core.data.mass_factor,
    ]


def _friction_start(options) -> int:
    """First position iteration that solves sliding friction: ``contact_friction_position_iterations``
    ``k >= 0`` solves it only in the last ``k`` (``-1``: all)."""
    k = options.contact_friction_position_iterations
    return 0 if k < 0 else max(options.iterations - k, 0)


def sweep(solver, joint_qd: wp.array) -> None:
    """Run ``iterations`` PGS iterations of every world's rows on ``joint_qd`` in place."""
    rows = solver.rows
    if solver.options.iterations == 0 or rows.world_count == 0:
        return
    launch(
        _sweep,
        dim=rows.world_count,
        inputs=[int(solver.options.iterations), SCHEDULE_INDEX[solver.options.row_schedule],
                _friction_start(solver.options),
                MODE_INDEX[solver.options.friction_mode], *_factor_inputs(solver), int(solver.preeliminate),
                int(solver.options.bilateral_preelimination_include_mimics)],
        outputs=[rows.buffers, joint_qd],
        device=solver.model.device,
    )


def velocity_sweep(solver, joint_qd: wp.array) -> None:
    """Run ``velocity_iterations`` PGS iterations on the velocity targets (no position bias), after :func:`sweep`.

    Continues from the position solve's impulses and velocities in ``joint_qd`` (in place).
    """
    rows = solver.rows
    if solver.options.velocity_iterations == 0 or rows.world_count == 0:
        return
    launch(
        _velocity_sweep,
        dim=rows.world_count,
        inputs=[int(solver.options.iterations), int(solver.options.velocity_iterations),
                int(solver.options.velocity_drive_mode == "freeze"), SCHEDULE_INDEX[solver.options.row_schedule],
                MODE_INDEX[solver.options.friction_mode], *_factor_inputs(solver)],
        outputs=[rows.buffers, joint_qd],
        device=solver.model.device,
    )
