"""Shared row mechanics: slot reservation with overflow accounting, point Jacobians and responses.

Every row family (contacts, friction, limits) goes through these functions, so the sweep never
needs to know which family a row came from (``docs/architecture.md``, "Rows"). They all take the
pool as one :class:`~steel.solvers.steel.data.RowBuffers` named ``rows``, and are inlined because
Warp passes that struct by value (see :mod:`steel.solvers.steel.data`).
"""

from __future__ import annotations

import warp as wp

from ....articulation.factor import FactorView, factor_solve, tree_solve_native
from ....articulation.spatial import point_velocity
from ..data import (UNBOUNDED, FAMILY_FREE_BODY, ROW_BOX, ROW_CLAMP, ROW_DRIVE, ROW_FROZEN, ROW_LIMIT, ROW_SPEED_LIMIT,
                    RowBuffers)
from .dof_loops import chain_response, response_max, row_axpy, row_dot, row_dot_bounds
from ....host_views import host_view


@wp.func(inline=True)
def reserve_rows(rows: RowBuffers, world: int, family: int, count: int, also_flag: int):
    """Reserve ``count`` consecutive rows of ``family`` in ``world``; return the first row or -1.

    Rows that do not fit are never written: the world's drop counter grows by ``count`` and its
    ``constraint_overflow`` flag is set, so a drop is never silent; ``also_flag`` (``-1`` for none)
    names a second entry to flag, the global entry when the rows belong to a global articulation.
    A reservation is all or nothing, so a contact never loses its friction rows while keeping its
    normal row.
    """
    capacity = rows.articulation_capacity
    offset = int(0)
    if family == FAMILY_FREE_BODY:
        capacity = rows.free_body_capacity
        offset = rows.articulation_capacity
    slot = wp.atomic_add(rows.world_row_count, world, family, count)
    if slot + count > capacity:
        wp.atomic_add(rows.world_rows_dropped, world, family, count)
        rows.constraint_overflow[world] = True
        if also_flag >= 0:
            rows.constraint_overflow[also_flag] = True
        # Give the slots back only logically: readers clamp counts to the capacity.
        return -1
    return world * rows.world_row_capacity + offset + slot


@wp.func(inline=True)
def reserved_end(rows: RowBuffers, r: int):
    """One past the last row reserved this step in the world segment and family of row ``r``.

    Rows past it keep last step's fields, so a unit's tail is never searched beyond it.
    """
    world = r // rows.world_row_capacity
    base = world * rows.world_row_capacity
    if r - base < rows.articulation_capacity:
        return base + wp.min(rows.world_row_count[world, 0], rows.articulation_capacity)
    return base + rows.articulation_capacity + wp.min(rows.world_row_count[world, 1], rows.free_body_capacity)


@wp.func(inline=True)
def side_offset(rows: RowBuffers, r: int, s: int):
    """First entry of side ``s`` of row ``r`` in ``rows.J`` and ``rows.Y``."""
    return (r * 2 + s) * rows.stride


@wp.func(inline=True)
def write_point_jacobian(
    rows: RowBuffers,
    J_offset: int,
    body: int,
    point_rel: wp.vec3,
    direction: wp.vec3,
    sign: float,
    angular: int,
    dof_start: int,
    dof_count: int,
    body_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    joint_qd_start: wp.array[int],
    dof_S: wp.array[wp.spatial_vector],
):
    """Write ``sign * direction . v(point)`` per unit ``qd`` for the DOFs of ``body``'s articulation.

    With ``angular`` nonzero the row measures the body's angular velocity along ``direction``
    [rad/s] instead (spin rows); ``point_rel`` is then unused.

    ``point_rel`` is the world point relative to the articulation's reference point [m]. DOFs that
    are not on the path from the root to ``body`` get zero.
    """
    for k in range(dof_count):
        rows.J[J_offset + k] = 0.0
    add_point_jacobian(rows, J_offset, body, point_rel, direction, sign, angular, dof_start, body_joint,
                       joint_parent_joint, joint_qd_start, dof_S)


@wp.func(inline=True)
def add_point_jacobian(
    rows: RowBuffers,
    J_offset: int,
    body: int,
    point_rel: wp.vec3,
    direction: wp.vec3,
    sign: float,
    angular: int,
    dof_start: int,
    body_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    joint_qd_start: wp.array[int],
    dof_S: wp.array[wp.spatial_vector],
):
    """Add what :func:`write_point_jacobian` writes (so two bodies of one articulation can share a row)."""
    j = body_joint[body]
    while j >= 0:
        for d in range(joint_qd_start[j], joint_qd_start[j + 1]):
            m = point_velocity(dof_S[d], point_rel)
            if angular != 0:
                m = wp.spatial_bottom(dof_S[d])
            rows.J[J_offset + d - dof_start] = rows.J[J_offset + d - dof_start] + sign * wp.dot(direction, m)
        j = joint_parent_joint[j]


