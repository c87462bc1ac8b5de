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
  tails, on the budget their row family computes from the group (``contacts/torsion.py``);
* preloads: a row's ``preload`` impulse is applied once with the warm start and never projected;
* coupled units: a unit row followed by a ``ROW_COUPLED`` pair (a ``friction_mode`` other than
  "fixed_normal") skips the group's normal step; in its tail the sweep assembles the contact's 3x3
  block ``J Y`` and velocities and replaces the three impulses by the row family's coupled solution
  (``contacts/friction_modes.py``), unrelaxed;
* soft rows: a unit row's step is regularized by ``g``, its ``contact_regularization`` plus, for a
  compliant contact, its softness ``s`` times ``1 / (J Y + cfm)`` (``contacts/compliance.py``); a settled
  friction anchor's pair takes the same step with its own ``g`` (``contacts/rows.py``, ``sweep/tails.py``);
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
dt = 1/240 s with the per-corner sweep, before the groups replaced it: 5.4 mm of drift over 10 s
(after 3 s: 4.8, 1.2, 1.0, 0.14 mm at 12, 24, 50, 100 iterations); with the boxes randomly offset by
up to 0.5 mm and turned by up to 0.3 degrees, 4.2-8.9 mm (3 s). With the groups: 0.0 mm at 10 s
(``tests/solvers/steel/test_friction_patches.py::test_the_four_towers_hold_at_every_time_step``), and
1.4 mm at 3 s on the offset boxes, nearly all of it while landing (``benchmarks.statics.perturbed_towers``,
``test_perturbed_towers_land_within_a_millimetre_and_a_half``).
A plain Jacobi step would not do: for a box taller than wide the corners' ``A`` has its uniform
mode at up to four times the diagonal and unscaled Jacobi diverges; the line search makes every
group step a descent step of the group's quadratic (and is exact for the uniform mode of a
symmetric face). Rejected: more
iterations (the fix is the order, not the count; the reference default of 12 stays), a 4x4
block LCP (the corners of a face make ``A`` singular, rank 3, so the block solve is ill posed).

``w`` is ``relaxation``. Rows of worlds are disjoint in DOFs, so worlds never race.

Order and tails. Each world's units are sorted once per sweep, top down (``sweep/order.py``, with the
merge sort); a unit's tail rows are solved by ``sweep/tails.py``. Applies take the world from the sweep
(``apply_world_impulse``) instead of dividing the row index for it, and ``_normal_step`` has a single
return: with the gate's early return the C++ compiler kept its result in memory and stalled reading it back.

