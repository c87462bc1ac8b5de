"""Compliant ALM: Newton 1.8.0's finite-material formulation of rigid joints and body–body contacts.

Selected by ``rigid_compliant_alm=True``; without it the seed's AVBD runs (:mod:`.joints`, :mod:`.contacts`).
The rows, the body solve and the dual step are the seed's; this module only sets, per row and per step, the
penalty ``k`` those rows use, the weight ``w`` of their multiplier, its retention, and the options the
formulation fixes.

The row. A constraint ``C`` with a finite material stiffness ``k`` [N/m or N·m/rad] is the energy
``k C²/2``: at rest its force is ``k C`` (a joint sags ``load / k``, a resting box sinks
``weight / k``). Written as a constraint with compliance ``1/k`` (XPBD's ``C + λ/k = 0``, Macklin,
Müller, Chentanez 2016) and solved by an augmented Lagrangian with penalty ``ρ`` (a proximal step on
``λ``: maximize ``λ C - λ²/2k - (λ - λ_old)²/2ρ``), the force a sweep sees is

    F = k_eff C + w λ,    k_eff = k ρ / (k + ρ),    w = k / (k + ρ),

and after each sweep ``λ ← F`` at the current poses (the rows' dual step with this ``w``). Its fixed point
is ``λ = k C``: the material spring, whatever ``ρ``. ``ρ`` only conditions the iteration: ``ρ → ∞`` is
the penalty ``k C`` alone; ``k → ∞`` is the hard AVBD row ``ρ C + λ`` (Giles, Diaz, Yuksel 2025, whose
finite-stiffness constraints cap the penalty at the material stiffness). With ``w = 1`` and ``k_eff = k``
the same code is the seed's AVBD row, so both formulations share one body solve.

``ρ`` (recomputed every step, it depends on ``dt``):

* joints: ``ρ = max(9 k, M)``, ``M = m_eff / dt²`` with ``m_eff`` the effective mass of the slot
  (``1/m_eff = Σ 1/m`` of its dynamic bodies; angular slots the mean principal moment of inertia
  [kg·m²]). Stiff rows (``k >= M/9``) then act with ``0.9 k`` from the first iterate and the multiplier
  carries the last tenth; a single body's dual iteration contracts by ``w M / (M + k_eff) <= 0.1``.
  Measured on Newton's SolverVBD (1.8.0 default path), the first iterate of a body hanging on a BALL joint
  responds with ``k_eff/k = 0.900`` for ``k/M`` from 0.28 to 280, and with ``ρ ≈ M`` below.
* contacts: ``ρ = 1 / Σ Jᵀ H⁻¹ J`` over the dynamic sides, ``J = [n; r × n]`` at the contact point and
  ``H`` the body's 6x6 block without its contacts (inertia over ``dt²`` plus its joints' Gauss-Newton terms at
  the step's start): for a free body the effective mass along the normal over ``dt²``. Measured on
  Newton's SolverVBD: a 1 kg box on four cold contacts per step at 10 iterations rests at the depth this
  ``ρ`` predicts (1.006, 0.340, 0.149 mm for ke 2.5e3, 1e4, 1e6 N/m; 0.981, 0.245, 0.005 at 40 iterations),
  so a stiff contact behaves like the hard row with penalty ``ρ``. The joints in ``H`` matter on jointed
  bodies: with the bare inertia, a cable (light capsules on stiff joints) landing on ke 1e5 N/m ground got a
  ``ρ`` a fraction of its stiffness, its multipliers built up over many steps while it sank and then threw
  it back up 0.17 m (Newton's settles flat; with the joints in ``H`` ours does too). Rejected: the joints'
  ``9 k`` floor on contacts, which departs from the reference's rest depths by up to 0.15 mm.

What the formulation fixes (Newton 1.8.0's documented compliant path):

* every non-cable structural joint slot is an ALM row (the per-slot hard/soft mode has no effect);
  cable (ROD) slots stay material penalties (``w = 0``, ``k`` the rod's stiffness: the same fixed point);
* drives are ALM rows too (:func:`.joints.drive_row`): ``ρ = max(9 ke, m_eff/dt²)`` with the slot masses below
  (linear DOFs the slot-0 mass, angular ones the slot-1 moment), a per-DOF multiplier kept by gamma, and the
  row's force ``w λ + (1 - w)(ke (s - target) + kd (ṡ - target_qd))``, ``λ`` set to it after each sweep: the
  law ``F = ke (s - target) + kd ṡ`` is its fixed point. Measured on a loaded PRISMATIC slider (ke 1e3 N/m,
  kd 0 or 20 N·s/m) at 1 and 2 iterations: step by step within 5.6e-9 m of Newton's SolverVBD (the plain
  drive: 4.7e-4 m at 1 iteration; the damper outside the row: 8.8e-5 m). A loaded REVOLUTE drive follows it
  within 4.9e-7 rad at 1 iteration, and rests 0.011 % beyond
  ``τ/ke`` as Newton's (the multiplier's decay by gamma; 5e-6 beyond at 2 iterations, on it at 10);
* limits keep the penalty law ``limit_ke (s - bound) + limit_kd ṡ`` beyond a bound, which holds a load at the
  bound plus ``load / limit_ke`` as 1.8.0 documents. Newton's compliant path does not hold it (measured: a
  slider on a 1e4 N/m lower limit falls through and is thousands of metres away after 5 s, a REVOLUTE bob swings
  past its bound; its legacy path holds both), so there is no reference transient to match; rejected: a
  one-sided ALM row with its own multiplier and activation, for no measured difference at rest;
* body–body contacts: the normal row with the shapes' mixed ``ke`` as ``k``; the damper ``kd`` as on the
  seed's hard contacts; friction is the bounded tangential row with no tangential material
  (``k → ∞``: penalty ``ρ``, multiplier weight 1), so sticking contacts hold without creep. Measured on a
  10° slope (mu 0.5, cold contacts each step): 0.0007 mm/s (Newton's 0.0046); with the normal row's
  ``k_eff`` as the tangential penalty the box crept 1.44 mm/s;
* ``λ`` kept from step to step by ``rigid_avbd_gamma`` (the seed keeps ``alpha · gamma``); the C0
  stabilization ``alpha`` defaults to 0 (the raw material residual) for joints and contacts;
* no penalty ramp (the betas and ``k_start`` seeds are deprecated there and only warn), no sticking
  contacts or deadzone snap (the seed's, absent from 1.8.0: passing them raises ``NotImplementedError``).

Body–particle contacts and particle–body attachments are not changed by the switch (1.8.0 documents
its betas as still honoured by body–particle contacts).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import numpy as np
import warp as wp

import newton

from ....launches import launch
from .bodies import BodyData, inertia_and_joints
from .mimic import MimicData
from .tendons import TendonData
from .contacts import ContactData
from .joints import JointData
from .layout import DOF_LINEAR, KIND_CABLE, KIND_NONE

wp.set_module_options({"enable_backward": False})

RHO_FLOOR = 9.0  # joints: ρ >= 9 k, i.e. k_eff >= 0.9 k (see the module docstring)
_RHO_FLOOR = wp.constant(RHO_FLOOR)
_DOF_LINEAR = wp.constant(DOF_LINEAR)
FLOAT32_MAX = float(np.finfo(np.float32).max)

# Deprecated in 1.8.0 under compliant ALM: explicit non-None values warn once, listing them.
DEPRECATED = ("rigid_avbd_beta", "rigid_avbd_linear_beta", "rigid_avbd_angular_beta", "rigid_contact_hard",
              "rigid_contact_k_start", "rigid_joint_linear_k_start", "rigid_joint_angular_k_start")
# The seed's sticking contacts: no place in the compliant formulation.
SEED_ONLY = ("rigid_contact_stick_motion_eps", "rigid_contact_stick_freeze_translation_eps",
             "rigid_contact_stick_freeze_angular_eps")


@dataclass(frozen=True)
class Compliant:
    """The resolved compliant-ALM settings (see the module docstring)."""

    joint_alpha: float  # C0 stabilization of joint rows (default 0)
    contact_alpha: float  # of contact rows (default 0)
    gamma: float  # per-step retention of λ

    def rigid_options(self, opts):
        """The options the rigid stage runs with: no ramp, hard (ALM) contacts, no sticking, these alphas."""
        return replace(opts, rigid_avbd_alpha=self.joint_alpha, rigid_avbd_joint_alpha=self.joint_alpha,
                       rigid_avbd_contact_alpha=self.contact_alpha, rigid_avbd_beta=0.0, rigid_avbd_linear_beta=0.0,
                       rigid_avbd_angular_beta=0.0, rigid_contact_hard=True, rigid_contact_stick_motion_eps=0.0,
                       rigid_contact_stick_freeze_translation_eps=0.0, rigid_contact_stick_freeze_angular_eps=0.0)


def resolve_compliant(model, opts, passed: dict, extras: dict) -> Compliant | None:
    """The compliant settings for ``rigid_compliant_alm=True``, else None (the seed's AVBD).

    Warns once (``NewtonDeprecationWarning``) naming the deprecated controls passed explicitly, as 1.8.0 does.

    Raises:
        NotImplementedError: the seed's sticking-contact options set explicitly (not part of this formulation).
        ValueError: a joint stiffness beyond float32, or a shape material that is negative or not finite.
    """
    if extras.get("rigid_compliant_alm") is not True:
        return None
    stick = [n for n in SEED_ONLY if passed.get(n) not in (None, 0, 0.0)]
    if stick:
        raise NotImplementedError(f"SolverVBD: {', '.join(stick)} (the seed's sticking contacts) are not part of "
                                  "rigid_compliant_alm=True; omit them, or omit rigid_compliant_alm for the seed's AVBD")
    old = [n for n in DEPRECATED if passed.get(n) is not None]
    if old:
        warnings.warn(f"SolverVBD: {', '.join(old)} are deprecated and have no effect on body–body contacts and "
                      "joints under rigid_compliant_alm=True (fixed material stiffness, internal rho); author the "
                      "material stiffness instead", newton.NewtonDeprecationWarning, stacklevel=3)
    for name in ("rigid_joint_linear_ke", "rigid_joint_angular_ke"):
        if getattr(opts, name) > FLOAT32_MAX:
            raise ValueError(f"{name} must be representable in float32 under rigid_compliant_alm, got "
                             f"{getattr(opts, name)!r}")
    _check_shape_materials(model)
    alpha = passed.get("rigid_avbd_alpha")
    joint = passed.get("rigid_avbd_joint_alpha")
    contact = passed.get("rigid_avbd_contact_alpha")
    fallback = 0.0 if alpha is None else float(alpha)
    return Compliant(joint_alpha=fallback if joint is None else float(joint),
                     contact_alpha=fallback if contact is None else float(contact), gamma=float(opts.rigid_avbd_gamma))


def _check_shape_materials(model) -> None:
    """Contact material (``shape_material_ke/kd/mu``) must be finite and non-negative: it is the spring itself."""
    if not model.shape_count:
        return
    for name in ("shape_material_ke", "shape_material_kd", "shape_material_mu"):
        values = getattr(model, name).numpy()
        bad = np.flatnonzero(~np.isfinite(values) | (values < 0.0))
        if bad.size:
            raise ValueError(f"SolverVBD(rigid_compliant_alm=True): model.{name}[{int(bad[0])}] must be finite and "
                             f"non-negative, got {values[bad[0]]!r}")


@wp.func
def _conditioned(k: wp.float32, rho: wp.float32):
    """``(k_eff, w)`` of a material ``k`` under the metric ``ρ``; a zero spring stays zero."""
    s = k + rho
    if s <= 0.0:
        return 0.0, 0.0
    return k * rho / s, k / s


@wp.kernel
def _condition_joints(jd: JointData, k_material: wp.array2d[wp.float32], mass_eff: wp.array2d[wp.float32],
                      inv_dt2: wp.float32):
    j, s = wp.tid()  # one thread per (joint, structural slot)
    # The drive rows of this slot's kind (linear DOFs with slot 0, angular with slot 1): their metric m_eff/dt².
    for d in range(jd.qd_start[j], jd.qd_start[j + 1]):
        dk = jd.dof_kind[d]
        if dk >= 0 and (dk == _DOF_LINEAR) == (s == 0):
            jd.dof_rho[d] = mass_eff[j, s] * inv_dt2
    k = k_material[j, s]
    if k < 0.0:  # not an ALM row (cables, FREE joints)
        return
    k_eff, w = _conditioned(k, wp.max(_RHO_FLOOR * k, mass_eff[j, s] * inv_dt2))
    jd.k[j, s] = k_eff
    jd.k_lo[j, s] = k_eff
    jd.k_hi[j, s] = k_eff
    jd.lam_w[j, s] = w


@wp.kernel
def _body_compliance(
    bd: BodyData,
    jd: JointData,
    md: MimicData,
    td: TendonData,
    body_q: wp.array[wp.transform],
    target_q: wp.array[wp.float32],
    target_qd: wp.array[wp.float32],
    joint_f: wp.array[wp.float32],
    contact_count: wp.array[wp.int32],
    dt: wp.float32,
    inv_ll: wp.array[wp.mat33],
    inv_la: wp.array[wp.mat33],
    inv_aa: wp.array[wp.mat33],
):
    b = wp.tid()  # one thread per body, at the step's start poses
    if bd.dynamic[b] == 0 or contact_count[b] == 0:
        return  # no row of this step reads it
    # The body's 6x6 block without its contacts (as the body solve builds it), inverted by the Schur
    # complement on the (SPD) linear block. x_tilde is not set yet: the forces are not used.
    f_l, f_a, h_ll, h_la, h_aa = inertia_and_joints(bd, jd, md, td, body_q, target_q, target_qd, joint_f, b, dt)
    a_inv = wp.inverse(h_ll)
    s_inv = wp.inverse(h_aa - wp.transpose(h_la) * a_inv * h_la)
    cross = a_inv * h_la * s_inv
    inv_ll[b] = a_inv + cross * wp.transpose(h_la) * a_inv
    inv_la[b] = -cross
    inv_aa[b] = s_inv


@wp.func
def _compliance_at(body_q: wp.array[wp.transform], com: wp.array[wp.vec3], inv_ll: wp.array[wp.mat33],
                   inv_la: wp.array[wp.mat33], inv_aa: wp.array[wp.mat33], b: wp.int32, point: wp.vec3, n: wp.vec3):
    """``Jᵀ H⁻¹ J`` of body ``b`` for a push along ``n`` at its body-frame ``point``, ``J = [n; r × n]`` [m/N]."""
    t = body_q[b]
    rn = wp.cross(wp.transform_point(t, point) - wp.transform_point(t, com[b]), n)
    return wp.dot(n, inv_ll[b] * n) + 2.0 * wp.dot(n, inv_la[b] * rn) + wp.dot(rn, inv_aa[b] * rn)


@wp.kernel
def _condition_contacts(cd: ContactData, body_q: wp.array[wp.transform], com: wp.array[wp.vec3],
                        dynamic: wp.array[wp.int32], inv_ll: wp.array[wp.mat33], inv_la: wp.array[wp.mat33],
                        inv_aa: wp.array[wp.mat33]):
    i = wp.tid()  # one thread per contact row, after the rows are filed or warm-started
    if i >= cd.count[0]:
        return
    n = cd.normal[i]
    compliance = float(0.0)  # [m/N]
    b0 = cd.body0[i]
    b1 = cd.body1[i]
    if b0 >= 0:
        if dynamic[b0] != 0:
            compliance = compliance + _compliance_at(body_q, com, inv_ll, inv_la, inv_aa, b0, cd.point0[i], n)
    if b1 >= 0:
        if dynamic[b1] != 0:
            compliance = compliance + _compliance_at(body_q, com, inv_ll, inv_la, inv_aa, b1, cd.point1[i], n)
    rho = float(0.0)
    if compliance > 0.0:
        rho = 1.0 / compliance
    k_eff, w = _conditioned(cd.ke[i], rho)
    cd.k[i] = k_eff
    cd.lam_w[i] = w


def _slot_masses(model, layout, dynamic: np.ndarray) -> np.ndarray:
    """Per (joint, slot) effective mass [kg] / inertia [kg·m²] of the dynamic bodies it joins (0: none)."""
    nj = int(model.joint_count)
    mass = model.body_mass.numpy().astype(np.float64)
    moment = np.trace(model.body_inertia.numpy().astype(np.float64), axis1=1, axis2=2) / 3.0
    parent, child = model.joint_parent.numpy(), model.joint_child.numpy()
    out = np.zeros((max(nj, 1), 2), np.float32)
    for j in range(nj):
        inv = np.zeros(2)
        for b in (parent[j], child[j]):
            if b >= 0 and dynamic[b]:
                inv += (1.0 / mass[b], 1.0 / max(moment[b], 1e-30))
        out[j] = np.where(inv > 0.0, 1.0 / np.maximum(inv, 1e-30), 0.0)
    return out


class CompliantRows:
    """The per-step conditioning of the rigid stage's rows (see the module docstring)."""

    def __init__(self, model, work, settings: Compliant):
        dev = model.device
        self.device = dev
        jd, layout, nj = work.joints, work.layout, work.joint_count
        n = max(nj, 1)
        # Material k per (joint, slot); -1 marks slots that are not ALM rows (cables keep their penalty).
        k = np.tile([work.params.k_max_lin, work.params.k_max_ang], (n, 1)).astype(np.float32)
        if nj:
            kind = layout.kind
            k[(kind == KIND_CABLE) | (kind == KIND_NONE)] = -1.0
            hard = jd.hard.numpy()
            hard[kind != KIND_CABLE] = 1  # every structural non-cable slot is an ALM row
            jd.hard.assign(hard)
        else:
            k[:] = -1.0
        self.k_material = wp.array(k, dtype=wp.float32, device=dev)
        self.mass_eff = wp.array(_slot_masses(model, layout, work.dynamic), dtype=wp.float32, device=dev)
        jd.lam_keep = settings.gamma
        if work.contacts is not None:
            work.contacts.keep = settings.gamma
        self.settings = settings
        nb = max(int(model.body_count), 1)
        self.inv_blocks = tuple(wp.zeros(nb, dtype=wp.mat33, device=dev) for _ in range(3))  # (ll, la, aa) [1/(N/m)]

    def condition_joints(self, jd, count: int, dt: float) -> None:
        """Per structural slot: ``k_eff`` and ``w`` from the material ``k`` and ``ρ`` (before the step's warm start)."""
        if count:
            launch(_condition_joints, dim=(count, 2), inputs=[jd, self.k_material, self.mass_eff, 1.0 / (dt * dt)],
                   device=self.device)

    def condition_contacts(self, rc, bodies, jd, md, td, controls, body_q, dt: float) -> None:
        """Per contact row: ``k_eff`` and ``w`` from the mixed ``ke`` and ``ρ`` at the step's start poses ``body_q``
        (after :meth:`condition_joints`: the bodies' blocks hold their joints' ``k_eff``)."""
        launch(_body_compliance, dim=self.inv_blocks[0].shape[0],
               inputs=[bodies, jd, md, td, body_q, *controls, rc.data.body_count, float(dt)],
               outputs=list(self.inv_blocks),
               device=self.device)
        launch(_condition_contacts, dim=rc.rows, inputs=[rc.data, body_q, bodies.com, bodies.dynamic, *self.inv_blocks],
               device=self.device)


__all__ = ["Compliant", "CompliantRows", "resolve_compliant"]