@wp.func(inline=True)
def side_response(
    rows: RowBuffers,
    r: int,
    s: int,
    factor: FactorView,
):
    """``Y = H^-1 J^T`` for side ``s`` of row ``r``; returns ``J Y``, that side's share of the row's inverse mass."""
    offset = side_offset(rows, r, s)
    n = rows.dof_count[r, s]
    if factor.use_tree != 0:
        # The tree solve as native code on the arrays' data: the same operations in the same order, the same bits
        # (rows/dof_loops.py, articulation/factor.py); a chain block (a free body) with its J Y in registers.
        chain = chain_response(n, rows.mass_start[r, s], rows.dof_start[r, s], offset, factor.dof_parent,
                               factor.mass_factor, rows.J, rows.Y)
        if chain[1] != 0.0:
            return chain[0]
        tree_solve_native(n, rows.mass_start[r, s], rows.dof_start[r, s], factor.dof_parent, factor.mass_factor,
                          rows.J, offset, 1.0, rows.Y)
    else:
        factor_solve(factor.use_tree, n, rows.mass_start[r, s], rows.dof_start[r, s], offset, factor.dof_parent,
                     factor.mass_factor, rows.J, 1.0, rows.Y)
    jy = float(0.0)
    for k in range(n):
        jy += rows.J[offset + k] * rows.Y[offset + k]
    return jy


@wp.func(inline=True)
def row_velocity(rows: RowBuffers, r: int, joint_qd: wp.array[float]):
    """``J qd`` of row ``r`` [m/s or rad/s]."""
    dof = dof_row_dof(rows, r)
    if dof >= 0:
        # A one-DOF joint row: J qd is its sign times qd_dof (most velocity-limit and limit rows never act,
        # and this is all they cost per pass).
        return rows.J[side_offset(rows, r, 0) + dof - rows.dof_start[r, 0]] * joint_qd[dof]
    return row_dot(rows.J, rows.dof_start, rows.dof_count, r, rows.stride, joint_qd)


@wp.func(inline=True)
def row_velocity_bounds(rows: RowBuffers, r: int, joint_qd: wp.array[float]):
    """``(J qd, sum_k |J_k qd_k|, sum_k |J_k|)`` of row ``r`` [m/s or rad/s; the last per unit qd].

    ``J qd`` is summed as :func:`row_velocity` sums a row of more than one DOF (side by side, in DOF
    order), so it is bitwise the same; the two bounds feed the sweep's gate (``sweep/pgs.py``). The extra
    sums are independent of the first and cost little beside it on a serial float chain.
    """
    return row_dot_bounds(rows.J, rows.dof_start, rows.dof_count, r, rows.stride, joint_qd)


# Each apply widens its world's drift by this factor besides the change, so the float32 sum stays an
# upper bound of the exact one (its additions round down by at most 2^-24 each), and adds this floor
# [m/s or rad/s], so every apply, even of a zero impulse, moves the drift (the sweep reads an unmoved
# drift as a pass that applied nothing).
DRIFT_WIDENING = wp.constant(1.0 + 2.0**-21)
DRIFT_FLOOR = wp.constant(1.0e-30)


