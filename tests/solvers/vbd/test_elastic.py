"""VBD element laws (steel.solvers.vbd.particles.elastic) against float64 NumPy twins of their energies.

Every Warp function is evaluated in float32 at random non-degenerate configurations; the references
are central finite differences of independent float64 NumPy energies: ``h = 1e-6`` for gradients
and ``h = 1e-4`` for the 4-point second differences of Hessians (truncation ~h^2, roundoff
~1e-16/h^2: both far below float32). Tolerances are relative to the element's largest block:

* ``FORCE_RTOL = 1e-4``: positions ~1 m carry float32 rounding ~1e-7; strains of ~0.1 computed
  from them lose a further factor ~10-100 to cancellation (``F^T F - I``, ``C(x) - C(p)``);
* ``HESS_RTOL = 2e-4``: the same, with one more product of such terms.

The observed worst cases are printed with ``pytest -s`` (a few 1e-6 at the time of writing).
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from steel.solvers.vbd.particles import elastic

from .elastic_twins import (  # noqa: F401
    _eval_project,
    _f32,
    run_springs,
    run_triangles,
    run_bending,
    run_tets,
    np_spring_energy,
    _green_2,
    np_triangle_energy,
    np_dihedral,
    _wrap,
    np_bending_energy,
    np_tet_energy,
    fd_gradient,
    fd_hessian,
    np_project_spd,
    rel_err,
    min_eig,
    report,
    rigidly_moved,
    triangle_rest,
    tet_rest,
    deformed,
    hinge_configs,
    FORCE_RTOL,
    HESS_RTOL,
    DT,
    N_CONFIGS,
)


# ------------------------------------------------------------------------------------------------
# project_spd


def test_project_spd_clamps_eigenvalues_and_keeps_eigenvectors():
    """project_spd(h) equals Q max(D, 0) Q^T of the symmetric part, PSD ones are unchanged."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(64, 3, 3))
    h = a + np.swapaxes(a, 1, 2)
    h[0] = np.diag([-1.0, 2.0, 2.0])  # repeated eigenvalues: eigenvectors not unique
    h[1] = np.diag([3.0, 3.0, 3.0])
    h[2] = np.zeros((3, 3))
    h[3] = a[3] @ a[3].T  # already PSD
    out = wp.zeros(len(h), dtype=wp.mat33, device="cpu")
    wp.launch(_eval_project, dim=len(h), inputs=[wp.array(_f32(h), dtype=wp.mat33)], outputs=[out], device="cpu")
    got = out.numpy()
    ref = np_project_spd(h)
    err = np.max(np.abs(got - ref) / np.maximum(np.abs(h).max(axis=(1, 2)), 1.0)[:, None, None])
    report("project_spd max error", err)
    assert err < 1.0e-5
    # a clamped eigenvalue comes back as float32 rounding of the removed term, ~1e-7 |h|
    worst = min(min_eig(g) / max(np.abs(m).max(), 1.0) for g, m in zip(got, h))
    report("project_spd most negative eigenvalue / |h|", worst)
    assert worst > -1.0e-5
    assert np.allclose(got, np.swapaxes(got, 1, 2), atol=1.0e-6)


# ------------------------------------------------------------------------------------------------
# Springs


def spring_configs(rng, n, compressed_fraction=0.5):
    x = rng.uniform(-1.0, 1.0, size=(n, 2, 3))
    l = np.linalg.norm(x[:, 1] - x[:, 0], axis=-1)
    keep = l > 0.3
    x, l = x[keep], l[keep]
    m = len(l)
    compressed = rng.uniform(size=m) < compressed_fraction
    factor = np.where(compressed, rng.uniform(1.1, 2.0, m), rng.uniform(0.5, 0.9, m))  # rest length / length
    prm = np.stack([l * factor, rng.uniform(1.0, 10.0, len(l)), rng.uniform(0.01, 0.1, len(l))], axis=-1)
    p = x + rng.uniform(-0.05, 0.05, size=x.shape)
    return x, p, prm


def test_spring_force_is_minus_gradient_of_energy_plus_dissipation():
    """Spring force equals -d(E + D)/dx_v (float64 FD), stretched and compressed, with damping."""
    rng = np.random.default_rng(1)
    x, p, prm = spring_configs(rng, N_CONFIGS)
    force, _, energy = run_springs(x, p, prm)

    def e(y):
        return np_spring_energy(y, p, prm)

    ref = np.stack([-fd_gradient(e, x, v) for v in range(2)], axis=1)
    err = rel_err(force, ref).max()
    report("spring force FD error", err)
    assert err < FORCE_RTOL
    assert np.allclose(energy, e(x), rtol=1.0e-5, atol=1.0e-6)


