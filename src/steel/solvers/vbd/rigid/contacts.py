"""Rigid body–body contacts for AVBD: per-body lists, the per-body force and Hessian, the dual step.

Contacts come from ``newton.CollisionPipeline`` (``contacts.rigid_contact_*``): per contact the two
shapes, a point on each in its body's frame (world frame for static shapes, body ``-1``), the normal
``n`` pointing from shape 0 toward shape 1, each side's thickness (``margin``: effective radius plus
shape margin) and a friction-anchor offset. The gap is

    C = n · (p1 - p0) - (margin0 + margin1)    [m], negative when the shapes overlap,

with ``p0``, ``p1`` the points moved with their bodies' current poses. The normal force pushes
shape 1 along ``+n`` (and shape 0 along ``-n``) with magnitude ``f_n >= 0``:

* hard (``rigid_contact_hard=True``, the AVBD paper's inequality constraint): the augmented
  Lagrangian ``f_n = max(0, w λ - k (C - α C0⁻))`` (``w = 1``; the compliant formulation of
  :mod:`.compliant` sets ``k`` and ``w < 1`` per row so that the row is a spring of the material ``ke``), with the persistent multiplier ``λ >= 0`` [N], the
  penalty ``k`` [N/m] and ``C0⁻ = min(C0, 0)`` the overlap at the start of the step. After every
  sweep ``λ ← f_n`` at the current poses. ``α`` (``rigid_avbd_contact_alpha``, else
  ``rigid_avbd_alpha``) lets a step remove only ``1 - α`` of an overlap it started with instead of
  turning all of it into separating velocity. Only an overlap is stabilized: a gap at the start
  (a speculative contact) shifted by ``α C0`` would push bodies apart before they touch.
  The shapes' damping ``kd`` [N·s/m] adds ``kd (C0 - C)/dt`` while the contact closes (``C < C0``),
  on contacts whose step starts from an overlapping first iterate (flagged once per step, so the
  damper does not switch on and off between sweeps); it stays out of ``λ`` and out of the friction
  disc. Measured on Newton's legacy path: a touching box's first step sinks
  ``g dt² (m/dt²) / (m/dt² + 4 kd/dt)``, both with kd 100 and 1000 N·s/m, and friction on a box that
  lands while sliding is bounded by the undamped push (the damper carrying its weight does not brake
  it). Ignoring ``kd`` let the benchmark's ramping 20-box stack (kd 100) sink 35 mm where the
  reference sinks 28 mm and recover later (23.6 mm against 1.2 mm at step 130).
  The block Hessian of the normal row is ``k n nᵀ`` (in ``J``) wherever ``f_n > 0`` *or* ``λ > 0``:
  the energy ``(max(0, λ - k C'))² / 2k`` has a ``k``-Lipschitz gradient, so curvature ``k`` bounds
  it from above and the block step cannot jump past its kink at ``C' = λ/k``. Taking 0 on the released
  side (a loaded contact the iterate has just left) made each step land on the unconstrained
  minimum inside the shape and the dual step push it back out: light cable segments (85 mg, ``m/dt²``
  30 N/m) on ke 1e6 N/m contacts alternated between two poses every sweep and reported several times
  their load (a rope over a peg: 55.6 N for 19.6 N). Contacts that never pushed (``λ = 0``, a
  speculative row ahead of an approaching body) keep 0 so they do not slow the approach.
* soft (``False``): the penalty ``f_n = ke (-C) + kd (-(C - C0)/dt)`` while overlapping, clamped at 0.

``k`` is the contact stiffness ``ke`` when the linear beta is 0; with ramping it starts at
``rigid_contact_k_start`` and grows by ``β |C|`` per sweep on overlapping contacts up to ``ke``.
Between steps the warm start keeps ``α γ λ`` and ``γ k`` (not below the seed), as for joints.

Materials are mixed per contact from the two shapes: ``ke``, ``kd`` by the arithmetic mean and
``μ`` by the geometric mean ``sqrt(μ0 μ1)``. The geometric mean is measured on Newton's SolverVBD
(legacy path): a box sliding on a plane with ``μ`` 0.1 and 0.9 decelerates at 0.75 times the rate
of one with 0.4 and 0.4, as ``sqrt(0.09) / 0.4`` predicts (the mean would give 1.25).

Friction acts on the tangential slip of the friction anchors (point plus offset) over the step,
``u = T Δ(a1 - a0)`` [m], ``T = I - n nᵀ``; ``f_n`` is the current normal force.

* hard contacts: a bounded tangential constraint ``u = 0`` (the AVBD paper's friction rows) with
  its own persistent multiplier ``λ_t`` (a tangential force on shape 1 [N]) and the contact penalty
  ``k``: the trial force ``λ_t - k u`` is projected onto the Coulomb disc ``|f_t| <= μ f_n``, and
  after every sweep ``λ_t`` takes the projected force at the current poses. Sticking contacts
  converge to ``u = 0`` with ``λ_t`` carrying the holding force; sliding ones sit on the disc with
  ``f_t`` opposing the slip. The block Hessian is ``k T`` inside the disc and ``k μ f_n / |trial| T``
  on it (the secant, positive semi-definite). Rejected: IPC's smoothed Coulomb law (below) on
  hard contacts. Its stick regime is a spring ``2 μ f_n / ε`` per contact that carries the whole
  holding force without a multiplier; for a box riding on a sliding box it is several times the
  boxes' ``m/dt²``, and the Gauss-Seidel sweep then evaluates the two boxes' shared friction
  force at poses that differ by the last visit's motion, so the pair gains momentum: two boxes
  sliding down a 30° slope accelerated 10 % faster than ``g (sin θ - μ cos θ)`` at 10 iterations
  (0.5 % at 40), one box alone 1.2 % too slow. With the multiplier the pair is within 1 %.
* soft contacts (``rigid_contact_hard=False``): smoothed Coulomb after IPC, as for particle contacts
  (:mod:`..particles.contacts`): ``ε = friction_epsilon · dt`` [m], ``f = -μ f_n f₁(|u|) u/|u|`` on
  shape 1 and the opposite on shape 0, ``H ≈ μ f_n f₁/|u| T``; below ``ε`` it is a spring that
  holds a box on a slope under the friction angle with a creep below ``friction_epsilon``.

Per-body lists: each dynamic body keeps up to ``rigid_body_contact_buffer_size`` contact indices;
static and kinematic sides take no slot. Contacts beyond the capacity are dropped for that body
and counted (``overflow``), never written out of bounds. Filing uses atomics: on the CPU the order
is the contact order; on CUDA it may vary, and with it the float rounding of a body's sum.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.struct
class ContactData:
    """Body–body contact rows as the body solve reads them (one row per pipeline contact)."""

    count: wp.array[wp.int32]  # contacts.rigid_contact_count, (1,)
    shape0: wp.array[wp.int32]
    shape1: wp.array[wp.int32]
    point0: wp.array[wp.vec3]  # body frame of shape 0's body [m] (the pipeline's, or replayed: sticky)
    point1: wp.array[wp.vec3]
    offset0: wp.array[wp.vec3]  # friction anchor offset, body frame [m]
    offset1: wp.array[wp.vec3]
    normal: wp.array[wp.vec3]  # world, shape 0 -> shape 1
    margin0: wp.array[wp.float32]  # [m]
    margin1: wp.array[wp.float32]
    body0: wp.array[wp.int32]  # -1: static
    body1: wp.array[wp.int32]
    mu: wp.array[wp.float32]  # mixed friction coefficient, non-dimensional
    ke: wp.array[wp.float32]  # mixed stiffness [N/m]
    kd: wp.array[wp.float32]  # mixed damping [N·s/m]
    k: wp.array[wp.float32]  # current penalty [N/m]
    lam: wp.array[wp.float32]  # normal multiplier, push >= 0 [N]
    lam_w: wp.array[wp.float32]  # weight w of λ in the push (1: AVBD; .compliant: the material's share)
    lam_t: wp.array[wp.vec3]  # tangential multiplier, friction force on shape 1, world [N] (hard contacts)
    c0: wp.array[wp.float32]  # gap at the start of the step [m]
    damp: wp.array[wp.int32]  # 1: the step's first iterate overlaps, the normal damper acts (hard contacts)
    stick: wp.array[wp.int32]  # 1: the last dual step found the contact sticking (hard contacts)
    sticky: wp.array[wp.int32]  # 1: anchors replayed from the previous step, friction on their offset
    body_count: wp.array[wp.int32]  # contacts filed per body (may exceed the capacity)
    body_list: wp.array2d[wp.int32]  # (body, capacity) contact indices
    hard: wp.int32
    alpha: wp.float32
    friction_epsilon: wp.float32  # [m/s]
    stick_eps: wp.float32  # rigid_contact_stick_motion_eps [m]; 0: no contact is flagged sticking


@wp.func
def _point(body_q: wp.array[wp.transform], b: wp.int32, p: wp.vec3):
    if b < 0:
        return p
    return wp.transform_point(body_q[b], p)


@wp.func
def _point_prev(x_prev: wp.array[wp.vec3], q_prev: wp.array[wp.quat], com: wp.array[wp.vec3], b: wp.int32,
                p: wp.vec3):
    """World point ``p`` (body frame) at the start of the step, from the start COM and orientation."""
    if b < 0:
        return p
    return x_prev[b] + wp.quat_rotate(q_prev[b], p - com[b])


@wp.func
def contact_gap(cd: ContactData, body_q: wp.array[wp.transform], i: wp.int32):
    """Gap ``C`` [m] of contact ``i`` at the poses ``body_q`` (negative: overlap)."""
    p0 = _point(body_q, cd.body0[i], cd.point0[i])
    p1 = _point(body_q, cd.body1[i], cd.point1[i])
    return wp.dot(cd.normal[i], p1 - p0) - (cd.margin0[i] + cd.margin1[i])


@wp.func
def normal_force(cd: ContactData, c: wp.float32, i: wp.int32, dt: wp.float32):
    """Normal force at gap ``c``: total push ``f_n >= 0`` [N], its stiffness [N/m], and the undamped push [N].

    The undamped push bounds friction and is what the dual step stores in ``λ`` (see the module
    docstring); on soft contacts it equals the total.
    """
    if cd.hard != 0:
        push = wp.max(cd.lam_w[i] * cd.lam[i] - cd.k[i] * (c - cd.alpha * wp.min(cd.c0[i], 0.0)), 0.0)
        k = wp.where(push > 0.0 or cd.lam[i] > 0.0, cd.k[i], 0.0)
        f = push
        if cd.damp[i] != 0 and c < cd.c0[i]:
            f = f + cd.kd[i] * (cd.c0[i] - c) / dt
            k = k + cd.kd[i] / dt
        return f, k, push
    if c >= 0.0:
        return 0.0, 0.0, 0.0
    f = -cd.ke[i] * c - cd.kd[i] * (c - cd.c0[i]) / dt
    if f <= 0.0:
        return 0.0, 0.0, 0.0
    return f, cd.ke[i] + cd.kd[i] / dt, f


@wp.func
def friction_slip(cd: ContactData, body_q: wp.array[wp.transform], x_prev: wp.array[wp.vec3],
                  q_prev: wp.array[wp.quat], com: wp.array[wp.vec3], i: wp.int32):
    """Tangential slip ``u`` of anchor 1 relative to anchor 0 [m], their tangential motion over the step [m],
    and anchor 1, anchor 0 (world).

    ``u`` is the motion over the step, except on a sticky row (anchors replayed from the previous
    step), where it also holds ``1 - α`` of the tangential offset ``e0`` the anchors started the step
    with: the AVBD paper's C0 stabilization ``C - α C0`` on the positional constraint "anchors
    together", so creep that earlier steps let through is pulled back over later steps instead of
    forgotten. Taking all of ``e0`` (``α = 0``) with ``λ_t`` kept between steps made a resting box
    oscillate sideways with growing amplitude (1e-14 m to 1e-4 m within 270 steps).
    """
    b0 = cd.body0[i]
    b1 = cd.body1[i]
    a0 = cd.point0[i] + cd.offset0[i]
    a1 = cd.point1[i] + cd.offset1[i]
    w0 = _point(body_q, b0, a0)
    w1 = _point(body_q, b1, a1)
    start = _point_prev(x_prev, q_prev, com, b1, a1) - _point_prev(x_prev, q_prev, com, b0, a0)
    d = (w1 - w0) - start
    n = cd.normal[i]
    motion = d - wp.dot(n, d) * n
    u = motion
    if cd.sticky[i] != 0:
        u = motion + (1.0 - cd.alpha) * (start - wp.dot(n, start) * n)
    return u, motion, w1, w0


@wp.func
def friction_ratio(slip: wp.float32, eps: wp.float32):
    """IPC's ``f₁(s)/s``: ``2/ε - s/ε²`` inside the ramp, ``1/s`` on the Coulomb cone [1/m]."""
    if slip >= eps:
        return 1.0 / slip
    return 2.0 / eps - slip / (eps * eps)


