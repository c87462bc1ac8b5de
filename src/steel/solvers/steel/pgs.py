"""The projected Gauss-Seidel impulse sweep, serial per world (``solve_mode="serial"``).

One thread per world walks the world's rows top down by height, alternating the direction each
iteration, ``iterations`` times, and applies each row's impulse change to the joint velocities at
once (Catto, "Iterative Dynamics with Temporal Coherence", GDC 2005; matrix-free: ``J qd`` is
recomputed from the current velocities each time, only ``Y`` and the diagonal ``J Y`` are stored).
The sweep does not know which family a row came from; it distinguishes only

* unilateral rows (contact normals, limits): ``lambda <- max(lambda + w (target - J qd) / (J Y + cfm), 0)``;
* friction pairs: both tangents are updated from the same velocities (a Jacobi step within the
  pair) and the pair is projected onto the disk ``|lambda_t| <= mu lambda_n`` of the normal row
  just before it, which keeps the friction isotropic (maximum dissipation on the disk);
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

Responses are formed lazily: a row's ``Y = H^-1 J^T`` (a tree-sparse solve) is computed the first
time the row must apply an impulse. A speculative contact that stays open, or a friction pair whose
normal carries no load, costs only its ``J qd`` (measured on nv_humanoid lying down: 11 % of the
normal rows ever activate).
"""

from __future__ import annotations

import warp as wp

from .data import ROW_FRICTION
from .rows.common import side_response, side_velocity


@wp.func
def _row_velocity(r: int, stride: int, row_dof_start: wp.array2d[wp.int32], row_dof_count: wp.array2d[wp.int32],
                  row_J: wp.array[float], joint_qd: wp.array[float]):
    v = float(0.0)
    for s in range(2):
        n = row_dof_count[r, s]
        if n > 0:
            v += side_velocity((r * 2 + s) * stride, row_dof_start[r, s], n, row_J, joint_qd)
    return v


@wp.func
def _apply(r: int, stride: int, impulse: float, row_dof_start: wp.array2d[wp.int32],
           row_dof_count: wp.array2d[wp.int32], row_Y: wp.array[float], joint_qd: wp.array[float]):
    for s in range(2):
        n = row_dof_count[r, s]
        offset = (r * 2 + s) * stride
        d0 = row_dof_start[r, s]
        for k in range(n):
            joint_qd[d0 + k] = joint_qd[d0 + k] + row_Y[offset + k] * impulse


@wp.func
def _ensure_response(
    r: int,
    stride: int,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    row_dof_start: wp.array2d[wp.int32],
    row_dof_count: wp.array2d[wp.int32],
    row_mass_start: wp.array2d[wp.int32],
    row_J: wp.array[float],
    row_Y: wp.array[float],
    row_inv_mass: wp.array[float],
):
    """Form ``Y = H^-1 J^T`` and ``1 / (J Y + cfm)`` of row ``r`` the first time it needs them."""
    if row_inv_mass[r] >= 0.0:
        return
    jy = float(0.0)
    for s in range(2):
        n = row_dof_count[r, s]
        if n > 0:
            offset = (r * 2 + s) * stride
            if row_mass_start[r, s] >= 0:
                jy += side_response(use_tree, row_dof_start[r, s], n, row_mass_start[r, s], offset, dof_parent,
                                    mass_factor, row_J, row_Y)
            else:
                for k in range(n):
                    row_Y[offset + k] = 0.0
    row_inv_mass[r] = 1.0 / (jy + cfm)


@wp.func
def _sorts_before(a: int, b: int, row_key: wp.array[float], row_body: wp.array2d[wp.int32]):
    """Unit ``a`` goes before unit ``b``: larger key first, ties by body pair (a pair's rows stay adjacent)."""
    if row_key[a] != row_key[b]:
        return row_key[a] > row_key[b]
    if row_body[a, 1] != row_body[b, 1]:
        return row_body[a, 1] < row_body[b, 1]
    return row_body[a, 0] < row_body[b, 0]


@wp.func
def _same_group(a: int, b: int, row_body: wp.array2d[wp.int32]):
    """Units ``a`` and ``b`` are contact normals of the same body pair (limit rows carry -1, -1)."""
    return (row_body[a, 0] == row_body[b, 0] and row_body[a, 1] == row_body[b, 1]
            and (row_body[a, 0] >= 0 or row_body[a, 1] >= 0))


