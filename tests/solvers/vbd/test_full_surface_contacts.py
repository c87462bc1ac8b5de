"""SolverVBD's full-surface rigid–soft contacts and the body–particle log barrier
(steel.solvers.vbd.particles.contacts).

Known answers, and side by side with Newton's SolverVBD on the same scenes:

* a cloth resting on a box with ``CollisionPipeline(enable_rigid_soft_full_surface_contact=True)``: the
  soft rows of ``contact_f`` (particle, edge and face records together) carry the cloth's weight;
* a box dropped edge-first between the vertices of a coarse fixed cloth: particle records alone let
  it fall through, edge and face records hold it at ``M g`` over the records' stiffness;
* in zero gravity, a free box thrown edge-first at a free coarse cloth: total linear momentum is kept;
* ``rigid_soft_contact_use_log_barrier=True``: a particle resting on a shape sits at the barrier's
  equilibrium distance ``k τ²/(m g)``, never crosses the surface on the way, and the law's force is
  continuous where the barrier joins the penalty.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD
from steel.solvers.vbd.particles.contacts import contact_force_hessian

G = 9.81  # [m/s²], the builder's default gravity magnitude
DT = 1.0 / 600.0  # [s]


def _cloth_on_box():
    """A 0.25 kg cloth (25 particles of 10 g, radius 5 mm, 3 cm cells) lying on a free 1 kg, 0.2 m box on the ground."""
    b = newton.ModelBuilder()
    b.add_ground_plane()
    body = b.add_body(xform=wp.transform((0.3, 0.2, 0.1), wp.quat_identity()))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=newton.ModelBuilder.ShapeConfig(density=125.0))
    b.add_cloth_grid(pos=wp.vec3(0.24, 0.14, 0.2049), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=4, dim_y=4,
                     cell_x=0.03, cell_y=0.03, mass=0.01, tri_ke=1e3, tri_ka=1e3, tri_kd=1e-2, particle_radius=0.005)
    b.color()
    return b.finalize(device="cpu")


def _edge_on_coarse_cloth(gravity=-G, speed=0.0, fixed=True):
    """A 3x3-particle cloth (0.4 m cells) at z 0 and a 1 kg, 0.2 m box turned 45° about x, its lowest edge along x
    at y -0.2 m (midway between two rows of particles) and 1 cm above the cloth, moving at ``-speed`` [m/s] in z.

    ``fixed``: the particles have zero mass (the cloth cannot move); else 0.1 kg each. Contacts ke 1e4 N/m, no
    damping, no friction. The box is narrower than the 0.4 m between the particle rows: particle contacts cannot
    catch it.
    """
    b = newton.ModelBuilder(gravity=(0.0, 0.0, gravity))
    b.add_cloth_grid(pos=wp.vec3(-0.4, -0.4, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=2, dim_y=2,
                     cell_x=0.4, cell_y=0.4, mass=0.0 if fixed else 0.1, tri_ke=1e4, tri_ka=1e4, tri_kd=0.0,
                     particle_radius=0.01)
    rot = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), 0.25 * np.pi)
    body = b.add_body(xform=wp.transform((0.0, -0.2, 0.1 * np.sqrt(2.0) + 0.02), rot))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1,
                    cfg=newton.ModelBuilder.ShapeConfig(density=1.0 / 0.2 ** 3, ke=1e4, kd=0.0, mu=0.0))
    b.body_qd[body] = (0.0, 0.0, -speed, 0.0, 0.0, 0.0)
    b.color()
    model = b.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 1e4, 0.0, 0.0
    return model


def _run(model, cls, steps, *, full_surface=True, observe=False, every=0, dt=DT, **options):
    """Collide then step ``steps`` times; returns (solver, final state, contacts, observables, snapshots)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reference's notices about its deprecated options
        solver = cls(model, **options)
    pipeline = newton.CollisionPipeline(model, enable_rigid_soft_full_surface_contact=full_surface)
    contacts = pipeline.contacts()
    obs = solver.observables({"contact_f"}, contacts=contacts) if observe else None
    s0, s1 = model.state(), model.state()
    snaps = []
    for i in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, dt, observables=obs)
        s0, s1 = s1, s0
        if every and (i + 1) % every == 0:
            snaps.append(tuple(None if a is None else a.numpy().copy()
                               for a in (s0.body_q, s0.body_qd, s0.particle_q, s0.particle_qd)))
    return solver, s0, contacts, obs, snaps


