"""SolverVBD joint API: JointSlot, set_joint_constraint_mode, vbd:joint_is_hard, unsupported and disabled joints."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

from .scenes import chain, chain_stretch, pendulum, run, soft_chain_stretch


def test_joint_slot_constants():
    """JointSlot: LINEAR = STRETCH = 0, ANGULAR = BEND = 1 (seed revision)."""
    slot = SolverVBD.JointSlot
    assert (slot.LINEAR, slot.STRETCH, slot.ANGULAR, slot.BEND) == (0, 0, 1, 1)


def test_invalid_joint_or_slot_raises_value_error():
    """Out-of-range joint, drive/limit slot (>= 2), negative slot, ANGULAR on BALL: ValueError naming it."""
    solver = SolverVBD(chain(links=2))  # BALL joints
    with pytest.raises(ValueError, match="out of range"):
        solver.set_joint_constraint_mode(99, False)
    with pytest.raises(ValueError, match="drive/limit"):
        solver.set_joint_constraint_mode(0, False, slot=2)
    with pytest.raises(ValueError, match="out of range"):
        solver.set_joint_constraint_mode(0, False, slot=-1)
    with pytest.raises(ValueError, match="BALL"):
        solver.set_joint_constraint_mode(0, False, slot=SolverVBD.JointSlot.ANGULAR)
    solver.set_joint_constraint_mode(0, False, slot=SolverVBD.JointSlot.LINEAR)
    revolute = SolverVBD(pendulum())
    revolute.set_joint_constraint_mode(0, False, slot=SolverVBD.JointSlot.ANGULAR)
    assert revolute.rigid.joints.hard.numpy()[0].tolist() == [1, 0]


def test_switching_a_hard_chain_soft_stretches_it_by_weight_over_stiffness():
    """set_joint_constraint_mode(j, False) on every joint of a settled hard chain: it sags to Σ W_i / k (1 %).

    A 10 kg block (so the 1e5 default stiffness gives a clean 41 mm): hard first (< 15 mm), then soft.
    """
    model = chain(block_mass=10.0)
    solver = SolverVBD(model, rigid_joint_linear_kd=2.0e3)
    stretch = lambda s: chain_stretch(model, s.body_q.numpy())  # noqa: E731
    state, hard = run(model, solver, 120, 1.0 / 60.0, every=120, record=stretch)
    assert hard[-1] < 0.015
    for j in range(model.joint_count):
        solver.set_joint_constraint_mode(j, False)
    _, soft = run(model, solver, 480, 1.0 / 60.0, state=state, every=480, record=stretch)
    assert abs(soft[-1] / soft_chain_stretch(block_mass=10.0) - 1.0) < 0.01


def test_joint_is_hard_attribute_sets_the_mode_and_is_validated():
    """vbd:joint_is_hard = 0 builds soft slots; values other than 0/1 raise ValueError."""
    soft = SolverVBD(pendulum(hard=0))
    assert soft.rigid.joints.hard.numpy()[0].tolist() == [0, 0]
    with pytest.raises(ValueError, match="joint_is_hard"):
        SolverVBD(pendulum(hard=2))


def test_register_custom_attributes_dahl_defaults():
    """register_custom_attributes declares the three vbd: joint attributes; dahl_defaults_enabled=True warns."""
    b = newton.ModelBuilder()
    with pytest.warns(DeprecationWarning, match="dahl_defaults_enabled"):
        SolverVBD.register_custom_attributes(b)
    b2 = newton.ModelBuilder()
    SolverVBD.register_custom_attributes(b2, dahl_defaults_enabled=False)
    for builder, positive in ((b, True), (b2, False)):
        body = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3)))
        builder.add_articulation([builder.add_joint_revolute(-1, body, axis=(0, 1, 0))])
        model = builder.finalize(device="cpu")
        assert model.vbd.joint_is_hard.numpy().tolist() == [1]
        assert (model.vbd.dahl_eps_max.numpy()[0] > 0.0) == positive
        assert (model.vbd.dahl_tau.numpy()[0] > 0.0) == positive


def test_unsupported_joint_raises_naming_it():
    """A DISTANCE joint between dynamic bodies raises NotImplementedError naming the joint."""
    b = newton.ModelBuilder()
    a = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3)))
    c = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3)), xform=wp.transform((1, 0, 0), wp.quat_identity()))
    j0 = b.add_joint_free(a)
    j1 = b.add_joint_distance(a, c, min_distance=0.5, max_distance=1.5, label="tether")
    b.add_articulation([j0, j1])
    b.color()
    with pytest.raises(NotImplementedError, match="joint 1.*tether.*DISTANCE"):
        SolverVBD(b.finalize(device="cpu"))


def test_drive_on_a_ball_joint_raises_naming_the_joint():
    """Drives and limits act on REVOLUTE, PRISMATIC and single-angle D6 DOFs; a BALL drive raises, never ignored."""
    model = pendulum(joint="ball")
    model.joint_target_ke.assign(np.array([0.0, 10.0, 0.0], np.float32))
    with pytest.raises(NotImplementedError, match="joint 0.*BALL"):
        SolverVBD(model)


def test_disabled_joint_lets_the_body_fall():
    """A joint with joint_enabled = False holds nothing: the bob falls freely (implicit Euler, 30 steps)."""
    model = pendulum()
    model.joint_enabled.assign(np.array([False]))
    z0 = model.body_q.numpy()[0, 2]
    final, _ = run(model, SolverVBD(model), 30, 1.0 / 60.0)
    assert abs(final.body_q.numpy()[0, 2] - (z0 - 9.81 * (1.0 / 60.0) ** 2 * 30 * 31 / 2)) < 1e-4
