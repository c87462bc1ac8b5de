"""Joint constraint energies for rigid AVBD: evaluation, per-body contributions, step begin and dual update.

Every structural slot is a vector constraint ``C(x) ∈ R³`` (unused rows zero) with Jacobians per
body, linear part ``J_l`` (w.r.t. the COM displacement ``dx`` [m]) and angular part ``J_a`` (w.r.t.
a world rotation vector ``dθ`` [rad]). Its force on the body being solved is ``-Jᵀ F`` with

* hard slot (augmented Lagrangian): ``F = k S (C - α C0) + w λ``; ``λ`` persists across steps,
* soft slot (penalty only):         ``F = k S C``,

with ``w = 1`` on the seed's AVBD; the compliant formulation (:mod:`.compliant`) sets ``k`` and ``w < 1``
per slot so that the same row is a finite-stiffness material.

plus damping ``D (C - C0)/dt`` (``C0`` is the value at the start of the step, so ``(C - C0)/dt`` is
the constraint's rate over the step). ``S = R diag(k_axis) Rᵀ`` and ``D = R diag(kd) Rᵀ`` weight the
axes of the parent joint frame ``R`` (identity weights except on cables, whose stretch slot is stiffer
along the rod than across it and whose bend slot resists twist about the rod with its own stiffness).
Its Hessian is the Gauss-Newton ``Jᵀ (k S + D/dt) J`` plus, for
the anchor slot, the AVBD paper's diagonal stand-in for the geometric term, ``|F| |r| I`` on the
angular block (positive, so the 6x6 block stays positive definite without a fix-up).

``C - α C0`` is the AVBD stabilization: with ``α`` near 1 a step corrects only the fraction ``1 - α``
of the error it started with, so an error present at the start (after a collision or a big load) is
removed over several steps instead of being turned into velocity at once.

Drive and limit DOFs are scalar soft slots measured in joint coordinates (the twist angle about a
hinge axis [rad], or the displacement along an axis [m], plus the rest offset ``model.joint_q``):
``F = ke (s - target) + kd (ṡ - target_qd)`` and ``F = limit_ke (s - bound) + limit_kd ṡ`` beyond a
bound, with ``ṡ = (s - s0)/dt``. ``Control.joint_f`` on a DOF adds the energy ``-τ s`` (equal and
opposite on the two bodies). Angles are unwound across steps (``dof_coordinate``). Under compliant ALM
(:mod:`.compliant`) a drive is an ALM row like the structural slots: its force is ``w λ + (1 - w) F`` with
``F`` the law above (spring and damper), ``w = ke/(ke + ρ)``, ``ρ = max(9 ke, m_eff/dt²)`` and the per-DOF
multiplier ``λ`` set to that force after each sweep (:func:`drive_row`); limits keep the law.

Cables (:mod:`.layout`) use the same two slots with the rod's own stiffness and damping per axis
(soft by default) and, where ``vbd:dahl_eps_max`` and ``vbd:dahl_tau`` are both positive, Dahl friction
on the bend slot, bending and twist alike (:func:`dahl_moment`).
"""

from __future__ import annotations

import warp as wp

from .layout import ANG_HINGE, ANG_LOCK, ANG_UNIVERSAL, DOF_LINEAR, KIND_CABLE, KIND_NONE
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

_ANG_HINGE = wp.constant(ANG_HINGE)
_ANG_LOCK = wp.constant(ANG_LOCK)
_ANG_UNIVERSAL = wp.constant(ANG_UNIVERSAL)
_DOF_LINEAR = wp.constant(DOF_LINEAR)
_KIND_NONE = wp.constant(KIND_NONE)


