"""Penalty contacts of SolverFeatherstone: spring-damper normal force and regularized Coulomb friction.

Owns: adding each rigid contact's force to ``body_f_work`` (world wrenches about each body's COM,
linear first [N, N·m]), which the dynamics stage maps to joint space through RNEA. Reads the
contact buffer up to its count; no capacity logic, no contact state between steps.

Per contact between shapes A and B (normal ``n`` from A to B, Newton's convention), with material
values averaged over the two shapes (``ke`` [N/m], ``kd`` [N·s/m], ``kf`` [N·s/m], ``ka`` [m],
``mu`` non-dimensional; per-contact stiffness, damping and friction scale override them where the
pipeline provides them):

* surface points ``p_A = X_A p0 + m_A n`` and ``p_B = X_B p1 - m_B n`` (``m`` the contact margin:
  effective radius plus shape margin [m]); signed gap ``d = n . (p_B - p_A)`` [m]; active while
  ``d < ka`` (adhesion distance, 0 by default);
* relative velocity ``v = v_B(p_B) - v_A(p_A)`` minus the tangential surface velocity, normal part
  ``v_n = n . v``, tangential part ``v_t``;
* normal force on B, ``f_n = -ke d - kd min(v_n, 0)`` (damping only while penetrating, so it
  never pulls surfaces together);
* friction on B, ``f_t = -min(kf, mu f_n / s) v_t`` with ``s`` the Huber-smoothed speed
  ``s = H_delta(v_t) / delta + delta / 2`` (``H_delta`` = :func:`warp.norm_huber`, ``delta`` =
  ``friction_smoothing`` [m/s]). ``s = |v_t|`` once ``|v_t| >= delta``, so fast sliding feels the
  Coulomb force ``mu f_n`` exactly; below ``delta`` the normalization is rounded off (``s >= delta/2``),
  which keeps the friction force C¹ in ``v_t`` and its slope at most ``min(kf, 2 mu f_n / delta)``.
  ``|f_t| <= mu f_n`` always. With ``delta -> 0`` it is the classic ``kf``-regularized Coulomb law.

B receives ``f = f_n n + f_t`` at ``p_B`` and A receives ``-f`` at ``p_A``. Kinematic bodies and
static shapes (body -1) receive nothing. Forces are accumulated with atomics (order-dependent in
float32 unless the solver's ``deterministic`` mode is set on this module).
"""

from __future__ import annotations

import warp as wp

import newton


@wp.func
def _huber_speed(vt: wp.vec3, delta: float):
    """Huber-smoothed norm of ``vt`` [m/s]: ``|vt|`` above ``delta``, ``>= delta / 2`` below."""
    if delta <= 0.0:
        return wp.length(vt)
    return wp.norm_huber(vt, delta) / delta + 0.5 * delta


