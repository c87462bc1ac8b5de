"""Two shapes with different materials: the pair's friction and restitution are the means of the two.

Every other contact test gives both shapes one material, where mean, max and min agree. Here they
differ enough that each rule predicts a different outcome, and the reference solver is run on the
same scene to confirm the rule is the one it applies.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverFeatherstone, SolverSteel

G = 9.81  # [m/s²]
THETA = np.radians(20.0)  # incline [rad]; tan = 0.364
MU_BOX, MU_GROUND = 0.1, 0.5  # mean 0.3 slides at 0.59 m/s²; max 0.5 sticks; min 0.1 slides at 2.43 m/s²


def _box_on_incline(mu_box, mu_ground, restitution=(0.0, 0.0), sphere=False, z=0.1):
    gravity = (G * np.sin(THETA), 0.0, -G * np.cos(THETA)) if not sphere else (0.0, 0.0, -G)
    b = newton.ModelBuilder(gravity=gravity)
    body = b.add_body(xform=wp.transform((0.0, 0.0, z), wp.quat_identity()))
    cfg = newton.ModelBuilder.ShapeConfig(mu=mu_box, restitution=restitution[0])
    if sphere:
        b.add_shape_sphere(body, radius=0.05, cfg=cfg)
    else:
        b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    b.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(mu=mu_ground, restitution=restitution[1]))
    return b.finalize(device="cpu")


def _slide_acceleration(solver_cls, steps=480, dt=1.0 / 240.0, **options):
    model = _box_on_incline(MU_BOX, MU_GROUND)
    solver = solver_cls(model, **options)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    xs = []
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, dt)
        s0, s1 = s1, s0
        xs.append(float(s0.body_q.numpy()[0, 0]))
    t = (np.arange(steps) + 1) * dt
    late = t > 0.5
    return 2.0 * np.polyfit(t[late], np.array(xs)[late], 2)[0]


def test_steel_friction_is_the_mean_of_the_two_shapes_as_in_the_reference():
    """mu 0.1 on mu 0.5 slides at g (sin - 0.3 cos) within 0.2 %, and the reference slides the same (1 %)."""
    expected = G * (np.sin(THETA) - 0.5 * (MU_BOX + MU_GROUND) * np.cos(THETA))
    ours = _slide_acceleration(SolverSteel)
    assert ours == pytest.approx(expected, rel=2e-3)
    assert ours == pytest.approx(_slide_acceleration(newton.solvers.SolverSteel), rel=1e-2)


def test_featherstone_friction_is_the_mean_of_the_two_shapes_as_in_the_reference():
    """SolverFeatherstone's penalty friction uses the mean too: the box slides at the mean-mu rate
    (within 1 %: the smoothed friction and the contact spring settle in the first 0.5 s), as the reference does."""
    expected = G * (np.sin(THETA) - 0.5 * (MU_BOX + MU_GROUND) * np.cos(THETA))
    dt = 1.0 / 600.0
    ours = _slide_acceleration(SolverFeatherstone, steps=1200, dt=dt)
    ref = _slide_acceleration(newton.solvers.SolverFeatherstone, steps=1200, dt=dt)
    assert ours == pytest.approx(expected, rel=1e-2)
    assert ours == pytest.approx(ref, rel=1e-2)


def test_steel_restitution_is_the_mean_of_the_two_shapes_as_in_the_reference():
    """A sphere with e = 0.9 dropped on a ground with e = 0.1 rebounds as e = 0.5: to e² of the drop (5 %,
    as the single-material test: the impact step's u dt), where max would give 0.81 and min 0.01; the
    reference's apex agrees within 5 %."""
    r, dt, drop = 0.05, 1.0 / 600.0, 1.0
    apexes = []
    for solver_cls in (SolverSteel, newton.solvers.SolverSteel):
        model = _box_on_incline(0.5, 0.5, restitution=(0.9, 0.1), sphere=True, z=drop + r)
        solver = solver_cls(model)
        pipeline = newton.CollisionPipeline(model)
        contacts = pipeline.contacts()
        s0, s1 = model.state(), model.state()
        zs = []
        for _ in range(600):
            pipeline.collide(s0, contacts)
            solver.step(s0, s1, None, contacts, dt)
            s0, s1 = s1, s0
            zs.append(float(s0.body_q.numpy()[0, 2]) - r)
        zs = np.array(zs)
        bounce = np.argmin(zs[:500])
        apexes.append(zs[bounce:].max())
    assert apexes[0] == pytest.approx(0.25 * drop, rel=0.05)
    assert apexes[0] == pytest.approx(apexes[1], rel=0.05)
