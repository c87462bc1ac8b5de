"""The tree-sparse factorization H = L^T L solves the same systems as the dense Cholesky."""

import numpy as np
import pytest
import warp as wp

from steel.articulation import ArticulationCore, padded_blocks
from steel.articulation.factor import tree_factor_mass_matrix, tree_solve_mass_matrix

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
