"""SolverFeatherstone penalty contacts: resting and sliding boxes, nv_humanoid dropped on the ground."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
import steel.solvers
from benchmarks import scenes as bench_scenes

from .scenes import G, run


def _box_on_ground(mu: float, v0: float = 0.0):
    b = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=mu)
    body = b.add_body(xform=wp.transform((0.0, 0.0, 0.1), wp.quat_identity()))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    b.add_ground_plane(cfg=cfg)
    model = b.finalize(device="cpu")
    state = model.state()
    qd = np.zeros(6, np.float32)
    qd[0] = v0
    state.joint_qd.assign(qd)
    pipeline = newton.CollisionPipeline(model)
    return model, state, pipeline, pipeline.contacts()


def test_resting_box_sinks_to_its_penalty_depth():
    """A 8 kg box at rest sinks until its contacts carry m g: total depth m g / (contacts ke), within 10 %."""
    model, state, pipeline, contacts = _box_on_ground(mu=0.7)
    solver = steel.solvers.SolverFeatherstone(model)
    run(solver, model, state, 600, 1.0 / 600.0, contacts=contacts, pipeline=pipeline)
    z = float(state.body_q.numpy()[0, 2])
    count = int(contacts.rigid_contact_count.numpy()[0])
    ke = float(model.shape_material_ke.numpy()[0])
    depth = float(model.body_mass.numpy()[0]) * G / (count * ke)
    # Four corner contacts share the load; 10 % covers the residual bounce of the damped spring.
    assert 0.1 - z == pytest.approx(depth, rel=0.1)
    assert np.abs(state.body_qd.numpy()).max() < 1.0e-2


def test_sliding_box_decelerates_at_mu_g():
    """A settled box pushed to 3 m/s (above friction_smoothing = 1 m/s) decelerates at mu g within 1 %.

    Measured -0.22 % (the load shift of the pitch); mu x 0.98 gives -2 % and fails.
    """
    model, state, pipeline, contacts = _box_on_ground(mu=0.5)
    solver = steel.solvers.SolverFeatherstone(model)
    dt, steps = 1.0 / 600.0, 120
    run(solver, model, state, 600, dt, contacts=contacts, pipeline=pipeline)  # settle the contact springs
    qd = state.joint_qd.numpy()
    qd[0] = 3.0
    state.joint_qd.assign(qd)
    run(solver, model, state, steps, dt, contacts=contacts, pipeline=pipeline)
    decel = (3.0 - float(state.body_qd.numpy()[0, 0])) / (steps * dt)
    # Sliding stays above 1 m/s, where the friction is exactly mu f_n.
    assert decel == pytest.approx(0.5 * G, rel=0.01)


def test_humanoid_dropped_on_the_ground_stays_finite_and_settles():
    """nv_humanoid dropped from 1.5 m at dt = 1/240 s for 5 s: no NaN, torso ends lying on the ground, at rest.

    Newton's reference goes NaN on this scene at t ~ 1.3 s (its explicit joint-limit penalty,
    limit_ke = 1e4, is unstable on the light wrist and ankle DOFs at this dt); ours takes the joint-space
    penalties (and the contact terms) linearly implicitly. Measured: torso z 0.067 m at 5 s (the torso
    capsule lying on the floor), joint speeds below 0.01 rad/s.
    """
    scene = bench_scenes.build_humanoid(1, "cpu")
    model = scene.model
    solver = steel.solvers.SolverFeatherstone(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    state = model.state()
    run(solver, model, state, 5 * 240, 1.0 / 240.0, contacts=contacts, pipeline=pipeline)
    assert np.isfinite(state.joint_q.numpy()).all()
    torso_z = float(state.body_q.numpy()[0, 2])
    assert 0.03 < torso_z < 1.4  # physical range: on the ground, not through it, not flying
    assert np.abs(state.joint_qd.numpy()).max() < 0.1


def test_light_body_contact_damper_never_returns_more_speed_than_it_took():
    """A 0.052 kg sphere hitting the ground at 2 m/s with dt kd / m = 8 rebounds slower than it came in.

    Regression: with the damper explicit (``dt kd / m > 2``), each contact step reversed and amplified the
    normal velocity; this sphere (ke 2500 N/m, kd 100 N·s/m, dt = 1/240 s) left the ground at 14 m/s, 7x
    its impact speed, as Newton's reference still does. Implicit, the damper can only shrink the approach
    speed; measured rebound 0.19 m/s.
    """
    b = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(density=100.0, ke=2500.0, kd=100.0, mu=0.0)
    body = b.add_body(xform=wp.transform((0.0, 0.0, 0.2), wp.quat_identity()))
    b.add_shape_sphere(body, radius=0.05, cfg=cfg)
    b.add_ground_plane(cfg=cfg)
    model = b.finalize(device="cpu")
    state = model.state()
    qd = np.zeros(6, np.float32)
    qd[2] = -1.0
    state.joint_qd.assign(qd)
    dt = 1.0 / 240.0
    assert dt * 100.0 / float(model.body_mass.numpy()[0]) > 7.0  # the explicit damper's limit is 2
    solver = steel.solvers.SolverFeatherstone(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    vz = []
    for _ in range(240):
        pipeline.collide(state, contacts)
        solver.step(state, state, None, contacts, dt)
        vz.append(float(state.joint_qd.numpy()[2]))
    impact = -min(vz)
    assert 1.9 < impact < 2.1  # fell 0.15 m from 1 m/s: sqrt(1 + 2 g 0.15) = 1.98 m/s
    assert max(vz) < 0.5 * impact  # the damper dissipates; it never launches the sphere
    assert abs(float(state.body_q.numpy()[0, 2]) - 0.05) < 0.01  # resting on the ground


def test_ant_dropped_at_240_hz_stays_finite_and_stands():
    """nv_ant x4 dropped from a torso height of 0.75 m with zero controls at dt = 1/240 s: finite for 5 s, standing.

    Regression: the penalty damper of the foot-tip contacts (kd = 100 N·s/m against an effective mass of
    0.058 kg at the tip, dt kd / m = 7.2 where explicit stability needs < 2) threw the feet and the ant went
    NaN at t ~ 1.8 s. With the contact terms implicit it lands and stands on its legs: measured torso
    height 0.372 m at 5 s (0.37 m at dt = 1/600 s, where the explicit form also stays finite), never above
    the drop height. Range: the torso is a 0.25 m sphere, so below 0.30 m it would lie on the ground or
    sink into it, and above 0.45 m the legs would be straighter than their 30-degree ankle limits allow.
    """
    scene = bench_scenes.build_ant(4, "cpu")
    model = scene.model
    q = model.joint_q.numpy()
    coords = len(q) // 4
    q[2::coords] = 0.75  # the asset's own torso height, in every world
    model.joint_q.assign(q)
    solver = steel.solvers.SolverFeatherstone(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    state = model.state()
    torsos = scene.watched_global()[:, 0]
    dt, highest = 1.0 / 240.0, 0.0
    for _ in range(5):
        run(solver, model, state, 240, dt, contacts=contacts, pipeline=pipeline)
        z = state.body_q.numpy()[torsos, 2]
        assert np.isfinite(state.joint_q.numpy()).all()
        highest = max(highest, float(z.max()))
    assert highest < 0.76
    assert np.all((z > 0.30) & (z < 0.45))
    assert np.ptp(z) < 1.0e-3  # identical worlds stay identical


def _contact_block_reference(model, state, contacts, dt, self_pairs):
    """``dt^2 ke J_n^T J_n + dt c_t J_t^T J_t`` of every active contact from Newton's FK (unit ``qd`` columns),
    per articulation, at rest (``v = 0``: no damper; Huber speed ``delta / 2``); split per side when the
    bodies are in different articulations."""
    nd = model.joint_dof_count
    columns = []  # body twists (v_com, w) per unit qd of each DOF
    probe = model.state()
    for d in range(nd):
        qd = np.zeros(nd, np.float32)
        qd[d] = 1.0
        newton.eval_fk(model, state.joint_q, wp.array(qd, dtype=float), probe)
        columns.append(probe.body_qd.numpy().copy())
    body_q = state.body_q.numpy()
    com = model.body_com.numpy()
    shape_body = model.shape_body.numpy()
    ke, kf, mu = (float(getattr(model, f"shape_material_{k}").numpy()[0]) for k in ("ke", "kf", "mu"))
    K = np.zeros((nd, nd))
    count = int(contacts.rigid_contact_count.numpy()[0])
    for c in range(count):
        n = contacts.rigid_contact_normal.numpy()[c]
        sides = []
        for shape, point, margin, sign in (
            (contacts.rigid_contact_shape0.numpy()[c], contacts.rigid_contact_point0.numpy()[c],
             contacts.rigid_contact_margin0.numpy()[c], -1.0),
            (contacts.rigid_contact_shape1.numpy()[c], contacts.rigid_contact_point1.numpy()[c],
             contacts.rigid_contact_margin1.numpy()[c], 1.0),
        ):
            b = int(shape_body[shape])
            X = wp.transform(wp.vec3(*body_q[b][:3]), wp.quat(*body_q[b][3:]))
            p = np.array(wp.transform_point(X, wp.vec3(*point))) - sign * margin * n
            r = p - np.array(wp.transform_point(X, wp.vec3(*com[b])))
            J = np.stack([col[b, :3] + np.cross(col[b, 3:], r) for col in columns], axis=1)  # (3, nd)
            sides.append((sign, p, J))
        gap = float(n @ (sides[1][1] - sides[0][1]))
        if gap >= 0.0:
            continue
        c_n, c_t = dt * dt * ke, dt * min(kf, mu * (-ke * gap) / 0.5)
        blocks = [sides[1][2] - sides[0][2]] if self_pairs else [s[2] for s in sides]
        for J in blocks:
            Jn = n @ J
            K += c_n * np.outer(Jn, Jn) + c_t * (J.T @ J - np.outer(Jn, Jn))
    return K, count


@pytest.mark.parametrize("self_pairs", [True, False], ids=["one_articulation", "two_articulations"])
def test_implicit_contact_block_matches_the_contact_jacobians(self_pairs):
    """The implicit contact term accumulated per articulation equals ``dt^2 ke J_n^T J_n + dt c_t J_t^T J_t``
    built from Newton's FK (relative rows ``J_B - J_A`` within one articulation, one block per side across
    two), within float32 rounding (1e-5 relative)."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    cfg = newton.ModelBuilder.ShapeConfig(ke=2500.0, kd=100.0, kf=1000.0, mu=0.5, collision_filter_parent=False)
    if self_pairs:  # two links of one chain whose spheres overlap
        a = b.add_link(com=wp.vec3(0.3, 0.0, 0.0), mass=1.0, inertia=wp.mat33(np.eye(3) * 1.0e-2))
        c = b.add_link(com=wp.vec3(0.3, 0.0, 0.0), mass=0.5, inertia=wp.mat33(np.eye(3) * 1.0e-2))
        b.add_shape_sphere(a, xform=wp.transform((0.5, 0.0, 0.0), wp.quat_identity()), radius=0.1, cfg=cfg)
        b.add_shape_sphere(c, xform=wp.transform((-0.1, 0.02, 0.15), wp.quat_identity()), radius=0.1, cfg=cfg)
        j0 = b.add_joint_revolute(-1, a, axis=(0.0, 0.0, 1.0))
        j1 = b.add_joint_ball(
            a, c, parent_xform=wp.transform((0.6, 0.0, 0.0), wp.quat_identity()), collision_filter_parent=False
        )
        b.add_articulation([j0, j1])
    else:  # two free spheres overlapping
        for x in (0.0, 0.19):
            body = b.add_body(xform=wp.transform((x, 0.01, 0.02 * x), wp.quat_identity()))
            b.add_shape_sphere(body, radius=0.1, cfg=cfg)
    model = b.finalize(device="cpu")
    solver = steel.solvers.SolverFeatherstone(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    state_in, state_out = model.state(), model.state()
    newton.eval_fk(model, state_in.joint_q, state_in.joint_qd, state_in)
    pipeline.collide(state_in, contacts)
    dt = 1.0 / 240.0
    solver.step(state_in, state_out, None, contacts, dt)
    K_ref, count = _contact_block_reference(model, state_in, contacts, dt, self_pairs)
    assert count > 0 and np.abs(K_ref).max() > 0.0
    ours = np.zeros_like(K_ref)
    flat = solver.work.contact_mass.numpy()
    for art in range(solver.plan.articulation_count):
        plan = solver.plan
        n, base, first = (int(x[art]) for x in (plan.dof_count_np, plan.mass_start_np, plan.dof_start_np))
        ours[first : first + n, first : first + n] = np.tril(flat[base : base + n * n].reshape(n, n))
    np.testing.assert_allclose(ours, np.tril(K_ref), rtol=1.0e-5, atol=1.0e-5 * np.abs(K_ref).max())


def test_contacts_passed_anew_each_step_are_read_each_step():
    """The solver keeps one struct view of the contact buffer and rebinds it when the caller's buffer changes: a
    box stepped with two Contacts objects in turn, and with one whose array is rebound, matches bitwise the run
    with a single buffer, and an empty buffer in between drops the contacts for that step only."""
    dt, steps = 1.0 / 600.0, 40

    def trajectory(pick):
        model, state, pipeline, _ = _box_on_ground(mu=0.5, v0=1.0)
        buffers = [pipeline.contacts(), pipeline.contacts()]
        empty = pipeline.contacts()  # never collided: count 0
        solver = steel.solvers.SolverFeatherstone(model)
        out = model.state()
        newton.eval_fk(model, state.joint_q, state.joint_qd, state)
        for i in range(steps):
            contacts = pick(i, buffers, empty)
            if contacts is not empty:
                pipeline.collide(state, contacts)
            solver.step(state, out, None, contacts, dt)
            state, out = out, state
        return state.joint_q.numpy(), state.joint_qd.numpy()

    single = trajectory(lambda i, buffers, empty: buffers[0])
    alternating = trajectory(lambda i, buffers, empty: buffers[i % 2])
    np.testing.assert_array_equal(single[0], alternating[0])
    np.testing.assert_array_equal(single[1], alternating[1])

    def rebound(i, buffers, empty):
        if i == steps // 2:  # the same object, one of its arrays replaced by a copy
            replaced = buffers[0].rigid_contact_normal
            buffers[0].rigid_contact_normal = wp.clone(replaced)
            replaced.zero_()  # a solver still reading the replaced array would see no normals from here on
        return buffers[0]

    np.testing.assert_array_equal(single[0], trajectory(rebound)[0])
    gap = trajectory(lambda i, buffers, empty: empty if i == steps // 2 else buffers[0])
    assert not np.array_equal(single[1], gap[1])  # the empty step was read: no contact force that step