@wp.func
def _solve_friction(
    r: int,
    stride: int,
    relaxation: float,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    row_dof_start: wp.array2d[wp.int32],
    row_dof_count: wp.array2d[wp.int32],
    row_mass_start: wp.array2d[wp.int32],
    row_J: wp.array[float],
    row_target: wp.array[float],
    row_mu: wp.array[float],
    row_Y: wp.array[float],
    row_inv_mass: wp.array[float],
    row_impulse: wp.array[float],
    joint_qd: wp.array[float],
):
    """Friction pair ``r + 1``, ``r + 2`` of the normal row ``r``, on the disk ``|lambda_t| <= mu lambda_n``."""
    f = r + 1
    bound = row_mu[f] * row_impulse[r]
    if bound == 0.0 and row_impulse[f] == 0.0 and row_impulse[f + 1] == 0.0:
        return
    _ensure_response(f, stride, cfm, use_tree, dof_parent, mass_factor, row_dof_start, row_dof_count,
                     row_mass_start, row_J, row_Y, row_inv_mass)
    _ensure_response(f + 1, stride, cfm, use_tree, dof_parent, mass_factor, row_dof_start, row_dof_count,
                     row_mass_start, row_J, row_Y, row_inv_mass)
    v1 = _row_velocity(f, stride, row_dof_start, row_dof_count, row_J, joint_qd)
    v2 = _row_velocity(f + 1, stride, row_dof_start, row_dof_count, row_J, joint_qd)
    old1 = row_impulse[f]
    old2 = row_impulse[f + 1]
    new1 = old1 + relaxation * (row_target[f] - v1) * row_inv_mass[f]
    new2 = old2 + relaxation * (row_target[f + 1] - v2) * row_inv_mass[f + 1]
    mag = wp.sqrt(new1 * new1 + new2 * new2)
    if mag > bound:
        scale = bound / mag
        new1 *= scale
        new2 *= scale
    _apply(f, stride, new1 - old1, row_dof_start, row_dof_count, row_Y, joint_qd)
    _apply(f + 1, stride, new2 - old2, row_dof_start, row_dof_count, row_Y, joint_qd)
    row_impulse[f] = new1
    row_impulse[f + 1] = new2


@wp.func
def _normal_step(
    r: int,
    stride: int,
    relaxation: float,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    row_dof_start: wp.array2d[wp.int32],
    row_dof_count: wp.array2d[wp.int32],
    row_mass_start: wp.array2d[wp.int32],
    row_J: wp.array[float],
    row_target: wp.array[float],
    row_Y: wp.array[float],
    row_inv_mass: wp.array[float],
    row_impulse: wp.array[float],
    joint_qd: wp.array[float],
):
    """Projected step of unilateral row ``r`` from the current velocities: ``(delta, residual, J qd)``."""
    v = _row_velocity(r, stride, row_dof_start, row_dof_count, row_J, joint_qd)
    old = row_impulse[r]
    delta = float(0.0)
    # An untouched row that is satisfied needs no response: most speculative rows never do.
    if old != 0.0 or v < row_target[r]:
        _ensure_response(r, stride, cfm, use_tree, dof_parent, mass_factor, row_dof_start, row_dof_count,
                         row_mass_start, row_J, row_Y, row_inv_mass)
        delta = wp.max(old + relaxation * (row_target[r] - v) * row_inv_mass[r], 0.0) - old
    return wp.vec3(delta, row_target[r] - v, v)


