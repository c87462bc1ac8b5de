"""Elastic element forces and 3x3 Hessian blocks for the per-vertex VBD particle solve.

Owns the element laws of the particle solve: the membrane of triangles (StVK,
:func:`triangle_force_hessian`, or stable Neo-Hookean, :func:`triangle_snh_force_hessian`, which
is Newton's), dihedral-angle bending of interior edges, the stable Neo-Hookean solid of
tetrahedra, axial springs, and the dissipation potentials that damp them. It does not gather
elements around a vertex, add inertia, contacts or gravity, or solve the 3x3 system: the solver
does (Chen, Liu, Yang, Yuksel, "Vertex
Block Descent", ACM TOG 43(4), 2024, sec. 3: each vertex minimizes the implicit-Euler variational
energy with one Newton step ``dx = H^-1 f`` on its 3x3 block, Gauss-Seidel over a colouring).

Contract of every ``*_force_hessian`` function, for the vertex ``v_order`` of one element (its
position in the element's index tuple, 0-based):

* ``force`` [N] is minus the gradient, with respect to that vertex, of the element's elastic
  energy plus its dissipation potential ``D(x; p)`` (below); it is the exact gradient, so a
  vertex step along it lowers the total incremental potential;
* ``hessian`` [N/m] is the vertex's 3x3 diagonal block of the second derivative, symmetric
  positive semi-definite (to float32 rounding, ~1e-5 of its norm): the exact elastic block,
  projected by :func:`project_spd` (eigenvalues clamped at zero) where it can be indefinite, or
  a Gauss-Newton block where stated, plus the Gauss-Newton block of the dissipation potential.
  With the positive mass term ``m/dt^2 I`` added by the solver the system is positive definite.

Damping. ``x`` are the current iterate positions [m], ``p`` the positions at the start of the
step [m] (``state_in.particle_q``), so ``v = (x - p)/dt``. Every element is damped through the
rate of one of its rigid-motion invariant strain measures ``c`` (spring length, dihedral angle,
right Cauchy-Green tensor ``C = F^T F``), with dissipation potential

    D(x; p) = k_d * measure / (2 dt) * |c(x) - c(p)|^2          [J]

whose force ``-dD/dx`` is a Kelvin-Voigt stress ``k_d * (c(x) - c(p))/dt`` in that measure. Any
rigid translation or rotation taking ``p`` to ``x`` leaves ``c`` unchanged, so it is not damped
and ``D`` is a genuine potential in ``x``: the damped vertex step stays a
descent step. Its Hessian contribution is ``(k_d/dt) * measure * J^T J`` with ``J = dc/dx_v``
(Gauss-Newton: the term in ``c(x) - c(p)`` times the curvature of ``c`` is dropped; it vanishes
at ``x = p``). ``dt <= 0`` or ``k_d <= 0`` switch damping off. All damping coefficients are
absolute (they do not scale with the stiffness).

Comparison with ``newton.solvers.SolverVBD`` 1.8.0, measured by running it on one-element scenes
with one free unit-mass vertex (the others pinned) and solving the same implicit-Euler step with
these functions (pinned by ``test_matches_newton_solver_vbd_on_one_free_vertex``): springs,
bending, tetrahedra and :func:`triangle_snh_force_hessian` land on Newton's result to float32
rounding, damping included, both converged and after a single iteration (same Hessian blocks). :func:`triangle_force_hessian` (StVK) has Newton's stiffness at rest
but not beyond: Newton's membrane is the stable Neo-Hookean one (its force at Newton's converged
points is matched exactly by :func:`triangle_snh_energy`, and is ~10 % stiffer than StVK in
compression, ~10 % softer in tension at 5 % strain). Newton also drops an element with zero
stiffness altogether, its damping included (a triangle with ``tri_ke = tri_ka = 0``, an edge with
``ke = 0``); these functions damp it.

Newton model layouts (checked by printing a finalized ``ModelBuilder`` model, and pinned by
tests/solvers/vbd/test_elastic.py):

* triangles ``tri_indices[t] = (i0, i1, i2)``; ``tri_poses[t] = Dm^-1`` (2x2) where
  ``Dm^T Dm`` is the Gram matrix of the rest edges ``(X1-X0, X2-X0)``, i.e. ``Dm`` holds the rest
  edges in a 2D frame of the triangle; ``tri_areas[t]`` the rest area [m^2] ``= |det Dm| / 2``;
  ``tri_materials[t, 0:3] = (tri_ke, tri_ka, tri_kd)`` passed as ``(k_mu, k_lambda, k_damp)``;
* edges ``edge_indices[e] = (o0, o1, v0, v1)``: the two vertices opposite the edge, then the edge
  ``v0 -> v1``; ``o0`` or ``o1`` is -1 on a boundary edge (no bending there). ``edge_rest_angle``
  [rad] uses the sign of :func:`dihedral_angle`; ``edge_rest_length`` [m] is ``|X_v1 - X_v0|``;
  ``edge_bending_properties[e] = (ke, kd)``;
* tetrahedra ``tet_indices[t] = (i0, i1, i2, i3)`` with ``tet_poses[t] = Dm^-1``,
  ``Dm = [X1-X0, X2-X0, X3-X0]`` (positive determinant for a well-oriented tet);
  ``tet_materials[t] = (k_mu, k_lambda, k_damp)``; the model stores no rest volume:
  :func:`tet_rest_volume` gives ``1/(6 |det Dm^-1|)``;
* springs ``spring_indices[2s], [2s+1]``, ``spring_rest_length``, ``spring_stiffness`` (ke),
  ``spring_damping`` (kd).

Everything is float32 (Warp's ``float``).
"""

