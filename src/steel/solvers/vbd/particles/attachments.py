"""Particle–body attachments (``ModelBuilder.add_attachment_particle_body``): springs from particles to body points.

Attachment ``j`` ties particle ``p`` to the point ``a`` fixed in body ``b``'s frame (about the body
origin, as the builder authors it). With ``A = X_b(a)`` the point in world frame, the constraint and
its energy are

    C = x_p - A   [m],    E = k/2 |C|²,    damping: f_d = -(kd/dt) (C - C_t)

with ``k`` = ``attachment_particle_body_stiffness`` [N/m], ``kd`` = ``..._damping`` [N·s/m] and
``C_t`` the constraint at the step's start (the VBD paper's Rayleigh damping of an element, Chen, Liu,
Yang, Yuksel, "Vertex Block Descent", ACM TOG 43(4) 2024, sec. 3.5, on the constraint's change over
the step).

Every row is Newton 1.8.0's documented compliant ALM row, as the joints' rows of :mod:`..rigid.compliant`: with
a metric ``ρ = m_eff / dt²`` [N/m] (below), the force on the particle is

    f = -(k_eff C + w λ) - (kd/dt)(C - C_t),    k_eff = k ρ / (k + ρ),  w = k / (k + ρ),

with the 3x3 Hessian ``(k_eff + kd/dt) I``, and after every iteration ``λ ← k_eff C + w λ`` at the current
iterate (kept from step to step by ``rigid_avbd_gamma``). The fixed point is ``λ = k C``, the spring's
static offset, whatever ``ρ``. A hard row (``stiffness = inf``, the builder's point constraint ``C = 0``) is
the same row's ``k -> inf`` limit, as 1.8.0 documents it: ``k_eff = ρ``, ``w = 1``, so ``f = -(ρ C + λ)``
and ``λ ← λ + ρ C``, the augmented Lagrangian of the AVBD paper's hard constraints (Giles, Diaz, Yuksel,
ACM TOG 44(4) 2025, sec. 3.2-3.3) with ``ρ`` as its penalty; its fixed point is ``C = 0``, and damping is
ignored (documented). Both sides apply the same ``λ``, so the Gauss-Seidel lag (each side reads the
other's latest iterate) only affects ``k_eff C``:

* the vertex step of ``p`` (:mod:`.solve`) adds ``f`` and its Hessian;
* the 6x6 body step of ``b`` (AVBD; :mod:`..coupling`) adds the reaction ``-f`` at ``A`` (torque
  ``r × (-f)``, ``r = A - x_com``) and ``Jᵀ H J`` with ``J = [I, -[r]×]``, as for a particle contact on a body.

The metric: ``1/m_eff`` is the sum of ``1/m`` of the ends this solver moves, the particle's mass and, when it
integrates the body, the body's mass plus the masses of all particles attached to that body (``load``, taken
when the attachments are built: at construction and on a body-properties change). The
body end moves with what hangs on it; with the body's bare mass a 1 kg particle hung from a 10 g body got
``ρ`` of 10 g over dt² on both its row and the row holding the body, the multipliers could not carry the
load (each dual step adds ``ρ C``, the particle's own inertia 100x larger) and both rows diverged, soft
(1e4 N/m, ``k_eff ≈ ρ``) and hard alike (Newton's SolverVBD too, measured: the particle 8.7e5 m away after
2 s on a jointed 10 g body); with the load the hard one stays within 8e-5 m of its anchor (tests). For a
light particle on a heavy body it changes nothing measurable (``m_eff`` ≈ the particle's mass).

Measured on a free 1 kg body and 0.1 kg particle 0.3 m off its COM, the attachment stretched 1 cm, first step
at 10 iterations (tests), momentum lost [kg·m/s] along the arm and across it: soft (1e4 N/m) 5.3e-6 and
2.27e-5 (Newton's SolverVBD 5.4e-5 and 2.26e-5), hard 6.4e-6 and 2.72e-5 (Newton's 6.6e-5 and 2.71e-5); the
plain spring ``k C`` evaluated by each side at the other's last iterate lost 1.95e-3 and 2.96e-2. A 1-D model
of the two block steps reproduces Newton's figures at 1, 2, 5 and 10 iterations to three digits with the bare
reduced mass (Newton's metric here) and the body swept before the particle; ours sweeps the particle first, which leaves the lighter end's
error last. On a particle alone (a kinematic body) the hard row closes ``1 - 2^-n`` of a gap in ``n``
iterations, Newton's figures to the printed digits. Rejected: the joints' ``ρ = max(9 k, m_eff/dt²)``, which
puts 90 % of the force in the lagged term (1-D model: 1.4e-3 kg·m/s, no better than the spring); for hard rows
the AVBD penalty ramp (``k`` from ``rigid_joint_linear_k_start`` growing by ``β |C|``, the seed's hard
constraints), which lost 2.4e-4 kg·m/s across the arm and moved the pair's COM 1.1e-7 m in 10 steps (this
row: 2.05e-8 m; Newton's 2.3e-8 m), and a large finite penalty for ``inf`` (1e30 N/m next to masses of order
1 kg/dt² loses the float32 block solve).

Bodies VBD does not integrate (kinematic, zero mass, static): the anchor is where the body's pose in
``state_in`` carries it over the step with its velocity (as particle–shape contacts place a kinematic
shape, :mod:`.contacts`), and only the particle moves.

No ``α C_t`` stabilization: a hard attachment violated at the step's start is closed in that step
(a particle whose kinematic body was moved 1 m sits on its anchor, Newton's SolverVBD the same).

Every step reads ``stiffness``, ``damping`` and ``enabled`` from the model's arrays, so in-place edits
act at the next step (a row switched between soft and hard keeps its multiplier; a disabled row's is cleared). :meth:`Attachments.reset` clears the
multipliers of selected worlds (``SolverVBD.reset``), soft and hard.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.struct
class AttachmentData:
    """The model's attachments as both block steps read them (see the module docstring)."""

    particle_start: wp.array[wp.int32]  # (particle_count + 1,) CSR: attachments of each particle
    particle_list: wp.array[wp.int32]
    body_start: wp.array[wp.int32]  # (body_count + 1,) CSR: attachments of each body
    body_list: wp.array[wp.int32]
    particle: wp.array[wp.int32]  # model.attachment_particle_body_particle
    body: wp.array[wp.int32]
    point: wp.array[wp.vec3]  # body frame [m]
    stiffness: wp.array[wp.float32]  # [N/m]
    damping: wp.array[wp.float32]  # [N·s/m]
    enabled: wp.array[wp.bool]
    live: wp.array[wp.int32]  # 1: the body is integrated here, its anchor follows body_q
    anchor: wp.array[wp.vec3]  # the anchor at the end of the step on other bodies [m], world
    c_start: wp.array[wp.vec3]  # C at the step's start [m]
    lam: wp.array[wp.vec3]  # the multiplier, force on the constraint [N]
    rho: wp.array[wp.float32]  # the ALM metric m_eff / dt² [N/m] of the step (0: both ends fixed)
    load: wp.array[wp.float32]  # mass of all particles attached to the row's body [kg]
    body_q: wp.array[wp.transform]  # the bodies' current iterate