@wp.kernel
def _contact_forces(
    # Model:
    body_com: wp.array[wp.vec3],
    shape_body: wp.array[int],
    shape_material_ke: wp.array[float],
    shape_material_kd: wp.array[float],
    shape_material_kf: wp.array[float],
    shape_material_ka: wp.array[float],
    shape_material_mu: wp.array[float],
    body_kinematic: wp.array[int],
    friction_smoothing: float,
    # Contacts:
    contact_count: wp.array[int],
    contact_normal: wp.array[wp.vec3],
    contact_shape0: wp.array[int],
    contact_point0: wp.array[wp.vec3],
    contact_margin0: wp.array[float],
    contact_shape1: wp.array[int],
    contact_point1: wp.array[wp.vec3],
    contact_margin1: wp.array[float],
    contact_stiffness: wp.array[float],
    contact_damping: wp.array[float],
    contact_friction: wp.array[float],
    contact_surface_velocity: wp.array[wp.vec3],
    # Data in:
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    # Data out:
    body_f_out: wp.array[wp.spatial_vector],
):
    c = wp.tid()  # one thread per contact slot
    if c >= contact_count[0]:
        return
    sa = contact_shape0[c]
    sb = contact_shape1[c]
    if sa == sb:
        return
    ke = float(0.0)
    kd = float(0.0)
    kf = float(0.0)
    ka = float(0.0)
    mu = float(0.0)
    shapes = float(0.0)
    ba = int(-1)
    bb = int(-1)
    if sa >= 0:
        ba = shape_body[sa]
        ke += shape_material_ke[sa]
        kd += shape_material_kd[sa]
        kf += shape_material_kf[sa]
        ka += shape_material_ka[sa]
        mu += shape_material_mu[sa]
        shapes += 1.0
    if sb >= 0:
        bb = shape_body[sb]
        ke += shape_material_ke[sb]
        kd += shape_material_kd[sb]
        kf += shape_material_kf[sb]
        ka += shape_material_ka[sb]
        mu += shape_material_mu[sb]
        shapes += 1.0
    if shapes > 0.0:
        inv = 1.0 / shapes
        ke *= inv
        kd *= inv
        kf *= inv
        ka *= inv
        mu *= inv
    if contact_stiffness:
        # Per-contact values (hydroelastic pipelines); zero means "use the materials".
        if contact_stiffness[c] > 0.0:
            ke = contact_stiffness[c]
        if contact_damping[c] > 0.0:
            kd = contact_damping[c]
        if contact_friction[c] > 0.0:
            mu = mu * contact_friction[c]

    n = contact_normal[c]
    pa = contact_point0[c]
    pb = contact_point1[c]
    va = wp.vec3(0.0)
    vb = wp.vec3(0.0)
    ra = wp.vec3(0.0)
    rb = wp.vec3(0.0)
    if ba >= 0:
        X = body_q[ba]
        pa = wp.transform_point(X, pa) + contact_margin0[c] * n
        ra = pa - wp.transform_point(X, body_com[ba])
        tw = body_qd[ba]
        va = wp.spatial_top(tw) + wp.cross(wp.spatial_bottom(tw), ra)
    else:
        pa = pa + contact_margin0[c] * n
    if bb >= 0:
        X = body_q[bb]
        pb = wp.transform_point(X, pb) - contact_margin1[c] * n
        rb = pb - wp.transform_point(X, body_com[bb])
        tw = body_qd[bb]
        vb = wp.spatial_top(tw) + wp.cross(wp.spatial_bottom(tw), rb)
    else:
        pb = pb - contact_margin1[c] * n

    gap = wp.dot(n, pb - pa)
    if gap >= ka:
        return
    v = vb - va
    if contact_surface_velocity:
        sv = contact_surface_velocity[c]
        v = v - (sv - n * wp.dot(n, sv))
    vn = wp.dot(n, v)
    vt = v - n * vn

    fn = -ke * gap
    if gap < 0.0:
        fn -= kd * wp.min(vn, 0.0)
    f = n * fn
    if fn > 0.0 and mu > 0.0:
        s = _huber_speed(vt, friction_smoothing)
        if s > 0.0:
            f -= vt * wp.min(kf, mu * fn / s)

    if bb >= 0 and body_kinematic[bb] == 0:
        wp.atomic_add(body_f_out, bb, wp.spatial_vector(f, wp.cross(rb, f)))
    if ba >= 0 and body_kinematic[ba] == 0:
        wp.atomic_sub(body_f_out, ba, wp.spatial_vector(f, wp.cross(ra, f)))


def eval_contact_forces(
    model: newton.Model,
    work,
    contacts: newton.Contacts,
    body_q: wp.array,
    body_qd: wp.array,
    friction_smoothing: float,
) -> None:
    """Add every active rigid contact's penalty wrench to ``work.body_f_work`` (one launch).

    ``body_q``/``body_qd`` are the poses [m] and COM twists [m/s, rad/s] of the step's input state.
    """
    if contacts is None or contacts.rigid_contact_max == 0 or model.body_count == 0:
        return
    wp.launch(
        _contact_forces,
        dim=contacts.rigid_contact_max,
        inputs=[
            model.body_com,
            model.shape_body,
            model.shape_material_ke,
            model.shape_material_kd,
            model.shape_material_kf,
            model.shape_material_ka,
            model.shape_material_mu,
            work.body_kinematic,
            float(friction_smoothing),
            contacts.rigid_contact_count,
            contacts.rigid_contact_normal,
            contacts.rigid_contact_shape0,
            contacts.rigid_contact_point0,
            contacts.rigid_contact_margin0,
            contacts.rigid_contact_shape1,
            contacts.rigid_contact_point1,
            contacts.rigid_contact_margin1,
            contacts.rigid_contact_stiffness,
            contacts.rigid_contact_damping,
            contacts.rigid_contact_friction,
            contacts.rigid_contact_surface_velocity,
            body_q,
            body_qd,
        ],
        outputs=[work.body_f_work],
        device=model.device,
    )
