"""The joint reaction wrench ``body_parent_f`` from the RNEA backward pass."""

import numpy as np
import warp as wp

import newton
from steel.articulation import ArticulationCore, eval_body_parent_f

G = 9.81


def _hanging_chain(link_count: int, link_length: float = 0.2, mass: float = 0.5):
    """Links hanging straight down from revolute joints about y, COM at each link's middle."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    inertia = wp.mat33(np.eye(3) * 1e-3)
    parent = -1
    for i in range(link_count):
        body = builder.add_link(mass=mass, inertia=inertia, com=wp.vec3(0.0, 0.0, -0.5 * link_length))
        joint = builder.add_joint_revolute(
            parent,
            body,
            parent_xform=wp.transform(wp.vec3(0.0, 0.0, 0.0 if parent < 0 else -link_length), wp.quat_identity()),
            child_xform=wp.transform_identity(),
            axis=(0.0, 1.0, 0.0),
        )
        if i == 0:
            first = joint
        parent = body
    builder.add_articulation(list(range(first, first + link_count)))
    return builder.finalize(device="cpu")


def _parent_f(model, state, core):
    core.step_quantities(state)
    qdd = wp.zeros(model.joint_dof_count, dtype=float)
    core.solve(core.data.dof_bias, qdd, scale=-1.0)
    out = wp.zeros(model.body_count, dtype=wp.spatial_vector)
    eval_body_parent_f(model, core.plan, core.data, state.body_q, qdd, out)
    return out.numpy().astype(np.float64), qdd.numpy()


def test_hanging_chain_joints_carry_their_subtree_weight():
    """At rest each joint of a hanging chain carries the weight of the links below it (0.01 %; gravity x 1.01 fails)."""
    count, mass = 4, 0.5
    model = _hanging_chain(count, mass=mass)
    core = ArticulationCore(model)
    f, qdd = _parent_f(model, model.state(), core)
    assert np.abs(qdd).max() < 1e-5  # hanging straight down is an equilibrium
    for i in range(count):
        subtree_weight = (count - i) * mass * G
        np.testing.assert_allclose(f[i, 2], subtree_weight, rtol=1e-4)
        np.testing.assert_allclose(f[i, :2], 0.0, atol=1e-4 * subtree_weight)  # [N]
        assert np.abs(f[i, 3:]).max() < 1e-4  # no moment about the COM of a vertical chain at rest


def test_spinning_link_reports_the_centripetal_force():
    """A link spinning about a vertical axis gets ``m w^2 r`` toward the axis plus its weight."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    mass, r, w = 2.0, 0.3, 5.0
    body = builder.add_link(mass=mass, inertia=wp.mat33(np.eye(3) * 1e-3), com=wp.vec3(r, 0.0, 0.0))
    joint = builder.add_joint_revolute(-1, body, axis=(0.0, 0.0, 1.0))
    builder.add_articulation([joint])
    model = builder.finalize(device="cpu")
    core = ArticulationCore(model)
    state = model.state()
    state.joint_qd.assign(np.array([w], dtype=np.float32))
    f, qdd = _parent_f(model, state, core)
    assert abs(qdd[0]) < 1e-5
    np.testing.assert_allclose(f[0, :3], [-mass * w * w * r, 0.0, mass * G], rtol=5e-3)
