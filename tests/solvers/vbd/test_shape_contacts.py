"""SolverVBD particle contacts with every kind of shape, static and kinematic, against rest depths and Newton's SolverVBD."""

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

RADIUS = 0.01  # [m] particle radius
MASS = 0.1  # [kg]
KE = 1.0e4  # [N/m] model.soft_contact_ke and the shape's ke (the mixed stiffness is their mean)
DT = 1.0 / 600.0


def _mesh_box(hx, hy, hz):
    """A closed box as a triangle mesh (outward winding)."""
    v = np.array([[x, y, z] for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)], dtype=np.float32)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]
    return newton.Mesh(v, np.array(tris, dtype=np.int32).reshape(-1))


def _scene(shape: str, kinematic: bool = False, particle_x: float = 0.0):
    """A particle just above the top of one shape whose top surface is at z = 0.2 m, ``particle_x`` [m] off its axis."""
    b = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(ke=KE, kd=0.0, mu=1.0)
    body = -1
    if kinematic:
        body = b.add_body(xform=wp.transform((0, 0, 0), wp.quat_identity()), is_kinematic=True, mass=1.0)
    at = wp.transform((0.0, 0.0, 0.1), wp.quat_identity())
    if shape == "box":
        b.add_shape_box(body, xform=at, hx=1.0, hy=1.0, hz=0.1, cfg=cfg)
    elif shape == "sphere":
        b.add_shape_sphere(body, xform=at, radius=0.1, cfg=cfg)
    elif shape == "capsule":  # axis along x: its top line is at z = 0.2
        b.add_shape_capsule(body, xform=wp.transform((0.0, 0.0, 0.1), wp.quat_from_axis_angle(wp.vec3(0, 1, 0), 0.5 * wp.pi)),
                            radius=0.1, half_height=0.3, cfg=cfg)
    elif shape == "mesh":
        b.add_shape_mesh(body, xform=at, mesh=_mesh_box(1.0, 1.0, 0.1), cfg=cfg)
    b.add_particle((particle_x, 0.0, 0.2 + RADIUS + 0.005), (0.0, 0.0, 0.0), MASS, radius=RADIUS)
    b.color()
    model = b.finalize(device="cpu")
    model.soft_contact_ke = KE
    model.soft_contact_kd = 0.0
    model.soft_contact_mu = 1.0
    return model


def _run(cls, model, steps, platform_speed=None, platform_spin=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reference's deprecation notices
        solver = cls(model, iterations=10)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    for i in range(steps):
        if platform_speed is not None:  # kinematic bodies move outside the solver: the user drives them
            q = s0.body_q.numpy()
            q[0, 0] = platform_speed * DT * i
            s0.body_q.assign(q)
            qd = s0.body_qd.numpy()
            qd[0, :3] = (platform_speed, 0.0, 0.0)
            s0.body_qd.assign(qd)
        if platform_spin is not None:  # about the body's z axis through its origin (its COM) [rad/s]
            q = s0.body_q.numpy()
            q[0, 3:] = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), platform_spin * DT * i)
            s0.body_q.assign(q)
            qd = s0.body_qd.numpy()
            qd[0] = (0.0, 0.0, 0.0, 0.0, 0.0, platform_spin)
            s0.body_qd.assign(qd)
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
    return s0


@pytest.mark.parametrize("shape", ["box", "sphere", "capsule", "mesh"])
def test_particle_rests_on_each_shape_at_the_penalty_depth(shape):
    """After 1 s the particle rests at top + r - m g / ke (penalty equilibrium), as Newton's SolverVBD does.

    Measured: 4.5e-8 m from the analytic depth and <= 6e-8 m from the reference on all four shapes.
    Tolerances: 2e-5 m absolute on the depth (20 % of the 1e-4 m penetration m g / ke; float32 rounding at
    0.2 m is 1.5e-8 m) and 1e-5 m absolute against the reference (same contact law).
    """
    model = _scene(shape)
    ours = _run(SolverVBD, model, 600)
    ref = _run(newton.solvers.SolverVBD, _scene(shape), 600)
    z = float(ours.particle_q.numpy()[0, 2])
    expected = 0.2 + RADIUS - MASS * 9.81 / KE
    assert abs(z - expected) < 2e-5, (shape, z, expected)
    assert np.abs(ours.particle_qd.numpy()[0]).max() < 1e-3
    assert np.abs(ours.particle_q.numpy() - ref.particle_q.numpy()).max() < 1e-5


def test_kinematic_platform_carries_the_particle_by_friction():
    """A kinematic box driven at 0.5 m/s carries a resting particle along (friction relative to the moving shape).

    After 1 s the particle moves at the platform's speed (measured 0.4999995 m/s; tolerance 1e-3 m/s)
    and stays on it; Newton's SolverVBD gives the same position (measured 4.8e-7 m apart; tolerance
    1e-4 m). Both lag the platform by 0.016 m, the smoothed-friction slip while it is set in motion.
    """
    model = _scene("box", kinematic=True)
    ours = _run(SolverVBD, model, 600, platform_speed=0.5)
    ref = _run(newton.solvers.SolverVBD, _scene("box", kinematic=True), 600, platform_speed=0.5)
    v = ours.particle_qd.numpy()[0]
    assert abs(v[0] - 0.5) < 1e-3 and abs(v[2]) < 1e-3
    assert abs(float(ours.particle_q.numpy()[0, 2]) - (0.2 + RADIUS - MASS * 9.81 / KE)) < 2e-5
    assert np.abs(ours.particle_q.numpy() - ref.particle_q.numpy()).max() < 1e-4


def test_spinning_kinematic_platform_carries_the_particle_round_by_friction():
    """A kinematic box spinning at 1 rad/s about its vertical axis carries a particle resting 0.3 m off
    the axis round with it: after 0.5 s it moves at ω r = 0.3 m/s along the circle's tangent, still 0.3 m
    from the axis, and where Newton's SolverVBD puts it.

    Measured: speed 0.30028 m/s and radius 0.30028 m (the smoothed friction holds the particle by a small
    slip, outward here, where it supplies the centripetal force), 1.0e-4 m from the reference (which
    places the moving shape point slightly differently). Tolerances, absolute, about 3x those: 8e-4 m/s
    on the speed, 8e-4 m on the radius, 3e-4 m from the reference. A contact that ignores the shape's
    rotation leaves the particle standing (speed 0).
    """
    model = _scene("box", kinematic=True, particle_x=0.3)
    ours = _run(SolverVBD, model, 300, platform_spin=1.0)
    ref = _run(newton.solvers.SolverVBD, _scene("box", kinematic=True, particle_x=0.3), 300, platform_spin=1.0)
    x, v = ours.particle_q.numpy()[0], ours.particle_qd.numpy()[0]
    radius = float(np.hypot(x[0], x[1]))
    tangent = np.array([-x[1], x[0], 0.0]) / radius
    print(f"speed {np.linalg.norm(v):.6f} m/s, radius {radius:.6f} m, "
          f"from the reference {np.abs(x - ref.particle_q.numpy()[0]).max():.2e} m")
    assert abs(float(v @ tangent) - 0.3) < 8e-4 and abs(v[2]) < 8e-4
    assert abs(radius - 0.3) < 8e-4
    assert np.abs(x - ref.particle_q.numpy()[0]).max() < 3e-4