@wp.func
def _anchor(ad: AttachmentData, j: int):
    if ad.live[j] != 0:
        return wp.transform_point(ad.body_q[ad.body[j]], ad.point[j])
    return ad.anchor[j]


@wp.func
def attachment_force(ad: AttachmentData, j: int, x: wp.vec3, dt: float):
    """Force [N] of attachment ``j`` on its particle at ``x``, its scalar Hessian [N/m] and the anchor [m]."""
    anchor = _anchor(ad, j)
    if not ad.enabled[j]:
        return wp.vec3(0.0), float(0.0), anchor
    c = x - anchor
    k_eff, w = _row(ad, j)
    if wp.isinf(ad.stiffness[j]):  # hard: the row's k -> inf limit, damping ignored
        return -(k_eff * c + w * ad.lam[j]), k_eff, anchor
    kd_dt = ad.damping[j] / dt
    return -(k_eff * c + w * ad.lam[j]) - kd_dt * (c - ad.c_start[j]), k_eff + kd_dt, anchor


@wp.func
def _row(ad: AttachmentData, j: int):
    """The compliant row of attachment ``j``: ``k_eff = k ρ / (k + ρ)`` [N/m] and the multiplier's weight ``w``.

    Hard (``k = inf``): the limit ``k_eff = ρ``, ``w = 1``, written out, since ``inf / inf`` is NaN."""
    k = ad.stiffness[j]
    rho = ad.rho[j]
    if wp.isinf(k):
        return wp.max(rho, 0.0), float(1.0)  # both ends fixed (rho 0): no force beyond the multiplier, and none moves
    if rho <= 0.0 or k + rho <= 0.0:  # both ends fixed (or no material): the plain spring
        return k, float(0.0)
    return k * rho / (k + rho), k / (k + rho)