@wp.func(inline=True)
def add_drift(rows: RowBuffers, r: int, change: float):
    """Widen the drift of row ``r``'s world by an apply whose products ``Y_k impulse`` are at most ``change``
    [m/s or rad/s] each.

    ``qd_k + p`` rounds to the float nearest the exact sum, and ``qd_k`` itself is a float within ``|p|`` of
    it, so the stored velocity moves by at most ``2 |p|``, whatever the rounding.
    """
    add_world_drift(rows, r // rows.world_row_capacity, change)


@wp.func(inline=True)
def add_world_drift(rows: RowBuffers, world: int, change: float):
    """:func:`add_drift` for a caller that knows the row's world (the division that finds it costs more than the
    update)."""
    rows.world_drift[world] = (rows.world_drift[world] + 2.0 * change) * DRIFT_WIDENING + DRIFT_FLOOR


@wp.func(inline=True)
def apply_impulse(rows: RowBuffers, r: int, impulse: float, joint_qd: wp.array[float]):
    """``qd += Y impulse``: row ``r``'s impulse [N·s or N·m·s] on the joint velocities (and its world's drift)."""
    apply_world_impulse(rows, r // rows.world_row_capacity, r, impulse, joint_qd)


@wp.func(inline=True)
def apply_world_impulse(rows: RowBuffers, world: int, r: int, impulse: float, joint_qd: wp.array[float]):
    """:func:`apply_impulse` of row ``r`` of ``world`` (the sweep knows the world; finding it is a division)."""
    row_axpy(rows.Y, rows.dof_start, rows.dof_count, r, rows.stride, impulse, joint_qd)
    add_world_drift(rows, world, wp.abs(impulse) * rows.y_max[r])


@wp.func(inline=True)
def response_size(rows: RowBuffers, r: int):
    """Store ``max_k |Y_k|`` of row ``r``'s response [qd per N·s], which bounds what one impulse moves a DOF;
    call it whenever ``Y`` is (re)formed."""
    rows.y_max[r] = response_max(rows.Y, rows.dof_count, r, rows.stride)


@wp.func(inline=True)
def ensure_response(
    rows: RowBuffers,
    r: int,
    cfm: float,
    factor: FactorView,
):
    """Form ``Y = H^-1 J^T`` and ``1 / (J Y + cfm)`` of row ``r`` the first time it needs them."""
    if rows.inv_mass[r] >= 0.0:
        return
    jy = float(0.0)
    for s in range(2):
        n = rows.dof_count[r, s]
        if n > 0:
            if rows.mass_start[r, s] >= 0:
                jy += side_response(rows, r, s, factor)
            else:
                offset = side_offset(rows, r, s)
                for k in range(n):
                    rows.Y[offset + k] = 0.0
    rows.inv_mass[r] = 1.0 / (jy + cfm)
    response_size(rows, r)


@wp.func(inline=True)
def block_entry(rows: RowBuffers, i: int, j: int):
    """``J_i Y_j`` [1/kg]: one entry of the Delassus block of rows that act on the same DOFs (no cfm)."""
    v = float(0.0)
    for s in range(2):
        oi = side_offset(rows, i, s)
        oj = side_offset(rows, j, s)
        for k in range(rows.dof_count[i, s]):
            v += rows.J[oi + k] * rows.Y[oj + k]
    return v


@wp.func(inline=True)
def write_dof_row(
    rows: RowBuffers,
    r: int,
    art_dof_start: int,
    art_dof_count: int,
    art_mass_start: int,
    dof: int,
    sign: float,
    kind: int,
    target: float,
    velocity_target: float,
    bound: float,
    compliance: float,
):
    """Fill reserved row ``r`` as ``sign qd_dof`` against ``target``: a one-DOF internal row.

    Joint limits, velocity limits, joint friction and drive rows all act on one DOF of one
    articulation. ``bound`` [N·s or N·m·s] goes to ``rows.mu``: the box ``|lambda| <= bound`` of a
    boxed row (``ROW_BOX``, ``ROW_DRIVE``); unilateral rows ignore it. ``compliance`` [1/kg or
    1/(kg·m²)] makes the row soft (``J qd = target - compliance lambda``, a drive's spring-damper).
    Internal rows sort before every contact (key ``UNBOUNDED``) and are never grouped (bodies -1, -1). A row
    that adds other DOFs to ``J`` afterwards (a mimic's leader) sets ``rows.dof_start[r, 1] = -1``.
    """
    offset = side_offset(rows, r, 0)
    for i in range(art_dof_count):
        rows.J[offset + i] = 0.0
    rows.J[offset + dof - art_dof_start] = sign
    rows.dof_start[r, 0] = art_dof_start
    rows.dof_count[r, 0] = art_dof_count
    rows.mass_start[r, 0] = art_mass_start
    rows.dof_count[r, 1] = 0
    rows.dof_start[r, 1] = dof  # the one DOF, for the sweep's O(1) J qd (see dof_row_dof)
    rows.kind[r] = kind
    rows.inv_mass[r] = -1.0  # response formed lazily by the sweep
    rows.target[r] = target
    rows.velocity_target[r] = velocity_target
    rows.gap_speed[r] = -UNBOUNDED
    rows.regularization[r] = 0.0
    rows.compliance[r] = compliance
    rows.mu[r] = bound
    rows.dir[r] = wp.vec3(0.0)  # no world direction (a connect row writes its own: sweep/preelimination.py)
    rows.impulse[r] = 0.0  # cold start
    rows.preload[r] = 0.0
    rows.contact[r] = -1
    rows.key[r] = UNBOUNDED  # internal rows first, before the contacts
    rows.body[r, 0] = -1  # never grouped with other rows
    rows.body[r, 1] = -1


@wp.func(inline=True)
def dof_row_dof(rows: RowBuffers, r: int):
    """The DOF of a one-DOF row written by :func:`write_dof_row` (``J = ±e_dof``), else -1."""
    k = rows.kind[r]
    one_dof_kind = k == ROW_LIMIT or k == ROW_SPEED_LIMIT or k == ROW_BOX or k == ROW_DRIVE or k == ROW_FROZEN or k == ROW_CLAMP
    if one_dof_kind and rows.dof_count[r, 1] == 0:
        return rows.dof_start[r, 1]
    return -1


@wp.func
def is_boxed(kind: int):
    """Rows of ``kind`` are bounded on both sides, ``|lambda| <= rows.mu[r]``: joint friction and drive rows."""
    return kind == ROW_BOX or kind == ROW_DRIVE


@wp.struct
class JointRowModel:
    """The joint and articulation tables every one-DOF row kernel reads."""

    joint_type: wp.array[int]
    joint_articulation: wp.array[int]
    joint_world: wp.array[int]
    joint_q_start: wp.array[int]
    joint_qd_start: wp.array[int]
    art_dof_start: wp.array[int]
    art_dof_count: wp.array[int]
    art_mass_start: wp.array[int]
    art_row_world: wp.array[wp.int32]
    art_is_global: wp.array[wp.int32]
    dof_is_kinematic: wp.array[wp.int32]
    articulation_skip: wp.array[wp.int32]  # 1: an asleep island, no rows (sleeping/stages.py)


def joint_row_model(sm) -> JointRowModel:
    """The struct for this launch, rebuilt only when one of its tables was rebound (``notify_model_changed``).

    Reusing one struct instance lets the launches that take it replay (``steel.launches``); the cached
    struct keeps its arrays referenced, so a rebound table is recognised by identity.
    """
    model, plan, tables = sm.model, sm.core.plan, sm.tables
    arrays = (model.joint_type, model.joint_articulation, model.joint_world, model.joint_q_start, model.joint_qd_start,
              plan.dof_start, plan.dof_count_per_articulation, plan.mass_start, tables.articulation_row_world,
              tables.articulation_is_global, tables.dof_is_kinematic, plan.joints.articulation_skip)
    cached = sm.joint_row_model_cache
    if cached is not None and all(a is b for a, b in zip(cached[0], arrays)):
        return cached[1]
    m = JointRowModel()
    (m.joint_type, m.joint_articulation, m.joint_world, m.joint_q_start, m.joint_qd_start, m.art_dof_start,
     m.art_dof_count, m.art_mass_start, m.art_row_world, m.art_is_global, m.dof_is_kinematic,
     m.articulation_skip) = arrays
    sm.joint_row_model_cache = (arrays, m)
    return m


@wp.func(inline=True)
def joint_row_owner(m: JointRowModel, rows: RowBuffers, j: int):
    """``(articulation, world, global entry)`` of joint ``j``'s rows; articulation -1 outside every tree,
    -2 for an asleep island (no rows); global entry -1 unless the articulation is global."""
    art = m.joint_articulation[j]
    world = wp.max(m.joint_world[j], 0)
    global_entry = int(-1)
    if art >= 0:
        world = int(m.art_row_world[art])
        if m.art_is_global[art] != 0:
            global_entry = rows.constraint_overflow.shape[0] - 1
        if m.articulation_skip[art] != 0:
            art = -2
    return wp.vec3i(art, world, global_entry)


def contact_slots(contacts) -> int:
    """Slots of ``contacts`` that hold contacts: the live count on the CPU, the capacity on CUDA.

    On the CPU every launch has completed when the next one starts and the count lies in host
    memory, so reading it costs no synchronization. On CUDA the count stays on the device (no
    host sync, graph-capturable), so work sized on the host covers the capacity; so it does while
    a CPU graph is captured, whose replays see other counts.
    """
    if host_counted(contacts):
        return min(int(host_view(contacts.rigid_contact_count)[0]), contacts.rigid_contact_max)
    return contacts.rigid_contact_max


def host_counted(contacts) -> bool:
    """The host may read ``contacts``' live count (:func:`contact_slots`): on the CPU, outside a capture."""
    device = contacts.rigid_contact_count.device
    return device.is_cpu and not device.is_capturing


def contact_threads(contacts) -> int:
    """Threads of a launch over ``contacts``' slots whose thread ``t`` handles slots ``t, t + threads, ...``
    below the live count: one per slot on CUDA, a single one on the CPU.

    A CPU launch runs its threads one after another and copies the kernel's whole argument block
    for each (the contact-row kernel takes nearly a hundred arguments, kilobytes of them), so per-slot
    threads pay that copy per slot before any work (timings in benchmarks/README.md's performance log). One thread
    walking the slots in order pays it once and does the same work in the same order (reservations
    included), so the result is bitwise the same.
    """
    return 1 if contacts.rigid_contact_count.device.is_cpu else contacts.rigid_contact_max
