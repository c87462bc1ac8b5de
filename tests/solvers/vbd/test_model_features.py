"""SolverVBD refuses the model features it does not run (NotImplementedError naming them), never drops them."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

from .rigid.scenes import run


def _box(builder, z, link=False):
    add = builder.add_link if link else builder.add_body
    body = add(xform=wp.transform((0.0, 0.0, z), wp.quat_identity()))
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    return body


def _finalize(builder):
    builder.color()
    return builder.finalize(device="cpu")


def test_tendon_runs_and_its_unbuilt_guides_are_refused():
    """A tendon of ANCHOR guides is run, not dropped: a box hung on it from a world anchor stays within 1 mm of its
    start over 0.25 s (free it falls 0.31 m). A ROLLER guide with friction is refused naming it, at construction and, as pinhole
    friction set after construction, again on notify_model_changed."""
    b = newton.ModelBuilder()
    box = _box(b, 0.0)
    b.add_tendon([newton.TendonGuide(body=-1, offset=(0.0, 0.0, 1.0)), newton.TendonGuide(body=box)])
    model = _finalize(b)
    s0, _ = run(model, SolverVBD(model), 60, 1.0 / 240.0)
    assert abs(float(s0.body_q.numpy()[0, 2])) < 1e-3
    roller = newton.ModelBuilder()
    b0, b1 = _box(roller, 1.0), _box(roller, 2.0)
    roller.add_tendon([newton.TendonGuide(body=b0),
                       newton.TendonGuide(body=-1, guide_type=newton.TendonGuideType.ROLLER, radius=0.1, mu=0.5),
                       newton.TendonGuide(body=b1, compliance=1e-4)])
    with pytest.raises(NotImplementedError, match="friction at tendon ROLLER guides"):
        SolverVBD(_finalize(roller))
    pin = newton.ModelBuilder()
    b0, b1 = _box(pin, 1.0), _box(pin, 2.0)
    pin.add_tendon([newton.TendonGuide(body=b0),
                    newton.TendonGuide(body=-1, guide_type=newton.TendonGuideType.PINHOLE, offset=(0.0, 0.0, 3.0)),
                    newton.TendonGuide(body=b1)])
    model = _finalize(pin)
    solver = SolverVBD(model)
    model.tendon_guide_mu.assign(np.array([0.0, 0.5, 0.0], np.float32))
    with pytest.raises(NotImplementedError, match="friction at tendon PINHOLE guides"):
        solver.notify_model_changed(newton.ModelFlags.TENDON_PROPERTIES)


def test_muscle_is_refused():
    """A muscle (add_muscle) is refused, naming it."""
    b = newton.ModelBuilder()
    b0, b1 = _box(b, 1.0), _box(b, 2.0)
    b.add_muscle([b0, b1], [(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)], 1.0, 1.0, 1.0, 1.0, 1.0)
    with pytest.raises(NotImplementedError, match="muscles.*add_muscle"):
        SolverVBD(_finalize(b))


_MJCF = """<mujoco><worldbody>
<body name="a" pos="0 0 1"><geom type="box" size=".1 .1 .1"/></body>
<body name="b" pos="0 0.5 1"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
</worldbody><equality><weld body1="a" body2="b"/></equality></mujoco>"""


def test_unconverted_mujoco_equality_is_refused_and_converted_weld_runs():
    """A weld kept as MuJoCo metadata only is refused; the importer's default (a FIXED loop joint) runs and holds."""
    kept = newton.ModelBuilder()
    kept.add_mjcf(_MJCF, convert_mjc_equality_constraints=False)
    with pytest.raises(NotImplementedError, match="MuJoCo equality constraints.*convert_mjc_equality_constraints"):
        SolverVBD(_finalize(kept))
    converted = newton.ModelBuilder()
    converted.add_mjcf(_MJCF)
    model = _finalize(converted)
    s0, _ = run(model, SolverVBD(model), 30, 1.0 / 60.0)
    # The weld holds the free box b beside the fixed box a against gravity (free fall: 1.27 m in 30 steps).
    # Measured: 2.8e-5 m off (newton's SolverVBD sags 2.6e-3 m); limit 1e-4 m.
    assert abs(s0.body_q.numpy()[-1, 2] - 1.0) < 1e-4


def test_drive_on_a_two_angle_d6_is_refused():
    """A drive on a D6 DOF with two angular axes is refused (BALL drives: test_modes)."""
    b = newton.ModelBuilder()
    body = _box(b, 1.0, link=True)
    cfg = newton.ModelBuilder.JointDofConfig
    j = b.add_joint_d6(-1, body, angular_axes=[cfg(axis=(1, 0, 0), target_ke=50.0), cfg(axis=(0, 1, 0))])
    b.add_articulation([j])
    with pytest.raises(NotImplementedError, match="D6 joint with 2 angular axes"):
        SolverVBD(_finalize(b))


def test_drive_added_after_construction_is_refused_on_notify():
    """A BALL drive set after construction is refused by notify_model_changed(JOINT_DOF_PROPERTIES), nothing changed."""
    b = newton.ModelBuilder()
    body = _box(b, 1.0, link=True)
    b.add_articulation([b.add_joint_ball(-1, body)])
    model = _finalize(b)
    solver = SolverVBD(model)
    rigid = solver.rigid
    model.joint_target_ke.assign(np.array([0.0, 10.0, 0.0], np.float32))
    with pytest.raises(NotImplementedError, match="BALL"):
        solver.notify_model_changed(newton.ModelFlags.JOINT_DOF_PROPERTIES)
    assert solver.rigid is rigid


def _hinge(**dof):
    b = newton.ModelBuilder()
    body = _box(b, 1.0, link=True)
    b.add_articulation([b.add_joint_revolute(-1, body, axis=(0, 1, 0), **dof)])
    return _finalize(b)


def test_joint_friction_is_refused():
    """joint_friction > 0 is refused naming it (the solve has no joint friction; it would slide on)."""
    with pytest.raises(NotImplementedError, match="joint friction.*joint_friction"):
        SolverVBD(_hinge(friction=0.5))


def test_armature_and_joint_limits_are_named_in_a_warning():
    """Armature and effort/velocity limits are not run; a NewtonWarning names them (URDF robots keep running)."""
    with pytest.warns(newton.NewtonWarning, match="armature.*effort limits.*velocity limits"):
        SolverVBD(_hinge(armature=0.01, effort_limit=80.0, velocity_limit=20.0))