@wp.struct
class JointData:
    """Joint layout and AVBD state the body solve reads (units in the module docstring)."""

    kind: wp.array[wp.int32]
    parent: wp.array[wp.int32]
    child: wp.array[wp.int32]
    enabled: wp.array[wp.bool]
    x_p: wp.array[wp.transform]  # joint frame in the parent body frame (world frame for parent -1)
    x_c: wp.array[wp.transform]  # joint frame in the child body frame, from the rest pose
    lin_proj: wp.array[wp.mat33]  # projector onto the locked linear directions, parent joint frame
    ang_mode: wp.array[wp.int32]
    ang_axis0: wp.array[wp.vec3]
    ang_axis1: wp.array[wp.vec3]
    ang_rest: wp.array[wp.float32]
    hard: wp.array2d[wp.int32]  # (joint, slot) 1 = augmented Lagrangian, 0 = penalty only
    k: wp.array2d[wp.float32]  # (joint, slot) current penalty [N/m] or [N·m/rad]
    lam_lin: wp.array[wp.vec3]  # [N]
    lam_ang: wp.array[wp.vec3]  # [N·m]
    c0_lin: wp.array[wp.vec3]  # [m]
    c0_ang: wp.array[wp.vec3]  # [rad]
    qd_start: wp.array[wp.int32]
    dof_kind: wp.array[wp.int32]
    dof_axis: wp.array[wp.vec3]
    dof_offset: wp.array[wp.float32]
    dof_coord: wp.array[wp.int32]
    dof_s0: wp.array[wp.float32]  # DOF value at the start of the step, angles unwound [m or rad]
    target_ke: wp.array[wp.float32]
    target_kd: wp.array[wp.float32]
    limit_lower: wp.array[wp.float32]
    limit_upper: wp.array[wp.float32]
    limit_ke: wp.array[wp.float32]
    limit_kd: wp.array[wp.float32]
    alpha: wp.float32
    lam_w: wp.array2d[wp.float32]  # (joint, slot) weight w of λ in F and in the dual step (1: AVBD; .compliant)
    dof_rho: wp.array[wp.float32]  # per DOF: drive rows' m_eff/dt² [N/m, N·m/rad] (.compliant); -1: the plain drive
    dof_lam: wp.array[wp.float32]  # per DOF: the drive row's multiplier [N or N·m] (compliant ALM)
    lam_keep: wp.float32  # per-step retention of λ: alpha*gamma (AVBD) or gamma (compliant)
    k_lo: wp.array2d[wp.float32]  # (joint, slot) penalty seed: k_start when ramping, else the ceiling
    k_hi: wp.array2d[wp.float32]  # (joint, slot) penalty ceiling (cables: the material stiffness)
    k_axis: wp.array2d[wp.vec3]  # (joint, slot) share of k per parent-joint-frame axis (cables), else 1
    kd: wp.array2d[wp.vec3]  # (joint, slot) damping per parent-joint-frame axis [N·s/m], [N·m·s/rad]
    dahl_eps: wp.array[wp.float32]  # Dahl maximum persistent bend strain [rad]; 0: no Dahl friction
    dahl_tau: wp.array[wp.float32]  # Dahl saturation length: the bend over which friction builds up [rad]
    dahl_s: wp.array[wp.vec3]  # Dahl friction moment / (k ε_max), parent anchor frame, in [-1, 1]
    kappa0: wp.array[wp.vec3]  # bend (rotation vector) at the start of the step, parent anchor frame [rad]
    kappa_end: wp.array[wp.vec3]  # cables: the same at the step's end [rad]
    sigma_end: wp.array[wp.vec3]  # cables: Dahl friction moment at the step's end, parent anchor frame [N·m]


@wp.func
def add_scalar_row(f_l: wp.vec3, f_a: wp.vec3, h_ll: wp.mat33, h_la: wp.mat33, h_aa: wp.mat33, g_l: wp.vec3,
                   g_a: wp.vec3, f: wp.float32, k: wp.float32):
    """A body's force, torque and 6x6 blocks plus one scalar row's: gradient ``(g_l, g_a)`` of ``C`` on the body
    (linear [1 or 1/m], angular [m or 1]), force magnitude ``f`` [N or N·m] along ``-g``, Gauss-Newton stiffness
    ``k g gᵀ`` (drives, mimic rows, tendon runs)."""
    return (f_l - g_l * f, f_a - g_a * f, h_ll + k * wp.outer(g_l, g_l), h_la + k * wp.outer(g_l, g_a),
            h_aa + k * wp.outer(g_a, g_a))


@wp.func
def quat_log(q: wp.quat):
    """Rotation vector [rad] of a unit quaternion, shortest arc."""
    if q[3] < 0.0:
        q = wp.quat(-q[0], -q[1], -q[2], -q[3])
    v = wp.vec3(q[0], q[1], q[2])
    s = wp.length(v)
    if s < 1.0e-9:
        return 2.0 * v
    return v * (2.0 * wp.atan2(s, q[3]) / s)


@wp.func
def quat_exp(w: wp.vec3):
    """Unit quaternion of the rotation vector ``w`` [rad] (exact, so integrating and differentiating agree)."""
    theta = wp.length(w)
    if theta < 1.0e-9:
        return wp.normalize(wp.quat(0.5 * w[0], 0.5 * w[1], 0.5 * w[2], 1.0))
    return wp.quat_from_axis_angle(w / theta, theta)


