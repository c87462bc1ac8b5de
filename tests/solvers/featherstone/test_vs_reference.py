"""SolverFeatherstone side by side with Newton's reference newton.solvers.SolverFeatherstone, in the air."""

from __future__ import annotations

import numpy as np
import pytest

import newton
import steel.solvers
from benchmarks import scenes as bench_scenes
from tests.fixtures import build_asset, random_joint_state

from .scenes import free_box

DT, STEPS = 1.0 / 600.0, 200


def _trajectory(cls, model, q, qd, **options):
    state, other = model.state(), model.state()
    state.joint_q.assign(q)
    state.joint_qd.assign(qd)
    solver = cls(model, **options)
    for _ in range(STEPS):
        solver.step(state, other, None, None, DT)
        state, other = other, state
    return state.joint_q.numpy(), state.body_q.numpy()


def _compare(model, q, qd, **options):
    ours = _trajectory(steel.solvers.SolverFeatherstone, model, q, qd, **options)
    ref = _trajectory(newton.solvers.SolverFeatherstone, model, q, qd)
    assert np.isfinite(ours[0]).all()
    return np.abs(ours[0] - ref[0]).max(), np.abs(ours[1] - ref[1]).max()


def test_chain_matches_reference():
    """The 10-link chain released horizontal follows the reference within 1e-4 rad over 200 steps.

    Same algorithm in float32: measured 2e-5 rad (rounding differences of two RNEA/CRBA codes).
    """
    scene = bench_scenes.build_chain(2, "cpu")
    q, qd = scene.model.joint_q.numpy(), scene.model.joint_qd.numpy()
    dq, dbody = _compare(scene.model, q, qd, angular_damping=0.0)
    assert dq < 1.0e-4 and dbody < 1.0e-4


@pytest.fixture(scope="module")
def humanoid():
    model = build_asset("nv_humanoid.xml", 2)
    q, qd = random_joint_state(model, np.random.default_rng(0), speed=1.0)
    return model, model.joint_q.numpy(), qd


def test_humanoid_without_joint_gains_matches_reference(humanoid):
    """nv_humanoid tumbling in the air (1 rad/s random joint velocities, no joint gains) matches within 1e-4.

    With ``joint_damping``, ``joint_stiffness`` and the limit gains zeroed the two solvers run the same
    explicit algorithm; measured 2.4e-5 rad / 1.2e-5 m after 200 steps (float32 rounding).
    ``angular_damping=0`` because the reference stores but never applies it.
    """
    model, q, qd = humanoid
    saved = {n: getattr(model, n).numpy().copy() for n in ("joint_damping", "joint_stiffness", "joint_limit_ke", "joint_limit_kd")}
    try:
        for n in saved:
            getattr(model, n).zero_()
        dq, dbody = _compare(model, q, qd, angular_damping=0.0)
    finally:
        for n, v in saved.items():
            getattr(model, n).assign(v)
    assert dq < 1.0e-4 and dbody < 1.0e-4


def test_humanoid_with_joint_gains_stays_close_to_reference(humanoid):
    """With its own damping, springs and limits, nv_humanoid stays within 1e-2 rad / 5e-3 m of the reference.

    The systematic difference is ours treating joint-space penalties linearly implicitly (stable at any
    gain, see steel.solvers.featherstone.forces): an O(dt) change where gains act; measured 2.9e-3 rad and
    1.5e-3 m after 200 steps at dt = 1/600 s.
    """
    model, q, qd = humanoid
    dq, dbody = _compare(model, q, qd, angular_damping=0.0)
    assert dq < 1.0e-2 and dbody < 5.0e-3


def test_angular_damping_is_applied_to_free_bodies():
    """angular_damping = 0.05 (default) scales a free box's spin by (1 - 0.05 dt) per step; the reference does not."""
    model = free_box(gravity=0.0)
    qd = np.zeros(6, np.float32)
    qd[5] = 2.0  # spin about the box's principal z axis [rad/s]: steady, so only the damping changes it
    ours = steel.solvers.SolverFeatherstone(model)
    state = model.state()
    state.joint_qd.assign(qd)
    for _ in range(10):
        ours.step(state, state, None, None, DT)
    # float32 products of ten factors: 1e-6 relative.
    assert state.joint_qd.numpy()[5] == pytest.approx(2.0 * (1.0 - 0.05 * DT) ** 10, rel=1.0e-6)