from __future__ import annotations

import warp as wp

# Below this squared length [m^2] or squared doubled area [m^4] an edge or triangle is treated as
# degenerate: its direction or normal is undefined, so the element contributes nothing rather
# than a NaN (float32 still resolves squares of 1e-10 here).
_DEGENERATE_EPS = 1.0e-20


@wp.func
def project_spd(h: wp.mat33):
    """The nearest symmetric positive semi-definite matrix to ``h`` in the Frobenius norm.

    Symmetrizes ``h`` and clamps the eigenvalues of the result at zero, ``Q diag(max(d, 0)) Q^T``,
    written as ``h - sum_{d_i < 0} d_i q_i q_i^T`` so that only the removed eigenpairs carry
    eigensolver error. Units are those of ``h`` (here [N/m]). Used on exact Hessian blocks that
    can be indefinite (compressed membranes), so that every VBD vertex step is a descent
    direction of the incremental potential.

    A positive definite block (Sylvester: positive leading minors) is returned as it is, without
    an eigensolve: the common case, and exact. Otherwise ``wp.eig3`` (fixed Jacobi sweeps) runs
    twice, the second time on the nearly diagonal ``Q^T h Q``: one pass reconstructs float32
    matrices to ~1e-3 relative for about 0.1 % of random SPD inputs (measured on 20,000), two
    to ~6e-6.
    """
    hs = 0.5 * (h + wp.transpose(h))
    minor2 = hs[0, 0] * hs[1, 1] - hs[0, 1] * hs[0, 1]
    if hs[0, 0] > 0.0 and minor2 > 0.0 and wp.determinant(hs) > 0.0:
        return hs
    q1, _d1 = wp.eig3(hs)
    a = wp.transpose(q1) * hs * q1
    q2, d = wp.eig3(0.5 * (a + wp.transpose(a)))
    q = q1 * q2
    out = hs
    for i in range(3):
        if d[i] < 0.0:
            qi = wp.vec3(q[0, i], q[1, i], q[2, i])
            out = out - d[i] * wp.outer(qi, qi)
    return out


# ------------------------------------------------------------------------------------------------
# Springs


@wp.func
def spring_energy(
    x0: wp.vec3,
    x1: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    rest_length: float,
    k_e: float,
    k_d: float,
    dt: float,
):
    """Spring energy plus dissipation potential [J]: ``1/2 ke (l - L)^2 + kd/(2 dt) (l - l_p)^2``.

    ``l = |x1 - x0|``, ``l_p = |p1 - p0|`` [m]; ``ke`` [N/m], ``kd`` [N·s/m]; see
    :func:`spring_force_hessian`.
    """
    l = wp.length(x1 - x0)
    energy = 0.5 * k_e * (l - rest_length) * (l - rest_length)
    if k_d > 0.0 and dt > 0.0:
        dl = l - wp.length(p1 - p0)
        energy += 0.5 * k_d / dt * dl * dl
    return energy


@wp.func
def spring_force_hessian(
    v_order: int,
    x0: wp.vec3,
    x1: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    rest_length: float,
    k_e: float,
    k_d: float,
    dt: float,
):
    """Force [N] and SPD Hessian block [N/m] of a spring on its vertex ``v_order`` (0 or 1).

    Energy ``1/2 ke (l - L)^2`` with ``l = |x1 - x0|`` [m], rest length ``L`` [m], ``ke`` [N/m].
    Damping is axial, on the rate of the length: ``D = kd/(2 dt) (l - l_p)^2``, ``l_p = |p1 - p0|``,
    ``kd`` [N·s/m], i.e. the force ``kd * (l - l_p)/dt`` along the spring, which is the measured
    response of Newton's VBD spring damping; rigid motion from ``p`` to ``x`` keeps ``l = l_p``.

    With ``n = (x1 - x0)/l`` the exact elastic block (equal for both vertices) is
    ``ke [n n^T + (1 - L/l)(I - n n^T)]``; its transverse eigenvalue is negative under compression
    and is clamped at zero, which is exactly :func:`project_spd` of it (its eigenvectors are known,
    so no eigensolve). Damping adds the Gauss-Newton block ``kd/dt n n^T``. A zero-length spring
    has no direction and returns zero.
    """
    d = x1 - x0
    l = wp.length(d)
    force = wp.vec3(0.0)
    hessian = wp.mat33(0.0)
    if l * l > _DEGENERATE_EPS:
        n = d / l
        # dl/dx0 = -n, dl/dx1 = +n
        s = 1.0
        if v_order == 0:
            s = -1.0
        tension = k_e * (l - rest_length)
        nn = wp.outer(n, n)
        axial = k_e
        if k_d > 0.0 and dt > 0.0:
            tension += k_d * (l - wp.length(p1 - p0)) / dt
            axial += k_d / dt
        force = -tension * s * n
        transverse = k_e * wp.max(1.0 - rest_length / l, 0.0)
        hessian = axial * nn + transverse * (wp.identity(n=3, dtype=float) - nn)
    return force, hessian


# ------------------------------------------------------------------------------------------------
# Green-strain damping, shared by membranes (F is 3x2) and tetrahedra (F is 3x3)


