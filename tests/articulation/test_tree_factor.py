"""The tree-sparse factorization H = L^T L solves the same systems as the dense Cholesky."""

import numpy as np
import pytest
import warp as wp

import newton

from steel.articulation import ArticulationCore, padded_blocks
from steel.articulation.factor import MIN_PIVOT, tree_factor_mass_matrix, tree_solve_mass_matrix, tree_solve_native

from ..fixtures import ASSETS, build_asset, random_joint_state


@pytest.mark.parametrize("asset", ASSETS)
def test_tree_factor_solves_like_the_dense_cholesky(asset):
    """H^-1 b from the leaves-first factor equals the dense solve (1e-4 relative, float32 with cond ~1e3); the
    native solve gives tree_solve's bits."""
    model = build_asset(asset)
    core = ArticulationCore(model)
    assert core.plan.tree_factor_ok
    rng = np.random.default_rng(3)
    state = model.state()
    q, qd = random_joint_state(model, rng)
    state.joint_q.assign(q)
    state.joint_qd.assign(qd)
    core.step_quantities(state)  # dense factor
    b = wp.array(rng.normal(size=model.joint_dof_count).astype(np.float32))
    x_dense = wp.zeros_like(b)
    core.solve(b, x_dense)
    tree_factor_mass_matrix(core.plan, core.data)
    x_tree = wp.zeros_like(b)
    tree_solve_mass_matrix(core.plan, core.data, b, x_tree)
    x_native = wp.zeros_like(b)
    _native_solve(core, b, 1.0, x_native)
    assert x_native.numpy().tobytes() == x_tree.numpy().tobytes()  # the free dynamics' solve: tree_solve's bits
    xd, xt = x_dense.numpy().astype(np.float64), x_tree.numpy().astype(np.float64)
    assert np.abs(xt - xd).max() <= 1e-4 * np.abs(xd).max()
    # and the factor really is H: L^T L reproduces the mass matrix on its pattern
    L = padded_blocks(core.plan, core.data.mass_factor)[0].astype(np.float64)
    H = padded_blocks(core.plan, core.data.mass_matrix)[0].astype(np.float64)
    n = core.plan.dof_count_np[0]
    np.testing.assert_allclose(L[:n, :n].T @ L[:n, :n], H[:n, :n], atol=1e-5 * np.abs(H).max())


@wp.kernel
def _native_solve_kernel(dof_start: wp.array[int], dof_count: wp.array[int], mass_start: wp.array[int],
                         dof_parent: wp.array[int], mass_factor: wp.array[float], rhs: wp.array[float], scale: float,
                         x: wp.array[float]):
    art = wp.tid()
    d0 = dof_start[art]
    tree_solve_native(dof_count[art], mass_start[art], d0, dof_parent, mass_factor, rhs, d0, scale, x)


def _native_solve(core, rhs, scale, x):
    plan = core.plan
    wp.launch(_native_solve_kernel, dim=plan.articulation_count,
              inputs=[plan.dof_start, plan.dof_count_per_articulation, plan.mass_start, plan.dof_parent,
                      core.data.mass_factor, rhs, scale], outputs=[x], device="cpu")


def _free_body_model():
    builder = newton.ModelBuilder()
    builder.add_body(xform=wp.transform((0.1, 0.2, 0.3), wp.quat_rpy(0.3, -0.5, 0.9)), mass=2.0,
                     inertia=wp.mat33(0.3, 0.02, 0.01, 0.02, 0.25, 0.03, 0.01, 0.03, 0.2))
    return builder.finalize(device="cpu")


def _six_hinge_chain_model():
    builder = newton.ModelBuilder()
    parent, joints = -1, []
    for k in range(6):
        link = builder.add_link(mass=1.0 + 0.1 * k, inertia=wp.mat33(0.1, 0.0, 0.0, 0.0, 0.12, 0.0, 0.0, 0.0, 0.08))
        axis = (1.0, 0.0, 0.0) if k % 2 else (0.0, 0.0, 1.0)
        joints.append(builder.add_joint_revolute(parent, link, axis=axis,
                                                 parent_xform=wp.transform((0.0, 0.0, 0.3 if k else 0.0),
                                                                           wp.quat_identity())))
        parent = link
    builder.add_articulation(joints)
    return builder.finalize(device="cpu")


def _core_at_random_state(model, seed):
    """An articulation core with H and the dense factor of ``model`` at a random joint state, and the generator."""
    core = ArticulationCore(model)
    rng = np.random.default_rng(seed)
    state = model.state()
    q, qd = random_joint_state(model, rng)
    state.joint_q.assign(q)
    state.joint_qd.assign(qd)
    core.step_quantities(state)
    return core, rng