@wp.func
def bounded_friction(cd: ContactData, u: wp.vec3, f_n: wp.float32, i: wp.int32):
    """Friction force on shape 1 [N] of a hard contact at slip ``u`` [m] and its Hessian scale [N/m].

    ``λ_t - k_t u`` projected onto the disc ``|f| <= μ f_n`` (tangential plane of the contact normal). The
    row has no tangential material: its penalty is ``k_t = k / w``, the contact penalty ``k`` on the seed's AVBD
    (``w = 1``) and the metric ``ρ`` under compliant ALM (:mod:`.compliant`, where ``k = k_eff``).
    """
    n = cd.normal[i]
    lam = cd.lam_t[i]
    k_t = cd.k[i]
    if cd.lam_w[i] > 0.0:
        k_t = k_t / cd.lam_w[i]
    trial = lam - wp.dot(n, lam) * n - k_t * u
    bound = cd.mu[i] * f_n
    size = wp.length(trial)
    if size <= bound:
        return trial, k_t
    return trial * (bound / size), k_t * bound / size


@wp.func
def contact_force_on_body(
    cd: ContactData,
    body_q: wp.array[wp.transform],
    com: wp.array[wp.vec3],
    x_prev: wp.array[wp.vec3],
    q_prev: wp.array[wp.quat],
    i: wp.int32,
    b: wp.int32,
    dt: wp.float32,
):
    """Force, torque [N, N·m] and Hessian blocks (lin-lin, lin-ang, ang-ang) of contact ``i`` on body ``b``."""
    f_l = wp.vec3(0.0)
    f_a = wp.vec3(0.0)
    h_ll = wp.mat33(0.0)
    h_la = wp.mat33(0.0)
    h_aa = wp.mat33(0.0)
    c = contact_gap(cd, body_q, i)
    f_n, k_n, push = normal_force(cd, c, i, dt)
    if k_n <= 0.0:
        return f_l, f_a, h_ll, h_la, h_aa
    n = cd.normal[i]
    sign = 1.0  # shape 1 is pushed along +n
    point = cd.point1[i]
    if cd.body1[i] != b:
        sign = -1.0
        point = cd.point0[i]
    x_b = wp.transform_point(body_q[b], com[b])
    r = wp.transform_point(body_q[b], point) - x_b
    rn = wp.cross(r, n)
    # Normal row: dC/dx = sign n, dC/dθ = sign r × n; force -(dE/dC) Jᵀ = f_n sign [n; r × n].
    f_l = sign * f_n * n
    f_a = sign * f_n * rn
    h_ll = k_n * wp.outer(n, n)
    h_la = k_n * wp.outer(n, rn)
    h_aa = k_n * wp.outer(rn, rn)
    mu = cd.mu[i]
    if mu > 0.0 and f_n > 0.0:
        u, motion, w1, w0 = friction_slip(cd, body_q, x_prev, q_prev, com, i)
        ra = w1 - x_b
        if sign < 0.0:
            ra = w0 - x_b
        c_t = float(0.0)
        f_t = wp.vec3(0.0)
        if cd.hard != 0:
            f_1, c_t = bounded_friction(cd, u, push, i)
            f_t = sign * f_1
        else:
            eps = wp.max(cd.friction_epsilon * dt, 1.0e-12)
            c_t = mu * f_n * friction_ratio(wp.length(u), eps)
            f_t = -sign * c_t * u  # opposes this body's slip relative to the other
        t = wp.identity(n=3, dtype=wp.float32) - wp.outer(n, n)
        s = wp.skew(ra)
        f_l = f_l + f_t
        f_a = f_a + wp.cross(ra, f_t)
        # Slip Jacobian for this body: du/dx = sign T, du/dθ = -sign T [r]×.
        h_ll = h_ll + c_t * t
        h_la = h_la - c_t * t * s
        h_aa = h_aa - c_t * s * t * s
    return f_l, f_a, h_ll, h_la, h_aa


