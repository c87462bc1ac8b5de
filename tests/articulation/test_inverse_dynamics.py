"""Forward dynamics of the core against Newton's inverse dynamics, and applied-force conventions.

Round trip: at a random state and a random ``qdd``, Newton's ``eval_inverse_dynamics_force``
gives ``tau = H qdd + C qd + g`` in ``Control.joint_f``'s convention; applying ``joint_f = tau``
to our core must leave ``-H^-1 dof_bias = qdd``. Applied wrenches: ``body_f`` (world wrench about
each COM) must enter ``dof_bias`` as ``-J^T body_f`` with Newton's COM-referenced Jacobian, and a
wrench on a free root body must act like the same wrench given as the root's ``joint_f``.

Error measures are unit-consistent (see ``test_core_vs_mujoco``): forces in the unit-diagonal
coordinates of ``H`` (``b_i / sqrt(H_ii)``), accelerations weighted by ``sqrt(H_ii)``.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
from steel.articulation import ArticulationCore

from ..fixtures import ASSETS, build_asset, random_joint_state, state_at

STATE_COUNT = 20
# The force residual is bounded by Newton's own float32 bias forces, which accumulate about the
# world origin: worst seen 1.1e-4 (humanoid right_hip_z, of which the core's share, measured
# against MuJoCo in float64, is 9e-6). A modelling error would be >= 1e-2.
FORCE_TOL = 5.0e-4
# Solving for qdd multiplies that by the condition number of the unit-diagonal H: up to ~7e2
# for the humanoid. Worst seen: 2.2e-4 (humanoid), 4.3e-5 (quadruped), 3e-6 (ant).
ACCEL_TOL = 2.0e-3
# body_f vs J^T body_f: float32 on both sides with the same inputs; worst seen 2.5e-6 (humanoid).
WRENCH_TOL = 2.0e-5


def _f64(a: wp.array) -> np.ndarray:
    return a.numpy().astype(np.float64)


def _scaled_force_error(b: np.ndarray, b_ref: np.ndarray, H: np.ndarray) -> float:
    d = np.sqrt(np.diag(H))
    return float((np.abs(b - b_ref) / d).max() / (np.abs(b_ref) / d).max())


class Scene:
    """A model, its core, and scratch arrays for one asset."""

    def __init__(self, asset: str):
        self.asset = asset
        self.model = build_asset(asset)
        self.core = ArticulationCore(self.model)
        n = self.model.joint_dof_count
        dev = self.model.device
        self.n = n
        self.H = wp.zeros((self.model.articulation_count, n, n), dtype=float, device=dev)
        self.gravity = wp.zeros(n, dtype=float, device=dev)
        self.coriolis = wp.zeros(n, dtype=float, device=dev)
        self.qdd = wp.zeros(n, dtype=float, device=dev)
        self.tau = wp.zeros(n, dtype=float, device=dev)
        self.x = wp.zeros(n, dtype=float, device=dev)

    def bias(self, state: newton.State, body_f=None, joint_f=None) -> np.ndarray:
        self.core.kinematics(state.joint_q, state.joint_qd, state.body_q, state.body_qd)
        self.core.dynamics(state.body_q, body_f=body_f, joint_f=joint_f)
        return _f64(self.core.data.dof_bias)


@pytest.fixture(scope="module", params=ASSETS)
def scene(request):
    """One asset's model and core, built once per module."""
    return Scene(request.param)


