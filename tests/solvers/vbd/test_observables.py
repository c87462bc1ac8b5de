"""SolverVBD's contact_f observable: Newton's allocation and validation, a wrench per contact, no effect on the run."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

G = 9.81
DT = 1.0 / 60.0


def _scene(box=True, static_box=False, top_box=False, cloth=False):
    """Ground plane; a 1 kg box (0.2 m cube) resting on it, optionally a second box and a 0.25 kg cloth on top."""
    b = newton.ModelBuilder()
    b.add_ground_plane()
    cfg = newton.ModelBuilder.ShapeConfig(density=125.0)
    top = 0.2
    if static_box:
        b.add_shape_box(-1, xform=wp.transform((0.0, 0.0, 0.1), wp.quat_identity()), hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    elif box:
        body = b.add_body(xform=wp.transform((0.3, 0.2, 0.1), wp.quat_identity()))
        b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    if top_box:
        body = b.add_body(xform=wp.transform((0.3, 0.2, 0.3), wp.quat_identity()))
        b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
        top = 0.4
    if cloth:
        x0 = 0.24 if not static_box else -0.06
        y0 = 0.14 if not static_box else -0.06
        # 25 particles of 10 g, 5 mm radius, laid at the rest depth m g / ke of the mixed contact stiffness.
        b.add_cloth_grid(pos=wp.vec3(x0, y0, top + 0.0049), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0),
                         dim_x=4, dim_y=4, cell_x=0.03, cell_y=0.03, mass=0.01, tri_ke=1e3, tri_ka=1e3, tri_kd=1e-2,
                         particle_radius=0.005)
    b.color()
    return b.finalize(device="cpu")


def _run(model, steps, observe=True, iterations=10, **options):
    solver = SolverVBD(model, iterations=iterations, **options)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    obs = solver.observables({"contact_f"}, contacts=contacts) if observe else None
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT, observables=obs)
        s0, s1 = s1, s0
    return solver, contacts, obs, s0, s1


def test_supported_observables_and_unsupported_kind():
    """contact_f is the one supported kind; another raises ValueError naming it, as Newton's allocator does."""
    model = _scene()
    solver = SolverVBD(model)
    assert solver.SUPPORTED_OBSERVABLES == frozenset({"contact_f"})
    assert solver.supported_observables == frozenset({"contact_f"})
    contacts = newton.CollisionPipeline(model).contacts()
    obs = solver.observables({solver.ObservableKind.CONTACT_F}, contacts=contacts)
    assert obs.contact_f.shape == (contacts.rigid_contact_max + contacts.soft_contact_max,)
    with pytest.raises(ValueError, match="body_qdd"):
        solver.observables({"body_qdd"}, contacts=contacts)


def test_resting_box_contact_forces_sum_to_its_weight():
    """A resting 1 kg box: the rows (force on the static plane, shape 0) sum to -m g; torques about the origin.

    Measured: sum 9.810057 N for m g 9.81 N (rel. 5.8e-6), limit rel. 2e-5; lateral force and the torque
    about the COM < 1e-4 N, N·m. Newton's SolverVBD reports 9.8766 N on the same scene (the same layout
    and torque convention, about the origin for a static shape 0).
    """
    model = _scene()
    _, contacts, obs, s, _ = _run(model, 60)
    n = int(contacts.rigid_contact_count.numpy()[0])
    f = obs.contact_f.numpy()
    assert n == 4 and not f[n:].any()
    total = f[:n].sum(axis=0)
    assert total[2] == pytest.approx(-G, rel=2e-5)
    assert np.abs(total[:2]).max() < 1e-4
    com = s.body_q.numpy()[0, :3]
    # Torque about the origin = com × total force plus the torque about the COM, which balances to zero.
    assert np.abs(total[3:] - np.cross(com, total[:3])).max() < 1e-4