@wp.func
def body_frame(body_q: wp.array[wp.transform], body_com: wp.array[wp.vec3], b: wp.int32):
    """World transform of body ``b`` and its COM [m]; the world (b = -1) is the identity at the origin."""
    if b < 0:
        return wp.transform_identity(), wp.vec3(0.0)
    t = body_q[b]
    return t, wp.transform_point(t, body_com[b])


@wp.func
def eval_linear(t_jp: wp.transform, t_jc: wp.transform, com_p: wp.vec3, com_c: wp.vec3, proj: wp.mat33,
                child_side: wp.int32):
    """Slot 0: ``C = P (o_c - o_p)`` [m], its Jacobian for the child (child_side=1) or the parent, and the lever
    ``r`` [m] (world, from that body's COM to its anchor)."""
    o_p = wp.transform_get_translation(t_jp)
    o_c = wp.transform_get_translation(t_jc)
    rot = wp.quat_to_matrix(wp.transform_get_rotation(t_jp))
    p = rot * proj * wp.transpose(rot)
    c = p * (o_c - o_p)
    if child_side == 1:
        r = o_c - com_c
        return c, p, -p * wp.skew(r), r  # d o_c = dx + dθ × r = dx - [r]× dθ
    r = o_p - com_p
    return c, -p, p * wp.skew(r), r


@wp.func
def geometric_diagonal(g: wp.vec3, r: wp.vec3):
    """The AVBD paper's diagonal stand-in for an anchor's geometric stiffness (Giles, Diaz, Yuksel 2025, sec. 3.5).

    The anchor ``x + R r`` has, per world component ``i``, the second derivative in a rotation ``dθ``
    ``M_i = (e_i rᵀ + r e_iᵀ)/2 - r_i I`` [m/rad²] (from ``R r ≈ r + dθ × r + dθ × (dθ × r)/2``). The exact term
    ``Σ g_i M_i`` (``g`` [N] the row's force on the anchor) can be indefinite; the paper replaces each scalar
    constraint's ``M_i`` by the diagonal of its column norms, weighted by ``|g_i|``, which is positive.
    Returns that diagonal [N·m/rad] for the angular block.

    Rejected: the isotropic ``|g| |r| I`` (what was here before), which puts stiffness also on rotations whose
    anchor motion is along the row (a hinge turning under a load across its arm): a free REVOLUTE bob's first
    step at 1 iteration turned 2.542 mrad for the converged 2.722 (its first iterate's transient force,
    245 N at 1 m, stiffened the hinge 245 N·m/rad against its 3604 N·m/rad of inertia over dt²)."""
    d = wp.vec3(0.0)
    for i in range(3):
        gi = wp.abs(g[i])
        if gi > 0.0:
            for b in range(3):
                col = wp.vec3(0.0)
                col[i] = 0.5 * r[b]
                col = col + 0.5 * wp.where(i == b, 1.0, 0.0) * r
                col[b] = col[b] - r[i]
                d[b] = d[b] + gi * wp.length(col)
    return wp.diag(d)


