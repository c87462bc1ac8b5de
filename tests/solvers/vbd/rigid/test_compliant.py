"""Compliant ALM (``rigid_compliant_alm=True``): known answers, and Newton's compliant path side by side."""

import math
import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

from .scenes import PIVOT, pendulum, revolute_angle, run, set_angle
from .test_joints import _crossing_period

G = 9.81
DT = 1.0 / 60.0


def _ours(model, **kw):
    return SolverVBD(model, rigid_compliant_alm=True, **kw)


def _boxes(count=1, ke=2500.0, half=0.05):
    """``count`` 1 kg boxes (side 2 ``half`` [m]) stacked touching on a ground plane, all shapes of stiffness ``ke``."""
    b = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig()
    cfg.ke = ke
    b.add_ground_plane(cfg=cfg)
    for i in range(count):
        body = b.add_body(xform=wp.transform((0.0, 0.0, half * (1 + 2 * i)), wp.quat_identity()))
        b.add_shape_box(body, hx=half, hy=half, hz=half, cfg=cfg)
    b.color()
    return b.finalize(device="cpu")


def _run_contacts(model, solver, steps, record=None, matching=None):
    """Collide and step ``steps`` times at 60 Hz; return the final state and ``record(state)`` per step."""
    pipeline = newton.CollisionPipeline(model, contact_matching=matching) if matching else newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1, control = model.state(), model.state(), model.control()
    out = []
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, control, contacts, DT)
        s0, s1 = s1, s0
        if record is not None:
            out.append(record(s0))
    return s0, out


def _inertial_start(solver):
    """Start every step at the inertial target, as Newton's SolverVBD does (ours starts adaptively by default)."""
    if isinstance(solver, SolverVBD):
        solver.rigid.adaptive_init = False
    return solver


# -- known answers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("dt", "stretch_atol"), [(1.0 / 60.0, 1.5e-5), (1.0 / 240.0, 1.0e-4)])
def test_pendulum_period_and_anchor(dt, stretch_atol):
    """REVOLUTE pendulum (0.1 rad, 1 kg, 1 m) on the default material (1e5 N/m): period within 1 % of
    2π sqrt(I_O/(m g L)) (1 + θ0²/16); the anchor is a spring stretched by about m g / k = 9.8e-5 m.

    Measured: period +0.075 % (60 Hz) and -0.006 % (240 Hz); stretch 9.4e-5 to 1.01e-4 m at 60 Hz and
    6.2e-5 to 1.18e-4 m at 240 Hz (the anchor spring's own oscillation, less damped at the finer step).
    """
    length, inertia, theta0 = 1.0, 1e-3, 0.1
    model = pendulum(length=length, inertia=inertia)
    state = model.state()
    set_angle(model, state, theta0)
    _, xs = run(model, _ours(model), int(round(6.5 / dt)), dt, state=state,
                record=lambda s: s.body_q.numpy()[0, :3].copy())
    xs = np.array(xs)
    analytic = 2 * math.pi * math.sqrt((length**2 + inertia) / (G * length)) * (1 + theta0**2 / 16)
    assert _crossing_period(xs[:, 0], dt) / analytic == pytest.approx(1.0, abs=0.01)
    stretch = np.linalg.norm(xs - PIVOT, axis=1) - length
    assert np.abs(stretch - G / 1.0e5).max() < stretch_atol
    assert np.abs(xs[:, 1]).max() < 1e-6


@pytest.mark.parametrize("k", [1.0e3, 1.0e5])
def test_linear_deflection_is_load_over_stiffness(k):
    """A 1 kg body on a BALL joint at its COM sags m g / k [m] (the material spring), not 0 as a hard joint.

    Measured at rest after 2 s: 9.8099e-3 m for k 1e3 N/m (expected 9.81e-3), 9.811e-5 m for 1e5 (9.81e-5).
    """
    model = pendulum(length=0.0, joint="ball")
    final, _ = run(model, _ours(model, rigid_joint_linear_ke=k), 120, DT)
    sag = PIVOT[2] - final.body_q.numpy()[0, 2]
    assert sag == pytest.approx(G / k, rel=1e-3)


