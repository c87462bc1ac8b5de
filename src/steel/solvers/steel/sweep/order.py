"""The serial sweep's unit order (``sweep/pgs.py``): which rows start a unit, and each world's units sorted.

A *unit* is a normal or limit row with its tail (the rows after it that belong to it: friction,
spin, rolling, torsion). The sweep visits a world's units top down by ``key`` (a contact pair's mean
body height), so a stack's weight travels down it within one iteration; a body pair's contacts share
a key and end up side by side, as one *group* (``rows.span`` marks each group's ends).

Each world's units are sorted once per sweep by a stable bottom-up merge sort, O(n log n) in the
world's units: a world is one thread's work, and the insertion sort it replaced (rejected) cost O(n^2),
most of the sweep of a large pyramid. The sweep's growth with the rows that is left is not the order's
but the cache's (timings in benchmarks/README.md's performance log).
"""

from __future__ import annotations

import warp as wp

from ..data import ROW_COUPLED, ROW_FRICTION, ROW_PATCH, ROW_ROLLING, ROW_SPIN, ROW_TORSION, RowBuffers


@wp.func(inline=True)
def is_pair(rows: RowBuffers, r: int):
    """Row ``r`` starts a tail pair (solved on a disk, or coupled with its unit row)."""
    k = rows.kind[r]
    return k == ROW_FRICTION or k == ROW_ROLLING or k == ROW_PATCH or k == ROW_COUPLED


@wp.func(inline=True)
def is_sliding_friction(rows: RowBuffers, r: int):
    """Row ``r`` starts a sliding-friction pair (point, patch or coupled), which contact_friction_position_iterations
    gates."""
    return rows.kind[r] == ROW_FRICTION or rows.kind[r] == ROW_PATCH or rows.kind[r] == ROW_COUPLED


@wp.func(inline=True)
def is_unit(rows: RowBuffers, r: int):
    """Row ``r`` starts a unit: a normal or limit row (tail rows follow their unit row)."""
    return not is_pair(rows, r) and rows.kind[r] != ROW_SPIN and rows.kind[r] != ROW_TORSION


@wp.func(inline=True)
def family_rows(rows: RowBuffers, world: int, base: int, family: int):
    """``(first row, count)`` of the rows of ``family`` (0 articulated, 1 free-body) reserved this step in the world
    whose segment starts at ``base``."""
    if family == 1:
        return wp.vec2i(base + rows.articulation_capacity,
                        wp.min(rows.world_row_count[world, 1], rows.free_body_capacity))
    return wp.vec2i(base, wp.min(rows.world_row_count[world, 0], rows.articulation_capacity))


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
def _merge_runs(rows: RowBuffers, src: wp.array[wp.int32], dst: wp.array[wp.int32], base: int, n: int, width: int):
    """One merge-sort pass: the sorted runs of ``width`` units in ``src[base:base + n]``, merged pairwise into
    ``dst``."""
    lo = int(0)
    while lo < n:
        mid = wp.min(lo + width, n)
        hi = wp.min(lo + 2 * width, n)
        a = lo
        b = mid
        # A while loop on a local index, not ``range(lo, hi)``: the same steps without the CPU build's
        # range-iterator bookkeeping per unit.
        k = lo
        while k < hi:
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
            k += 1
        lo = hi


@wp.func  # not inlined: measured below
def order_units(rows: RowBuffers, world: int, base: int):
    """Sort the world's row units into ``rows.order``, mark its groups in ``rows.span``; return the unit count.

    Compiled as a function of its own, called once per world and sweep (the row pool's struct is copied
    into the call, once): inlined into the sweep's kernel the merge took longer, as part of one large
    function (chain x64, whose sweep is mostly this sort and the gate, gained; the other scenes did not
    change). Rejected: a merge picking its next unit by a select instead of a branch (slower either way).
    """
    # Order the world's row units (a normal or limit row, with the friction pair that follows it)
    # by descending key, so a stack's weight travels down it within one iteration; a body pair's
    # contacts share a key and end up side by side.
    unit_count = int(0)
    for family in range(2):
        rows_of = family_rows(rows, world, base, family)
        r = rows_of[0]
        family_end = r + rows_of[1]
        while r < family_end:
            if is_unit(rows, r):
                rows.order[base + unit_count] = r
                unit_count += 1
            r += 1
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
        c = int(0)
        while c < unit_count:
            rows.order[base + c] = rows.span[base + c]
            c += 1
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
