"""SolverVBD with several worlds: replicated cloths solve independently, and reset(world_mask) on a
particle model does what the seed revision documents (warns, leaves particles and history alone)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

WORLDS = 3
DT = 1.0 / 60.0  # [s]


def _cloth_builder():
    builder = newton.ModelBuilder()
    builder.add_cloth_grid(pos=wp.vec3(0.0, 0.0, 1.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0),
                           dim_x=4, dim_y=4, cell_x=0.1, cell_y=0.1, mass=0.1, fix_left=True,
                           tri_ke=1.0e3, tri_ka=1.0e3, tri_kd=1.0e-2)
    return builder


def _models():
    single = _cloth_builder()
    single.color()
    multi = newton.ModelBuilder()
    multi.replicate(_cloth_builder(), WORLDS)
    multi.color()
    return single.finalize(device="cpu"), multi.finalize(device="cpu")


def _run(model, steps=20, kick=None, reset_mask=None):
    """Positions after ``steps`` steps [m]; ``kick`` = (particles, velocity [m/s]) set at the start."""
    solver = SolverVBD(model, iterations=10)
    s0, s1 = model.state(), model.state()
    if kick is not None:
        qd = s0.particle_qd.numpy()
        qd[kick[0]] = kick[1]
        s0.particle_qd.assign(qd)
    for k in range(steps):
        if reset_mask is not None and k == steps // 2:
            with pytest.warns(newton.NewtonWarning, match="particle"):
                solver.reset(s0, reset_mask)
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    return s0.particle_q.numpy()


def test_replicated_cloths_equal_the_single_world_run_and_do_not_interact():
    """Three replicated cloths each end bitwise where the one-world cloth ends (same colours per world,
    and a colour's pass is per-vertex independent); kicking world 1 changes world 1 only."""
    single, multi = _models()
    n = single.particle_count
    assert multi.world_count == WORLDS and np.array_equal(multi.particle_world.numpy(), np.repeat(np.arange(WORLDS), n))
    alone = _run(single)
    together = _run(multi)
    for w in range(WORLDS):
        assert np.array_equal(together[w * n:(w + 1) * n], alone)
    free = np.flatnonzero(multi.particle_inv_mass.numpy()[n:2 * n] > 0) + n
    kicked = _run(multi, kick=(free, (0.0, 0.5, 1.0)))
    assert np.array_equal(kicked[:n], together[:n])
    assert np.array_equal(kicked[2 * n:], together[2 * n:])
    assert np.abs(kicked[n:2 * n] - together[n:2 * n]).max() > 1.0e-2


@pytest.mark.parametrize("length", [WORLDS, WORLDS + 1])
def test_reset_with_world_mask_leaves_particles_and_history(length):
    """reset(state, world_mask) with world_count or world_count + 1 entries warns that particle flags are
    not supported and changes nothing: the run continues bitwise as if it had not been called."""
    _, multi = _models()
    mask = wp.array([True, False, True, False][:length], dtype=wp.bool, device="cpu")
    assert np.array_equal(_run(multi, reset_mask=mask), _run(multi))


def test_reset_refuses_a_mask_of_the_wrong_length():
    """A mask that is neither world_count nor world_count + 1 long raises ValueError naming both."""
    _, multi = _models()
    solver = SolverVBD(multi)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="world_count"):
            solver.reset(multi.state(), wp.array([True, False], dtype=wp.bool, device="cpu"))