def test_angular_deflection_is_load_over_stiffness():
    """A FIXED joint holding a 1 kg bob 1 m out against gravity turns by θ with k θ = m g L cos θ (k 1e3 N·m/rad).

    Measured: 9.8095e-3 rad, the root of that equation (9.8095e-3); Newton's compliant path gives 9.8095e-3 rad.
    """
    model = pendulum(gravity=(-G, 0.0, 0.0), joint="fixed")
    final, _ = run(model, _ours(model, rigid_joint_angular_ke=1.0e3), 300, DT)
    theta = 0.0
    for _ in range(20):
        theta = G * math.cos(theta) / 1.0e3
    assert revolute_angle(final.body_q.numpy()) == pytest.approx(theta, rel=1e-3)


def test_stack_rests_at_its_material_depths():
    """Three 1 kg boxes on 4-corner contacts of ke 2500 N/m rest with each layer sunk by the weight it carries
    over 4 ke: 2.943, 4.905, 5.886 mm cumulative (with contact history, so the multipliers carry the load).

    Measured after 4 s: 2.943, 4.906, 5.887 mm, speeds 0 m/s. (Newton's compliant path, same scene: 3.03, 3.95,
    5.49 mm and still moving at 0.028 m/s; without history ours rests at 3.26, 5.70, 6.84 mm, 10 iterations
    not rebuilding the cold multipliers each step, as a single box on Newton's, below.)
    """
    model = _boxes(3)
    solver = _ours(model, rigid_contact_history=True)
    final, _ = _run_contacts(model, solver, 240, matching="latest")
    ideal = 0.05 * (1 + 2 * np.arange(3))
    expected = np.cumsum([3.0, 2.0, 1.0]) * G / (4 * 2500.0)
    np.testing.assert_allclose(ideal - final.body_q.numpy()[:, 2], expected, atol=3e-6)
    assert np.abs(final.body_qd.numpy()).max() < 1e-3


@pytest.mark.parametrize("kind", ["drive", "limit"])
def test_drive_and_limit_hold_a_load(kind):
    """A REVOLUTE bob (1 kg, 1 m) pulled sideways by gravity is held by a drive to 0 or by an upper limit at 0,
    both of stiffness 1e3 N·m/rad: it rests at θ with k θ = m g L cos θ.

    Measured: 9.8095e-3 rad both (the root, 9.8095e-3). Newton's compliant path gives 9.8095e-3 rad with the
    drive, but lets the limited bob swing past its bound (-1.8 rad after 5 s); its legacy path holds it at 9.8095e-3.
    """
    gains = (dict(target_ke=1.0e3, target_kd=0.0) if kind == "drive"
             else dict(limit_lower=-1.0, limit_upper=0.0, limit_ke=1.0e3, limit_kd=0.0))
    model = pendulum(gravity=(-G, 0.0, 0.0), **gains)
    final, _ = run(model, _ours(model), 300, DT)
    theta = 0.0
    for _ in range(20):
        theta = G * math.cos(theta) / 1.0e3
    assert revolute_angle(final.body_q.numpy()) == pytest.approx(theta, rel=1e-3)


