"""SolverVBD's vbd: scene settings: rigid_contact_history and rigid_joint_*_ke/kd read from the scene as 1.8.0 does.

Known answers: a model with the attribute authored, the option given as None (1.8.0's spelling of "the
scene's value"), runs bitwise as one given the option, and differently from the default; omitted on the seed's
path, the option keeps the seed's default (as ``iterations``: the specification's decision table), and under
``rigid_compliant_alm=True`` (1.8.0's path) an omitted one reads the scene; an explicit option wins; bad scene values raise with the reference's message; the attributes have
the reference's names, types, defaults and USD names, and a USD scene sets them.
"""

import math

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

DT = 1.0 / 120.0
JOINT_SETTINGS = {  # option -> authored value (exact in float32) and USD name
    "rigid_joint_linear_ke": (250.0, "newton:vbd:rigid:jointLinearStiffness"),
    "rigid_joint_angular_ke": (40.0, "newton:vbd:rigid:jointAngularStiffness"),
    "rigid_joint_linear_kd": (2.5, "newton:vbd:rigid:jointLinearDamping"),
    "rigid_joint_angular_kd": (0.75, "newton:vbd:rigid:jointAngularDamping"),
}


def _pendulum(**scene):
    """A 1 kg bob on a one-angle D6 joint 0.5 m under a pivot, swung 0.5 rad (and spun about the locked x axis
    by ``_swing``): the joint's material and damping show in its path."""
    b = newton.ModelBuilder()
    SolverVBD.register_custom_attributes(b, dahl_defaults_enabled=False)
    body = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-2),
                      xform=wp.transform((0.5 * math.sin(0.5), 0.0, 2.0 - 0.5 * math.cos(0.5)),
                                         wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), 0.5)))
    joint = b.add_joint_d6(-1, body, parent_xform=wp.transform((0.0, 0.0, 2.0), wp.quat_identity()),
                           child_xform=wp.transform((0.0, 0.0, 0.5), wp.quat_identity()),
                           angular_axes=[newton.ModelBuilder.JointDofConfig(axis=(0, 1, 0))])
    b.add_articulation([joint])
    b.color()
    model = b.finalize(device="cpu")
    for name, value in scene.items():
        getattr(model.vbd, name).fill_(value)
    return model


def _swing(model, steps=40, **options):
    solver = SolverVBD(model, iterations=4, **options)
    s0, s1 = model.state(), model.state()
    s0.body_qd.assign(np.array([[0.0, 0.0, 0.0, 2.0, 0.0, 0.0]], np.float32))  # spin about x: against the joint
    for _ in range(steps):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    return solver, s0.body_q.numpy()


@pytest.mark.parametrize("name", list(JOINT_SETTINGS))
def test_scene_joint_material_runs_as_the_option(name):
    """Authored vbd:<name> with <name>=None gives bitwise the trajectory of passing <name>=, and not the default's;
    omitted on the seed's path it keeps the seed's default."""
    value = JOINT_SETTINGS[name][0]
    solver, from_scene = _swing(_pendulum(**{name: value}), **{name: None})
    assert getattr(solver, name) == value
    assert getattr(SolverVBD(_pendulum(**{name: value})), name) != value
    _, explicit = _swing(_pendulum(), **{name: value})
    _, default = _swing(_pendulum())
    np.testing.assert_array_equal(from_scene, explicit)
    assert not np.array_equal(from_scene, default)


def test_explicit_option_wins_and_none_reads_the_scene():
    """Precedence: explicit > scene (None; omitted only under compliant ALM) > the seed default."""
    model = _pendulum(rigid_joint_linear_ke=250.0, rigid_joint_angular_kd=0.75)
    assert SolverVBD(model, rigid_joint_linear_ke=1e3).rigid_joint_linear_ke == 1e3
    solver = SolverVBD(model, rigid_joint_linear_ke=None, rigid_joint_angular_kd=None)
    assert (solver.rigid_joint_linear_ke, solver.rigid_joint_angular_kd) == (250.0, 0.75)
    assert SolverVBD(model, rigid_joint_angular_ke=None).rigid_joint_angular_ke == 1e5  # registered, not authored
    assert SolverVBD(model).rigid_joint_linear_ke == 1e5  # omitted, the seed's path: the seed's default
    assert SolverVBD(model, rigid_compliant_alm=True).rigid_joint_linear_ke == 250.0  # omitted, 1.8.0's path


def test_model_without_the_attributes_keeps_the_defaults():
    """No register_custom_attributes: the seed defaults (1e5, 1e5, 0, 0, history off)."""
    b = newton.ModelBuilder()
    b.add_body(xform=wp.transform((0.0, 0.0, 1.0), wp.quat_identity()))
    b.color()
    solver = SolverVBD(b.finalize(device="cpu"))
    assert (solver.rigid_joint_linear_ke, solver.rigid_joint_angular_ke, solver.rigid_joint_linear_kd,
            solver.rigid_joint_angular_kd, solver.rigid_contact_history) == (1e5, 1e5, 0.0, 0.0, False)


