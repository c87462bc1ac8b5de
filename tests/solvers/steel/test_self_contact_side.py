"""A contact between two links of one articulation: its rows get one side holding J0 + J1 (contacts/sides.py).

Scene: a free base box on the ground carries a smaller box on a prismatic joint along z, with the
parent filter off, so the top box lands on the base and the two touch as a self-contact. The base's
six free DOFs are ancestors of both bodies: the summed Jacobian is zero on them for the normal row,
which two separate sides would carry as two opposite halves.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

G = 9.81
DT = 1.0 / 240.0
BASE_HALF = (0.2, 0.2, 0.05)  # [m]
TOP_HALF = 0.05  # [m]
DROP = 0.01  # [m] gap between the top box and the base at the start


def _stack():
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.5, density=1000.0)
    base = builder.add_link(xform=wp.transform(wp.vec3(0.0, 0.0, BASE_HALF[2]), wp.quat_identity()))
    builder.add_shape_box(base, hx=BASE_HALF[0], hy=BASE_HALF[1], hz=BASE_HALF[2], cfg=cfg)
    top_z = BASE_HALF[2] + TOP_HALF + DROP  # [m] above the base's centre
    top = builder.add_link(xform=wp.transform(wp.vec3(0.0, 0.0, BASE_HALF[2] + top_z), wp.quat_identity()))
    builder.add_shape_box(top, hx=TOP_HALF, hy=TOP_HALF, hz=TOP_HALF, cfg=cfg)
    joints = [
        builder.add_joint_free(base),
        builder.add_joint_prismatic(base, top, parent_xform=wp.transform(wp.vec3(0.0, 0.0, top_z), wp.quat_identity()),
                                    axis=(0.0, 0.0, 1.0), collision_filter_parent=False),
    ]
    builder.add_articulation(joints)
    builder.add_ground_plane(cfg=cfg)
    return builder.finalize(device="cpu"), base, top


def _self_contacts(model, contacts, base, top):
    n = int(contacts.rigid_contact_count.numpy()[0])
    body = model.shape_body.numpy()
    b0 = body[contacts.rigid_contact_shape0.numpy()[:n]]
    b1 = body[contacts.rigid_contact_shape1.numpy()[:n]]
    return np.nonzero(((b0 == base) & (b1 == top)) | ((b0 == top) & (b1 == base)))[0]


def _run(model, solver, steps, observables=None):
    """``(last output state, last input state, contacts)`` after ``steps`` steps from the initial pose."""
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT, observables=observables)
        s0, s1 = s1, s0
    return s0, s1, contacts


def test_self_contact_rows_have_one_side_whose_jacobian_is_the_relative_velocity():
    """Every row of a base-top contact has one side over the articulation's 7 DOFs (side 1 empty), and its
    ``J qd`` equals ``dir . (v_top - v_base)`` at the contact points for an arbitrary ``qd`` (float32 rounding)."""
    model, base, top = _stack()
    solver = SolverSteel(model)
    _, s_in, contacts = _run(model, solver, 3)  # s_in: the last step's input state, whose poses built its rows
    rows = solver.steel_data.rows.buffers
    self_contacts = _self_contacts(model, contacts, base, top)
    assert len(self_contacts) >= 3  # the top box lands on a face: a manifold, not a point
    rng = np.random.default_rng(1)
    qd = rng.uniform(-1.0, 1.0, model.joint_dof_count).astype(np.float32)
    probe = model.state()
    newton.eval_fk(model, s_in.joint_q, wp.array(qd, dtype=float, device="cpu"), probe)
    body_q, body_qd, com = probe.body_q.numpy(), probe.body_qd.numpy(), model.body_com.numpy()

    def point_velocity(b, p):
        x = body_q[b]
        rot = wp.quat(*x[3:])
        c = np.array(wp.transform_point(wp.transform(wp.vec3(*x[:3]), rot), wp.vec3(*com[b])))
        return body_qd[b, :3] + np.cross(body_qd[b, 3:], p - c)

    def world_point(b, p):
        x = body_q[b]
        return np.array(wp.transform_point(wp.transform(wp.vec3(*x[:3]), wp.quat(*x[3:])), wp.vec3(*p)))

    shape_body = model.shape_body.numpy()
    contact_row = solver.steel_data.contact_slots.row.numpy()
    row_count = solver.steel_data.contact_slots.row_count.numpy()
    dof_start, dof_count = rows.dof_start.numpy(), rows.dof_count.numpy()
    J, stride, directions = rows.J.numpy(), rows.stride, rows.dir.numpy()
    checked = 0
    for c in self_contacts:
        b0 = shape_body[contacts.rigid_contact_shape0.numpy()[c]]
        b1 = shape_body[contacts.rigid_contact_shape1.numpy()[c]]
        a0 = world_point(b0, contacts.rigid_contact_point0.numpy()[c] + contacts.rigid_contact_offset0.numpy()[c])
        a1 = world_point(b1, contacts.rigid_contact_point1.numpy()[c] + contacts.rigid_contact_offset1.numpy()[c])
        for r in range(contact_row[c], contact_row[c] + row_count[c]):
            assert dof_count[r, 1] == 0 and dof_count[r, 0] == model.joint_dof_count
            d0 = dof_start[r, 0]
            jqd = float(J[2 * r * stride:2 * r * stride + dof_count[r, 0]] @ qd[d0:d0 + dof_count[r, 0]])
            expected = float(directions[r] @ (point_velocity(b1, a1) - point_velocity(b0, a0)))
            assert jqd == pytest.approx(expected, abs=1e-5)
            checked += 1
    assert checked >= len(self_contacts)


def test_top_box_rests_on_the_base_with_its_weight():
    """After 1 s the top box rests on the base: the self-contacts carry its weight within 0.1 %, and the
    base's ground contacts the weight of both; the prismatic coordinate is still to 1e-5 m over the last step."""
    model, base, top = _stack()
    solver = SolverSteel(model)
    obs = solver.observables({"contact_f"}, contacts=_run(model, solver, 1)[2])
    state, previous, contacts = _run(model, solver, 240, observables=obs)
    mass = model.body_mass.numpy()
    n = int(contacts.rigid_contact_count.numpy()[0])
    force_z = obs.contact_f.numpy()[:n, 2]
    self_contacts = _self_contacts(model, contacts, base, top)
    ground = np.nonzero(model.shape_body.numpy()[contacts.rigid_contact_shape0.numpy()[:n]] < 0)[0]
    assert abs(force_z[self_contacts].sum()) == pytest.approx(mass[top] * G, rel=1e-3)
    assert abs(force_z[ground].sum()) == pytest.approx((mass[top] + mass[base]) * G, rel=1e-3)
    q, q_before = state.joint_q.numpy()[7], previous.joint_q.numpy()[7]
    assert abs(q - q_before) < 1e-5  # [m]
    assert q == pytest.approx(-DROP, abs=2e-3)  # [m] landed on the base's top face
    # One side holding J0 + J1: a self-contact normal row moves only the prismatic DOF, and 1 / (J Y) is the pair's
    # reduced mass m_top m_base / (m_top + m_base) = 16/17 = 0.941 kg (contacts/rows.py; two sides gave 0.905).
    # Measured 0.941176 kg, rtol 1e-5: float32 rounding of the factor and of 1 / (J Y + cfm).
    rows = solver.steel_data.rows.buffers
    normal_rows = solver.steel_data.contact_slots.row.numpy()[self_contacts]
    inv_mass = rows.inv_mass.numpy()[normal_rows]
    assert (inv_mass > 0.0).all()  # loaded: their responses are formed
    reduced = mass[top] * mass[base] / (mass[top] + mass[base])
    np.testing.assert_allclose(1.0 / (1.0 / inv_mass - solver.cfm), reduced, rtol=1e-5)  # [kg]
