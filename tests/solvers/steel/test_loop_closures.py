"""SolverSteel loop-closing joints (joints/loop_closures.py): a four-bar linkage closed by a REVOLUTE joint."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

DT = 1.0 / 240.0
CRANK, COUPLER, ROCKER, GROUND = 0.1, 0.4, 0.3, 0.35  # [m]: a Grashof crank-rocker (0.1 + 0.4 <= 0.3 + 0.35)


def _rocker_angle(theta: float) -> float:
    """Closed-form rocker angle [rad] of the linkage for crank angle ``theta`` (the open branch)."""
    b = np.array([CRANK * np.cos(theta), CRANK * np.sin(theta)])
    d = np.array([GROUND, 0.0])
    dist = np.linalg.norm(d - b)
    along = (COUPLER**2 - ROCKER**2 + dist**2) / (2.0 * dist)
    height = np.sqrt(COUPLER**2 - along**2)
    u = (d - b) / dist
    c = b + along * u + height * np.array([-u[1], u[0]])
    return float(np.arctan2(c[1], c[0] - GROUND))


def _four_bar(theta0=1.0, follower=None, followers=1, ground=False):
    """Crank from the origin, coupler on the crank, rocker from (0.35, 0, 0), all hinged about -y in the x-z plane;
    a REVOLUTE joint outside the tree pins the coupler's end to the rocker's. No gravity; the crank has damping.
    ``follower`` (c0, c1): ``followers`` more links hinged to the world at x = 0.8, 1.0, ... m, in the same
    articulation, whose joints each mimic the crank's, ``q = c0 + c1 q_crank`` (they start on the relation).
    ``ground``: gravity, a ground plane at z = 0 and a 3 cm sphere 0.1 m along each link."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    inertia = wp.mat33(np.eye(3) * 1e-4)
    psi = _rocker_angle(theta0)
    pb = np.array([CRANK * np.cos(theta0), 0.0, CRANK * np.sin(theta0)])
    pc = np.array([GROUND + ROCKER * np.cos(psi), 0.0, ROCKER * np.sin(psi)])
    phi = np.arctan2(pc[2] - pb[2], pc[0] - pb[0])

    def pose(p, angle):
        return wp.transform(wp.vec3(*p), wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), float(-angle)))

    crank = b.add_link(mass=0.1, inertia=inertia, com=wp.vec3(CRANK / 2, 0, 0), xform=pose((0, 0, 0), theta0))
    coupler = b.add_link(mass=0.1, inertia=inertia, com=wp.vec3(COUPLER / 2, 0, 0), xform=pose(pb, phi))
    rocker = b.add_link(mass=0.1, inertia=inertia, com=wp.vec3(ROCKER / 2, 0, 0), xform=pose((GROUND, 0, 0), psi))
    axis = (0.0, -1.0, 0.0)
    j0 = b.add_joint_revolute(-1, crank, axis=axis)
    j1 = b.add_joint_revolute(crank, coupler, axis=axis, parent_xform=wp.transform(wp.vec3(CRANK, 0.0, 0.0)))
    j2 = b.add_joint_revolute(-1, rocker, axis=axis, parent_xform=wp.transform(wp.vec3(GROUND, 0.0, 0.0)))
    joints, q = [j0, j1, j2], [theta0, phi - theta0, psi]
    for i in range(followers if follower is not None else 0):
        x = 0.8 + 0.2 * i
        q.append(follower[0] + follower[1] * theta0)
        arm = b.add_link(mass=0.1, inertia=inertia, com=wp.vec3(0.05, 0, 0), xform=pose((x, 0, 0), q[-1]))
        joints.append(b.add_joint_revolute(-1, arm, axis=axis, parent_xform=wp.transform(wp.vec3(x, 0.0, 0.0))))
        b.set_joint_mimic(joints[-1], j0, coeffs=follower)
    b.add_articulation(joints)
    b.joint_q[:] = q
    b.joint_damping[0] = 0.005  # [N·m·s/rad]: 0.01 N·m then turns the crank at about 2 rad/s
    closure = b.add_joint_revolute(coupler, rocker, axis=axis, parent_xform=wp.transform(wp.vec3(COUPLER, 0.0, 0.0)),
                                   child_xform=wp.transform(wp.vec3(ROCKER, 0.0, 0.0)))
    if ground:
        b.gravity = (0.0, 0.0, -9.81)
        for body in (crank, coupler, rocker):
            b.add_shape_sphere(body, xform=wp.transform(wp.vec3(0.1, 0.0, 0.0), wp.quat_identity()), radius=0.03)
        b.add_ground_plane()
    return b.finalize(device="cpu"), closure


