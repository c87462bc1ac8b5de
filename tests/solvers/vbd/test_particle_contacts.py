"""SolverVBD particle–shape contacts against analytic answers: a particle on an incline slides with
``a = g (sin θ - μ cos θ)`` and creeps no faster than the smoothed friction allows below the friction
angle; contact materials mix as Newton's SolverVBD mixes them; a soft cube on the ground compresses
under its own weight as linear elasticity predicts.

The incline is the ground plane with gravity tilted by θ about y (same physics, no tilted shape to
build). Contacts come from ``newton.CollisionPipeline(model).collide(state, contacts)`` each step.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

G = 9.81  # [m/s²]
DT = 1.0 / 60.0  # [s]
RADIUS = 0.05  # [m]
MASS = 0.01  # [kg]
DENSITY = 1000.0  # [kg/m³] of the soft cube


def _particle_on_ground(theta, soft, shape):
    """One particle resting on the ground, gravity tilted by ``theta`` [rad] toward +x.

    ``soft``, ``shape``: (ke [N/m], kd [N·s/m], mu) of the model's particle contacts and of the ground.
    """
    builder = newton.ModelBuilder(gravity=(G * np.sin(theta), 0.0, -G * np.cos(theta)))
    builder.add_particle(wp.vec3(0.0, 0.0, RADIUS), wp.vec3(0.0, 0.0, 0.0), mass=MASS, radius=RADIUS)
    builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(ke=shape[0], kd=shape[1], mu=shape[2]))
    builder.color()
    model = builder.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = soft
    return model


def _simulate(model, seconds, cls=SolverVBD, **options):
    """Positions and velocities of particle 0 after each step: (steps, 3) each [m], [m/s]."""
    solver = cls(model, iterations=10, **options)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    q, qd = [], []
    for _ in range(int(round(seconds / DT))):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        q.append(s0.particle_q.numpy()[0].astype(np.float64))
        qd.append(s0.particle_qd.numpy()[0].astype(np.float64))
    return np.array(q), np.array(qd)


def _acceleration(qd):
    """Down-slope acceleration [m/s²]: slope of a line fitted to v_x after the first 0.2 s."""
    t = DT * np.arange(1, len(qd) + 1)
    return np.polyfit(t[12:], qd[12:, 0], 1)[0]


@pytest.mark.parametrize("theta_deg, mu", [(30.0, 0.3), (40.0, 0.5), (30.0, 0.0)])
def test_particle_slides_down_incline_with_coulomb_deceleration(theta_deg, mu):
    """Above the friction angle a particle slides with a = g (sin θ - μ cos θ), pressed onto the slope by
    m g cos θ (depth m g cos θ / ke).

    Measured: acceleration within 0.020 % of the analytic one, depth within 0.023 %; tolerances (relative)
    6e-4 on each, about 3x (a friction coefficient off by 1 % moves the acceleration by 0.3-0.6 %)."""
    theta = np.radians(theta_deg)
    material = (1.0e4, 0.0, mu)
    q, qd = _simulate(_particle_on_ground(theta, material, material), 1.0)
    expected = G * (np.sin(theta) - mu * np.cos(theta))
    measured = _acceleration(qd)
    print(f"theta {theta_deg} mu {mu}: a = {measured:.4f} m/s², analytic {expected:.4f}")
    assert abs(measured - expected) < 6e-4 * expected
    depth = RADIUS - q[10:, 2]
    np.testing.assert_allclose(depth, MASS * G * np.cos(theta) / material[0], rtol=6e-4, atol=0)


@pytest.mark.parametrize("theta_deg, mu", [(20.0, 0.5), (10.0, 0.3)])
def test_particle_sticks_below_the_friction_angle(theta_deg, mu):
    """Below the friction angle (tan θ < μ) the particle only creeps at the speed the smoothed friction
    allows: with slip u per step and ε = friction_epsilon dt, μ m g cos θ (2u/ε - u²/ε²) = m g sin θ, so
    v = friction_epsilon (1 - sqrt(1 - tan θ / μ)) [m/s] (a few mm/s at the default 1e-2 m/s). Over 1 s
    it moves that far within 2 % (measured 0.3 %), under 1 % of what it would slide without friction."""
    theta = np.radians(theta_deg)
    material = (1.0e4, 0.0, mu)
    q, _ = _simulate(_particle_on_ground(theta, material, material), 1.0)
    creep = 1.0e-2 * (1.0 - np.sqrt(1.0 - np.tan(theta) / mu))  # [m/s], friction_epsilon = 1e-2
    moved = q[-1, 0]
    print(f"theta {theta_deg} mu {mu}: moved {moved * 1e3:.3f} mm in 1 s, creep bound {creep * 1e3:.3f} mm")
    assert moved < 0.01 * 0.5 * G * np.sin(theta)
    assert abs(moved - creep * 1.0) < 0.02 * creep


def test_contact_materials_mix_as_newton_does():
    """Particle and shape materials combine as in newton's SolverVBD (measured): ke and kd by the
    arithmetic mean, mu by the geometric mean sqrt(mu_particle mu_shape), so a frictionless ground
    gives no friction whatever the particles' mu.

    Tolerances, absolute: 4e-4 m/s² on the accelerations (measured 1.2e-4 and 1.8e-5; the arithmetic
    mean of mu would be 0.75 m/s² off); 2e-8 m on the depth (measured 4e-10 m; five float32 steps at
    0.05 m; the max of ke would be 8e-6 m off)."""
    theta = np.radians(40.0)
    _, qd = _simulate(_particle_on_ground(theta, (1.0e3, 0.0, 0.8), (1.0e3, 0.0, 0.2)), 1.0)
    assert abs(_acceleration(qd) - G * (np.sin(theta) - 0.4 * np.cos(theta))) < 4.0e-4
    _, qd = _simulate(_particle_on_ground(theta, (1.0e3, 0.0, 0.6), (1.0e3, 0.0, 0.0)), 1.0)
    assert abs(_acceleration(qd) - G * np.sin(theta)) < 4.0e-4
    q, _ = _simulate(_particle_on_ground(0.0, (1.0e3, 0.0, 0.5), (1.0e4, 0.0, 0.5)), 1.0)
    assert abs((RADIUS - q[-1, 2]) - MASS * G / 5.5e3) < 2.0e-8  # depth 1.8e-5 m at ke = 5500 N/m


def _rebound(soft_kd, shape_kd):
    """Upward speed [m/s] a 0.01 kg particle thrown down at 1 m/s onto the frictionless ground (ke 1e3 N/m
    both sides) leaves with, at dt = 1/600 s: the largest vertical velocity over 0.2 s."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    builder.add_particle(wp.vec3(0.0, 0.0, RADIUS + 0.01), wp.vec3(0.0, 0.0, -1.0), mass=MASS, radius=RADIUS)
    builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(ke=1.0e3, kd=shape_kd, mu=0.0))
    builder.color()
    model = builder.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 1.0e3, soft_kd, 0.0
    return _largest_upward_speed(model, SolverVBD(model, iterations=10), 120)


