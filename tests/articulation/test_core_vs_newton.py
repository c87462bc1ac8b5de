"""The articulation core against Newton's public ``eval_fk``, ``eval_jacobian`` and ``eval_mass_matrix``.

Same float32 arithmetic in a different order: agreement is to float32 rounding accumulated
along a tree of ~15 joints. Tolerances are relative to the largest magnitude of each quantity.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.articulation import ArticulationCore, eval_articulation_jacobian, padded_blocks

from ..fixtures import ASSETS, build_asset, random_joint_state, to_numpy

STATE_COUNT = 20
# float32 has a 6e-8 unit roundoff; ~20 composed transforms and sums leave errors near 1e-6 of
# the largest entry. 2e-5 is a margin of ~20 over the worst seen.
RELATIVE_TOL = 2.0e-5


def _relative_error(ours: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(ours - ref).max() / max(np.abs(ref).max(), 1.0))


def _worst_errors_against_newton(model, seed: int) -> dict:
    """Largest relative error of FK, body twists, Jacobian and mass matrix over random states."""
    core = ArticulationCore(model)
    rng = np.random.default_rng(seed)
    ours, ref = model.state(), model.state()
    J_ours = wp.zeros((model.articulation_count, model.max_joints_per_articulation * 6, model.max_dofs_per_articulation))
    worst = {"body_q": 0.0, "body_qd": 0.0, "J": 0.0, "H": 0.0}
    for _ in range(STATE_COUNT):
        q, qd = random_joint_state(model, rng, speed=2.0)
        for s in (ours, ref):
            s.joint_q.assign(q)
            s.joint_qd.assign(qd)
        newton.eval_fk(model, ref.joint_q, ref.joint_qd, ref)
        core.kinematics(ours.joint_q, ours.joint_qd, ours.body_q, ours.body_qd)
        core.dynamics(ours.body_q)
        J_ours.zero_()
        eval_articulation_jacobian(model, core.plan, core.data, ours.body_q, J_ours)

        worst["body_q"] = max(worst["body_q"], _relative_error(to_numpy(ours.body_q), to_numpy(ref.body_q)))
        worst["body_qd"] = max(worst["body_qd"], _relative_error(to_numpy(ours.body_qd), to_numpy(ref.body_qd)))
        worst["J"] = max(worst["J"], _relative_error(to_numpy(J_ours), to_numpy(newton.eval_jacobian(model, ref))))
        H_ref = to_numpy(newton.eval_mass_matrix(model, ref))
        worst["H"] = max(worst["H"], _relative_error(padded_blocks(core.plan, core.data.mass_matrix), H_ref))
    return worst


@pytest.mark.parametrize("asset", ASSETS)
def test_kinematics_jacobian_and_mass_matrix_match_newton_at_random_states(asset):
    """FK, body twists, Jacobian and mass matrix equal Newton's at 20 random states."""
    model = build_asset(asset)
    worst = _worst_errors_against_newton(model, seed=2)
    for key, err in worst.items():
        assert err < RELATIVE_TOL, f"{asset}: {key} differs from Newton by {err:.2e} (relative)"


def test_every_joint_type_matches_newton_at_random_states():
    """FREE, PRISMATIC (skewed axis), BALL, REVOLUTE, FIXED, D6 with linear axes and DISTANCE in one
    tree: FK, body twists, Jacobian and mass matrix equal Newton's public functions at 20 states."""
    from ..fixtures import every_joint_type

    model = every_joint_type()
    types = set(model.joint_type.numpy().tolist())
    assert types == {int(t) for t in (newton.JointType.FREE, newton.JointType.PRISMATIC, newton.JointType.BALL,
                                      newton.JointType.REVOLUTE, newton.JointType.FIXED, newton.JointType.D6,
                                      newton.JointType.DISTANCE)}
    worst = _worst_errors_against_newton(model, seed=3)
    for key, err in worst.items():
        assert err < RELATIVE_TOL, f"{key} differs from Newton by {err:.2e} (relative)"
