"""Patch torsion (steel:min_torsional_patch_radius) against the analytic spin-down of a sphere.

A sphere of mass m, radius R on the ground, jointed to the world so it can move vertically and spin
about the vertical (an articulated body: free single bodies get no torsion, as in the reference),
touches at one point, so sliding friction cannot stop its spin. With an effective radius r the
torsion row transmits up to r mu N = r mu m g: the spin falls at alpha = r mu m g / I,
I = 2 m R^2 / 5, and stops at w0 / alpha. The reference refuses torsion on the CPU (ValueError),
so there is no run to compare with; the law is the reference's documented one.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

G = 9.81
DT = 1.0 / 240.0
R = 0.1  # [m] sphere radius
MU = 0.5
RADIUS = 0.02  # [m] effective torsional patch radius
W0 = 10.0  # [rad/s]
D6 = newton.ModelBuilder.JointDofConfig


def _sphere(radius=RADIUS, *, ground_radius=0.0, slide=False, free=False, adhesion=0.0, shape="sphere"):
    """The sphere on a D6 joint (z, optionally x and y; spin about z), or free; its spin DOF index."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    SolverSteel.register_custom_attributes(builder)
    cfg = newton.ModelBuilder.ShapeConfig(mu=MU, density=1000.0)
    xform = wp.transform(wp.vec3(0.0, 0.0, R), wp.quat_identity())
    body = builder.add_body(xform=xform, custom_attributes={"steel:rigid_body_angular_damping": 0.0}) if free \
        else builder.add_link(xform=xform)
    attributes = {"steel:min_torsional_patch_radius": radius, "steel:adhesion": adhesion}
    if shape == "sphere":
        builder.add_shape_sphere(body, radius=R, cfg=cfg, custom_attributes=attributes)
    else:
        mesh = newton.Mesh.create_box(R, R, R)
        builder.add_shape_mesh(body, mesh=mesh, cfg=cfg, custom_attributes=attributes)
    spin = 5
    if not free:
        # Sliding needs both tangents free: a tangent the joint holds has a friction row of zero Jacobian.
        linear = [D6(axis=(1.0, 0.0, 0.0)), D6(axis=(0.0, 1.0, 0.0))] if slide else []
        linear.append(D6(axis=(0.0, 0.0, 1.0)))
        joint = builder.add_joint_d6(-1, body, linear_axes=linear, angular_axes=[D6(axis=(0.0, 0.0, 1.0))],
                                     parent_xform=xform)
        builder.add_articulation([joint])
        spin = len(linear)
    builder.add_ground_plane(cfg=cfg)
    model = builder.finalize(device="cpu")
    radii = model.steel.min_torsional_patch_radius.numpy()
    radii[-1] = ground_radius  # the ground plane is the last shape
    model.steel.min_torsional_patch_radius.assign(radii)
    return model, spin


def _alpha(model, radius=RADIUS):
    """Spin deceleration r mu m g / I [rad/s^2] from the model's own mass and inertia."""
    mass = float(model.body_mass.numpy()[0])
    inertia = float(model.body_inertia.numpy()[0][2, 2])
    return radius * MU * mass * G / inertia


def _spin(model, spin, steps, *, start=None, solver=None, edit=None):
    """Spin rate [rad/s] after each step; ``start`` sets initial DOF velocities; ``edit(step)`` may write the model."""
    solver = solver or SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    qd = s0.joint_qd.numpy()
    for dof, value in (start or {spin: W0}).items():
        qd[dof] = value
    s0.joint_qd.assign(qd)
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    history = []
    for i in range(steps):
        if edit is not None:
            edit(i)
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        history.append(s0.joint_qd.numpy().copy())
    return np.array(history)


def test_spinning_sphere_decelerates_at_r_mu_m_g_over_i():
    """The spin falls by alpha dt per step (measured within 3.3e-6 relative; tolerance 1e-5 relative) and stops
    within one step of w0 / alpha."""
    model, spin = _sphere()
    alpha = _alpha(model)  # 24.5 rad/s^2: a stop after 0.41 s
    w = _spin(model, spin, int(1.2 * W0 / alpha / DT))[:, spin]
    steps = np.arange(1, len(w) + 1)
    moving = w > 0.05 * W0
    # The row holds its bound exactly once the sweep converges; 12 iterations on one row do (float32 left).
    np.testing.assert_allclose(W0 - w[moving], alpha * DT * steps[moving], rtol=1e-5)
    stop = (np.argmax(np.abs(w) < 1e-6) + 1) * DT
    assert stop == pytest.approx(W0 / alpha, abs=DT)  # atol one step [s]: the stop falls inside a step
    assert np.abs(w[-10:]).max() < 1e-6  # it stays stopped: no reversal