def _largest_upward_speed(model, solver, steps):
    """The largest vertical velocity [m/s] of particle 0 over ``steps`` steps of 1/600 s, colliding every step."""
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    top = -np.inf
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, 1.0 / 600.0)
        s0, s1 = s1, s0
        top = max(top, float(s0.particle_qd.numpy()[0, 2]))
    return top


def test_contact_damping_mixes_by_the_mean():
    """The contact damper's kd is the mean of the particles' and the shape's (Newton's SolverVBD's rule,
    measured): kd 0 on one side and 0.4 N·s/m on the other rebound bit for bit as 0.2 on both, whichever
    side holds it. The damper matters here: the undamped rebound is 0.490 m/s, the mean's 0.442 m/s
    (the max's would be 0.399 m/s)."""
    mean = _rebound(0.2, 0.2)
    assert _rebound(0.0, 0.4) == mean and _rebound(0.4, 0.0) == mean
    assert _rebound(0.0, 0.0) - mean > 0.03  # measured 0.048 m/s


def _throw_at_box(solver_class, kd):
    """Upward speed [m/s] a 20 g particle (radius 2 cm) thrown at 2 m/s onto a static frictionless box (ke 1e4 N/m,
    contact damping ``kd`` [N·s/m] on both sides, so mixed ``kd``) leaves with: no gravity, 20 iterations, 1/600 s,
    the largest upward velocity over 0.1 s."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    builder.add_shape_box(-1, hx=0.3, hy=0.3, hz=0.1, cfg=newton.ModelBuilder.ShapeConfig(ke=1.0e4, kd=kd, mu=0.0))
    builder.add_particle(wp.vec3(0.0, 0.0, 0.125), wp.vec3(0.0, 0.0, -2.0), mass=0.02, radius=0.02)
    builder.color()
    model = builder.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 1.0e4, kd, 0.0
    return _largest_upward_speed(model, solver_class(model, iterations=20), 60)


def test_contact_damper_only_dissipates():
    """The contact damper takes normal speed and gives none back: a particle thrown onto a box rebounds slower the
    larger ``kd``, never faster than on Newton's SolverVBD, and stops at kd 100 (no pull holds it there: the contact
    only pushes, see :mod:`steel.solvers.vbd.particles.contacts`).

    Measured rebound [m/s] at kd 0, 1, 10, 100 N·s/m: 0.3982, 0.3615, 0.1463, 0.0000 (at 100 the approach stops
    within the first contact step, before the spring is loaded); Newton's 0.3982, 0.3726, 0.1939, and 0.5907 at
    100, faster than undamped, which is not followed. Limits: kd 0 equal to Newton's within 2e-4 m/s, kd 100
    below 1e-3 m/s."""
    speeds = [_throw_at_box(SolverVBD, kd) for kd in (0.0, 1.0, 10.0, 100.0)]
    assert speeds[0] > speeds[1] > speeds[2] > speeds[3]
    assert abs(speeds[3]) < 1e-3
    reference = [_throw_at_box(newton.solvers.SolverVBD, kd) for kd in (0.0, 1.0, 10.0)]
    assert abs(speeds[0] - reference[0]) < 2e-4
    assert speeds[1] <= reference[1] and speeds[2] <= reference[2]


def _soft_cube_on_ground(cells, size, k_mu, k_lambda):
    """A tetrahedral cube (``add_soft_grid``) resting on a frictionless ground, lumped tet masses."""
    builder = newton.ModelBuilder()
    h = size / cells
    radius = 0.002  # [m]
    builder.add_soft_grid(pos=wp.vec3(-0.5 * size, -0.5 * size, radius), rot=wp.quat_identity(),
                          vel=wp.vec3(0.0, 0.0, 0.0), dim_x=cells, dim_y=cells, dim_z=cells, cell_x=h, cell_y=h,
                          cell_z=h, density=DENSITY, k_mu=k_mu, k_lambda=k_lambda, k_damp=0.0, particle_radius=radius)
    builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(ke=1.0e6, kd=0.0, mu=0.0))
    builder.color()
    model = builder.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 1.0e6, 0.0, 0.0
    # add_soft_grid gives every particle a whole cell's mass (density h³), boundary ones included, so
    # the grid weighs (n+1)³/n³ of the cube; lump each tet's mass on its four corners instead, so the
    # load is the cube's own weight.
    q = model.particle_q.numpy().astype(np.float64)
    tet = model.tet_indices.numpy()
    edges = np.stack([q[tet[:, k]] - q[tet[:, 0]] for k in (1, 2, 3)], axis=-1)
    mass = np.zeros(len(q))
    np.add.at(mass, tet.ravel(), np.repeat(DENSITY * np.abs(np.linalg.det(edges)) / 24.0, 4))
    model.particle_mass.assign(mass.astype(np.float32))
    model.particle_inv_mass.assign((1.0 / mass).astype(np.float32))
    return model



@pytest.mark.parametrize("start", ["adaptive", "inertial"])
def test_soft_cube_on_the_ground_compresses_as_linear_elasticity_predicts(start):
    """A 0.2 m cube of stable Neo-Hookean tets on a frictionless ground, at rest under its own weight.

    Our tet law linearizes to Lamé parameters (k_mu, k_lambda) (elastic.py), so E = μ(3λ + 2μ)/(λ + μ).
    A prism on a frictionless support is in uniaxial stress σ_zz = -ρ g (H - z) with free lateral
    expansion, so its mean strain, top-layer minus bottom-layer height over H, is ρ g H / (2E)
    (1.96e-3 here: small strain). From the adaptive start measured 1.6 % less (1.3 % at 6 and 8 cells
    per side): linear tets are slightly stiff, and the flat support holds the base flat where the
    uniaxial solution bows it by ν ρ g r² / (2E); tolerance 3 %. From the default inertial start
    (Newton's) 10 sweeps leave every step's dt² g overshoot in the cube (strain 6.6x the elastic one,
    measured); there it must compress as newton's SolverVBD does (within 0.1 %; measured < 1e-5)."""
    size, k_mu, k_lambda = 0.2, 2.0e5, 2.0e5  # [m], [Pa], [Pa]
    model = _soft_cube_on_ground(4, size, k_mu, k_lambda)
    z0 = model.particle_q.numpy()[:, 2]
    top, bottom = np.isclose(z0, z0.max()), np.isclose(z0, z0.min())
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()

    def rest_strain(solver):
        s0, s1 = model.state(), model.state()
        for _ in range(150):
            pipeline.collide(s0, contacts)
            solver.step(s0, s1, None, contacts, DT)
            s0, s1 = s1, s0
        assert np.abs(s0.particle_qd.numpy()).max() < 1.0e-4  # at rest
        z = s0.particle_q.numpy()[:, 2].astype(np.float64)
        return 1.0 - (z[top].mean() - z[bottom].mean()) / size

    solver = SolverVBD(model, iterations=10)
    solver.particle_adaptive_init = start == "adaptive"
    strain = rest_strain(solver)
    young = k_mu * (3.0 * k_lambda + 2.0 * k_mu) / (k_lambda + k_mu)
    expected = DENSITY * G * size / (2.0 * young)
    print(f"{start}: mean strain {strain:.4e}, linear elasticity {expected:.4e}, ratio {strain / expected:.4f}")
    if start == "adaptive":
        assert abs(strain - expected) < 0.03 * expected
    else:
        ref = rest_strain(newton.solvers.SolverVBD(model, iterations=10, particle_enable_tile_solve=False))
        print(f"newton's SolverVBD: mean strain {ref:.4e}, ours / newton {strain / ref:.5f}")
        assert abs(strain - ref) < 1.0e-3 * ref