@pytest.mark.parametrize("kind", ["drive", "limit"])
def test_prismatic_drive_and_limit_hold_a_load(kind):
    """A PRISMATIC slider (1 kg, axis x, COM 1 m below the joint) loaded by gravity along -x, held by a drive to 0
    (ke 1e3 N/m) or by a lower limit at 0 (limit_ke 1e4 N/m): it rests at ``m g / k`` beyond, plus the structural
    angular slot's give (k_ang 1e5 N·m/rad turns the rod by ``m g L / k_ang``, moving the COM ``m g L² / k_ang``).

    Expected 9.9081 mm (drive), 1.0791 mm (limit); measured 9.9080997 mm and 1.0791001 mm after 5 s (rel. 3e-8,
    9e-8: float32), limit rel. 3e-7.
    Newton's compliant path holds the drive at the same 9.9080997 mm but not the limit: its slider falls through
    the bound and is 3962 m away after 5 s (its legacy path holds it at 0.981 mm, with a hard structural slot).
    Ours keeps the documented law, a compliant limit holds the load at the bound.
    """
    gains = (dict(target_ke=1.0e3, target_kd=0.0) if kind == "drive"
             else dict(limit_lower=0.0, limit_upper=1.0, limit_ke=1.0e4, limit_kd=0.0))
    model = pendulum(joint="prismatic", gravity=(-G, 0.0, 0.0), **gains)
    final, _ = run(model, _ours(model), 300, DT)
    k = 1.0e3 if kind == "drive" else 1.0e4
    expected = G / k + G / 1.0e5  # [m]: m = 1 kg, L = 1 m, the default structural angular stiffness
    assert -final.body_q.numpy()[0, 0] == pytest.approx(expected, rel=3e-7)


def _slope_run(solver_cls, degrees, **options):
    """A 1 kg box (mu 0.5, ke 2500 N/m) on ground tilted by ``degrees`` (gravity turned), 2 s at 1/240 s: x [m] per step."""
    model = _boxes(1)
    model.shape_material_mu.assign(np.full(model.shape_count, 0.5, np.float32))
    theta = math.radians(degrees)
    model.gravity.assign(np.array([[G * math.sin(theta), 0.0, -G * math.cos(theta)]], np.float32))
    solver = solver_cls(model, **options)
    pipeline = newton.CollisionPipeline(model, contact_matching="latest")
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    xs = []
    for _ in range(480):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, 1.0 / 240.0)
        s0, s1 = s1, s0
        xs.append(float(s0.body_q.numpy()[0, 0]))
    return np.array(xs)


def test_box_holds_on_a_slope_below_the_friction_angle():
    """On 10° (tan 0.18 < mu 0.5) the box holds, cold contacts each step (no history): creep < 0.01 mm/s.

    The friction row has no tangential material, its penalty is ``ρ``. Measured: 0.43 mm settling, then 0.0007
    mm/s (Newton's compliant path 0.0046 mm/s). With the normal row's ``k_eff`` as its penalty it crept 1.44 mm/s.
    """
    xs = _slope_run(_ours, 10.0)
    assert abs(xs[-1] - xs[239]) < 1e-5  # over the last second [m]
    assert xs[-1] < 1e-3


def test_box_slides_as_on_newton_compliant_path():
    """On 30° (tan 0.58 > mu 0.5) the box slides; after 2 s it is where Newton's compliant path puts it.

    Measured: 1.6621 m against 1.6625 m (0.03 %).
    """
    ours = _slope_run(_ours, 30.0)
    ref = _slope_run(newton.solvers.SolverVBD, 30.0)
    assert ours[-1] == pytest.approx(ref[-1], rel=1e-3)


# -- Newton's compliant path side by side ----------------------------------------------------------


@pytest.mark.parametrize(("k", "iterations"), [(1.0e3, 1), (1.0e3, 10), (1.0e5, 1)])
def test_hanging_body_matches_newton_compliant_path(k, iterations):
    """The BALL-hung body's sag, step by step for 2 s, as Newton's compliant path (both start at the inertial target).

    This pins the row's conditioning: with one iteration the sag of each step depends on ``ρ``. Measured: the
    trajectories agree to 1e-7 m (float32).
    """
    model = pendulum(length=0.0, joint="ball")
    sags = []
    for solver in (newton.solvers.SolverVBD(model, rigid_joint_linear_ke=k, iterations=iterations),
                   _inertial_start(_ours(model, rigid_joint_linear_ke=k, iterations=iterations))):
        _, rec = run(model, solver, 120, DT, record=lambda s: s.body_q.numpy()[0, 2])
        sags.append(np.array(rec))
    np.testing.assert_allclose(sags[1], sags[0], rtol=0.0, atol=3e-7)