@wp.func
def particle_attachments(ad: AttachmentData, i: int, x: wp.vec3, dt: float):
    """Sum of particle ``i``'s attachment forces [N] and 3x3 Hessian [N/m] at ``x``."""
    f = wp.vec3(0.0)
    h = float(0.0)
    if i + 1 >= ad.particle_start.shape[0]:
        return f, h * wp.identity(3, dtype=float)  # no attachments: the empty lists have one entry
    for k in range(ad.particle_start[i], ad.particle_start[i + 1]):
        fj, hj, anchor = attachment_force(ad, ad.particle_list[k], x, dt)
        f += fj
        h += hj
    return f, h * wp.identity(3, dtype=float)


@wp.func
def attachments_on_body(ad: AttachmentData, b: int, x_com: wp.vec3, particle_q: wp.array[wp.vec3], dt: float):
    """Reactions of body ``b``'s attachments: force, torque and the 6x6 blocks (ll, lθ, θθ), COM at ``x_com``."""
    f_l = wp.vec3(0.0)
    f_a = wp.vec3(0.0)
    h_ll = wp.mat33(0.0)
    h_la = wp.mat33(0.0)
    h_aa = wp.mat33(0.0)
    if b + 1 >= ad.body_start.shape[0]:
        return f_l, f_a, h_ll, h_la, h_aa  # no attachments: the empty lists have one entry
    for k in range(ad.body_start[b], ad.body_start[b + 1]):
        j = ad.body_list[k]
        fj, hj, anchor = attachment_force(ad, j, particle_q[ad.particle[j]], dt)
        r = anchor - x_com
        s = wp.skew(r)
        h = hj * wp.identity(3, dtype=float)
        f_l -= fj
        f_a += wp.cross(r, -fj)
        h_ll += h
        h_la -= h * s
        h_aa -= s * h * s
    return f_l, f_a, h_ll, h_la, h_aa