def test_spring_hessian_is_projected_exact_block():
    """Undamped spring block equals the eigen-clamped FD Hessian (= exact when stretched); PSD."""
    rng = np.random.default_rng(2)
    x, p, prm = spring_configs(rng, N_CONFIGS)
    prm[:, 2] = 0.0
    _, hess, _ = run_springs(x, p, prm)

    def e(y):
        return np_spring_energy(y, p, prm)

    exact = np.stack([fd_hessian(e, x, v) for v in range(2)], axis=1)
    stretched = np.linalg.norm(x[:, 1] - x[:, 0], axis=-1) > prm[:, 0]
    err = rel_err(hess, np_project_spd(exact)).max()
    err_stretched = rel_err(hess[stretched], exact[stretched]).max()
    report("spring hessian FD error", max(err, err_stretched))
    assert err < HESS_RTOL and err_stretched < HESS_RTOL
    assert not stretched.all() and stretched.any()
    assert min(min_eig(h) for h in hess.reshape(-1, 3, 3)) > -1.0e-5


def test_spring_rest_and_rigid_motion_give_zero_force():
    """A spring at rest length does not push, and its damping ignores rigid translation + rotation."""
    rng = np.random.default_rng(3)
    x, _, prm = spring_configs(rng, N_CONFIGS)
    prm[:, 0] = np.linalg.norm(x[:, 1] - x[:, 0], axis=-1)
    force, _, _ = run_springs(x, rigidly_moved(rng, x), prm)
    assert np.abs(force).max() < 1.0e-5 * (prm[:, 1] + prm[:, 2] / DT).max()

    x2, _, prm2 = spring_configs(rng, N_CONFIGS)
    prm2[:, 1] = 0.0
    f_rigid, _, _ = run_springs(x2, rigidly_moved(rng, x2), prm2)
    f_moving, _, _ = run_springs(x2, x2 + rng.uniform(-0.05, 0.05, x2.shape), prm2)
    ratio = np.abs(f_rigid).max() / np.abs(f_moving).max()
    report("spring rigid-motion damping ratio", ratio)
    assert ratio < 1.0e-4


# ------------------------------------------------------------------------------------------------
# Triangles


TRIANGLE_LAWS = ["stvk", "snh"]


def triangle_configs(rng, n, amplitude=0.25):
    rest, dm_inv, area = triangle_rest(rng, n)
    x = deformed(rng, rest, amplitude)
    p = x + rng.uniform(-0.05, 0.05, size=x.shape)
    prm = np.stack([rng.uniform(1.0, 10.0, n), rng.uniform(0.5, 20.0, n), rng.uniform(0.01, 0.1, n)], axis=-1)
    return rest, x, p, dm_inv, area, prm


@pytest.mark.parametrize("law", TRIANGLE_LAWS)
def test_triangle_force_is_minus_gradient_of_energy_plus_dissipation(law):
    """Membrane force (StVK and stable Neo-Hookean) with strain-rate damping equals -d(E + D)/dx_v (float64 FD)."""
    rng = np.random.default_rng(4)
    _, x, p, dm_inv, area, prm = triangle_configs(rng, N_CONFIGS)
    force, _, _, energy = run_triangles(x, p, dm_inv, area, prm, law=law)

    def e(y):
        return np_triangle_energy(y, p, dm_inv, area, prm, law=law)

    ref = np.stack([-fd_gradient(e, x, v) for v in range(3)], axis=1)
    err = rel_err(force, ref).max()
    report(f"{law} triangle force FD error", err)
    assert err < FORCE_RTOL
    assert np.allclose(energy, e(x), rtol=1.0e-5, atol=1.0e-6)


def np_snh_gauss_newton_blocks(x, dm_inv, area, prm):
    """Per-vertex Gauss-Newton blocks of the SNH membrane: the FD Hessian of its ``I_C`` term plus
    ``area (lambda + mu) dJ/dx_v dJ/dx_v^T`` (the ``J`` terms with ``J`` linearized), (B, 3, 3, 3)."""
    mu, lam = prm[:, 0], prm[:, 1] + prm[:, 0]

    def ic_term(y):
        c = 2.0 * _green_2(y, dm_inv) + np.eye(2)
        return area * 0.5 * mu * (np.trace(c, axis1=1, axis2=2) - 2.0)

    def area_ratio(y):
        return np.sqrt(np.linalg.det(2.0 * _green_2(y, dm_inv) + np.eye(2)))

    blocks = []
    for v in range(3):
        g = fd_gradient(area_ratio, x, v)
        blocks.append(fd_hessian(ic_term, x, v) + (area * lam)[:, None, None] * np.einsum("bi,bj->bij", g, g))
    return np.stack(blocks, axis=1)