def test_inverse_dynamics_force_round_trips_through_core(scene):
    """joint_f = eval_inverse_dynamics_force(qdd) makes the core's -H^-1 dof_bias return qdd."""
    model, core = scene.model, scene.core
    rng = np.random.default_rng(11)
    worst_force = worst_accel = 0.0
    for _ in range(STATE_COUNT):
        q, qd = random_joint_state(model, rng)
        state = state_at(model, q, qd)
        qdd = rng.normal(size=scene.n)
        scene.qdd.assign(qdd.astype(np.float32))
        qdd = _f64(scene.qdd)
        newton.eval_inverse_dynamics_passive(
            model, state, mass_matrix=scene.H, gravity_force=scene.gravity, coriolis_force=scene.coriolis
        )
        newton.eval_inverse_dynamics_force(
            model,
            state,
            mass_matrix=scene.H,
            joint_qdd=scene.qdd,
            coriolis_force=scene.coriolis,
            gravity_force=scene.gravity,
            joint_f=scene.tau,
        )
        H = _f64(scene.H)[0]
        bias = scene.bias(state, joint_f=scene.tau)
        core.factor()
        core.solve(core.data.dof_bias, scene.x, scale=-1.0)
        x = _f64(scene.x)

        # With joint_f = tau, dof_bias = C qd + g - tau = -H qdd.
        worst_force = max(worst_force, _scaled_force_error(bias, -H @ qdd, H))
        d = np.sqrt(np.diag(H))
        worst_accel = max(worst_accel, float((np.abs(x - qdd) * d).max() / (np.abs(qdd) * d).max()))
    assert worst_force < FORCE_TOL, f"{scene.asset}: dof_bias + H qdd residual {worst_force:.2e}"
    assert worst_accel < ACCEL_TOL, f"{scene.asset}: recovered qdd differs by {worst_accel:.2e}"


def test_body_f_enters_as_jacobian_transpose(scene):
    """A world wrench about each body's COM in body_f changes dof_bias by -J^T wrench (Newton's eval_jacobian)."""
    model = scene.model
    rng = np.random.default_rng(12)
    art_start = model.articulation_start.numpy()
    child = model.joint_child.numpy()
    worst = 0.0
    for _ in range(STATE_COUNT):
        q, qd = random_joint_state(model, rng)
        state = state_at(model, q, qd)
        wrench = rng.normal(size=(model.body_count, 6))
        body_f = wp.array(wrench.astype(np.float32), dtype=wp.spatial_vector, device=model.device)
        wrench = _f64(body_f)
        J = _f64(newton.eval_jacobian(model, state))
        H = _f64(newton.eval_mass_matrix(model, state))[0]
        generalized = np.zeros(scene.n)
        for a in range(model.articulation_count):
            for i, j in enumerate(range(art_start[a], art_start[a + 1])):
                generalized += J[a, 6 * i : 6 * i + 6, : scene.n].T @ wrench[child[j]]
        change = scene.bias(state, body_f=body_f) - scene.bias(state)
        worst = max(worst, _scaled_force_error(change, -generalized, H))
    assert worst < WRENCH_TOL, f"{scene.asset}: body_f differs from J^T body_f by {worst:.2e}"


def test_root_body_f_equals_free_joint_f(scene):
    """A wrench on a free root body acts like the same world COM wrench given as the root's joint_f."""
    model = scene.model
    free = np.flatnonzero(model.joint_type.numpy() == newton.JointType.FREE)
    if free.size == 0:
        pytest.skip("no FREE joint")
    rng = np.random.default_rng(13)
    qd_start = model.joint_qd_start.numpy()
    child = model.joint_child.numpy()
    worst = 0.0
    for _ in range(STATE_COUNT):
        q, qd = random_joint_state(model, rng)
        state = state_at(model, q, qd)
        wrench = np.zeros((model.body_count, 6), dtype=np.float32)
        joint_f = np.zeros(scene.n, dtype=np.float32)
        for j in free:
            w = rng.normal(size=6).astype(np.float32)
            wrench[child[j]] = w
            joint_f[qd_start[j] : qd_start[j] + 6] = w
        via_body = scene.bias(state, body_f=wp.array(wrench, dtype=wp.spatial_vector, device=model.device))
        via_joint = scene.bias(state, joint_f=wp.array(joint_f, dtype=float, device=model.device))
        worst = max(worst, float(np.abs(via_body - via_joint).max() / np.abs(via_joint).max()))
    assert worst < WRENCH_TOL, f"{scene.asset}: root body_f and joint_f differ by {worst:.2e}"
