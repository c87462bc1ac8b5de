"""Friction modes (``friction_mode``): coupled per-contact updates of a contact's normal and friction impulses.

``"fixed_normal"`` (the default) is not here: the sweep updates a contact's normal row, then its
tangent pair on the disk ``mu lambda_n`` of that normal impulse (``sweep/pgs.py``). The other modes give the
contact's tangent pair the kind ``ROW_COUPLED``, and the sweep then replaces the contact's three
impulses together by the solution of its own 3x3 problem, the other rows held fixed (a block
Gauss-Seidel step, not scaled by ``relaxation``):

    c = W lambda + b,   W = J Y (the contact's 3x3 Delassus block, without cfm),
    b = (J qd - target) - W lambda_old   (the velocity the contact would have without its impulse)

with ``c = (c_n, c_t)`` [m/s] the contact's velocity relative to its targets and
``lambda = (lambda_n, lambda_t)`` [N·s]. Coulomb's law with maximum dissipation asks for
``lambda_n >= 0``, ``c_n >= 0``, ``lambda_n c_n = 0``, ``|lambda_t| <= mu lambda_n``, and
``lambda_t`` minimizing ``1/2 lambda_t^T W_tt lambda_t + lambda_t . (b_t + W_tn lambda_n)`` on that disk
(sticking: ``c_t = 0`` inside it; sliding: ``lambda_t = -mu lambda_n c_t / |c_t|`` on its edge).

* ``"bisection"``: for a probe ``lambda_n`` the disk problem is solved exactly (a 2x2 trust-region
  problem, :func:`_disk_minimizer`), which gives ``c_n(lambda_n)``; ``lambda_n`` is bisected to the root
  of ``c_n`` (or 0 when ``c_n(0) >= 0``). Every contact with friction, free or articulated.
* ``"bisection_desaxce"``: on free-body contacts the associated problem with De Saxcé's correction
  (De Saxcé and Feng, 1998; Le Lidec and Carpentier, 2024): ``lambda`` minimizes
  ``1/2 lambda^T W lambda + lambda . (b + s e_n)`` over the cone ``|lambda_t| <= mu lambda_n``, with the
  bias ``s = mu |c_t|`` of the contact's current tangential velocity added to its normal velocity. The
  minimum over the cone is convex in ``lambda_n``; its slope is ``c_n + s - mu |c_t(lambda_n)|`` (the
  disk's multiplier is the sliding speed), which is bisected. Without ``s`` the associated law lifts a
  sliding contact off at ``c_n = mu |c_t|``; with it, the fixed point of the sweep is Coulomb's law
  (``c_n = 0`` while sliding). In the row form ``J qd >= target`` the bias lowers the normal target by
  ``s`` inside the cone problem. Articulated contacts take the ``"bisection"`` update. The update
  reads ``mu`` at most ``DESAXCE_MU_MAX``: the bias ``mu |c_t|`` of a wider cone amplifies the
  sweep's residual slip into normal impulse (a sliding box with ``mu = 1e3`` jumped 0.4 m, with
  ``1e6`` fell through the ground; from ``mu = 20`` it sank); a cone of 10 sticks as any wider does
  (``tests/solvers/steel/test_robustness.py::test_a_huge_friction_coefficient_sticks_under_the_desaxce_mode``).
* ``"coulomb_newton"``: on free-body contacts the exact Coulomb solution of the 3x3 problem: separated
  (``b_n >= 0``), sticking (``lambda = -W^-1 b`` inside the cone), else sliding, where
  ``lambda = lambda_n (1, mu cos(theta), mu sin(theta))`` with ``c_n = 0`` fixing ``lambda_n(theta)``, and
  the angle ``theta`` of the tangential force (whose ratio to the normal force is ``mu``) is the root of
  ``c_t(theta) . (-sin(theta), cos(theta)) = 0`` with ``c_t`` opposite the force, found by a scalar Newton
  iteration bracketed to a half turn around the frictionless slip direction. When no bracket holds
  (a strongly anisotropic block), the contact takes the ``"bisection"`` update. Articulated contacts
  keep the ``"fixed_normal"`` update (their pair is an ordinary ``ROW_FRICTION`` pair).

The coupled modes use point friction (no patches) and exclude contact compliance and regularization
(``check_friction_mode_options``). Phases, as the other row modules: the options check (at
construction), the row kind (:func:`coupled_contact`, per contact in ``contacts.py``) and the per-contact
update (:func:`coupled_contact_impulse`, called by the sweep with the block it assembles).
"""

from __future__ import annotations

import warp as wp

FIXED_NORMAL = wp.constant(0)
BISECTION = wp.constant(1)
BISECTION_DESAXCE = wp.constant(2)
COULOMB_NEWTON = wp.constant(3)
MODE_INDEX = {"fixed_normal": 0, "bisection": 1, "bisection_desaxce": 2, "coulomb_newton": 3}

_BISECTIONS = 48  # halvings of the normal-impulse bracket (float32 runs out after about 24; stops early)
_DOUBLINGS = 60  # growths of the initial upper bracket
DESAXCE_MU_MAX = wp.constant(10.0)  # widest cone of the "bisection_desaxce" update (module docstring)
_NEWTON_STEPS = 24  # trust-region and angle iterations (each stops early on convergence)


