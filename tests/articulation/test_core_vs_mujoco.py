"""The articulation core's mass matrix and bias forces against MuJoCo (float64) as an oracle.

:mod:`tests.mujoco_oracle` loads each MJCF into Newton and MuJoCo with identical inertial data
and maps MuJoCo's ``mj_fullM`` and ``qfrc_bias`` into Newton's coordinates. The first tests
check that mapping independently of our core, against Newton's public ``eval_fk``,
``eval_mass_matrix`` and ``eval_inverse_dynamics_passive``; the rest check the core.

Error measures (unit-consistent, so a root translation in kg and an ankle in kg·m² are judged
alike):

* matrices, entrywise against the Cauchy-Schwarz bound of each entry:
  ``max |dH_ij| / sqrt(H_ii H_jj)``;
* generalized forces, in the unit-diagonal coordinates of the reference mass matrix:
  ``max_i |db_i| / sqrt(H_ii)`` over ``max_i |b_i| / sqrt(H_ii)``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pytest
import warp as wp

pytest.importorskip("mujoco")

import newton  # noqa: E402
from steel.articulation import ArticulationCore, padded_blocks  # noqa: E402

from ..mujoco_oracle import MujocoOracle, OracleResult  # noqa: E402

# Every joint type MuJoCo shares with Newton (free, ball, skewed slide, welded body, hinge).
JOINT_TYPES_ASSET = os.path.join(os.path.dirname(__file__), "..", "assets", "mujoco_joint_types.xml")
ASSETS = ("nv_humanoid.xml", "nv_ant.xml", JOINT_TYPES_ASSET)
STATE_COUNT = 24
# Our core is float32, MuJoCo float64. The core sums spatial inertias about the articulation's
# first COM, so a distal body ~1 m from it whose joint sits ~5-10 cm from its own COM loses a
# factor (r/d)^2 ~ 1e2-4e2 to cancellation: ~2e-5 expected from float32's 6e-8 roundoff (worst
# seen over 100 states: 1.5e-5 for H, 6.5e-6 for the bias, both on the humanoid ankles; on the
# joint-types tree 9.2e-6 for H, 1.1e-5 for the Coriolis force). 1e-4 still flags any modelling
# error: a missing ankle armature is 0.36, a missing free-joint rate term 0.12, a ball angular
# velocity taken in the wrong frame (R_b^T for R_b) 15.
CORE_TOL = 1.0e-4
# Newton's public functions accumulate about the world origin in float32 with the root up to
# ~1.7 m away; worst seen over 100 states 7.8e-5 (Coriolis on the humanoid's right ankle; 8.8e-5
# on the joint-types tree).
NEWTON_TOL = 3.0e-4
# Body positions [m] and quaternion alignment 1 - |<q_a, q_b>| for float32 forward kinematics.
POSE_TOL = 2.0e-5


def matrix_error(H: np.ndarray, H_ref: np.ndarray) -> float:
    """``max |H - H_ref|_ij / sqrt(H_ref_ii H_ref_jj)``."""
    d = np.sqrt(np.diag(H_ref))
    return float((np.abs(H - H_ref) / np.outer(d, d)).max())


def force_error(b: np.ndarray, b_ref: np.ndarray, H_ref: np.ndarray) -> float:
    """Generalized-force error in the unit-diagonal coordinates of ``H_ref``, relative to ``b_ref``."""
    d = np.sqrt(np.diag(H_ref))
    return float((np.abs(b - b_ref) / d).max() / (np.abs(b_ref) / d).max())


def pose_error(body_q: np.ndarray, body_q_ref: np.ndarray) -> float:
    position = np.abs(body_q[:, :3] - body_q_ref[:, :3]).max()
    rotation = np.abs(1.0 - np.abs((body_q[:, 3:] * body_q_ref[:, 3:]).sum(axis=1))).max()
    return float(max(position, rotation))


@dataclass
class Sample:
    q: np.ndarray
    qd: np.ndarray
    ref: OracleResult
    newton_body_q: np.ndarray
    newton_H: np.ndarray
    newton_gravity: np.ndarray
    newton_coriolis: np.ndarray
    core_body_q: np.ndarray
    core_H: np.ndarray
    core_bias: np.ndarray
    core_gravity: np.ndarray
    core_coriolis: np.ndarray


def _f64(a: wp.array) -> np.ndarray:
    return a.numpy().astype(np.float64)


def _evaluate(oracle: MujocoOracle, core: ArticulationCore, q: np.ndarray, qd: np.ndarray) -> Sample:
    model = oracle.model
    n = model.joint_dof_count

    # Newton's public functions.
    ref_state = model.state()
    ref_state.joint_q.assign(q)
    ref_state.joint_qd.assign(qd)
    newton.eval_fk(model, ref_state.joint_q, ref_state.joint_qd, ref_state)
    gravity = wp.zeros(n, dtype=float, device=model.device)
    coriolis = wp.zeros(n, dtype=float, device=model.device)
    newton.eval_inverse_dynamics_passive(model, ref_state, gravity_force=gravity, coriolis_force=coriolis)
    newton_H = _f64(newton.eval_mass_matrix(model, ref_state))[0]

    # Our core: full bias, then Coriolis only (gravity off), then gravity only (at rest).
    state = model.state()
    state.joint_q.assign(q)
    state.joint_qd.assign(qd)
    core.kinematics(state.joint_q, state.joint_qd, state.body_q, state.body_qd)
    core.dynamics(state.body_q)
    core_body_q = _f64(state.body_q)
    core_H = padded_blocks(core.plan, core.data.mass_matrix)[0].astype(np.float64)
    core_bias = _f64(core.data.dof_bias)
    g = model.gravity.numpy().copy()
    try:
        model.gravity.zero_()
        core.dynamics(state.body_q, compute_mass_matrix=False)
        core_coriolis = _f64(core.data.dof_bias)
    finally:
        model.gravity.assign(g)
    state.joint_qd.zero_()
    core.kinematics(state.joint_q, state.joint_qd, state.body_q, state.body_qd)
    core.dynamics(state.body_q, compute_mass_matrix=False)
    core_gravity = _f64(core.data.dof_bias)

    return Sample(
        q=q,
        qd=qd,
        ref=oracle.evaluate(q, qd),
        newton_body_q=_f64(ref_state.body_q),
        newton_H=newton_H,
        newton_gravity=_f64(gravity),
        newton_coriolis=_f64(coriolis),
        core_body_q=core_body_q,
        core_H=core_H,
        core_bias=core_bias,
        core_gravity=core_gravity,
        core_coriolis=core_coriolis,
    )


@pytest.fixture(scope="module", params=ASSETS, ids=os.path.basename)
def asset_samples(request):
    """``(asset, oracle, samples)``: the oracle and every quantity at STATE_COUNT random states."""
    oracle = MujocoOracle(request.param)
    core = ArticulationCore(oracle.model)
    rng = np.random.default_rng(7)
    samples = [_evaluate(oracle, core, *oracle.random_state(rng, speed=1.0)) for _ in range(STATE_COUNT)]
    return request.param, oracle, samples


# -- the oracle against Newton's public functions ---------------------------------------------


def test_joint_types_asset_has_every_shared_joint_type():
    """The joint-types MJCF reaches Newton as FREE, BALL, PRISMATIC (skewed axis), FIXED and REVOLUTE."""
    oracle = MujocoOracle(JOINT_TYPES_ASSET)
    model = oracle.model
    types = {newton.JointType(int(t)) for t in model.joint_type.numpy()}
    J = newton.JointType
    assert types == {J.FREE, J.BALL, J.PRISMATIC, J.FIXED, J.REVOLUTE}
    (slide,) = np.flatnonzero(model.joint_type.numpy() == int(J.PRISMATIC))
    axis = model.joint_axis.numpy()[model.joint_qd_start.numpy()[slide]]
    assert np.count_nonzero(np.abs(axis) > 0.1) == 3, f"slide axis {axis} is not skewed"
    assert len(oracle.ball_joints) == 2


def test_oracle_state_map_round_trips(asset_samples):
    """Newton -> MuJoCo -> Newton state mapping is the identity (quaternion order, free-joint velocity)."""
    asset, oracle, samples = asset_samples
    for s in samples:
        q, qd = oracle.mujoco_to_newton(*oracle.newton_to_mujoco(s.q, s.qd))
        assert np.abs(q - s.q).max() < 1e-12, asset
        assert np.abs(qd - s.qd).max() < 1e-12 * max(1.0, np.abs(s.qd).max()), asset


def test_oracle_body_poses_match_newton_fk(asset_samples):
    """MuJoCo's body poses at the mapped state equal Newton's eval_fk (same bodies, frames, joints)."""
    asset, _, samples = asset_samples
    worst = max(pose_error(s.newton_body_q, s.ref.body_q) for s in samples)
    assert worst < POSE_TOL, f"{asset}: MuJoCo and eval_fk body poses differ by {worst:.2e}"


def test_oracle_mass_matrix_matches_newton(asset_samples):
    """Mapped MuJoCo mass matrix T^-T M T^-1 equals newton.eval_mass_matrix."""
    asset, _, samples = asset_samples
    worst = max(matrix_error(s.newton_H, s.ref.H) for s in samples)
    assert worst < NEWTON_TOL, f"{asset}: mapped MuJoCo H differs from eval_mass_matrix by {worst:.2e}"


def test_oracle_bias_matches_newton(asset_samples):
    """Mapped MuJoCo gravity and Coriolis forces equal newton.eval_inverse_dynamics_passive."""
    asset, oracle, samples = asset_samples
    worst_g = max(force_error(s.newton_gravity, s.ref.gravity, s.ref.H) for s in samples)
    worst_c = max(force_error(s.newton_coriolis, s.ref.coriolis, s.ref.H) for s in samples)
    assert worst_g < NEWTON_TOL, f"{asset}: mapped MuJoCo gravity force differs from Newton's by {worst_g:.2e}"
    assert worst_c < NEWTON_TOL, f"{asset}: mapped MuJoCo Coriolis force differs from Newton's by {worst_c:.2e}"
    root_coms = oracle.body_com[oracle.model.joint_child.numpy()[oracle.free_joints]]
    if len(root_coms) and np.abs(root_coms).max() > 0.0:
        # The comparison can see the free-joint rate term H (Tdot qvel): dropping it must fail.
        without_rate = max(
            force_error(
                s.newton_coriolis, s.ref.coriolis + s.ref.H @ oracle.velocity_map_rate(s.q, s.ref.qvel), s.ref.H
            )
            for s in samples
        )
        assert without_rate > 10.0 * NEWTON_TOL, f"{asset}: the Tdot term is invisible ({without_rate:.2e})"


# -- our core against the oracle -------------------------------------------------------------


def test_core_body_poses_match_mujoco(asset_samples):
    """Core forward kinematics places every body where MuJoCo does."""
    asset, _, samples = asset_samples
    worst = max(pose_error(s.core_body_q, s.ref.body_q) for s in samples)
    assert worst < POSE_TOL, f"{asset}: core and MuJoCo body poses differ by {worst:.2e}"


def test_core_mass_matrix_matches_mujoco(asset_samples):
    """Core CRBA mass matrix (armature included) equals MuJoCo's mj_fullM mapped to Newton coordinates."""
    asset, _, samples = asset_samples
    errors = [matrix_error(s.core_H, s.ref.H) for s in samples]
    k = int(np.argmax(errors))
    s = samples[k]
    d = np.sqrt(np.diag(s.ref.H))
    i, j = np.unravel_index(np.argmax(np.abs(s.core_H - s.ref.H) / np.outer(d, d)), s.ref.H.shape)
    assert errors[k] < CORE_TOL, (
        f"{asset}: H[{i},{j}] = {s.core_H[i, j]:.6g}, MuJoCo {s.ref.H[i, j]:.6g} (scaled error {errors[k]:.2e})"
    )