def _soft_rows(contacts, obs):
    """The live soft rows of contact_f and each record's number of particles (1 particle, 2 edge, 3 face)."""
    n = int(contacts.soft_contact_count.numpy()[0])
    rows = obs.contact_f.numpy()[contacts.rigid_contact_max:contacts.rigid_contact_max + n]
    return rows, (contacts.soft_contact_indices.numpy()[:n] >= 0).sum(axis=1)


def test_cloth_on_a_box_puts_its_weight_on_the_box_through_all_records():
    """A 0.25 kg cloth resting on a free box with full-surface contacts: the soft rows sum to its weight.

    Compliant formulation (``rigid_compliant_alm=True``, the reference's default), 200 iterations, 30 steps of
    1/60 s (a converged solve, as in test_observables.py's particle-only twin). The
    113 records are 25 particle, 56 edge and 32 face records, all summed (as the reference does), and edge and
    face records carry most of the load. Measured: rel. error of the sum ours 5.6e-4, Newton's SolverVBD 9.0e-5
    (limit 1.5e-3 for both).
    """
    model = _cloth_on_box()
    weight = model.particle_mass.numpy().sum() * G
    sums = {}
    for cls in (SolverVBD, newton.solvers.SolverVBD):
        options = {"rigid_compliant_alm": True} if cls is SolverVBD else {}
        _, _, contacts, obs, _ = _run(model, cls, 30, observe=True, dt=1.0 / 60.0, iterations=200, **options)
        rows, kinds = _soft_rows(contacts, obs)
        sums[cls] = rows[:, 2].sum()
        assert np.bincount(kinds, minlength=4)[1:].tolist() == [25, 56, 32]
        assert rows[kinds > 1, 2].sum() < -0.5 * weight  # edges and faces: more than half the load
    for total in sums.values():
        assert total == pytest.approx(-weight, rel=1.5e-3), sums


def test_box_edge_falls_through_coarse_cloth_with_particle_contacts_and_rests_with_full_surface():
    """A 1 kg box dropped edge-first between the particles of a fixed coarse cloth.

    Particle records only: no particle is near the edge, so the box falls through (its edge 0.5 m below the
    cloth after 0.5 s). Full-surface: edge and face records hold it; at rest the soft rows push it up with
    ``M g`` (rel. 5e-3; measured -1.9e-3: without damping the box still rocks a little) and the edge sits
    ``M g / (3 k)`` inside the 1 cm particle radius over the three records in contact (9.673 mm; measured
    9.663 mm, limit 0.03 mm). Newton's SolverVBD gives the same height (measured 9.6642 mm against ours
    9.6634 mm, limit 2e-3 mm).
    """
    model = _edge_on_coarse_cloth()
    lowest = 0.1 * np.sqrt(2.0)  # [m] from the box's centre to its lowest edge
    _, s, _, _, _ = _run(model, SolverVBD, 300, full_surface=False)
    assert s.body_q.numpy()[0, 2] - lowest < -0.5
    _, s, contacts, obs, _ = _run(model, SolverVBD, 300, observe=True)
    rows, kinds = _soft_rows(contacts, obs)
    assert (kinds > 1).all() and len(rows) == 3
    # The rows hold the force on the box (Newton's convention: the soft feature's push on the shape's body).
    assert rows[:, 2].sum() == pytest.approx(G, rel=5e-3)
    edge = s.body_q.numpy()[0, 2] - lowest
    assert edge == pytest.approx(0.01 - G / (3 * 1e4), abs=3e-5)
    _, s_ref, _, _, _ = _run(model, newton.solvers.SolverVBD, 300)
    assert s_ref.body_q.numpy()[0, 2] - lowest == pytest.approx(edge, abs=2e-6)


def test_box_thrown_edge_first_at_a_free_coarse_cloth_keeps_linear_momentum():
    """Zero gravity: a 1 kg box at 1 m/s hits a free 0.9 kg coarse cloth edge-first between its particles.

    Only edge and face records touch (no particle is near the edge). Sampled every 20 steps over 0.2 s, total
    linear momentum 1 kg·m/s is kept within 1e-4 kg·m/s (measured 3.4e-5: each record's force on the box is
    minus the sum of its particles' shares, up to the Gauss-Seidel lag between the sweeps), and the box leaves
    at 0.48 m/s, having given momentum to the cloth through the records.
    """
    model = _edge_on_coarse_cloth(gravity=0.0, speed=1.0, fixed=False)
    mass = np.r_[model.body_mass.numpy(), model.particle_mass.numpy()]

    def momentum(snap):
        return mass[0] * snap[1][0, :3] + (mass[1:, None] * snap[3]).sum(axis=0)

    _, _, _, _, snaps = _run(model, SolverVBD, 120, every=20)
    p = np.array([momentum(s) for s in snaps])
    assert np.abs(p - np.array([0.0, 0.0, -1.0])).max() < 1e-4, p
    assert -0.6 < snaps[-1][1][0, 2] < -0.4  # the box lost speed to the cloth [m/s]