@pytest.mark.parametrize("law", TRIANGLE_LAWS)
def test_triangle_hessian_exact_block_and_projection(law):
    """The exact membrane block equals the FD Hessian; the returned block is its SPD projection
    (StVK) or the Gauss-Newton block in the area ratio (stable Neo-Hookean), PSD either way."""
    rng = np.random.default_rng(5)
    _, x, p, dm_inv, area, prm = triangle_configs(rng, N_CONFIGS, amplitude=0.35)
    prm[:, 2] = 0.0
    _, hess, exact, _ = run_triangles(x, p, dm_inv, area, prm, law=law)

    def e(y):
        return np_triangle_energy(y, p, dm_inv, area, prm, law=law)

    ref = np.stack([fd_hessian(e, x, v) for v in range(3)], axis=1)
    err_exact = rel_err(exact, ref).max()
    returned = np_project_spd(ref) if law == "stvk" else np_snh_gauss_newton_blocks(x, dm_inv, area, prm)
    err_returned = rel_err(hess, returned).max()
    report(f"{law} triangle exact hessian FD error", err_exact)
    report(f"{law} triangle returned hessian error", err_returned)
    assert err_exact < HESS_RTOL
    assert err_returned < HESS_RTOL
    # the sample must include compressed, indefinite blocks for the projection to be tested
    assert min(min_eig(h) for h in exact.reshape(-1, 3, 3)) < -1.0e-2
    scale = np.abs(hess).max()
    assert min(min_eig(h) for h in hess.reshape(-1, 3, 3)) > -1.0e-5 * scale


@pytest.mark.parametrize("law", TRIANGLE_LAWS)
def test_triangle_damping_hessian_is_exact_at_zero_velocity(law):
    """At x = p the Gauss-Newton damping block is the exact Hessian of the dissipation potential."""
    rng = np.random.default_rng(6)
    _, x, _, dm_inv, area, prm = triangle_configs(rng, N_CONFIGS)
    prm[:, 0:2] = 0.0
    force, hess, _, _ = run_triangles(x, x, dm_inv, area, prm, law=law)

    def e(y):
        return np_triangle_energy(y, x, dm_inv, area, prm, law=law)

    ref = np.stack([fd_hessian(e, x, v) for v in range(3)], axis=1)
    err = rel_err(hess, ref).max()
    report(f"{law} triangle damping hessian FD error", err)
    assert err < HESS_RTOL
    assert np.abs(force).max() == 0.0


@pytest.mark.parametrize("law", TRIANGLE_LAWS)
def test_triangle_rest_and_rigid_motion_give_zero_force(law):
    """A rigidly moved rest triangle has no elastic force; damping ignores rigid translation + rotation."""
    rng = np.random.default_rng(7)
    rest, x, _, dm_inv, area, prm = triangle_configs(rng, N_CONFIGS)
    moved = rigidly_moved(rng, rest)
    force, _, _, _ = run_triangles(moved, rigidly_moved(rng, moved), dm_inv, area, prm, law=law)
    scale = (prm[:, 0] + prm[:, 1] + prm[:, 2] / DT).max() * area.max()
    assert np.abs(force).max() < 1.0e-5 * scale

    prm[:, 0:2] = 0.0
    f_rigid, _, _, _ = run_triangles(x, rigidly_moved(rng, x), dm_inv, area, prm, law=law)
    f_moving, _, _, _ = run_triangles(x, x + rng.uniform(-0.05, 0.05, x.shape), dm_inv, area, prm, law=law)
    ratio = np.abs(f_rigid).max() / np.abs(f_moving).max()
    report(f"{law} triangle rigid-motion damping ratio", ratio)
    assert ratio < 1.0e-4


# ------------------------------------------------------------------------------------------------
# Bending


def bending_prm(rng, x, n):
    th = np_dihedral(x)
    return np.stack(
        [
            th + rng.uniform(-0.5, 0.5, n),  # rest angle [rad]
            rng.uniform(0.5, 1.5, n),  # rest length [m]
            rng.uniform(0.1, 2.0, n),  # ke
            rng.uniform(0.001, 0.02, n),  # kd
        ],
        axis=-1,
    )


