"""SolverSteel ``velocity_iterations`` (spec C6): velocity sweeps without the position bias.

Positions come from the position solve; the published ``joint_qd`` is the refined velocity, so
Baumgarte stabilization moves bodies without leaving them with velocity.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.app.scenes import build_scene
from steel.solvers import SolverSteel

from .scenes import G, pendulum, run, single_box

DT = 1.0 / 240.0


def _first_step(model, solver, qd=None):
    """One step from the model's initial state (optionally with joint velocity ``qd``): (z, published vz)."""
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    if qd is not None:
        s0.joint_qd.assign(np.array(qd, dtype=np.float32))
    pipeline.collide(s0, contacts)
    solver.step(s0, s1, None, contacts, DT)
    return float(s1.body_q.numpy()[0, 2]), float(s1.joint_qd.numpy()[2])


@pytest.mark.parametrize("velocity_iterations", [0, 4])
def test_push_out_of_a_penetration_moves_the_box_without_leaving_it_velocity(velocity_iterations):
    """A box 2 cm into the ground, baumgarte 0.2: 0 keeps the push-out velocity, 4 publishes ~0."""
    model = single_box(z=0.08)
    solver = SolverSteel(model, baumgarte=0.2, velocity_iterations=velocity_iterations)
    z, vz = _first_step(model, solver)
    push = 0.2 * 0.02 / DT  # [m/s] the Baumgarte target, 0.96 m/s
    assert z == pytest.approx(0.08 + push * DT, rel=1e-3)  # positions follow the position solve either way
    if velocity_iterations == 0:
        assert vz == pytest.approx(push, rel=1e-3)
    else:
        assert abs(vz) < 1e-3


def test_push_out_continues_geometrically_without_overshoot():
    """With the velocity sweeps the box rises by baumgarte x depth per step and never leaves the ground."""
    model = single_box(z=0.08)
    solver = SolverSteel(model, baumgarte=0.2, velocity_iterations=4)
    zs, vzs = [], []
    run(model, solver, 120, DT, record=lambda s: (zs.append(float(s.body_q.numpy()[0, 2])),
                                                   vzs.append(float(s.joint_qd.numpy()[2]))))
    assert zs[1] - zs[0] == pytest.approx(0.2 * (0.1 - zs[0]), rel=1e-2)
    assert max(zs) <= 0.1 + 1e-4  # no overshoot: no push-out velocity survives the step
    assert zs[-1] == pytest.approx(0.1, abs=1e-4)
    assert max(abs(v) for v in vzs) < 1e-3


def test_resting_box_contact_forces_still_sum_to_its_weight():
    """With velocity_iterations=4, contact_f of a resting box sums to -m g within 1 %."""
    model = single_box(z=0.1)
    solver = SolverSteel(model, velocity_iterations=4)
    probe = run(model, solver, 1, DT)[1]
    obs = solver.observables({"contact_f"}, contacts=probe)
    state, contacts = run(model, solver, 240, DT, observables=obs)
    n = int(contacts.rigid_contact_count.numpy()[0])
    total = obs.contact_f.numpy()[:n, :3].sum(axis=0)
    weight = float(model.body_mass.numpy()[0]) * G
    np.testing.assert_allclose(total, [0.0, 0.0, -weight], rtol=0.01, atol=0.01 * weight)
    assert abs(float(state.body_q.numpy()[0, 2]) - 0.1) < 1e-3


def test_restitution_bounce_is_unchanged():
    """A sphere with restitution 0.5 dropped from 1 m rebounds as high with 4 velocity sweeps as with 0 (5 %)."""
    r, dt = 0.05, 1.0 / 600.0
    apex = {}
    for vi in (0, 4):
        model = single_box(z=1.0 + r, restitution=0.5, half=r, sphere=True)
        zs = []
        run(model, SolverSteel(model, velocity_iterations=vi), 600, dt,
            record=lambda s: zs.append(float(s.body_q.numpy()[0, 2]) - r))
        zs = np.array(zs)
        apex[vi] = zs[np.argmin(zs[:500]):].max()
    assert apex[4] == pytest.approx(apex[0], rel=0.05)
    assert apex[4] == pytest.approx(0.25, rel=0.05)