@pytest.mark.parametrize("name", list(JOINT_SETTINGS))
@pytest.mark.parametrize("bad", [-1.0, math.inf, math.nan])
def test_bad_scene_value_raises_naming_attribute_and_option(name, bad):
    """A negative or non-finite scene stiffness/damping raises ValueError with the reference's wording; an
    explicit option wins over it."""
    model = _pendulum(**{name: bad})
    usd = JOINT_SETTINGS[name][1]
    with pytest.raises(ValueError, match=rf"Scene-authored {usd} \(model\.vbd\.{name}\) must be finite and >= 0, "
                                         rf"got {bad!r}\. Fix the scene value or pass {name}= explicitly"):
        SolverVBD(model, **{name: None})
    assert getattr(SolverVBD(model, **{name: 5.0}), name) == 5.0


def _box_on_ground(history=None):
    b = newton.ModelBuilder()
    SolverVBD.register_custom_attributes(b, dahl_defaults_enabled=False)
    b.add_ground_plane()
    body = b.add_body(xform=wp.transform((0.0, 0.0, 0.12), wp.quat_from_axis_angle(wp.vec3(1, 0, 0), 0.2)))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b.color()
    model = b.finalize(device="cpu")
    if history is not None:
        model.vbd.rigid_contact_history.fill_(history)
    return model


def _drop(model, steps=30, **options):
    pipeline = newton.CollisionPipeline(model, contact_matching="latest")
    contacts = pipeline.contacts()
    solver = SolverVBD(model, iterations=3, **options)
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
    return solver, s0.body_q.numpy()


def test_scene_contact_history_runs_as_the_option():
    """vbd:rigid_contact_history = True: bitwise the run of rigid_contact_history=True, not of False; an explicit
    False wins over the scene."""
    solver, from_scene = _drop(_box_on_ground(True), rigid_contact_history=None)
    assert solver.rigid_contact_history is True
    _, explicit = _drop(_box_on_ground(), rigid_contact_history=True)
    _, off = _drop(_box_on_ground())
    np.testing.assert_array_equal(from_scene, explicit)
    assert not np.array_equal(from_scene, off)
    assert SolverVBD(_box_on_ground(True), rigid_contact_history=False).rigid_contact_history is False


def test_attributes_match_the_reference_registration():
    """Names, dtypes, frequencies, defaults and USD names of the vbd: scene settings equal newton's SolverVBD's."""
    ours, ref = newton.ModelBuilder(), newton.ModelBuilder()
    SolverVBD.register_custom_attributes(ours, dahl_defaults_enabled=False)
    newton.solvers.SolverVBD.register_custom_attributes(ref)
    names = ["vbd:max_solver_iterations", "vbd:rigid_contact_history"] + [f"vbd:{n}" for n in JOINT_SETTINGS]
    for key in names:
        a, r = ours.custom_attributes[key], ref.custom_attributes[key]
        assert (a.dtype, a.frequency, a.default, a.usd_attribute_name) == (
            r.dtype, r.frequency, r.default, r.usd_attribute_name), key


def test_usd_scene_authors_the_settings():
    """A USD PhysicsScene authoring the six settings under their USD names sets model.vbd.* and the solver's options."""
    pxr = pytest.importorskip("pxr")
    Usd, UsdGeom, UsdPhysics, Sdf = pxr.Usd, pxr.UsdGeom, pxr.UsdPhysics, pxr.Sdf
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    scene = UsdPhysics.Scene.Define(stage, "/physicsScene").GetPrim()
    scene.CreateAttribute("newton:maxSolverIterations", Sdf.ValueTypeNames.Int).Set(7)
    scene.CreateAttribute("newton:vbd:rigid:contactHistory", Sdf.ValueTypeNames.Bool).Set(True)
    for name, (value, usd) in JOINT_SETTINGS.items():
        scene.CreateAttribute(usd, Sdf.ValueTypeNames.Float).Set(value)
    cube = UsdGeom.Cube.Define(stage, "/box")
    UsdPhysics.RigidBodyAPI.Apply(cube.GetPrim())
    UsdPhysics.CollisionAPI.Apply(cube.GetPrim())
    b = newton.ModelBuilder()
    SolverVBD.register_custom_attributes(b, dahl_defaults_enabled=False)
    b.add_usd(stage)
    b.color()
    model = b.finalize(device="cpu")
    solver = SolverVBD(model, iterations=None, rigid_contact_history=None, **{name: None for name in JOINT_SETTINGS})
    assert solver.iterations == 7 and solver.rigid_contact_history is True
    for name, (value, _usd) in JOINT_SETTINGS.items():
        assert getattr(solver, name) == value


def test_scene_history_without_matching_names_the_scene_attribute():
    """History from the scene with contacts that carry no match indices: the step's RuntimeError names the option,
    vbd:rigid_contact_history and its USD name."""
    model = _box_on_ground(True)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    solver = SolverVBD(model, rigid_contact_history=None)
    s0, s1 = model.state(), model.state()
    pipeline.collide(s0, contacts)
    with pytest.raises(RuntimeError, match=r"rigid_contact_history.*vbd:rigid_contact_history.*contactHistory"):
        solver.step(s0, s1, None, contacts, DT)