def test_bending_angle_and_force_against_fd():
    """dihedral_angle matches its NumPy twin; bending force equals -d(E + D)/dx_v (float64 FD)."""
    rng = np.random.default_rng(8)
    x = hinge_configs(rng, N_CONFIGS)
    p = x + rng.uniform(-0.03, 0.03, size=x.shape)
    prm = bending_prm(rng, x, len(x))
    force, _, energy, angle = run_bending(x, p, prm)
    assert np.abs(angle - np_dihedral(x)).max() < 1.0e-5

    def e(y):
        return np_bending_energy(y, p, prm)

    ref = np.stack([-fd_gradient(e, x, v) for v in range(4)], axis=1)
    err = rel_err(force, ref).max()
    report("bending force FD error", err)
    assert err < FORCE_RTOL
    assert np.allclose(energy, e(x), rtol=1.0e-5, atol=1.0e-6)
    assert np.abs(force.sum(axis=1)).max() < 1.0e-5 * np.abs(force).max()  # no net force


def test_bending_hessian_is_gauss_newton_and_exact_at_rest():
    """The bending block is (ke L + kd L/dt) g g^T (g = FD of theta), the exact Hessian at rest and x = p."""
    rng = np.random.default_rng(9)
    x = hinge_configs(rng, N_CONFIGS)
    p = x + rng.uniform(-0.03, 0.03, size=x.shape)
    prm = bending_prm(rng, x, len(x))
    _, hess, _, _ = run_bending(x, p, prm)
    g = np.stack([fd_gradient(np_dihedral, x, v) for v in range(4)], axis=1)
    coef = prm[:, 1] * (prm[:, 2] + prm[:, 3] / DT)
    ref = coef[:, None, None, None] * np.einsum("bvi,bvj->bvij", g, g)
    err_gn = rel_err(hess, ref).max()

    prm[:, 0] = np_dihedral(x)
    _, hess_rest, _, _ = run_bending(x, x, prm)

    def e(y):
        return np_bending_energy(y, x, prm)

    exact = np.stack([fd_hessian(e, x, v) for v in range(4)], axis=1)
    err_rest = rel_err(hess_rest, exact).max()
    report("bending Gauss-Newton hessian error", err_gn)
    report("bending hessian at rest FD error", err_rest)
    assert err_gn < HESS_RTOL and err_rest < HESS_RTOL
    assert min(min_eig(h) for h in hess.reshape(-1, 3, 3)) > -1.0e-5 * np.abs(hess).max()


def test_bending_rest_and_rigid_motion_give_zero_force():
    """A hinge at its rest angle does not push, and its damping ignores rigid translation + rotation."""
    rng = np.random.default_rng(10)
    x = hinge_configs(rng, N_CONFIGS)
    prm = bending_prm(rng, x, len(x))
    prm[:, 0] = np_dihedral(x)
    force, _, _, _ = run_bending(x, rigidly_moved(rng, x), prm)
    f_moving, _, _, _ = run_bending(x, x + rng.uniform(-0.03, 0.03, x.shape), prm)
    ratio = np.abs(force).max() / np.abs(f_moving).max()
    report("bending rest + rigid-motion force ratio", ratio)
    assert ratio < 1.0e-4


