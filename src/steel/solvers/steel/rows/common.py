"""Shared row mechanics: slot reservation with overflow accounting, point Jacobians and responses.

Every row family (contacts, friction, limits) goes through these functions, so the sweep never
needs to know which family a row came from (``docs/architecture.md``, "Rows").
"""

from __future__ import annotations

import warp as wp

from ....articulation.factor import factor_solve
from ....articulation.spatial import point_velocity
from ..data import FAMILY_FREE_BODY


@wp.func
def reserve_rows(
    world: int,
    family: int,
    count: int,
    articulation_capacity: int,
    free_body_capacity: int,
    world_row_count: wp.array2d[wp.int32],
    world_rows_dropped: wp.array2d[wp.int32],
    constraint_overflow: wp.array[wp.bool],
):
    """Reserve ``count`` consecutive rows of ``family`` in ``world``; return the first row or -1.

    Rows that do not fit are never written: the world's drop counter grows by ``count`` and its
    ``constraint_overflow`` flag is set, so a drop is never silent. A reservation is all or
    nothing, so a contact never loses its friction rows while keeping its normal row.
    """
    capacity = articulation_capacity
    offset = int(0)
    if family == FAMILY_FREE_BODY:
        capacity = free_body_capacity
        offset = articulation_capacity
    slot = wp.atomic_add(world_row_count, world, family, count)
    if slot + count > capacity:
        wp.atomic_add(world_rows_dropped, world, family, count)
        constraint_overflow[world] = True
        # Give the slots back only logically: readers clamp counts to the capacity.
        return -1
    return world * (articulation_capacity + free_body_capacity) + offset + slot


@wp.func
def write_point_jacobian(
    body: int,
    point_rel: wp.vec3,
    direction: wp.vec3,
    sign: float,
    dof_start: int,
    dof_count: int,
    body_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    joint_qd_start: wp.array[int],
    dof_S: wp.array[wp.spatial_vector],
    J_offset: int,
    row_J: wp.array[float],
):
    """Write ``sign * direction . v(point)`` per unit ``qd`` for the DOFs of ``body``'s articulation.

    ``point_rel`` is the world point relative to the articulation's reference point [m]. DOFs that
    are not on the path from the root to ``body`` get zero.
    """
    for k in range(dof_count):
        row_J[J_offset + k] = 0.0
    j = body_joint[body]
    while j >= 0:
        for d in range(joint_qd_start[j], joint_qd_start[j + 1]):
            row_J[J_offset + d - dof_start] = sign * wp.dot(direction, point_velocity(dof_S[d], point_rel))
        j = joint_parent_joint[j]


@wp.func
def side_response(
    use_tree: int,
    dof_start: int,
    dof_count: int,
    mass_start: int,
    offset: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    row_J: wp.array[float],
    row_Y: wp.array[float],
):
    """``Y = H^-1 J^T`` for one side; returns ``J Y``, that side's share of the row's inverse mass."""
    factor_solve(use_tree, dof_count, mass_start, dof_start, offset, dof_parent, mass_factor, row_J, 1.0, row_Y)
    jy = float(0.0)
    for k in range(dof_count):
        jy += row_J[offset + k] * row_Y[offset + k]
    return jy


@wp.func
def side_velocity(offset: int, dof_start: int, dof_count: int, row_J: wp.array[float], joint_qd: wp.array[float]):
    """``J qd`` of one side [m/s or rad/s]."""
    s = float(0.0)
    for k in range(dof_count):
        s += row_J[offset + k] * joint_qd[dof_start + k]
    return s