def _anchor_gap(model, state, joint) -> float:
    """Distance [m] between the closure's parent and child anchors."""
    bq = state.body_q.numpy()
    parent, child = int(model.joint_parent.numpy()[joint]), int(model.joint_child.numpy()[joint])

    def point(pose, local):
        return np.array(wp.transform_point(wp.transform(wp.vec3(*pose[:3]), wp.quat(*pose[3:])), wp.vec3(*local)))

    return float(np.linalg.norm(point(bq[parent], model.joint_X_p.numpy()[joint][:3])
                                - point(bq[child], model.joint_X_c.numpy()[joint][:3])))


def test_four_bar_keeps_its_anchors_and_moves_with_one_degree_of_freedom():
    """A 0.01 N·m torque turns the crank through more than three revolutions in 10 s (about 1.7 rad/s): the
    closure keeps the anchors within 0.1 mm (measured 47 um, median 15 um: Baumgarte 0.2 against the
    linearization drift of the turning links) and the rocker follows the closed-form crank-rocker relation
    within 1 mrad (measured 0.23 mrad), so the closed chain moves with one degree of freedom. Released in place
    (joint_enabled False), a 0.01 N·m torque on the rocker parts the anchors by 0.68 m in 1 s."""
    model, closure = _four_bar()
    solver = SolverSteel(model)
    control = model.control()
    control.joint_f.assign(np.array([0.01, 0.0, 0.0], dtype=np.float32))
    s0, s1 = model.state(), model.state()
    gaps, errors = [], []
    for _ in range(2400):
        solver.step(s0, s1, control, None, DT)
        s0, s1 = s1, s0
        q = s0.joint_q.numpy()
        gaps.append(_anchor_gap(model, s0, closure))
        errors.append(abs(np.angle(np.exp(1j * (q[2] - _rocker_angle(q[0]))))))
    assert s0.joint_q.numpy()[0] > 1.0 + 3 * 2 * np.pi
    assert max(gaps) < 1e-4, max(gaps)
    assert max(errors) < 1e-3, max(errors)

    # Released in place, the rocker turns on its own under a torque and the anchors part.
    enabled = model.joint_enabled.numpy()
    enabled[closure] = False
    model.joint_enabled.assign(enabled)
    control.joint_f.assign(np.array([0.0, 0.0, 0.01], dtype=np.float32))
    for _ in range(240):
        solver.step(s0, s1, control, None, DT)
        s0, s1 = s1, s0
    assert _anchor_gap(model, s0, closure) > 0.05


def test_unsupported_closures_raise_not_implemented_naming_the_joint():
    """A PRISMATIC joint closing a loop, a closure between two dynamic articulations, a disabled tree joint."""
    model, _ = _four_bar()
    types = model.joint_type.numpy()
    types[3] = int(newton.JointType.PRISMATIC)
    model.joint_type.assign(types)
    with pytest.raises(NotImplementedError, match="joint 3.*PRISMATIC"):
        SolverSteel(model)

    b = newton.ModelBuilder()
    inertia = wp.mat33(np.eye(3) * 1e-3)
    l0, l1 = b.add_link(mass=1.0, inertia=inertia), b.add_link(mass=1.0, inertia=inertia)
    b.add_articulation([b.add_joint_revolute(-1, l0, axis=(0, 0, 1))])
    b.add_articulation([b.add_joint_revolute(-1, l1, axis=(0, 0, 1))])
    b.add_joint_ball(l0, l1)
    with pytest.raises(NotImplementedError, match="two dynamic articulations"):
        SolverSteel(b.finalize(device="cpu"))

    model, _ = _four_bar()
    enabled = model.joint_enabled.numpy()
    enabled[0] = False
    model.joint_enabled.assign(enabled)
    with pytest.raises(NotImplementedError, match="tree joint disabled"):
        SolverSteel(model)