def test_bending_wraps_folds_through_pi():
    """A hinge folded just past pi from a rest angle just below it is pulled back the short way."""
    # o0 above, o1 folded under: theta close to +-pi
    x = np.array([[[0.5, 1.0, 0.0], [0.5, 1.0, 0.05], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    theta = np_dihedral(x)[0]
    prm = np.array([[-np.sign(theta) * (np.pi - 0.02), 1.0, 1.0, 0.0]])
    force, _, energy, _ = run_bending(x, x, prm)
    short = abs(_wrap(theta - prm[0, 0]))
    assert short < 0.1
    assert np.isclose(energy[0], 0.5 * short**2, rtol=1.0e-3)
    ref = -fd_gradient(lambda y: np_bending_energy(y, x, prm), x, 0)
    assert np.linalg.norm(force[0, 0] - ref[0]) < 1.0e-3 * np.linalg.norm(ref[0])


# ------------------------------------------------------------------------------------------------
# Tetrahedra


def tet_configs(rng, n, amplitude=0.25):
    rest, dm_inv = tet_rest(rng, n)
    x = deformed(rng, rest, amplitude)
    p = x + rng.uniform(-0.05, 0.05, size=x.shape)
    prm = np.stack([rng.uniform(1.0, 10.0, n), rng.uniform(0.5, 20.0, n), rng.uniform(0.01, 0.1, n)], axis=-1)
    return rest, x, p, dm_inv, prm


def inverted(rest):
    """Each rest tet with vertex 3 reflected through the plane of the others (J < 0), and one collapsed."""
    x = rest.copy()
    n = np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0])
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    h = np.einsum("bi,bi->b", x[:, 3] - x[:, 0], n)
    x[:, 3] -= 2.0 * h[:, None] * n
    x[0, 3] = x[0, 3] + h[0] * n[0]  # exactly flat: J = 0
    return x


def test_tet_force_is_minus_gradient_of_energy_plus_dissipation():
    """Stable Neo-Hookean force with damping equals -d(E + D)/dx_v (float64 FD of the paper's form), inverted too."""
    rng = np.random.default_rng(11)
    _, x, p, dm_inv, prm = tet_configs(rng, N_CONFIGS)
    rest2, _, _, dm2, prm2 = tet_configs(rng, 16)
    x = np.concatenate([x, inverted(rest2)])
    p = np.concatenate([p, inverted(rest2) + rng.uniform(-0.05, 0.05, rest2.shape)])
    dm_inv = np.concatenate([dm_inv, dm2])
    prm = np.concatenate([prm, prm2])
    force, _, energy, volume = run_tets(x, p, dm_inv, prm)

    def e(y):
        return np_tet_energy(y, p, dm_inv, prm)

    ref = np.stack([-fd_gradient(e, x, v) for v in range(4)], axis=1)
    err = rel_err(force, ref).max()
    report("tet force FD error", err)
    assert err < FORCE_RTOL
    assert np.allclose(volume, 1.0 / (6.0 * np.abs(np.linalg.det(dm_inv))), rtol=1.0e-5)
    # our energy drops the paper's constant mu^2 / (2 lam) per volume, lam = lambda + mu
    shift = volume * prm[:, 0] ** 2 / (2.0 * (prm[:, 1] + prm[:, 0]))
    assert np.allclose(energy + shift, e(x), rtol=1.0e-5, atol=1.0e-5)


def test_tet_hessian_is_exact_and_psd_even_inverted():
    """The undamped tet block equals the FD Hessian and is PSD without projection, inverted or collapsed."""
    rng = np.random.default_rng(12)
    rest, x, p, dm_inv, prm = tet_configs(rng, N_CONFIGS, amplitude=0.35)
    x = np.concatenate([x, inverted(rest)])
    p = np.concatenate([p, p])
    dm_inv = np.concatenate([dm_inv, dm_inv])
    prm = np.concatenate([prm, prm])
    prm[:, 2] = 0.0
    _, hess, energy, _ = run_tets(x, p, dm_inv, prm)

    def e(y):
        return np_tet_energy(y, p, dm_inv, prm)

    ref = np.stack([fd_hessian(e, x, v) for v in range(4)], axis=1)
    err = rel_err(hess, ref).max()
    report("tet hessian FD error", err)
    assert err < HESS_RTOL
    assert np.isfinite(hess).all() and np.isfinite(energy).all()
    assert min(min_eig(h) for h in hess.reshape(-1, 3, 3)) > -1.0e-5 * np.abs(hess).max()


def test_tet_energy_stays_finite_under_inversion_and_resists_it():
    """Inverted and collapsed tets have finite energy above rest, finite forces and PSD blocks."""
    rng = np.random.default_rng(13)
    rest, _, _, dm_inv, prm = tet_configs(rng, N_CONFIGS)
    x = inverted(rest)
    force, hess, energy, _ = run_tets(x, x, dm_inv, prm)
    assert np.isfinite(force).all() and np.isfinite(hess).all() and np.isfinite(energy).all()
    assert (energy > 0.0).all()
    # the reflected vertex is pushed back towards its side of the base plane
    n = np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0])
    rest_side = np.sign(np.einsum("bi,bi->b", rest[:, 3] - rest[:, 0], n))
    assert (np.einsum("bi,bi->b", force[:, 3], n) * rest_side > 0.0).all()


def test_tet_damping_hessian_is_exact_at_zero_velocity():
    """At x = p the Gauss-Newton damping block is the exact Hessian of the dissipation potential."""
    rng = np.random.default_rng(14)
    _, x, _, dm_inv, prm = tet_configs(rng, N_CONFIGS)
    prm[:, 0:2] = 0.0
    force, hess, _, _ = run_tets(x, x, dm_inv, prm)
    prm[:, 1] = 1.0e-30  # the NumPy twin divides by lambda

    def e(y):
        return np_tet_energy(y, x, dm_inv, prm)

    ref = np.stack([fd_hessian(e, x, v) for v in range(4)], axis=1)
    err = rel_err(hess, ref).max()
    report("tet damping hessian FD error", err)
    assert err < HESS_RTOL
    assert np.abs(force).max() == 0.0