@wp.kernel
def _file_contacts(
    # Model:
    shape_body: wp.array[wp.int32],
    dynamic: wp.array[wp.int32],
    shape_mu: wp.array[wp.float32],
    shape_ke: wp.array[wp.float32],
    shape_kd: wp.array[wp.float32],
    # Contacts (the pipeline's points and anchor offsets, body frames):
    point0: wp.array[wp.vec3],
    point1: wp.array[wp.vec3],
    offset0: wp.array[wp.vec3],
    offset1: wp.array[wp.vec3],
    # Step:
    body_q: wp.array[wp.transform],
    use_ramp: wp.int32,
    k_start: wp.float32,
    # Data out:
    cd: ContactData,
    overflow: wp.array[wp.int32],
):
    i = wp.tid()  # one thread per contact row
    if i >= cd.count[0]:
        return
    cd.point0[i] = point0[i]
    cd.point1[i] = point1[i]
    cd.offset0[i] = offset0[i]
    cd.offset1[i] = offset1[i]
    cd.stick[i] = 0
    cd.sticky[i] = 0
    s0 = cd.shape0[i]
    s1 = cd.shape1[i]
    b0 = shape_body[s0]
    b1 = shape_body[s1]
    cd.body0[i] = b0
    cd.body1[i] = b1
    cd.mu[i] = wp.sqrt(wp.max(shape_mu[s0] * shape_mu[s1], 0.0))
    ke = 0.5 * (shape_ke[s0] + shape_ke[s1])
    cd.ke[i] = ke
    cd.kd[i] = 0.5 * (shape_kd[s0] + shape_kd[s1])
    cd.k[i] = wp.where(use_ramp != 0, wp.min(k_start, ke), ke)
    cd.lam[i] = 0.0
    cd.lam_t[i] = wp.vec3(0.0)
    cd.c0[i] = contact_gap(cd, body_q, i)
    cap = cd.body_list.shape[1]
    for side in range(2):
        b = wp.where(side == 0, b0, b1)
        if b >= 0:
            if dynamic[b] != 0:
                slot = wp.atomic_add(cd.body_count, b, 1)
                if slot < cap:
                    cd.body_list[b, slot] = i
                else:
                    wp.atomic_add(overflow, 0, 1)


