"""SolverSteel's row buffers, declared once: the ``RowBuffers`` struct and the ``SteelRows`` pool.

Rows live in one pool split into fixed per-world segments: world ``w`` owns rows
``[w * world_row_capacity, (w + 1) * world_row_capacity)``; inside it, rows of articulated bodies
fill ``[0, articulation_capacity)`` and free-body rows ``[articulation_capacity, world_row_capacity)``
(the two families of the reference's ``articulation_constraint_max`` and
``free_body_constraint_max``). A row has up to two *sides*; side ``s`` acts on the contiguous
DOF range ``[rows.dof_start[r, s], + rows.dof_count[r, s])`` of one articulation (count 0: no side).

Every row is a velocity constraint ``J qd >= target`` (bilateral rows would use both bounds),
solved for an impulse ``lambda`` in generalized coordinates: ``qd += Y lambda`` with the
response ``Y = H^-1 J^T``.

A contact takes one ``ROW_CONTACT`` row followed, when it has friction, by two ``ROW_FRICTION``
rows (tangents ``t1``, ``t2``) whose pair is solved together on the disk ``|lambda_t| <= mu lambda_n``
(with friction patches, the default, only a region's anchors carry the pair, as ``ROW_PATCH`` rows
whose disk is their share of the region's normal impulse, ``contacts/patches.py``),
then, on a free-body contact whose shape has ``steel:condim`` 4 or 6, one ``ROW_SPIN`` row (relative
angular velocity about the normal) bounded by ``|lambda_s| <= mu_t lambda_n`` and, at condim 6, two
``ROW_ROLLING`` rows (relative angular velocity about ``t1``, ``t2``) solved as a pair on the disk
``|lambda_r| <= mu_r lambda_n`` (``contacts/angular.py``); an articulated contact that hosts its region's
patch torsion ends with one ``ROW_TORSION`` row (``contacts/torsion.py``). Angular rows carry ``dir = 0``: they add no force
to ``contact_f`` and the friction history. The rows that follow a unit's first row (a normal or limit
row) and belong to it are its *tail*: the sweep solves a tail pair (``ROW_FRICTION``, ``ROW_ROLLING``) on
a disk and a single tail row (``ROW_SPIN``) on an interval, both scaled by the unit row's impulse.

A row may carry a ``preload``, an impulse applied once before the sweep outside the row's bounds
(adhesion's pull ``-A dt`` on a normal row, ``contacts/adhesion.py``); the row's net impulse, which the
observables report, is ``impulse + preload``.

Every row kernel and ``wp.func`` takes the pool as one ``RowBuffers`` argument named ``rows``
(``rows.J[...]``, ``rows.impulse[r]``), as the articulation kernels take ``JointModel``: the row
families and the sweep read the same fields by the same names, and a new field is added in one
place instead of in every signature and launch.

Warp passes a struct by value, and ``RowBuffers`` holds 30 array headers: a ``wp.func`` taking it
that the C++ compiler keeps out of line copies all of it on every call. Every ``wp.func`` that takes
``RowBuffers`` is therefore declared ``@wp.func(inline=True)``, except ``order_units`` (``sweep/order.py``),
called once per world and sweep. Rejected: the compiler's own inlining choices, which made the sweep
slower than the separate arrays the struct replaced (timings in benchmarks/README.md's performance log).
"""

from __future__ import annotations

import warp as wp

from ...host_views import host_view, host_writable
from ...structs import require_contiguous

# The one spelling of "no bound" in the row pool and its families: a bilateral row's box |lambda| <= UNBOUNDED,
# a gap speed of -UNBOUNDED (none), an internal row's sweep key UNBOUNDED (first), an island timer's identity.
# A float32-representable stand-in for infinity (inf would turn 0 * inf products into NaN in the sweep's sums).
UNBOUNDED = wp.constant(1.0e30)
# A magnitude at least this large reads as UNBOUNDED: below it by a decade, so float32 rounding of UNBOUNDED
# and sums with ordinary values stay above it.
UNBOUNDED_AT_LEAST = wp.constant(1.0e29)