def test_tet_rest_and_rigid_motion_give_zero_force():
    """A rigidly moved rest tet has no elastic force; damping ignores rigid translation + rotation."""
    rng = np.random.default_rng(15)
    rest, x, _, dm_inv, prm = tet_configs(rng, N_CONFIGS)
    moved = rigidly_moved(rng, rest)
    force, _, _, volume = run_tets(moved, rigidly_moved(rng, moved), dm_inv, prm)
    scale = ((prm[:, 0] + prm[:, 1] + prm[:, 2] / DT) * volume).max()
    assert np.abs(force).max() < 1.0e-5 * scale

    prm[:, 0:2] = 0.0
    f_rigid, _, _, _ = run_tets(x, rigidly_moved(rng, x), dm_inv, prm)
    f_moving, _, _, _ = run_tets(x, x + rng.uniform(-0.05, 0.05, x.shape), dm_inv, prm)
    ratio = np.abs(f_rigid).max() / np.abs(f_moving).max()
    report("tet rigid-motion damping ratio", ratio)
    assert ratio < 1.0e-4


# ------------------------------------------------------------------------------------------------
# Newton's model layouts


def test_newton_cloth_layout_matches_our_conventions():
    """Newton's tri_poses are Dm^-1 of the rest edges, edge_indices are (o0, o1, v0, v1) and
    edge_rest_angle is our dihedral_angle; the model's rest shape is force-free."""
    newton = pytest.importorskip("newton")
    rng = np.random.default_rng(16)
    # a 3x3-vertex sheet with random heights, so the rest angles are not all zero
    xs, ys = np.meshgrid(np.arange(3) * 0.5, np.arange(3) * 0.4, indexing="ij")
    verts = np.stack([xs.ravel(), ys.ravel(), rng.uniform(-0.15, 0.15, 9)], axis=-1)
    idx = []
    for i in range(2):
        for j in range(2):
            a, b, c, d = 3 * i + j, 3 * (i + 1) + j, 3 * (i + 1) + j + 1, 3 * i + j + 1
            idx += [a, b, c, a, c, d]
    builder = newton.ModelBuilder()
    builder.add_cloth_mesh(
        pos=wp.vec3(0.0, 0.0, 0.0),
        rot=wp.quat_identity(),
        scale=1.0,
        vel=wp.vec3(0.0, 0.0, 0.0),
        vertices=[wp.vec3(*v) for v in verts],
        indices=idx,
        density=1.0,
        tri_ke=7.0,
        tri_ka=11.0,
        tri_kd=0.3,
        edge_ke=2.0,
        edge_kd=0.1,
    )
    model = builder.finalize(device="cpu")
    q = model.particle_q.numpy().astype(np.float64)

    tri = model.tri_indices.numpy()
    dm_inv = model.tri_poses.numpy().astype(np.float64)
    xt = q[tri]
    dm = np.linalg.inv(dm_inv)
    ds = np.stack([xt[:, 1] - xt[:, 0], xt[:, 2] - xt[:, 0]], axis=-1)
    gram = np.swapaxes(ds, 1, 2) @ ds
    assert np.allclose(np.swapaxes(dm, 1, 2) @ dm, gram, atol=1.0e-5)
    assert np.allclose(model.tri_areas.numpy(), 0.5 * np.abs(np.linalg.det(dm)), rtol=1.0e-5)
    mat = model.tri_materials.numpy()
    assert np.allclose(mat[:, 0:3], [7.0, 11.0, 0.3])
    force, _, _, _ = run_triangles(xt, xt, dm_inv, model.tri_areas.numpy(), mat[:, 0:3])
    assert np.abs(force).max() < 1.0e-5

    edges = model.edge_indices.numpy()
    inner = (edges[:, 0] >= 0) & (edges[:, 1] >= 0)
    assert inner.sum() == 8
    xe = q[edges[inner]]
    rest_angle = model.edge_rest_angle.numpy()[inner]
    assert np.abs(rest_angle).max() > 0.05
    rest_length = model.edge_rest_length.numpy()[inner]
    assert np.allclose(rest_length, np.linalg.norm(xe[:, 3] - xe[:, 2], axis=-1), rtol=1.0e-5)
    prm = np.concatenate([rest_angle[:, None], rest_length[:, None], model.edge_bending_properties.numpy()[inner]], -1)
    assert np.allclose(prm[:, 2:], [2.0, 0.1])
    force, _, _, angle = run_bending(xe, xe, prm)
    assert np.abs(angle - rest_angle).max() < 1.0e-5
    assert np.abs(force).max() < 1.0e-4
    # each inner edge's opposite vertices close triangles (o0, v0, v1) and (o1, v1, v0) of the mesh
    tris = {tuple(np.roll(t, -np.argmin(t))) for t in tri}
    for o0, o1, v0, v1 in edges[inner]:
        assert tuple(np.roll([o0, v0, v1], -np.argmin([o0, v0, v1]))) in tris
        assert tuple(np.roll([o1, v1, v0], -np.argmin([o1, v1, v0]))) in tris