@wp.func
def eval_angular(q_jp: wp.quat, q_jc: wp.quat, mode: wp.int32, a0: wp.vec3, a1: wp.vec3, rest: wp.float32,
                 child_side: wp.int32):
    """Slot 1: rotation error [rad] (lock), axis misalignment (hinge) or axis-angle change (universal)."""
    eye = wp.identity(n=3, dtype=wp.float32)
    if mode == _ANG_LOCK:
        c = quat_log(q_jc * wp.quat_inverse(q_jp))  # child frame's rotation relative to the parent's
        if child_side == 1:
            return c, eye
        return c, -eye
    if mode == _ANG_HINGE:
        ap = wp.quat_rotate(q_jp, a0)
        ac = wp.quat_rotate(q_jc, a0)
        c = wp.cross(ap, ac)  # zero when the axes agree; ~ the misalignment rotation otherwise
        if child_side == 1:
            return c, -wp.skew(ap) * wp.skew(ac)  # d ac = dθ × ac
        return c, wp.skew(ac) * wp.skew(ap)
    if mode == _ANG_UNIVERSAL:
        ap = wp.quat_rotate(q_jp, a0)
        ac = wp.quat_rotate(q_jc, a1)
        c = wp.vec3(wp.dot(ap, ac) - rest, 0.0, 0.0)
        row = wp.cross(ap, ac)
        if child_side == 1:
            row = wp.cross(ac, ap)
        return c, wp.mat33(row[0], row[1], row[2], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return wp.vec3(0.0), wp.mat33(0.0)


@wp.func
def eval_dof(kind: wp.int32, axis: wp.vec3, t_jp: wp.transform, t_jc: wp.transform, com_p: wp.vec3,
             com_c: wp.vec3, child_side: wp.int32):
    """Joint coordinate of one DOF (without the rest offset) [m or rad] and its Jacobian rows for one side."""
    q_jp = wp.transform_get_rotation(t_jp)
    a = wp.quat_rotate(q_jp, axis)
    sign = 1.0
    if child_side == 0:
        sign = -1.0
    if kind == _DOF_LINEAR:
        o_p = wp.transform_get_translation(t_jp)
        o_c = wp.transform_get_translation(t_jc)
        s = wp.dot(a, o_c - o_p)
        r = o_c - com_c
        if child_side == 0:
            r = o_p - com_p
        return s, sign * a, sign * wp.cross(r, a)
    q_rel = wp.quat_inverse(q_jp) * wp.transform_get_rotation(t_jc)
    s = 2.0 * wp.atan2(wp.dot(wp.vec3(q_rel[0], q_rel[1], q_rel[2]), axis), q_rel[3])
    if s > wp.pi:
        s = s - 2.0 * wp.pi
    if s < -wp.pi:
        s = s + 2.0 * wp.pi
    return s, wp.vec3(0.0), sign * a


@wp.func
def dof_coordinate(kind: wp.int32, raw: wp.float32, offset: wp.float32, reference: wp.float32):
    """Joint coordinate [m or rad]: raw value plus rest offset; an angle is unwound to the turn nearest ``reference``.

    The twist angle is only known modulo 2π; taking the branch nearest the start-of-step value keeps
    count of whole turns (so drives and limits beyond ±π work) as long as a step turns less than π.
    """
    s = raw + offset
    if kind == _DOF_LINEAR:
        return s
    d = s - reference
    d = d - 2.0 * wp.pi * wp.floor((d + wp.pi) / (2.0 * wp.pi))
    return reference + d


@wp.func
def dahl_state(s0: wp.float32, dk: wp.float32, length: wp.float32):
    """Dahl's law with exponent 1 integrated exactly over a bend increment ``dk`` [rad] from state ``s0``.

    Dahl (1968, 1976) models friction ``F`` against displacement ``x`` by ``dF/dx = σ (1 - F/F_c sgn ẋ)``;
    for a monotone increment the solution is ``F/F_c = sgn + (F0/F_c - sgn) exp(-|Δx| σ/F_c)``. Here ``x``
    is one bend component and ``length = F_c/σ = τ`` [rad]. Returns the new normalized state and
    its derivative in ``dk`` [1/rad] (at ``dk = 0`` the larger one-sided slope, so the Hessian bounds both).
    """
    if dk == 0.0:
        return s0, (1.0 + wp.abs(s0)) / length
    sg = wp.sign(dk)
    e = wp.exp(-wp.abs(dk) / length)
    return sg + (s0 - sg) * e, (1.0 - s0 * sg) * e / length


@wp.func
def axis_weights(q_jp: wp.quat, d: wp.vec3):
    """``R diag(d) Rᵀ``: per-axis weights ``d`` of the parent joint frame ``q_jp`` as a world matrix."""
    rot = wp.quat_to_matrix(q_jp)
    return rot * wp.diag(d) * wp.transpose(rot)


@wp.func
def dahl_moment(jd: JointData, j: wp.int32, q_jp: wp.quat, c: wp.vec3):
    """Dahl friction moment on cable ``j``'s bend slot at bend ``c`` (world rotation vector) [N·m], and its
    stiffness as a world matrix [N·m/rad].

    The friction moment is ``k ε_max s`` per component of the bend in the parent anchor frame, with ``s``
    carried by :func:`dahl_state` from the step's start (``kappa0``, ``dahl_s``) to the current iterate;
    ``k`` is that component's stiffness (bend about x and y, twist about z), so ``ε_max`` is the largest curvature
    friction can hold against it (a released cable keeps ``|κ| <= ε_max``) and ``τ`` [rad] the bend over which
    the friction saturates (initial slope ``k ε_max / τ``), as measured on Newton's SolverVBD (1.8.0 and the
    seed's revision alike): a one-joint cable loaded from rest follows ``σ = k ε_max (1 - exp(-κ/τ))`` to 4
    digits for (k, ε_max, τ) = (10, 0.1, 0.05), (10, 0.2, 0.1), (40, 0.1, 0.05). Reading ``τ`` in units of
    ``ε_max`` (a saturation bend ``τ ε_max``, 10x shorter there) made the friction as stiff as the cable itself
    at a tenth of the bend, and Newton's cable_dahl_hysteresis cantilever barely deflected (10 mm of 30).
    Each component is a monotone function of its increment, so within a step it is the gradient of a
    convex energy and the block Hessian stays positive definite.
    """
    rot = wp.quat_to_matrix(q_jp)
    kappa = wp.transpose(rot) * c
    scale = jd.k_hi[j, 1] * jd.dahl_eps[j]
    length = jd.dahl_tau[j]
    m = wp.vec3(0.0)
    d = wp.vec3(0.0)
    for i in range(3):
        si, di = dahl_state(jd.dahl_s[j][i], kappa[i] - jd.kappa0[j][i], length)
        m[i] = scale * jd.k_axis[j, 1][i] * si
        d[i] = scale * jd.k_axis[j, 1][i] * di
    return rot * m, rot * wp.diag(d) * wp.transpose(rot)


@wp.func
def joint_frames(jd: JointData, body_q: wp.array[wp.transform], body_com: wp.array[wp.vec3], j: wp.int32):
    t_p, com_p = body_frame(body_q, body_com, jd.parent[j])
    t_c, com_c = body_frame(body_q, body_com, jd.child[j])
    return t_p * jd.x_p[j], t_c * jd.x_c[j], com_p, com_c


@wp.func
def drive_row(ke: wp.float32, rho_mass: wp.float32):
    """``(k_eff, w)`` of a drive of stiffness ``ke``: the plain spring ``(ke, 0)`` when ``rho_mass < 0`` (the seed's
    AVBD) or ``ke`` is 0 (a damper alone), else the compliant row with ``ρ = max(9 ke, rho_mass)`` (``rho_mass`` =
    m_eff/dt², :mod:`.compliant`), ``k_eff = ke ρ/(ke + ρ) = (1 - w) ke``, ``w = ke/(ke + ρ)``. The row's force is
    ``w λ + (1 - w) F_m`` with ``F_m = ke (s - target) + kd (ṡ - target_qd)`` the drive's material force, and the dual
    step sets ``λ`` to that force, so its fixed point is ``λ = F_m``: the drive's law, whatever ``ρ``."""
    if rho_mass < 0.0 or ke <= 0.0:
        return ke, wp.float32(0.0)
    rho = wp.max(9.0 * ke, rho_mass)
    return ke * rho / (ke + rho), ke / (ke + rho)


@wp.func
def joint_force_on_body(
    jd: JointData,
    body_q: wp.array[wp.transform],
    body_com: wp.array[wp.vec3],
    target_q: wp.array[wp.float32],
    target_qd: wp.array[wp.float32],
    joint_f: wp.array[wp.float32],
    j: wp.int32,
    b: wp.int32,
    dt: wp.float32,
):
    """Force, torque [N, N·m] and Hessian blocks (lin-lin, lin-ang, ang-ang) of joint ``j`` on body ``b``."""
    f_l = wp.vec3(0.0)
    f_a = wp.vec3(0.0)
    h_ll = wp.mat33(0.0)
    h_la = wp.mat33(0.0)
    h_aa = wp.mat33(0.0)
    if jd.kind[j] == _KIND_NONE or not jd.enabled[j]:
        return f_l, f_a, h_ll, h_la, h_aa
    side = wp.where(jd.child[j] == b, 1, 0)
    t_jp, t_jc, com_p, com_c = joint_frames(jd, body_q, body_com, j)
    inv_dt = 1.0 / dt
    proj = jd.lin_proj[j]
    if wp.trace(proj) > 0.0:
        c, jl, ja, lever = eval_linear(t_jp, t_jc, com_p, com_c, proj, side)
        q_jp = wp.transform_get_rotation(t_jp)
        ks = jd.k[j, 0] * axis_weights(q_jp, jd.k_axis[j, 0])
        dm = inv_dt * axis_weights(q_jp, jd.kd[j, 0])
        f = ks * c
        if jd.hard[j, 0] != 0:
            f = ks * (c - jd.alpha * jd.c0_lin[j]) + jd.lam_w[j, 0] * jd.lam_lin[j]
        f = f + dm * (c - jd.c0_lin[j])
        kk = ks + dm
        f_l = f_l - wp.transpose(jl) * f
        f_a = f_a - wp.transpose(ja) * f
        h_ll = h_ll + wp.transpose(jl) * kk * jl
        h_la = h_la + wp.transpose(jl) * kk * ja
        # Geometric stiffness, the paper's diagonal (geometric_diagonal) of the force on the anchor. Gauss-Newton
        # alone has no curvature along rotations that move the anchor in a free direction (a D6 slide), and a
        # body of small inertia then overshoots by radians in one Newton step.
        h_aa = h_aa + wp.transpose(ja) * kk * ja + geometric_diagonal(wp.transpose(jl) * f, lever)
    mode = jd.ang_mode[j]
    if mode != 0:
        c, ja = eval_angular(wp.transform_get_rotation(t_jp), wp.transform_get_rotation(t_jc), mode,
                             jd.ang_axis0[j], jd.ang_axis1[j], jd.ang_rest[j], side)
        q_jp = wp.transform_get_rotation(t_jp)
        ks = jd.k[j, 1] * axis_weights(q_jp, jd.k_axis[j, 1])
        dm = inv_dt * axis_weights(q_jp, jd.kd[j, 1])
        f = ks * c
        if jd.hard[j, 1] != 0:
            f = ks * (c - jd.alpha * jd.c0_ang[j]) + jd.lam_w[j, 1] * jd.lam_ang[j]
        f = f + dm * (c - jd.c0_ang[j])
        stiff = ks + dm
        if jd.dahl_eps[j] > 0.0:
            m_f, k_f = dahl_moment(jd, j, wp.transform_get_rotation(t_jp), c)
            f = f + m_f
            stiff = stiff + k_f
        f_a = f_a - wp.transpose(ja) * f
        h_aa = h_aa + wp.transpose(ja) * stiff * ja
    for d in range(jd.qd_start[j], jd.qd_start[j + 1]):
        dk = jd.dof_kind[d]
        if dk < 0:
            continue
        s, gl, ga = eval_dof(dk, jd.dof_axis[d], t_jp, t_jc, com_p, com_c, side)
        s = dof_coordinate(dk, s, jd.dof_offset[d], jd.dof_s0[d])
        rate = (s - jd.dof_s0[d]) * inv_dt
        tau = joint_f[d]  # applied generalized force [N or N·m]: energy -tau s
        fd = float(0.0)
        kd_eff = float(0.0)
        ke, kd = jd.target_ke[d], jd.target_kd[d]
        if ke > 0.0 or kd > 0.0:
            k_eff, w = drive_row(ke, jd.dof_rho[d])
            # k_eff = (1 - w) ke: the row's force is w λ + (1 - w) (spring + damper) (see drive_row)
            fd = k_eff * (s - target_q[jd.dof_coord[d]]) + w * jd.dof_lam[d] + (1.0 - w) * kd * (rate - target_qd[d])
            kd_eff = k_eff + (1.0 - w) * kd * inv_dt
        lo, hi = jd.limit_lower[d], jd.limit_upper[d]
        if s < lo or s > hi:
            bound = wp.where(s < lo, lo, hi)
            fd = fd + jd.limit_ke[d] * (s - bound) + jd.limit_kd[d] * rate
            kd_eff = kd_eff + jd.limit_ke[d] + jd.limit_kd[d] * inv_dt
        f_l, f_a, h_ll, h_la, h_aa = add_scalar_row(f_l, f_a, h_ll, h_la, h_aa, gl, ga, fd - tau, kd_eff)
    return f_l, f_a, h_ll, h_la, h_aa


@wp.func
def start_frame(body_q: wp.array[wp.transform], body_com: wp.array[wp.vec3], dynamic: wp.array[wp.int32],
                has_last: wp.array[wp.int32], q_last: wp.array[wp.transform], b: wp.int32):
    """World transform and COM [m] of body ``b`` where this step's motion begins.

    A dynamic body begins at its input pose. A kinematic one begins where the previous step left it
    (``q_last``, as :func:`.bodies._predict_bodies` starts it for contacts): the caller moves it between
    steps by writing its new pose into the input state, and that move happens during this step.
    """
    if b >= 0 and dynamic[b] == 0 and has_last[b] != 0:
        t = q_last[b]
        return t, wp.transform_point(t, body_com[b])
    return body_frame(body_q, body_com, b)


@wp.kernel
def _begin_joints(
    jd: JointData,
    body_q: wp.array[wp.transform],
    body_com: wp.array[wp.vec3],
    dynamic: wp.array[wp.int32],
    has_last: wp.array[wp.int32],
    q_last: wp.array[wp.transform],
    gamma: wp.float32,
):
    j = wp.tid()  # one thread per joint
    if jd.kind[j] == _KIND_NONE:
        return
    # C0 (the dampers' and the stabilization's start value), the Dahl start bend and the drives' start
    # coordinate are taken where the step's motion begins, a kinematic body's move by the caller
    # included, so a damper sees a driven body's rate. Rejected: the input pose (before), which hid the
    # move from the dampers: a joint to a driven body then damped its neighbour against the world (a
    # cable twisted at one end by a kinematic tip, twist damping 4 s x stiffness, carried 60 degrees in
    # its last joint and 1.4 in each other, where the quasi-static answer is uniform twist).
    t_p, com_p = start_frame(body_q, body_com, dynamic, has_last, q_last, jd.parent[j])
    t_c, com_c = start_frame(body_q, body_com, dynamic, has_last, q_last, jd.child[j])
    t_jp = t_p * jd.x_p[j]
    t_jc = t_c * jd.x_c[j]
    c, jl, ja, lever = eval_linear(t_jp, t_jc, com_p, com_c, jd.lin_proj[j], 1)
    jd.c0_lin[j] = c
    c_a, ja2 = eval_angular(wp.transform_get_rotation(t_jp), wp.transform_get_rotation(t_jc), jd.ang_mode[j],
                            jd.ang_axis0[j], jd.ang_axis1[j], jd.ang_rest[j], 1)
    jd.c0_ang[j] = c_a
    jd.kappa0[j] = wp.transpose(wp.quat_to_matrix(wp.transform_get_rotation(t_jp))) * c_a
    # Warm start: lambda kept by alpha*gamma (AVBD) or gamma (compliant), penalty decayed by gamma but not
    # below its seed.
    keep = jd.lam_keep
    jd.lam_lin[j] = wp.where(jd.hard[j, 0] != 0, keep * jd.lam_lin[j], wp.vec3(0.0))
    jd.lam_ang[j] = wp.where(jd.hard[j, 1] != 0, keep * jd.lam_ang[j], wp.vec3(0.0))
    # Without a ramp k_lo = k_hi and the clamp gives the fixed stiffness.
    jd.k[j, 0] = wp.clamp(gamma * jd.k[j, 0], jd.k_lo[j, 0], jd.k_hi[j, 0])
    jd.k[j, 1] = wp.clamp(gamma * jd.k[j, 1], jd.k_lo[j, 1], jd.k_hi[j, 1])
    for d in range(jd.qd_start[j], jd.qd_start[j + 1]):
        jd.dof_lam[d] = keep * jd.dof_lam[d]  # a drive row's multiplier, kept as the slots' (gamma when compliant)
        if jd.dof_kind[d] >= 0:
            s, gl, ga = eval_dof(jd.dof_kind[d], jd.dof_axis[d], t_jp, t_jc, com_p, com_c, 1)
            jd.dof_s0[d] = dof_coordinate(jd.dof_kind[d], s, jd.dof_offset[d], jd.dof_s0[d])


@wp.kernel
def _update_duals(
    jd: JointData,
    body_q: wp.array[wp.transform],
    body_com: wp.array[wp.vec3],
    target_q: wp.array[wp.float32],
    target_qd: wp.array[wp.float32],
    inv_dt: wp.float32,
    beta_lin: wp.float32,
    beta_ang: wp.float32,
):
    j = wp.tid()  # one thread per joint, after every sweep over the colours
    if jd.kind[j] == _KIND_NONE or not jd.enabled[j]:
        return
    t_jp, t_jc, com_p, com_c = joint_frames(jd, body_q, body_com, j)
    # Compliant drive rows: λ <- the row's force, w λ + (1 - w)(ke (s - target) + kd (ṡ - target_qd)).
    for d in range(jd.qd_start[j], jd.qd_start[j + 1]):
        dk = jd.dof_kind[d]
        if dk < 0 or jd.dof_rho[d] < 0.0 or jd.target_ke[d] <= 0.0:
            continue
        s, gl, ga = eval_dof(dk, jd.dof_axis[d], t_jp, t_jc, com_p, com_c, 1)
        s = dof_coordinate(dk, s, jd.dof_offset[d], jd.dof_s0[d])
        k_eff, w = drive_row(jd.target_ke[d], jd.dof_rho[d])
        rate = (s - jd.dof_s0[d]) * inv_dt
        jd.dof_lam[d] = (k_eff * (s - target_q[jd.dof_coord[d]]) + w * jd.dof_lam[d]
                         + (1.0 - w) * jd.target_kd[d] * (rate - target_qd[d]))
    if wp.trace(jd.lin_proj[j]) > 0.0:
        c, jl, ja, lever = eval_linear(t_jp, t_jc, com_p, com_c, jd.lin_proj[j], 1)
        k = jd.k[j, 0]
        if jd.hard[j, 0] != 0:
            ks = k * axis_weights(wp.transform_get_rotation(t_jp), jd.k_axis[j, 0])
            jd.lam_lin[j] = jd.lam_w[j, 0] * jd.lam_lin[j] + ks * (c - jd.alpha * jd.c0_lin[j])
        jd.k[j, 0] = wp.min(k + beta_lin * wp.length(c), jd.k_hi[j, 0])
    if jd.ang_mode[j] != 0:
        c, ja = eval_angular(wp.transform_get_rotation(t_jp), wp.transform_get_rotation(t_jc), jd.ang_mode[j],
                             jd.ang_axis0[j], jd.ang_axis1[j], jd.ang_rest[j], 1)
        k = jd.k[j, 1]
        if jd.hard[j, 1] != 0:
            ks = k * axis_weights(wp.transform_get_rotation(t_jp), jd.k_axis[j, 1])
            jd.lam_ang[j] = jd.lam_w[j, 1] * jd.lam_ang[j] + ks * (c - jd.alpha * jd.c0_ang[j])
        jd.k[j, 1] = wp.min(k + beta_ang * wp.length(c), jd.k_hi[j, 1])


@wp.kernel
def _finish_cables(jd: JointData, body_q: wp.array[wp.transform], body_com: wp.array[wp.vec3],
                   cable_kind: wp.int32):
    j = wp.tid()  # one thread per joint, after the step's last sweep
    if jd.kind[j] != cable_kind:
        return
    t_jp, t_jc, com_p, com_c = joint_frames(jd, body_q, body_com, j)
    c, ja = eval_angular(wp.transform_get_rotation(t_jp), wp.transform_get_rotation(t_jc), jd.ang_mode[j],
                         jd.ang_axis0[j], jd.ang_axis1[j], jd.ang_rest[j], 1)
    kappa = wp.transpose(wp.quat_to_matrix(wp.transform_get_rotation(t_jp))) * c
    jd.kappa_end[j] = kappa
    if jd.dahl_eps[j] <= 0.0 or not jd.enabled[j]:
        jd.sigma_end[j] = wp.vec3(0.0)
        return
    length = jd.dahl_tau[j]
    scale = jd.k_hi[j, 1] * jd.dahl_eps[j]
    s = jd.dahl_s[j]
    sigma = wp.vec3(0.0)
    for i in range(3):
        si, di = dahl_state(s[i], kappa[i] - jd.kappa0[j][i], length)
        s[i] = si
        sigma[i] = scale * jd.k_axis[j, 1][i] * si
    jd.dahl_s[j] = s
    jd.sigma_end[j] = sigma


def begin_joints(jd, body_q, bd, count: int, params, device) -> None:
    """Snapshot ``C0``, the bend and the DOF values where the step's motion begins (the input pose; a
    kinematic body's previous end pose, see :func:`start_frame`); decay ``λ`` and ``k`` (warm start).
    Runs before :func:`.bodies.predict_bodies`, which moves ``bd.q_last`` on to the input pose."""
    if count:
        launch(_begin_joints, dim=count,
               inputs=[jd, body_q, bd.com, bd.dynamic, bd.has_last, bd.q_last, params.gamma], device=device)


def finish_cables(jd, body_q, body_com, count: int, device) -> None:
    """At the step's end pose (the finalize phase): each cable's rotation from rest (``kappa_end``) and its
    Dahl friction state carried there, with the friction moment it holds (``sigma_end``)."""
    if count:
        launch(_finish_cables, dim=count, inputs=[jd, body_q, body_com, KIND_CABLE], device=device)


def update_duals(jd, body_q, body_com, controls, dt: float, count: int, params, device) -> None:
    """Dual step after a sweep: ``λ ← w λ + k (C - α C0)`` on hard slots (``w = 1``: AVBD's ``λ += k (C - α C0)``);
    ``k += β |C|`` up to the ceiling; compliant drive rows ``λ ←`` their force (``controls``: the step's
    ``(joint_target_q, joint_target_qd, ...)``)."""
    if count:
        launch(_update_duals, dim=count, inputs=[jd, body_q, body_com, controls[0], controls[1], 1.0 / dt,
                                                 params.beta_lin, params.beta_ang],
                  device=device)
