"""Rigid AVBD body stages: inertial prediction, the per-body 6x6 block step, velocities from positions.

Each step minimizes, over all body poses, the implicit-Euler energy

    E(x, q) = Σ_b ½ m |x - x̃|² / dt² + ½ θᵀ I_w θ / dt²  +  Σ_joints E_joint  +  Σ_contacts E_cont

with ``θ = log(q q̃⁻¹)`` (``E_cont``: :mod:`.contacts`), one body at a time (Gauss-Seidel over the
body colouring, bodies of one colour in parallel), with one Newton step on the body's 6 DOF per
visit: ``H [dx; dθ] = [f; τ]`` where ``H`` is the 6x6 block of the Hessian (inertia ``m/dt²,
I_w/dt²`` plus the joints' and contacts' Gauss-Newton terms). ``x`` is the COM [m] and
``I_w = R I Rᵀ`` the inertia about it in the world frame [kg·m²] at the current iterate.

The inertial target ``(x̃, q̃)`` is the unconstrained implicit-Euler position: ``x̃ = x + dt v +
dt² (g + f/m)``; ``q̃ = exp(dt ω̃) q`` with ``ω̃`` the rate whose momentum at the step's midpoint pose
equals the start's world angular momentum plus the torque impulse, ``R½ I R½ᵀ ω̃ = L + dt τ`` (a few
fixed-point iterations). At the end the rotation rate ``log(q q₀⁻¹)/dt`` is read as that midpoint
velocity and its momentum is handed on as the velocity at the end pose, so a torque-free body keeps
``L`` to rounding and its energy to 0.1 % over 10 s, and tumbles (Dzhanibekov) as it should. Rejected:
evaluating the momentum at the end pose (backward Euler; a tumbling body lost 25 % of its energy in
1 s and settled on its major axis) and a one-step implicit gyroscopic update (lost 4 % of ``L`` in 3 s).
Orientation updates use the exact exponential map so rates and turns convert without loss.
"""

from __future__ import annotations

import warp as wp

from ..coupling import ParticleContactsOnBodies, body_has_particle_terms, particle_contacts_on_body
from .contacts import ContactData, contact_force_on_body
from .joints import JointData, joint_force_on_body, quat_exp, quat_log
from .mimic import MimicData, mimic_force_on_body
from .tendons import TendonData, tendon_force_on_body
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

_GYRO_ITERATIONS = wp.constant(4)  # fixed-point iterations of the angular target (see _predict_bodies)


@wp.struct
class BodyData:
    """Per-body constants and step buffers of the rigid solve."""

    com: wp.array[wp.vec3]  # COM in the body frame [m]
    mass: wp.array[wp.float32]  # [kg]
    inertia: wp.array[wp.mat33]  # about the COM, body frame [kg·m²]
    dynamic: wp.array[wp.int32]  # 1 = integrated here; 0 = static or kinematic (pose passes through)
    world: wp.array[wp.int32]
    joint_start: wp.array[wp.int32]  # CSR into joint_list, (body + 1,)
    joint_list: wp.array[wp.int32]
    x_prev: wp.array[wp.vec3]  # COM at the start of the step [m]
    q_prev: wp.array[wp.quat]
    x_tilde: wp.array[wp.vec3]  # inertial target COM [m]
    q_tilde: wp.array[wp.quat]
    v_last: wp.array[wp.vec3]  # previous step's input COM velocity [m/s] (adaptive initialization)
    w_last: wp.array[wp.vec3]  # previous step's input angular velocity, world [rad/s] (adaptive initialization)
    has_last: wp.array[wp.int32]  # 1 once v_last holds a velocity (dynamic) or q_last a pose (others)
    q_last: wp.array[wp.transform]  # static/kinematic: the pose the previous step ended at
    turn_lost: wp.array[wp.vec3]  # rotation [rad, world] this step's updates asked for and float32 rounding dropped