@wp.func
def coupled_contact(mode: int, free_body: int):
    """Whether a contact with friction takes a coupled update (``ROW_COUPLED``) under ``mode``."""
    if mode == BISECTION or mode == BISECTION_DESAXCE:
        return True
    return mode == COULOMB_NEWTON and free_body != 0


@wp.func
def _solve22(a: wp.mat22, g: wp.vec2):
    """``a^-1 g`` of a symmetric 2x2 ``a`` (0 when singular)."""
    det = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
    if det == 0.0:
        return wp.vec2(0.0)
    return wp.vec2(a[1, 1] * g[0] - a[0, 1] * g[1], a[0, 0] * g[1] - a[1, 0] * g[0]) / det


@wp.func
def _disk_minimizer(w: wp.mat22, g: wp.vec2, radius: float):
    """Minimize ``1/2 x^T w x + g . x`` on ``|x| <= radius``: returns ``(x, |w x + g|)`` as a vec3.

    The second value is the disk's multiplier (zero inside; on the edge ``w x + g = -nu x / |x|``,
    so it is the sliding speed). Inside: ``x = -w^-1 g``. On the edge: ``x(k) = -(w + k I)^-1 g`` with
    ``|x(k)| = radius``, found by Newton's method on ``1/|x(k)| - 1/radius`` from ``k = 0``, which
    increases ``k`` monotonically to the root (Moré and Sorensen, 1983).
    """
    if radius <= 0.0:
        return wp.vec3(0.0, 0.0, wp.length(g))
    x = -_solve22(w, g)
    if wp.length(x) <= radius:
        return wp.vec3(x[0], x[1], 0.0)
    k = float(0.0)
    for _ in range(_NEWTON_STEPS):
        a = w + k * wp.identity(n=2, dtype=float)
        x = -_solve22(a, g)
        length = wp.length(x)
        if wp.abs(length - radius) <= 1.0e-6 * radius:
            break
        q = wp.dot(x, _solve22(a, x))  # x^T (w + k I)^-1 x = -d|x|^2/dk / 2
        if q <= 0.0:
            break
        k = k + (length - radius) * length * length / (radius * q)
    x = x * (radius / wp.max(wp.length(x), 1.0e-30))  # on the edge exactly
    c = w * x + g
    return wp.vec3(x[0], x[1], wp.length(c))


@wp.func
def _probe(w: wp.mat33, b: wp.vec3, mu: float, lam_n: float):
    """Tangent impulse on the disk of ``lam_n``: returns ``(lambda_t1, lambda_t2, c_n, nu)`` as a vec4."""
    wtt = wp.mat22(w[1, 1], w[1, 2], w[2, 1], w[2, 2])
    g = wp.vec2(b[1] + w[1, 0] * lam_n, b[2] + w[2, 0] * lam_n)
    t = _disk_minimizer(wtt, g, mu * lam_n)
    c_n = b[0] + w[0, 0] * lam_n + w[0, 1] * t[0] + w[0, 2] * t[1]
    return wp.vec4(t[0], t[1], c_n, t[2])


@wp.func
def _slope(p: wp.vec4, associative: int, mu: float, bias: float):
    """The function bisected in ``lambda_n``: ``c_n`` (Coulomb) or ``c_n + s - mu nu`` (De Saxcé)."""
    if associative != 0:
        return p[2] + bias - mu * p[3]
    return p[2]


@wp.func
def _bisect(w: wp.mat33, b: wp.vec3, mu: float, associative: int, bias: float, lam_guess: float):
    """``lambda`` whose normal impulse is the root of :func:`_slope` (or 0 when it is positive at 0)."""
    if _slope(_probe(w, b, mu, 0.0), associative, mu, bias) >= 0.0:
        return wp.vec3(0.0)
    lo = float(0.0)
    hi = wp.max(lam_guess, wp.max(-b[0] / w[0, 0], 1.0e-20))
    for _ in range(_DOUBLINGS):
        if _slope(_probe(w, b, mu, hi), associative, mu, bias) >= 0.0:
            break
        lo = hi
        hi = 2.0 * hi
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _slope(_probe(w, b, mu, mid), associative, mu, bias) >= 0.0:
            hi = mid
        else:
            lo = mid
    lam_n = 0.5 * (lo + hi)
    p = _probe(w, b, mu, lam_n)
    return wp.vec3(lam_n, p[0], p[1])