def _particle_on_static_box(margin):
    """A 0.1 kg particle of radius 1 cm released 2 mm above the raw surface of a static box with shape margin
    ``margin`` [m]; contacts ke 100 N/m (particle and shape alike), no damping, no friction."""
    b = newton.ModelBuilder()
    b.add_shape_box(-1, xform=wp.transform((0.0, 0.0, -0.5), wp.quat_identity()), hx=0.5, hy=0.5, hz=0.5,
                    cfg=newton.ModelBuilder.ShapeConfig(ke=100.0, kd=0.0, mu=0.0, margin=margin))
    b.add_particle((0.0, 0.0, 0.012), (0.0, 0.0, 0.0), 0.1, radius=0.01)
    b.color()
    model = b.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 100.0, 0.0, 0.0
    return model


def test_log_barrier_particle_rests_at_the_barrier_distance_and_never_crosses():
    """A 0.1 kg particle dropped 2 mm onto a box with ``rigid_soft_contact_use_log_barrier=True``.

    Its weight 0.981 N exceeds the penalty's force ``k τ`` at the joint ``τ = (r + margin)/2``, so it rests on
    the barrier at the distance ``k τ²/(m g)`` from the raw surface: 3.670 mm with a 2 mm margin (measured
    3.6687 mm after 2000 steps, limit 3e-6 m). On the way it never reaches the surface (lowest 0.74 mm), where
    the quadratic penalty lets it sink 6.8 mm below it. Newton's SolverVBD: 3.668637 mm against ours
    3.668650 mm (limit 4e-8 m), the same lowest point.
    """
    model = _particle_on_static_box(0.002)
    tau = 0.5 * (0.01 + 0.002)
    rest = 100.0 * tau * tau / (0.1 * G)
    z = {}
    for cls, barrier in ((SolverVBD, True), (newton.solvers.SolverVBD, True), (SolverVBD, False)):
        _, _, _, _, snaps = _run(model, cls, 2000, full_surface=False, every=1,
                                 rigid_soft_contact_use_log_barrier=barrier)
        z[cls, barrier] = np.array([s[2][0, 2] for s in snaps])
    ours, ref, penalty = z[SolverVBD, True], z[newton.solvers.SolverVBD, True], z[SolverVBD, False]
    assert ours[-1] == pytest.approx(rest, abs=3e-6)
    assert ours.min() > 0.0005
    assert penalty.min() < -0.005  # the penalty sinks through the surface on the way
    assert ours[-1] == pytest.approx(ref[-1], abs=4e-8)
    assert ours.min() == pytest.approx(ref.min(), abs=4e-8)