@wp.struct
class ContactHistory:
    """The previous step's contact rows, by row, for the next step's match indices."""

    count: wp.array[wp.int32]  # (1,)
    generation: wp.array[wp.int32]  # (1,) Contacts.contact_generation of the set these rows solved; -2: none
    lam: wp.array[wp.float32]  # [N]
    lam_t: wp.array[wp.vec3]  # [N]
    k: wp.array[wp.float32]  # [N/m]
    stick: wp.array[wp.int32]
    point0: wp.array[wp.vec3]  # body frames [m]
    point1: wp.array[wp.vec3]
    offset0: wp.array[wp.vec3]
    offset1: wp.array[wp.vec3]


@wp.func
def _still_in_contact(cd: ContactData, body_q: wp.array[wp.transform], prev: ContactHistory, m: wp.int32,
                      i: wp.int32):
    """Whether the previous row ``m``'s friction anchors are still the contact ``i`` the pipeline now finds:
    on at least one body the stuck anchor is within ``stick_eps`` of the new one across the normal.

    Only then may a stuck row replay them. A resting or creeping contact keeps its point on one body (a box's
    corner) while it may wander over the other; a rolling one (a ball, a cable over a pulley) does not slip,
    but its contact point travels over both surfaces, so the stuck anchors leave it. Replayed step after
    step they held a ball rolling at 3 cm/s by a point behind it (3.5 mm/s and a spin of 5.6 cm/s after
    2 s) and jerked the cable of Newton's cable_cross_slide_table.
    """
    n = cd.normal[i]
    b0 = cd.body0[i]
    b1 = cd.body1[i]
    d0 = _point(body_q, b0, prev.point0[m] + prev.offset0[m]) - _point(body_q, b0, cd.point0[i] + cd.offset0[i])
    d1 = _point(body_q, b1, prev.point1[m] + prev.offset1[m]) - _point(body_q, b1, cd.point1[i] + cd.offset1[i])
    t0 = d0 - wp.dot(n, d0) * n
    t1 = d1 - wp.dot(n, d1) * n
    return wp.min(wp.length(t0), wp.length(t1)) < cd.stick_eps