@pytest.mark.parametrize("make_model", [_free_body_model, _six_hinge_chain_model])
def test_six_dof_chain_factor_and_solve(make_model):
    """A 6-DOF chain block (every free body): L^T L = H, upper triangle 0;
    tree_solve_native (the predicted velocity's) gives tree_solve's bits, also in place (x aliasing b)."""
    core, rng = _core_at_random_state(make_model(), 5)
    assert core.plan.tree_factor_ok and int(core.plan.dof_count_np[0]) == 6
    tree_factor_mass_matrix(core.plan, core.data)
    L = padded_blocks(core.plan, core.data.mass_factor)[0].astype(np.float64)[:6, :6]
    H = padded_blocks(core.plan, core.data.mass_matrix)[0].astype(np.float64)[:6, :6]
    assert np.all(np.triu(L, 1) == 0.0)
    np.testing.assert_allclose(L.T @ L, H, atol=1e-5 * np.abs(H).max())
    b_np = rng.normal(size=6).astype(np.float32)
    b = wp.array(b_np)
    x = wp.zeros_like(b)
    tree_solve_mass_matrix(core.plan, core.data, b, x, scale=-2.0)
    expected = np.linalg.solve(H, -2.0 * b_np.astype(np.float64))
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    x6 = wp.zeros_like(b)
    _native_solve(core, b, -2.0, x6)
    assert x6.numpy().tobytes() == x.numpy().tobytes()
    _native_solve(core, b, -2.0, b)
    assert b.numpy().tobytes() == x.numpy().tobytes()  # in place


@wp.kernel
def _tree_factor_in_warp(dof_start: wp.array[int], dof_count: wp.array[int], mass_start: wp.array[int],
                         dof_parent: wp.array[int], mass_matrix: wp.array[float], mass_factor_out: wp.array[float]):
    # The factor's loops as Warp code (as factor.py had them before the native version): the reference bits.
    art = wp.tid()
    n = dof_count[art]
    base = mass_start[art]
    first_dof = dof_start[art]
    for i in range(n * n):
        mass_factor_out[base + i] = 0.0
    for i in range(n):
        mass_factor_out[base + i * n + i] = mass_matrix[base + i * n + i]
        j = dof_parent[first_dof + i]
        while j >= 0:
            jl = j - first_dof
            mass_factor_out[base + i * n + jl] = mass_matrix[base + i * n + jl]
            j = dof_parent[j]
    for r in range(n):
        k = n - 1 - r
        lkk = wp.sqrt(wp.max(mass_factor_out[base + k * n + k], MIN_PIVOT))
        mass_factor_out[base + k * n + k] = lkk
        i = dof_parent[first_dof + k]
        while i >= 0:
            il = i - first_dof
            mass_factor_out[base + k * n + il] = mass_factor_out[base + k * n + il] / lkk
            i = dof_parent[i]
        i = dof_parent[first_dof + k]
        while i >= 0:
            il = i - first_dof
            lki = mass_factor_out[base + k * n + il]
            j = i
            while j >= 0:
                jl = j - first_dof
                mass_factor_out[base + il * n + jl] = mass_factor_out[base + il * n + jl] - lki * mass_factor_out[
                    base + k * n + jl]
                j = dof_parent[j]
            i = dof_parent[i]


@pytest.mark.parametrize("make_model", [lambda: build_asset(ASSETS[0]), _six_hinge_chain_model, _free_body_model])
def test_native_tree_factor_is_bitwise_the_warp_loops(make_model):
    """The native C++ factor does Warp's float operations in Warp's order: the factor's bits equal the Warp
    loops' (a branched tree, a hinge chain, a free body), including a clamped pivot."""
    core, _ = _core_at_random_state(make_model(), 11)
    H = core.data.mass_matrix.numpy()
    H[int(core.plan.mass_start_np[0])] = -1.0  # a pivot below MIN_PIVOT
    core.data.mass_matrix.assign(H)
    tree_factor_mass_matrix(core.plan, core.data)
    reference = wp.zeros_like(core.data.mass_factor)
    wp.launch(_tree_factor_in_warp, dim=core.plan.articulation_count,
              inputs=[core.plan.dof_start, core.plan.dof_count_per_articulation, core.plan.mass_start,
                      core.plan.dof_parent, core.data.mass_matrix], outputs=[reference], device="cpu")
    assert np.isfinite(reference.numpy()).all()
    assert core.data.mass_factor.numpy().tobytes() == reference.numpy().tobytes()