@wp.kernel
def _begin_step(
    ad: AttachmentData,
    body_com: wp.array[wp.vec3],
    body_inv_mass: wp.array[wp.float32],
    particle_mass: wp.array[wp.float32],
    body_q_in: wp.array[wp.transform],
    body_qd_in: wp.array[wp.spatial_vector],
    particle_q_in: wp.array[wp.vec3],
    dt: float,
    gamma: float,
):
    j = wp.tid()  # one thread per attachment
    ad.lam[j] = gamma * ad.lam[j]  # warm start: the multiplier kept by gamma (soft and hard rows)
    if not ad.enabled[j]:
        ad.lam[j] = wp.vec3(0.0)
    b = ad.body[j]
    # The soft row's metric: the pair's reduced mass over dt² (1/m_eff = sum of the dynamic ends' 1/m).
    # The body end carries the particles attached to it: its mass counts with theirs (``load``, see the module).
    inv_m = float(0.0)
    if particle_mass[ad.particle[j]] > 0.0:
        inv_m += 1.0 / particle_mass[ad.particle[j]]
    if ad.live[j] != 0 and body_inv_mass[b] > 0.0:
        inv_m += 1.0 / (1.0 / body_inv_mass[b] + ad.load[j])
    ad.rho[j] = 0.0  # (hard rows: the penalty itself, the k -> inf limit of k_eff)
    if inv_m > 0.0:
        ad.rho[j] = 1.0 / (inv_m * dt * dt)
    X = body_q_in[b]
    start = wp.transform_point(X, ad.point[j])
    ad.c_start[j] = particle_q_in[ad.particle[j]] - start
    # A body not integrated here carries the anchor with its velocity over the step (as a kinematic shape).
    qd = body_qd_in[b]
    com = wp.transform_point(X, body_com[b])
    ad.anchor[j] = start + dt * (wp.spatial_top(qd) + wp.cross(wp.spatial_bottom(qd), start - com))


@wp.kernel
def _update_duals(ad: AttachmentData, particle_q: wp.array[wp.vec3]):
    j = wp.tid()  # one thread per attachment: the dual step of its row at the current iterate
    if not ad.enabled[j]:
        return
    c = particle_q[ad.particle[j]] - _anchor(ad, j)
    k_eff, w = _row(ad, j)
    ad.lam[j] = k_eff * c + w * ad.lam[j]  # the row's elastic force (damper not in it); hard: lam + rho C


@wp.kernel
def _reset_multipliers(world: wp.array[wp.int32], mask: wp.array[wp.bool], use_mask: int, ad: AttachmentData):
    j = wp.tid()  # one thread per attachment
    if use_mask != 0:
        w = world[j]
        if w < 0:
            w = mask.shape[0] - 1
        if w < 0 or w >= mask.shape[0] or not mask[w]:
            return
    ad.lam[j] = wp.vec3(0.0)


def empty_attachments(device) -> AttachmentData:
    """No attachments: every CSR range empty (one particle and one body entry of zeros)."""
    ad = AttachmentData()
    zeros_i = wp.zeros(2, dtype=wp.int32, device=device)
    ad.particle_start = ad.body_start = zeros_i
    ad.particle_list = ad.body_list = ad.particle = ad.body = ad.live = wp.zeros(1, dtype=wp.int32, device=device)
    ad.point = ad.anchor = ad.c_start = ad.lam = wp.zeros(1, dtype=wp.vec3, device=device)
    ad.stiffness = ad.damping = ad.rho = ad.load = wp.zeros(1, dtype=wp.float32, device=device)
    ad.enabled = wp.zeros(1, dtype=wp.bool, device=device)
    ad.body_q = wp.zeros(1, dtype=wp.transform, device=device)
    return ad


def check_attachments(model, external_bodies: bool) -> None:
    """Refuse attachments with an external rigid solver (``ValueError``).

    Newton 1.8.0 documents attachments as unsupported with ``integrate_with_external_rigid_solver=True``
    (both endpoints must be integrated by one solver); its error type is ``ValueError``.
    """
    n = int(getattr(model, "attachment_particle_body_count", 0) or 0)
    if n and external_bodies:
        raise ValueError(f"SolverVBD: the model has {n} particle–body attachment(s), which need both endpoints "
                         "integrated by SolverVBD; integrate_with_external_rigid_solver=True is not supported "
                         "with them")


