"""SolverFeatherstone's tile path (use_tile_gemm, fuse_cholesky) against its loop path."""

from __future__ import annotations

import numpy as np
import pytest

import steel.solvers
from benchmarks import scenes as bench_scenes
from steel.articulation import padded_blocks
from tests.fixtures import build_asset, random_joint_state

from .scenes import interleaved_chains_and_humanoids

DT, STEPS = 1.0 / 600.0, 200


def _trajectory(model, q, qd, steps=STEPS, **options):
    state, other = model.state(), model.state()
    state.joint_q.assign(q)
    state.joint_qd.assign(qd)
    solver = steel.solvers.SolverFeatherstone(model, angular_damping=0.0, **options)
    for _ in range(steps):
        solver.step(state, other, None, None, DT)
        state, other = other, state
    return solver, state.joint_q.numpy(), state.body_q.numpy()


@pytest.fixture(scope="module")
def interleaved():
    model = interleaved_chains_and_humanoids()
    q, qd = random_joint_state(model, np.random.default_rng(1), speed=1.0)
    return model, model.joint_q.numpy(), qd


def test_tile_mass_matrix_equals_crba_with_interleaved_sizes(interleaved):
    """Tile-GEMM H equals the core's CRBA H to float32 rounding (1e-6 of max |H|) when sizes interleave.

    Articulations [chain, humanoid, chain, humanoid] form two DOF-count groups (4 and 27), each laid out
    contiguously; the check maps every block back to its articulation.
    """
    model, q, qd = interleaved
    tile, _, _ = _trajectory(model, q, qd, steps=1, use_tile_gemm=True)
    loop, _, _ = _trajectory(model, q, qd, steps=1)
    assert [(g.n, g.count) for g in tile._tiles.groups] == [(4, 2), (27, 2)]
    expected = padded_blocks(loop.plan, loop.data.mass_matrix)
    start = tile._tiles.mass_start.numpy()
    got = tile._tiles.mass_matrix.numpy()
    for a, n in enumerate(tile.plan.dof_count_np):
        block = got[start[a] : start[a] + n * n].reshape(n, n)
        # float32 sums of up to 13 bodies' terms in another order: measured 5e-8 of the largest entry.
        np.testing.assert_allclose(block, expected[a, :n, :n], rtol=0.0, atol=1.0e-6 * np.abs(expected[a]).max())


@pytest.mark.parametrize("fuse", [True, False])
def test_tile_path_follows_loop_path_with_interleaved_sizes(interleaved, fuse):
    """Chains and humanoids tumbling together: tile and loop trajectories agree within 1e-5 over 200 steps.

    Measured 8e-7 rad / 1e-6 m: the rounding differences of H (above) carried through 200 steps.
    """
    model, q, qd = interleaved
    _, q_tile, body_tile = _trajectory(model, q, qd, use_tile_gemm=True, fuse_cholesky=fuse)
    _, q_loop, body_loop = _trajectory(model, q, qd)
    assert np.isfinite(q_tile).all()
    assert np.abs(q_tile - q_loop).max() < 1.0e-5 and np.abs(body_tile - body_loop).max() < 1.0e-5


def test_tile_path_follows_loop_path_on_chain():
    """The 10-link chain released horizontal: tile and loop paths agree within 1e-4 rad over 200 steps.

    The chain is chaotic: float32 rounding differences of H (~1e-7 relative) grow to a measured 1.5e-5 rad
    at the tip joints; 1e-4 is the bound the chain test against Newton's reference uses for the same reason.
    """
    scene = bench_scenes.build_chain(2, "cpu")
    q, qd = scene.model.joint_q.numpy(), scene.model.joint_qd.numpy()
    _, q_tile, body_tile = _trajectory(scene.model, q, qd, use_tile_gemm=True)
    _, q_loop, body_loop = _trajectory(scene.model, q, qd)
    assert np.abs(q_tile - q_loop).max() < 1.0e-4 and np.abs(body_tile - body_loop).max() < 1.0e-4


def test_tile_path_follows_loop_path_on_humanoid():
    """nv_humanoid in the air with its joint gains: tile and loop paths agree within 1e-5 over 200 steps.

    Measured 1.8e-7 rad / 4.8e-7 m (float32 rounding).
    """
    model = build_asset("nv_humanoid.xml", 2)
    _, qd = random_joint_state(model, np.random.default_rng(0), speed=1.0)
    q = model.joint_q.numpy()
    _, q_tile, body_tile = _trajectory(model, q, qd, use_tile_gemm=True)
    _, q_loop, body_loop = _trajectory(model, q, qd)
    assert np.abs(q_tile - q_loop).max() < 1.0e-5 and np.abs(body_tile - body_loop).max() < 1.0e-5


def test_tile_path_with_mimic_joints_follows_loop_path():
    """With a mimic pair the tile path builds H, the loop fold/factor runs on its buffers: same swing within 1e-6 rad.

    Measured at float32 rounding (H by GEMM vs CRBA) after 500 steps of a swinging two-hinge pair.
    """
    from .test_joints import _two_hinges  # noqa: PLC0415

    model = _two_hinges(mimic=True)
    q = np.array([0.6, 0.1 - 0.5 * 0.6], np.float32)
    solver, q_tile, _ = _trajectory(model, q, np.zeros(2, np.float32), steps=500, use_tile_gemm=True)
    _, q_loop, _ = _trajectory(model, q, np.zeros(2, np.float32), steps=500)
    assert not solver._tiles.solves and not solver._tiles.fuse  # mimics: the advance kernel factors and solves
    assert np.abs(q_tile - q_loop).max() < 1.0e-6 and abs(q_tile[0] - 0.6) > 0.1


def test_tile_mass_matrix_equals_newtons_eval_mass_matrix(interleaved):
    """Tile-GEMM H against Newton's public eval_mass_matrix, which shares no code with our spatial inertias.

    The loop-path comparison above would pass an error in the shared ``body_spatial_inertia``; this
    one does not. Newton accumulates about the world origin in float32: 2e-5 of the largest entry,
    as the core's own comparison with Newton (tests/articulation/test_core_vs_newton.py).
    """
    import newton

    from tests.fixtures import state_at

    model, q, qd = interleaved
    tile, _, _ = _trajectory(model, q, qd, steps=1, use_tile_gemm=True)
    expected = newton.eval_mass_matrix(model, state_at(model, q, qd)).numpy().astype(np.float64)
    start = tile._tiles.mass_start.numpy()
    got = tile._tiles.mass_matrix.numpy()
    for a, n in enumerate(tile.plan.dof_count_np):
        block = got[start[a] : start[a] + n * n].reshape(n, n)
        ref = expected[a, :n, :n]
        np.testing.assert_allclose(block, ref, rtol=0.0, atol=2.0e-5 * max(np.abs(ref).max(), 1.0))