@wp.func
def _same_feature(cd: ContactData, prev: ContactHistory, m: wp.int32, i: wp.int32):
    """Whether kept row ``m`` and new row ``i`` put their point on a dynamic body at the same place of it (body
    frame, within 0.1 mm): the same feature (a box's corner) found again after the body moved."""
    same = False
    if cd.body0[i] >= 0:
        same = wp.length(prev.point0[m] - cd.point0[i]) < 1.0e-4
    if cd.body1[i] >= 0:
        same = same or wp.length(prev.point1[m] - cd.point1[i]) < 1.0e-4
    return same


@wp.kernel
def _restore_history(
    cd: ContactData,
    body_q: wp.array[wp.transform],
    shape_world: wp.array[wp.int32],
    cold_worlds: wp.array[wp.int32],
    match: wp.array[wp.int32],
    generation: wp.array[wp.int32],
    match_generation: wp.array[wp.int32],
    prev: ContactHistory,
    keep_lam: wp.float32,
    gamma: wp.float32,
    use_ramp: wp.int32,
    k_start: wp.float32,
    in_flight: wp.int32,
):
    i = wp.tid()  # one thread per contact row
    if i >= cd.count[0]:
        return
    # Restore only from the set the history solved (see RigidContacts.begin): the same set again (no
    # collision pass since) row by row; the next pass into that buffer through its match indices; else cold.
    solved = prev.generation[0]
    m = i
    if generation[0] != solved:
        if match_generation[0] != solved:
            return
        m = match[i]
        # In flight, a row the pipeline did not match because its body moved beyond the matching threshold
        # since the last pass keeps its multipliers when the kept row at its index is the same feature.
        if m < 0 and in_flight != 0 and i < prev.count[0]:
            if _same_feature(cd, prev, i, i):
                m = i
    if m < 0 or m >= prev.count[0]:
        return
    world = wp.max(shape_world[cd.shape0[i]], shape_world[cd.shape1[i]])  # a world shape's, else -1
    if world < 0:
        world = cold_worlds.shape[0] - 1
    if cold_worlds[world] != 0:
        return
    if cd.hard != 0:
        cd.lam[i] = keep_lam * prev.lam[m]
        cd.lam_t[i] = keep_lam * prev.lam_t[m]
        if prev.stick[m] != 0 and _still_in_contact(cd, body_q, prev, m, i):
            # A contact that stuck keeps its material points: friction then acts on their whole offset.
            cd.point0[i] = prev.point0[m]
            cd.point1[i] = prev.point1[m]
            cd.offset0[i] = prev.offset0[m]
            cd.offset1[i] = prev.offset1[m]
            cd.sticky[i] = 1
            cd.c0[i] = contact_gap(cd, body_q, i)
    if use_ramp != 0:
        cd.k[i] = wp.clamp(gamma * prev.k[m], wp.min(k_start, cd.ke[i]), cd.ke[i])


@wp.kernel
def _warm_start(
    cd: ContactData,
    body_q: wp.array[wp.transform],
    keep_lam: wp.float32,
    gamma: wp.float32,
    use_ramp: wp.int32,
    k_start: wp.float32,
    replay: wp.int32,
):
    i = wp.tid()  # one thread per contact row (a step reusing the last step's rows)
    if i >= cd.count[0]:
        return
    # The rows keep their points: with history, those of a contact that stuck are its replayed anchors.
    cd.sticky[i] = wp.where(replay != 0 and cd.stick[i] != 0, 1, 0)
    cd.c0[i] = contact_gap(cd, body_q, i)
    cd.lam[i] = keep_lam * cd.lam[i]
    cd.lam_t[i] = keep_lam * cd.lam_t[i]
    if use_ramp != 0:
        cd.k[i] = wp.clamp(gamma * cd.k[i], wp.min(k_start, cd.ke[i]), cd.ke[i])


@wp.kernel
def _contact_duals(cd: ContactData, body_q: wp.array[wp.transform], x_prev: wp.array[wp.vec3],
                   q_prev: wp.array[wp.quat], com: wp.array[wp.vec3], beta: wp.float32, dt: wp.float32):
    i = wp.tid()  # one thread per contact row, after every sweep over the colours
    if i >= cd.count[0]:
        return
    c = contact_gap(cd, body_q, i)
    if cd.hard != 0:
        f, k, push = normal_force(cd, c, i, dt)
        # Friction first: its disc is bounded by the undamped push the sweep solved with, which the
        # normal dual step below stores (the damper never enters λ).
        f_t = wp.vec3(0.0)
        u, motion, w1, w0 = friction_slip(cd, body_q, x_prev, q_prev, com, i)
        if cd.mu[i] > 0.0 and push > 0.0:
            f_t, c_t = bounded_friction(cd, u, push, i)
        # Sticking: the anchors kept together over the step (a row in reach that does not push yet
        # counts too, as on the seed's revision of Newton's solver, whose hovering stacks stay frozen).
        stick = wp.where(wp.length(motion) < cd.stick_eps, 1, 0)
        cd.lam_t[i] = f_t
        cd.lam[i] = push
        cd.stick[i] = stick
    if c < 0.0:
        cd.k[i] = wp.min(cd.k[i] + beta * (-c), cd.ke[i])


@wp.kernel
def _mark_damped(cd: ContactData, body_q: wp.array[wp.transform]):
    i = wp.tid()  # one thread per contact row, at the step's first iterate
    if i >= cd.count[0]:
        return
    cd.damp[i] = wp.where(contact_gap(cd, body_q, i) < 0.0, 1, 0)