def _csr(keys: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(keys, kind="stable").astype(np.int32)
    start = np.zeros(count + 1, np.int32)
    np.add.at(start, keys + 1, 1)
    return np.cumsum(start).astype(np.int32), order


class Attachments:
    """The model's attachments: per-particle and per-body lists (built once) and the per-step start values."""

    def __init__(self, model, dynamic: np.ndarray, opts):
        dev = model.device
        self.gamma = float(opts.rigid_avbd_gamma)
        self.count = int(model.attachment_particle_body_count)
        particle = model.attachment_particle_body_particle.numpy().astype(np.int32)
        body = model.attachment_particle_body_body.numpy().astype(np.int32)
        ad = AttachmentData()
        p_start, p_list = _csr(particle, int(model.particle_count))
        b_start, b_list = _csr(body, int(model.body_count))
        ad.particle_start = wp.array(p_start, dtype=wp.int32, device=dev)
        ad.particle_list = wp.array(p_list, dtype=wp.int32, device=dev)
        ad.body_start = wp.array(b_start, dtype=wp.int32, device=dev)
        ad.body_list = wp.array(b_list, dtype=wp.int32, device=dev)
        ad.particle = wp.array(particle, dtype=wp.int32, device=dev)
        ad.body = wp.array(body, dtype=wp.int32, device=dev)
        ad.point = model.attachment_particle_body_body_point
        ad.stiffness = model.attachment_particle_body_stiffness
        ad.damping = model.attachment_particle_body_damping
        ad.enabled = model.attachment_particle_body_enabled
        self.live = dynamic[body] if dynamic.size else np.zeros(self.count, bool)
        ad.live = wp.array(self.live.astype(np.int32), dtype=wp.int32, device=dev)
        ad.anchor = wp.zeros(self.count, dtype=wp.vec3, device=dev)
        ad.c_start = wp.zeros(self.count, dtype=wp.vec3, device=dev)
        ad.lam = wp.zeros(self.count, dtype=wp.vec3, device=dev)
        ad.rho = wp.zeros(self.count, dtype=wp.float32, device=dev)
        # Each row's body carries all its attached particles (enabled or not: a conditioning metric only).
        mass = np.maximum(model.particle_mass.numpy()[particle], 0.0)
        per_body = np.zeros(max(int(model.body_count), 1))
        np.add.at(per_body, body, mass)
        ad.load = wp.array(per_body[body].astype(np.float32), dtype=wp.float32, device=dev)
        ad.body_q = model.body_q
        self.world = model.attachment_particle_body_world
        self.data = ad
        self.body = body

    def coupled(self, body_count: int) -> np.ndarray:
        """Bodies integrated here that carry an attachment (bool per body): they take part in the coupled sweep."""
        out = np.zeros(body_count, bool)
        out[self.body[self.live]] = True
        return out

    def begin_step(self, model, work, state_in, state_out, dt: float) -> None:
        """Start values of the step (``C_t``, other bodies' anchors) and the body iterate the blocks read.

        Call after the particles' prediction and before ``prepare_contacts``: the vertex step reads the
        attachments through ``work.contact_data`` (a nested struct is copied when assigned, so it is
        assigned again after ``body_q`` changes).
        """
        self.data.body_q = state_out.body_q
        work.attach = self.data
        work.contact_data.attach = self.data
        launch(_begin_step, dim=self.count,
               inputs=[self.data, model.body_com, model.body_inv_mass, model.particle_mass, state_in.body_q, state_in.body_qd, state_in.particle_q, float(dt),
                       self.gamma],
               device=model.device)

    def update_duals(self, model, state_out) -> None:
        """After an iteration: the dual step of every enabled row at the current iterate (see the module)."""
        launch(_update_duals, dim=self.count, inputs=[self.data, state_out.particle_q],
               device=model.device)

    def reset(self, model, world_mask) -> None:
        """Clear the multipliers (soft and hard rows) of the selected worlds; ``None``: all."""
        mask = world_mask if world_mask is not None else wp.zeros(0, dtype=wp.bool, device=model.device)
        launch(_reset_multipliers, dim=self.count, inputs=[self.world, mask, int(world_mask is not None), self.data],
               device=model.device)


__all__ = ["AttachmentData", "Attachments", "attachments_on_body", "check_attachments", "empty_attachments",
           "particle_attachments"]
