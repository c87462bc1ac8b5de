"""SolverFeatherstone penalty contacts: resting and sliding boxes, nv_humanoid dropped on the ground."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
import steel.solvers
from benchmarks import scenes as bench_scenes

from .scenes import G, run


def _box_on_ground(mu: float, v0: float = 0.0):
    b = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=mu)
    body = b.add_body(xform=wp.transform((0.0, 0.0, 0.1), wp.quat_identity()))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    b.add_ground_plane(cfg=cfg)
    model = b.finalize(device="cpu")
    state = model.state()
    qd = np.zeros(6, np.float32)
    qd[0] = v0
    state.joint_qd.assign(qd)
    pipeline = newton.CollisionPipeline(model)
    return model, state, pipeline, pipeline.contacts()


def test_resting_box_sinks_to_its_penalty_depth():
    """A 8 kg box at rest sinks until its contacts carry m g: total depth m g / (contacts ke), within 10 %."""
    model, state, pipeline, contacts = _box_on_ground(mu=0.7)
    solver = steel.solvers.SolverFeatherstone(model)
    run(solver, model, state, 600, 1.0 / 600.0, contacts=contacts, pipeline=pipeline)
    z = float(state.body_q.numpy()[0, 2])
    count = int(contacts.rigid_contact_count.numpy()[0])
    ke = float(model.shape_material_ke.numpy()[0])
    depth = float(model.body_mass.numpy()[0]) * G / (count * ke)
    # Four corner contacts share the load; 10 % covers the residual bounce of the damped spring.
    assert 0.1 - z == pytest.approx(depth, rel=0.1)
    assert np.abs(state.body_qd.numpy()).max() < 1.0e-2


def test_sliding_box_decelerates_at_mu_g():
    """A settled box pushed to 3 m/s (above friction_smoothing = 1 m/s) decelerates at mu g within 3 %."""
    model, state, pipeline, contacts = _box_on_ground(mu=0.5)
    solver = steel.solvers.SolverFeatherstone(model)
    dt, steps = 1.0 / 600.0, 120
    run(solver, model, state, 600, dt, contacts=contacts, pipeline=pipeline)  # settle the contact springs
    qd = state.joint_qd.numpy()
    qd[0] = 3.0
    state.joint_qd.assign(qd)
    run(solver, model, state, steps, dt, contacts=contacts, pipeline=pipeline)
    decel = (3.0 - float(state.body_qd.numpy()[0, 0])) / (steps * dt)
    # Sliding stays above 1 m/s, where the friction is exactly mu f_n; 3 % covers the load shift of the pitch.
    assert decel == pytest.approx(0.5 * G, rel=0.03)


def test_humanoid_dropped_on_the_ground_stays_finite_and_settles():
    """nv_humanoid dropped from 1.5 m at dt = 1/240 s for 5 s: no NaN, torso ends lying on the ground, at rest.

    Newton's reference goes NaN on this scene at t ~ 1.3 s (its explicit joint-limit penalty,
    limit_ke = 1e4, is unstable on the light wrist and ankle DOFs at this dt); ours takes the joint-space
    penalties linearly implicitly. Measured: torso z 0.068 m at 5 s (the torso capsule lying on the
    floor), joint speeds below 0.01 rad/s.
    """
    scene = bench_scenes.build_humanoid(1, "cpu")
    model = scene.model
    solver = steel.solvers.SolverFeatherstone(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    state = model.state()
    run(solver, model, state, 5 * 240, 1.0 / 240.0, contacts=contacts, pipeline=pipeline)
    assert np.isfinite(state.joint_q.numpy()).all()
    torso_z = float(state.body_q.numpy()[0, 2])
    assert 0.03 < torso_z < 1.4  # physical range: on the ground, not through it, not flying
    assert np.abs(state.joint_qd.numpy()).max() < 0.1