def test_newton_tet_layout_matches_our_conventions():
    """Newton's tet_poses are Dm^-1 of [X1-X0, X2-X0, X3-X0] with positive volume; rest is force-free."""
    newton = pytest.importorskip("newton")
    builder = newton.ModelBuilder()
    builder.add_soft_grid(
        pos=wp.vec3(0.0, 0.0, 0.0),
        rot=wp.quat_identity(),
        vel=wp.vec3(0.0, 0.0, 0.0),
        dim_x=2,
        dim_y=1,
        dim_z=1,
        cell_x=0.5,
        cell_y=0.4,
        cell_z=0.3,
        density=10.0,
        k_mu=100.0,
        k_lambda=200.0,
        k_damp=0.7,
    )
    model = builder.finalize(device="cpu")
    q = model.particle_q.numpy().astype(np.float64)
    xt = q[model.tet_indices.numpy()]
    dm = np.stack([xt[:, 1] - xt[:, 0], xt[:, 2] - xt[:, 0], xt[:, 3] - xt[:, 0]], axis=-1)
    dm_inv = model.tet_poses.numpy().astype(np.float64)
    assert np.allclose(np.linalg.inv(dm), dm_inv, atol=1.0e-5)
    assert (np.linalg.det(dm) > 0.0).all()
    prm = model.tet_materials.numpy()[:, 0:3]
    assert np.allclose(prm, [100.0, 200.0, 0.7])
    force, _, energy, volume = run_tets(xt, xt, dm_inv, prm)
    assert np.allclose(volume, np.linalg.det(dm) / 6.0, rtol=1.0e-5)
    assert np.abs(force).max() < 1.0e-4
    assert np.abs(energy).max() < 1.0e-6


# ------------------------------------------------------------------------------------------------
# Against Newton's SolverVBD: one free vertex, the others pinned


def _newton_one_step(newton, rest, velocity, free, add_element, dt, cls=None):
    """Position of vertex ``free`` [m] after one SolverVBD step (Newton's, or ``cls``) from ``rest`` with
    ``velocity`` [m/s]."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    for i, x in enumerate(rest):
        builder.add_particle(wp.vec3(*x), wp.vec3(*(velocity if i == free else (0.0, 0.0, 0.0))), mass=float(i == free))
    add_element(builder)
    builder.color()
    model = builder.finalize(device="cpu")
    solver = (cls or newton.solvers.SolverVBD)(model, iterations=60)
    state_in, state_out = model.state(), model.state()
    solver.step(state_in, state_out, model.control(), None, dt)
    return state_out.particle_q.numpy()[free].astype(np.float64)


def _implicit_euler_vertex(run, rest, velocity, free, dt, iterations=40):
    """Minimizer of ``|x - y|^2/(2 dt^2) + E(x) + D(x; rest)`` over vertex ``free`` (unit mass) by
    Newton's method on our force and Hessian block, ``y = rest + dt v``."""
    x = rest.copy()
    y = rest[free] + dt * np.asarray(velocity)
    for _ in range(iterations):
        force, hess = run(x[None], rest[None])
        g = (x[free] - y) / dt**2 - force[0, free]
        x[free] -= np.linalg.solve(np.eye(3) / dt**2 + hess[0, free], g)
    return x[free]


# Newton's VBD iterate is float32: positions ~1 m resolve displacements of ~1e-2 m to ~1e-5 of themselves.
NEWTON_RTOL = 5.0e-5
# Our SolverVBD's step against the float64 twin: float32, measured 1.7e-6 to 6.1e-6 over the elements.
STEPPED_RTOL = 2.0e-5
# StVK and Newton's stable Neo-Hookean membrane differ at second order in the strain (~1e-3 here).
NEWTON_STVK_RTOL = 5.0e-4


