"""The tile path of the VBD vertex step (``particle_enable_tile_solve``) against the general path, and
both against Newton's SolverVBD where the element laws are the reference's.

Both paths evaluate every element with the same function and add the terms in the same order
(see steel.solvers.vbd.particles.solve_tile), so on the CPU the trajectories are compared bitwise,
with 32 cooperating lanes (``wp.config.enable_cpu_blocks``, without which the solver runs the general
kernel on the CPU) and with 4 lanes, where most vertices take several rounds of the gather.

On CUDA the comparison allows ``CUDA_TOL``: nvcc contracts a multiply and an add into one FMA
(Warp compiles with ``--fmad=true``), and it can fuse the general kernel's ``f += fe`` with the
element function's last multiply, which the tile kernel's gather through a tile cannot; the
paths may then differ by float32 rounding. Since a bug in a shared element function would pass that
comparison, the spring, two-particle and tetrahedron scenes are also compared with Newton's SolverVBD
(``ref_tol``). The cloth on the sphere is not: its contacts and bending differ from the reference's
beyond rounding (7 cm after 30 steps), and test_solver_vbd.py compares cloth with it instead.
"""

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.app.particle_scenes import build_cloth_drape
from steel.solvers import SolverVBD
from steel.solvers.vbd.particles import solve_tile

from .test_self_contact import RADIUS, _folded_cloth

# [m] on CUDA only (see the module docstring). Measured on the CPU by adding each vertex's element terms
# in reverse order (a rounding-only change, as FMA contraction would be): 2e-13 m on the cloth on the
# sphere after 30 steps, 5e-7 m on the tet block after 20; the folded cloth, where self-contact
# amplifies it to 2e-5 m, runs on the CPU only.
CUDA_TOL = 1.0e-5

LANES = ["32 lanes", "4 lanes"]


@pytest.fixture(params=LANES)
def lanes(request, monkeypatch):
    """How many lanes a tile block runs (on the CPU, lanes need Warp's CPU blocks)."""
    monkeypatch.setattr(wp.config, "enable_cpu_blocks", True)
    if request.param == "4 lanes":
        monkeypatch.setattr(solve_tile, "TILE_BLOCK_DIM", 4)
    return request.param


def _run(model, tile: bool, steps: int, dt: float, contacts: bool = False, **options) -> np.ndarray:
    solver = SolverVBD(model, iterations=10, particle_enable_tile_solve=tile, **options)
    pipeline = newton.CollisionPipeline(model) if contacts else None
    buffer = pipeline.contacts() if pipeline is not None else None
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        if pipeline is not None:
            pipeline.collide(s0, buffer)
        solver.step(s0, s1, None, buffer, dt)
        s0, s1 = s1, s0
    return s0.particle_q.numpy()