def _four_bar_mjcf(solref: str) -> str:
    """The same four-bar as an MJCF chain posed closed at qpos0, its rocker tip connected to the world."""
    theta = 1.0
    psi = _rocker_angle(theta)
    pb = np.array([CRANK * np.cos(theta), CRANK * np.sin(theta)])
    pc = np.array([GROUND + ROCKER * np.cos(psi), ROCKER * np.sin(psi)])
    phi = np.arctan2(pc[1] - pb[1], pc[0] - pb[0])
    back = np.arctan2(-pc[1], GROUND - pc[0])
    angles = (theta, phi - theta, back - phi)  # chain angles about -y that close the loop
    return f"""<mujoco><compiler angle="radian"/><option timestep="0.002" gravity="0 0 -9.81"/>
<worldbody>
 <body name="a" euler="0 {-angles[0]} 0"><joint type="hinge" axis="0 -1 0"/>
  <geom type="capsule" fromto="0 0 0 {CRANK} 0 0" size="0.01" mass="0.1"/>
  <body name="b" pos="{CRANK} 0 0" euler="0 {-angles[1]} 0"><joint type="hinge" axis="0 -1 0"/>
   <geom type="capsule" fromto="0 0 0 {COUPLER} 0 0" size="0.01" mass="0.1"/>
   <body name="c" pos="{COUPLER} 0 0" euler="0 {-angles[2]} 0"><joint type="hinge" axis="0 -1 0"/>
    <geom type="capsule" fromto="0 0 0 {ROCKER} 0 0" size="0.01" mass="0.1"/></body></body></body>
</worldbody>
<equality><connect body1="c" anchor="{ROCKER} 0 0" solref="{solref}"/></equality>
</mujoco>"""


def test_an_mjcf_connect_equality_matches_mujoco_c():
    """Newton's MJCF importer turns the equality connect into a BALL closure to the world; released from rest the
    linkage swings the crank through 5 rad in 0.5 s under gravity, and the joint angles stay within 0.02 rad of
    MuJoCo C on the same file over those 0.5 s (measured 8.9 mrad against MuJoCo's soft equality with solref
    0.004; 17.9 mrad with its default 0.02; they part later as the swing repeats)."""
    mujoco = pytest.importorskip("mujoco")
    xml = _four_bar_mjcf("0.004 1")
    mj_model = mujoco.MjModel.from_xml_string(xml)
    mj_data = mujoco.MjData(mj_model)
    builder = newton.ModelBuilder()
    builder.add_mjcf(xml)
    model = builder.finalize(device="cpu")
    assert int(model.joint_type.numpy()[3]) == int(newton.JointType.BALL) and model.joint_articulation.numpy()[3] < 0
    solver = SolverSteel(model)
    s0, s1 = model.state(), model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    diff, crank = 0.0, []
    for _ in range(250):
        solver.step(s0, s1, None, None, mj_model.opt.timestep)
        s0, s1 = s1, s0
        mujoco.mj_step(mj_model, mj_data)
        diff = max(diff, float(np.abs(s0.joint_q.numpy()[:3] - mj_data.qpos[:3]).max()))
        crank.append(mj_data.qpos[0])
    assert np.ptp(crank) > 4.0
    assert diff < 0.02, diff

    # An enabled equality row that names no converted joint is refused, not ignored.
    model.mujoco.equality_constraint_target_kind.assign(np.array([0], dtype=np.int32))
    with pytest.raises(NotImplementedError, match="equality constraint 0"):
        SolverSteel(model)


