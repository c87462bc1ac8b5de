"""Friction patches: the contacts of one flat touch share their friction at up to two anchors.

Owns which contacts of a region carry friction rows (:func:`region_roles`, read by the contact-row
kernel) and the load a patch anchor's friction disk is bounded by (:func:`patch_bound`, read by the
sweep). Does not own the anchors' carried displacement: that is the contact history's
(``contacts/history.py``), the same as for point friction.

Why. With point friction every corner of a box face has its own disk ``mu lambda_n`` and its own
tangent pair; the sweep must split the face's friction among the corners in proportion to their
normal loads, which an iterative sweep does only approximately, and a statically indeterminate face
(four corners, three independent loads) leaves that split to the iteration order. A patch asks a
simpler question: the whole face may transmit ``mu`` times its total normal impulse, applied at two
points far apart (so a twist is resisted by the couple of the two), however the load is spread over
the corners (PhysX's friction patches; Catto's "Contacts", GDC 2013, solves a manifold's friction at
its centre on the same grounds).

Region. The contacts of one shape pair that sit next to each other in the contact buffer (the
collision pipeline writes a pair's manifold as one run) and agree with the contact in normal
(``PATCH_NORMAL_COS``) and plane (``PATCH_PLANE_DISTANCE``). Its anchors are the two members farthest
apart (its principal extent); of two pairs equally far apart (a rectangle's diagonals) the one more
nearly along ``DIAGONAL_PICK`` in the body frame, so a face keeps the same diagonal every step whatever
order the pipeline writes its corners in; a one-member region has one anchor and no torsional friction
of its own.
Only anchors reserve friction rows (``ROW_PATCH``); every member keeps its own normal row.

Load. Every row of a contact carries its region's name (``rows.region``: the contact index of the
region's first member, from :func:`region_roles`); in the sweep an anchor's disk is ``mu`` times the sum
of the normal impulses of its body-pair group's rows of that region, divided by the number of anchors
among them. Rejected: finding the region in the sweep by normal alone. Two parallel regions of one
body pair then shared one load: a box tipping over its bottom edge had its lifted edge's speculative
contacts (0.1 m above the ground, no normal impulse) as anchors with a share of the touching edge's
load, and their friction held the box tilted 30 degrees on that edge, its centre of mass beyond it.
Rejected too: scaling each anchor's ``mu`` by the region's contact count over two, which is exact only
when the corners carry equal loads.
"""

from __future__ import annotations

import warp as wp

from ..data import ROW_PATCH, RowBuffers

PATCH_NORMAL_COS = wp.constant(0.995)  # contacts within ~5.7 degrees of each other's normal share a patch
PATCH_PLANE_DISTANCE = wp.constant(0.005)  # [m] largest offset along the normal between members of a patch
PATCH_SCAN = wp.constant(32)  # contacts searched on either side of a contact for its region's members
# Direction in shape 1's body frame that picks one of two equally long anchor pairs, the one whose
# separation e has the larger |e . u|: a rectangle's diagonals (a, +-b) in a coordinate plane score
# |3a +- 2b| (or |3a +- c|, |2b +- c|), equal only for a degenerate rectangle, so float noise cannot swap them.
DIAGONAL_PICK = wp.constant(wp.vec3(0.8017837, 0.5345225, 0.2672612))  # (3, 2, 1) / sqrt(14)
MEMBER_BITS = wp.constant(31)  # run members whose membership region_roles tests once and keeps as bits


@wp.func
def region_member(k: int, n: wp.vec3, n_local: wp.vec3, p_local: wp.vec3, contact_normal: wp.array[wp.vec3],
                  contact_point1: wp.array[wp.vec3]):
    """Contact ``k`` of the run agrees with the normal ``n`` and lies on the plane through ``p_local`` normal to
    ``n_local`` (both in the frame of shape 1's body, the frame of ``contact_point1``)."""
    if wp.dot(contact_normal[k], n) < PATCH_NORMAL_COS:
        return False
    return wp.abs(wp.dot(contact_point1[k] - p_local, n_local)) <= PATCH_PLANE_DISTANCE


@wp.func(inline=True)
def region_has(i: int, first: int, members: int, n: wp.vec3, n_local: wp.vec3, p_local: wp.vec3,
               contact_normal: wp.array[wp.vec3], contact_point1: wp.array[wp.vec3]):
    """Contact ``i`` of the run from ``first`` is a member: bit ``i - first`` of ``members`` for the first
    ``MEMBER_BITS`` contacts of the run, tested again (:func:`region_member`) past them."""
    if i - first < MEMBER_BITS:
        return (members >> (i - first)) & 1 != 0
    return region_member(i, n, n_local, p_local, contact_normal, contact_point1)


@wp.func
def region_run(c: int, contact_count: int, contact_shape0: wp.array[wp.int32], contact_shape1: wp.array[wp.int32]):
    """First and last contact of the run of ``c``'s shape pair around it (at most ``PATCH_SCAN`` each way).

    The pipeline writes a pair's manifold contiguously, so a region's members lie in this run.
    """
    first = c
    while first > 0 and c - first < PATCH_SCAN and contact_shape0[first - 1] == contact_shape0[c] \
            and contact_shape1[first - 1] == contact_shape1[c]:
        first -= 1
    last = c
    while last + 1 < contact_count and last - c < PATCH_SCAN and contact_shape0[last + 1] == contact_shape0[c] \
            and contact_shape1[last + 1] == contact_shape1[c]:
        last += 1
    return wp.vec2i(first, last)