@wp.kernel
def _predict_bodies(
    bd: BodyData,
    gravity: wp.array[wp.vec3],
    body_q_in: wp.array[wp.transform],
    body_qd_in: wp.array[wp.spatial_vector],
    body_f: wp.array[wp.spatial_vector],
    has_f: wp.int32,
    adaptive: wp.int32,
    dt: wp.float32,
    body_q_out: wp.array[wp.transform],
):
    b = wp.tid()  # one thread per body
    t = body_q_in[b]
    rot = wp.transform_get_rotation(t)
    x = wp.transform_point(t, bd.com[b])
    if bd.dynamic[b] == 0:
        # A kinematic body moved by the caller between steps (its pose written into both states)
        # moved during this step: it starts where the previous step left it, so its contacts see the
        # motion (a driven pulley drags the cable by friction). First and reset steps start at the input.
        t0 = wp.where(bd.has_last[b] != 0, bd.q_last[b], t)
        bd.x_prev[b] = wp.transform_point(t0, bd.com[b])
        bd.q_prev[b] = wp.transform_get_rotation(t0)
        bd.q_last[b] = t
        bd.has_last[b] = 1
        body_q_out[b] = t
        return
    bd.x_prev[b] = x
    bd.q_prev[b] = rot
    v = wp.spatial_top(body_qd_in[b])
    w = wp.spatial_bottom(body_qd_in[b])
    g = gravity[wp.max(bd.world[b], 0)]
    m = bd.mass[b]
    force = wp.vec3(0.0)
    torque = wp.vec3(0.0)
    if has_f != 0:
        force = wp.spatial_top(body_f[b])
        torque = wp.spatial_bottom(body_f[b])
    x_t = x + dt * v + dt * dt * (g + force / m)
    # Angular target: the ω̃ whose momentum at the midpoint pose exp(dt ω̃/2) q is the start's world
    # angular momentum plus the torque impulse (fixed point; a contraction for |ω| dt well below 1).
    inertia = bd.inertia[b]
    inertia_inv = wp.inverse(inertia)
    r0 = wp.quat_to_matrix(rot)
    momentum = r0 * (inertia * (wp.transpose(r0) * w)) + dt * torque
    w_t = w + dt * (r0 * (inertia_inv * (wp.transpose(r0) * torque)))
    for _k in range(_GYRO_ITERATIONS):
        r1 = wp.quat_to_matrix(wp.normalize(quat_exp(0.5 * dt * w_t) * rot))
        w_t = r1 * (inertia_inv * (wp.transpose(r1) * momentum))
    q_t = wp.normalize(quat_exp(dt * w_t) * rot)
    bd.x_tilde[b] = x_t
    bd.q_tilde[b] = q_t
    # First iterate: the inertial target, or (adaptive, the VBD paper's initialization) gravity scaled
    # by how much of it the body actually followed last step. A resting body then starts where it
    # rests, and the iterations' fixed point is the true equilibrium; starting every step a full dt² g
    # low instead leaves a long chain sagging by what its few sweeps per step cannot pull back.
    # An applied torque's angular acceleration is scaled the same way: a thin rod segment held by its
    # joints against a torque about its axis otherwise started every step turned dt² I⁻¹ τ (0.18 rad)
    # ahead, and ten sweeps against its damped joints stalled the rod at 1.2 times its equilibrium twist.
    x_0 = x_t
    q_0 = q_t
    turn_0 = dt * w_t  # the rotation the first iterate is asked to make [rad, world]
    if adaptive != 0 and bd.has_last[b] != 0:
        gg = wp.dot(g, g)
        weight = float(1.0)
        if gg > 0.0:
            weight = wp.clamp(wp.dot((v - bd.v_last[b]) / dt, g) / gg, 0.0, 1.0)
        x_0 = x + dt * v + dt * dt * (weight * g + force / m)
        a_tau = r0 * (inertia_inv * (wp.transpose(r0) * torque))  # world [rad/s²]
        aa = wp.dot(a_tau, a_tau)
        if aa > 0.0:
            weight = wp.clamp(wp.dot((w - bd.w_last[b]) / dt, a_tau) / aa, 0.0, 1.0)
            turn_0 = dt * (w_t - (1.0 - weight) * dt * a_tau)
            q_0 = wp.normalize(quat_exp(turn_0) * rot)
    bd.turn_lost[b] = wp.where(q_0 == rot, turn_0, wp.vec3(0.0))
    bd.v_last[b] = v
    bd.w_last[b] = w
    bd.has_last[b] = 1
    body_q_out[b] = wp.transform(x_0 - wp.quat_rotate(q_0, bd.com[b]), q_0)


