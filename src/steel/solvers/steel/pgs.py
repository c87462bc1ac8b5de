"""The projected Gauss-Seidel impulse sweep, serial per world (``solve_mode="serial"``).

One thread per world walks the world's rows in order, ``iterations`` times, and applies each
row's impulse change to the joint velocities at once (Catto, "Iterative Dynamics with Temporal
Coherence", GDC 2005; matrix-free: ``J qd`` is recomputed from the current velocities each time,
only ``Y`` and the diagonal ``J Y`` are stored). The sweep does not know which family a row
came from; it distinguishes only

* unilateral rows (contact normals, limits): ``lambda <- max(lambda + w (target - J qd) / (J Y + cfm), 0)``;
* friction pairs: both tangents are updated from the same velocities (a Jacobi step within the
  pair) and the pair is projected onto the disk ``|lambda_t| <= mu lambda_n`` of the normal row
  just before it, which keeps the friction isotropic (maximum dissipation on the disk).

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
    # Data in/out:
    row_order: wp.array[wp.int32],
    row_Y: wp.array[float],
    row_inv_mass: wp.array[float],
    row_impulse: wp.array[float],
    joint_qd: wp.array[float],
):
    world = wp.tid()  # one thread per world
    base = world * (articulation_capacity + free_body_capacity)
    # Order the world's row units (a normal or limit row, with the friction pair that follows it)
    # by descending key, so a stack's weight travels down it within one iteration.
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
                # insertion sort, stable
                k = unit_count
                while k > 0 and row_key[row_order[base + k - 1]] < row_key[r]:
                    row_order[base + k] = row_order[base + k - 1]
                    k -= 1
                row_order[base + k] = r
                unit_count += 1
    # Warm start: apply the impulses the rows start from (cold rows start at zero and are skipped).
    end = base + articulation_capacity + free_body_capacity
    for u in range(unit_count):
        r = row_order[base + u]
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
        for uu in range(unit_count):
            # Alternate the direction of the sweep (symmetric Gauss-Seidel): a one-directional
            # order biases simultaneous impacts toward the first corners it meets and twists boxes.
            u = uu
            if it % 2 == 1:
                u = unit_count - 1 - uu
            r = row_order[base + u]
            v = _row_velocity(r, stride, row_dof_start, row_dof_count, row_J, joint_qd)
            old = row_impulse[r]
            # An untouched row that is satisfied needs no response: most speculative rows never do.
            if old != 0.0 or v < row_target[r]:
                _ensure_response(r, stride, cfm, use_tree, dof_parent, mass_factor, row_dof_start, row_dof_count,
                                 row_mass_start, row_J, row_Y, row_inv_mass)
                new = wp.max(old + relaxation * (row_target[r] - v) * row_inv_mass[r], 0.0)
                _apply(r, stride, new - old, row_dof_start, row_dof_count, row_Y, joint_qd)
                row_impulse[r] = new
            f = r + 1
            if f < end and row_kind[f] == ROW_FRICTION:
                # Friction pair f, f + 1 on the disk of the normal row r.
                bound = row_mu[f] * row_impulse[r]
                if bound == 0.0 and row_impulse[f] == 0.0 and row_impulse[f + 1] == 0.0:
                    continue
                _ensure_response(f, stride, cfm, use_tree, dof_parent, mass_factor, row_dof_start, row_dof_count,
                                 row_mass_start, row_J, row_Y, row_inv_mass)
                _ensure_response(f + 1, stride, cfm, use_tree, dof_parent, mass_factor, row_dof_start,
                                 row_dof_count, row_mass_start, row_J, row_Y, row_inv_mass)
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
        ],
        outputs=[rows.row_order, rows.row_Y, rows.row_inv_mass, rows.row_impulse, joint_qd],
        device=solver.model.device,
    )