def test_log_barrier_between_a_particle_and_a_free_box_acts_on_both():
    """A 5 kg particle (radius 1 cm) on a free 10 kg, 0.2 m box (shape ke 1e4 N/m) on the ground, with
    ``rigid_soft_contact_use_log_barrier=True`` and the compliant formulation: the contact's mixed k is
    5050 N/m and ``m g`` = 49 N > ``k τ`` = 25 N, so the particle rests on the barrier ``k τ²/(m g)`` = 2.574 mm
    above the box's top, the soft row pushes the box down with ``m g`` and the ground carries ``(M + m) g``.
    Contact damping 100 N·s/m (soft and box, mixed 100) settles it within 1 s at 20 iterations. Measured: the
    distance 2.5737 mm (limit 7e-7 m; the reference 2.5743 mm, limit 1.5e-6 m from ours), the soft row rel.
    1.2e-4 (limit 4e-4), the ground rel. 4.9e-4 (limit 1.5e-3).
    """
    b = newton.ModelBuilder()
    b.add_ground_plane()
    body = b.add_body(xform=wp.transform((0.0, 0.0, 0.1), wp.quat_identity()))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1,
                    cfg=newton.ModelBuilder.ShapeConfig(density=10.0 / 0.2 ** 3, ke=1e4, kd=100.0, mu=0.0))
    b.add_particle((0.0, 0.0, 0.203), (0.0, 0.0, 0.0), 5.0, radius=0.01)
    b.color()
    model = b.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 100.0, 100.0, 0.0
    rest = 5050.0 * 0.005 ** 2 / (5.0 * G)
    out = {}
    for cls in (SolverVBD, newton.solvers.SolverVBD):
        options = {"rigid_compliant_alm": True} if cls is SolverVBD else {}
        _, s, contacts, obs, _ = _run(model, cls, 600, full_surface=False, observe=True, iterations=20,
                                      rigid_soft_contact_use_log_barrier=True, **options)
        f = obs.contact_f.numpy()
        n = int(contacts.soft_contact_count.numpy()[0])
        top = s.body_q.numpy()[0, 2] + 0.1
        out[cls] = s.particle_q.numpy()[0, 2] - top, f[contacts.rigid_contact_max:contacts.rigid_contact_max + n, 2].sum(), \
            f[:contacts.rigid_contact_max, 2].sum()
    gap, soft, ground = out[SolverVBD]
    assert gap == pytest.approx(rest, abs=7e-7)
    assert soft == pytest.approx(-5.0 * G, rel=4e-4)
    assert ground == pytest.approx(-15.0 * G, rel=1.5e-3)
    assert out[newton.solvers.SolverVBD][0] == pytest.approx(gap, abs=1.5e-6)


@wp.kernel
def _law(gap: wp.array[float], barrier: int, out: wp.array[wp.vec2]):
    i = wp.tid()
    # Normal along +z, shape point at the origin, offset r + margin = 1 cm, ke 100 N/m, no damping or friction.
    x = wp.vec3(0.0, 0.0, gap[i])
    f, h = contact_force_hessian(x, x, wp.vec3(0.0), wp.vec3(0.0, 0.0, 1.0), wp.vec3(0.0),
                                 wp.vec4(100.0, 0.0, 0.0, 0.01), 1.0e-2, DT, barrier)
    out[i] = wp.vec2(f[2], h[2, 2])


def test_log_barrier_law_joins_the_penalty_continuously():
    """The body–particle barrier law in the gap ``δ`` [m] (offset 1 cm, k 100 N/m, ``τ`` 5 mm): the penalty's
    force and stiffness for ``δ >= τ``, ``k τ²/δ`` and ``k τ²/δ²`` below, continuous at ``τ`` (both 0.5 N and
    100 N/m there: rel. 5e-5 across ±1e-7 m, measured 2.0e-5, the slope k over 1e-7 m), zero beyond the offset,
    and growing without bound toward the surface."""
    gaps = np.array([0.012, 0.01, 0.008, 0.005 + 1e-7, 0.005 - 1e-7, 0.003, 1e-3, 1e-4], dtype=np.float32)
    out = {}
    for barrier in (0, 1):
        res = wp.zeros(len(gaps), dtype=wp.vec2, device="cpu")
        wp.launch(_law, dim=len(gaps), inputs=[wp.array(gaps, dtype=float, device="cpu"), barrier], outputs=[res],
                  device="cpu")
        out[barrier] = res.numpy()
    f, k = out[1][:, 0], out[1][:, 1]
    tau = 0.005
    np.testing.assert_allclose(out[1][:4], out[0][:4], rtol=1e-6)  # δ >= τ: the penalty
    np.testing.assert_allclose(f[3:5], [100.0 * tau, 100.0 * tau], rtol=5e-5)
    np.testing.assert_allclose(k[3:5], [100.0, 100.0], rtol=1e-4)
    np.testing.assert_allclose(f[4:], 100.0 * tau * tau / gaps[4:], rtol=1e-5)
    np.testing.assert_allclose(k[4:], 100.0 * tau * tau / gaps[4:] ** 2, rtol=1e-4)
    assert f[0] == 0.0 and f[-1] > 20 * out[0][-1, 0]


