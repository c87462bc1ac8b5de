"""Careless input gets a clear error before anything changes, or is contained and documented."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.app.scenes import build_scene
from steel.solvers import SolverSteel

from .scenes import G, pendulum, single_box

DT = 1.0 / 240.0


def test_state_or_control_of_another_model_raises_before_anything_changes():
    """Arrays of another model's length raise ValueError naming the argument; nothing is written.

    (Launching on them would read or write past the end of a buffer; the reference crashes.)
    """
    model = single_box(z=0.5)
    other = pendulum()
    solver = SolverSteel(model)
    state = model.state()
    before = state.joint_q.numpy().copy()
    with pytest.raises(ValueError, match="state_in.joint_q"):
        solver.step(other.state(), state, None, None, DT)
    with pytest.raises(ValueError, match="state_out.joint_q"):
        solver.step(state, other.state(), None, None, DT)
    with pytest.raises(ValueError, match="control.joint_f"):
        solver.step(state, state, other.control(), None, DT)
    np.testing.assert_array_equal(state.joint_q.numpy(), before)
    solver.step(state, state, model.control(), None, DT)  # still steps normally


def test_nan_in_one_world_never_reaches_another():
    """A NaN written into world 3 of 8 ants stays there: the other seven equal a clean run exactly.

    Worlds share no rows (each world's sweep reads only its own rows and DOFs), so containment is
    by construction; the NaN world itself goes non-finite, which the caller sees in its state.
    """
    scene = build_scene("ant", 8, "cpu")
    model = scene.model
    per_world = model.joint_coord_count // 8

    def run(poison):
        solver = SolverSteel(model)
        pipeline = newton.CollisionPipeline(model)
        contacts = pipeline.contacts()
        s0, s1 = model.state(), model.state()
        if poison:
            q = s0.joint_q.numpy()
            q[3 * per_world + 2] = np.nan  # world 3's torso height
            s0.joint_q.assign(q)
        for _ in range(30):
            pipeline.collide(s0, contacts)
            solver.step(s0, s1, None, contacts, scene.dt)
            s0, s1 = s1, s0
        return s0.joint_q.numpy().reshape(8, per_world)

    clean, poisoned = run(False), run(True)
    others = [w for w in range(8) if w != 3]
    assert np.isfinite(poisoned[others]).all()
    np.testing.assert_array_equal(poisoned[others], clean[others])
    assert not np.isfinite(poisoned[3]).all()


def test_unnormalized_free_joint_quaternion_is_normalized_on_read():
    """A FREE quaternion scaled by 3 gives the trajectory of the unit one; the output is unit length."""
    model = single_box(z=1.0)
    q = model.joint_q.numpy()
    q[3:7] = np.array([0.1, 0.2, 0.3, 0.9], np.float32)
    unit = q.copy()
    unit[3:7] /= np.linalg.norm(unit[3:7])
    scaled = q.copy()
    scaled[3:7] = 3.0 * unit[3:7]
    outputs = []
    for start in (unit, scaled):
        solver = SolverSteel(model)
        s0, s1 = model.state(), model.state()
        s0.joint_q.assign(start)
        s0.joint_qd.assign(np.array([0.0, 0.0, 0.0, 1.0, 2.0, 0.5], np.float32))
        for _ in range(20):
            solver.step(s0, s1, None, None, DT)
            s0, s1 = s1, s0
        outputs.append(s0.joint_q.numpy())
    np.testing.assert_allclose(outputs[1], outputs[0], atol=1e-6)  # float32 rounding of the rescale
    assert np.linalg.norm(outputs[1][3:7]) == pytest.approx(1.0, abs=1e-6)


def test_inverted_joint_limits_raise_naming_the_joint():
    """joint_limit_lower > joint_limit_upper is a ValueError at construction naming the joint."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    body = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-2), com=wp.vec3(0.0, 0.0, -0.5))
    joint = builder.add_joint_revolute(-1, body, axis=(0.0, 1.0, 0.0), limit_lower=0.5, limit_upper=-0.5,
                                       label="elbow")
    builder.add_articulation([joint])
    with pytest.raises(ValueError, match="elbow.*joint_limit_lower"):
        SolverSteel(builder.finalize(device="cpu"))
    builder.joint_limit_lower[0] = float("nan")  # a NaN bound would silently disable the limit
    with pytest.raises(ValueError, match="elbow.*NaN"):
        SolverSteel(builder.finalize(device="cpu"))


@pytest.mark.parametrize("case", ["massless hinge link", "zero-mass free body"])
def test_dofs_without_inertia_raise_naming_joint_and_body(case):
    """A dynamic DOF that moves no mass (no armature) has no acceleration: ValueError naming it.

    (The reference goes NaN on both models.) Armature or a kinematic flag makes them valid.
    """
    def build(armature=0.0, kinematic=False):
        builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
        if case == "massless hinge link":
            body = builder.add_link(mass=0.0, inertia=wp.mat33(np.zeros((3, 3))), label="tip",
                                    is_kinematic=kinematic)
            joint = builder.add_joint_revolute(-1, body, axis=(0.0, 1.0, 0.0), armature=armature)
            builder.add_articulation([joint])
        else:
            builder.add_body(mass=0.0, label="tip", is_kinematic=kinematic)
            builder.joint_armature[:] = [armature] * len(builder.joint_armature)
        return builder.finalize(device="cpu")

    with pytest.raises(ValueError, match="tip.*mass"):
        SolverSteel(build())
    SolverSteel(build(armature=0.1))
    SolverSteel(build(kinematic=True))


def test_massless_link_with_a_massive_child_is_accepted():
    """A zero-mass intermediate link (a URDF frame) is fine when its subtree carries mass."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    frame = builder.add_link(mass=0.0, inertia=wp.mat33(np.zeros((3, 3))))
    j0 = builder.add_joint_revolute(-1, frame, axis=(0.0, 1.0, 0.0))
    bob = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-3), com=wp.vec3(0.0, 0.0, -0.5))
    j1 = builder.add_joint_fixed(frame, bob)
    builder.add_articulation([j0, j1])
    SolverSteel(builder.finalize(device="cpu"))