@pytest.mark.parametrize("ke", [2.5e3, 1.0e6])
def test_landing_box_matches_newton_compliant_path(ke):
    """A 1 kg box released touching the ground sinks, step by step for 1 s, as on Newton's compliant path.

    Cold contacts each step (no history) at 10 iterations: the rest depth is what 10 sweeps reach, 1.006 mm
    for ke 2.5e3 N/m (0.981 converged) and 0.149 mm for 1e6 (0.0025 converged), on both. Measured: the
    trajectories agree to 1e-7 m.
    """
    model = _boxes(1, ke=ke)
    sinks = []
    for solver in (newton.solvers.SolverVBD(model), _inertial_start(_ours(model))):
        _, rec = _run_contacts(model, solver, 60, record=lambda s: s.body_q.numpy()[0, 2])
        sinks.append(np.array(rec))
    np.testing.assert_allclose(sinks[1], sinks[0], rtol=0.0, atol=3e-7)


def test_pendulum_matches_newton_compliant_path():
    """A 0.3 rad REVOLUTE pendulum over 2 s at 60 Hz: positions agree with Newton's compliant path.

    Measured: 1.7e-6 m apart at most (float32 and summation order).
    """
    model = pendulum()
    paths = []
    for solver in (newton.solvers.SolverVBD(model), _inertial_start(_ours(model))):
        state = model.state()
        set_angle(model, state, 0.3)
        _, rec = run(model, solver, 120, DT, state=state, record=lambda s: s.body_q.numpy()[0, :3].copy())
        paths.append(np.array(rec))
    np.testing.assert_allclose(paths[1], paths[0], rtol=0.0, atol=5e-6)


def _sideways_bob_angles(solver_class, iterations, steps=120):
    """A free REVOLUTE bob (1 kg, 1 m, inertia 1e-3 kg·m²) under sideways gravity from rest: its angle after each step
    [rad], every step starting at the inertial target."""
    model = pendulum(gravity=(-G, 0.0, 0.0))
    if solver_class is SolverVBD:
        solver = _inertial_start(_ours(model, iterations=iterations))
    else:
        solver = solver_class(model, iterations=iterations)
    _, rec = run(model, solver, steps, DT, record=lambda s: revolute_angle(s.body_q.numpy()))
    return np.array(rec)


def test_revolute_first_step_at_one_iteration_is_the_rigid_turn_as_newton():
    """One iteration, first step: the bob turns ``m g L dt² / (I + m L²)`` = 2.722278 mrad, as Newton's compliant path.

    One block solve of a single body is exact up to the joint's compliance and the Hessian's geometric term. Measured:
    2.722172 mrad (rel. 3.9e-5 below the rigid turn: the 1e5 N/m joint gives a little), Newton's 2.722160; limits
    rel. 1.2e-4 and 4e-8 rad apart. Before, 2.542 mrad: the anchor's geometric stiffness was lumped as ``|F| |r| I``
    on all three axes, and the first iterate's transient force (245 N at 1 m) stiffened the free hinge by 245 N·m/rad
    against the 3604 of its inertia over dt²; the paper's diagonal (column norms per constraint component,
    :func:`steel.solvers.vbd.rigid.joints.geometric_diagonal`) puts nothing on that axis for a force across the arm.
    """
    rigid = 1.0 * G * 1.0 / (1.0e-3 + 1.0) * DT * DT
    ours = _sideways_bob_angles(SolverVBD, 1, steps=1)[0]
    ref = _sideways_bob_angles(newton.solvers.SolverVBD, 1, steps=1)[0]
    assert ours == pytest.approx(rigid, rel=1.2e-4)
    assert abs(ours - ref) < 4e-8


@pytest.mark.parametrize(("iterations", "atol"), [(2, 3.5e-5), (10, 6e-5)])
def test_revolute_swing_matches_newton_from_two_iterations(iterations, atol):
    """The sideways bob over 2 s at 2 and 10 iterations: within ``atol`` [rad] of Newton's compliant path per step.

    Measured: 1.2e-5 and 2.1e-5 rad apart at most (2 and 10 iterations; swing amplitude 2.84 rad)."""
    ours = _sideways_bob_angles(SolverVBD, iterations)
    ref = _sideways_bob_angles(newton.solvers.SolverVBD, iterations)
    np.testing.assert_allclose(ours, ref, rtol=0.0, atol=atol)