@wp.kernel
def _snapshot(cd: ContactData, generation: wp.array[wp.int32], in_flight: wp.int32, prev: ContactHistory):
    i = wp.tid()  # one thread per contact row
    if i == 0:
        prev.count[0] = cd.count[0]
        prev.generation[0] = generation[0]
    if i < cd.count[0]:
        prev.lam[i] = cd.lam[i]
        prev.lam_t[i] = cd.lam_t[i]
        prev.k[i] = cd.k[i]
        # In flight, a row keeps the anchors it replays this step (sticky), as it would without the pass.
        prev.stick[i] = wp.where(in_flight != 0, cd.sticky[i], cd.stick[i])
        prev.point0[i] = cd.point0[i]
        prev.point1[i] = cd.point1[i]
        prev.offset0[i] = cd.offset0[i]
        prev.offset1[i] = cd.offset1[i]


@wp.kernel
def _contact_forces(
    cd: ContactData,
    body_q: wp.array[wp.transform],
    body_q_prev: wp.array[wp.transform],
    dt: wp.float32,
    out_body0: wp.array[wp.int32],
    out_body1: wp.array[wp.int32],
    out_point0: wp.array[wp.vec3],
    out_point1: wp.array[wp.vec3],
    out_force: wp.array[wp.vec3],
    out_count: wp.array[wp.int32],
):
    i = wp.tid()  # one thread per contact row
    n_rows = wp.min(cd.count[0], out_force.shape[0])
    if i == 0:
        out_count[0] = n_rows
    if i >= n_rows:
        return
    b0 = cd.body0[i]
    b1 = cd.body1[i]
    p0 = _point(body_q, b0, cd.point0[i])
    p1 = _point(body_q, b1, cd.point1[i])
    out_body0[i] = b0
    out_body1[i] = b1
    out_point0[i] = p0
    out_point1[i] = p1
    n = cd.normal[i]
    c = wp.dot(n, p1 - p0) - (cd.margin0[i] + cd.margin1[i])
    f_n = float(0.0)
    if cd.hard != 0:
        f_n = cd.lam[i]  # the last dual step left λ equal to the undamped push at the final poses
        if cd.damp[i] != 0 and c < cd.c0[i]:
            f_n = f_n + cd.kd[i] * (cd.c0[i] - c) / dt
    else:
        f_n, k_n, push = normal_force(cd, c, i, dt)
    force = f_n * n
    mu = cd.mu[i]
    if cd.hard != 0:
        force = force + cd.lam_t[i]  # likewise the friction force at the final poses
    elif mu > 0.0 and f_n > 0.0:
        a0 = cd.point0[i] + cd.offset0[i]
        a1 = cd.point1[i] + cd.offset1[i]
        d = (_point(body_q, b1, a1) - _point(body_q_prev, b1, a1)) - (_point(body_q, b0, a0)
                                                                     - _point(body_q_prev, b0, a0))
        u = d - wp.dot(n, d) * n
        eps = wp.max(cd.friction_epsilon * dt, 1.0e-12)
        force = force - mu * f_n * friction_ratio(wp.length(u), eps) * u
    out_force[i] = force


