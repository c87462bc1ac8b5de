"""Contact row sides: the DOF range each side of a contact's rows acts on, and where each body's Jacobian goes.

Owns how the contact-row kernel (``contacts.py``) fills ``rows.dof_start``, ``rows.dof_count``,
``rows.mass_start`` and ``rows.J`` of a contact's rows (normal, friction pair, angular rows). The sweep
reads a row's sides generically (``rows/common.py``); this module decides what the sides are.

Self-contact: one side. When both bodies belong to one articulation and both respond (the links of a
chain folding onto each other), a row written as two sides over the same DOF range made the sweep run
``J qd``, ``Y = H^-1 J^T`` and every impulse application twice over those DOFs, and formed ``J Y`` as
``J0 H^-1 J0^T + J1 H^-1 J1^T``: the cross term ``2 J0 H^-1 J1^T`` was missing, so the row's effective
mass was wrong wherever the two bodies share ancestors (their common joints move both contact points
together, which the relative velocity does not see). Such a contact gets one side holding the
summed Jacobian ``J0 + J1`` (side 1 has ``dof_count`` 0), whose ``J Y`` is the row's true
``J H^-1 J^T``; ``rows.body`` still names both bodies, so grouping, islands and observables are
unchanged. A prescribed (kinematic) body keeps its own side, which takes no impulse.

Each side's Jacobian is :func:`~..rows.common.add_point_jacobian` over the body's joint path, summed into a
zeroed range, so a contact of two articulations, or of one against the world, is written bitwise as before. The
ranges are set first (:func:`set_side_range`) and the translational rows' Jacobians written last
(:func:`write_contact_jacobians`), so a dormant contact (``contacts/dormant.py``) skips that and the sweep
repeats it, bitwise, only if it needs the rows. A side whose body's path descends through the DOF numbering
(:func:`path_descends`: each joint's DOFs below the one walked before it, as in a tree numbered parent first) is
written in one pass (:func:`fill_contact_jacobians`): the path's entries as ``0.0 + term``, the bits a cleared
entry plus the walk's term give, the rest 0.0, each stored once and none read back. A self-contact's shared side
takes body 0's pass, then body 1's walk adds to it (:func:`add_contact_jacobians`); a side whose path does not
descend is cleared and walked (:func:`clear_side`). The one pass pays where the articulation is wider than the
contact's path (a humanoid's foot against the ground: most of its side is zeros); the clear and the walks loop
with ``while``, which the CPU build runs cheaper per entry than ``range`` (timings in benchmarks/README.md's
performance log).
"""

from __future__ import annotations

import warp as wp

from ....articulation.spatial import point_velocity
from ..data import RowBuffers
from ..rows.common import side_offset


@wp.func(inline=True)  # five array arguments: an out-of-line call would copy their headers
def contact_side(
    body: int,
    body_articulation: wp.array[int],
    body_responds: wp.array[wp.int32],
    art_dof_start: wp.array[int],
    art_dof_count: wp.array[int],
    art_mass_start: wp.array[int],
):
    """``(dof_start, dof_count, mass_start, articulation)`` of the side acting on ``body``.

    ``dof_count`` 0 and articulation -1: no side (static, or outside every articulation); ``mass_start``
    -1: a prescribed side, which keeps its Jacobian (the row sees its motion) but takes no impulse.
    """
    if body < 0:
        return wp.vec4i(0, 0, -1, -1)
    art = body_articulation[body]
    if art < 0:
        return wp.vec4i(0, 0, -1, -1)
    mass_start = int(-1)
    if body_responds[body] != 0:
        mass_start = art_mass_start[art]
    return wp.vec4i(art_dof_start[art], art_dof_count[art], mass_start, art)


@wp.func(inline=True)
def shares_side(side0: wp.vec4i, side1: wp.vec4i):
    """The two sides are one responding articulation's: the contact's rows get one side holding ``J0 + J1``."""
    return side0[3] >= 0 and side0[3] == side1[3] and side0[2] >= 0 and side1[2] >= 0


@wp.func(inline=True)
def set_side_range(rows: RowBuffers, row: int, s: int, side: wp.vec4i):
    """Side ``s`` of ``row`` acts on ``side``'s DOF range (count 0: none); its Jacobian is left as it is."""
    rows.dof_count[row, s] = side[1]
    if side[1] > 0:
        rows.dof_start[row, s] = side[0]
        rows.mass_start[row, s] = side[2]