@wp.func
def _green_damping_gradient_2(
    f0: wp.vec3, f1: wp.vec3, q0: wp.vec3, q1: wp.vec3, w: wp.vec2, scale: float
):
    """Gradient of ``scale/2 ||C(F) - C(F_p)||^2`` for a 3x2 ``F = [f0 f1]``, ``dF = delta w^T``.

    ``C = F^T F = 2E + I``, so this is ``2 scale ||E - E_p||^2`` and its gradient is
    ``4 scale F (E - E_p) w``; ``scale = kd * measure / dt``.
    """
    de00 = 0.5 * (wp.dot(f0, f0) - wp.dot(q0, q0))
    de01 = 0.5 * (wp.dot(f0, f1) - wp.dot(q0, q1))
    de11 = 0.5 * (wp.dot(f1, f1) - wp.dot(q1, q1))
    dew0 = de00 * w[0] + de01 * w[1]
    dew1 = de01 * w[0] + de11 * w[1]
    return 4.0 * scale * (f0 * dew0 + f1 * dew1)


@wp.func
def _green_damping_hessian(fw: wp.vec3, ffT: wp.mat33, ww: float, scale: float):
    """Gauss-Newton block ``4 scale J^T J`` of ``2 scale ||E - E_p||^2`` for ``dF = delta w^T``.

    ``dE = 1/2 (w u^T + u w^T)`` with ``u = F^T delta``, so ``||dE||^2 = 1/2 (|w|^2 |u|^2 +
    (w.u)^2)`` and ``J^T J = 1/2 (|w|^2 F F^T + (F w)(F w)^T)``. ``fw = F w``, ``ffT = F F^T``.
    """
    return 2.0 * scale * (ww * ffT + wp.outer(fw, fw))


@wp.func
def _snh_density(k_mu: float, k_lambda: float, ic_excess: float, j: float):
    """Stable Neo-Hookean energy density [Pa] ``mu/2 ic_excess - mu (J - 1) + lam/2 (J - 1)^2``,
    ``lam = k_lambda + k_mu``; ``ic_excess = I_C - d`` for ``d`` material dimensions."""
    lam = k_lambda + k_mu
    return 0.5 * k_mu * ic_excess - k_mu * (j - 1.0) + 0.5 * lam * (j - 1.0) * (j - 1.0)


# ------------------------------------------------------------------------------------------------
# Triangles: StVK membrane


@wp.func
def _triangle_weights(v_order: int, Dm_inv: wp.mat22):
    """Row ``w`` with ``dF/dx_v = delta w^T``: ``F = [x1-x0, x2-x0] Dm^-1`` is linear in each vertex."""
    r0 = wp.vec2(Dm_inv[0, 0], Dm_inv[0, 1])
    r1 = wp.vec2(Dm_inv[1, 0], Dm_inv[1, 1])
    w = -(r0 + r1)
    if v_order == 1:
        w = r0
    elif v_order == 2:
        w = r1
    return w


@wp.func
def _triangle_deformation(x0: wp.vec3, x1: wp.vec3, x2: wp.vec3, Dm_inv: wp.mat22):
    """Columns ``(f0, f1)`` of the 3x2 deformation gradient ``F = [x1-x0, x2-x0] Dm^-1``."""
    e1 = x1 - x0
    e2 = x2 - x0
    f0 = e1 * Dm_inv[0, 0] + e2 * Dm_inv[1, 0]
    f1 = e1 * Dm_inv[0, 1] + e2 * Dm_inv[1, 1]
    return f0, f1


@wp.func
def _triangle_damping_energy(
    x0: wp.vec3, x1: wp.vec3, x2: wp.vec3, p0: wp.vec3, p1: wp.vec3, p2: wp.vec3, Dm_inv: wp.mat22, scale: float
):
    """``2 scale ||E(x) - E(p)||^2`` [J] with ``scale = k_damp area / dt``."""
    f0, f1 = _triangle_deformation(x0, x1, x2, Dm_inv)
    q0, q1 = _triangle_deformation(p0, p1, p2, Dm_inv)
    d00 = 0.5 * (wp.dot(f0, f0) - wp.dot(q0, q0))
    d01 = 0.5 * (wp.dot(f0, f1) - wp.dot(q0, q1))
    d11 = 0.5 * (wp.dot(f1, f1) - wp.dot(q1, q1))
    return 2.0 * scale * (d00 * d00 + 2.0 * d01 * d01 + d11 * d11)


@wp.func
def _triangle_damping(
    v_order: int,
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    p2: wp.vec3,
    Dm_inv: wp.mat22,
    scale: float,
):
    """Gradient [N] and Gauss-Newton block [N/m] of :func:`_triangle_damping_energy` on ``v_order``."""
    f0, f1 = _triangle_deformation(x0, x1, x2, Dm_inv)
    q0, q1 = _triangle_deformation(p0, p1, p2, Dm_inv)
    w = _triangle_weights(v_order, Dm_inv)
    fw = f0 * w[0] + f1 * w[1]
    ffT = wp.outer(f0, f0) + wp.outer(f1, f1)
    gradient = _green_damping_gradient_2(f0, f1, q0, q1, w, scale)
    return gradient, _green_damping_hessian(fw, ffT, wp.dot(w, w), scale)