@wp.kernel
def _sweep(
    iterations: int,
    relaxation: float,
    cfm: float,
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    articulation_capacity: int,
    free_body_capacity: int,
    stride: int,
    world_row_count: wp.array2d[wp.int32],
    row_kind: wp.array[wp.int32],
    row_dof_start: wp.array2d[wp.int32],
    row_dof_count: wp.array2d[wp.int32],
    row_mass_start: wp.array2d[wp.int32],
    row_J: wp.array[float],
    row_target: wp.array[float],
    row_mu: wp.array[float],
    row_key: wp.array[float],
    row_body: wp.array2d[wp.int32],
    # Data in/out:
    row_order: wp.array[wp.int32],
    row_span: wp.array[wp.int32],
    row_step: wp.array[float],
    row_Y: wp.array[float],
    row_inv_mass: wp.array[float],
    row_impulse: wp.array[float],
    joint_qd: wp.array[float],
):
    world = wp.tid()  # one thread per world
    base = world * (articulation_capacity + free_body_capacity)
    end = base + articulation_capacity + free_body_capacity
    # Order the world's row units (a normal or limit row, with the friction pair that follows it)
    # by descending key, so a stack's weight travels down it within one iteration; a body pair's
    # contacts share a key and end up side by side.
    unit_count = int(0)
    for family in range(2):
        start = base
        count = wp.min(world_row_count[world, 0], articulation_capacity)
        if family == 1:
            start = base + articulation_capacity
            count = wp.min(world_row_count[world, 1], free_body_capacity)
        for i in range(count):
            r = start + i
            if row_kind[r] != ROW_FRICTION:
                k = unit_count  # insertion sort, stable
                while k > 0 and _sorts_before(r, row_order[base + k - 1], row_key, row_body):
                    row_order[base + k] = row_order[base + k - 1]
                    k -= 1
                row_order[base + k] = r
                unit_count += 1
    # Groups: runs of contacts of one body pair. row_span holds, at each end of a run, the other end.
    u = int(0)
    while u < unit_count:
        last = u
        while last + 1 < unit_count and _same_group(row_order[base + u], row_order[base + last + 1], row_body):
            last += 1
        row_span[base + u] = last
        row_span[base + last] = u
        u = last + 1
    # Warm start: apply the impulses the rows start from (cold rows start at zero and are skipped).
    for uu in range(unit_count):
        r = row_order[base + uu]
        k = r
        last = r
        if r + 1 < end and row_kind[r + 1] == ROW_FRICTION:
            last = r + 2
        while k <= last:
            if row_impulse[k] != 0.0:
                _ensure_response(k, stride, cfm, use_tree, dof_parent, mass_factor, row_dof_start, row_dof_count,
                                 row_mass_start, row_J, row_Y, row_inv_mass)
                _apply(k, stride, row_impulse[k], row_dof_start, row_dof_count, row_Y, joint_qd)
            k += 1
    for it in range(iterations):
        # Alternate the direction of the sweep over groups (symmetric Gauss-Seidel).
        done = int(0)
        while done < unit_count:
            at = done
            if it % 2 == 1:
                at = unit_count - 1 - done
            other = row_span[base + at]
            first = wp.min(at, other)
            last = wp.max(at, other)
            done += last - first + 1
            # Normal rows of the group: one projected Jacobi step from the same velocities, then
            # an exact line search along it (see the module docstring).
            gain = float(0.0)  # delta . residual
            moved = float(0.0)  # delta . (J qd before)
            any_step = int(0)
            for g in range(first, last + 1):
                r = row_order[base + g]
                step = _normal_step(r, stride, relaxation, cfm, use_tree, dof_parent, mass_factor, row_dof_start,
                                    row_dof_count, row_mass_start, row_J, row_target, row_Y, row_inv_mass,
                                    row_impulse, joint_qd)
                row_step[r] = step[0]
                gain += step[0] * step[1]
                moved += step[0] * step[2]
                if step[0] != 0.0:
                    any_step = 1
            if any_step != 0:
                for g in range(first, last + 1):
                    r = row_order[base + g]
                    if row_step[r] != 0.0:
                        _apply(r, stride, row_step[r], row_dof_start, row_dof_count, row_Y, joint_qd)
                alpha = float(1.0)
                if last > first:
                    curvature = -moved  # delta^T A delta = delta . (J qd after - J qd before)
                    for g in range(first, last + 1):
                        r = row_order[base + g]
                        if row_step[r] != 0.0:
                            curvature += row_step[r] * _row_velocity(r, stride, row_dof_start, row_dof_count,
                                                                     row_J, joint_qd)
                    if curvature > 0.0 and gain < curvature:
                        alpha = wp.max(gain / curvature, 0.0)
                for g in range(first, last + 1):
                    r = row_order[base + g]
                    if row_step[r] != 0.0:
                        if alpha < 1.0:
                            _apply(r, stride, (alpha - 1.0) * row_step[r], row_dof_start, row_dof_count, row_Y,
                                   joint_qd)
                        row_impulse[r] = row_impulse[r] + alpha * row_step[r]
            # Friction pairs of the group, on the disks of the updated normal rows.
            for g in range(first, last + 1):
                r = row_order[base + g]
                if r + 1 < end and row_kind[r + 1] == ROW_FRICTION:
                    _solve_friction(r, stride, relaxation, cfm, use_tree, dof_parent, mass_factor, row_dof_start,
                                    row_dof_count, row_mass_start, row_J, row_target, row_mu, row_Y, row_inv_mass,
                                    row_impulse, joint_qd)


def sweep(solver, joint_qd: wp.array) -> None:
    """Run ``iterations`` PGS iterations of every world's rows on ``joint_qd`` in place."""
    rows = solver.rows
    if solver.options.iterations == 0 or rows.world_count == 0:
        return
    wp.launch(
        _sweep,
        dim=rows.world_count,
        inputs=[
            int(solver.options.iterations),
            float(solver.options.relaxation),
            float(solver.options.cfm),
            int(solver.core.plan.tree_factor_ok),
            solver.core.plan.dof_parent,
            solver.core.data.mass_factor,
            rows.articulation_capacity,
            rows.free_body_capacity,
            rows.stride,
            rows.world_row_count,
            rows.row_kind,
            rows.row_dof_start,
            rows.row_dof_count,
            rows.row_mass_start,
            rows.row_J,
            rows.row_target,
            rows.row_mu,
            rows.row_key,
            rows.row_body,
        ],
        outputs=[rows.row_order, rows.row_span, rows.row_step, rows.row_Y, rows.row_inv_mass, rows.row_impulse,
                 joint_qd],
        device=solver.model.device,
    )