def test_revolute_swing_at_one_iteration_keeps_the_papers_geometric_term():
    """At 1 iteration the sideways bob lags its converged swing, and Newton's does not: kept, as the AVBD paper's.

    The paper's Hessian (Giles, Diaz, Yuksel 2025, sec. 3.5) adds the geometric term of each constraint, its
    second derivative's column norms times the row's force ``|k C + λ|`` at the current iterate. A swinging bob's
    first iterate stretches the joint along the arm, so that force (the transient ``k_eff C``, above the real
    tension) stiffens the hinge in the one block solve a step gets. Newton's SolverVBD follows its converged
    swing at 1 iteration: ours with the geometric term removed reproduces it within 4.9e-5 rad over 2 s, so its
    compliant path has no such term here (measured, not read). Removing it would also remove what keeps a
    small-inertia bob on a D6 slide-hinge from turning by radians in one Newton step (the term's reason,
    :mod:`steel.solvers.vbd.rigid.joints`). Measured largest gaps to our 10-iteration swing over 2 s: ours 0.156 rad
    (5.5 % of the 2.84 rad amplitude; 0.254 rad with the lumped term before), Newton's 0.0067 rad; limits rel. 0.1
    on ours and 0.02 rad on Newton's. From 2 iterations on both agree (the test above).
    """
    converged = _sideways_bob_angles(SolverVBD, 10)
    ours = np.abs(_sideways_bob_angles(SolverVBD, 1) - converged).max()
    ref = np.abs(_sideways_bob_angles(newton.solvers.SolverVBD, 1) - converged).max()
    assert ours == pytest.approx(0.156, rel=0.1)
    assert ref < 0.02


def test_loaded_drive_matches_newton_compliant_path():
    """A PD drive (ke 1e3 N·m/rad, kd 50 N·m·s/rad) holding a sideways-loaded REVOLUTE bob, step by step for 2 s at
    10 iterations, as on Newton's compliant path.

    Measured: 2.4e-9 rad apart at most (3.7e-9 before the drive was an ALM row). At 1 iteration they differ by up
    to 4.9e-7 rad (7.8e-5 while the joint's geometric stiffness was lumped on all axes, see
    :func:`test_revolute_first_step_at_one_iteration_is_the_rigid_turn_as_newton`); both rest 0.011 % beyond
    k θ = m g L cos θ there, the multiplier's decay by gamma each step (9.81063e-3 rad, Newton's 9.81063e-3).
    """
    model = pendulum(gravity=(-G, 0.0, 0.0), target_ke=1.0e3, target_kd=50.0)
    angles = []
    for solver in (newton.solvers.SolverVBD(model), _inertial_start(_ours(model))):
        _, rec = run(model, solver, 120, DT, record=lambda s: revolute_angle(s.body_q.numpy()))
        angles.append(np.array(rec))
    np.testing.assert_allclose(angles[1], angles[0], rtol=0.0, atol=7.5e-9)


@pytest.mark.parametrize(("kd", "iterations"), [(0.0, 1), (20.0, 1), (20.0, 2)])
def test_drive_row_matches_newton_compliant_path_at_few_iterations(kd, iterations):
    """A PRISMATIC slider held by a drive (ke 1e3 N/m, kd [N·s/m]) against gravity along its axis, step by step for
    2 s at 1 or 2 iterations, as on Newton's compliant path: the drive is an ALM row with ``ρ = max(9 ke, m/dt²)``
    whose multiplier carries the spring and the damper (:func:`steel.solvers.vbd.rigid.joints.drive_row`).

    Few iterations show the row's conditioning: the first iterate sees ``0.9 ke`` and the multiplier the rest.
    Measured: 5.6e-9 m apart at most (float32); with the plain drive ``ke (s - target) + kd ṡ`` 4.7e-4 m (kd 0,
    1 iteration), 2.9e-4 m (kd 20, 1), 1.8e-5 m (kd 20, 2); with the damper outside the row 8.8e-5 m (kd 20, 1).
    """
    model = pendulum(joint="prismatic", gravity=(-G, 0.0, 0.0), target_ke=1.0e3, target_kd=kd)
    paths = []
    for solver in (newton.solvers.SolverVBD(model, iterations=iterations),
                   _inertial_start(_ours(model, iterations=iterations))):
        _, rec = run(model, solver, 120, DT, record=lambda s: float(s.body_q.numpy()[0, 0]))
        paths.append(np.array(rec))
    np.testing.assert_allclose(paths[1], paths[0], rtol=0.0, atol=1.5e-8)


