"""The tile path of SolverFeatherstone (``use_tile_gemm=True``): mass matrix by a tile GEMM, tile Cholesky.

Owns, when the option is set: the Jacobian products ``jac_T``/``jac_F``, a group-ordered copy of
``H`` and of its factor, and ``joint_qdd`` of articulations without mimic joints. The loop path
(:mod:`steel.articulation.dynamics` CRBA, :mod:`.advance` factor and solve) is what this path must
reproduce; it differs from it only in float32 rounding (the sums run in another order).

Layout. Articulations are grouped by DOF count ``n`` (articulations without DOFs are skipped); each
group gets its own compiled kernels, because tile shapes are compile-time constants, and its
articulations are laid out contiguously in every buffer below, so a group is one batched 3-D view
``(count, ., .)`` whatever order the articulations have in the model (sizes may interleave).
``rows = 6 * (largest joint count in the group)``; shorter articulations leave their extra rows
zero, so one kernel serves every joint count of a DOF count.

=============  ===================================================================  ===================
buffer         meaning [units]                                                      shape per articul.
=============  ===================================================================  ===================
jac_T          ``J^T``: row ``k`` holds, for each body ``b`` below DOF ``k``, the    ``(n, rows)``
               motion-subspace column ``S_k`` (linear first, world orientation,
               about the articulation reference point) [m/s or rad/s per unit qd]
jac_F          ``M J``: rows ``6b..6b+5`` hold ``I_b S_k`` for those pairs,          ``(rows, n)``
               ``I_b`` the spatial inertia of body ``b`` [kg·m/s ... per unit qd]
mass_matrix    ``H = J^T M J + diag(armature)`` [kg, kg·m, kg·m²]                     ``(n, n)``
mass_factor    lower Cholesky factor of ``H + K + diag(D)`` (``D`` as in :mod:`.forces`,  ``(n, n)``
               ``K`` the solver's ``contact_mass`` of :mod:`.contacts`, same layout,
               both triangles on this path)
=============  ===================================================================  ===================

Stages. On steps that rebuild ``H``: one launch over all articulations fills ``jac_T``/``jac_F``
(each entry ``(k, b)`` with DOF ``k`` an ancestor-or-own DOF of body ``b``; the others stay zero
from allocation, since the topology never changes), then per group one tiled launch computes
``H = jac_T @ jac_F + diag(armature)`` with :func:`warp.tile_matmul` and, with ``fuse_cholesky``,
factors ``H + diag(D)`` with :func:`warp.tile_cholesky` in the same kernel. Every step, per group,
one tiled launch refactors the articulations that :mod:`.forces` flagged (unless the fused kernel
just did) and solves ``qdd = -(H + D)^-1 dof_bias`` with :func:`warp.tile_cholesky_solve`.

Mimic joints: the fold onto the leaders (:mod:`.mimic`) is a scalar edit of rows and columns, so
with mimics this path only builds ``H`` (never fused) and :mod:`.advance` folds, factors and solves
from the group-ordered buffers as in the loop path.

Rejected: ``H = J^T M J`` with the block-diagonal ``M`` as a ``(rows, rows)`` tile (a second GEMM
of ``rows^2 n`` multiply-adds, ~3x the work of forming ``M J`` per body in the fill kernel), and
one kernel per (joint count, DOF count) pair (more compiled kernels for no gain; padding rows are
zero). Unlike the loop path's factor, :func:`warp.tile_cholesky` does not clamp pivots, so a DOF
with neither inertia nor armature gives NaN here instead of a stiff response.

On the CPU a tile kernel runs one articulation per thread with ``block_dim = 1``, and the GEMM
multiplies the zero entries of ``J`` too, so this path is slower there than the loop path (timings in
benchmarks/README.md's performance log). It exists for the GPU, where a block of threads shares each tile
(``CUDA_BLOCK_DIM``); it has not been timed on a GPU.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from ...articulation.dynamics import body_spatial_inertia
from ...articulation.joint_model import JointModel
from ...launches import launch

CUDA_BLOCK_DIM = 64  # threads per articulation on CUDA; the CPU runs tile kernels with one

_KERNELS: dict = {}  # (kind, n, rows, fuse) -> compiled kernel, shared by every solver instance


@wp.kernel
def _jacobian_products(
    # Plan:
    tree_start: wp.array[int],
    tree_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    dof_start: wp.array[int],
    dof_count: wp.array[int],
    jac_start: wp.array[int],
    jac_rows: wp.array[int],
    # Model:
    joints: JointModel,
    # Data in:
    body_q: wp.array[wp.transform],
    articulation_origin: wp.array[wp.vec3],
    dof_S: wp.array[wp.spatial_vector],
    # Data out:
    jac_T_out: wp.array[float],
    jac_F_out: wp.array[float],
):
    art = wp.tid()  # one thread per articulation
    n = dof_count[art]
    if n == 0:
        return
    start = tree_start[art]
    first = dof_start[art]
    rows = jac_rows[art]
    base = jac_start[art]
    origin = articulation_origin[art]
    for t in range(start, tree_start[art + 1]):
        child = joints.child[tree_joint[t]]
        I, _com = body_spatial_inertia(joints, child, body_q[child], origin)
        row0 = 6 * (t - start)
        m = tree_joint[t]
        while m >= 0:  # the DOFs that move this body: its own joint's and every ancestor joint's
            for k in range(joints.qd_start[m], joints.qd_start[m + 1]):
                col = k - first
                S = dof_S[k]
                F = I * S
                for r in range(6):
                    jac_T_out[base + col * rows + row0 + r] = S[r]
                    jac_F_out[base + (row0 + r) * n + col] = F[r]
            m = joint_parent_joint[m]


def _mass_matrix_kernel(n: int, rows: int, fuse: bool):
    """``H = J^T (M J) + diag(armature)`` for one group (and its factor with ``D`` when ``fuse``)."""
    key = ("mass", n, rows, fuse)
    if key not in _KERNELS:

        @wp.kernel(module="unique")
        def mass_matrix_tiled(
            # Plan:
            articulations: wp.array[int],
            dof_start: wp.array[int],
            # Model:
            joint_armature: wp.array[float],
            # Data in:
            dof_implicit: wp.array[float],
            jac_T: wp.array3d[float],
            jac_F: wp.array3d[float],
            # Data out:
            mass_matrix_out: wp.array3d[float],
            mass_factor_out: wp.array3d[float],
        ):
            i = wp.tid()  # one block per articulation of the group
            first = dof_start[articulations[i]]
            JT = wp.tile_load(jac_T[i], shape=(n, rows))
            MJ = wp.tile_load(jac_F[i], shape=(rows, n))
            H = wp.tile_diag_add(wp.tile_matmul(JT, MJ), wp.tile_load(joint_armature, shape=n, offset=first))
            wp.tile_store(mass_matrix_out[i], H)
            if wp.static(fuse):
                A = wp.tile_diag_add(H, wp.tile_load(dof_implicit, shape=n, offset=first))
                wp.tile_store(mass_factor_out[i], wp.tile_cholesky(A))

        _KERNELS[key] = mass_matrix_tiled
    return _KERNELS[key]


def _factor_solve_kernel(n: int):
    """Refactor flagged articulations of one group, then ``joint_qdd = -(H + D)^-1 dof_bias``."""
    key = ("solve", n, 0, False)
    if key not in _KERNELS:

        @wp.kernel(module="unique")
        def factor_solve_tiled(
            # Plan:
            articulations: wp.array[int],
            dof_start: wp.array[int],
            articulation_refactor: wp.array[int],
            articulation_contact: wp.array[int],
            allow_factor: int,
            # Data in:
            dof_implicit: wp.array[float],
            dof_bias: wp.array[float],
            mass_matrix: wp.array3d[float],
            contact_mass: wp.array3d[float],
            # Data out:
            mass_factor_out: wp.array3d[float],
            joint_qdd_out: wp.array[float],
        ):
            i = wp.tid()  # one block per articulation of the group
            a = articulations[i]
            first = dof_start[a]
            b = wp.tile_load(dof_bias, shape=n, offset=first)
            # A fused build factored H + D without the contact term, so contacts refactor here regardless.
            contact = articulation_contact[a] != 0
            if articulation_refactor[a] != 0 and (allow_factor != 0 or contact):
                H = wp.tile_load(mass_matrix[i], shape=(n, n)) + wp.tile_load(contact_mass[i], shape=(n, n))
                A = wp.tile_diag_add(H, wp.tile_load(dof_implicit, shape=n, offset=first))
                L = wp.tile_cholesky(A)
                wp.tile_store(mass_factor_out[i], L)
                wp.tile_store(joint_qdd_out, -wp.tile_cholesky_solve(L, b), offset=first)
            else:
                L = wp.tile_load(mass_factor_out[i], shape=(n, n))
                wp.tile_store(joint_qdd_out, -wp.tile_cholesky_solve(L, b), offset=first)

        _KERNELS[key] = factor_solve_tiled
    return _KERNELS[key]


class _Group:
    """Articulations of one DOF count, contiguous in the tile buffers."""

    def __init__(self, n, rows, articulations, mass_offset, jac_offset, dev):
        self.n, self.rows, self.count = n, rows, len(articulations)
        self.articulations = wp.array(np.asarray(articulations, np.int32), dtype=wp.int32, device=dev)
        self.mass_offset, self.jac_offset = mass_offset, jac_offset


class TileMassMatrix:
    """Tile buffers and launches for one model (see the module docstring).

    Args:
        model: the finalized model.
        plan: its :class:`steel.articulation.ArticulationPlan`.
        fuse_cholesky: factor in the mass-matrix kernel (ignored with mimic joints).
        has_mimic: the model has joint-owned mimic joints (then :mod:`.advance` factors and solves).
    """

    def __init__(self, model: newton.Model, plan, fuse_cholesky: bool, has_mimic: bool):
        dev = model.device
        self.device = dev
        self.has_mimic = bool(has_mimic)
        self.fuse = bool(fuse_cholesky) and not self.has_mimic
        self.block_dim = CUDA_BLOCK_DIM if wp.get_device(dev).is_cuda else 1
        counts = plan.dof_count_np
        joints = np.diff(plan.tree_start_np)
        A = plan.articulation_count
        mass_start = np.zeros(max(A, 1), np.int32)
        jac_start = np.zeros(max(A, 1), np.int32)
        jac_rows = np.zeros(max(A, 1), np.int32)
        self.groups = []
        mass_size, jac_size = 0, 0
        for n in sorted({int(c) for c in counts if c > 0}):
            members = np.nonzero(counts == n)[0]
            rows = 6 * int(joints[members].max())
            group = _Group(n, rows, members, mass_size, jac_size, dev)
            for i, a in enumerate(members):
                mass_start[a] = mass_size + i * n * n
                jac_start[a] = jac_size + i * n * rows
                jac_rows[a] = rows
            mass_size += len(members) * n * n
            jac_size += len(members) * n * rows
            self.groups.append(group)
        self.mass_start = wp.array(mass_start, dtype=wp.int32, device=dev)
        self.jac_start = wp.array(jac_start, dtype=wp.int32, device=dev)
        self.jac_rows = wp.array(jac_rows, dtype=wp.int32, device=dev)
        self.mass_matrix = wp.zeros(max(mass_size, 1), dtype=float, device=dev)
        self.mass_factor = wp.zeros(max(mass_size, 1), dtype=float, device=dev)
        self.jac_T = wp.zeros(max(jac_size, 1), dtype=float, device=dev)
        self.jac_F = wp.zeros(max(jac_size, 1), dtype=float, device=dev)
        for g in self.groups:  # batched 3-D views of each group's blocks
            g.H = self._view(self.mass_matrix, g.mass_offset, (g.count, g.n, g.n))
            g.L = self._view(self.mass_factor, g.mass_offset, (g.count, g.n, g.n))
            g.K = None  # the contact term's view, bound on the first solve (the buffer is the solver's)
            g.JT = self._view(self.jac_T, g.jac_offset, (g.count, g.n, g.rows))
            g.MJ = self._view(self.jac_F, g.jac_offset, (g.count, g.rows, g.n))
            g.mass_kernel = _mass_matrix_kernel(g.n, g.rows, self.fuse)
            g.solve_kernel = None if self.has_mimic else _factor_solve_kernel(g.n)

    @staticmethod
    def _view(flat: wp.array, offset: int, shape: tuple) -> wp.array:
        return flat[offset : offset + int(np.prod(shape))].reshape(shape)

    @property
    def mass(self) -> tuple:
        """``(mass_start, mass_matrix, mass_factor)`` in the group order, for :func:`.advance.advance_joints`."""
        return self.mass_start, self.mass_matrix, self.mass_factor

    @property
    def solves(self) -> bool:
        """Whether :meth:`solve` writes ``joint_qdd`` (no mimic joints)."""
        return not self.has_mimic

    def build(self, model: newton.Model, plan, data, work, body_q: wp.array) -> None:
        """Rebuild ``H`` (and, fused, its factor) from the kinematics of this step; one launch plus one per group."""
        if not self.groups:
            return
        launch(
            _jacobian_products,
            dim=plan.articulation_count,
            inputs=[
                plan.tree_start,
                plan.tree_joint,
                plan.joint_parent_joint,
                plan.dof_start,
                plan.dof_count_per_articulation,
                self.jac_start,
                self.jac_rows,
                plan.joints,
                body_q,
                data.articulation_origin,
                data.dof_S,
            ],
            outputs=[self.jac_T, self.jac_F],
            device=model.device,
        )
        for g in self.groups:
            wp.launch_tiled(
                g.mass_kernel,
                dim=g.count,
                inputs=[g.articulations, plan.dof_start, model.joint_armature, work.dof_implicit, g.JT, g.MJ],
                outputs=[g.H, g.L],
                block_dim=self.block_dim,
                device=model.device,
            )

    def solve(self, plan, data, work, rebuilt: bool) -> None:
        """Refactor flagged articulations (unless the fused build just did) and solve into ``work.joint_qdd``."""
        if not self.solves:
            return
        allow_factor = 0 if (rebuilt and self.fuse) else 1
        for g in self.groups:
            if g.K is None:
                g.K = self._view(work.contact_mass, g.mass_offset, (g.count, g.n, g.n))
            wp.launch_tiled(
                g.solve_kernel,
                dim=g.count,
                inputs=[
                    g.articulations,
                    plan.dof_start,
                    work.articulation_refactor,
                    work.articulation_contact,
                    allow_factor,
                    work.dof_implicit,
                    data.dof_bias,
                    g.H,
                    g.K,
                ],
                outputs=[g.L, work.joint_qdd],
                block_dim=self.block_dim,
                device=self.device,
            )