@wp.func
def _triangle_add_damping(
    gradient: wp.vec3,
    hessian: wp.mat33,
    v_order: int,
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    p2: wp.vec3,
    Dm_inv: wp.mat22,
    area: float,
    k_damp: float,
    dt: float,
):
    """``(force, hessian)`` from an elastic gradient and exact block: the block projected to SPD,
    then the membrane damping of :func:`_triangle_damping` added to both."""
    g = gradient
    h = project_spd(hessian)
    if k_damp > 0.0 and dt > 0.0:
        gd, hd = _triangle_damping(v_order, x0, x1, x2, p0, p1, p2, Dm_inv, k_damp * area / dt)
        g += gd
        h += hd
    return -g, h


@wp.func
def triangle_energy(
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    p2: wp.vec3,
    Dm_inv: wp.mat22,
    area: float,
    k_mu: float,
    k_lambda: float,
    k_damp: float,
    dt: float,
):
    """StVK membrane energy plus dissipation potential of one triangle [J].

    ``area * (k_mu ||E||^2 + k_lambda/2 tr(E)^2) + 2 k_damp area/dt ||E(x) - E(p)||^2``; see
    :func:`triangle_force_hessian`.
    """
    f0, f1 = _triangle_deformation(x0, x1, x2, Dm_inv)
    e00 = 0.5 * (wp.dot(f0, f0) - 1.0)
    e01 = 0.5 * wp.dot(f0, f1)
    e11 = 0.5 * (wp.dot(f1, f1) - 1.0)
    tr = e00 + e11
    energy = area * (k_mu * (e00 * e00 + 2.0 * e01 * e01 + e11 * e11) + 0.5 * k_lambda * tr * tr)
    if k_damp > 0.0 and dt > 0.0:
        energy += _triangle_damping_energy(x0, x1, x2, p0, p1, p2, Dm_inv, k_damp * area / dt)
    return energy


@wp.func
def _triangle_elastic(
    v_order: int,
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    Dm_inv: wp.mat22,
    area: float,
    k_mu: float,
    k_lambda: float,
):
    """Gradient [N] and exact (possibly indefinite) Hessian block [N/m] of the StVK membrane.

    With ``dF = delta w^T`` (:func:`_triangle_weights`), second Piola-Kirchhoff stress
    ``S = 2 mu E + lambda tr(E) I`` and ``P = F S``: gradient ``area * F S w``; differentiating
    once more, ``dE = 1/2 (w u^T + u w^T)``, ``u = F^T delta``, gives the block
    ``area * [(w^T S w) I + (mu + lambda)(F w)(F w)^T + mu |w|^2 F F^T]``. The last two terms are
    PSD; the first is negative when the membrane is compressed along ``w``.
    """
    f0, f1 = _triangle_deformation(x0, x1, x2, Dm_inv)
    w = _triangle_weights(v_order, Dm_inv)
    e00 = 0.5 * (wp.dot(f0, f0) - 1.0)
    e01 = 0.5 * wp.dot(f0, f1)
    e11 = 0.5 * (wp.dot(f1, f1) - 1.0)
    tr = e00 + e11
    s00 = 2.0 * k_mu * e00 + k_lambda * tr
    s01 = 2.0 * k_mu * e01
    s11 = 2.0 * k_mu * e11 + k_lambda * tr
    sw0 = s00 * w[0] + s01 * w[1]
    sw1 = s01 * w[0] + s11 * w[1]
    gradient = area * (f0 * sw0 + f1 * sw1)
    fw = f0 * w[0] + f1 * w[1]
    ww = wp.dot(w, w)
    ffT = wp.outer(f0, f0) + wp.outer(f1, f1)
    wsw = w[0] * sw0 + w[1] * sw1
    hessian = area * (
        wsw * wp.identity(n=3, dtype=float) + (k_mu + k_lambda) * wp.outer(fw, fw) + k_mu * ww * ffT
    )
    return gradient, hessian


@wp.func
def triangle_force_hessian(
    v_order: int,
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    p2: wp.vec3,
    Dm_inv: wp.mat22,
    area: float,
    k_mu: float,
    k_lambda: float,
    k_damp: float,
    dt: float,
):
    """Force [N] and SPD Hessian block [N/m] of a StVK membrane triangle on vertex ``v_order``.

    ``F = [x1-x0, x2-x0] Dm^-1`` (3x2), Green strain ``E = 1/2 (F^T F - I)`` (2x2), energy
    ``area * (k_mu ||E||_F^2 + k_lambda/2 tr(E)^2)`` (Saint Venant-Kirchhoff; Newton's
    ``tri_materials`` ``(tri_ke, tri_ka, tri_kd)`` as ``(k_mu, k_lambda, k_damp)``, [N/m] for a
    membrane, ``tri_poses`` as ``Dm_inv``, ``tri_areas`` as ``area`` [m^2]). Same response as
    Newton's membrane at small strain, not beyond: :func:`triangle_snh_force_hessian` is
    Newton's law.

    Damping: Kelvin-Voigt on ``C = F^T F``, ``D = k_damp area/(2 dt) ||C(x) - C(p)||^2 =
    2 k_damp area/dt ||E(x) - E(p)||^2`` (``k_damp`` [N·s/m]); rigid motion of the triangle
    leaves ``C`` unchanged. Its force is exact, its block Gauss-Newton
    (:func:`_green_damping_hessian`).

    The elastic block (:func:`_triangle_elastic`) is indefinite under compression and goes
    through :func:`project_spd`; the damping block is PSD as it is. Out-of-plane stiffness of a
    flat rest triangle is zero: bending is the edges' job.
    """
    gradient, hessian = _triangle_elastic(v_order, x0, x1, x2, Dm_inv, area, k_mu, k_lambda)
    return _triangle_add_damping(gradient, hessian, v_order, x0, x1, x2, p0, p1, p2, Dm_inv, area, k_damp, dt)


