"""Regressions of an adversarial pass over SolverSteel: odd but legal steps and invalid inputs.

Each test names what broke; invalid inputs must raise ``ValueError`` naming the parameter and the
value before anything changes, and odd legal inputs must leave the simulation sane.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

from .scenes import single_box

DT = 1.0 / 600.0


def _stack(count=6, mu=0.5):
    builder = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=mu)
    for i in range(count):
        body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.1 + 0.2 * i), wp.quat_identity()))
        builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    return builder.finalize(device="cpu")


def _max_speed_after(tiny_dt):
    """A 6-box stack settled for 1 s at 1/600 s, one step of ``tiny_dt`` (None: none), then 1 s more:
    the largest body speed component over that last second [m/s]."""
    model = _stack()
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    states = [model.state(), model.state()]

    def step(dt):
        pipeline.collide(states[0], contacts)
        solver.step(states[0], states[1], None, contacts, dt)
        states.reverse()

    for _ in range(600):
        step(DT)
    if tiny_dt is not None:
        step(tiny_dt)
    speed = 0.0
    for _ in range(600):
        step(DT)
        speed = max(speed, float(np.abs(states[0].body_qd.numpy()).max()))
    return speed


def test_a_tiny_step_in_a_settled_stack_does_not_launch_the_next_steps():
    """One step of 1e-6 s (1e-9 s) in a settled stack sent it to 3.6 km/s (1e7 m/s) on the next step: the
    push-out asked ``baumgarte depth / dt`` (8.4 m/s) and the records carried impulse / 1e-6 s as forces.
    Measured after the fix: 2.6e-5 (2.4e-5) m/s over the next second, the stack left alone 2.4e-5 m/s."""
    rest = _max_speed_after(None)
    assert rest < 1.0e-4
    for tiny in (1.0e-6, 1.0e-9):
        assert _max_speed_after(tiny) <= 3.0 * rest, tiny


def _sliding_box(mu):
    """A box sliding at (1, 0.5) m/s on the ground; ``mu`` written into the model after finalize
    (Newton's builder refuses a non-finite one)."""
    model = single_box()
    model.shape_material_mu.fill_(mu)
    return model


def _height_range(model, solver, steps=300):
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    s0.joint_qd.assign(np.array([1.0, 0.5, 0.0, 0.0, 0.0, 0.0], dtype=np.float32))
    low, high = np.inf, -np.inf
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        z = float(s0.body_q.numpy()[0, 2])
        low, high = min(low, z), max(high, z)
    return low, high


@pytest.mark.parametrize("mu", [1.0e3, 1.0e4, 1.0e6])
def test_a_huge_friction_coefficient_sticks_under_the_desaxce_mode(mu):
    """friction_mode='bisection_desaxce' with mu 1e3 / 1e6 threw a sliding box 0.42 m up / 1.23 m through the
    ground (the bias mu |c_t| amplified the residual slip). Now it sticks and trips over its edge as with mu 10:
    its centre stays within 0.1-0.1166 m."""
    model = _sliding_box(mu)
    low, high = _height_range(model, SolverSteel(model, friction_mode="bisection_desaxce", friction_anchor_beta=0.0))
    assert low > 0.099 and high < 0.13, (low, high)


@pytest.mark.parametrize("mode", ["fixed_normal", "bisection_desaxce", "coulomb_newton"])
@pytest.mark.parametrize("mu", [np.inf, np.nan])
def test_a_non_finite_friction_coefficient_is_refused(mode, mu):
    """mu = inf gave NaN under 'bisection_desaxce' and 'coulomb_newton' and a drifting box under the default mode
    (inf times a zero normal impulse); Newton's builder refuses it too. Refused at construction and on notify."""
    options = {} if mode == "fixed_normal" else {"friction_mode": mode, "friction_anchor_beta": 0.0}
    model = _sliding_box(mu)
    with pytest.raises(ValueError, match=r"shape_material_mu of shape 0 .*must be finite, got (inf|nan)"):
        SolverSteel(model, **options)
    model.shape_material_mu.fill_(0.5)
    solver = SolverSteel(model, **options)
    model.shape_material_mu.fill_(mu)
    with pytest.raises(ValueError, match="shape_material_mu of shape 0"):
        solver.notify_model_changed(newton.ModelFlags.SHAPE_PROPERTIES)
    model.shape_material_mu.fill_(0.5)
    solver.notify_model_changed(newton.ModelFlags.SHAPE_PROPERTIES)
    low, high = _height_range(model, solver, steps=60)
    assert abs(low - 0.1) < 1e-3 and abs(high - 0.1) < 1e-3


def _compliant_box_heights(stiffness, damping, steps=240):
    """A box resting on the ground, stepped at 1/240 s with compliant contacts of the given per-contact
    stiffness [N/m] and damping [N·s/m] (written after each collision pass)."""
    model = single_box()
    pipeline = newton.CollisionPipeline(model)
    contacts = newton.Contacts(model.rigid_contact_max, 0, per_contact_shape_properties=True, device="cpu")
    solver = SolverSteel(model, contact_compliance=True, friction_anchor_beta=0.0)
    s0, s1 = model.state(), model.state()
    heights = []
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        contacts.rigid_contact_stiffness.fill_(stiffness)
        contacts.rigid_contact_damping.fill_(damping)
        solver.step(s0, s1, None, contacts, 1.0 / 240.0)
        s0, s1 = s1, s0
        heights.append(float(s0.body_q.numpy()[0, 2]))
    return np.array(heights), solver


def test_an_infinitely_stiff_compliant_contact_is_rigid():
    """contact_compliance with rigid_contact_stiffness = inf let the box sink through the ground (the law's
    inf / inf is NaN: 4.9 m in 1 s) and counted it compliant; now the contact takes the rigid law: the box rests at 0.1 m
    (measured within 1e-5 m), counted as no compliant contact."""
    heights, solver = _compliant_box_heights(np.inf, 0.0)
    assert np.abs(heights - 0.1).max() < 1e-4
    assert solver.compliance_contact_count == 0


@pytest.mark.parametrize(("stiffness", "damping"), [(1.0e5, np.nan), (np.nan, 0.0), (-1.0e5, 0.0), (1.0e5, -5.0)])
def test_a_nan_or_negative_contact_material_is_refused_before_the_solve(stiffness, damping):
    """A NaN damping let a compliant box sink through the ground unflagged; now the eager step raises
    ValueError naming the contact and its values, before the state changes."""
    with pytest.raises(ValueError, match=r"rigid_contact_stiffness=.*rigid_contact_damping="):
        _compliant_box_heights(stiffness, damping, steps=1)


def _mimic_pair(**edits):
    """A leader hinge (joint 0) and a follower hinge (joint 1, q_1 = 0.1 + 2 q_0), with model arrays edited
    after finalize: ``leader`` into joint_mimic_joint[1], ``coeffs`` into joint_mimic_coeffs[1]."""
    builder = newton.ModelBuilder()
    inertia = wp.mat33(np.diag([0.02, 0.02, 0.03]))
    l0 = builder.add_link(mass=1.0, inertia=inertia)
    j0 = builder.add_joint_revolute(-1, l0, axis=(0, 0, 1))
    l1 = builder.add_link(mass=0.5, inertia=inertia, xform=wp.transform(wp.vec3(0.3, 0.0, 0.0), wp.quat_identity()))
    j1 = builder.add_joint_revolute(l0, l1, axis=(0, 0, 1), parent_xform=wp.transform(wp.vec3(0.3, 0.0, 0.0)))
    builder.add_articulation([j0, j1])
    builder.set_joint_mimic(j1, j0, coeffs=(0.1, 2.0))
    model = builder.finalize(device="cpu")
    _edit_mimic(model, **edits)
    return model


def _edit_mimic(model, leader=None, coeffs=None):
    if leader is not None:
        model.joint_mimic_joint.assign(np.array([-1, leader], dtype=np.int32))
    if coeffs is not None:
        values = model.joint_mimic_coeffs.numpy()
        values[1] = coeffs
        model.joint_mimic_coeffs.assign(values)


def _step_pair(model, solver, steps=10):
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    return s0.joint_q.numpy()


@pytest.mark.parametrize(("edit", "message"), [
    ({"leader": 1}, r"joint 1 .*follows itself \(joint_mimic_joint=1\)"),
    ({"coeffs": (np.nan, 2.0)}, r"joint 1 .*non-finite coefficient \(joint_mimic_coeffs="),
    ({"leader": 1_000_000}, r"joint 1 .*joint_mimic_joint=1000000, not a joint index"),
])
def test_invalid_mimics_are_refused_at_construction_and_on_notify(edit, message):
    """A self-mimic locked the follower, a NaN coefficient was accepted, and a leader of 1e6 crashed the
    process (SIGSEGV) with or without notify_model_changed. Each raises ValueError naming the joint, at
    construction and on notify(JOINT_PROPERTIES), and the solver steps on once the edit is undone."""
    with pytest.raises(ValueError, match=message):
        SolverSteel(_mimic_pair(**edit))
    model = _mimic_pair()
    solver = SolverSteel(model)
    _edit_mimic(model, **edit)
    with pytest.raises(ValueError, match=message):
        solver.notify_model_changed(newton.ModelFlags.JOINT_PROPERTIES)
    _edit_mimic(model, leader=0, coeffs=(0.1, 2.0))
    solver.notify_model_changed(newton.ModelFlags.JOINT_PROPERTIES)
    q = _step_pair(model, solver, 60)
    assert abs(q[1] - (0.1 + 2.0 * q[0])) < 1e-3


def test_a_mimic_leader_edited_out_of_range_without_notify_reads_nothing_out_of_range():
    """A leader index of 1e6 written after construction without a notification crashed the process (the
    row kernel read joint tables at it). The kernel now skips it: the pair steps on as with no mimic (bitwise)."""
    q = {}
    for leader in (-1, 1_000_000):
        model = _mimic_pair()
        solver = SolverSteel(model)
        _edit_mimic(model, leader=leader)
        q[leader] = _step_pair(model, solver)
    assert np.array_equal(q[-1], q[1_000_000]), q


def _driven_chain():
    """Two driven hinges (target_ke 10, target_kd 1) hanging from a pivot at z = 1 m."""
    builder = newton.ModelBuilder()
    inertia = wp.mat33(np.diag([0.02, 0.02, 0.02]))
    parent, joints = -1, []
    for i in range(2):
        link = builder.add_link(mass=1.0, inertia=inertia,
                                xform=wp.transform(wp.vec3(0.3 * (i + 1), 0.0, 1.0), wp.quat_identity()))
        joints.append(builder.add_joint_revolute(
            parent, link, axis=(0, 1, 0), target_ke=10.0, target_kd=1.0,
            parent_xform=wp.transform(wp.vec3(0.0, 0.0, 1.0) if parent < 0 else wp.vec3(0.3, 0.0, 0.0)),
            child_xform=wp.transform(wp.vec3(-0.3, 0.0, 0.0))))
        parent = link
    builder.add_articulation(joints)
    return builder.finalize(device="cpu")


@pytest.mark.parametrize(("field", "value", "flags", "message"), [
    ("joint_target_kd", -1.0, newton.ModelFlags.JOINT_DOF_PROPERTIES, r"joint 0 .*DOF 0 has joint_target_kd=-1.0"),
    ("joint_effort_limit", -5.0, newton.ModelFlags.JOINT_DOF_FORCE_PROPERTIES,
     r"joint 0 .*DOF 0 has joint_effort_limit=-5.0"),
    ("joint_target_kd", np.nan, newton.ModelFlags.JOINT_DOF_PROPERTIES, r"DOF 0 has joint_target_kd=nan"),
    ("body_mass", -1.0, newton.ModelFlags.BODY_INERTIAL_PROPERTIES, r"body 0 .*has body_mass=-1.0"),
])
def test_negative_gains_limits_and_masses_are_refused_at_construction_and_on_notify(field, value, flags, message):
    """target_kd = -1 gave NaN, an effort limit of -5 N·m lifted the chain above its pivot (z 0.63-0.70 m from
    1 m hanging), and a mass made negative through notify_model_changed(BODY_INERTIAL_PROPERTIES) flew a body
    to z = 9.8e12 m. Each raises ValueError naming the DOF or body and the value; the solver steps on once
    the edit is undone."""
    model = _driven_chain()
    original = getattr(model, field).numpy().copy()
    getattr(model, field).fill_(value)
    with pytest.raises(ValueError, match=message):
        SolverSteel(model)
    getattr(model, field).assign(original)
    solver = SolverSteel(model)
    getattr(model, field).fill_(value)
    with pytest.raises(ValueError, match=message):
        solver.notify_model_changed(flags)
    getattr(model, field).assign(original)
    solver.notify_model_changed(flags)
    s0, s1 = model.state(), model.state()
    for _ in range(60):
        solver.step(s0, s1, None, None, 1.0 / 240.0)
        s0, s1 = s1, s0
    z = s0.body_q.numpy()[:, 2]
    assert np.isfinite(z).all() and (z <= 1.0 + 1e-4).all()


def _box_and_contacts():
    model = single_box()
    pipeline = newton.CollisionPipeline(model)
    return model, pipeline, pipeline.contacts()


@pytest.mark.parametrize("field", ["rigid_contact_shape0", "rigid_contact_shape1"])
def test_a_contact_naming_a_shape_the_model_lacks_is_refused(field):
    """A live contact with shape id 1e6 made the contact kernels read past the shape tables (the reference
    crashes with SIGSEGV); the step now raises ValueError naming the field, slot and value, and steps on
    once the contacts are valid again."""
    model, pipeline, contacts = _box_and_contacts()
    solver = SolverSteel(model)
    s0, s1 = model.state(), model.state()
    pipeline.collide(s0, contacts)
    ids = getattr(contacts, field).numpy()
    ids[0] = 1_000_000
    getattr(contacts, field).assign(ids)
    with pytest.raises(ValueError, match=rf"contacts\.{field}\[0\] = 1000000 is not a shape of the model"):
        solver.step(s0, s1, None, contacts, DT)
    pipeline.collide(s0, contacts)
    solver.step(s0, s1, None, contacts, DT)
    assert abs(float(s1.body_q.numpy()[0, 2]) - 0.1) < 1e-4


def test_a_contact_array_shorter_than_the_capacity_is_refused():
    """A Contacts whose per-slot array is shorter than rigid_contact_max let the kernels index past it."""
    model, pipeline, contacts = _box_and_contacts()
    solver = SolverSteel(model)
    s0, s1 = model.state(), model.state()
    pipeline.collide(s0, contacts)
    contacts.rigid_contact_normal = wp.zeros(2, dtype=wp.vec3, device="cpu")
    with pytest.raises(ValueError, match=r"contacts\.rigid_contact_normal has 2 entries, fewer than "
                                         r"contacts\.rigid_contact_max="):
        solver.step(s0, s1, None, contacts, DT)
