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
static shapes (body -1) receive nothing. A contact touching a body of an articulation flagged
invalid (non-finite input, see :mod:`.forces`), with a non-finite force, or with shape indices
beyond the model's (a buffer filled for another model) is skipped on both sides. Forces are
accumulated with atomics (order-dependent in float32 unless the solver's ``deterministic`` mode
is set on this module).

Time discretization: linearly implicit, as the joint penalties of :mod:`.forces`, and why. Taken
explicitly, the normal damper is unstable wherever ``dt kd / m > 2`` (``m`` the effective mass of
the articulation at the contact point along ``n``, ``1 / (J_n H^-1 J_n^T)``), and the spring where
``dt^2 ke / m + 2 dt kd / m > 4``. nv_ant's foot tips have ``m = 0.058 kg`` (a 0.07 kg foot
swinging about its ankle) against the MJCF default ``ke = 2500 N/m``, ``kd = 100 N·s/m``: at
``dt = 1/240 s`` that is ``dt kd / m = 7.2`` (``dt^2 ke / m = 0.75``), so each step reverses the
tip's normal velocity and amplifies it about 6x, and the ant goes NaN within two seconds of landing
(at ``1/600 s``, ``dt kd / m = 2.9`` still overshoots but the one-sided damper bounds it). The
same spring-damper is therefore evaluated at the end of the step, ``d' = d + dt v_n'``,
``v_n' = v_n + dt J_n qdd``, with the active set (``d < ka``; damping while ``d < 0`` and
``v_n < 0``) and the friction slope ``c_t = min(kf, mu f_n / s)`` frozen at the start:

    f_n' = f_n - ke dt v_n - (dt kd + dt^2 ke) J_n qdd,    f_t' = f_t - dt c_t J_t qdd