# Below this area ratio the triangle is collapsed: J = |f0 x f1| has a cone point at 0 and no
# gradient, so the J terms are dropped there.
_COLLAPSED_J = 1.0e-6


@wp.func
def triangle_snh_energy(
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    p2: wp.vec3,
    Dm_inv: wp.mat22,
    area: float,
    k_mu: float,
    k_lambda: float,
    k_damp: float,
    dt: float,
):
    """Stable Neo-Hookean membrane energy plus dissipation potential of one triangle [J].

    ``area * (mu/2 (I_C - 2) - mu (J - 1) + (lambda + mu)/2 (J - 1)^2) + 2 k_damp area/dt
    ||E(x) - E(p)||^2``; see :func:`triangle_snh_force_hessian`.
    """
    f0, f1 = _triangle_deformation(x0, x1, x2, Dm_inv)
    ic_excess = wp.dot(f0, f0) + wp.dot(f1, f1) - 2.0
    energy = area * _snh_density(k_mu, k_lambda, ic_excess, wp.length(wp.cross(f0, f1)))
    if k_damp > 0.0 and dt > 0.0:
        energy += _triangle_damping_energy(x0, x1, x2, p0, p1, p2, Dm_inv, k_damp * area / dt)
    return energy


@wp.func
def _triangle_snh_gauss_newton(
    v_order: int,
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    Dm_inv: wp.mat22,
    area: float,
    k_mu: float,
    k_lambda: float,
):
    """Gradient [N] and Gauss-Newton Hessian block [N/m] of the SNH membrane on ``v_order``.

    ``J = |c|``, ``c = f0 x f1``. Moving one vertex by ``delta`` moves the columns by
    ``delta w_j``, so ``c`` changes by ``delta x a`` with ``a = w0 f1 - w1 f0`` and no second-order
    term (``delta x delta = 0``): ``c`` is affine in ``delta``, and ``g = dJ/dx_v = a x n``
    (``n = c/J``). With ``lam = k_lambda + k_mu`` the gradient is ``area (mu F w + (lam (J - 1) -
    mu) g)`` (exact) and the block ``area (mu |w|^2 I + lam g g^T)``: the exact block less the
    curvature of ``J`` (:func:`_triangle_snh_elastic`), PSD by construction for ``mu, lam >= 0``.
    """
    f0, f1 = _triangle_deformation(x0, x1, x2, Dm_inv)
    w = _triangle_weights(v_order, Dm_inv)
    gradient = area * k_mu * (f0 * w[0] + f1 * w[1])
    hessian = area * k_mu * wp.dot(w, w) * wp.identity(n=3, dtype=float)
    c = wp.cross(f0, f1)
    j = wp.length(c)
    if j > _COLLAPSED_J:
        g = wp.cross(f1 * w[0] - f0 * w[1], c / j)
        lam = k_lambda + k_mu
        gradient += area * (lam * (j - 1.0) - k_mu) * g
        hessian += area * lam * wp.outer(g, g)
    return gradient, hessian


@wp.func
def _triangle_snh_elastic(
    v_order: int,
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    Dm_inv: wp.mat22,
    area: float,
    k_mu: float,
    k_lambda: float,
):
    """Gradient [N] and exact (possibly indefinite) Hessian block [N/m] of the SNH membrane.

    The Gauss-Newton block of :func:`_triangle_snh_gauss_newton` plus the curvature of ``J``:
    ``area (lam (J - 1) - mu) d^2J/dx_v^2`` with ``d^2J/dx_v^2 = [a]x^T (I - n n^T) [a]x / J``. For
    ``delta`` in the triangle's plane ``delta x a`` is along ``n`` and the projector removes it,
    so this term acts only out of the plane, where it is ``(lam (J - 1) - mu) |a|^2 / J``:
    negative near rest, cancelling the ``mu |w|^2`` out-of-plane stiffness of a flat triangle at
    rest (``|a| = |w|``) exactly. Kept for the tests; the solver uses the Gauss-Newton block.
    """
    gradient, hessian = _triangle_snh_gauss_newton(v_order, x0, x1, x2, Dm_inv, area, k_mu, k_lambda)
    f0, f1 = _triangle_deformation(x0, x1, x2, Dm_inv)
    w = _triangle_weights(v_order, Dm_inv)
    c = wp.cross(f0, f1)
    j = wp.length(c)
    if j > _COLLAPSED_J:
        n = c / j
        ax = wp.skew(f1 * w[0] - f0 * w[1])
        d2j = wp.transpose(ax) * (wp.identity(n=3, dtype=float) - wp.outer(n, n)) * ax / j
        hessian += area * ((k_lambda + k_mu) * (j - 1.0) - k_mu) * d2j
    return gradient, hessian


