"""Invariants of the articulation core that hold whatever the oracle: ``J qd = body_qd``,
``H`` symmetric positive definite, worlds independent, exact free fall, and plan-time errors."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.articulation import ArticulationCore, ArticulationPlan, eval_articulation_jacobian, padded_blocks
from steel.articulation.integrate import integrate_joints

from ..fixtures import ASSETS, build_asset, random_joint_state


@pytest.mark.parametrize("asset", ASSETS)
def test_jacobian_times_joint_velocity_is_body_twist(asset):
    """``J_link qd`` equals the FK body twist of every link (float32 rounding, 1e-5 relative)."""
    model = build_asset(asset)
    core = ArticulationCore(model)
    state = model.state()
    J = wp.zeros((model.articulation_count, model.max_joints_per_articulation * 6, model.max_dofs_per_articulation))
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, qd = random_joint_state(model, rng, speed=2.0)
        state.joint_q.assign(q)
        state.joint_qd.assign(qd)
        core.kinematics(state.joint_q, state.joint_qd, state.body_q, state.body_qd)
        J.zero_()
        eval_articulation_jacobian(model, core.plan, core.data, state.body_q, J)
        Jn, body_qd = J.numpy().astype(np.float64), state.body_qd.numpy().astype(np.float64)
        for a in range(model.articulation_count):
            n, d0 = core.plan.dof_count_np[a], core.plan.dof_start_np[a]
            first = core.plan.articulation_joints(a).min()
            for j in core.plan.articulation_joints(a):
                link = j - first
                twist = Jn[a, 6 * link : 6 * link + 6, :n] @ qd[d0 : d0 + n]
                child = model.joint_child.numpy()[j]
                assert np.allclose(twist, body_qd[child], atol=1e-5 * max(1.0, np.abs(body_qd).max()))


@pytest.mark.parametrize("asset", ASSETS)
def test_mass_matrix_is_symmetric_positive_definite(asset):
    """``H`` is symmetric to float32 rounding and its smallest eigenvalue is positive at random states."""
    model = build_asset(asset)
    core = ArticulationCore(model)
    state = model.state()
    rng = np.random.default_rng(7)
    for _ in range(10):
        q, qd = random_joint_state(model, rng)
        state.joint_q.assign(q)
        state.joint_qd.assign(qd)
        core.step_quantities(state)
        for a, H in enumerate(padded_blocks(core.plan, core.data.mass_matrix).astype(np.float64)):
            n = core.plan.dof_count_np[a]
            H = H[:n, :n]
            assert np.abs(H - H.T).max() <= 1e-6 * np.abs(H).max()
            assert np.linalg.eigvalsh(H).min() > 0.0


def test_batch_of_256_worlds_matches_single_world():
    """Each of 256 replicated nv_ant worlds at its own random state gives the single-world FK, bias and ``H``."""
    world_count = 256
    single = build_asset("nv_ant.xml")
    batch = build_asset("nv_ant.xml", world_count=world_count)
    core1, coreN = ArticulationCore(single), ArticulationCore(batch)
    assert coreN.plan.articulation_count == world_count
    rng = np.random.default_rng(11)
    states = [random_joint_state(single, rng) for _ in range(world_count)]
    stateN = batch.state()
    stateN.joint_q.assign(np.concatenate([q for q, _ in states]))
    stateN.joint_qd.assign(np.concatenate([qd for _, qd in states]))
    coreN.step_quantities(stateN)
    body_qN, biasN = stateN.body_q.numpy(), coreN.data.dof_bias.numpy()
    HN = padded_blocks(coreN.plan, coreN.data.mass_matrix)
    nb, nd = single.body_count, single.joint_dof_count
    state1 = single.state()
    for w, (q, qd) in enumerate(states):
        state1.joint_q.assign(q)
        state1.joint_qd.assign(qd)
        core1.step_quantities(state1)
        # Replicated worlds sit at the same place here, so the arithmetic is identical: exact match.
        np.testing.assert_array_equal(body_qN[w * nb : (w + 1) * nb], state1.body_q.numpy())
        np.testing.assert_array_equal(biasN[w * nd : (w + 1) * nd], core1.data.dof_bias.numpy())
        np.testing.assert_array_equal(HN[w], padded_blocks(core1.plan, core1.data.mass_matrix)[0])


def test_rigid_free_fall_follows_the_symplectic_euler_closed_form():
    """A resting humanoid falls rigidly: root height is ``z0 - g dt^2 n(n+1)/2`` to float32 rounding."""
    model = build_asset("nv_humanoid.xml")
    core = ArticulationCore(model)
    state = model.state()
    qdd = wp.zeros(model.joint_dof_count, dtype=float)
    dt, steps, g = 1.0 / 240.0, 120, 9.81
    core.step_quantities(state)
    root = core.plan.root_body_np[0]
    z0 = float(state.body_q.numpy()[root, 2])
    for _ in range(steps):
        core.solve(core.data.dof_bias, qdd, scale=-1.0)
        integrate_joints(model, state.joint_q, state.joint_qd, qdd, dt, state.joint_q, state.joint_qd)
        core.step_quantities(state)
    z = float(state.body_q.numpy()[root, 2])
    expected = z0 - g * dt * dt * steps * (steps + 1) / 2.0
    assert abs(z - expected) < 1e-5  # [m]: float32 positions near 1 m carry ~1e-7 m error per step
    # No relative joint motion develops: every hinge acceleration is zero in uniform gravity.
    assert np.abs(state.joint_qd.numpy()[6:]).max() < 1e-4


def _rod_model():
    builder = newton.ModelBuilder()
    inertia = wp.mat33(np.eye(3) * 0.01)
    a = builder.add_link(mass=1.0, inertia=inertia)
    b = builder.add_link(mass=1.0, inertia=inertia)
    j0 = builder.add_joint_free(a)
    j1 = builder.add_joint_rod(a, b, label="the_rod")
    builder.add_articulation([j0, j1])
    return builder.finalize(device="cpu")


def test_unsupported_joint_type_raises_at_plan_time():
    """A ROD joint inside an articulation is rejected with a ValueError naming the joint and its type."""
    with pytest.raises(ValueError, match=r"the_rod.*ROD"):
        ArticulationPlan(_rod_model())


def test_plan_orders_every_joint_after_its_parent():
    """The tree order lists each joint after the joint that moves its parent body."""
    plan = ArticulationPlan(build_asset("quadruped.urdf"))
    for a in range(plan.articulation_count):
        seen = set()
        for j in plan.articulation_joints(a):
            parent = plan.joint_parent_joint_np[j]
            assert parent < 0 or parent in seen
            seen.add(j)