@wp.func
def _slide_residual(w: wp.mat33, b: wp.vec3, mu: float, theta: float):
    """Sliding at force angle ``theta``: ``(e, de/dtheta, lambda_n, c_t . d)`` as a vec4.

    ``e = c_t . d_perp`` vanishes when the slip is parallel to the force direction ``d``.
    """
    d = wp.vec2(wp.cos(theta), wp.sin(theta))
    dd = wp.vec2(-d[1], d[0])
    wnt = wp.vec2(w[0, 1], w[0, 2])
    wtn = wp.vec2(w[1, 0], w[2, 0])
    wtt = wp.mat22(w[1, 1], w[1, 2], w[2, 1], w[2, 2])
    a = w[0, 0] + mu * wp.dot(wnt, d)
    da = mu * wp.dot(wnt, dd)
    lam_n = -b[0] / a
    dlam_n = b[0] * da / (a * a)
    m = wtn + mu * (wtt * d)
    dm = mu * (wtt * dd)
    c_t = lam_n * m + wp.vec2(b[1], b[2])
    dc_t = dlam_n * m + lam_n * dm
    e = wp.dot(c_t, dd)
    de = wp.dot(dc_t, dd) - wp.dot(c_t, d)
    if a <= 0.0:
        lam_n = -1.0  # no sliding solution with c_n = 0 in this direction
    return wp.vec4(e, de, lam_n, wp.dot(c_t, d))


@wp.func
def _coulomb_newton(w: wp.mat33, b: wp.vec3, mu: float, lam_guess: float):
    """Exact Coulomb solution of the contact's 3x3 problem (see the module docstring)."""
    if b[0] >= 0.0:
        return wp.vec3(0.0)  # separating without an impulse
    if wp.determinant(w) > 0.0:
        stick = -(wp.inverse(w) * b)
        if stick[0] >= 0.0 and wp.length(wp.vec2(stick[1], stick[2])) <= mu * stick[0]:
            return stick
    # Sliding. Frictionless slip direction: the force opposes it.
    lam0 = -b[0] / w[0, 0]
    slip = wp.vec2(b[1] + w[1, 0] * lam0, b[2] + w[2, 0] * lam0)
    if wp.length(slip) == 0.0 or mu == 0.0:
        return _bisect(w, b, mu, 0, 0.0, lam_guess)
    theta0 = wp.atan2(-slip[1], -slip[0])
    lo = theta0 - 0.5 * wp.pi
    hi = theta0 + 0.5 * wp.pi
    r_lo = _slide_residual(w, b, mu, lo)
    r_hi = _slide_residual(w, b, mu, hi)
    if r_lo[0] > 0.0 or r_hi[0] < 0.0:
        return _bisect(w, b, mu, 0, 0.0, lam_guess)  # no bracket: a strongly anisotropic block
    theta = theta0
    for _ in range(_NEWTON_STEPS):
        r = _slide_residual(w, b, mu, theta)
        if r[0] < 0.0:
            lo = theta
        else:
            hi = theta
        step = float(0.0)
        if r[1] > 0.0:
            step = -r[0] / r[1]
        nxt = theta + step
        if r[1] <= 0.0 or nxt <= lo or nxt >= hi:
            nxt = 0.5 * (lo + hi)  # Newton left the bracket: bisect
        if wp.abs(nxt - theta) <= 1.0e-7:
            theta = nxt
            break
        theta = nxt
    r = _slide_residual(w, b, mu, theta)
    if r[2] < 0.0 or r[3] > 0.0:
        return _bisect(w, b, mu, 0, 0.0, lam_guess)  # the root is not a valid slide
    return wp.vec3(r[2], mu * r[2] * wp.cos(theta), mu * r[2] * wp.sin(theta))


@wp.func
def coupled_contact_impulse(mode: int, free_body: int, w: wp.mat33, c: wp.vec3, lam_old: wp.vec3, mu: float):
    """The contact's new ``(lambda_n, lambda_t1, lambda_t2)`` [N·s] under ``mode``.

    ``w`` is the contact's Delassus block [1/kg], ``c`` its current velocity relative to its targets
    (``J qd - target`` of the normal and the two tangent rows) [m/s], ``lam_old`` its current impulses.
    """
    b = c - w * lam_old
    if mode == COULOMB_NEWTON and free_body != 0:
        return _coulomb_newton(w, b, mu, lam_old[0])
    associative = int(0)
    bias = float(0.0)
    cone = mu
    if mode == BISECTION_DESAXCE and free_body != 0:
        associative = 1
        cone = wp.min(mu, DESAXCE_MU_MAX)
        bias = cone * wp.length(wp.vec2(c[1], c[2]))
    return _bisect(w, b, cone, associative, bias, lam_old[0])


def check_friction_mode_options(values: dict, *, anchor_beta_explicit: bool) -> None:
    """Raise for options a ``friction_mode`` other than ``"fixed_normal"`` cannot be combined with."""
    mode = values["friction_mode"]
    if mode == "fixed_normal":
        return
    if values["articulated_contact_response"] == "propagation" and values["solve_mode"] == "serial":
        raise NotImplementedError(
            f"friction_mode={mode!r} is not supported with articulated_contact_response='propagation' and "
            "solve_mode='serial'")
    beta = values["friction_anchor_beta"]
    if anchor_beta_explicit and beta is not None and beta > 0.0:
        raise ValueError(f"friction_mode={mode!r} uses point friction and rejects friction patches "
                         f"(friction_anchor_beta={beta!r}); pass 0 or omit it")
    if values["contact_regularization"] > 0.0:
        raise ValueError(f"friction_mode={mode!r} is incompatible with contact_regularization="
                         f"{values['contact_regularization']!r}")