DOF loops. The products over a row's DOFs (``J qd``, its gate bounds, ``qd += Y lambda``, a tail pair's
two rows at once) run as native loops on the arrays' data (``rows/dof_loops.py``): a Warp array load wraps
a negative index and multiplies by the byte stride, and a perf annotation of the tower's sweep put the
hottest instructions of its 6-DOF sums on that address arithmetic (rejected: unrolling the Warp loops,
within noise). Same float operations in the same order: joint_q/joint_qd after 300 steps bitwise equal on
tower x1/x16, humanoid x16, ant x64, chain x64 (timings in benchmarks/README.md's performance log). What
is left on the tower is row bookkeeping: each struct-array field a row visit reads is a pointer and stride
reloaded from the stack, an index wrap and a multiply, and forming the responses (``ensure_response``; the tree
solve runs natively too, a free body's in registers: ``rows/dof_loops.chain_response``). A friction or rolling
pair at rest (impulses +0, velocities exactly on their targets: the anchors of a stack that does not move
sideways) forms no response and applies nothing (``sweep/tails.py``, ``_idle``); bitwise the same.
A loaded row (impulse not 0) forms only ``J qd``, not its gate reference: the gate is read only while the
impulse is 0, and the reference an earlier visit left stays a valid (looser) bound; bitwise the same.

Responses are formed lazily: a row's ``Y = H^-1 J^T`` (a tree-sparse solve) is computed the first
time the row must apply an impulse. A speculative contact that stays open, or a friction pair whose
normal carries no load, costs only its ``J qd`` (measured on nv_humanoid lying down at dt = 1/240 s: per
step 10-11 of its 79-82 normal rows, 13 %, form a response;
``tests/solvers/steel/test_lazy_responses.py``).

Gate. A unit row that cannot act costs a test instead of its ``J qd`` (2 sides of up to ``stride``
products). Each world keeps ``world_drift``, an upper bound on how far any of its joint velocities moved
since the sweep began: every apply adds ``2 |impulse| max_k |Y_k|`` (``add_drift``: a float add moves a
value by at most twice its addend, however it rounds), widened by ``2^-21`` so the float sum stays above
the exact one. When a unilateral row (contact, limit, velocity limit) over more than one DOF forms ``J qd``
in full with no impulse it keeps ``v - 2 e sum_k |J_k qd_k|``, ``(1 + 2 e) sum_k |J_k|`` and the drift at that moment
(``rows.gate``; ``e``, ``gate_rounding``, is four times float32's bound on the rounding of such a sum). A
later visit of the row while its impulse is 0 first tests ``lower - norm (drift_now - drift_ref) > target``:
if it holds, the full sum would have come out above the target as well, the row would take no step, and
it is skipped (the zeros it returns add nothing to its group's line search). Its decisions are those of
the full computation, so the iterate is bitwise the same: joint_q and joint_qd after 300 steps of chain
x64, humanoid x16, tower x16 and ant x64 equal the ungated sweep's. The references are dropped at the start
of each step's sweep (rows are rebuilt every step) and stay valid into the velocity sweeps, whose new
targets the test reads. A dormant contact (``contacts/dormant.py``) arrives with a reference its build wrote
against drift 0 and no ``J``: ``_reset_gate`` keeps that reference, and the row is materialized (its ``J``
written, bitwise the build's) when its gate fails or when its group carries load, before the group's tails
(a patch share can bound its friction pair away from 0). A group whose normal rows all carry no impulse
also skips summing its patch anchors' shares (``patch_bound``), which are then 0. Every apply also moves the drift by at least
``1e-30``, so a pass that leaves it where it was applied nothing: the velocities and impulses are as it
found them, and the passes after it in the same friction phase would repeat it exactly, so an
interleaved sweep skips them (``_run_passes``); a world whose rows all stay open runs one pass. The two
pay where rows stay open (chain x64's speculative link pairs, which never act, are gated after the first
pass) and cost nothing measurable where rows act (the tower); timings in benchmarks/README.md's
performance log.

Velocity sweeps (``velocity_iterations``) run the same passes from their own module, ``sweep/velocity.py``, so a
step without them never compiles them: Warp builds every kernel of a module when the first one launches.
"""

from __future__ import annotations

import warp as wp

from ....articulation.factor import FactorView, factor_arguments, factor_of
from ..data import ROW_CLAMP, ROW_CONTACT, ROW_FROZEN, ROW_LIMIT, ROW_SPEED_LIMIT, RowBuffers
from .order import is_sliding_friction as _is_sliding_friction
from .order import order_units as _order_units
from .tails import is_coupled as _is_coupled
from .tails import solve_tail as _solve_tail
from .tails import unit_end as _unit_end
from .tails import unit_last as _unit_last
from .tails import world_ends as _world_ends
from ..rows.common import DRIFT_WIDENING, dof_row_dof, row_velocity_bounds
from ..rows.common import apply_impulse as _apply
from ..rows.common import apply_world_impulse as _apply_in
from ..rows.common import ensure_response as _ensure_response
from ..rows.common import is_boxed, side_offset
from ..rows.common import row_velocity as _row_velocity
from ..rows.dof_loops import row_dot
from ..contacts.dormant import DormantWalk, is_dormant, materialize
from ..contacts.friction_modes import MODE_INDEX
from ..contacts.patches import group_patch_load
from .preelimination import preeliminate
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.func(inline=True)
def _softness(rows: RowBuffers, r: int):
    """``g`` of unit row ``r``'s regularized step: ``contact_regularization``, plus a compliant contact's
    softness ``s`` over its diagonal ``d = 1 / inv_mass`` (``contacts/compliance.py``); 0: rigid."""
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
    """Forget the gate references of the world's units (rows are rebuilt every step) and restart its drift; a
    dormant contact keeps the reference its build wrote against this drift (contacts/dormant.py)."""
    rows.world_drift[world] = 0.0
    u = int(0)
    while u < unit_count:  # not range: see _iterate's group loops
        r = rows.order[base + u]
        if not is_dormant(rows, r):
            rows.gate[r] = wp.vec3(0.0, 0.0, -1.0)
        u += 1


@wp.func(inline=True)
def _normal_step(
    rows: RowBuffers,
    world: int,
    r: int,
    relaxation: float,
    cfm: float,
    factor: FactorView,
    joint_qd: wp.array[float],
    walk: DormantWalk,
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
            if is_dormant(rows, r):
                materialize(rows, walk, r)  # its build left J unwritten (contacts/dormant.py)
            if old == 0.0:
                bounds = row_velocity_bounds(rows, r, joint_qd)
                v = bounds[0]
                rounding = rows.gate_rounding
                rows.gate[r] = wp.vec3(v - 2.0 * rounding * bounds[1], (1.0 + 2.0 * rounding) * bounds[2],
                                       rows.world_drift[world])
            else:
                v = _row_velocity(rows, r, joint_qd)
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
        _ensure_response(rows, r, cfm, factor)
        g = _softness(rows, r)
        # A rigid row (g = 0, the default) skips the divisions by 1 + g, which return their operand, and the
        # residual's zero term: the same bits without two divisions per visit.
        new = old + relaxation * (rows.target[r] - v) * rows.inv_mass[r]
        if boxed:
            if g != 0.0:
                new = new / (1.0 + g)
            new = wp.clamp(new, -rows.mu[r], rows.mu[r])  # a two-sided bound (joints/friction.py)
        elif rows.kind[r] == ROW_SPEED_LIMIT:
            new = wp.max(new, old)  # pushes only, never hands an impulse back (joints/velocity_limits.py)
            residual = wp.max(residual, 0.0)
        else:
            new = wp.max(new, 0.0)
            if g != 0.0:
                new = new / (1.0 + g)
        delta = new - old
        if g != 0.0:
            residual -= g * old / rows.inv_mass[r]
    # One return: with an early one the C++ compiler kept the result in memory, and the group's line search
    # waited on a store-forwarding stall at every row.
    return wp.vec3(delta, residual, v)


@wp.func(inline=True)
def _warm_start(
    rows: RowBuffers,
    ends: wp.vec3i,
    base: int,
    unit_count: int,
    friction: int,
    cfm: float,
    factor: FactorView,
    joint_qd: wp.array[float],
):
    """Apply the impulses the rows start from and their preloads (zero rows are skipped)."""
    uu = int(0)
    while uu < unit_count:  # not range: see _iterate's group loops
        r = rows.order[base + uu]
        k = r
        last = _unit_last(rows, ends, r)
        while k <= last:
            if friction == 0 and _is_sliding_friction(rows, k):
                rows.impulse[k] = 0.0  # held at zero until the friction iterations begin
            start = rows.impulse[k] + rows.preload[k]
            if start != 0.0:
                _ensure_response(rows, k, cfm, factor)
                _apply(rows, k, start, joint_qd)
            k += 1
        uu += 1


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
    factor: FactorView,
    joint_qd: wp.array[float],
    walk: DormantWalk,
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
            step = _normal_step(rows, world, r, relaxation, cfm, factor, joint_qd,
                                walk)
            if step[0] != 0.0:
                _apply_in(rows, world, r, step[0], joint_qd)
                rows.impulse[r] = rows.impulse[r] + step[0]
            continue
        # Normal rows of the group: one projected Jacobi step from the same velocities, then
        # an exact line search along it (see the module docstring).
        gain = float(0.0)  # delta . residual
        moved = float(0.0)  # delta . (J qd before)
        any_step = int(0)
        # The loops over a group's units are while loops on a local index, not ``range(first, last + 1)``: the same
        # units in the same order (so the same bits), without the CPU build's range-iterator bookkeeping per unit.
        g = first
        while g <= last:
            r = rows.order[base + g]
            step = wp.vec3(0.0)
            # A coupled unit is solved with its tail; only a coupled friction_mode writes them.
            if friction == 0 or friction_mode == 0 or not _is_coupled(rows, ends, r):
                step = _normal_step(rows, world, r, relaxation, cfm, factor, joint_qd,
                                    walk)
            rows.step[r] = step[0]
            gain += step[0] * step[1]
            moved += step[0] * step[2]
            if step[0] != 0.0:
                any_step = 1
            g += 1
        if any_step != 0:
            g = first
            while g <= last:
                r = rows.order[base + g]
                if rows.step[r] != 0.0:
                    _apply_in(rows, world, r, rows.step[r], joint_qd)
                g += 1
            alpha = float(1.0)
            if last > first:
                curvature = -moved  # delta^T A delta = delta . (J qd after - J qd before)
                g = first
                while g <= last:
                    r = rows.order[base + g]
                    if rows.step[r] != 0.0:
                        curvature += rows.step[r] * _row_velocity(rows, r, joint_qd)
                        # The regularized quadratic's own curvature (see _normal_step); 0 on a rigid row.
                        soft = _softness(rows, r)
                        if soft != 0.0:
                            curvature += soft * rows.step[r] * rows.step[r] / rows.inv_mass[r]
                    g += 1
                if curvature > 0.0 and gain < curvature:
                    alpha = wp.max(gain / curvature, 0.0)
            g = first
            while g <= last:
                r = rows.order[base + g]
                if rows.step[r] != 0.0:
                    if alpha < 1.0:
                        _apply_in(rows, world, r, (alpha - 1.0) * rows.step[r], joint_qd)
                    rows.impulse[r] = rows.impulse[r] + alpha * rows.step[r]
                g += 1
        # Tails of the group (friction, spin, rolling), bounded by the updated normal rows; then its
        # torsion rows, whose budget is what the normal and sliding rows leave.
        loaded = int(0)
        g = first
        while g <= last:
            if rows.impulse[rows.order[base + g]] != 0.0:
                loaded = 1
            g += 1
        if loaded != 0:
            # A loaded group's tails may bound a dormant contact's friction pair away from 0 (a patch share).
            g = first
            while g <= last:
                if is_dormant(rows, rows.order[base + g]):
                    materialize(rows, walk, rows.order[base + g])
                g += 1
        group_load = wp.vec2(0.0, -1.0)
        if loaded != 0:
            group_load = group_patch_load(rows, first, last, base, _unit_end(ends, rows.order[base + first]))
        # One call site for both passes: _solve_tail is inlined.
        pass_index = int(0)
        while pass_index <= rows.late_rows:
            g = first
            while g <= last:
                _solve_tail(rows, ends, world, rows.order[base + g], base, first, last, loaded, group_load, pass_index,
                            friction, friction_mode, relaxation, cfm, factor, joint_qd)
                g += 1
            pass_index += 1


@wp.func(inline=True)
def _clamp_velocities(
    rows: RowBuffers,
    base: int,
    cfm: float,
    factor: FactorView,
    joint_qd: wp.array[float],
):
    """Fused velocity limits: each ``ROW_CLAMP`` entry's DOF velocity into ``[-mu, mu]`` (joints/velocity_limits.py).

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
                _ensure_response(rows, r, cfm, factor)
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
    factor: FactorView,
    joint_qd: wp.array[float],
    walk: DormantWalk,
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
        _iterate(rows, ends, base, unit_count, it0 + k, units, friction, friction_mode, relaxation, cfm, factor, joint_qd, walk)
        if rows.clamp_rows != 0:
            _clamp_velocities(rows, base, cfm, factor, joint_qd)
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
    # Factor of the core (FactorView's fields as plain arguments: see the comment below):
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    # enable_bilateral_preelimination in effect, bilateral_preelimination_include_mimics:
    bilateral: int,
    include_mimics: int,
    # Dormant contacts' records and the tables their walk reads (contacts/dormant.py):
    walk: DormantWalk,
    # Data in/out: the rows (impulses, responses and sweep scratch written), then the velocities.
    rows: RowBuffers,
    joint_qd: wp.array[float],
):
    world = wp.tid()  # one thread per world
    # The factor's arrays arrive as plain kernel arguments, which Warp's CPU launch specializes for unit strides
    # (its wp_linear_contiguous path: constant strides fold into the address arithmetic); arrays inside a struct
    # argument keep their runtime strides (rejected: a FactorView argument, an 8-12 % slower sweep; benchmarks/
    # README.md, "Declared data"). Built here, the struct is a local the force-inlined callees receive by value.
    factor = factor_of(use_tree, dof_parent, mass_factor)
    base = world * rows.world_row_capacity
    unit_count = _order_units(rows, world, base)
    _reset_gate(rows, world, base, unit_count)
    ends = _world_ends(rows, world, base)
    # contact_friction_position_iterations: sliding friction is solved from iteration friction_start
    # on, and held at zero (its warm start too) before it.
    _warm_start(rows, ends, base, unit_count, int(friction_start == 0), cfm, factor,
                joint_qd)
    if bilateral != 0:
        preeliminate(rows, world, base, include_mimics, cfm, factor, joint_qd)
    _run_passes(rows, ends, base, unit_count, 0, iterations, schedule, friction_start, friction_mode, relaxation, cfm,
                factor, joint_qd, walk)


def _factor_inputs(sm) -> list:
    """Sweep arguments after the iteration counts: relaxation, cfm and the factor for lazy responses."""
    return [
        float(sm.options.relaxation),
        float(sm.options.cfm),
        *factor_arguments(sm.core.plan, sm.core.data),
    ]


def _friction_start(options) -> int:
    """First position iteration that solves sliding friction: ``contact_friction_position_iterations``
    ``k >= 0`` solves it only in the last ``k`` (``-1``: all)."""
    k = options.contact_friction_position_iterations
    return 0 if k < 0 else max(options.iterations - k, 0)


def sweep(sm, sd, joint_qd: wp.array) -> None:
    """Run ``iterations`` PGS iterations of every world's rows on ``joint_qd`` in place."""
    rows = sd.rows
    if sm.options.iterations == 0 or rows.world_count == 0:
        return
    launch(
        _sweep,
        dim=rows.world_count,
        inputs=[int(sm.options.iterations), SCHEDULE_INDEX[sm.options.row_schedule],
                _friction_start(sm.options),
                MODE_INDEX[sm.options.friction_mode], *_factor_inputs(sm), int(sm.preeliminate),
                int(sm.options.bilateral_preelimination_include_mimics), sd.dormant.walk(sm)],
        outputs=[rows.buffers, joint_qd],
        device=sm.model.device,
    )