@wp.func
def inertia_and_joints(
    bd: BodyData,
    jd: JointData,
    md: MimicData,
    td: TendonData,
    body_q: wp.array[wp.transform],
    target_q: wp.array[wp.float32],
    target_qd: wp.array[wp.float32],
    joint_f: wp.array[wp.float32],
    b: wp.int32,
    dt: wp.float32,
):
    """Body ``b``'s force, torque [N, N·m] and 6x6 block (lin-lin, lin-ang, ang-ang) from inertia, its joints, mimic
    rows and tendons (:mod:`.tendons`) at the poses ``body_q``: everything of the block step but the contacts."""
    t = body_q[b]
    rot = wp.transform_get_rotation(t)
    x = wp.transform_point(t, bd.com[b])
    h = 1.0 / (dt * dt)
    r = wp.quat_to_matrix(rot)
    inertia_w = r * bd.inertia[b] * wp.transpose(r)
    m = bd.mass[b]
    f_l = -m * h * (x - bd.x_tilde[b])
    f_a = -h * (inertia_w * quat_log(rot * wp.quat_inverse(bd.q_tilde[b])))
    h_ll = m * h * wp.identity(n=3, dtype=wp.float32)
    h_la = wp.mat33(0.0)
    h_aa = h * inertia_w
    for i in range(bd.joint_start[b], bd.joint_start[b + 1]):
        jf_l, jf_a, jh_ll, jh_la, jh_aa = joint_force_on_body(jd, body_q, bd.com, target_q, target_qd, joint_f,
                                                              bd.joint_list[i], b, dt)
        f_l = f_l + jf_l
        f_a = f_a + jf_a
        h_ll = h_ll + jh_ll
        h_la = h_la + jh_la
        h_aa = h_aa + jh_aa
    if md.body_start[b + 1] > md.body_start[b]:
        mf_l, mf_a, mh_ll, mh_la, mh_aa = mimic_force_on_body(md, jd, body_q, bd.com, b)
        f_l = f_l + mf_l
        f_a = f_a + mf_a
        h_ll = h_ll + mh_ll
        h_la = h_la + mh_la
        h_aa = h_aa + mh_aa
    if td.body_start[b + 1] > td.body_start[b]:
        tf_l, tf_a, th_ll, th_la, th_aa = tendon_force_on_body(td, body_q, bd.com, b, dt)
        f_l = f_l + tf_l
        f_a = f_a + tf_a
        h_ll = h_ll + th_ll
        h_la = h_la + th_la
        h_aa = h_aa + th_aa
    return f_l, f_a, h_ll, h_la, h_aa


@wp.kernel
def _solve_bodies(
    bd: BodyData,
    jd: JointData,
    md: MimicData,
    td: TendonData,
    cd: ContactData,
    pc: ParticleContactsOnBodies,
    target_q: wp.array[wp.float32],
    target_qd: wp.array[wp.float32],
    joint_f: wp.array[wp.float32],
    group: wp.array[wp.int32],
    dt: wp.float32,
    body_q: wp.array[wp.transform],
):
    b = group[wp.tid()]  # one thread per body of this colour
    if bd.dynamic[b] == 0:
        return
    t = body_q[b]
    rot = wp.transform_get_rotation(t)
    x = wp.transform_point(t, bd.com[b])
    f_l, f_a, h_ll, h_la, h_aa = inertia_and_joints(bd, jd, md, td, body_q, target_q, target_qd, joint_f, b, dt)
    for s in range(wp.min(cd.body_count[b], cd.body_list.shape[1])):
        cf_l, cf_a, ch_ll, ch_la, ch_aa = contact_force_on_body(cd, body_q, bd.com, bd.x_prev, bd.q_prev,
                                                                cd.body_list[b, s], b, dt)
        f_l = f_l + cf_l
        f_a = f_a + cf_a
        h_ll = h_ll + ch_ll
        h_la = h_la + ch_la
        h_aa = h_aa + ch_aa
    if body_has_particle_terms(pc, b):
        pf_l, pf_a, ph_ll, ph_la, ph_aa = particle_contacts_on_body(pc, b, x, dt)
        f_l = f_l + pf_l
        f_a = f_a + pf_a
        h_ll = h_ll + ph_ll
        h_la = h_la + ph_la
        h_aa = h_aa + ph_aa
    # 6x6 solve by the Schur complement on the (always SPD) linear block.
    a_inv = wp.inverse(h_ll)
    schur = h_aa - wp.transpose(h_la) * a_inv * h_la
    d_ang = wp.inverse(schur) * (f_a - wp.transpose(h_la) * (a_inv * f_l))
    d_lin = a_inv * (f_l - h_la * d_ang)
    rot_new = wp.normalize(quat_exp(d_ang) * rot)
    if rot_new == rot:
        # The whole turn was under half a unit in the last place of the float32 quaternion and rounded
        # away; its rate is kept for the step's velocity (see _finish_bodies).
        bd.turn_lost[b] = bd.turn_lost[b] + d_ang
    x_new = x + d_lin
    body_q[b] = wp.transform(x_new - wp.quat_rotate(rot_new, bd.com[b]), rot_new)