@wp.func(inline=True)
def clear_side(rows: RowBuffers, row: int, s: int):
    """Zero side ``s``'s Jacobian range of ``row`` (as its range was set)."""
    # A while loop over a local array handle: the same stores as ``for k in range(count): rows.J[offset + k] = 0.0``,
    # which the CPU build ran slower per entry (timings in benchmarks/README.md's performance log).
    J = rows.J
    k = side_offset(rows, row, s)
    end = k + rows.dof_count[row, s]
    while k < end:
        J[k] = 0.0
        k += 1


@wp.func(inline=True)
def clear_side_jacobians(rows: RowBuffers, row: int):
    """Zero both sides' Jacobian ranges of ``row`` (as its ranges were set), before the walks add to them."""
    clear_side(rows, row, 0)
    clear_side(rows, row, 1)


@wp.func(inline=True)
def add_contact_jacobians(
    rows: RowBuffers,
    r: int,
    s: int,
    translational: int,
    body: int,
    point_rel: wp.vec3,
    n: wp.vec3,
    t1: wp.vec3,
    t2: wp.vec3,
    sign: float,
    dof_start: int,
    body_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    joint_qd_start: wp.array[int],
    dof_S: wp.array[wp.spatial_vector],
):
    """:func:`~..rows.common.add_point_jacobian` of ``body`` at ``point_rel`` into side ``s`` of the contact's first
    ``translational`` rows (1: the normal row ``r``; 3: also its friction pair ``r + 1``, ``r + 2`` along
    ``t1``, ``t2``), which act at the same points.

    One walk up the joint path serves all three rows: each DOF's point velocity is formed once, not once
    per row. Every entry gets the same products and sums, in the same order, as a walk per row. Each entry
    is added to what the side holds (cleared, or the other body's walk of a shared side).
    """
    o0 = side_offset(rows, r, s)
    o1 = side_offset(rows, r + 1, s)
    o2 = side_offset(rows, r + 2, s)
    J = rows.J
    j = body_joint[body]
    while j >= 0:
        # While loops, not ``range``: the same entries in the same order, cheaper on the CPU (performance log).
        d = joint_qd_start[j]
        d_end = joint_qd_start[j + 1]
        while d < d_end:
            m = point_velocity(dof_S[d], point_rel)
            i = d - dof_start
            J[o0 + i] = J[o0 + i] + sign * wp.dot(n, m)
            if translational == 3:
                J[o1 + i] = J[o1 + i] + sign * wp.dot(t1, m)
                J[o2 + i] = J[o2 + i] + sign * wp.dot(t2, m)
            d += 1
        j = joint_parent_joint[j]


@wp.func(inline=True)
def path_descends(body: int, dof_start: int, dof_count: int, body_joint: wp.array[int],
                  joint_parent_joint: wp.array[int], joint_qd_start: wp.array[int]):
    """1 when ``body``'s joint path, walked from the body to the root, holds DOF ranges inside the side's
    ``[dof_start, dof_start + dof_count)``, each at or below the one walked before it (a parent's DOFs precede
    its children's, as Newton numbers them): :func:`fill_contact_jacobians` can then write the side in one pass."""
    j = body_joint[body]
    if j < 0:
        return 0
    top = dof_start + dof_count
    while j >= 0:
        lo = joint_qd_start[j]
        if lo < dof_start or joint_qd_start[j + 1] > top:
            return 0
        top = lo
        j = joint_parent_joint[j]
    return 1


@wp.func(inline=True)
def zero_entries(J: wp.array[float], o0: int, o1: int, o2: int, translational: int, i: int, end: int):
    """Zero entries ``i .. end - 1`` of the contact's first ``translational`` rows (offsets ``o0``, ``o1``, ``o2``)."""
    while i < end:
        J[o0 + i] = 0.0
        if translational == 3:
            J[o1 + i] = 0.0
            J[o2 + i] = 0.0
        i += 1