ROW_CONTACT = wp.constant(0)
ROW_FRICTION = wp.constant(1)
ROW_LIMIT = wp.constant(2)
ROW_SPIN = wp.constant(3)
ROW_ROLLING = wp.constant(4)
ROW_PATCH = wp.constant(5)  # a friction-patch anchor's tangent pair: its disk is a share of the region's load
# A tangent pair solved together with its normal row by a coupled per-contact update (a
# ``friction_mode`` other than "fixed_normal", ``contacts/friction_modes.py``).
ROW_COUPLED = wp.constant(6)
# A patch-torsion row (``steel:min_torsional_patch_radius``, ``contacts/torsion.py``): one per contact region
# of an articulated body, solved after its group's other rows on a budget shared with sliding friction.
ROW_TORSION = wp.constant(7)
# Boxed one-DOF rows, ``|lambda| <= rows.mu[r]`` [N·s or N·m·s] around their target: joint friction
# (``joints/friction.py``) and, soft, drive rows (``joints/drives.py``). Velocity sweeps with
# ``velocity_drive_mode="freeze"`` turn drive rows into ``ROW_FROZEN``, which keep their impulse.
ROW_BOX = wp.constant(8)
ROW_DRIVE = wp.constant(9)
ROW_FROZEN = wp.constant(10)
# A fused velocity limit (``joints/velocity_limits.py``): no accumulated impulse; at the end of every iteration the
# sweep applies the impulse that puts its DOF's velocity on ``|qd| <= rows.mu[r]``, through the articulation.
ROW_CLAMP = wp.constant(11)
# A velocity-limit row of an undriven DOF (``joints/velocity_limits.py``): unilateral like ``ROW_LIMIT``, but its
# impulse only grows within a step (a pass never hands back what an earlier pass applied), as the reference's.
ROW_SPEED_LIMIT = wp.constant(12)

# A positive gap whose linearized end-of-step gap ``phi + dt J qd`` (under the position-solve velocity)
# is at most this fraction of ``phi`` counts as closed in the velocity sweeps (``velocity_iterations``)
# and is arrested. Not 0: a landing contact's solved J qd sits within float rounding of ``-phi / dt``,
# on either side (measured: -2.399999 for -2.4 on a landing box), and the test must not depend on it.
GAP_OPEN_FRACTION = wp.constant(0.01)

FAMILY_ARTICULATED = wp.constant(0)
FAMILY_FREE_BODY = wp.constant(1)