@wp.func
def region_roles(
    c: int,
    contact_count: int,
    shape_body: wp.array[int],
    contact_shape0: wp.array[wp.int32],
    contact_shape1: wp.array[wp.int32],
    contact_normal: wp.array[wp.vec3],
    contact_point1: wp.array[wp.vec3],
    body_q: wp.array[wp.transform],
):
    """``(anchor, first, region)``: contact ``c`` is one of the (at most two) anchors of its region (see the
    module docstring), and it is the region's first member in the contact buffer, which hosts the region's
    torsion row (``contacts/torsion.py``), 1 or 0 each; ``region`` is that first member's contact index, which
    names the region in the sweep (``rows.region``)."""
    n = contact_normal[c]
    run = region_run(c, contact_count, contact_shape0, contact_shape1)
    first = run[0]
    last = run[1]
    if first == last:
        return wp.vec3i(1, 1, c)
    # A run is one shape pair, so its support points on shape 1 are all in the frame of one body: the
    # plane offsets and distances between them are taken in that frame, where they equal the world
    # ones, and no member's point is transformed.
    p = contact_point1[c]
    n_local = n
    b = shape_body[contact_shape1[c]]
    if b >= 0:
        n_local = wp.quat_rotate_inv(wp.transform_get_rotation(body_q[b]), n)
    # Each contact of the run is tested once and the farthest-pair search below reads the bits: it tested
    # every later contact again for each member, up to L (L + 1) / 2 tests for a run of L, not L.
    members = int(0)
    for i in range(first, wp.min(last, first + MEMBER_BITS - 1) + 1):
        if region_member(i, n, n_local, p, contact_normal, contact_point1):
            members = members | (1 << (i - first))
    is_first = int(1)
    region = c
    # Farthest pair of members. Pairs within a relative margin of each other in length (the two
    # diagonals of a rectangular face) are told apart by geometry, not by their place in the buffer:
    # the pipeline does not keep a manifold's order from step to step (a box face's four corners come
    # back rotated), and an index tie-break then swapped the diagonals, so the new anchors met
    # records of non-anchors and lost their carried slip and friction seed: each swap let the face
    # slip for good. Measured on a 20-level box pyramid (210 boxes, 800 loaded anchors) when the pick changed:
    # the largest drift after 2 s 3.3 mm -> 0.2 mm; 30 levels, 10 s: 18 mm -> 5 mm. Now (regularized anchors,
    # contacts/rows.py) 0.088 mm at 1 s on 20 levels (tests/solvers/steel/test_pyramid_stands.py); the
    # 30-level pyramid's, too slow for the suite, in benchmarks/README.md ("Statics on real geometry").
    best_i = c
    best_j = c
    best_d = float(-1.0)
    best_s = float(-1.0)
    for i in range(first, last + 1):
        if region_has(i, first, members, n, n_local, p, contact_normal, contact_point1):
            if i < c:
                is_first = 0
                region = wp.min(region, i)
            pi = contact_point1[i]
            for j in range(i + 1, last + 1):
                if region_has(j, first, members, n, n_local, p, contact_normal, contact_point1):
                    e = contact_point1[j] - pi
                    d = wp.length_sq(e)
                    s = wp.abs(wp.dot(e, DIAGONAL_PICK))
                    longer = d > best_d * (1.0 + 1.0e-4) + 1.0e-12
                    tied = not longer and d >= best_d * (1.0 - 1.0e-4) - 1.0e-12
                    if longer or (tied and s > best_s):
                        best_d = d
                        best_s = s
                        best_i = i
                        best_j = j
    if best_d < 0.0:
        return wp.vec3i(1, 1, c)  # c is its region's only member
    return wp.vec3i(int(c == best_i or c == best_j), is_first, region)


@wp.func(inline=True)
def patch_bound(rows: RowBuffers, r: int, f: int, first: int, last: int, base: int, end: int):
    """Disk bound of anchor pair ``f`` of normal row ``r``: its share of the region's normal impulse [N·s].

    ``first``..``last`` is the body-pair group of ``r`` in ``rows.order`` (from ``base``); ``end`` is
    ``reserved_end`` of ``r``, which every member shares (one body pair's rows are of one family), passed
    in because finding it divides by the world capacity, per member and pass in the sweep.
    """
    region = rows.region[r]
    load = float(0.0)
    anchors = int(0)
    for g in range(first, last + 1):
        u = rows.order[base + g]
        if rows.region[u] == region:
            load += rows.impulse[u]
            if u + 1 < end and rows.kind[u + 1] == ROW_PATCH:
                anchors += 1
    return rows.mu[f] * load / float(wp.max(anchors, 1))


@wp.func(inline=True)
def group_patch_load(rows: RowBuffers, first: int, last: int, base: int, end: int):
    """``(load, anchors)`` that every anchor of the body-pair group ``first``..``last`` reads when all its normal
    rows belong to one region; ``anchors`` -1 when they do not.

    Each anchor's :func:`patch_bound` then sums the same members in the same order, so the sum is formed once
    per group and pass instead of once per anchor: bitwise the same bound. The normal impulses it sums do not
    change while the group's tails are solved.
    """
    region = rows.region[rows.order[base + first]]
    load = float(0.0)
    anchors = int(0)
    for g in range(first, last + 1):
        u = rows.order[base + g]
        if rows.region[u] != region:
            return wp.vec2(0.0, -1.0)
        load += rows.impulse[u]
        if u + 1 < end and rows.kind[u + 1] == ROW_PATCH:
            anchors += 1
    return wp.vec2(load, float(anchors))