@wp.func
def triangle_snh_force_hessian(
    v_order: int,
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    p2: wp.vec3,
    Dm_inv: wp.mat22,
    area: float,
    k_mu: float,
    k_lambda: float,
    k_damp: float,
    dt: float,
):
    """Force [N] and SPD Hessian block [N/m] of a stable Neo-Hookean membrane on ``v_order``.

    Same arguments, damping and projection as :func:`triangle_force_hessian`; the elastic energy
    is the membrane form of :func:`tet_force_hessian`'s stable Neo-Hookean density (Smith, de
    Goes, Kim 2018, without the log term): ``area (mu/2 (I_C - 2) - mu (J - 1) + lam/2 (J -
    1)^2)`` with ``I_C = ||F||^2``, ``J = |f0 x f1|`` the area ratio, ``lam = k_lambda + k_mu``, so
    that at rest it is linear elasticity with Lame parameters ``(k_mu, k_lambda)`` [N/m], as StVK
    is. This is the law of Newton's SolverVBD membrane: its vertex forces at Newton's converged
    one-vertex steps match this energy's gradient to float32 rounding, where StVK is off by
    5-15 % at 5 % strain. A collapsed triangle (``J`` below 1e-6) keeps only the ``I_C`` term.

    The block is Gauss-Newton in ``J`` (:func:`_triangle_snh_gauss_newton`): the curvature of the
    area ratio is dropped. It acts only out of the triangle's plane, where the exact block of a
    flat triangle at rest has zero stiffness (the ``I_C`` and ``J`` terms cancel) and goes
    negative under compression; the Gauss-Newton block keeps the ``I_C`` term's ``mu |w|^2``
    there, needs no eigensolve, and is the block Newton's SolverVBD uses (measured: a flat
    triangle's out-of-plane stiffness on one vertex is ``tri_ke * area * |w|^2``, whatever
    ``tri_ka`` and an in-plane stretch of +-5 %). The force is exact, so the minimizer is
    unchanged; only the path of a fixed number of iterations moves.
    """
    gradient, hessian = _triangle_snh_gauss_newton(v_order, x0, x1, x2, Dm_inv, area, k_mu, k_lambda)
    return _triangle_add_damping(gradient, hessian, v_order, x0, x1, x2, p0, p1, p2, Dm_inv, area, k_damp, dt)


# ------------------------------------------------------------------------------------------------
# Edges: dihedral-angle bending


@wp.func
def _wrap_angle(a: float):
    """``a`` mapped into [-pi, pi) [rad]."""
    return a - 2.0 * wp.pi * wp.floor((a + wp.pi) / (2.0 * wp.pi))


@wp.func
def dihedral_angle(x0: wp.vec3, x1: wp.vec3, x2: wp.vec3, x3: wp.vec3):
    """Signed dihedral angle [rad] in (-pi, pi] across the edge ``x2 -> x3``; 0 when flat.

    Vertices in Newton's ``edge_indices`` order ``(o0, o1, v0, v1)``. With ``e = x3 - x2``,
    ``n1 = (x2 - x0) x (x3 - x0)`` (the normal of triangle ``(o0, v0, v1)``) and
    ``n2 = (x3 - x1) x (x2 - x1)`` (of ``(o1, v1, v0)``), ``theta = atan2((n1 x n2).e/|e|, n1.n2)``:
    the angle that turns ``n1`` into ``n2`` about ``e``. This reproduces Newton's
    ``edge_rest_angle`` (sign included; checked on a folded two-triangle mesh). Moving ``o0``
    along ``n1`` decreases it. Degenerate hinges (atan2(0, 0)) read 0.
    """
    e = x3 - x2
    n1 = wp.cross(x2 - x0, x3 - x0)
    n2 = wp.cross(x3 - x1, x2 - x1)
    el = wp.length(e)
    s = 0.0
    if el > 0.0:
        s = wp.dot(wp.cross(n1, n2), e) / el
    return wp.atan2(s, wp.dot(n1, n2))


@wp.func
def _dihedral_angle_gradient(v_order: int, x0: wp.vec3, x1: wp.vec3, x2: wp.vec3, x3: wp.vec3):
    """``d theta / d x_v`` [rad/m] of :func:`dihedral_angle`; zero for a degenerate hinge.

    The classic closed form (Bridson, Marino, Fedkiw, "Simulation of clothing with folds and
    wrinkles", SCA 2003, sec. 4; Tamstorf and Grinspun, "Discrete bending forces and their
    Jacobians", 2013) with ``N_i = n_i / |n_i|^2`` (``1/|n_i|`` is ``1/(|e| h_i)``, ``h_i`` the
    height of the opposite vertex over the edge) and our sign:
    ``g_o0 = -|e| N1``, ``g_o1 = -|e| N2``,
    ``g_v0 = -((x0-x3).e^ N1 + (x1-x3).e^ N2)``, ``g_v1 = (x0-x2).e^ N1 + (x1-x2).e^ N2``
    (``e^ = e/|e|``); the four sum to zero (translation invariance).
    """
    e = x3 - x2
    n1 = wp.cross(x2 - x0, x3 - x0)
    n2 = wp.cross(x3 - x1, x2 - x1)
    ee = wp.dot(e, e)
    nn1 = wp.dot(n1, n1)
    nn2 = wp.dot(n2, n2)
    g = wp.vec3(0.0)
    if ee > _DEGENERATE_EPS and nn1 > _DEGENERATE_EPS and nn2 > _DEGENERATE_EPS:
        el = wp.sqrt(ee)
        eh = e / el
        m1 = n1 / nn1
        m2 = n2 / nn2
        if v_order == 0:
            g = -el * m1
        elif v_order == 1:
            g = -el * m2
        elif v_order == 2:
            g = -(wp.dot(x0 - x3, eh) * m1 + wp.dot(x1 - x3, eh) * m2)
        else:
            g = wp.dot(x0 - x2, eh) * m1 + wp.dot(x1 - x2, eh) * m2
    return g