def test_a_tree_joint_disabled_later_is_reported_until_its_world_is_reset():
    """Disabling the crank's tree joint after construction (notify JOINT_PROPERTIES) flags world 0 for
    check_constraint_capacity (RuntimeError); a reset of the world clears it; the closure's own enable flag
    flags nothing."""
    model, closure = _four_bar()
    solver = SolverSteel(model)
    enabled = model.joint_enabled.numpy()
    enabled[closure] = False
    model.joint_enabled.assign(enabled)
    solver.notify_model_changed(newton.ModelFlags.JOINT_PROPERTIES)
    solver.check_constraint_capacity()  # a released closure is no error
    enabled[0] = False
    model.joint_enabled.assign(enabled)
    solver.notify_model_changed(newton.ModelFlags.JOINT_PROPERTIES)
    s0, s1 = model.state(), model.state()
    solver.step(s0, s1, None, None, DT)
    with pytest.raises(RuntimeError, match="world 0|global entry"):
        solver.check_constraint_capacity()
    solver.reset(s1)
    solver.check_constraint_capacity()


def test_settings_of_a_loop_revolute_dof_warn_that_they_are_ignored():
    """A closure has no coordinate: damping and a limit on the loop REVOLUTE DOF warn at construction and on
    an eager DOF notify; the plain four-bar does not warn."""
    import warnings  # noqa: PLC0415

    model, closure = _four_bar()
    with warnings.catch_warnings():
        warnings.simplefilter("error", newton.NewtonWarning)
        solver = SolverSteel(model)
    d = int(model.joint_qd_start.numpy()[closure])
    damping = model.joint_damping.numpy()
    damping[d] = 0.1
    model.joint_damping.assign(damping)
    with pytest.warns(newton.NewtonWarning, match="joint 3.*joint_damping.*ignored"):
        solver.notify_model_changed(newton.ModelFlags.JOINT_DOF_PROPERTIES)
    upper = model.joint_limit_upper.numpy()
    upper[d] = 0.5
    model.joint_limit_upper.assign(upper)
    with pytest.warns(newton.NewtonWarning, match="joint_limit_upper"):
        SolverSteel(model)


def test_a_revolute_closure_179_degrees_off_realigns_the_short_way():
    """A link on a world BALL joint, closed by a REVOLUTE (axis z) whose child frame is turned 179 degrees about x:
    the hinge rows take back the rotation angle itself, 20 % per step (Baumgarte 0.2), so after 40 steps the axis
    is within 1e-3 rad of z (179 deg x 0.8^40 = 4e-4 rad). An error of sin(angle) starts from sin(179 deg) and
    leaves it 85 degrees off at that step (measured with that error)."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    link = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 0.01))
    b.add_articulation([b.add_joint_ball(-1, link)])
    turned = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), float(np.radians(179.0)))
    b.add_joint_revolute(-1, link, axis=(0, 0, 1), child_xform=wp.transform(wp.vec3(0.0, 0.0, 0.0), turned))
    model = b.finalize(device="cpu")
    solver = SolverSteel(model)
    s0, s1 = model.state(), model.state()
    for _ in range(40):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    pose = s0.body_q.numpy()[0]
    axis = np.array(wp.quat_rotate(wp.quat(*pose[3:]), wp.quat_rotate(turned, wp.vec3(0.0, 0.0, 1.0))))
    assert np.arccos(np.clip(axis[2], -1.0, 1.0)) < 1e-3, axis


WELD_MJCF = """<mujoco><compiler angle="radian"/><option timestep="0.002" gravity="0 0 -9.81"/>
<worldbody>
 <body name="a" euler="0 -0.5 0"><joint type="hinge" axis="0 -1 0"/>
  <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.01" mass="0.2"/>
  <body name="b" pos="0.3 0 0" euler="0 -1.0 0"><joint type="hinge" axis="0 -1 0"/>
   <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.01" mass="0.1"/>
   <body name="c" pos="0.2 0 0" euler="0 -1.0 0"><joint type="hinge" axis="0 -1 0"/>
    <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.01" mass="0.1"/></body></body></body>