def _reference(model, steps: int, dt: float) -> np.ndarray:
    """Newton's SolverVBD, 10 iterations, its general (non-tile) path, no contacts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reference's deprecation notices
        solver = newton.solvers.SolverVBD(model, iterations=10, particle_enable_tile_solve=False)
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
    return s0.particle_q.numpy()


def _assert_same(model, steps, dt, ref_tol=None, **kw):
    """Tile path == general path (bitwise on the CPU); with ``ref_tol`` [m] both within it of the reference."""
    general = _run(model, False, steps, dt, **kw)
    tiled = _run(model, True, steps, dt, **kw)
    assert np.isfinite(general).all()
    if model.device.is_cpu:
        np.testing.assert_array_equal(tiled, general)
    else:
        np.testing.assert_allclose(tiled, general, rtol=0.0, atol=CUDA_TOL)
    if ref_tol is not None:
        np.testing.assert_allclose(tiled, _reference(model, steps, dt), rtol=0.0, atol=ref_tol)
    return general


def _families(model):
    return SolverVBD(model)._tile_families


def test_cloth_with_bending_on_a_sphere(device, lanes):
    """A 6x6 cloth with bending lands on a sphere (shape contacts, friction): tile and general paths agree."""
    scene = build_cloth_drape(6, device, self_contact=False)
    q = scene.model.particle_q.numpy()
    q[:, 2] -= 0.49  # start 1 cm above the sphere's top
    scene.model.particle_q.assign(q)
    assert _families(scene.model) == (True, True, False, False)
    q = _assert_same(scene.model, 30, scene.dt, contacts=True)
    assert q[:, 2].min() < 0.8  # the cloth reached the sphere (top at 0.8 m), so contacts acted


def test_tet_only_block(device, lanes):
    """A pinned 3x2x2 block of tetrahedra; the kernel is specialized to tets alone. Newton's SolverVBD ends
    7e-7 m away (float32 summation order; tolerance 2e-6 m absolute)."""
    b = newton.ModelBuilder()
    b.add_soft_grid(pos=wp.vec3(0, 0, 1), rot=wp.quat_identity(), vel=wp.vec3(0, 0, 0), dim_x=3, dim_y=2, dim_z=2,
                    cell_x=0.1, cell_y=0.1, cell_z=0.1, density=1000.0, k_mu=2e4, k_lambda=4e4, k_damp=1.0,
                    fix_left=True)
    b.color()
    model = b.finalize(device=device)
    assert _families(model) == (False, False, True, False)  # add_soft_grid's surface triangles have no stiffness
    _assert_same(model, 20, 1.0 / 60.0, ref_tol=2e-6)


def _spring_chain(device, count):
    """``count`` particles 0.1 m apart along x joined by springs, the first pinned."""
    b = newton.ModelBuilder()
    for k in range(count):
        b.add_particle(wp.vec3(0.1 * k, 0.0, 1.0), wp.vec3(0.0, 0.0, 0.3 * k), mass=0.0 if k == 0 else 0.05)
    for k in range(count - 1):
        b.add_spring(k, k + 1, ke=200.0, kd=0.5, control=0.0)
    b.color()
    return b.finalize(device=device)


def test_spring_chain(device, lanes):
    """A chain of 8 particles and springs swinging from its pinned end. Newton's SolverVBD ends 5.8e-6 m away
    (float32 summation order over 30 swinging steps; tolerance 1.5e-5 m absolute)."""
    model = _spring_chain(device, 8)
    assert _families(model) == (False, False, False, True)
    _assert_same(model, 30, 1.0 / 120.0, ref_tol=1.5e-5)


def test_two_particles(device, lanes):
    """Two particles and one spring: one element per vertex, most lanes of each block idle. Newton's
    SolverVBD ends 4.2e-7 m away (tolerance 1.2e-6 m absolute)."""
    model = _spring_chain(device, 2)
    q = _assert_same(model, 20, 1.0 / 120.0, ref_tol=1.2e-6)
    assert q[1, 2] != 1.0  # the free particle moved


def test_folded_cloth_with_self_contact(device, lanes):
    """The folded cloth of test_self_contact: its top layer falls onto the bottom one with self-contact on."""
    if not str(device).startswith("cpu"):
        pytest.skip("the folded-cloth scene is built on the CPU")
    model, _ = _folded_cloth()
    _assert_same(model, 40, 1.0 / 240.0, particle_enable_self_contact=True, particle_self_contact_radius=RADIUS,
                 particle_self_contact_margin=2 * RADIUS)


def test_tile_option_selects_the_tile_kernel(device, monkeypatch):
    """True (the default) runs the tile kernel where it has lanes (CUDA, CPU blocks), False never does."""
    model = _spring_chain(device, 3)
    assert (SolverVBD(model)._tile_families is not None) == wp.get_device(device).is_cuda
    monkeypatch.setattr(wp.config, "enable_cpu_blocks", True)
    assert SolverVBD(model)._tile_families is not None
    assert SolverVBD(model, particle_enable_tile_solve=False)._tile_families is None