@wp.func
def bending_energy(
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    x3: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    p2: wp.vec3,
    p3: wp.vec3,
    rest_angle: float,
    rest_length: float,
    k_e: float,
    k_d: float,
    dt: float,
):
    """Bending energy plus dissipation potential of one hinge [J].

    ``1/2 ke L (theta - theta0)^2 + kd L/(2 dt) (theta(x) - theta(p))^2``, angle differences
    wrapped into [-pi, pi); see :func:`bending_force_hessian`.
    """
    dtheta = _wrap_angle(dihedral_angle(x0, x1, x2, x3) - rest_angle)
    energy = 0.5 * k_e * rest_length * dtheta * dtheta
    if k_d > 0.0 and dt > 0.0:
        rate = _wrap_angle(dihedral_angle(x0, x1, x2, x3) - dihedral_angle(p0, p1, p2, p3))
        energy += 0.5 * k_d * rest_length / dt * rate * rate
    return energy


@wp.func
def bending_force_hessian(
    v_order: int,
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    x3: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    p2: wp.vec3,
    p3: wp.vec3,
    rest_angle: float,
    rest_length: float,
    k_e: float,
    k_d: float,
    dt: float,
):
    """Force [N] and SPD Hessian block [N/m] of dihedral-angle bending on vertex ``v_order``.

    Vertices in Newton's ``edge_indices`` order ``(o0, o1, v0, v1)``: ``x0``, ``x1`` opposite the
    edge, which runs ``x2 -> x3`` (so ``v_order`` 2 and 3 are the edge's vertices). Energy
    ``1/2 ke L (theta - theta0)^2`` with ``theta`` from :func:`dihedral_angle`, ``theta0 =
    edge_rest_angle`` [rad], ``L = edge_rest_length`` [m], ``ke`` [N/rad^2] (the first column of
    ``edge_bending_properties``). The rest length factor makes the energy an integral along the
    edge, the numerator of the discrete-shells weight ``|e| / h_e`` (Grinspun, Hirani, Desbrun,
    Schroeder, "Discrete shells", SCA 2003); the ``1/h_e`` mesh-size normalization is left to
    ``ke``, as Newton does (its measured hinge response is ``ke L / h^2``, ``h`` the height of the
    moved vertex over the edge).

    Damping on the rate of the angle: ``D = kd L/(2 dt) (theta(x) - theta(p))^2``, ``kd``
    [N·s/rad^2] (second column of ``edge_bending_properties``); rigid motion keeps ``theta``.

    Hessian: Gauss-Newton ``(ke L + kd L/dt) g g^T``, ``g = d theta/d x_v``, symmetric PSD by
    construction; the dropped terms ``(ke L (theta - theta0) + kd L (theta - theta_p)/dt) d^2
    theta/dx_v^2`` vanish at rest and at ``x = p``. Angle differences are wrapped into
    [-pi, pi) so a hinge folded through +-pi is pulled back the short way. Degenerate hinges (a
    zero edge or a zero-area wing) return zero.
    """
    theta = dihedral_angle(x0, x1, x2, x3)
    g = _dihedral_angle_gradient(v_order, x0, x1, x2, x3)
    coefficient = k_e * rest_length * _wrap_angle(theta - rest_angle)
    curvature = k_e * rest_length
    if k_d > 0.0 and dt > 0.0:
        theta_p = dihedral_angle(p0, p1, p2, p3)
        coefficient += k_d * rest_length * _wrap_angle(theta - theta_p) / dt
        curvature += k_d * rest_length / dt
    return -coefficient * g, curvature * wp.outer(g, g)


# ------------------------------------------------------------------------------------------------
# Tetrahedra: stable Neo-Hookean


@wp.func
def tet_rest_volume(Dm_inv: wp.mat33):
    """Rest volume [m^3] of a tetrahedron from Newton's ``tet_poses`` entry: ``1 / (6 |det Dm^-1|)``."""
    return 1.0 / (6.0 * wp.abs(wp.determinant(Dm_inv)))


@wp.func
def _tet_weights(v_order: int, Dm_inv: wp.mat33):
    """Row ``w`` with ``dF/dx_v = delta w^T`` for ``F = [x1-x0, x2-x0, x3-x0] Dm^-1``."""
    r0 = wp.vec3(Dm_inv[0, 0], Dm_inv[0, 1], Dm_inv[0, 2])
    r1 = wp.vec3(Dm_inv[1, 0], Dm_inv[1, 1], Dm_inv[1, 2])
    r2 = wp.vec3(Dm_inv[2, 0], Dm_inv[2, 1], Dm_inv[2, 2])
    w = -(r0 + r1 + r2)
    if v_order == 1:
        w = r0
    elif v_order == 2:
        w = r1
    elif v_order == 3:
        w = r2
    return w


@wp.func
def _tet_deformation(x0: wp.vec3, x1: wp.vec3, x2: wp.vec3, x3: wp.vec3, Dm_inv: wp.mat33):
    """Deformation gradient ``F = [x1-x0, x2-x0, x3-x0] Dm^-1``."""
    return wp.matrix_from_cols(x1 - x0, x2 - x0, x3 - x0) * Dm_inv