@pytest.mark.parametrize("part", ["bias", "gravity", "coriolis"])
def test_core_bias_matches_mujoco(asset_samples, part):
    """Core RNEA dof_bias (full, gravity only, Coriolis only) equals MuJoCo's mapped qfrc_bias."""
    asset, _, samples = asset_samples
    errors = [force_error(getattr(s, f"core_{part}"), getattr(s.ref, part), s.ref.H) for s in samples]
    k = int(np.argmax(errors))
    s = samples[k]
    ours, ref = getattr(s, f"core_{part}"), getattr(s.ref, part)
    i = int(np.argmax(np.abs(ours - ref) / np.sqrt(np.diag(s.ref.H))))
    assert errors[k] < CORE_TOL, (
        f"{asset}: {part}[{i}] = {ours[i]:.6g}, MuJoCo {ref[i]:.6g} (scaled error {errors[k]:.2e})"
    )


def test_core_mass_matrix_is_symmetric_positive_definite(asset_samples):
    """Core mass matrix is symmetric and positive definite at every sampled state."""
    asset, _, samples = asset_samples
    for s in samples:
        H = s.core_H
        assert np.abs(H - H.T).max() <= 1e-6 * np.abs(H).max(), f"{asset}: H is not symmetric"
        np.linalg.cholesky(H)  # raises LinAlgError when not positive definite
        assert np.linalg.eigvalsh(H).min() > 0.0, f"{asset}: H has a non-positive eigenvalue"