@wp.func(inline=True)
def fill_contact_jacobians(
    rows: RowBuffers,
    r: int,
    s: int,
    translational: int,
    body: int,
    point_rel: wp.vec3,
    n: wp.vec3,
    t1: wp.vec3,
    t2: wp.vec3,
    sign: float,
    dof_start: int,
    dof_count: int,
    body_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    joint_qd_start: wp.array[int],
    dof_S: wp.array[wp.spatial_vector],
):
    """Side ``s`` of the contact's first ``translational`` rows written whole in one pass, for a body whose path
    descends (:func:`path_descends`): each DOF of the path gets ``0.0 + term`` (the bits a cleared entry plus
    :func:`add_contact_jacobians`' term give), every other entry 0.0, each entry stored once and none read back."""
    o0 = side_offset(rows, r, s)
    o1 = side_offset(rows, r + 1, s)
    o2 = side_offset(rows, r + 2, s)
    J = rows.J
    top = dof_count  # entries from here up are written
    j = body_joint[body]
    while j >= 0:
        d = joint_qd_start[j]
        d_end = joint_qd_start[j + 1]
        zero_entries(J, o0, o1, o2, translational, d_end - dof_start, top)
        top = d - dof_start
        while d < d_end:
            m = point_velocity(dof_S[d], point_rel)
            i = d - dof_start
            J[o0 + i] = 0.0 + sign * wp.dot(n, m)
            if translational == 3:
                J[o1 + i] = 0.0 + sign * wp.dot(t1, m)
                J[o2 + i] = 0.0 + sign * wp.dot(t2, m)
            d += 1
        j = joint_parent_joint[j]
    zero_entries(J, o0, o1, o2, translational, 0, top)


@wp.func(inline=True)
def write_contact_jacobians(
    rows: RowBuffers,
    r: int,
    count: int,
    b0: int,
    start0: int,
    arm0: wp.vec3,
    b1: int,
    start1: int,
    side_of_1: int,
    arm1: wp.vec3,
    n: wp.vec3,
    t1: wp.vec3,
    t2: wp.vec3,
    body_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    joint_qd_start: wp.array[int],
    dof_S: wp.array[wp.spatial_vector],
):
    """Clear the Jacobians of a contact's first ``count`` translational rows from ``r`` and walk both bodies' paths.

    ``start0``/``start1`` are the first DOFs of the bodies' articulations (-1: no side); body 1's Jacobian goes
    to side ``side_of_1`` (0: a self-contact's shared side). The contact-row kernel and the sweep's
    materialization of a dormant contact (``contacts/dormant.py``) both write through here, so the two are bitwise
    the same.
    """
    # A side whose body's path descends (every side of a tree numbered parent first) is written in one pass; a
    # self-contact's shared side takes body 0's pass, then body 1's walk adds to it; any other side is cleared
    # first and walked, as every side was.
    fill0 = int(0)
    if start0 >= 0:
        fill0 = path_descends(b0, start0, rows.dof_count[r, 0], body_joint, joint_parent_joint, joint_qd_start)
    fill1 = int(0)
    if start1 >= 0 and side_of_1 == 1:
        fill1 = path_descends(b1, start1, rows.dof_count[r, 1], body_joint, joint_parent_joint, joint_qd_start)
    for k in range(count):
        if fill0 == 0:
            clear_side(rows, r + k, 0)
        if fill1 == 0:
            clear_side(rows, r + k, 1)
    if start0 >= 0:
        if fill0 != 0:
            fill_contact_jacobians(rows, r, 0, count, b0, arm0, n, t1, t2, -1.0, start0, rows.dof_count[r, 0],
                                   body_joint, joint_parent_joint, joint_qd_start, dof_S)
        else:
            add_contact_jacobians(rows, r, 0, count, b0, arm0, n, t1, t2, -1.0, start0, body_joint,
                                  joint_parent_joint, joint_qd_start, dof_S)
    if start1 >= 0:
        if fill1 != 0:
            fill_contact_jacobians(rows, r, 1, count, b1, arm1, n, t1, t2, 1.0, start1, rows.dof_count[r, 1],
                                   body_joint, joint_parent_joint, joint_qd_start, dof_S)
        else:
            add_contact_jacobians(rows, r, side_of_1, count, b1, arm1, n, t1, t2, 1.0, start1, body_joint,
                                  joint_parent_joint, joint_qd_start, dof_S)