# -- options ----------------------------------------------------------------------------------------


def _register_scene_material(builder):
    """Declare the ``vbd:rigid_joint_*`` scene attributes as Newton 1.8.0 does (ONCE, float32, built-in defaults)."""
    for name, usd, default in (("rigid_joint_linear_ke", "newton:vbd:rigid:jointLinearStiffness", 1.0e5),
                               ("rigid_joint_angular_ke", "newton:vbd:rigid:jointAngularStiffness", 1.0e5),
                               ("rigid_joint_linear_kd", "newton:vbd:rigid:jointLinearDamping", 0.0),
                               ("rigid_joint_angular_kd", "newton:vbd:rigid:jointAngularDamping", 0.0)):
        if f"vbd:{name}" not in builder.custom_attributes:
            builder.add_custom_attribute(newton.ModelBuilder.CustomAttribute(
                name=name, dtype=wp.float32, frequency=newton.Model.AttributeFrequency.ONCE, namespace="vbd",
                default=default, usd_attribute_name=usd))


def _scene_model(linear_ke=1.0e3):
    b = newton.ModelBuilder()
    _register_scene_material(b)
    body = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-3), xform=wp.transform(tuple(PIVOT), wp.quat_identity()))
    b.add_articulation([b.add_joint_ball(-1, body, parent_xform=wp.transform(tuple(PIVOT), wp.quat_identity()))])
    b.color()
    model = b.finalize(device="cpu")
    model.vbd.rigid_joint_linear_ke.assign(np.array([linear_ke], np.float32))
    return model


def test_joint_material_defaults_come_from_the_scene():
    """``vbd:rigid_joint_linear_ke`` is the stiffness under compliant ALM and for an explicit None; an explicit
    value wins; an omitted one on the seed's path keeps the seed's 1e5; a negative scene value -> ValueError."""
    model = _scene_model(1.0e3)
    assert _ours(model).options.rigid_joint_linear_ke == 1.0e3
    assert _ours(model, rigid_joint_linear_ke=2.0e3).options.rigid_joint_linear_ke == 2.0e3
    assert SolverVBD(model, rigid_joint_linear_ke=None).options.rigid_joint_linear_ke == 1.0e3
    assert SolverVBD(model).options.rigid_joint_linear_ke == 1.0e5
    final, _ = run(model, _ours(model), 120, DT)
    assert PIVOT[2] - final.body_q.numpy()[0, 2] == pytest.approx(G / 1.0e3, rel=1e-3)
    model.vbd.rigid_joint_linear_ke.assign(np.array([-1.0], np.float32))
    with pytest.raises(ValueError, match="jointLinearStiffness"):
        _ours(model)