def test_cloth_on_a_box_reports_its_weight_on_the_box():
    """A 0.25 kg cloth on a dynamic 1 kg box: soft rows sum to the cloth's weight on the box, rigid rows to both.

    A converged coupled solve (200 iterations, 30 steps). An unconverged cloth's final-configuration forces
    are not its weight: at 10 iterations on a static box they sum to 11.80 N for 2.45 N (Newton's SolverVBD
    reports 11.80 N too), at 100 iterations 2.4534 N. Measured: soft rel. 2.1e-3 (limit 6e-3), box–ground
    rel. 4.3e-4 of (1 + 0.25) g (limit 1.5e-3). The soft rows' torques are about the box's COM.
    """
    model = _scene(cloth=True)
    _, contacts, obs, s, _ = _run(model, 30, iterations=200)
    f = obs.contact_f.numpy()
    rows = contacts.rigid_contact_max
    cloth_weight = model.particle_mass.numpy().sum() * G
    assert f[rows:, 2].sum() == pytest.approx(-cloth_weight, rel=6e-3)
    assert f[:rows, 2].sum() == pytest.approx(-(1.0 + model.particle_mass.numpy().sum()) * G, rel=1.5e-3)
    # Each soft row's torque is r × F about the box's COM with r from the COM to the contact point on the box top.
    soft = f[rows:rows + int(contacts.soft_contact_count.numpy()[0])]
    com = s.body_q.numpy()[0, :3]
    points = contacts.soft_contact_body_pos.numpy()[: len(soft)] + com  # the box has not turned (identity)
    np.testing.assert_allclose(soft[:, 3:], np.cross(points - com, soft[:, :3]), atol=1e-4)


def test_rigid_rows_agree_with_collect_rigid_contact_forces():
    """Two stacked boxes: each rigid row is minus collect_rigid_contact_forces' force on body 1, at shape 0's anchor.

    The body–body rows carry the top box's weight: measured rel. 6e-4 at 40 iterations (limit 2e-3; at 10
    iterations the settled stack reports 3.4 % less, the solve's own multipliers, not the observable).
    """
    model = _scene(top_box=True)
    solver, contacts, obs, s_prev, s = _run(model, 20, iterations=40)
    prev = wp.clone(solver.body_q_prev)
    pipeline = newton.CollisionPipeline(model)
    pipeline.collide(s_prev, contacts)
    solver.step(s_prev, s, None, contacts, DT, observables=obs)
    body0, body1, p0, _, f1, count = solver.collect_rigid_contact_forces(s.body_q, prev, contacts, DT)
    n = int(count.numpy()[0])
    assert n == int(contacts.rigid_contact_count.numpy()[0]) and n >= 8
    f = obs.contact_f.numpy()[:n]
    np.testing.assert_array_equal(f[:, :3], -f1.numpy()[:n])
    b0, q = body0.numpy()[:n], s.body_q.numpy()
    origin = np.where(b0[:, None] >= 0, q[np.maximum(b0, 0), :3], 0.0)  # COM = body origin for these boxes
    np.testing.assert_allclose(f[:, 3:], np.cross(p0.numpy()[:n] - origin, f[:, :3]), atol=1e-4)
    between = (b0 >= 0) & (body1.numpy()[:n] >= 0)
    assert between.any()  # body–body rows are reported, not only the ground's
    assert f[between, 2].sum() == pytest.approx(-G, rel=2e-3)  # the top box's weight on the bottom one


def test_trajectory_is_bitwise_the_same_with_and_without_observables():
    """Observables only read the solve: stacked boxes with a cloth on top give bitwise the same states either way."""
    model = _scene(top_box=True, cloth=True)
    *_, a, _ = _run(model, 15, observe=True)
    *_, b, _ = _run(model, 15, observe=False)
    for name in ("body_q", "body_qd", "particle_q", "particle_qd"):
        np.testing.assert_array_equal(getattr(a, name).numpy(), getattr(b, name).numpy(), err_msg=name)


def test_external_rigid_solver_leaves_rigid_rows_zero():
    """With integrate_with_external_rigid_solver the body–body rows stay zero; the cloth's rows on the box remain."""
    model = _scene(static_box=False, cloth=True)
    _, contacts, obs, *_ = _run(model, 3, integrate_with_external_rigid_solver=True)
    f = obs.contact_f.numpy()
    rows = contacts.rigid_contact_max
    assert int(contacts.rigid_contact_count.numpy()[0]) > 0 and not f[:rows].any()
    assert f[rows:, 2].sum() < 0.0