@wp.func
def tet_energy(
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    x3: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    p2: wp.vec3,
    p3: wp.vec3,
    Dm_inv: wp.mat33,
    rest_volume: float,
    k_mu: float,
    k_lambda: float,
    k_damp: float,
    dt: float,
):
    """Stable Neo-Hookean energy plus dissipation potential of one tetrahedron [J].

    ``V (mu/2 (I_C - 3) - mu (J - 1) + (lambda + mu)/2 (J - 1)^2) + 2 k_damp V/dt ||E(x) - E(p)||^2``;
    see :func:`tet_force_hessian`.
    """
    f = _tet_deformation(x0, x1, x2, x3, Dm_inv)
    j = wp.determinant(f)
    energy = rest_volume * _snh_density(k_mu, k_lambda, wp.ddot(f, f) - 3.0, j)
    if k_damp > 0.0 and dt > 0.0:
        fp = _tet_deformation(p0, p1, p2, p3, Dm_inv)
        de = 0.5 * (wp.transpose(f) * f - wp.transpose(fp) * fp)
        energy += 2.0 * k_damp * rest_volume / dt * wp.ddot(de, de)
    return energy


@wp.func
def tet_force_hessian(
    v_order: int,
    x0: wp.vec3,
    x1: wp.vec3,
    x2: wp.vec3,
    x3: wp.vec3,
    p0: wp.vec3,
    p1: wp.vec3,
    p2: wp.vec3,
    p3: wp.vec3,
    Dm_inv: wp.mat33,
    rest_volume: float,
    k_mu: float,
    k_lambda: float,
    k_damp: float,
    dt: float,
):
    """Force [N] and SPD Hessian block [N/m] of a stable Neo-Hookean tetrahedron on ``v_order``.

    ``F = [x1-x0, x2-x0, x3-x0] Dm^-1`` (Newton's ``tet_poses`` as ``Dm_inv``), ``I_C = ||F||^2``,
    ``J = det F``. Energy density (Smith, de Goes, Kim, "Stable Neo-Hookean flesh simulation",
    ACM TOG 37(2), 2018, their rest-stable form without the ``log(I_C + 1)`` term)
    ``mu/2 (I_C - 3) + lam/2 (J - alpha)^2`` with ``alpha = 1 + mu/lam`` and ``lam = k_lambda +
    k_mu``: the paper's choice of ``lam`` for this form that makes its linearization at rest
    linear elasticity with Lame parameters ``(k_mu, k_lambda)``, which is also how Newton's
    SolverVBD reads ``tet_materials`` (measured: rest stiffness of one free vertex to 1e-3).
    Written as :func:`_snh_density`, ``mu/2 (I_C - 3) - mu (J - 1) + lam/2 (J - 1)^2``: equal up
    to the constant ``mu^2/(2 lam)``, zero at rest, defined for ``k_lambda + k_mu = 0``. No
    ``log J``: finite and smooth through inversion (``J <= 0``) and collapse. ``(k_mu,
    k_lambda, k_damp)`` are Newton's ``tet_materials`` [Pa, Pa, Pa·s]; energy ``rest_volume *
    psi``, ``rest_volume`` [m^3] from :func:`tet_rest_volume` (Newton stores none).

    With ``dF = delta w^T`` and ``g = cof(F) w = dJ/dx_v``: gradient ``V (mu F w + (lam (J - 1) -
    mu) g)``; the exact block is ``V (mu |w|^2 I + lam g g^T)`` because ``J`` is linear in each
    column of ``F`` and a single vertex moves all columns along the same ``delta``
    (``d^2 J[delta w^T, delta w^T] = 0``). So the per-vertex block is PSD for ``mu, lam >= 0``
    without projection, even inverted.

    Damping: Kelvin-Voigt on ``C = F^T F``, ``D = k_damp V/(2 dt) ||C(x) - C(p)||^2``; exact
    force, Gauss-Newton block; rigid motion leaves ``C`` unchanged.
    """
    f = _tet_deformation(x0, x1, x2, x3, Dm_inv)
    w = _tet_weights(v_order, Dm_inv)
    c0 = wp.vec3(f[0, 0], f[1, 0], f[2, 0])
    c1 = wp.vec3(f[0, 1], f[1, 1], f[2, 1])
    c2 = wp.vec3(f[0, 2], f[1, 2], f[2, 2])
    g = w[0] * wp.cross(c1, c2) + w[1] * wp.cross(c2, c0) + w[2] * wp.cross(c0, c1)
    j = wp.determinant(f)
    lam = k_lambda + k_mu
    fw = f * w
    ww = wp.dot(w, w)
    gradient = rest_volume * (k_mu * fw + (lam * (j - 1.0) - k_mu) * g)
    hessian = rest_volume * (k_mu * ww * wp.identity(n=3, dtype=float) + lam * wp.outer(g, g))
    if k_damp > 0.0 and dt > 0.0:
        fp = _tet_deformation(p0, p1, p2, p3, Dm_inv)
        de = 0.5 * (wp.transpose(f) * f - wp.transpose(fp) * fp)
        scale = k_damp * rest_volume / dt
        gradient += 4.0 * scale * (f * (de * w))
        hessian += _green_damping_hessian(fw, f * wp.transpose(f), ww, scale)
    return -gradient, hessian
