"""SolverSteel joint friction (``enable_joint_friction``) and its load-proportional bound, on the CPU."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

from .scenes import G

DT = 1.0 / 240.0
FRICTION = 2.0  # [N·m or N]
EFFORTS = (-1.5, 1.5, -2.5, 2.5, -1.999, 1.999)  # [N·m or N]; +-1.999 just below the breakaway
HINGE_INERTIA = 0.5  # [kg·m²] about the hinge axis (z)
SLIDER_MASS = 2.0  # [kg]


def _hinges_and_sliders():
    """One hinge (about z) and one slider (along x) per effort, friction 2, gravity along -z (no load on them)."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    for _ in EFFORTS:
        link = b.add_link(mass=1.0, inertia=wp.mat33(np.diag([0.4, 0.4, HINGE_INERTIA])))
        b.add_articulation([b.add_joint_revolute(-1, link, axis=(0, 0, 1), friction=FRICTION)])
    for _ in EFFORTS:
        link = b.add_link(mass=SLIDER_MASS, inertia=wp.mat33(np.eye(3) * 0.1))
        b.add_articulation([b.add_joint_prismatic(-1, link, axis=(1, 0, 0), friction=FRICTION)])
    return b.finalize(device="cpu")


def _step(model, solver, control, steps, state=None):
    s0, s1 = (state or model.state()), model.state()
    for _ in range(steps):
        solver.step(s0, s1, control, None, DT)
        s0, s1 = s1, s0
    return s0


def test_hinge_and_slider_stick_below_breakaway_and_slide_by_net_effort_above():
    """Below the friction (|effort| 1.5 and 1.999 < 2) both joints stay at rest in both directions (|qd| < 1e-8,
    measured 2e-10: cfm); above it (2.5) they accelerate by (effort - friction) / inertia: after 0.1 s the hinge
    turns at 0.1 rad/s and the slider at 0.025 m/s, within 1e-5 relative (float32; measured 8e-7)."""
    model = _hinges_and_sliders()
    solver = SolverSteel(model, enable_joint_friction=True)
    control = model.control()
    control.joint_f.assign(np.array(EFFORTS * 2, dtype=np.float32))
    steps = 24
    qd = _step(model, solver, control, steps).joint_qd.numpy()
    for i, effort in enumerate(EFFORTS * 2):
        inertia = HINGE_INERTIA if i < len(EFFORTS) else SLIDER_MASS
        expected = np.sign(effort) * max(abs(effort) - FRICTION, 0.0) / inertia * steps * DT
        if expected == 0.0:
            assert abs(qd[i]) < 1e-8, (i, effort, qd[i])
        else:
            assert qd[i] == pytest.approx(expected, rel=1e-5), (i, effort, qd[i])
    solver.check_constraint_capacity()  # nothing flagged


def test_friction_off_or_zero_builds_no_rows_and_moves_freely():
    """Without enable_joint_friction, Model.joint_friction is ignored: the 1.5 N·m hinge turns at 1.5/0.5 rad/s²."""
    model = _hinges_and_sliders()
    control = model.control()
    control.joint_f.assign(np.array(EFFORTS * 2, dtype=np.float32))
    qd = _step(model, SolverSteel(model), control, 24).joint_qd.numpy()
    assert qd[1] == pytest.approx(1.5 / HINGE_INERTIA * 24 * DT, rel=1e-5)


