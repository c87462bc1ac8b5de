"""Surface velocity of a moving mesh (a conveyor belt) against the analytic friction ramp.

A box set at rest on a static mesh whose surface moves at V along x is dragged by sliding friction
mu m g: its speed rises as mu g t until it reaches V at t = V / (mu g), then it rides the belt
(no further slip, no creep, whatever the step size).
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

G = 9.81
MU = 0.5
V = 1.0  # [m/s] belt speed: reached after V / (mu g) = 0.204 s
HALF = 0.1  # [m] box half extent


def _belt(speed=V, normal=0.0):
    """The belt mesh moving at ``speed`` [m/s] along x (and ``normal`` [m/s] along its normal z) and the box."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=MU, density=1000.0)
    vertices = np.array([[-5.0, -1.0, 0.0], [5.0, -1.0, 0.0], [5.0, 1.0, 0.0], [-5.0, 1.0, 0.0]], dtype=np.float32)
    mesh = newton.Mesh(vertices, np.array([0, 1, 2, 0, 2, 3], dtype=np.int32), enable_surface_velocity=True)
    builder.add_shape_mesh(-1, mesh=mesh, cfg=cfg)
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, HALF), wp.quat_identity()))
    builder.add_shape_box(body, hx=HALF, hy=HALF, hz=HALF, cfg=cfg)
    model = builder.finalize(device="cpu")
    mesh.mesh.velocities.assign(np.tile(np.array([speed, 0.0, normal], dtype=np.float32), (4, 1)))
    return model


def _run(solver_class=SolverSteel, dts=(1.0 / 240.0,) * 120, normal=0.0, **options):
    """Box x-velocity [m/s], x [m] and z [m] after each step of the listed sizes [s]."""
    model = _belt(normal=normal)
    solver = solver_class(model, **options)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    assert contacts.rigid_contact_surface_velocity is not None
    s0, s1 = model.state(), model.state()
    out = []
    for dt in dts:
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, dt)
        s0, s1 = s1, s0
        q = s0.body_q.numpy()[0]
        out.append((float(s0.body_qd.numpy()[0][0]), float(q[0]), float(q[2])))
    return np.array(out)


def test_box_reaches_belt_speed_at_mu_g():
    """Speed mu g t within 0.5 % while slipping, V within 0.1 % after, on point friction and on patches;
    the height is unchanged."""
    dt = 1.0 / 240.0
    t = dt * np.arange(1, 121)
    for beta in (0.0, None):
        run = _run(friction_anchor_beta=beta)
        slipping = t < V / (MU * G) - dt
        np.testing.assert_allclose(run[slipping, 0], MU * G * t[slipping], rtol=5e-3)
        riding = t > V / (MU * G) + dt
        np.testing.assert_allclose(run[riding, 0], V, rtol=1e-3)
        np.testing.assert_allclose(run[:, 2], HALF, atol=1e-3)  # atol 1 mm: the normal response is unchanged


def test_riding_box_keeps_pace_across_a_step_change():
    """On patches, a box riding the belt moves V dt per step at 1/240 s and then at 1/120 s: the anchors
    carry the belt's displacement, not slip (no jerk when dt changes)."""
    dts = (1.0 / 240.0,) * 96 + (1.0 / 120.0,) * 24
    run = _run(dts=dts)
    steps = np.diff(run[:, 1])  # steps[i]: the displacement [m] of step i + 1
    np.testing.assert_allclose(steps[60:95], V / 240.0, rtol=2e-3)
    np.testing.assert_allclose(steps[95:], V / 120.0, rtol=2e-3)  # from the first long step on


def test_belt_matches_the_reference():
    """Newton's SolverSteel on the same belt: the speed after each of 60 steps within 1 % of V."""
    reference = pytest.importorskip("newton.solvers").SolverSteel
    ours = _run(dts=(1.0 / 240.0,) * 60)
    theirs = _run(reference, dts=(1.0 / 240.0,) * 60)
    np.testing.assert_allclose(ours[:, 0], theirs[:, 0], atol=0.01 * V)


def test_the_normal_part_of_a_surface_velocity_is_ignored():
    """A surface velocity (V, 0, 0.5 m/s) drags the box as (V, 0, 0) does: only its tangential part is a
    surface velocity (the belt does not move through its own plane), and the box is not lifted. Measured
    1.5e-5 m/s and 1.2e-7 m apart over 120 steps (float32 of the tangent projection); tolerance 5e-5
    absolute, in m/s and m."""
    np.testing.assert_allclose(_run(normal=0.5), _run(), rtol=0, atol=5e-5)
