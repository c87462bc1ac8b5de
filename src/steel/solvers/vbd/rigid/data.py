"""Rigid AVBD work: body and joint arrays built once from the model, and the solve's parameters.

=================  ===============================================================  =================
field              meaning [unit]                                                   shape
=================  ===============================================================  =================
bodies.dynamic     1 where VBD integrates the body (positive mass, not kinematic)   (body,)
bodies.x_prev      COM at the start of the step, world [m]                          (body,)
bodies.q_prev      orientation at the start of the step                             (body,)
bodies.x_tilde     inertial target COM [m]                                          (body,)
bodies.q_tilde     inertial target orientation                                      (body,)
bodies.v_last      previous step's input COM velocity [m/s]                         (body,)
bodies.w_last      previous step's input angular velocity, world [rad/s]            (body,)
bodies.turn_lost   turns of this step that float32 rounding dropped, world [rad]    (body,)
joints.hard        1 = augmented-Lagrangian slot, 0 = penalty-only                  (joint, 2)
joints.k           current penalty stiffness [N/m] (slot 0), [N·m/rad] (slot 1)     (joint, 2)
joints.lam_lin     persistent multiplier of slot 0 [N]                              (joint,)
joints.lam_ang     persistent multiplier of slot 1 [N·m]                            (joint,)
joints.lam_w       weight of λ in force and dual step (1; compliant: k/(k + ρ))     (joint, 2)
joints.c0_lin      slot 0 value at the start of the step [m]                        (joint,)
joints.c0_ang      slot 1 value at the start of the step [rad]                      (joint,)
joints.dof_s0      drive/limit coordinate at the start of the step [m or rad]       (dof,)
joints.dof_rho     compliant drive rows' m_eff/dt² [N/m, N·m/rad]; -1: plain drive  (dof,)
joints.dof_lam     compliant drive rows' multiplier [N or N·m]                      (dof,)
joints.k_lo/k_hi   penalty seed / ceiling (cables: the material stiffness)          (joint, 2)
joints.k_axis      per-axis share of k in the parent anchor frame (cables)          (joint, 2)
joints.kd          damping per parent-anchor axis [N·s/m], [N·m·s/rad]              (joint, 2)
joints.dahl_s      cable Dahl friction state, normalized, parent anchor frame       (joint,)
joints.kappa_end   cable rotation from rest at the step's end, anchor frame [rad]   (joint,)
joints.sigma_end   cable Dahl friction moment at the step's end, anchor frame [N·m] (joint,)
tendons.lam        tendon run tension [N] (:mod:`.tendons`)                         (run,)
=================  ===============================================================  =================
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import warp as wp

import newton

from ..coupling import no_particle_contacts
from .bodies import BodyData
from .compliant import CompliantRows
from .contacts import ContactData, RigidContacts
from .joints import JointData
from .layout import KIND_CABLE, JointLayout, body_joint_adjacency
from .mimic import Mimics
from .tendons import Tendons, check_tendon_colouring, split_groups


def dynamic_bodies(model) -> np.ndarray:
    """Bodies VBD integrates: positive inverse mass and not kinematic (bool per body)."""
    if not model.body_count:
        return np.zeros(0, bool)
    kinematic = (model.body_flags.numpy() & int(newton.BodyFlags.KINEMATIC)) != 0
    return ~kinematic & (model.body_inv_mass.numpy() > 0.0)


def check_rigid_model(model) -> np.ndarray:
    """Raise what the rigid solve cannot run; return the dynamic-body mask.

    Raises:
        ValueError: dynamic bodies without ``model.body_color_groups`` (call ``builder.color()``).

    Body–body contacts are solved (:mod:`.contacts`), body–particle contacts two ways (:mod:`..coupling`).
    """
    dynamic = dynamic_bodies(model)
    if not dynamic.any():
        return dynamic
    if not model.body_color_groups:
        raise ValueError("SolverVBD requires rigid-body coloring: model.body_color_groups is empty; call "
                         "builder.color() (newton.ModelBuilder.color) before builder.finalize()")
    return dynamic


def _joint_is_hard(model, count: int, kind: np.ndarray) -> np.ndarray:
    """Per-joint hard flag from the optional ``vbd:joint_is_hard`` attribute (default 1); cables soft.

    The attribute sets non-cable joints only: its registered default (1) would otherwise make every
    cable hard, where the seed's cable stretch and bend slots default to soft; a cable is switched with
    ``set_joint_constraint_mode``.
    """
    ns = getattr(model, "vbd", None)
    values = getattr(ns, "joint_is_hard", None) if ns is not None else None
    if values is None or count == 0:
        values = np.ones(count, np.int32)
    values = values.numpy() if hasattr(values, "numpy") else np.asarray(values)
    bad = np.flatnonzero((values != 0) & (values != 1))
    if bad.size:
        raise ValueError(f"vbd:joint_is_hard must be 0 or 1, got {values[bad[0]]!r} on joint {int(bad[0])}")
    return np.where(kind == KIND_CABLE, 0, values).astype(np.int32)


def _dahl(model, layout) -> tuple[np.ndarray, np.ndarray]:
    """Per-joint Dahl ``(ε_max [rad], τ)``: the ``vbd:`` attributes on cables where both are positive, else 0."""
    n = int(model.joint_count)
    ns = getattr(model, "vbd", None)
    eps, tau = (getattr(ns, name, None) if ns is not None else None for name in ("dahl_eps_max", "dahl_tau"))
    if eps is None or tau is None or n == 0:
        return np.zeros(max(n, 1), np.float32), np.ones(max(n, 1), np.float32)
    eps, tau = eps.numpy().astype(np.float32), tau.numpy().astype(np.float32)
    on = (layout.kind == KIND_CABLE) & (eps > 0.0) & (tau > 0.0) & (layout.cable_ke[:, 1].max(axis=1) > 0.0)
    return np.where(on, eps, 0.0).astype(np.float32), np.where(on, tau, 1.0).astype(np.float32)


def solve_params(opts) -> SimpleNamespace:
    """Penalty seeds, ceilings, betas, alpha and gamma as the kernels take them."""
    beta_lin = opts.rigid_avbd_beta if opts.rigid_avbd_linear_beta is None else opts.rigid_avbd_linear_beta
    beta_ang = opts.rigid_avbd_beta if opts.rigid_avbd_angular_beta is None else opts.rigid_avbd_angular_beta
    alpha = opts.rigid_avbd_alpha if opts.rigid_avbd_joint_alpha is None else opts.rigid_avbd_joint_alpha
    k_max_lin, k_max_ang = opts.rigid_joint_linear_ke, opts.rigid_joint_angular_ke
    return SimpleNamespace(
        alpha=float(alpha), gamma=float(opts.rigid_avbd_gamma), beta_lin=float(beta_lin), beta_ang=float(beta_ang),
        ramp_lin=int(beta_lin > 0.0), ramp_ang=int(beta_ang > 0.0),
        # With no ramp k is the ceiling; a seed above its ceiling is capped by it.
        k_min_lin=float(min(opts.rigid_joint_linear_k_start, k_max_lin)),
        k_min_ang=float(min(opts.rigid_joint_angular_k_start, k_max_ang)),
        k_max_lin=float(k_max_lin), k_max_ang=float(k_max_ang),
    )


class RigidWork:
    """Body/joint arrays, colour groups and parameters of the rigid solve (see the module table).

    ``compliant`` (:class:`.compliant.Compliant`, or None for the seed's AVBD) selects the compliant ALM
    formulation: the rows are built from its options and conditioned every step (:mod:`.compliant`).
    """

    def __init__(self, model, opts, compliant=None):
        dev = model.device
        if compliant is not None:
            opts = compliant.rigid_options(opts)
        dynamic = check_rigid_model(model)
        self.device = dev
        self.dynamic = dynamic
        self.params = solve_params(opts)
        self.layout = layout = JointLayout(model)
        self.refresh_tendons(model)  # routed tendon runs (.tendons) and the colour groups they split
        nb, nj = int(model.body_count), int(model.joint_count)
        start, flat = body_joint_adjacency(model, layout.kind)

        bd = BodyData()
        bd.com = model.body_com
        bd.mass = model.body_mass
        bd.inertia = model.body_inertia
        bd.dynamic = wp.array(dynamic.astype(np.int32), dtype=wp.int32, device=dev)
        bd.world = model.body_world
        bd.joint_start = wp.array(start, dtype=wp.int32, device=dev)
        bd.joint_list = wp.array(flat, dtype=wp.int32, device=dev)
        bd.x_prev = wp.zeros(nb, dtype=wp.vec3, device=dev)
        bd.q_prev = wp.zeros(nb, dtype=wp.quat, device=dev)
        bd.x_tilde = wp.zeros(nb, dtype=wp.vec3, device=dev)
        bd.q_tilde = wp.zeros(nb, dtype=wp.quat, device=dev)
        bd.v_last = wp.zeros(nb, dtype=wp.vec3, device=dev)
        bd.w_last = wp.zeros(nb, dtype=wp.vec3, device=dev)
        bd.has_last = wp.zeros(nb, dtype=wp.int32, device=dev)
        bd.q_last = wp.zeros(nb, dtype=wp.transform, device=dev)
        bd.turn_lost = wp.zeros(nb, dtype=wp.vec3, device=dev)
        # First iterate of a step: adaptive (True) or the inertial target, where
        # newton.solvers.SolverVBD starts (tests switch it for side-by-side runs).
        self.adaptive_init = True
        self.bodies = bd

        n = max(nj, 1)
        nd = max(int(model.joint_dof_count), 1)
        p = self.params
        jd = JointData()
        if nj:
            jd.kind = wp.array(layout.kind, dtype=wp.int32, device=dev)
            jd.parent, jd.child, jd.enabled = model.joint_parent, model.joint_child, model.joint_enabled
            jd.x_p = model.joint_X_p
            jd.qd_start = model.joint_qd_start
        else:
            jd.kind = wp.zeros(1, dtype=wp.int32, device=dev)
            jd.parent = jd.child = wp.zeros(1, dtype=wp.int32, device=dev)
            jd.enabled = wp.zeros(1, dtype=wp.bool, device=dev)
            jd.x_p = wp.zeros(1, dtype=wp.transform, device=dev)
            jd.qd_start = wp.zeros(2, dtype=wp.int32, device=dev)
        jd.x_c = wp.array(layout.x_c if nj else np.zeros((1, 7)), dtype=wp.transform, device=dev)
        jd.lin_proj = wp.array(layout.lin_proj if nj else np.zeros((1, 3, 3)), dtype=wp.mat33, device=dev)
        jd.ang_mode = wp.array(layout.ang_mode if nj else np.zeros(1), dtype=wp.int32, device=dev)
        jd.ang_axis0 = wp.array(layout.ang_axis0 if nj else np.zeros((1, 3)), dtype=wp.vec3, device=dev)
        jd.ang_axis1 = wp.array(layout.ang_axis1 if nj else np.zeros((1, 3)), dtype=wp.vec3, device=dev)
        jd.ang_rest = wp.array(layout.ang_rest if nj else np.zeros(1), dtype=wp.float32, device=dev)
        cable = layout.kind == KIND_CABLE if nj else np.zeros(1, bool)
        hard = np.repeat(_joint_is_hard(model, nj, layout.kind)[:, None], 2, axis=1) if nj else np.ones((1, 2), np.int32)
        jd.hard = wp.array(hard, dtype=wp.int32, device=dev)
        # Penalty ceilings: the rigid_joint_*_ke options, or a cable's material stiffness; seeds below.
        k_hi = np.tile([p.k_max_lin, p.k_max_ang], (n, 1)).astype(np.float32)
        kd = np.tile([float(opts.rigid_joint_linear_kd), float(opts.rigid_joint_angular_kd)], (n, 1))
        kd = np.repeat(kd[:, :, None], 3, axis=2)
        k_axis = np.ones((n, 2, 3), np.float32)
        if nj:
            # A cable slot's penalty is its stiffest axis; the others are that penalty times their share.
            ke3 = layout.cable_ke[cable].astype(np.float64)
            top = ke3.max(axis=2)
            k_hi[cable] = top
            k_axis[cable] = np.where(top[:, :, None] > 0.0, ke3 / np.maximum(top[:, :, None], 1e-30), 1.0)
            kd[cable] = layout.cable_kd[cable]
        ramp = np.array([p.ramp_lin, p.ramp_ang], bool)
        seeds = np.array([opts.rigid_joint_linear_k_start, opts.rigid_joint_angular_k_start])
        k_lo = np.where(ramp, np.minimum(seeds, k_hi), k_hi).astype(np.float32)
        jd.k_lo = wp.array(k_lo, dtype=wp.float32, device=dev)
        jd.k_hi = wp.array(k_hi, dtype=wp.float32, device=dev)
        jd.kd = wp.array(np.maximum(kd, 0.0), dtype=wp.vec3, device=dev)
        jd.k_axis = wp.array(k_axis, dtype=wp.vec3, device=dev)
        jd.k = wp.array(k_lo, dtype=wp.float32, device=dev)
        dahl_eps, dahl_tau = _dahl(model, layout)
        jd.dahl_eps = wp.array(dahl_eps, dtype=wp.float32, device=dev)
        jd.dahl_tau = wp.array(dahl_tau, dtype=wp.float32, device=dev)
        jd.dahl_s = wp.zeros(n, dtype=wp.vec3, device=dev)
        jd.kappa0 = wp.zeros(n, dtype=wp.vec3, device=dev)
        jd.kappa_end = wp.zeros(n, dtype=wp.vec3, device=dev)
        jd.sigma_end = wp.zeros(n, dtype=wp.vec3, device=dev)
        self.has_cables = bool(cable.any()) if nj else False
        self.has_dahl = bool((dahl_eps > 0.0).any())
        jd.lam_lin = wp.zeros(n, dtype=wp.vec3, device=dev)
        jd.lam_ang = wp.zeros(n, dtype=wp.vec3, device=dev)
        jd.c0_lin = wp.zeros(n, dtype=wp.vec3, device=dev)
        jd.c0_ang = wp.zeros(n, dtype=wp.vec3, device=dev)
        jd.dof_kind = wp.array(layout.dof_kind, dtype=wp.int32, device=dev)
        jd.dof_axis = wp.array(layout.dof_axis, dtype=wp.vec3, device=dev)
        jd.dof_offset = wp.array(layout.dof_offset, dtype=wp.float32, device=dev)
        jd.dof_coord = wp.array(layout.dof_coord, dtype=wp.int32, device=dev)
        jd.dof_s0 = wp.array(layout.dof_offset, dtype=wp.float32, device=dev)  # the rest pose's coordinates
        zeros = wp.zeros(nd, dtype=wp.float32, device=dev)
        has_dofs = model.joint_dof_count > 0
        jd.target_ke = model.joint_target_ke if has_dofs else zeros
        jd.target_kd = model.joint_target_kd if has_dofs else zeros
        jd.limit_lower = model.joint_limit_lower if has_dofs else zeros
        jd.limit_upper = model.joint_limit_upper if has_dofs else zeros
        jd.limit_ke = model.joint_limit_ke if has_dofs else zeros
        jd.limit_kd = model.joint_limit_kd if has_dofs else zeros
        jd.alpha = p.alpha
        jd.lam_w = wp.ones((n, 2), dtype=wp.float32, device=dev)  # AVBD; .compliant conditions it per step
        jd.lam_keep = p.alpha * p.gamma
        jd.dof_rho = wp.full(nd, -1.0, dtype=wp.float32, device=dev)  # the plain drive; .compliant sets m_eff/dt²
        jd.dof_lam = wp.zeros(nd, dtype=wp.float32, device=dev)
        self.joints = jd
        self.joint_count = nj
        self.mimics = Mimics(model, layout, p.k_max_lin, p.k_max_ang)  # q_f = c0 + c1 q_l rows (.mimic)
        # Body–body contacts: rows from the step's Contacts (any shape may be in them: the pipeline's
        # broad phase, not model.shape_contact_pairs, decides); an empty set keeps the kernel's loop empty.
        self.contacts = RigidContacts(model, opts, dynamic) if model.shape_count else None
        self.no_contacts = _empty_contacts(nb, dev)
        self.no_particle_contacts = no_particle_contacts(nb, dev)
        self.empty_targets = zeros
        self.compliant = CompliantRows(model, self, compliant) if compliant is not None else None

    def refresh_tendons(self, model) -> None:
        """(Re)build the tendon runs from the model (``TENDON_PROPERTIES``: routes, materials, reset values; tensions
        start cold) and split the colour groups so no two bodies of a run share one (:mod:`.tendons`)."""
        tendons = Tendons(model, self.dynamic)
        check_tendon_colouring(model, tendons.runs)
        self.tendons = tendons
        groups = [g for g in model.body_color_groups if g.shape[0] > 0]
        self.groups = split_groups(groups, tendons.run_bodies, self.device)

    def set_joint_mode(self, joint: int, hard: bool, slot: int | None) -> None:
        """Set slot ``slot`` (None: all structural slots) of ``joint`` hard or soft; a switch drops its ``λ``."""
        slots = range(self.layout.slot_count(joint)) if slot is None else (slot,)
        flags = self.joints.hard.numpy()
        lam = (self.joints.lam_lin.numpy(), self.joints.lam_ang.numpy())
        for s in slots:
            if flags[joint, s] != int(bool(hard)):
                flags[joint, s] = int(bool(hard))
                lam[s][joint] = 0.0
        self.joints.hard.assign(flags)
        self.joints.lam_lin.assign(lam[0])
        self.joints.lam_ang.assign(lam[1])


def _empty_contacts(body_count: int, device) -> ContactData:
    """A contact set with no rows: every body's list is empty."""
    cd = ContactData()
    one_i = wp.zeros(1, dtype=wp.int32, device=device)
    one_f = wp.zeros(1, dtype=wp.float32, device=device)
    one_v = wp.zeros(1, dtype=wp.vec3, device=device)
    cd.count = one_i
    cd.shape0 = cd.shape1 = cd.body0 = cd.body1 = one_i
    cd.point0 = cd.point1 = cd.offset0 = cd.offset1 = cd.normal = one_v
    cd.margin0 = cd.margin1 = cd.mu = cd.ke = cd.kd = cd.k = cd.lam = cd.c0 = one_f
    cd.lam_w = one_f
    cd.lam_t = one_v
    cd.damp = cd.stick = cd.sticky = one_i
    cd.body_count = wp.zeros(max(body_count, 1), dtype=wp.int32, device=device)
    cd.body_list = wp.zeros((max(body_count, 1), 1), dtype=wp.int32, device=device)
    cd.hard = 0
    cd.alpha = 0.0
    cd.friction_epsilon = 0.0
    cd.stick_eps = 0.0
    return cd