def test_contact_torsion_device_selects_the_same_device_prepared_rows():
    """The torsion rows are always built on the device, so ``contact_torsion_device`` True and False step bitwise alike
    (the reference's host preparation, ``False``, builds the same groups and rows as its device one)."""
    model, spin = _sphere()
    steps = 40
    host = _spin(model, spin, steps, solver=SolverSteel(model, contact_torsion_device=False))
    device = _spin(model, spin, steps, solver=SolverSteel(model, contact_torsion_device=True))
    assert np.array_equal(host, device)
    assert W0 - host[-1, spin] == pytest.approx(_alpha(model) * DT * steps, rel=5e-3)  # torsion acted in both


def test_no_radius_no_torsion_and_the_larger_radius_of_the_pair_counts():
    """Radius 0 on both shapes: the spin is untouched (one contact point, no lever arm); a radius only on
    the ground acts as one on the sphere."""
    model, spin = _sphere(radius=0.0)
    w = _spin(model, spin, 48)[:, spin]
    np.testing.assert_allclose(w, W0, rtol=1e-5)  # rtol: float32 round-off of the solve
    model, spin = _sphere(radius=0.0, ground_radius=RADIUS)
    w = _spin(model, spin, 48)[:, spin]
    assert W0 - w[-1] == pytest.approx(_alpha(model) * 48 * DT, rel=5e-3)


def test_radius_is_read_every_step():
    """Doubling the radius in the model's array mid-run doubles the deceleration from the next step."""
    model, spin = _sphere()

    def edit(i):
        if i == 24:
            model.steel.min_torsional_patch_radius.assign(np.full(model.shape_count, 2.0 * RADIUS, dtype=np.float32))

    w = _spin(model, spin, 48, edit=edit)[:, spin]
    alpha = _alpha(model)
    assert w[0] - w[23] == pytest.approx(alpha * 23 * DT, rel=5e-3)
    assert w[24] - w[47] == pytest.approx(2.0 * alpha * 23 * DT, rel=5e-3)


def test_sliding_and_spin_share_one_budget():
    """While the sphere slides at the Coulomb limit the torsion budget r (mu N - sliding) is zero: the spin
    holds until sliding friction has stopped it (v0 / (mu g)), then falls at alpha."""
    model, spin = _sphere(slide=True)
    v0 = 1.0  # [m/s]: slides for v0 / (mu g) = 0.204 s
    history = _spin(model, spin, 96, start={0: v0, spin: W0})
    v, w = history[:, 0], history[:, spin]
    t_slide = v0 / (MU * G)
    sliding = (np.arange(1, 97) * DT) < t_slide - 2 * DT
    np.testing.assert_allclose(v[sliding], v0 - MU * G * DT * np.arange(1, 97)[sliding], rtol=1e-3)
    # While sliding no torsion acts (atol 1e-3 rad/s: the budget is zero up to the sweep's residual).
    np.testing.assert_allclose(w[sliding], W0, atol=1e-3)
    # After the slide the full budget returns (the last 24 steps: 0.1 s of spin-down at alpha).
    assert w[-25] - w[-1] == pytest.approx(_alpha(model) * 24 * DT, rel=5e-3)


def test_free_body_contacts_get_no_torsion():
    """As the reference documents, a free single body's contacts get no torsion row: the spin is untouched."""
    model, spin = _sphere(free=True)
    w = _spin(model, spin, 48)[:, spin]
    np.testing.assert_allclose(w, W0, rtol=1e-4)  # rtol: float32 gyroscopic update of a free body


@pytest.mark.parametrize("options, error", [
    ({"contact_warmstart": True}, ValueError),
    ({"friction_mode": "bisection", "friction_anchor_beta": 0.0}, ValueError),
    ({"row_schedule": "phased"}, NotImplementedError),
])
def test_invalid_combinations_raise(options, error):
    """Torsion rejects warm start and coupled friction modes (ValueError) and non-interleaved schedules (NIE)."""
    model, _ = _sphere()
    with pytest.raises(error, match="torsion"):
        SolverSteel(model, **options)


def test_adhesion_with_torsion_and_unsupported_shapes_raise():
    """Adhesion with torsion is NotImplementedError (the seed); a radius on a triangle mesh is ValueError."""
    model, _ = _sphere(adhesion=1.0)
    with pytest.raises(NotImplementedError, match="torsion"):
        SolverSteel(model)
    model, _ = _sphere(shape="mesh")
    with pytest.raises(ValueError, match="MESH"):
        SolverSteel(model)
