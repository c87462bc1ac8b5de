"""SolverSteel on the benchmark scenes at default options: no dropped rows, finite, physical."""

import numpy as np
import pytest

import newton
from benchmarks import scenes
from steel.solvers import SolverSteel

DT = 1.0 / 240.0


def _simulate(scene, seconds, **options):
    model = scene.model
    solver = SolverSteel(model, **options)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    start = s0.body_q.numpy().copy()
    for _ in range(int(round(seconds / DT))):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
    return solver, s0, start


@pytest.mark.parametrize("name, worlds", [("humanoid", 16), ("ant", 64)])
def test_robots_settle_at_default_options_without_dropping_rows(name, worlds):
    """nv_humanoid x16 and nv_ant x64: no row dropped, no NaN, torso at a plausible height after 2 s.

    Torso heights [m] at dt = 1/240 s from the same start state. SolverSteel: the unactuated humanoid
    (joint limits off by default, as in the reference) folds and lies on the ground at 0.17 from 1 s
    on (0.27 with enable_joint_limits=True); the ant stands on its legs at 0.566. MuJoCo C (mujoco
    3.17, mj_step on the twins of benchmarks/scenes.py: the same MJCF, its limits enforced, the same
    qpos): the humanoid is still collapsing at 2 s, at 0.540 (0.898 at 1 s), and lies on the ground
    at 0.078 from 3 s on; the ant stands at 0.562 and keeps sinking slowly (0.569 at 1 s,
    0.547 at 4 s). Measured with MuJoCo outside this test, which stays fast.
    """
    scene = getattr(scenes, f"build_{name}")(worlds, "cpu")
    solver, state, _ = _simulate(scene, 2.0)
    solver.check_constraint_capacity()  # raises if any world dropped a row
    assert not solver.constraint_overflow.numpy().any()
    assert np.isfinite(state.joint_q.numpy()).all() and np.isfinite(state.joint_qd.numpy()).all()
    torso = state.body_q.numpy()[solver.steel_model.core.plan.root_body_np, 2]
    low, high = {"humanoid": (0.08, 0.5), "ant": (0.5, 0.65)}[name]
    assert low < torso.min() and torso.max() < high
    assert torso.max() - torso.min() < 1e-3  # identical worlds stay identical


def test_four_towers_stand_for_ten_seconds():
    """The four dropped box towers stand for 10 s: every box within 1 um of its start, horizontally.

    Measured 0.0 m at dt = 1/240 s (and at 1/600 s): the scene is symmetric and the sweep solves
    the corners of each face as one group, so nothing breaks the symmetry; the limit allows a few
    float32 steps at 3.6 m. Before the groups the Gauss-Seidel order of the corners tilted the boxes
    of the towers dropped from 1 and 1.5 m as they landed: 5.4 mm at 1/240 s. Randomly offset boxes:
    test_contacts.py, the corner-order test.
    """
    solver, state, start = _simulate(scenes.build_tower(1, "cpu"), 10.0)
    drift = np.linalg.norm(state.body_q.numpy()[:, :2] - start[:, :2], axis=1)
    assert drift.max() < 1e-6  # [m]
    assert state.body_q.numpy()[:, 2].max() > 1.29  # the top box is still on top
