"""The tree-sparse factorization H = L^T L solves the same systems as the dense Cholesky."""

import numpy as np
import pytest
import warp as wp

import newton

from steel.articulation import ArticulationCore, padded_blocks
from steel.articulation.factor import chain6_solve, tree_factor_mass_matrix, tree_solve_mass_matrix

from ..fixtures import ASSETS, build_asset, random_joint_state


@pytest.mark.parametrize("asset", ASSETS)
def test_tree_factor_solves_like_the_dense_cholesky(asset):
    """H^-1 b from the leaves-first factor equals the dense solve (1e-4 relative, float32 with cond ~1e3)."""
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
    xd, xt = x_dense.numpy().astype(np.float64), x_tree.numpy().astype(np.float64)
    assert np.abs(xt - xd).max() <= 1e-4 * np.abs(xd).max()
    # and the factor really is H: L^T L reproduces the mass matrix on its pattern
    L = padded_blocks(core.plan, core.data.mass_factor)[0].astype(np.float64)
    H = padded_blocks(core.plan, core.data.mass_matrix)[0].astype(np.float64)
    n = core.plan.dof_count_np[0]
    np.testing.assert_allclose(L[:n, :n].T @ L[:n, :n], H[:n, :n], atol=1e-5 * np.abs(H).max())


@wp.kernel
def _chain6_solve_kernel(mass_factor: wp.array[float], rhs: wp.array[float], scale: float, x: wp.array[float]):
    chain6_solve(0, mass_factor, rhs, 0, scale, x, 0)


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


@pytest.mark.parametrize("make_model", [_free_body_model, _six_hinge_chain_model])
def test_six_dof_chain_factor_and_solve(make_model):
    """A 6-DOF chain block (every free body) takes the local-storage factor: L^T L = H, upper triangle 0;
    chain6_solve (the predicted velocity's) gives tree_solve's bits, also in place (x aliasing b)."""
    model = make_model()
    core = ArticulationCore(model)
    assert core.plan.tree_factor_ok and int(core.plan.dof_count_np[0]) == 6
    rng = np.random.default_rng(5)
    state = model.state()
    q, qd = random_joint_state(model, rng)
    state.joint_q.assign(q)
    state.joint_qd.assign(qd)
    core.step_quantities(state)
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
    wp.launch(_chain6_solve_kernel, dim=1, inputs=[core.data.mass_factor, b, -2.0], outputs=[x6], device="cpu")
    assert np.array_equal(x6.numpy(), x.numpy())
    wp.launch(_chain6_solve_kernel, dim=1, inputs=[core.data.mass_factor, b, -2.0], outputs=[b], device="cpu")
    assert np.array_equal(b.numpy(), x.numpy())  # in place