@wp.struct
class RowBuffers:
    """The row pool as one Warp struct (see the module docstring). Comments: meaning [units] (shape)."""

    # Layout (scalars, fixed at construction):
    articulation_capacity: int  # articulated-family rows per world
    free_body_capacity: int  # free-body-family rows per world
    world_row_capacity: int  # articulation_capacity + free_body_capacity: rows per world segment
    stride: int  # J and Y entries per side: the largest articulation's DOF count
    late_rows: int  # 1 when some rows are solved after their group's other tails (patch torsion), else 0
    clamp_rows: int  # 1 when the sweep clamps fused velocity limits (ROW_CLAMP) after each iteration, else 0
    # Reservation and overflow accounting, per world and family (0 articulated, 1 free-body):
    world_row_count: wp.array2d[wp.int32]  # rows reserved this step  (world, 2)
    world_rows_dropped: wp.array2d[wp.int32]  # rows that did not fit since the last reset  (world, 2)
    constraint_overflow: wp.array[wp.bool]  # a world dropped rows since the last reset; last entry:
    #                                         global articulations  (world + 1,)
    # Rows, written by the row families (rows/):
    kind: wp.array[wp.int32]  # ROW_CONTACT, ROW_FRICTION, ROW_LIMIT, ROW_SPIN, ROW_ROLLING, ROW_PATCH,
    #                          ROW_COUPLED, ROW_TORSION, ROW_BOX, ROW_DRIVE, ROW_FROZEN, ROW_CLAMP  (row,)
    dof_start: wp.array2d[wp.int32]  # first DOF of each side  (row, 2)
    dof_count: wp.array2d[wp.int32]  # DOF count of each side, 0: no side  (row, 2)
    mass_start: wp.array2d[wp.int32]  # factor block of each side's articulation; -1: prescribed side,
    #                                   which takes no impulse  (row, 2)
    J: wp.array[float]  # Jacobian over each side's DOFs [m/s or rad/s per unit qd]; side s of row r
    #                     starts at (2 r + s) stride  (row * 2 * stride,)
    target: wp.array[float]  # velocity target of J qd [m/s or rad/s]  (row,)
    velocity_target: wp.array[float]  # target of the velocity-only sweeps (``velocity_iterations``): no
    #                                   position bias; a positive gap's allowance, a rebound, else 0  (row,)
    gap_speed: wp.array[float]  # -(1 - GAP_OPEN_FRACTION) phi / dt of a row with a positive gap: at or
    #                             below this J qd its linearized end-of-step gap counts as closed; -UNBOUNDED
    #                             on every other row  (row,)
    mu: wp.array[float]  # friction coefficient of a contact's rows (non-dimensional); angular rows: the
    #                      bound per unit normal impulse [m]; boxed rows: the bound [N·s or N·m·s]  (row,)
    contact: wp.array[wp.int32]  # contact index of a contact/friction row, -1 otherwise  (row,)
    region: wp.array[wp.int32]  # friction patch region of a contact's normal row (contacts/patches.py): the contact
    #                             index of the region's first member; read only on contact normal rows  (row,)
    dir: wp.array[wp.vec3]  # row direction in world frame (contact normal or tangent), for forces  (row,)
    body: wp.array2d[wp.int32]  # the two bodies of a contact row (-1: static); -1, -1 on limit rows  (row, 2)
    key: wp.array[float]  # sweep order, larger first: the pair's mean body height [m]; limits UNBOUNDED  (row,)
    # Solution, seeded by the row families (warm start) and solved by the sweep (sweep/pgs.py):
    impulse: wp.array[float]  # accumulated impulse lambda [N·s or N·m·s]  (row,)
    preload: wp.array[float]  # impulse applied before the sweep, outside the bounds [N·s]; 0 on most rows  (row,)
    Y: wp.array[float]  # response H^-1 J^T of each side [qd per N·s], laid out as J  (row * 2 * stride,)
    inv_mass: wp.array[float]  # 1 / (J Y + cfm) [1/kg or 1/(kg·m²)]; -1 until the sweep forms it; -2 / -3: a
    #                            dormant contact's normal row, its J not written yet (contacts/dormant.py)  (row,)
    # Sweep scratch:
    order: wp.array[wp.int32]  # units (normal and limit rows) sorted by key, then body pair  (row,)
    span: wp.array[wp.int32]  # at either end of a group's sorted run, the other end  (row,)
    step: wp.array[float]  # the Jacobi step of each row of a group [N·s or N·m·s]  (row,)
    bound: wp.array[float]  # a tail row's bound at its last projection [N·s or N·m·s]  (row,)
    regularization: wp.array[float]  # g of a penetrating contact row (contact_regularization) or of a settled
    #                                  friction anchor's pair (contacts/rows.py), 0: rigid, non-dimensional  (row,)
    compliance: wp.array[float]  # softness s of a compliant contact row (contact_compliance): the row
    #                              holds J qd >= target - s lambda [m/(N·s²) = 1/kg]; 0: rigid  (row,)
    # The gate on rows that cannot act (sweep/pgs.py, "Gate"): a bound on how far each world's joint velocities
    # moved, and each unit row's velocity when it was last computed in full.
    gate_rounding: float  # relative float32 rounding allowed on a J qd sum and its bounds, from stride;
    #                      inf switches the gate off (every test fails), and the sweep's skip of
    #                      passes that would repeat one that applied nothing (sweep/pgs.py)
    y_max: wp.array[float]  # max_k |Y_k| of the row's response [qd per N·s], formed with it  (row,)
    world_drift: wp.array[float]  # bound on the sum of max_k |change of qd_k| of the applies since the
    #                               sweep began [m/s or rad/s]  (world,)
    gate: wp.array[wp.vec3]  # at the row's last full J qd: (lowest J qd the rounding allows [m/s or rad/s],
    #                          sum |J_k| widened by the rounding [m/s or rad/s per unit qd], the world's
    #                          drift then [m/s or rad/s]); drift < 0: none this sweep  (row,)


@wp.struct
class DofBuffers:
    """The solver's per-DOF step arrays as one struct (the fused stages write them). Comments: meaning [units]."""

    qd: wp.array[float]  # the step's velocity: predicted qd*, then solved by the sweeps [m/s or rad/s]  (dof,)
    f: wp.array[float]  # explicit joint forces (drives, passive terms, control) [N or N·m]  (dof,)
    diag: wp.array[float]  # implicit terms dt kd + dt² ke (+ armature of prescribed DOFs) on H's diagonal
    #                        [kg or kg·m²]  (dof,)
    diag_factored: wp.array[float]  # the diagonal inside the current factor [kg or kg·m²]  (dof,)


