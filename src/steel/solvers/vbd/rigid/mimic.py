"""Joint-owned mimics for rigid AVBD: ``q_follower = c0 + c1 q_leader``, one constraint row per follower DOF.

Newton's ``ModelBuilder.set_joint_mimic(follower, leader, coeffs=(c0, c1))`` stores, per follower joint,
``model.joint_mimic_joint`` (the leader) and ``model.joint_mimic_coeffs`` (``c0`` [m or rad], ``c1``
non-dimensional), applied componentwise to the DOFs of two PRISMATIC, REVOLUTE or D6 joints of equal
dimension. Each follower DOF ``d`` with leader DOF ``e`` gets the scalar constraint

    C = s_d - c0 - c1 s_e     [m or rad, the follower DOF's unit]

with ``s`` the joint coordinates of :func:`.joints.eval_dof` (rest offset ``model.joint_q`` included,
angles unwound across steps as the drives' are). It couples up to four bodies (the two joints'
parents and children): on body ``b`` the Jacobian is ``J_b = J_{d,b} - c1 J_{e,b}`` (a body of both
joints, e.g. the palm both fingers of a gripper hang from, takes both terms) and the row acts as the
hard structural slots do, an augmented Lagrangian (Giles, Diaz, Yuksel, "Augmented Vertex Block
Descent", SIGGRAPH 2025, sec. 4): force ``-J_bᵀ F`` with ``F = k C + λ``, Hessian ``k J_b J_bᵀ``,
``λ += k C`` after every sweep and ``λ`` kept by ``α γ`` across steps (the joints' ``α``, ``γ``). ``k`` is
``rigid_joint_linear_ke`` [N/m] for a linear follower DOF and ``rigid_joint_angular_ke`` [N·m/rad] for an
angular one (fixed: the joints' penalty ramp does not apply here). Unlike the structural slots the row
has no C0 stabilization (``C - α C0``): a mimic authored in a pose that violates it snaps to its relation
in the first step, as Newton's SolverVBD does (a follower built at 0 rad with ``c0`` 0.1 rad: at most
1.8e-3 rad off over the run there on the legacy path, 6e-5 rad on its default path; ours 1.3e-4 rad).
With the joints' ``α`` 0.95 it kept 0.057 rad of the 0.1 after 10 steps.
The leader feels ``c1`` times the reaction (a gear), as SolverSteel's mimic row (``qd_f - c1 qd_l``) does.

The coefficients are read from the model every step (edits act at the next step); the follower's
``joint_enabled`` switches its rows. Not run, refused at construction with ``NotImplementedError``: a
follower or leader DOF without a coordinate (a D6 with two or three angular axes: no scalar angle per
axis; here), and the deprecated sparse mimic constraints (``model.constraint_mimic_*``, by the layout),
which Newton 1.8.0's SolverVBD documents as unsupported.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from .joints import JointData, add_scalar_row, dof_coordinate, eval_dof, joint_frames
from .layout import DOF_LINEAR, KIND_D6, KIND_PRISMATIC, KIND_REVOLUTE, _label
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

_MIMIC_KINDS = (KIND_REVOLUTE, KIND_PRISMATIC, KIND_D6)


@wp.struct
class MimicData:
    """One row per follower DOF, and per-body CSR lists of the rows acting on each body."""

    dof_f: wp.array[wp.int32]  # follower DOF
    dof_l: wp.array[wp.int32]  # leader DOF
    joint_f: wp.array[wp.int32]
    joint_l: wp.array[wp.int32]
    coeffs: wp.array[wp.vec2]  # model.joint_mimic_coeffs (c0 [m or rad], c1), by joint, read live
    k: wp.array[wp.float32]  # [N/m] or [N·m/rad]
    lam: wp.array[wp.float32]  # [N] or [N·m]
    world: wp.array[wp.int32]  # the follower joint's world (.reset)
    body_start: wp.array[wp.int32]  # (body + 1,)
    body_rows: wp.array[wp.int32]


@wp.func
def _coordinate(jd: JointData, body_q: wp.array[wp.transform], body_com: wp.array[wp.vec3], j: wp.int32,
                d: wp.int32, b: wp.int32):
    """DOF ``d`` of joint ``j``: its coordinate [m or rad] and its Jacobian rows for body ``b`` (zero if not j's)."""
    t_jp, t_jc, com_p, com_c = joint_frames(jd, body_q, body_com, j)
    kind = jd.dof_kind[d]
    s, gl, ga = eval_dof(kind, jd.dof_axis[d], t_jp, t_jc, com_p, com_c, 1)
    g_l = wp.vec3(0.0)
    g_a = wp.vec3(0.0)
    if jd.child[j] == b:
        g_l = gl
        g_a = ga
    if jd.parent[j] == b:
        s_p, pl, pa = eval_dof(kind, jd.dof_axis[d], t_jp, t_jc, com_p, com_c, 0)
        g_l = g_l + pl
        g_a = g_a + pa
    return dof_coordinate(kind, s, jd.dof_offset[d], jd.dof_s0[d]), g_l, g_a


@wp.func
def mimic_row(md: MimicData, jd: JointData, body_q: wp.array[wp.transform], body_com: wp.array[wp.vec3],
              r: wp.int32, b: wp.int32):
    """Row ``r``: ``C`` [m or rad] and its Jacobian rows (linear, angular) for body ``b``."""
    cf = md.coeffs[md.joint_f[r]]
    s_f, fl, fa = _coordinate(jd, body_q, body_com, md.joint_f[r], md.dof_f[r], b)
    s_l, ll, la = _coordinate(jd, body_q, body_com, md.joint_l[r], md.dof_l[r], b)
    return s_f - cf[0] - cf[1] * s_l, fl - cf[1] * ll, fa - cf[1] * la


@wp.func
def mimic_force_on_body(md: MimicData, jd: JointData, body_q: wp.array[wp.transform],
                        body_com: wp.array[wp.vec3], b: wp.int32):
    """Force, torque [N, N·m] and Hessian blocks (lin-lin, lin-ang, ang-ang) of the mimic rows on body ``b``."""
    f_l = wp.vec3(0.0)
    f_a = wp.vec3(0.0)
    h_ll = wp.mat33(0.0)
    h_la = wp.mat33(0.0)
    h_aa = wp.mat33(0.0)
    for i in range(md.body_start[b], md.body_start[b + 1]):
        r = md.body_rows[i]
        if not jd.enabled[md.joint_f[r]]:
            continue
        c, gl, ga = mimic_row(md, jd, body_q, body_com, r, b)
        k = md.k[r]
        f_l, f_a, h_ll, h_la, h_aa = add_scalar_row(f_l, f_a, h_ll, h_la, h_aa, gl, ga, k * c + md.lam[r], k)
    return f_l, f_a, h_ll, h_la, h_aa


@wp.kernel
def _begin_mimics(md: MimicData, keep: wp.float32):
    r = wp.tid()  # one thread per row
    md.lam[r] = keep * md.lam[r]


@wp.kernel
def _mimic_duals(md: MimicData, jd: JointData, body_q: wp.array[wp.transform], body_com: wp.array[wp.vec3]):
    r = wp.tid()  # one thread per row, after every sweep
    if not jd.enabled[md.joint_f[r]]:
        return
    c, gl, ga = mimic_row(md, jd, body_q, body_com, r, -2)
    md.lam[r] = md.lam[r] + md.k[r] * c


class Mimics:
    """The model's mimic rows (:class:`MimicData`) and their per-step launches; ``count`` 0 without mimics."""

    def __init__(self, model, layout, k_lin: float, k_ang: float):
        dev = model.device
        rows = _mimic_rows(model, layout)
        self.count = len(rows)
        nb = int(model.body_count)
        lists = [[] for _ in range(max(nb, 1))]
        parent = model.joint_parent.numpy() if model.joint_count else np.zeros(0, np.int32)
        child = model.joint_child.numpy() if model.joint_count else np.zeros(0, np.int32)
        for r, (_df, _dl, jf, jl) in enumerate(rows):
            for body in sorted({int(parent[jf]), int(child[jf]), int(parent[jl]), int(child[jl])} - {-1}):
                lists[body].append(r)
        start = np.zeros(max(nb, 1) + 1, np.int32)
        start[1:] = np.cumsum([len(x) for x in lists])
        columns = np.array(rows, np.int32).reshape(-1, 4) if rows else np.zeros((1, 4), np.int32)
        kind = layout.dof_kind[columns[:, 0]]
        world = model.joint_world.numpy()[columns[:, 2]] if rows else np.zeros(1, np.int32)
        md = MimicData()
        md.dof_f, md.dof_l, md.joint_f, md.joint_l = (wp.array(columns[:, i], dtype=wp.int32, device=dev)
                                                      for i in range(4))
        md.coeffs = model.joint_mimic_coeffs if rows else wp.zeros(1, dtype=wp.vec2, device=dev)
        md.k = wp.array(np.where(kind == DOF_LINEAR, k_lin, k_ang).astype(np.float32), dtype=wp.float32, device=dev)
        md.lam = wp.zeros(columns.shape[0], dtype=wp.float32, device=dev)
        md.world = wp.array(world.astype(np.int32), dtype=wp.int32, device=dev)
        md.body_start = wp.array(start, dtype=wp.int32, device=dev)
        md.body_rows = wp.array(np.array([r for x in lists for r in x] or [0], np.int32), dtype=wp.int32, device=dev)
        self.data = md
        self.device = dev

    def begin(self, keep: float) -> None:
        """Warm start: ``λ`` kept by ``keep`` (the joints' ``α γ``)."""
        if self.count:
            launch(_begin_mimics, dim=self.count, inputs=[self.data, float(keep)], device=self.device)

    def update_duals(self, jd, body_q, body_com) -> None:
        """AVBD dual step after a sweep: ``λ += k C``."""
        if self.count:
            launch(_mimic_duals, dim=self.count, inputs=[self.data, jd, body_q, body_com], device=self.device)


def _mimic_rows(model, layout) -> list[tuple[int, int, int, int]]:
    """``(follower DOF, leader DOF, follower joint, leader joint)`` per row; refuses what the rows cannot run."""
    leader = getattr(model, "joint_mimic_joint", None)
    if leader is None or not model.joint_count:
        return []
    leader = leader.numpy()
    qd_start = model.joint_qd_start.numpy()
    rows = []
    for jf in np.flatnonzero(leader >= 0):
        jf, jl = int(jf), int(leader[jf])
        if layout.kind[jf] not in _MIMIC_KINDS or layout.kind[jl] not in _MIMIC_KINDS:
            raise NotImplementedError(f"SolverVBD rigid AVBD: {_label(model, jf)} mimics {_label(model, jl)}; mimics "
                                      "are supported between PRISMATIC, REVOLUTE and D6 joints")
        n = int(qd_start[jf + 1] - qd_start[jf])
        if n != int(qd_start[jl + 1] - qd_start[jl]):
            raise ValueError(f"SolverVBD rigid AVBD: {_label(model, jf)} mimics {_label(model, jl)} with a different "
                             "number of DOFs")
        for i in range(n):
            df, dl = int(qd_start[jf]) + i, int(qd_start[jl]) + i
            if layout.dof_kind[df] < 0 or layout.dof_kind[dl] < 0:
                raise NotImplementedError(
                    f"SolverVBD rigid AVBD: {_label(model, jf)} mimics {_label(model, jl)} on DOF {i}, an angular "
                    "axis of a D6 joint with two or three angular axes, which has no scalar coordinate here")
            rows.append((df, dl, jf, jl))
    return rows


__all__ = ["MimicData", "Mimics", "mimic_force_on_body"]