@pytest.mark.parametrize("sphere", [False, True])
def test_open_gap_keeps_its_allowance_and_a_closing_gap_is_arrested(sphere):
    """1 cm above the ground: at 1 m/s the gap stays open (velocity as without sweeps); at 3 m/s the
    contact lands within the step and the published velocity is arrested (0 instead of -phi/dt)."""
    slow = {}
    for vi in (0, 4):
        model = single_box(z=0.11, sphere=sphere)
        slow[vi] = _first_step(model, SolverSteel(model, velocity_iterations=vi), qd=[0, 0, -1.0, 0, 0, 0])
    assert slow[4] == slow[0]
    assert slow[4][1] == pytest.approx(-1.0 - G * DT, rel=1e-4)
    model = single_box(z=0.11, sphere=sphere)
    z0, vz0 = _first_step(model, SolverSteel(model, velocity_iterations=0), qd=[0, 0, -3.0, 0, 0, 0])
    z4, vz4 = _first_step(model, SolverSteel(model, velocity_iterations=4), qd=[0, 0, -3.0, 0, 0, 0])
    assert vz0 == pytest.approx(-0.01 / DT, rel=1e-3)  # the speculative allowance
    assert z4 == pytest.approx(z0, abs=1e-6) and z4 == pytest.approx(0.1, abs=1e-4)
    assert abs(vz4) < 1e-3


def test_joint_limit_push_out_leaves_no_velocity():
    """A pendulum 0.1 rad past its upper limit: positions move back; the published velocity is only
    gravity's (which swings it away from the limit), none of the push-out."""
    out = {}
    for vi in (0, 4):
        model = pendulum(0.5, angle=0.3, limit=(-0.2, 0.2))
        solver = SolverSteel(model, enable_joint_limits=True, baumgarte=0.2, velocity_iterations=vi,
                             iterations=4)
        s0, s1 = model.state(), model.state()
        solver.step(s0, s1, None, None, DT)
        out[vi] = float(s1.joint_q.numpy()[0]), float(s1.joint_qd.numpy()[0])
    assert out[4][0] == pytest.approx(out[0][0], abs=1e-6)
    assert out[4][0] < 0.3
    assert out[0][1] < -1.0  # the push-out velocity 0.2 x 0.1 / dt (less gravity's share)
    assert out[4][1] == pytest.approx(-G * np.sin(0.3) / 0.5 * DT, rel=0.01)


def test_friction_is_solved_in_the_velocity_sweeps():
    """A box sliding on the ground with mu 0.5 decelerates at mu g with the sweeps as without them."""
    decel = {}
    for vi in (0, 4):
        model = single_box(z=0.1, mu=0.5)
        pipeline = newton.CollisionPipeline(model)
        contacts = pipeline.contacts()
        s0, s1 = model.state(), model.state()
        s0.joint_qd.assign(np.array([2.0, 0, 0, 0, 0, 0], dtype=np.float32))
        solver = SolverSteel(model, velocity_iterations=vi)
        vx = []
        for _ in range(48):
            pipeline.collide(s0, contacts)
            solver.step(s0, s1, None, contacts, DT)
            s0, s1 = s1, s0
            vx.append(float(s0.joint_qd.numpy()[0]))
        decel[vi] = (vx[10] - vx[40]) / (30 * DT)
    assert decel[4] == pytest.approx(0.5 * G, rel=0.03)
    assert decel[4] == pytest.approx(decel[0], rel=0.02)


def test_humanoid_with_velocity_iterations_stays_finite_and_lands():
    """nv_humanoid dropped onto the ground with velocity_iterations=4: finite, torso above the ground."""
    scene = build_scene("humanoid", 1, "cpu")
    model = scene.model
    solver = SolverSteel(model, velocity_iterations=4)
    state, _ = run(model, solver, 240, scene.dt)
    assert np.isfinite(state.joint_q.numpy()).all() and np.isfinite(state.joint_qd.numpy()).all()
    assert float(state.body_q.numpy()[0, 2]) > 0.05


@pytest.mark.parametrize("value, error", [(-1, ValueError), (2.0, TypeError), (True, TypeError)])
def test_invalid_velocity_iterations_raise(value, error):
    with pytest.raises(error, match="velocity_iterations"):
        SolverSteel(single_box(), velocity_iterations=value)


@pytest.mark.parametrize("option", ["enable_sleeping", "contact_compliance"])
def test_velocity_iterations_with_an_incompatible_feature_is_a_value_error(option):
    """Spec C6: sleeping and compliance are incompatible with the velocity sweeps (VE, before NIE)."""
    with pytest.raises(ValueError, match=option):
        SolverSteel(single_box(), velocity_iterations=2, **{option: True})


def test_velocity_iterations_is_a_construction_option():
    solver = SolverSteel(single_box(), velocity_iterations=3)
    assert solver.velocity_iterations == 3
    with pytest.raises(AttributeError, match="velocity_iterations"):
        solver.velocity_iterations = 1


def test_velocity_sweeps_without_position_iterations_refine_only_the_velocity():
    """iterations=0: positions follow the unconstrained prediction, the published velocity is solved."""
    model = single_box(z=0.1)
    z, vz = _first_step(model, SolverSteel(model, iterations=0, velocity_iterations=8))
    assert z == pytest.approx(0.1 - G * DT * DT, abs=1e-6)
    assert abs(vz) < 1e-3
