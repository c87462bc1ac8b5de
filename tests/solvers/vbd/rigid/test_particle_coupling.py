"""SolverVBD two-way body–particle contact (steel.solvers.vbd.coupling) against known answers and,
side by side, Newton's SolverVBD on the same scenes.

* a cloth resting on a box that rests on the ground: the ground carries both weights, ``(M + m) g``;
* a heavy box dropped on a cloth hammock pinned at its corners sags and stops: its momentum stops
  changing, so the cloth carries ``M g``, and it follows the reference's trajectory;
* in zero gravity, a cloth thrown at a free box and particles striking one off-centre: total linear
  and angular momentum are kept (the contact forces are equal and opposite up to the Gauss-Seidel
  lag between the particle and the body sweeps).

Contacts come from ``newton.CollisionPipeline(model).collide(state, contacts)`` each step.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

G = 9.81  # [m/s²], the builder's default gravity magnitude
DT = 1.0 / 600.0  # [s]


def _cloth_on_box(box_mass=10.0, particle_mass=0.01, half=0.2):
    """A 0.3 m, 7x7-particle cloth lying on a ``2 half`` [m] box that rests on the ground (stiff ground, ke 1e5)."""
    b = newton.ModelBuilder()
    b.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(ke=1e5))
    body = b.add_body(xform=wp.transform((0.0, 0.0, half), wp.quat_identity()))
    b.add_shape_box(body, hx=half, hy=half, hz=half,
                    cfg=newton.ModelBuilder.ShapeConfig(density=box_mass / (2 * half) ** 3, ke=1e5))
    b.add_cloth_grid(pos=wp.vec3(-0.15, -0.15, 2 * half + 0.011), rot=wp.quat_identity(), vel=wp.vec3(0.0),
                     dim_x=6, dim_y=6, cell_x=0.05, cell_y=0.05, mass=particle_mass, tri_ke=1e4, tri_ka=1e4,
                     tri_kd=0.0, particle_radius=0.01)
    b.color()
    model = b.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 1e4, 0.0, 0.5
    return model


def _hammock(box_mass=2.0, half=0.05):
    """A 0.6 m cloth (7x7 particles) pinned at its corners at z = 1 m; a box released 0.1 m above its middle.

    The membrane damping (tri_kd 3000) lets the bounce die out within a second.
    """
    b = newton.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(-0.3, -0.3, 1.0), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=6, dim_y=6,
                     cell_x=0.1, cell_y=0.1, mass=0.01, tri_ke=1e4, tri_ka=1e4, tri_kd=3000.0, particle_radius=0.01)
    for corner in (0, 6, 42, 48):
        b.particle_mass[corner] = 0.0
    body = b.add_body(xform=wp.transform((0.0, 0.0, 1.0 + half + 0.11), wp.quat_identity()))
    b.add_shape_box(body, hx=half, hy=half, hz=half,
                    cfg=newton.ModelBuilder.ShapeConfig(density=box_mass / (2 * half) ** 3, ke=1e4, kd=0.0, mu=0.5))
    b.color()
    model = b.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 1e4, 0.0, 0.5
    return model


def _with_free_box(b, half):
    """Add a free 1 kg box of half-size ``half`` [m] at the origin and finalize (contacts ke 1e4, kd 0, mu 0.5)."""
    body = b.add_body(xform=wp.transform((0.0, 0.0, 0.0), wp.quat_identity()))
    b.add_shape_box(body, hx=half, hy=half, hz=half,
                    cfg=newton.ModelBuilder.ShapeConfig(density=1.0 / (2 * half) ** 3, ke=1e4, kd=0.0, mu=0.5))
    b.color()
    model = b.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 1e4, 0.0, 0.5
    return model


def _thrown_cloth(speed=1.0, half=0.1):
    """Zero gravity: a 0.12 m cloth (5x5 particles, 0.25 kg) in the y-z plane moving at +x ``speed`` [m/s]
    toward the middle of a free 1 kg box at rest."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    rot = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), -0.5 * np.pi)  # the grid's x axis along world z
    b.add_cloth_grid(pos=wp.vec3(-half - 0.05, -0.06, -0.06), rot=rot, vel=wp.vec3(speed, 0.0, 0.0), dim_x=4,
                     dim_y=4, cell_x=0.03, cell_y=0.03, mass=0.01, tri_ke=1e3, tri_ka=1e3, tri_kd=0.0,
                     particle_radius=0.01)
    return _with_free_box(b, half)