class RigidContacts:
    """Contact rows, per-body lists and history of the rigid solve (see the module docstring).

    Rows are sized at construction from ``model.rigid_contact_max`` when a ``CollisionPipeline`` has
    published it, else from ``Contacts.rigid_contact_max`` at the first step that brings contacts (and
    regrown if a later buffer is larger); history keeps the previous step's ``λ`` and ``k`` by row.
    """

    def __init__(self, model, opts, dynamic: np.ndarray):
        dev = model.device
        self.device = dev
        self.model = model
        beta = opts.rigid_avbd_beta if opts.rigid_avbd_linear_beta is None else opts.rigid_avbd_linear_beta
        alpha = opts.rigid_avbd_alpha if opts.rigid_avbd_contact_alpha is None else opts.rigid_avbd_contact_alpha
        self.beta = float(beta)
        self.use_ramp = int(beta > 0.0)
        self.k_start = float(opts.rigid_contact_k_start)
        self.gamma = float(opts.rigid_avbd_gamma)
        self.alpha = float(alpha)
        self.keep = self.alpha * self.gamma  # λ kept from step to step (.compliant: gamma)
        self.hard = bool(opts.rigid_contact_hard)
        self.history = bool(opts.rigid_contact_history)
        self.stick_eps = float(opts.rigid_contact_stick_motion_eps)
        self.freeze_translation = float(opts.rigid_contact_stick_freeze_translation_eps)
        self.freeze_angle = float(opts.rigid_contact_stick_freeze_angular_eps)
        # Only hard contacts are flagged sticking; the snap needs flags and both thresholds.
        snaps = self.hard and min(self.stick_eps, self.freeze_translation, self.freeze_angle) > 0.0
        from .deadzone import DeadzoneSnap  # here: .deadzone's kernels take this module's ContactData
        self.snap = DeadzoneSnap(model, self.freeze_translation, self.freeze_angle) if snaps else None
        self.capacity = int(opts.rigid_body_contact_buffer_size)
        self.dynamic = wp.array(dynamic.astype(np.int32), dtype=wp.int32, device=dev)
        self.overflow = wp.zeros(1, dtype=wp.int32, device=dev)
        # 1 per world (last slot: no world) whose rows must not restore history at the next refresh (reset).
        self.cold_worlds = wp.zeros(int(model.world_count) + 1, dtype=wp.int32, device=dev)
        self.rows = 0
        self.update_next = True  # set_rigid_history_update: one-shot
        self.filed = False  # rows and lists hold a refreshed contact set
        cd = ContactData()
        cd.hard = int(self.hard)
        cd.alpha = self.alpha
        cd.friction_epsilon = float(opts.friction_epsilon)
        cd.stick_eps = self.stick_eps if self.hard else 0.0
        nb = max(int(model.body_count), 1)
        cd.body_count = wp.zeros(nb, dtype=wp.int32, device=dev)
        cd.body_list = wp.zeros((nb, max(self.capacity, 1)), dtype=wp.int32, device=dev)
        self.data = cd
        # Sized from the capacity a CollisionPipeline built before the solver published on the model, so a
        # graph captured from the first step does not allocate (and zero) the history inside the capture,
        # where every replay would repeat the zeroing and cold-start the contacts. Otherwise the first
        # step that brings contacts sizes the rows.
        self._allocate(max(int(getattr(model, "rigid_contact_max", None) or 0), 1))
        self.empty_count = wp.zeros(1, dtype=wp.int32, device=dev)
        cd.count = self.empty_count
        self.solved = None  # (the Contacts the rows were last filed from, its contact_generation array)
        self._outputs = None

    def _allocate(self, rows: int) -> None:
        """Own per-row arrays (materials, bodies, state, history) for ``rows`` contacts."""
        dev, cd = self.device, self.data
        cd.body0 = wp.zeros(rows, dtype=wp.int32, device=dev)
        cd.body1 = wp.zeros(rows, dtype=wp.int32, device=dev)
        cd.mu = wp.zeros(rows, dtype=wp.float32, device=dev)
        cd.ke = wp.zeros(rows, dtype=wp.float32, device=dev)
        cd.kd = wp.zeros(rows, dtype=wp.float32, device=dev)
        cd.k = wp.zeros(rows, dtype=wp.float32, device=dev)
        cd.lam = wp.zeros(rows, dtype=wp.float32, device=dev)
        cd.lam_w = wp.ones(rows, dtype=wp.float32, device=dev)  # AVBD; .compliant rewrites it every step
        cd.lam_t = wp.zeros(rows, dtype=wp.vec3, device=dev)
        cd.c0 = wp.zeros(rows, dtype=wp.float32, device=dev)
        cd.damp = wp.zeros(rows, dtype=wp.int32, device=dev)
        cd.stick = wp.zeros(rows, dtype=wp.int32, device=dev)
        cd.sticky = wp.zeros(rows, dtype=wp.int32, device=dev)
        cd.point0, cd.point1, cd.offset0, cd.offset1 = (wp.zeros(rows, dtype=wp.vec3, device=dev) for _ in range(4))
        prev = ContactHistory()
        prev.count = wp.zeros(1, dtype=wp.int32, device=dev)
        prev.generation = wp.full(1, -2, dtype=wp.int32, device=dev)
        prev.lam = wp.zeros(rows, dtype=wp.float32, device=dev)
        prev.lam_t = wp.zeros(rows, dtype=wp.vec3, device=dev)
        prev.k = wp.zeros(rows, dtype=wp.float32, device=dev)
        prev.stick = wp.zeros(rows, dtype=wp.int32, device=dev)
        prev.point0, prev.point1, prev.offset0, prev.offset1 = (wp.zeros(rows, dtype=wp.vec3, device=dev)
                                                                for _ in range(4))
        self.prev = prev
        self.rows = rows

    def begin(self, contacts, body_q, in_flight: bool = False) -> None:
        """Refresh the rows from ``contacts`` (or, after ``set_rigid_history_update(False)``, warm-start the old ones).

        History is restored only from the contact set the previous step solved (as Newton 1.8.0 documents
        it): the same set once more, with no collision pass since (``contact_generation`` unchanged), row
        by row from itself; the set of the one pass since into the same buffer through its match indices
        (``rigid_contact_match_generation`` names the solved set); otherwise cold: two passes between
        steps, another buffer, or buffers used in turn. Matching indices across any of those would give
        rows the multipliers of other contacts.

        ``in_flight`` (re-detection between iterations, :mod:`..collision`, after :meth:`keep_in_flight`
        ran before the pass): restore the fresh set from the kept rows through the match indices, whatever
        ``rigid_contact_history`` says, so a pass inside the step does not cold-start the contacts the
        pipeline matches (within its ``contact_matching_pos_threshold``, 0.5 mm by default), and the rows it
        leaves unmatched whose kept row at the same index is the same feature of a dynamic body (body-frame
        point within 0.1 mm: a box corner found again after the box moved a few mm in the first iterate).
        Other rows start cold. Rejected: the match indices alone (as the reference documents it): a resting
        box's predicted pose sits 2.7 mm below its start at 1/60 s, every pass right after it broke all four
        matches and the box sank 1.2 mm more over 3 steps than detecting once.

        Raises:
            RuntimeError: ``rigid_contact_history`` without ``Contacts.rigid_contact_match_index``
                (build the pipeline with ``contact_matching="latest"``).
        """
        update, self.update_next = (True, self.update_next) if in_flight else (self.update_next, True)
        cd, dev = self.data, self.device
        keep = self.keep
        gamma = self.gamma
        if in_flight:
            keep = gamma = 1.0  # the same step: nothing decays
        if not update and self.filed:
            launch(_warm_start, dim=self.rows,
                      inputs=[cd, body_q, keep, self.gamma, self.use_ramp, self.k_start, int(self.history)], device=dev)
            return
        match = getattr(contacts, "rigid_contact_match_index", None)
        restore = self.history or (in_flight and match is not None)  # in flight, unmatched: cold as the rows were
        if restore and match is None:
            raise RuntimeError(
                "SolverVBD rigid_contact_history=True (the option, or the scene's vbd:rigid_contact_history, USD "
                "newton:vbd:rigid:contactHistory) needs Contacts.rigid_contact_match_index: build the pipeline with "
                "newton.CollisionPipeline(model, contact_matching=\"latest\")")
        rows = int(contacts.rigid_contact_max)
        if rows > self.rows:
            self._allocate(rows)
        cd.count = contacts.rigid_contact_count
        cd.shape0, cd.shape1 = contacts.rigid_contact_shape0, contacts.rigid_contact_shape1
        cd.normal = contacts.rigid_contact_normal
        cd.margin0, cd.margin1 = contacts.rigid_contact_margin0, contacts.rigid_contact_margin1
        cd.body_count.zero_()
        model = self.model
        launch(_file_contacts, dim=rows,
                  inputs=[model.shape_body, self.dynamic, model.shape_material_mu, model.shape_material_ke,
                          model.shape_material_kd, contacts.rigid_contact_point0, contacts.rigid_contact_point1,
                          contacts.rigid_contact_offset0, contacts.rigid_contact_offset1, body_q, self.use_ramp,
                          self.k_start],
                  outputs=[cd, self.overflow], device=dev)
        # Launched on the first refresh too (the empty history restores nothing): a graph captured
        # from a first step replays its launches every frame, and a restore missing there would
        # cold-start the contacts once per replay. Another buffer than the last one starts cold.
        first_or_same = self.solved is None or self.solved[0] is contacts
        self.solved = (contacts, contacts.contact_generation)
        if restore and first_or_same:
            launch(_restore_history, dim=rows,
                      inputs=[cd, body_q, model.shape_world, self.cold_worlds, match, contacts.contact_generation,
                              contacts.rigid_contact_match_generation, self.prev, keep, gamma, self.use_ramp,
                              self.k_start, int(in_flight)], device=dev)
        self.cold_worlds.zero_()
        self.filed = True

    def keep_in_flight(self) -> None:
        """Before a pass between iterations: keep the rows being solved (and their set's generation) for
        ``begin(..., in_flight=True)`` to restore the pass's rows from."""
        if self.filed:
            self._snapshot(in_flight=True)

    def _snapshot(self, in_flight: bool = False) -> None:
        """Keep the rows' ``λ``, ``k``, stick flags and points, and the generation of the set they solve."""
        if self.solved is not None:
            launch(_snapshot, dim=self.rows, inputs=[self.data, self.solved[1], int(in_flight), self.prev],
                   device=self.device)

    def update_duals(self, body_q, bodies, dt: float) -> None:
        """AVBD dual step after a sweep: ``λ ← f_n``, ``λ_t ← f_t`` on hard contacts; ``k += β |C|`` on overlapping ones.

        ``bodies`` (:class:`..bodies.BodyData`) gives the step's start poses for the friction slip.
        """
        launch(_contact_duals, dim=self.rows,
                  inputs=[self.data, body_q, bodies.x_prev, bodies.q_prev, bodies.com, self.beta, float(dt)],
                  device=self.device)

    def mark_damped(self, body_q) -> None:
        """Switch each hard contact's normal damper on for this step where the first iterate ``body_q`` overlaps."""
        launch(_mark_damped, dim=self.rows, inputs=[self.data, body_q], device=self.device)

    def end(self, bodies, body_q_in, body_q, body_qd) -> None:
        """Deadzone snap (:mod:`.deadzone`, when on), then keep this step's ``λ``, ``k``, stick flags and points
        by row for the next step. ``bodies`` (:class:`..bodies.BodyData`) gives the COMs and start poses."""
        if self.snap is not None:
            self.snap.apply(self.data, self.dynamic, bodies, body_q_in, body_q, body_qd)
        if self.history:
            self._snapshot()

    def forces(self, body_q, body_q_prev, contacts, dt: float):
        """Per-contact outputs of ``collect_rigid_contact_forces`` (see the solver's docstring).

        Zero count (and the last outputs left as they are) without contacts, or when ``contacts`` is
        not the buffer the last step filed (a larger or another one).
        """
        rows = 0 if contacts is None else int(contacts.rigid_contact_max)
        if self._outputs is None or self._outputs[0].shape[0] < rows:
            n, dev = max(rows, 1), self.device
            self._outputs = (wp.full(n, -1, dtype=wp.int32, device=dev), wp.full(n, -1, dtype=wp.int32, device=dev),
                             wp.zeros(n, dtype=wp.vec3, device=dev), wp.zeros(n, dtype=wp.vec3, device=dev),
                             wp.zeros(n, dtype=wp.vec3, device=dev), wp.zeros(1, dtype=wp.int32, device=dev))
        out = self._outputs
        out[5].zero_()
        fresh = contacts is not None and self.filed and rows <= self.rows
        if not fresh or self.data.count is not contacts.rigid_contact_count:
            return out
        launch(_contact_forces, dim=rows, inputs=[self.data, body_q, body_q_prev, float(dt)],
                  outputs=list(out), device=self.device)
        return out

    def check_overflow(self) -> int:
        """Contacts dropped so far by full per-body lists (reads the device)."""
        return int(self.overflow.numpy()[0])


__all__ = ["ContactData", "ContactHistory", "RigidContacts", "contact_force_on_body"]