</worldbody>
<equality><weld body1="c" body2="a" solref="0.004 1"/></equality>
</mujoco>"""


def test_an_mjcf_weld_equality_matches_mujoco_c():
    """A three-link chain whose last link is welded to its first (Newton's importer: a FIXED closure inside the
    articulation) swings as one rigid pendulum through 4.8 rad in 1 s: its hinge angles stay within 0.02 rad of
    MuJoCo C on the same file (measured 7.2 mrad) and the welded hinges within 0.01 rad of their start (measured
    6.8 mrad at the fastest swing, 0.3 mrad at its end: Baumgarte 0.2 against the linearization drift)."""
    mujoco = pytest.importorskip("mujoco")
    mj_model = mujoco.MjModel.from_xml_string(WELD_MJCF)
    mj_data = mujoco.MjData(mj_model)
    builder = newton.ModelBuilder()
    builder.add_mjcf(WELD_MJCF)
    model = builder.finalize(device="cpu")
    assert int(model.joint_type.numpy()[3]) == int(newton.JointType.FIXED) and model.joint_articulation.numpy()[3] < 0
    solver = SolverSteel(model)
    s0, s1 = model.state(), model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    diff, welded = 0.0, 0.0
    for _ in range(500):
        solver.step(s0, s1, None, None, mj_model.opt.timestep)
        s0, s1 = s1, s0
        mujoco.mj_step(mj_model, mj_data)
        q = s0.joint_q.numpy()[:3]
        diff = max(diff, float(np.abs(q - mj_data.qpos[:3]).max()))
        welded = max(welded, float(np.abs(q[1:]).max()))
    assert diff < 0.02, diff
    assert welded < 0.01, welded


def _turntable(kind: str, axis=(0.0, 0.0, 1.0)):
    """A kinematic turntable at z = 0.5 m and a free 1 kg box whose centre is joined 0.3 m off the table's axis
    by a ``kind`` ("ball", "fixed" or "revolute" about ``axis``) joint outside the trees:
    ``(model, closure, table, box)``."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    table = b.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.5), wp.quat_identity()), is_kinematic=True,
                       mass=1.0, inertia=wp.mat33(np.eye(3) * 0.1))
    box = b.add_body(xform=wp.transform(wp.vec3(0.3, 0.0, 0.5), wp.quat_identity()), mass=1.0,
                     inertia=wp.mat33(np.eye(3) * 0.01))
    anchor = wp.transform(wp.vec3(0.3, 0.0, 0.0), wp.quat_identity())
    if kind == "ball":
        closure = b.add_joint_ball(table, box, parent_xform=anchor)
    elif kind == "fixed":
        closure = b.add_joint_fixed(table, box, parent_xform=anchor)
    else:
        closure = b.add_joint_revolute(table, box, parent_xform=anchor, axis=axis)
    return b.finalize(device="cpu"), closure, table, box


def _axes_apart(body_q, a, b, axis) -> float:
    """|a_a x a_b| of the body-frame ``axis`` of bodies ``a`` and ``b`` in world: sine of the angle between them."""
    rotated = [np.array(wp.quat_rotate(wp.quat(*body_q[i, 3:]), wp.vec3(*axis))) for i in (a, b)]
    return float(np.linalg.norm(np.cross(*rotated)))


def _relative_angle(body_q, a, b) -> float:
    """Angle [rad] of the rotation between bodies ``a`` and ``b``."""
    rel = wp.mul(wp.quat_inverse(wp.quat(*body_q[a, 3:])), wp.quat(*body_q[b, 3:]))
    return 2.0 * float(np.arccos(min(abs(float(rel[3])), 1.0)))