def _off_centre_particles(half=0.1):
    """Zero gravity: three 0.05 kg particles in a row at +x 1 m/s, 6 cm off the axis of a free 1 kg box."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    for k in range(3):
        b.add_particle((-half - 0.05 - 0.03 * k, 0.06, 0.0), (1.0, 0.0, 0.0), 0.05, radius=0.01)
    return _with_free_box(b, half)


def _run(model, cls, steps, every=0, **options):
    """Step ``steps`` times; returns (solver, last state, contacts, body_q before the last step, snapshots).

    Snapshots every ``every`` steps: (body_q, body_qd, particle_q, particle_qd) as numpy arrays.
    """
    solver = cls(model, **options)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    prev, snaps = None, []
    for i in range(steps):
        pipeline.collide(s0, contacts)
        prev = wp.clone(s0.body_q) if model.body_count else None
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        if every and (i + 1) % every == 0:
            snaps.append(tuple(None if a is None else a.numpy().copy()
                               for a in (s0.body_q, s0.body_qd, s0.particle_q, s0.particle_qd)))
    return solver, s0, contacts, prev, snaps


def _ground_load(solver, state, contacts, prev):
    """Vertical force the ground contacts put on the body [N] (collect_rigid_contact_forces)."""
    _, _, _, _, force, count = solver.collect_rigid_contact_forces(state.body_q, prev, contacts, DT)
    return float(force.numpy()[: int(count.numpy()[0]), 2].sum())


def _momenta(model, snap):
    """Total linear [kg·m/s] and angular momentum about the origin [kg·m²/s] of particles and body 0."""
    body_q, body_qd, q, qd = snap
    m = model.particle_mass.numpy()[:, None]
    mass = float(model.body_mass.numpy()[0])
    rot = np.array(wp.quat_to_matrix(wp.quat(*body_q[0, 3:]))).reshape(3, 3)
    com = body_q[0, :3] + rot @ model.body_com.numpy()[0]
    inertia = rot @ model.body_inertia.numpy()[0] @ rot.T
    p = (m * qd).sum(0) + mass * body_qd[0, :3]
    ang = (m * np.cross(q, qd)).sum(0) + mass * np.cross(com, body_qd[0, :3]) + inertia @ body_qd[0, 3:]
    return p.astype(np.float64), ang.astype(np.float64)


def test_cloth_on_a_box_loads_the_ground_with_both_weights():
    """Ground force on the box = (M + m_cloth) g within 1 % after 200 steps (10 kg box, 0.49 kg cloth).

    Soft ground contacts (penalty, ``rigid_contact_hard=False``), 10 iterations: ours 103.22 N for
    102.91 N (+0.3 %), Newton's SolverVBD 103.77 N (+0.8 %); the box stands within 1e-5 m of the
    reference's and the cloth sinks into the lid by its own weight over the contact stiffness,
    ``m g / ke`` per particle (1.78e-6 m), within 2e-7 m (ours and the reference's).
    """
    model = _cloth_on_box()
    weight = (float(model.body_mass.numpy()[0]) + float(model.particle_mass.numpy().sum())) * G
    depth = 0.01 * G / 5.5e4  # particle mass g / (mixed ke: mean of 1e4 and the lid's 1e5) [m]
    results = {}
    for name, cls in (("ours", SolverVBD), ("reference", newton.solvers.SolverVBD)):
        solver, state, contacts, prev, _ = _run(model, cls, 200, rigid_contact_hard=False)
        lid = state.body_q.numpy()[0, 2] + 0.2 + 0.01  # the box's top plus the particle radius [m]
        gap = state.particle_q.numpy()[:, 2] - lid
        results[name] = (_ground_load(solver, state, contacts, prev), state.body_q.numpy()[0, 2], gap.mean())
    load, z, gap = results["ours"]
    assert abs(load - weight) < 0.01 * weight, (load, weight)
    assert abs(results["reference"][0] - weight) < 0.01 * weight  # the reference agrees with the known answer
    assert abs(z - results["reference"][1]) < 1e-5
    assert abs(-gap - depth) < 2e-7, (gap, depth)


def test_cloth_on_a_box_with_hard_ground_contacts_converges_to_both_weights():
    """Hard (augmented-Lagrangian) ground contacts: (M + m) g within 1 % at 40 iterations (103.21 N for 102.91 N).

    The multiplier of the box's ground contacts catches up with the cloth's load over the iterations.
    At the default 10 the load still reads high, as on Newton's legacy path (``rigid_compliant_alm=False``,
    the seed's formulation of hard contacts): ours 115.4 N, the legacy path 119.7 N; the bound is that
    ours is off by no more than the legacy path (why: the test of the lid's lag below).
    """
    model = _cloth_on_box()
    weight = (float(model.body_mass.numpy()[0]) + float(model.particle_mass.numpy().sum())) * G
    load = _ground_load(*_run(model, SolverVBD, 200, iterations=40)[:4])
    assert abs(load - weight) < 0.01 * weight, (load, weight)
    load = _ground_load(*_run(model, SolverVBD, 200)[:4])
    legacy = _ground_load(*_run(model, newton.solvers.SolverVBD, 200, rigid_compliant_alm=False)[:4])
    assert abs(load - weight) <= abs(legacy - weight), (load, legacy, weight)


def test_cloth_on_a_box_with_hard_ground_contacts_and_history_is_within_one_percent_at_ten_iterations():
    """With ``rigid_contact_history`` the ground multiplier starts each step from the last one's (times α γ)
    instead of 0: (M + m) g within 1 % at the default 10 iterations (103.35 N for 102.91 N).

    Without history (the test above) every step rebuilds it from 0: the box dips 16 µm in the first sweep and
    climbs back while the multiplier grows, the cloth (swept before the box) lags the climb and still presses
    17 N on the lid at the last iterate, and the reported load is 115.4 N.
    """
    model = _cloth_on_box()
    weight = (float(model.body_mass.numpy()[0]) + float(model.particle_mass.numpy().sum())) * G
    solver = SolverVBD(model, rigid_contact_history=True)
    pipeline = newton.CollisionPipeline(model, contact_matching="latest")
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    for _ in range(200):
        pipeline.collide(s0, contacts)
        prev = wp.clone(s0.body_q)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
    load = _ground_load(solver, s0, contacts, prev)
    assert abs(load - weight) < 0.01 * weight, (load, weight)


def _cloth_on_box_loads(iterations, history, steps=200):
    """Cloth on a box on hard ground: (ground force up on the box, cloth force down on the lid [N], the box's
    and the cloth's m dv/dt along z over the last step [N], the model); the forces from ``contact_f``."""
    model = _cloth_on_box()
    solver = SolverVBD(model, iterations=iterations, **({"rigid_contact_history": True} if history else {}))
    pipeline = newton.CollisionPipeline(model, **({"contact_matching": "latest"} if history else {}))
    contacts = pipeline.contacts()
    obs = solver.observables({"contact_f"}, contacts=contacts)
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        body_qd, particle_qd = s0.body_qd.numpy()[0, 2], s0.particle_qd.numpy()[:, 2]
        solver.step(s0, s1, None, contacts, DT, observables=obs)
        s0, s1 = s1, s0
    f = obs.contact_f.numpy()
    n_rigid, n_soft = int(contacts.rigid_contact_count.numpy()[0]), int(contacts.soft_contact_count.numpy()[0])
    r0 = contacts.rigid_contact_max
    # Rigid rows hold the box's wrench on the ground (shape 0), soft rows the cloth's on the lid.
    ground = -float(f[:n_rigid, 2].sum())
    lid = -float(f[r0:r0 + n_soft, 2].sum())
    box_rate = float(model.body_mass.numpy()[0]) * (s0.body_qd.numpy()[0, 2] - body_qd) / DT
    cloth_rate = float((model.particle_mass.numpy() * (s0.particle_qd.numpy()[:, 2] - particle_qd)).sum()) / DT
    return ground, lid, box_rate, cloth_rate, model


def test_hard_ground_load_at_ten_iterations_is_the_box_balance_against_a_lagging_lid():
    """Why hard ground contacts report 115.4 N for (M + m) g = 102.91 N at 10 iterations without history,
    and what brings the report within 0.1 %.

    The report is not at fault: ``contact_f`` holds the forces of the solve's last iterate, and the box,
    at rest, balances them: ground = M g + lid within 1.5e-3 relative (measured 5.1e-4; 1.1e-4 while the
    particle contact's damper also pulled), the lid reading 17.28 N. The cloth rests too (its m dv/dt is 0
    within 3e-4 N, measured 2.2e-4), so the force its own
    last sweep put on the lid is its weight, 4.81 N. The two sides of the lid contact are one Gauss-Seidel
    sweep apart: the ground multiplier restarts from 0 every step, the box dips and climbs back over the
    iterations, the cloth (swept before the box) settles on the box's previous iterate, and the box's climb
    after that sweep presses the lid 12.5 N harder than the cloth is pressed. No reading of the ground
    force can remove an action and a reaction that differ; converging the multiplier does. With
    ``rigid_contact_history`` (the multiplier warm-started from the last step's) and 20 iterations the
    load is (M + m) g within 6e-4 relative (measured 1.8e-4).
    """
    ground, lid, box_rate, cloth_rate, model = _cloth_on_box_loads(10, history=False)
    weight_box = float(model.body_mass.numpy()[0]) * G
    weight_cloth = float(model.particle_mass.numpy().sum()) * G
    assert ground == pytest.approx(115.4, rel=1e-3), ground  # [N], 115.431 measured
    assert lid == pytest.approx(17.28, rel=1e-3), lid  # [N], 17.281 measured
    assert abs(ground - lid - box_rate - weight_box) < 1.5e-3 * weight_box, (ground, lid, box_rate)
    assert abs(cloth_rate) < 3e-4, cloth_rate  # [N]
    ground, *_ = _cloth_on_box_loads(20, history=True)
    assert abs(ground - weight_box - weight_cloth) < 6e-4 * (weight_box + weight_cloth), ground


def test_heavy_box_on_a_pinned_hammock_sags_and_stops_as_the_reference():
    """A 2 kg box (4.4x the 0.45 kg of free cloth) dropped 0.1 m onto a cloth pinned at its corners.

    Side by side with Newton's SolverVBD for 0.8 s: the box's height every 0.1 s within 1e-4 m of the
    reference's (measured within 3.1e-5 m). It sags (its bottom ends 2.7 cm below the pins), stays
    above the cloth (no particle passes through its bottom) and stops: over the last 0.1 s its velocity
    changes by under 1 % of g x 0.1 s, so the particle contacts carry M g within 1 % (momentum balance).
    """
    model = _hammock()
    ours = _run(model, SolverVBD, 480, every=60)[4]
    ref = _run(model, newton.solvers.SolverVBD, 480, every=60)[4]
    z = np.array([s[0][0, 2] for s in ours])
    z_ref = np.array([s[0][0, 2] for s in ref])
    assert np.abs(z - z_ref).max() < 1e-4, np.c_[z, z_ref]
    body_q, body_qd, q, _ = ours[-1]
    bottom = body_q[0, 2] - 0.05
    assert bottom < 1.0 - 0.02  # sagged [m]
    under = np.abs(q[:, :2] - body_q[0, :2]).max(axis=1) < 0.05  # particles under the box's footprint
    assert under.any() and (q[under, 2] < bottom).all()
    dv = body_qd[0, 2] - ours[-2][1][0, 2]
    assert abs(dv) < 0.01 * G * 0.1, dv
    assert abs(body_qd[0, 2]) < 5e-3  # at rest [m/s]


def test_cloth_thrown_at_a_free_box_keeps_total_linear_momentum():
    """Zero gravity: a 0.25 kg cloth at 1 m/s hits a 1 kg box head on; total momentum stays 0.25 kg·m/s within 1.5 %.

    Measured +0.9 % (Newton's SolverVBD +2.3 %): the particle and body sweeps see each other one
    iteration apart, so their forces are equal and opposite only as the iterations converge. The box
    leaves between the perfectly inelastic and elastic speeds (0.2 and 0.4 m/s), at 0.2266 m/s, within
    2 % of the reference's 0.2293 m/s.
    """
    model = _thrown_cloth()
    p0 = _momenta(model, tuple(a.numpy() for a in (model.body_q, model.body_qd, model.particle_q,
                                                   model.particle_qd)))[0]
    snaps = _run(model, SolverVBD, 120, every=60)[4]
    ref = _run(model, newton.solvers.SolverVBD, 120, every=60)[4]
    p = _momenta(model, snaps[-1])[0]
    assert abs(p0[0] - 0.25) < 1e-6
    assert np.linalg.norm(p - p0) < 0.015 * p0[0], (p, p0)
    v, v_ref = snaps[-1][1][0, 0], ref[-1][1][0, 0]
    assert 0.2 < v < 0.4
    assert abs(v - v_ref) < 0.02 * v_ref, (v, v_ref)
    assert abs(snaps[-1][1][0, 0] - snaps[-2][1][0, 0]) < 1e-6  # separated: the box coasts


def test_particles_striking_a_box_off_centre_spin_it_and_keep_angular_momentum():
    """Zero gravity: three 0.05 kg particles at 1 m/s hit a free 1 kg box 6 cm off its centre.

    The box takes the particles' momentum and its moment and spins about z. Kept over 0.4 s: linear
    momentum along x within 0.2 % (measured -0.07 %), the sideways momentum friction makes under 4 %
    of it (3.2 %; Newton's 2.5 %), angular momentum about the origin within 5 % (-4.0 %; Newton's
    -2.8 %). The box's velocity and spin within 2 % of the reference's (0.17 m/s, -1.28 rad/s).
    """
    model = _off_centre_particles()
    start = tuple(a.numpy() for a in (model.body_q, model.body_qd, model.particle_q, model.particle_qd))
    p0, l0 = _momenta(model, start)
    ours = _run(model, SolverVBD, 240, every=240)[4][-1]
    ref = _run(model, newton.solvers.SolverVBD, 240, every=240)[4][-1]
    p, ang = _momenta(model, ours)
    assert abs(p[0] - p0[0]) < 0.002 * p0[0]
    assert abs(p[1]) < 0.04 * p0[0]
    assert np.linalg.norm(ang - l0) < 0.05 * abs(l0[2]), (ang, l0)
    v, v_ref = ours[1][0], ref[1][0]
    assert v[5] < -1.0  # spinning about -z, as r × p of the strike says
    assert abs(v[0] - v_ref[0]) < 0.02 * abs(v_ref[0]) and abs(v[5] - v_ref[5]) < 0.02 * abs(v_ref[5]), (v, v_ref)


def test_full_body_lists_scan_every_record_and_report_it():
    """With room for 4 of the 49 contacts per body, the step scans instead: the same trajectory bitwise
    (same records in the same order on the CPU), and the contacts past the list are counted and warned."""
    model = _cloth_on_box()
    full = _run(model, SolverVBD, 20, rigid_contact_hard=False)
    small = _run(model, SolverVBD, 20, rigid_contact_hard=False, rigid_body_particle_contact_buffer_size=4)
    assert np.array_equal(full[1].body_q.numpy(), small[1].body_q.numpy())
    assert np.array_equal(full[1].particle_q.numpy(), small[1].particle_q.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert full[0].check_body_particle_contact_overflow() == 0
    with pytest.warns(newton.NewtonWarning, match="rigid_body_particle_contact_buffer_size"):
        assert small[0].check_body_particle_contact_overflow() == 20 * (49 - 4)


def test_coupling_is_built_only_where_particles_can_touch_a_dynamic_body():
    """Coupled: a dynamic body's shape collides with particles. Not coupled: no particle collision on it, or bodies
    integrated by another solver (one-way)."""
    def model(collide_particles):
        b = newton.ModelBuilder()
        body = b.add_body(xform=wp.transform((0, 0, 1), wp.quat_identity()))
        cfg = newton.ModelBuilder.ShapeConfig(has_shape_collision=False, has_particle_collision=collide_particles)
        b.add_shape_sphere(body, radius=0.1, cfg=cfg)
        b.add_particle((0, 0, 0.5), (0, 0, 0), 0.1)
        b.color()
        return b.finalize(device="cpu")

    assert SolverVBD(model(True)).coupling is not None
    assert SolverVBD(model(False)).coupling is None
    assert SolverVBD(model(True), integrate_with_external_rigid_solver=True).coupling is None


def _particle_on_box(kind):
    """A 0.01 kg particle resting on a 0.2 m box (``kind``: static shape, kinematic or dynamic body) on the ground;
    contact ke 1e4 (particles) and 1e5 (shapes), no damping or friction (kd 0 on the shapes too)."""
    b = newton.ModelBuilder()
    b.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(ke=1e5, kd=0.0))
    cfg = newton.ModelBuilder.ShapeConfig(density=1000.0, ke=1e5, kd=0.0)
    at = wp.transform((0.0, 0.0, 0.1), wp.quat_identity())
    if kind == "static":
        b.add_shape_box(-1, xform=at, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    else:
        b.add_shape_box(b.add_body(xform=at, is_kinematic=kind == "kinematic"), hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    b.add_particle((0.0, 0.0, 0.21), (0.0, 0.0, 0.0), 0.01, radius=0.01)
    b.color()
    model = b.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 1e4, 0.0, 0.0
    return model


@pytest.mark.parametrize(("kind", "beta"), [("static", 1e4), ("static", 1e7), ("kinematic", 1e4), ("dynamic", 1e4),
                                            ("dynamic", 1e7)])
def test_penalty_ramp_of_particle_contacts_follows_the_reference(kind, beta):
    """With a linear AVBD beta > 0 every particle–shape contact ramps its penalty as Newton's SolverVBD does: from
    ``rigid_contact_k_start`` (100 N/m) at every step, by ``beta x depth`` before each sweep, up to the mixed ke.

    The particle's depth in the box's lid over 60 steps (0.026-0.64 mm at the end, as the soft seed gives way)
    follows the reference's within 1 % of the deepest (measured within 0.05 %). Depth, not height: the dynamic
    box's own landing on the ground differs by up to 14 um (body–body contacts) and the particle rides it, its
    depth off by up to 0.7 % for a few steps at beta 1e7; on the dynamic box the whole run is held to 2 % and the
    last 20 steps, after that landing, to 1 % (measured 0.3 %).
    """
    sink = {}
    for name, cls in (("ours", SolverVBD), ("reference", newton.solvers.SolverVBD)):
        snaps = _run(_particle_on_box(kind), cls, 60, every=1, rigid_avbd_beta=beta, rigid_contact_k_start=100.0,
                     rigid_contact_hard=False)[4]
        lid = [0.2 if kind == "static" else s[0][0, 2] + 0.1 for s in snaps]  # box top [m]
        sink[name] = np.array([top + 0.01 - s[2][0, 2] for top, s in zip(lid, snaps)], dtype=np.float64)
    assert sink["reference"][-1] > 2e-5  # the ramp shows: ke alone would hold the particle at 1.8e-6 m
    err = np.abs(sink["ours"] - sink["reference"]) / sink["reference"].max()
    if kind == "dynamic":
        assert err.max() < 0.02 and err[-20:].max() < 0.01, err
    else:
        assert err.max() < 0.01, err


def test_a_penalty_that_does_not_ramp_holds_the_particle_at_its_seed_depth():
    """beta 1e-9: the penalty stays at ``rigid_contact_k_start`` = 100 N/m, so after 1 s the particle rests
    ``m g / k`` = 0.981 mm deep (within 1 um) where the full ke would hold it at 1.8 um."""
    snaps = _run(_particle_on_box("static"), SolverVBD, 600, every=600, rigid_avbd_beta=1e-9,
                 rigid_contact_k_start=100.0)[4]
    depth = 0.21 - float(snaps[-1][2][0, 2])
    assert abs(depth - 0.01 * G / 100.0) < 1e-6, depth


def test_shipped_cloth_boxes_scene_drapes_over_standing_boxes():
    """`steel run cloth_boxes` / the benchmark's scene (8x8 quads here) after 0.6 s: the cloth lies over the four
    boxes (34 of 81 particles above their tops, none more than 2.2 cm over them; asserted 34 ± 2 and under
    2.5 cm), the boxes stand upright within 3 mm of their height (1.8 mm sunk into the ke 1e5 ground under
    their load) and within 5e-3 of their orientation (quaternion x, y, z; measured 1.7e-3), nothing passes
    through the ground, and no body's particle list overflows."""
    from steel.app.particle_scenes import BOX_HALF, build_particle_scene

    sc = build_particle_scene("cloth_boxes", 8, "cpu")
    solver, state, _, _, _ = _run_scene(sc, 360)
    body_q = state.body_q.numpy()
    assert np.isfinite(body_q).all() and np.isfinite(state.particle_q.numpy()).all()
    assert np.abs(body_q[:, 2] - BOX_HALF).max() < 3e-3
    assert np.abs(body_q[:, 3:6]).max() < 5e-3  # upright: quaternion xyz near 0
    q = state.particle_q.numpy()
    assert q[:, 2].min() > 0.0
    on_top = q[:, 2] > 2 * BOX_HALF
    assert abs(int(on_top.sum()) - 34) <= 2  # the cloth drapes over the boxes, not beside them
    assert q[:, 2].max() < 2 * BOX_HALF + 0.025
    assert solver.check_body_particle_contact_overflow() == 0


def _run_scene(sc, steps):
    """Step a ``steel.app.particle_scenes`` scene ``steps`` times with our solver (its own options and dt)."""
    solver = SolverVBD(sc.model, **sc.solver_options)
    pipeline = newton.CollisionPipeline(sc.model)
    contacts = pipeline.contacts()
    s0, s1 = sc.model.state(), sc.model.state()
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, sc.dt)
        s0, s1 = s1, s0
    return solver, s0, contacts, None, None