def _pendulum(mass, *, length=0.5, friction=0.3, coefficient=0.05, bob_inertia=1e-3):
    """A bob hanging at rest below a world pivot on a revolute joint about y (gravity -z)."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    SolverSteel.register_custom_attributes(b)
    link = b.add_link(mass=mass, inertia=wp.mat33(np.eye(3) * bob_inertia), com=wp.vec3(0.0, 0.0, -length))
    joint = b.add_joint_revolute(-1, link, axis=(0, 1, 0), friction=friction,
                                 custom_attributes={"steel:joint_friction_load_coefficient": coefficient})
    b.add_articulation([joint])
    return b.finalize(device="cpu")


def _predicted_breakaway(mass, *, length=0.5, friction=0.3, coefficient=0.05, bob_inertia=1e-3):
    """tau = friction + c (|F| + |T|) under the free dynamics of effort tau (fixed point).

    From rest the effort gives alpha = tau / (I_c + m L^2); the joint transmits F = m (g + alpha L) (vertical
    and tangential parts) and, about the bob's COM, T = I_c alpha.
    """
    tau = friction
    for _ in range(100):
        alpha = tau / (bob_inertia + mass * length * length)
        load = mass * np.hypot(G, alpha * length) + bob_inertia * abs(alpha)
        tau = friction + coefficient * load
    return tau


def _measured_breakaway(model, solver):
    """Smallest effort [N·m] that moves the resting pendulum in one step, by bisection to 1e-6 N·m."""
    control = model.control()
    lo, hi = 0.0, 100.0
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        control.joint_f.assign([mid])
        qd = float(_step(model, solver, control, 1).joint_qd.numpy()[0])
        lo, hi = (mid, hi) if abs(qd) < 1e-7 else (lo, mid)
    return 0.5 * (lo + hi)


def test_breakaway_effort_grows_with_hanging_mass_as_c_times_load():
    """Friction 0.3 N·m plus c = 0.05 times the load: the breakaway effort of a 0.5 m pendulum is 0.3 + 0.05 m g
    plus the effort's own load, 0.79704 / 1.28953 / 2.27524 N·m at m = 1 / 2 / 4 kg (fixed point of the law), and
    1.30404 N·m for 2 kg with a bob inertia of 0.2 kg·m², where the torque about the bob's COM is 1.4 % of the
    breakaway (a load of |F| alone would give 1.28529). Measured within 1.3e-5 relative (bisection to 1e-6 N·m
    and the 1e-6 cfm); tolerance 4e-5 relative."""
    measured, predicted = [], []
    for mass, bob_inertia in ((1.0, 1e-3), (2.0, 1e-3), (4.0, 1e-3), (2.0, 0.2)):
        model = _pendulum(mass, bob_inertia=bob_inertia)
        solver = SolverSteel(model, enable_joint_friction=True)
        measured.append(_measured_breakaway(model, solver))
        predicted.append(_predicted_breakaway(mass, bob_inertia=bob_inertia))
    np.testing.assert_allclose(measured, predicted, rtol=4e-5)
    # Without the coefficient the breakaway is the plain friction, whatever the mass: measured 0.300024 N·m
    # (the 1e-6 cfm's share of a 4 kg bob's step), tolerance 7e-5 N·m absolute.
    model = _pendulum(4.0, coefficient=0.0)
    assert _measured_breakaway(model, SolverSteel(model, enable_joint_friction=True)) == pytest.approx(0.3, abs=7e-5)


def test_invalid_friction_raises_at_construction_and_flags_the_world_on_steps():
    """Negative friction raises ValueError naming the joint and DOF; nonzero friction on a FREE joint too. An
    invalid value written in place builds no row and check_constraint_capacity reports the world."""
    model = _hinges_and_sliders()
    friction = model.joint_friction.numpy()
    friction[0] = -1.0
    model.joint_friction.assign(friction)
    with pytest.raises(ValueError, match="joint_friction of .*DOF 0"):
        SolverSteel(model, enable_joint_friction=True)
    model.joint_friction.assign(np.abs(friction))
    solver = SolverSteel(model, enable_joint_friction=True)
    model.joint_friction.assign(np.where(np.arange(len(friction)) == 0, np.nan, np.abs(friction)).astype(np.float32))
    _step(model, solver, model.control(), 1)
    with pytest.raises(RuntimeError, match="world 0"):
        solver.check_constraint_capacity()
    with pytest.raises(ValueError, match="joint_friction"):
        solver.notify_model_changed(newton.ModelFlags.JOINT_DOF_PROPERTIES)

    b = newton.ModelBuilder()
    body = b.add_body(mass=1.0)
    b.joint_friction[-1] = 0.5  # the FREE joint's first DOF
    with pytest.raises(ValueError, match="must be 0"):
        SolverSteel(b.finalize(device="cpu"), enable_joint_friction=True)


def test_joint_friction_with_contact_compliance_is_not_supported():
    with pytest.raises(NotImplementedError, match="enable_joint_friction"):
        SolverSteel(_hinges_and_sliders(), enable_joint_friction=True, contact_compliance=True)


def test_usd_reads_the_load_coefficient_only_when_authored_and_the_old_spelling_with_a_warning(tmp_path):
    """newton:steel:jointFrictionLoadCoefficient is read; physxJoint:jointFriction is not; the older
    newton:steel:joint_friction_load_coefficient is read with a NewtonDeprecationWarning."""
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics  # noqa: PLC0415 (optional dependency)

    def stage(attributes):
        path = str(tmp_path / f"{next(iter(attributes)).replace(':', '_')}.usda")
        st = Usd.Stage.CreateNew(path)
        UsdGeom.SetStageUpAxis(st, UsdGeom.Tokens.z)
        UsdPhysics.Scene.Define(st, "/scene")
        UsdGeom.Xform.Define(st, "/robot")
        UsdPhysics.ArticulationRootAPI.Apply(st.GetPrimAtPath("/robot"))
        body = UsdGeom.Xform.Define(st, "/robot/link")
        UsdPhysics.RigidBodyAPI.Apply(body.GetPrim())
        UsdPhysics.MassAPI.Apply(body.GetPrim()).CreateMassAttr(1.0)
        joint = UsdPhysics.RevoluteJoint.Define(st, "/robot/hinge")
        joint.CreateBody1Rel().SetTargets(["/robot/link"])
        joint.CreateAxisAttr("Z")
        joint.CreateLocalPos0Attr(Gf.Vec3f(0, 0, 0))
        for name, value in attributes.items():
            joint.GetPrim().CreateAttribute(name, Sdf.ValueTypeNames.Float).Set(value)
        st.Save()
        b = newton.ModelBuilder()
        SolverSteel.register_custom_attributes(b)
        b.add_usd(path)
        return b.finalize(device="cpu").steel.joint_friction_load_coefficient.numpy()

    assert stage({"newton:steel:jointFrictionLoadCoefficient": 0.25})[0] == pytest.approx(0.25)
    assert stage({"physxJoint:jointFriction": 0.5})[0] == 0.0
    with pytest.warns(newton.NewtonDeprecationWarning, match="jointFrictionLoadCoefficient"):
        assert stage({"newton:steel:joint_friction_load_coefficient": 0.125})[0] == pytest.approx(0.125)


def test_ball_joint_dofs_are_independent_boxes():
    """A BALL joint with 1 N·m of friction per DOF and a sphere-like body (inertia 0.2 kg·m² about its COM at
    the pivot), torque (1.5, 0.5, -2.0) N·m: the x and z axes slide by (|tau| - 1)/I, y sticks; after 0.1 s the
    angular velocity is (0.25, 0, -0.5) rad/s within 1e-5 relative (the box per DOF, not a cone)."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    link = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 0.2))
    b.add_articulation([b.add_joint_ball(-1, link, friction=1.0)])
    model = b.finalize(device="cpu")
    solver = SolverSteel(model, enable_joint_friction=True)
    control = model.control()
    control.joint_f.assign(np.array([1.5, 0.5, -2.0], dtype=np.float32))
    qd = _step(model, solver, control, 24).joint_qd.numpy()
    expected = np.array([0.5, 0.0, -1.0]) / 0.2 * 24 * DT
    assert abs(qd[1]) < 1e-8
    assert np.allclose(qd[[0, 2]], expected[[0, 2]], rtol=1e-5), qd