def _cloth_on_heightfield_ridge():
    """A 0.9 kg, 3x3-particle cloth (0.2 m cells, radius 1 cm) released 2 cm over a 5 cm heightfield ridge along y
    at x = 0 (grid 9x9 over 2 m, so the ridge falls to 0 at x = ±0.25 m); contacts ke 1e4 N/m, mu 0.5."""
    b = newton.ModelBuilder()
    data = np.zeros((9, 9), dtype=np.float32)
    data[:, 4] = 0.05
    b.add_shape_heightfield(heightfield=newton.Heightfield(data, 9, 9, hx=1.0, hy=1.0, min_z=0.0, max_z=0.05),
                            cfg=newton.ModelBuilder.ShapeConfig(ke=1e4, kd=0.0, mu=0.5))
    b.add_cloth_grid(pos=wp.vec3(-0.2, -0.2, 0.07), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=2, dim_y=2,
                     cell_x=0.2, cell_y=0.2, mass=0.1, tri_ke=1e3, tri_ka=1e3, tri_kd=1e-1, particle_radius=0.01)
    b.color()
    model = b.finalize(device="cpu")
    model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_mu = 1e4, 0.0, 0.5
    return model


def test_cloth_draped_on_a_heightfield_ridge_as_the_reference():
    """Full-surface records on a heightfield (8 face and 3 particle records, point records like the analytic
    shapes'): after 1 s at 50 iterations the cloth hangs on the ridge at the reference's particle positions within
    8e-6 m (measured 2.7e-6 m) and the soft rows sum to the reference's within 8e-4 N (measured 2.7e-4 N)."""
    out = {}
    for cls in (SolverVBD, newton.solvers.SolverVBD):
        _, s, contacts, obs, _ = _run(_cloth_on_heightfield_ridge(), cls, 600, observe=True, iterations=50)
        rows, kinds = _soft_rows(contacts, obs)
        assert np.bincount(kinds, minlength=4).tolist() == [0, 3, 0, 8]
        out[cls] = s.particle_q.numpy(), rows[:, 2].sum()
    (q, fz), (q_ref, fz_ref) = out[SolverVBD], out[newton.solvers.SolverVBD]
    assert q[4, 2] == pytest.approx(0.06, abs=1e-3)  # the middle particle on the ridge's top, a radius above
    np.testing.assert_allclose(q, q_ref, rtol=0.0, atol=8e-6)
    assert fz == pytest.approx(fz_ref, abs=8e-4)


def test_full_surface_contacts_on_a_triangle_mesh_are_refused_before_any_change():
    """Full-surface records on a triangle-mesh shape need Newton's per-feature eligibility test, which is not
    built: step raises NotImplementedError naming the meshes and leaves the output state untouched."""
    b = newton.ModelBuilder()
    points = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], dtype=np.float32)
    b.add_shape_mesh(-1, mesh=newton.Mesh(points, np.array([0, 1, 2, 0, 2, 3], dtype=np.int32)))
    b.add_cloth_grid(pos=wp.vec3(-0.1, -0.1, 0.05), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=2, dim_y=2,
                     cell_x=0.1, cell_y=0.1, mass=0.01, particle_radius=0.01)
    b.color()
    model = b.finalize(device="cpu")
    solver = SolverVBD(model)
    contacts = newton.CollisionPipeline(model, enable_rigid_soft_full_surface_contact=True).contacts()
    s0, s1 = model.state(), model.state()
    before = s1.particle_q.numpy().copy()
    with pytest.raises(NotImplementedError, match=r"triangle-mesh shapes .*\[0\]"):
        solver.step(s0, s1, None, contacts, DT)
    np.testing.assert_array_equal(s1.particle_q.numpy(), before)


def test_proxy_particle_harvest_refuses_full_surface_contacts():
    """Proxy-particle force harvesting after a step on full-surface contacts raises NotImplementedError (the
    spec rejects it); the proxy-body harvest of the same step runs."""
    model = _edge_on_coarse_cloth(fixed=False)
    solver, s, contacts, _, _ = _run(model, SolverVBD, 1)
    particle_map = wp.array(np.arange(model.particle_count), dtype=int, device="cpu")
    out = wp.zeros(model.particle_count, dtype=wp.vec3, device="cpu")
    with pytest.raises(NotImplementedError, match="full-surface"):
        solver.coupling_harvest_proxy_particle_forces(particle_map, out, particle_qd_before=s.particle_qd, state=s,
                                                      state_out=s, contacts=contacts, dt=DT)
    body_f = wp.zeros(1, dtype=wp.spatial_vector, device="cpu")
    solver.coupling_harvest_proxy_wrenches(wp.array([0], dtype=int, device="cpu"), body_f, body_qd_before=s.body_qd,
                                           state=s, state_out=s, contacts=contacts, dt=DT)
    assert np.isfinite(body_f.numpy()).all()