def test_foreign_container_is_refused_before_the_step():
    """A container allocated by another solver raises ValueError and the output state is left as it was."""
    model = _scene()
    ours, other = SolverVBD(model), SolverVBD(model)
    contacts = newton.CollisionPipeline(model).contacts()
    foreign = other.observables({"contact_f"}, contacts=contacts)
    s0, s1 = model.state(), model.state()
    s1.body_q.zero_()
    with pytest.raises(ValueError):
        ours.step(s0, s1, None, contacts, DT, observables=foreign)
    assert not s1.body_q.numpy().any()


def test_sensor_contact_reads_the_box_weight():
    """newton.sensors.SensorContact fed by our contact_f: the total force on a resting 1 kg box is m g upward.

    Measured: 9.810057 N (rel. 5.8e-6), limit rel. 2e-5; lateral < 1e-4 N.
    """
    from newton.sensors import SensorContact

    model = _scene()
    sensor = SensorContact(model, sensing_bodies=[0], request_contact_attributes=False)
    solver, contacts, obs, state, _ = _run(model, 60)
    sensor.update(state, contacts, observables=obs)
    total = sensor.total_force.numpy()[0]
    assert total[2] == pytest.approx(G, rel=2e-5)
    assert np.abs(total[:2]).max() < 1e-4


def test_owned_pipeline_contacts_size_and_fill_the_observable():
    """With a solver-owned pipeline, observables() defaults to solver.contacts and step(contacts=None) fills it."""
    model = _scene()
    solver = SolverVBD(model, collision_pipeline=newton.CollisionPipeline(model))
    obs = solver.observables({"contact_f"})
    assert obs.contacts is solver.contacts
    s0, s1 = model.state(), model.state()
    for _ in range(60):
        solver.step(s0, s1, None, None, DT, observables=obs)
        s0, s1 = s1, s0
    assert obs.contact_f.numpy()[:, 2].sum() == pytest.approx(-G, rel=2e-5)  # as with a caller-owned pipeline


def _box_holding_a_particle(ground=True):
    """A 1 kg box (0.2 m cube) on the ground holding a 0.5 kg particle 0.1 m above its top by an attachment."""
    b = newton.ModelBuilder()
    if ground:
        b.add_ground_plane()
    body = b.add_body(xform=wp.transform((0.0, 0.0, 0.1), wp.quat_identity()))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=newton.ModelBuilder.ShapeConfig(density=125.0))
    p = b.add_particle((0.0, 0.0, 0.3), (0.0, 0.0, 0.0), 0.5, radius=0.01)
    b.add_attachment_particle_body(p, body, body_point=(0.0, 0.0, 0.2), stiffness=1e4, damping=5.0)
    b.color()
    return b.finalize(device="cpu")


def test_attachment_load_reaches_the_ground_rows_and_has_no_row_of_its_own():
    """contact_f has one row per contact record; an attachment is not one (Newton 1.8.0: "one wrench per body-body
    contact ... and per rigid-soft contact record"). Its load shows where it goes physically: the box's ground
    rows carry box and particle, (1 + 0.5) g; no soft row is written.

    Measured on this scene at 10 iterations after 120 steps, rigid rows sum 14.8186 N, Newton's SolverVBD
    14.8259 N (both unconverged: 0.7 % over, 3 iterations 16.06 N); at 40 iterations ours 14.714825 N for
    14.715 N (rel. 1.2e-5), limit rel. 4e-5. In free fall (no ground) every row is zero, as in Newton's.
    """
    model = _box_holding_a_particle()
    _, contacts, obs, state, _ = _run(model, 120, iterations=40)
    f = obs.contact_f.numpy()
    rows = contacts.rigid_contact_max
    assert int(contacts.soft_contact_count.numpy()[0]) == 0 and not f[rows:].any()
    assert f[:rows, 2].sum() == pytest.approx(-1.5 * G, rel=4e-5)
    assert 1.0 - state.particle_q.numpy()[0, 2] / 0.3 < 0.01  # the particle is held up (0.49 mm below its anchor)
    _, _, obs, *_ = _run(_box_holding_a_particle(ground=False), 5)
    assert not obs.contact_f.numpy().any()