def test_deprecated_and_seed_only_controls():
    """Under compliant ALM: the legacy betas / hard-contact / k_start controls warn once naming them (1.8.0);
    the seed's sticking-contact options raise NotImplementedError; set_joint_constraint_mode warns, changes nothing."""
    model = pendulum()
    with pytest.warns(newton.NewtonDeprecationWarning, match="rigid_avbd_beta, rigid_contact_hard"):
        _ours(model, rigid_avbd_beta=1.0, rigid_contact_hard=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _ours(model, rigid_avbd_beta=None, rigid_contact_stick_motion_eps=0.0)
    with pytest.raises(NotImplementedError, match="rigid_contact_stick_motion_eps"):
        _ours(model, rigid_contact_stick_motion_eps=1e-4)
    solver = _ours(model)
    before = solver.rigid.joints.hard.numpy().copy()
    with pytest.warns(newton.NewtonDeprecationWarning, match="no effect"):
        solver.set_joint_constraint_mode(0, False)
    np.testing.assert_array_equal(solver.rigid.joints.hard.numpy(), before)
    with pytest.raises(ValueError):
        solver.set_joint_constraint_mode(5, False)


def test_shape_materials_are_checked():
    """A negative contact stiffness is refused under compliant ALM (it is the spring itself): ValueError naming it."""
    model = _boxes(1)
    ke = model.shape_material_ke.numpy()
    ke[1] = -1.0
    model.shape_material_ke.assign(ke)
    with pytest.raises(ValueError, match=r"shape_material_ke\[1\]"):
        _ours(model)


def test_landing_cable_settles_flat():
    """Regression: a 40-capsule cable dropped 0.25 m onto ke 1e5 N/m ground settles flat at its radius (12 mm).

    With contact ``ρ`` from the bare segment inertia (its joints left out) its multipliers built up while it
    sank and threw it back up (0.17 m on frictionless ground; here segments 20 mm off at 0.6 s). Measured:
    every segment at 12.0 mm and still after 0.6 s at 1/600 s, as on Newton's compliant path (12.0 mm).
    """
    from steel.app import scenes

    sc = scenes.build_cable_pile(1, "cpu", color=True, layers=1, lanes=1)
    model = sc.model
    solver = _ours(model, rigid_contact_history=True, iterations=5)
    pipeline = newton.CollisionPipeline(model, contact_matching="latest")
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    for _ in range(360):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, sc.dt)
        s0, s1 = s1, s0
    z = s0.body_q.numpy()[:, 2]
    np.testing.assert_allclose(z, scenes.CABLE_RADIUS, atol=5e-4)
    assert np.abs(s0.body_qd.numpy()[:, :3]).max() < 0.01


def test_what_the_switch_fixes():
    """Under compliant ALM: C0 stabilization alpha 0 unless passed, λ kept by gamma, no ramp, ALM contacts without
    sticking or deadzone snap; ``vbd:joint_is_hard`` = 0 changes nothing (every non-cable slot is an ALM row)."""
    model = _boxes(1)
    solver = _ours(model, rigid_avbd_gamma=0.99)
    rc = solver.rigid.contacts
    assert (solver.rigid.joints.alpha, rc.alpha, rc.keep, rc.beta, rc.hard, rc.snap) == (0.0, 0.0, 0.99, 0.0, True, None)
    assert rc.data.stick_eps == 0.0
    solver = _ours(model, rigid_avbd_alpha=0.5, rigid_avbd_contact_alpha=0.25)
    assert (solver.rigid.joints.alpha, solver.rigid.contacts.alpha) == (0.5, 0.25)
    soft = pendulum(hard=0)
    solver = _ours(soft)
    assert solver.rigid.joints.hard.numpy().tolist() == [[1, 1]]
    assert solver.rigid.joints.lam_keep == pytest.approx(0.999)


def test_driven_chain_matches_newton_compliant_path():
    """The benchmark's driven chain (``benchmarks/vbd_extras.py``: 20 REVOLUTE links, every joint driven to 0 with
    ke 1e3 N·m/rad and kd 5 N·m·s/rad, released horizontal), 70 steps of 1/600 s side by side with Newton's SolverVBD.

    Measured: bodies 2.6e-5 m apart at most (tip sag 66.11 mm, Newton's 66.13 mm); limit 7.5e-5 m.
    """
    from benchmarks.vbd_extras import EXTRA_DT, build_drive_chain

    finals = []
    for cls, options in ((newton.solvers.SolverVBD, {}), (SolverVBD, {"rigid_compliant_alm": True})):
        model = build_drive_chain(1, "cpu")
        solver = cls(model, iterations=10, **options)
        final, _ = run(model, solver, 70, EXTRA_DT)
        finals.append(final.body_q.numpy()[:, :3])
    assert np.abs(finals[1] - finals[0]).max() < 7.5e-5
