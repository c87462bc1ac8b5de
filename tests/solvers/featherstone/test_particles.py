"""SolverFeatherstone particles, cloth and soft contacts (Newton's semi-implicit routines) vs SolverSemiImplicit."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
import steel.solvers

from .scenes import G

# Soft-contact gains every scene here uses: explicitly stable at the step sizes below for 0.02-0.1 kg
# particles, damping ratio ~0.5 for the 20 g cloth particles (Newton's defaults, kf = 1000 N·s/m on a 20 g
# particle, need dt < 4e-5 s).
SOFT = dict(ke=1.0e3, kd=5.0, kf=1.0)


def _cloth(ground: bool) -> newton.Model:
    """A 6 x 6 cloth of 0.1 m cells at 1 m (pinned on its left edge) or at 0.3 m over a ground plane (free)."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    b.add_cloth_grid(
        pos=wp.vec3(0.0, 0.0, 0.3 if ground else 1.0),
        rot=wp.quat_identity(),
        vel=wp.vec3(0.0),
        dim_x=6,
        dim_y=6,
        cell_x=0.1,
        cell_y=0.1,
        mass=0.02,
        fix_left=not ground,
        tri_ke=1.0e3,
        tri_ka=1.0e3,
        tri_kd=0.1,
        edge_ke=10.0,
        add_springs=True,
        spring_ke=100.0,
        spring_kd=0.1,
        particle_radius=0.02,
    )
    if ground:
        b.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(mu=0.5, **SOFT))
    model = b.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_kf = SOFT["ke"], SOFT["kd"], SOFT["kf"]
    return model


def _particle_on_box(particle: bool = True) -> newton.Model:
    """A 0.2 m, 8 kg free box on the ground (box contacts ke = 1e4 N/m), optionally a 0.1 kg particle on it."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(ke=1.0e4, kd=100.0, kf=1.0, mu=0.5)
    body = b.add_body(xform=wp.transform((0.0, 0.0, 0.1), wp.quat_identity()))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    if particle:
        b.add_particle(pos=(0.0, 0.0, 0.25), vel=(0.0, 0.0, 0.0), mass=0.1, radius=0.02)
    b.add_ground_plane(cfg=cfg)
    model = b.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_kf = SOFT["ke"], SOFT["kd"], SOFT["kf"]
    return model


def _run(cls, model: newton.Model, steps: int, dt: float, contacts: bool) -> newton.State:
    """Newton's usual loop: clear forces, collide, step, swap."""
    solver = cls(model)
    pipeline = newton.CollisionPipeline(model) if contacts else None
    buffer = pipeline.contacts() if contacts else None
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        s0.clear_forces()
        if pipeline is not None:
            pipeline.collide(s0, buffer)
        solver.step(s0, s1, None, buffer, dt)
        s0, s1 = s1, s0
    return s0


@pytest.mark.parametrize("ground", [False, True], ids=["pinned_in_air", "dropped_on_ground"])
def test_cloth_follows_semi_implicit(ground):
    """A cloth (membrane, bending, springs; pinned and swinging, or dropped on the ground) follows
    SolverSemiImplicit's particle trajectory within 1e-6 m over 600 steps of 1/1200 s.

    Both call the same Newton kernels in the same order, so the measured difference is 0; 1e-6 m leaves room
    for atomic accumulation order where it is not serial (CUDA).
    """
    model = _cloth(ground)
    ours = _run(steel.solvers.SolverFeatherstone, model, 600, 1.0 / 1200.0, ground)
    ref = _run(newton.solvers.SolverSemiImplicit, model, 600, 1.0 / 1200.0, ground)
    q = ours.particle_q.numpy()
    assert np.isfinite(q).all()
    assert np.abs(q - model.particle_q.numpy()).max() > 0.1  # it really moved
    np.testing.assert_allclose(q, ref.particle_q.numpy(), rtol=0.0, atol=1.0e-6)
    np.testing.assert_allclose(ours.particle_qd.numpy(), ref.particle_qd.numpy(), rtol=0.0, atol=1.0e-5)
    if ground:  # landed: no centre through the ground, none more than 5 cm up (small hops remain, the
        # soft-contact damping of Newton's kernel acts only while the surfaces approach)
        assert q[:, 2].min() > 0.0 and q[:, 2].max() < 0.05


def test_particle_resting_on_a_free_box_on_the_ground():
    """A 0.1 kg particle on an 8 kg free box on the ground: two-way soft contact at rest.

    Checks, after 1 s: the particle sits ``radius - m g / ke`` above the box top (``ke`` the average of the
    particle and box gains) within 1e-6 m; the box sinks an extra ``m g / (4 ke_box)`` (2.45e-5 m) under the
    particle within 2 % (float32 resolution of z ~ 0.1 m is 7e-9 m); and both match SolverSemiImplicit,
    whose maximal-coordinate box carries the same contact laws at rest, within 1e-6 m.
    """
    ours = _run(steel.solvers.SolverFeatherstone, _particle_on_box(), 1200, 1.0 / 1200.0, True)
    alone = _run(steel.solvers.SolverFeatherstone, _particle_on_box(False), 1200, 1.0 / 1200.0, True)
    ref = _run(newton.solvers.SolverSemiImplicit, _particle_on_box(), 1200, 1.0 / 1200.0, True)
    box_z, particle_z = float(ours.body_q.numpy()[0, 2]), float(ours.particle_q.numpy()[0, 2])
    ke = 0.5 * (SOFT["ke"] + 1.0e4)
    assert particle_z - (box_z + 0.1) == pytest.approx(0.02 - 0.1 * G / ke, abs=1.0e-6)
    assert float(alone.body_q.numpy()[0, 2]) - box_z == pytest.approx(0.1 * G / (4.0 * 1.0e4), rel=2.0e-2)
    assert box_z == pytest.approx(float(ref.body_q.numpy()[0, 2]), abs=1.0e-6)
    assert particle_z == pytest.approx(float(ref.particle_q.numpy()[0, 2]), abs=1.0e-6)