@wp.kernel
def _finish_bodies(
    bd: BodyData,
    body_q: wp.array[wp.transform],
    body_qd_in: wp.array[wp.spatial_vector],
    dt: wp.float32,
    body_qd_out: wp.array[wp.spatial_vector],
):
    b = wp.tid()  # one thread per body
    if bd.dynamic[b] == 0:
        body_qd_out[b] = body_qd_in[b]
        return
    t = body_q[b]
    rot = wp.transform_get_rotation(t)
    x = wp.transform_point(t, bd.com[b])
    v = (x - bd.x_prev[b]) / dt
    # Turns rounded away whole (each under half a unit in the last place of the quaternion, 6e-8 for
    # components near 0.7) count: a damped cable's slow mode, relaxing at 4e-7 rad per step from 1e-8 rad
    # sweep updates, otherwise ended every step where it began, at zero velocity, and stayed there for good
    # (Newton's cable_torsion_material_mapping: the twist profile stalled 0.079 degrees from linear at the
    # end of the ramp, where the damped relaxation takes it to 0.024). Kept as a rate, the motion adds up
    # until the pose moves. Rejected: the sum of all updates as the turn (for a tumbling body the
    # composition of rotations is not their sum) and the rounding loss of every update (noise on all).
    turn = quat_log(rot * wp.quat_inverse(bd.q_prev[b])) + bd.turn_lost[b]
    # The step's rotation rate is the midpoint velocity; the angular momentum it carries, taken at the
    # midpoint pose, is handed on as the velocity at the end pose (what the next step starts from).
    r_mid = wp.quat_to_matrix(wp.normalize(quat_exp(0.5 * turn) * bd.q_prev[b]))
    r_end = wp.quat_to_matrix(rot)
    inertia = bd.inertia[b]
    momentum = r_mid * (inertia * (wp.transpose(r_mid) * (turn / dt)))
    w = r_end * (wp.inverse(inertia) * (wp.transpose(r_end) * momentum))
    body_qd_out[b] = wp.spatial_vector(v, w)


def predict_bodies(model, bd, state_in, state_out, dt: float, adaptive: bool) -> None:
    """Inertial targets from ``state_in`` and the first iterate in ``state_out.body_q`` (others: copied)."""
    body_f = state_in.body_f
    has_f = int(body_f is not None)
    launch(_predict_bodies, dim=model.body_count,
              inputs=[bd, model.gravity, state_in.body_q, state_in.body_qd,
                      body_f if has_f else state_in.body_qd, has_f, int(adaptive), float(dt)],
              outputs=[state_out.body_q], device=model.device)


def solve_body_colour(model, bd, jd, md, td, cd, pc, controls, group, dt: float, body_q) -> None:
    """One Newton step on every dynamic body of one colour, in place on ``body_q``.

    ``md`` holds the joint mimic rows (:mod:`.mimic`), ``td`` the tendon runs (:mod:`.tendons`), ``cd`` the
    body–body contact rows (:mod:`.contacts`), ``pc`` the particle contacts on
    coupled bodies (:mod:`..coupling`); ``controls`` is ``(joint_target_q, joint_target_qd, joint_f)``.
    """
    launch(_solve_bodies, dim=group.shape[0], inputs=[bd, jd, md, td, cd, pc, *controls, group, float(dt)],
              outputs=[body_q], device=model.device)


def finish_bodies(model, bd, state_in, state_out, dt: float) -> None:
    """Velocities from the step's displacement: ``v = Δx/dt``, ``ω = log(q q₀⁻¹)/dt`` (world, about the COM)."""
    launch(_finish_bodies, dim=model.body_count, inputs=[bd, state_out.body_q, state_in.body_qd, float(dt)],
              outputs=[state_out.body_qd], device=model.device)