class SteelRows:
    """The row pool of one solver, allocated once at construction; ``buffers`` is what kernels take."""

    def __init__(self, world_count: int, articulation_capacity: int, free_body_capacity: int, stride: int, device, *,
                 late_rows: bool = False, clamp_rows: bool = False):
        self.world_count = world_count
        self.articulation_capacity = articulation_capacity
        self.free_body_capacity = free_body_capacity
        self.world_row_capacity = articulation_capacity + free_body_capacity
        self.stride = stride
        n = max(world_count * self.world_row_capacity, 1)
        self.row_count_total = n
        b = RowBuffers()
        b.articulation_capacity = articulation_capacity
        b.free_body_capacity = free_body_capacity
        b.world_row_capacity = self.world_row_capacity
        b.stride = stride
        b.late_rows = int(late_rows)  # patch torsion rows solved after their group's other tails (contacts/torsion.py)
        b.clamp_rows = int(clamp_rows)  # fused velocity limits clamped after each iteration (joints/velocity_limits.py)
        b.world_row_count = wp.zeros((world_count, 2), dtype=wp.int32, device=device)
        b.world_rows_dropped = wp.zeros((world_count, 2), dtype=wp.int32, device=device)
        b.constraint_overflow = wp.zeros(world_count + 1, dtype=wp.bool, device=device)
        b.kind = wp.zeros(n, dtype=wp.int32, device=device)
        b.dof_start = wp.zeros((n, 2), dtype=wp.int32, device=device)
        b.dof_count = wp.zeros((n, 2), dtype=wp.int32, device=device)
        b.mass_start = wp.zeros((n, 2), dtype=wp.int32, device=device)
        b.J = wp.zeros(n * 2 * stride, dtype=float, device=device)
        b.target = wp.zeros(n, dtype=float, device=device)
        b.velocity_target = wp.zeros(n, dtype=float, device=device)
        b.gap_speed = wp.full(n, -UNBOUNDED, dtype=float, device=device)
        b.mu = wp.zeros(n, dtype=float, device=device)
        b.contact = wp.full(n, -1, dtype=wp.int32, device=device)
        b.region = wp.full(n, -1, dtype=wp.int32, device=device)
        b.dir = wp.zeros(n, dtype=wp.vec3, device=device)
        b.body = wp.full((n, 2), -1, dtype=wp.int32, device=device)
        b.key = wp.zeros(n, dtype=float, device=device)
        b.impulse = wp.zeros(n, dtype=float, device=device)
        b.preload = wp.zeros(n, dtype=float, device=device)
        b.Y = wp.zeros(n * 2 * stride, dtype=float, device=device)
        b.inv_mass = wp.zeros(n, dtype=float, device=device)
        b.order = wp.zeros(n, dtype=wp.int32, device=device)
        b.span = wp.zeros(n, dtype=wp.int32, device=device)
        b.step = wp.zeros(n, dtype=float, device=device)
        b.bound = wp.zeros(n, dtype=float, device=device)
        b.regularization = wp.zeros(n, dtype=float, device=device)
        b.compliance = wp.zeros(n, dtype=float, device=device)
        # Terms a J qd sum has: up to 2 stride products and the side sum; 4x the float32 bound (n u).
        b.gate_rounding = float((2 * stride + 8) * 2.0**-22)
        b.y_max = wp.zeros(n, dtype=float, device=device)
        b.world_drift = wp.zeros(world_count, dtype=float, device=device)
        b.gate = wp.full(n, wp.vec3(0.0, 0.0, -1.0), dtype=wp.vec3, device=device)
        self.buffers = b
        # Read by the sweep's native DOF loops through .data (rows/dof_loops.py; structs.py).
        require_contiguous("SteelRows", dof_start=b.dof_start, dof_count=b.dof_count, J=b.J, Y=b.Y)

    # The host reads and resets only the accounting arrays; they are the struct's own arrays.
    @property
    def world_row_count(self) -> wp.array:
        return self.buffers.world_row_count

    @property
    def world_rows_dropped(self) -> wp.array:
        return self.buffers.world_rows_dropped

    @property
    def constraint_overflow(self) -> wp.array:
        return self.buffers.constraint_overflow

    def begin_step(self) -> None:
        """Forget last step's rows (counts only: rows past a world's count are never read)."""
        counts = self.world_row_count
        if host_writable(counts):
            host_view(counts).fill(0)  # a NumPy fill: zero_() costs a few us of host time each step
        else:
            counts.zero_()  # recorded by a capture; on CUDA the counts stay on the device
