"""SolverSteel's row buffers and per-step scratch, declared once.

Rows live in one pool split into fixed per-world segments: world ``w`` owns rows
``[w * world_row_capacity, (w + 1) * world_row_capacity)``; inside it, rows of articulated bodies
fill ``[0, articulation_capacity)`` and free-body rows ``[articulation_capacity, world_row_capacity)``
(the two families of the reference's ``articulation_constraint_max`` and
``free_body_constraint_max``). A row has up to two *sides*; side ``s`` acts on the contiguous
DOF range ``[row_dof_start[r, s], + row_dof_count[r, s])`` of one articulation (count 0: no side).

Every row is a velocity constraint ``J qd >= target`` (bilateral rows would use both bounds),
solved for an impulse ``lambda`` in generalized coordinates: ``qd += Y lambda`` with the
response ``Y = H^-1 J^T``.

=====================  =============================================================================  ===========
field                  meaning [units]                                                                shape
=====================  =============================================================================  ===========
world_row_count        rows reserved this step per world and family (0 articulated, 1 free-body)     (world, 2)
world_rows_dropped     rows that did not fit, per world and family, since the last reset              (world, 2)
constraint_overflow    a world dropped rows (last entry: global articulations) since the last reset  (world + 1,)
row_kind               ``ROW_CONTACT``, ``ROW_FRICTION``, ``ROW_LIMIT``                               (row,)
row_dof_start/count    DOF range of each side                                                         (row, 2)
row_mass_start         factor block of each side's articulation; -1 for a prescribed side (no impulse) (row, 2)
row_J                  Jacobian over each side's DOFs [m/s or rad/s per unit qd... per unit lambda]  (row, 2 * stride)
row_Y                  response ``H^-1 J^T`` of each side [qd per N·s]                                (row, 2 * stride)
row_inv_mass           ``1 / (J Y + cfm)`` [1/kg or 1/(kg·m²)]; -1 until the sweep forms the response  (row,)
row_target             velocity target of ``J qd`` [m/s or rad/s]                                      (row,)
row_mu                 friction coefficient of a friction pair's first row (non-dimensional)          (row,)
row_impulse            accumulated impulse ``lambda`` [N·s or N·m·s]                                   (row,)
row_contact            contact index of a contact/friction row, -1 otherwise                          (row,)
row_dir                direction of the row in world frame (contact normal or tangent), for forces   (row,)
row_body               the two bodies of a contact row (-1: static); -1, -1 on limit rows             (row, 2)
row_key                sweep order, larger first: the pair's mean body height [m]; limits 1e30        (row,)
row_order              sweep scratch: units (normal/limit rows) sorted by key, then body pair         (row,)
row_span               sweep scratch: at either end of a group's sorted run, the other end            (row,)
row_step               sweep scratch: the Jacobi step of each row of a group [N·s or N·m·s]           (row,)
=====================  =============================================================================  ===========

A contact takes one ``ROW_CONTACT`` row followed, when it has friction, by two ``ROW_FRICTION``
rows (tangents ``t1``, ``t2``) whose pair is solved together on the disk ``|lambda_t| <= mu lambda_n``.
"""

from __future__ import annotations

import warp as wp

ROW_CONTACT = wp.constant(0)
ROW_FRICTION = wp.constant(1)
ROW_LIMIT = wp.constant(2)

FAMILY_ARTICULATED = wp.constant(0)
FAMILY_FREE_BODY = wp.constant(1)


class SteelRows:
    """The row pool of one solver, allocated once at construction."""

    def __init__(self, world_count: int, articulation_capacity: int, free_body_capacity: int, stride: int, device):
        self.world_count = world_count
        self.articulation_capacity = articulation_capacity
        self.free_body_capacity = free_body_capacity
        self.world_row_capacity = articulation_capacity + free_body_capacity
        self.stride = stride
        n = max(world_count * self.world_row_capacity, 1)
        self.row_count_total = n
        self.world_row_count = wp.zeros((world_count, 2), dtype=wp.int32, device=device)
        self.world_rows_dropped = wp.zeros((world_count, 2), dtype=wp.int32, device=device)
        self.constraint_overflow = wp.zeros(world_count + 1, dtype=wp.bool, device=device)
        self.row_kind = wp.zeros(n, dtype=wp.int32, device=device)
        self.row_dof_start = wp.zeros((n, 2), dtype=wp.int32, device=device)
        self.row_dof_count = wp.zeros((n, 2), dtype=wp.int32, device=device)
        self.row_mass_start = wp.zeros((n, 2), dtype=wp.int32, device=device)
        self.row_J = wp.zeros(n * 2 * stride, dtype=float, device=device)
        self.row_Y = wp.zeros(n * 2 * stride, dtype=float, device=device)
        self.row_inv_mass = wp.zeros(n, dtype=float, device=device)
        self.row_target = wp.zeros(n, dtype=float, device=device)
        self.row_mu = wp.zeros(n, dtype=float, device=device)
        self.row_impulse = wp.zeros(n, dtype=float, device=device)
        self.row_contact = wp.full(n, -1, dtype=wp.int32, device=device)
        self.row_dir = wp.zeros(n, dtype=wp.vec3, device=device)
        self.row_key = wp.zeros(n, dtype=float, device=device)
        self.row_body = wp.full((n, 2), -1, dtype=wp.int32, device=device)
        self.row_order = wp.zeros(n, dtype=wp.int32, device=device)
        self.row_span = wp.zeros(n, dtype=wp.int32, device=device)
        self.row_step = wp.zeros(n, dtype=float, device=device)

    def begin_step(self) -> None:
        """Forget last step's rows (counts only: rows past a world's count are never read)."""
        self.world_row_count.zero_()