@pytest.mark.parametrize("element", ["spring", "triangle_snh", "triangle_stvk", "bending", "tet"])
def test_matches_newton_solver_vbd_on_one_free_vertex(element):
    """One implicit step of a single element with one free vertex lands where newton.solvers.SolverVBD puts it:
    same energies, same damping law and scales (elasticity and damping each move the result by 10-50 %).
    StVK only at small strain (0.1 %): Newton's membrane is the stable Neo-Hookean one. Our SolverVBD's own
    step (which wires the model's element data into these laws) lands where the float64 twin does."""
    newton = pytest.importorskip("newton")
    dt = 0.02
    velocity = np.array([0.3, -0.7, 0.5]) * (0.1 if element == "triangle_stvk" else 1.0)
    if element == "spring":
        rest = np.array([[0.1, -0.2, 0.05], [0.9, 0.4, -0.3]])
        ke, kd, length = 900.0, 15.0, 1.1
        free = 1

        def add(b):
            b.add_spring(0, 1, ke, kd, 0)
            b.spring_rest_length[-1] = length

        def run(x, p):
            f, h, _ = run_springs(x, p, np.array([[length, ke, kd]]), dt)
            return f, h

    elif element.startswith("triangle"):
        rest = np.array([[0.0, 0.0, 0.0], [1.0, 0.1, -0.2], [0.3, 0.9, 0.2]])
        mu, lam, kd = 1500.0, 800.0, 12.0
        free = 2

        def add(b):
            b.add_triangle(0, 1, 2, tri_ke=mu, tri_ka=lam, tri_kd=kd)

        e1, e2 = rest[1] - rest[0], rest[2] - rest[0]
        nrm = np.cross(e1, e2)
        u = e1 / np.linalg.norm(e1)
        w = np.cross(nrm / np.linalg.norm(nrm), u)
        dm_inv = np.linalg.inv(np.array([[e1 @ u, e2 @ u], [e1 @ w, e2 @ w]]))[None]
        area = np.array([0.5 * np.linalg.norm(nrm)])

        def run(x, p):
            f, h, _, _ = run_triangles(x, p, dm_inv, area, np.array([[mu, lam, kd]]), dt, law=element[9:])
            return f, h

    elif element == "bending":
        rest = np.array([[0.4, 0.9, 0.1], [0.6, -0.8, 0.3], [0.0, 0.0, 0.0], [1.0, 0.1, 0.0]])
        ke, kd = 2000.0, 30.0
        free = 1
        theta0 = float(np_dihedral(rest[None])[0])
        length = float(np.linalg.norm(rest[3] - rest[2]))

        def add(b):
            b.add_triangle(2, 3, 0, tri_ke=0.0, tri_ka=0.0, tri_kd=0.0)
            b.add_triangle(3, 2, 1, tri_ke=0.0, tri_ka=0.0, tri_kd=0.0)
            b.add_edges([0], [1], [2], [3], rest=[theta0], edge_ke=[ke], edge_kd=[kd])

        def run(x, p):
            f, h, _, _ = run_bending(x, p, np.array([[theta0, length, ke, kd]]), dt)
            return f, h

    else:
        rest = np.array([[0.0, 0.0, 0.0], [1.0, 0.1, -0.1], [0.2, 0.9, 0.1], [0.1, 0.2, 1.1]])
        mu, lam, kd = 4000.0, 9000.0, 40.0
        free = 3

        def add(b):
            b.add_tetrahedron(0, 1, 2, 3, k_mu=mu, k_lambda=lam, k_damp=kd)

        dm_inv = np.linalg.inv(np.stack([rest[1] - rest[0], rest[2] - rest[0], rest[3] - rest[0]], axis=-1))[None]

        def run(x, p):
            f, h, _, _ = run_tets(x, p, dm_inv, np.array([[mu, lam, kd]]), dt)
            return f, h

    ours = _implicit_euler_vertex(run, rest, velocity, free, dt)
    theirs = _newton_one_step(newton, rest, velocity, free, add, dt)
    ballistic = rest[free] + dt * velocity
    moved = np.linalg.norm(theirs - rest[free])
    # the element must matter: far from the ballistic point, so scales are really compared
    assert np.linalg.norm(theirs - ballistic) > 0.1 * moved
    err = np.linalg.norm(ours - theirs) / moved
    report(f"{element} vs SolverVBD relative displacement error", err)
    assert err < (NEWTON_STVK_RTOL if element == "triangle_stvk" else NEWTON_RTOL)
    if element == "triangle_stvk":
        return  # our solver steps the stable Neo-Hookean membrane (as Newton's): triangle_snh covers it
    from steel.solvers import SolverVBD

    stepped = _newton_one_step(newton, rest, velocity, free, add, dt, cls=SolverVBD)
    err = np.linalg.norm(stepped - ours) / moved
    report(f"{element}: our SolverVBD's step vs the float64 twin, relative displacement error", err)
    assert err < STEPPED_RTOL