@pytest.mark.parametrize("kind", ["ball", "fixed", "revolute"])
def test_closure_to_a_spinning_kinematic_parent_carries_the_child_round(kind):
    """The turntable spins at 1 rad/s (its prescribed joint_qd) for 1 s at 240 Hz: the closure's anchors stay
    together and the box goes round with the table, under gravity. The REVOLUTE hinge is the table's x axis
    (radial), so the table's spin is across it and the hinge rows must follow it.

    Measured: anchor gap at most 1.3e-5 m (tolerance 4e-5 m absolute; a closure that ignores the parent's spin
    in its target lags 6.2e-3 m); with FIXED the box keeps the table's orientation within 6.9e-4 rad (tolerance
    2e-3 rad), with REVOLUTE its hinge axis on the table's within 4.6e-6 (sine; tolerance 1.5e-5); angular rows
    that ignore the parent's angular velocity leave 2.1e-2 either way. The table turns 1.000 rad and the box ends at
    (0.3 cos 1, 0.3 sin 1) within the gap tolerance.
    """
    model, closure, table, box = _turntable(kind, axis=(1.0, 0.0, 0.0))
    solver = SolverSteel(model)
    s0, s1 = model.state(), model.state()
    qd = s0.joint_qd.numpy()
    qd[6 * table + 5] = 1.0  # the table's FREE joint: angular z [rad/s]
    s0.joint_qd.assign(qd)
    gaps, turns = [], []
    for _ in range(240):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
        gaps.append(_anchor_gap(model, s0, closure))
        q = s0.body_q.numpy()
        turns.append(_relative_angle(q, table, box) if kind == "fixed" else _axes_apart(q, table, box, (1, 0, 0)))
    q = s0.body_q.numpy()
    angle = 2.0 * np.arctan2(q[table, 5], q[table, 6])
    assert abs(angle - 1.0) < 1e-5
    assert max(gaps) < 4e-5
    np.testing.assert_allclose(q[box, :3], [0.3 * np.cos(angle), 0.3 * np.sin(angle), 0.5], rtol=0, atol=4e-5)
    if kind != "ball":
        assert max(turns) < (2e-3 if kind == "fixed" else 1.5e-5)


def test_closure_frames_and_axes_edited_in_place_take_effect():
    """Model.joint_X_p of a BALL closure moved 5 cm along x in place re-anchors the box there within 0.5 s;
    Model.joint_axis of a REVOLUTE closure turned from z to x in place re-aims it: the box, free to spin about
    z and turned 0.25 rad about it, is brought back until its x axis lies on the table's (the new hinge line).

    Measured: anchor gap and the box's x 6e-8 m off (float32), x axes 6e-13 apart. Tolerances, absolute:
    2e-7 m (an edit not read leaves 5e-2 m), and 1e-6 on the cross product of the axes (0.25 if not read)."""
    model, closure, table, box = _turntable("ball")
    solver = SolverSteel(model)
    x_p = model.joint_X_p.numpy()
    x_p[closure, 0] += 0.05
    model.joint_X_p.assign(x_p)
    s0, s1 = model.state(), model.state()
    for _ in range(120):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    assert _anchor_gap(model, s0, closure) < 2e-7
    assert abs(s0.body_q.numpy()[box, 0] - 0.35) < 2e-7

    model, closure, table, box = _turntable("revolute")
    solver = SolverSteel(model)
    s0, s1 = model.state(), model.state()
    qd = s0.joint_qd.numpy()
    qd[6 * box + 5] = 1.0  # the box's FREE joint: angular z [rad/s], about the hinge
    s0.joint_qd.assign(qd)
    for _ in range(60):  # 0.25 s
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    assert _relative_angle(s0.body_q.numpy(), table, box) > 0.2  # it turned about the z hinge
    axis = model.joint_axis.numpy()
    axis[model.joint_qd_start.numpy()[closure]] = (1.0, 0.0, 0.0)
    model.joint_axis.assign(axis)
    for _ in range(120):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    q = s0.body_q.numpy()
    x_table = np.array(wp.quat_rotate(wp.quat(*q[table, 3:]), wp.vec3(1.0, 0.0, 0.0)))
    x_box = np.array(wp.quat_rotate(wp.quat(*q[box, 3:]), wp.vec3(1.0, 0.0, 0.0)))
    assert np.linalg.norm(np.cross(x_table, x_box)) < 1e-6
