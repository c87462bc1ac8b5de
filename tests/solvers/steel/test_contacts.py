"""SolverSteel contacts against analytic answers: resting load, incline friction, restitution."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

from .scenes import G, run, single_box, tilted_gravity

DT = 1.0 / 240.0


def test_resting_box_contact_forces_sum_to_its_weight():
    """A box at rest: contact_f on the ground sums to -m g; it neither sinks nor slides.

    Measured 2.4e-7 relative (float32 rounding of the converged PGS impulse), tolerance 7e-7 relative; no
    sideways force (measured 0, tolerance 1e-6 of the weight); the height 1.5e-9 m off (tolerance 2e-8 m,
    three float32 steps at 0.1 m). A 1 % gravity error fails.
    """
    model = single_box(z=0.1)
    solver = SolverSteel(model)
    pipeline_probe = run(model, solver, 1, DT)[1]
    obs = solver.observables({"contact_f"}, contacts=pipeline_probe)
    state, contacts = run(model, solver, 240, DT, observables=obs)
    n = int(contacts.rigid_contact_count.numpy()[0])
    total = obs.contact_f.numpy()[:n, :3].sum(axis=0)
    weight = float(model.body_mass.numpy()[0]) * G
    # contact_f is the force on shape 0 (the ground plane here), so it points down.
    np.testing.assert_allclose(total[2], -weight, rtol=7e-7)
    np.testing.assert_allclose(total[:2], 0.0, rtol=0, atol=1e-6 * weight)  # [N], no sideways force
    assert abs(float(state.body_q.numpy()[0, 2]) - 0.1) < 2e-8  # [m] rests on its face


@pytest.mark.parametrize("mu, slides", [(0.5, False), (0.2, True)])
def test_box_on_a_20_degree_incline_sticks_or_slides_per_coulomb(mu, slides):
    """mu 0.5 > tan 20 deg holds (< 1 mm in 2 s); mu 0.2 slides with a = g (sin - mu cos) within 0.2 %.

    Measured 3e-5 relative; mu x 0.98 moves a by 2.4 %, gravity x 1.01 by 1 %, so either fails.
    """
    theta = np.radians(20.0)
    model = single_box(z=0.1, mu=mu, gravity=tilted_gravity(20.0))
    solver = SolverSteel(model)
    xs = []
    run(model, solver, 480, DT, record=lambda s: xs.append(float(s.body_q.numpy()[0, 0])))
    x = np.array(xs)
    if not slides:
        assert abs(x[-1] - x[60]) < 1e-3  # [m] after the first 0.25 s of settling
    else:
        t = (np.arange(len(x)) + 1) * DT
        late = t > 0.5
        accel = 2.0 * np.polyfit(t[late], x[late], 2)[0]
        expected = G * (np.sin(theta) - mu * np.cos(theta))
        assert accel == pytest.approx(expected, rel=2e-3)


def test_restitution_half_rebounds_to_a_quarter_of_the_drop_height():
    """A sphere with restitution 0.5 dropped from 1 m rebounds to 0.25 m within 5 %.

    The rebound starts from where the sphere was at the start of the impact step, which can be
    up to ``u dt`` above the ground (4.4 m/s x dt): 1.8 cm at dt = 1/240 s, 7 % of the apex. At
    dt = 1/600 s that is 0.7 cm, inside the 5 % the issue asks for.
    """
    r = 0.05
    dt = 1.0 / 600.0
    model = single_box(z=1.0 + r, restitution=0.5, half=r, sphere=True)
    solver = SolverSteel(model)
    zs = []
    run(model, solver, 600, dt, record=lambda s: zs.append(float(s.body_q.numpy()[0, 2]) - r))
    zs = np.array(zs)
    bounce = np.argmin(zs[:500])  # first impact, ~0.45 s
    apex = zs[bounce:].max()
    assert apex == pytest.approx(0.25, rel=0.05)


def test_slow_contact_below_the_restitution_threshold_does_not_bounce():
    """Closing at 0.3 m/s (< 0.5 m/s threshold) with restitution 1: the sphere stays on the ground."""
    r = 0.05
    drop = 0.3**2 / (2 * G)  # reaches 0.3 m/s at the ground
    model = single_box(z=r + drop, restitution=1.0, half=r, sphere=True)
    solver = SolverSteel(model)
    zs = []
    run(model, solver, 120, DT, record=lambda s: zs.append(float(s.body_q.numpy()[0, 2]) - r))
    assert max(zs[20:]) < 1e-3  # [m] no rebound above a millimetre


def _box_stack(count, drop, seed):
    """``count`` stacked 0.2 m cubes (mu 0.7) ``drop`` [m] above the ground, each offset by up to 0.5 mm and
    turned about z by up to 0.3 degrees (seeded), so no exact symmetry helps the solver."""
    rng = np.random.default_rng(seed)
    builder = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.7)
    for i in range(count):
        x, y = rng.uniform(-5e-4, 5e-4, 2)
        turn = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), float(rng.uniform(-0.005, 0.005)))
        body = builder.add_body(xform=wp.transform(wp.vec3(float(x), float(y), drop + 0.1 + 0.2 * i), turn))
        builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    return builder.finalize(device="cpu")


def test_corner_order_does_not_tilt_a_landing_stack():
    """Regression: a box stack landing flat tilted and slid sideways by the Gauss-Seidel order of its face corners.

    Six slightly offset cubes dropped 1 m (5.4 m/s at impact). Solving the corners of each face one
    after another left every box with a tilt velocity proportional to the impact: 0.71 degrees of tilt
    and 4.4 mm of drift with that sweep; with the corners of a body pair solved as one group (see
    sweep/pgs.py) 0.07 degrees and 0.15 mm.
    """
    model = _box_stack(6, 1.0, seed=0)
    solver = SolverSteel(model)
    start = model.state().body_q.numpy()
    tilt = []  # largest tilt of any box from upright, per step [rad]

    def record(state):
        tilt.append(2.0 * np.arcsin(np.linalg.norm(state.body_q.numpy()[:, 3:5], axis=1)).max())

    state, _ = run(model, solver, 240, DT, record=record)
    drift = np.linalg.norm(state.body_q.numpy()[:, :2] - start[:, :2], axis=1)
    assert np.degrees(max(tilt)) < 0.2
    assert drift.max() < 0.5e-3  # [m]
    assert abs(float(state.body_q.numpy()[-1, 2]) - 1.1) < 2e-3  # [m] the stack stands, top box on top
