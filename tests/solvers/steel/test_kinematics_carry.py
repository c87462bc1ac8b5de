"""The carried kinematics (kinematics_carry.py): a step that starts from the last step's output takes the
finish's placement instead of running the input kinematics again; any other input runs them in full.

Each test steps one solver with the carry and one on the separate stage launches, whose input kinematics
always run in full (and void the kept copies), and asks for the same bits through the inputs a caller may
change between steps: swapped states, an edited ``joint_q``, a fresh state given only coordinates, a model
edit announced with ``notify_model_changed``."""

import numpy as np
import warp as wp

import newton
import steel.solvers.steel.solver as solver_module
from steel.app.scenes import build_chain, build_humanoid
from steel.solvers import SolverSteel

DT = 1.0 / 240.0


def _pair(scene_builder, worlds=2):
    scene = scene_builder(worlds, "cpu")
    model = scene.model
    runs = []
    for _ in range(2):
        solver = SolverSteel(model)
        pipeline = newton.CollisionPipeline(model)
        contacts = pipeline.contacts()
        states = [model.state(), model.state()]
        newton.eval_fk(model, states[0].joint_q, states[0].joint_qd, states[0])
        runs.append([solver, pipeline, contacts, states])
    return model, runs


def _step(run, full: bool, steps: int, monkeypatch):
    """``steps`` steps; ``full``: on the separate launches, whose input kinematics run every step."""
    solver, pipeline, contacts, states = run
    with monkeypatch.context() as patch:
        if full:
            patch.setattr(solver_module, "free_dynamics_fuses", lambda *args: False)
        for _ in range(steps):
            pipeline.collide(states[0], contacts)
            solver.step(states[0], states[1], None, contacts, DT)
            states.reverse()


def _same(a, b):
    for name in ("joint_q", "joint_qd", "body_q", "body_qd"):
        np.testing.assert_array_equal(getattr(a[3][0], name).numpy(), getattr(b[3][0], name).numpy(), err_msg=name)


def test_carried_steps_equal_full_kinematics_through_caller_edits(monkeypatch):
    model, (carried, full) = _pair(build_chain)
    for run, on_full in ((carried, False), (full, True)):
        _step(run, on_full, 40, monkeypatch)
    _same(carried, full)
    # A caller moves a link and spins another (a reset of part of the state) between steps.
    for run in (carried, full):
        q = run[3][0].joint_q.numpy()
        qd = run[3][0].joint_qd.numpy()
        q[3] += 0.2
        qd[12] = -1.5
        run[3][0].joint_q.assign(q)
        run[3][0].joint_qd.assign(qd)
    for run, on_full in ((carried, False), (full, True)):
        _step(run, on_full, 20, monkeypatch)
    _same(carried, full)
    # A fresh state that holds only the coordinates and velocities (its bodies at the origin).
    for run in (carried, full):
        fresh = model.state()
        wp.copy(fresh.joint_q, run[3][0].joint_q)
        wp.copy(fresh.joint_qd, run[3][0].joint_qd)
        run[3][0] = fresh
    for run, on_full in ((carried, False), (full, True)):
        _step(run, on_full, 20, monkeypatch)
    _same(carried, full)


def test_announced_model_edit_places_the_bodies_again(monkeypatch):
    model, (carried, full) = _pair(build_humanoid, worlds=1)
    for run, on_full in ((carried, False), (full, True)):
        _step(run, on_full, 30, monkeypatch)
    com = model.body_com.numpy()
    com[3] += np.array([0.01, -0.02, 0.005], dtype=np.float32)
    model.body_com.assign(com)
    for run in (carried, full):
        run[0].notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
    for run, on_full in ((carried, False), (full, True)):
        _step(run, on_full, 30, monkeypatch)
    _same(carried, full)


def test_the_carry_is_taken_on_a_plain_step(monkeypatch):
    """White box: with the kinematics' motion subspaces poisoned after a step, a carried step reads them as the
    finish left them (NaN now), and the separate launches recompute them. Fails if the carry is never taken."""
    model, (carried, full) = _pair(build_chain, worlds=1)
    for run, on_full in ((carried, False), (full, True)):
        _step(run, on_full, 5, monkeypatch)
    for run in (carried, full):
        run[0].steel_model.core.data.dof_S.fill_(wp.nan)
    _step(carried, False, 1, monkeypatch)
    _step(full, True, 1, monkeypatch)
    assert np.isnan(carried[3][0].joint_qd.numpy()).any()
    assert np.isfinite(full[3][0].joint_qd.numpy()).all()