so every active contact adds ``(dt kd + dt^2 ke) J_n^T J_n + dt c_t J_t^T J_t`` to the
articulation's matrix (``contact_mass``, same layout as ``H``, lower triangle only), keeps the explicit force above plus
``-ke dt v_n`` on the right-hand side, and flags the articulation for a refactor. ``J_n``/``J_t``
are the normal/tangential point-velocity rows over the DOF chain of each body (``dof_S`` about
``articulation_origin``), ``J_B - J_A`` when both bodies are in the same articulation. A contact
between two articulations (or with a body outside every articulation) gives each side its own
term with the other side's velocity taken explicitly, a Jacobi split whose relative damping
still contracts (``|1 - b| / (1 + b) < 1`` for two equal sides). Same force law, same equilibria
(the added terms vanish at rest), and the damper cannot reverse ``v_n``, whatever ``dt kd / m``.
Costs: the spring and friction forces can differ from the explicit law by ``O(dt)`` within a step
(a contact that opens during the step can pull by up to ``ke dt v_n'``, and ``|f_t'|`` follows
``v_t'``, not ``v_t``), and an articulation in contact refactors every step, whatever
``update_mass_matrix_interval``. Rejected: clamping ``kd`` to ``2 m / dt`` per contact (changes
the documented law and needs ``H^-1`` per contact before the solve) and substepping (cost).
"""

from __future__ import annotations

import warp as wp

import newton
from ...launches import launch
from .data import ContactBodies, ContactChains, KernelArgs, RigidContacts


@wp.func
def _huber_speed(vt: wp.vec3, delta: float):
    """Huber-smoothed norm of ``vt`` [m/s]: ``|vt|`` above ``delta``, ``>= delta / 2`` below."""
    if delta <= 0.0:
        return wp.length(vt)
    return wp.norm_huber(vt, delta) / delta + 0.5 * delta


@wp.func
def _chain_tip(
    body: int,
    body_joint: wp.array[int],
    joint_qd_start: wp.array[int],
    joint_parent_joint: wp.array[int],
):
    """Last DOF of the nearest joint at or above ``body`` that has DOFs (-1: none, or no articulated body)."""
    if body < 0:
        return -1
    j = body_joint[body]
    while j >= 0:
        if joint_qd_start[j + 1] > joint_qd_start[j]:
            return joint_qd_start[j + 1] - 1
        j = joint_parent_joint[j]
    return -1


@wp.func
def _point_rate(S: wp.spatial_vector, r: wp.vec3):
    """Velocity [m/s] per unit ``qd`` of the point at ``r`` from the reference point, for motion column ``S``."""
    return wp.spatial_top(S) + wp.cross(wp.spatial_bottom(S), r)


@wp.func
def _add_contact_mass(
    tip_x: int,
    r_x: wp.vec3,
    tip_y: int,
    r_y: wp.vec3,
    sign: float,
    n: wp.vec3,
    c_n: float,
    c_t: float,
    first: int,
    count: int,
    base: int,
    mirror: int,
    dof_S: wp.array[wp.spatial_vector],
    dof_parent: wp.array[int],
    contact_mass_out: wp.array[float],
):
    """``sign (c_n J_n,x^T J_n,y + c_t J_t,x^T J_t,y)`` over the DOF chains ending at ``tip_x``/``tip_y``,
    lower triangle only (row ``i`` >= column ``k``: the loop path's factor reads nothing else), and the
    upper one too when ``mirror`` (the tile path, whose factor is not documented to ignore it).

    For point rows ``u = J_x e_i`` and ``w = J_y e_k`` (velocities [m/s]), the normal product is
    ``(n.u)(n.w)`` and the tangential one, summed over both tangent directions, ``u.w - (n.u)(n.w)``.
    """
    i = tip_x
    while i >= 0:
        u = _point_rate(dof_S[i], r_x)
        un = wp.dot(n, u)
        k = tip_y
        while k >= 0:
            if k <= i:
                w = _point_rate(dof_S[k], r_y)
                wn = wp.dot(n, w)
                value = sign * (c_n * un * wn + c_t * (wp.dot(u, w) - un * wn))
                wp.atomic_add(contact_mass_out, base + (i - first) * count + (k - first), value)
                if mirror != 0 and k != i:
                    wp.atomic_add(contact_mass_out, base + (k - first) * count + (i - first), value)
            k = dof_parent[k]
        i = dof_parent[i]


@wp.kernel
def _contact_forces(
    # Model and plan:
    bodies: ContactBodies,
    chains: ContactChains,
    friction_smoothing: float,
    dt: float,
    # Contacts:
    contacts: RigidContacts,
    # Data in:
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    articulation_origin: wp.array[wp.vec3],
    dof_S: wp.array[wp.spatial_vector],
    # Data out:
    body_f_out: wp.array[wp.spatial_vector],
    contact_mass_out: wp.array[float],
    articulation_contact_out: wp.array[int],
    articulation_refactor_out: wp.array[int],
):
    body_com = bodies.body_com
    shape_body = bodies.shape_body
    body_kinematic = bodies.body_kinematic
    body_articulation = bodies.body_articulation
    articulation_invalid = bodies.articulation_invalid
    dof_start = chains.dof_start
    dof_count = chains.dof_count
    contact_start = chains.mass_start
    dof_parent = chains.dof_parent
    contact_mirror = chains.mirror
    contact_normal = contacts.normal
    contact_point0 = contacts.point0
    contact_margin0 = contacts.margin0
    contact_point1 = contacts.point1
    contact_margin1 = contacts.margin1
    c = wp.tid()  # one thread per contact slot
    if c >= contacts.count[0]:
        return
    sa = contacts.shape0[c]
    sb = contacts.shape1[c]
    shape_count = shape_body.shape[0]
    if sa == sb or sa >= shape_count or sb >= shape_count:
        return  # a buffer filled for another model: skip rather than read out of bounds
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
        if ba >= 0 and body_articulation[ba] >= 0 and articulation_invalid[body_articulation[ba]] != 0:
            return  # non-finite articulation (see .forces): nothing computed from it reaches another body
        ke += bodies.shape_ke[sa]
        kd += bodies.shape_kd[sa]
        kf += bodies.shape_kf[sa]
        ka += bodies.shape_ka[sa]
        mu += bodies.shape_mu[sa]
        shapes += 1.0
    if sb >= 0:
        bb = shape_body[sb]
        if bb >= 0 and body_articulation[bb] >= 0 and articulation_invalid[body_articulation[bb]] != 0:
            return
        ke += bodies.shape_ke[sb]
        kd += bodies.shape_kd[sb]
        kf += bodies.shape_kf[sb]
        ka += bodies.shape_ka[sb]
        mu += bodies.shape_mu[sb]
        shapes += 1.0
    if shapes > 0.0:
        inv = 1.0 / shapes
        ke *= inv
        kd *= inv
        kf *= inv
        ka *= inv
        mu *= inv
    if contacts.stiffness:
        # Per-contact values (hydroelastic pipelines); zero means "use the materials".
        if contacts.stiffness[c] > 0.0:
            ke = contacts.stiffness[c]
        if contacts.damping[c] > 0.0:
            kd = contacts.damping[c]
        if contacts.friction[c] > 0.0:
            mu = mu * contacts.friction[c]

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
    if contacts.surface_velocity:
        sv = contacts.surface_velocity[c]
        v = v - (sv - n * wp.dot(n, sv))
    vn = wp.dot(n, v)
    vt = v - n * vn

    fn = -ke * gap
    c_n = dt * dt * ke  # implicit normal coefficient [kg/s^2 * s^2 = kg]: spring always, damper below
    if gap < 0.0:
        fn -= kd * wp.min(vn, 0.0)
        if vn < 0.0:
            c_n += dt * kd
    f = n * fn
    c_t = float(0.0)
    if fn > 0.0 and mu > 0.0:
        s = _huber_speed(vt, friction_smoothing)
        if s > 0.0:
            c_t = wp.min(kf, mu * fn / s)  # friction slope [N·s/m], frozen for the step
            f -= vt * c_t
    # Linearly implicit: the spring at the predicted gap d + dt v_n (see the module docstring).
    f -= n * (ke * dt * vn)
    c_t = dt * c_t
    if not (wp.isfinite(wp.length_sq(f)) and wp.isfinite(c_n) and wp.isfinite(c_t)):
        return  # non-finite contact data (e.g. a body outside every articulation with a NaN pose)

    # Articulated, non-kinematic sides and their DOF chains.
    art_a = int(-1)
    art_b = int(-1)
    if ba >= 0 and body_kinematic[ba] == 0:
        art_a = body_articulation[ba]
    if bb >= 0 and body_kinematic[bb] == 0:
        art_b = body_articulation[bb]
    body_joint = chains.body_joint
    joint_qd_start = chains.joint_qd_start
    joint_parent_joint = chains.joint_parent_joint
    tip_a = _chain_tip(wp.where(art_a >= 0, ba, -1), body_joint, joint_qd_start, joint_parent_joint)
    tip_b = _chain_tip(wp.where(art_b >= 0, bb, -1), body_joint, joint_qd_start, joint_parent_joint)
    if tip_b >= 0:
        first = dof_start[art_b]
        count = dof_count[art_b]
        rb_ref = pb - articulation_origin[art_b]
        base = contact_start[art_b]
        _add_contact_mass(tip_b, rb_ref, tip_b, rb_ref, 1.0, n, c_n, c_t, first, count, base, contact_mirror, dof_S,
                          dof_parent, contact_mass_out)
        if art_a == art_b and tip_a >= 0:
            # One articulation on both sides: J = J_B - J_A, cross terms included.
            ra_ref = pa - articulation_origin[art_a]
            _add_contact_mass(tip_a, ra_ref, tip_b, rb_ref, -1.0, n, c_n, c_t, first, count, base, contact_mirror,
                              dof_S, dof_parent, contact_mass_out)
            _add_contact_mass(tip_b, rb_ref, tip_a, ra_ref, -1.0, n, c_n, c_t, first, count, base, contact_mirror,
                              dof_S, dof_parent, contact_mass_out)
        articulation_contact_out[art_b] = 1
        articulation_refactor_out[art_b] = 1
    if tip_a >= 0:
        first = dof_start[art_a]
        ra_ref = pa - articulation_origin[art_a]
        _add_contact_mass(tip_a, ra_ref, tip_a, ra_ref, 1.0, n, c_n, c_t, first, dof_count[art_a],
                          contact_start[art_a], contact_mirror, dof_S, dof_parent, contact_mass_out)
        articulation_contact_out[art_a] = 1
        articulation_refactor_out[art_a] = 1

    if bb >= 0 and body_kinematic[bb] == 0:
        wp.atomic_add(body_f_out, bb, wp.spatial_vector(f, wp.cross(rb, f)))
    if ba >= 0 and body_kinematic[ba] == 0:
        wp.atomic_sub(body_f_out, ba, wp.spatial_vector(f, wp.cross(ra, f)))


def eval_contact_forces(
    model: newton.Model,
    args: KernelArgs,
    data,
    work,
    contacts: newton.Contacts,
    body_q: wp.array,
    body_qd: wp.array,
    friction_smoothing: float,
    dt: float,
) -> None:
    """Add every active rigid contact's penalty wrench to ``work.body_f_work`` and its implicit term to
    ``work.contact_mass`` (flagging the articulations it touches for a refactor); one launch.

    ``body_q``/``body_qd`` are the poses [m] and COM twists [m/s, rad/s] of the step's input state,
    ``data`` holds its kinematics (``dof_S``, ``articulation_origin``), ``dt`` is the step [s];
    ``args`` holds the solver's structs (the mass-matrix layout in use, and whether the term fills both
    triangles of ``work.contact_mass``, the tile path, or the lower one).
    """
    if contacts is None or contacts.rigid_contact_max == 0 or model.body_count == 0:
        return
    launch(
        _contact_forces,
        dim=contacts.rigid_contact_max,
        inputs=[
            args.bodies,
            args.chains,
            float(friction_smoothing),
            float(dt),
            args.rigid_contacts(contacts),
            body_q,
            body_qd,
            data.articulation_origin,
            data.dof_S,
        ],
        outputs=[work.body_f_work, work.contact_mass, work.articulation_contact, work.articulation_refactor],
        device=model.device,
    )
