"""SolverFeatherstone started far outside joint limits: the push-out is bounded, nothing explodes.

A stiff penalty limit taken linearly implicitly closes a gap ``d`` in about one step, returning the
DOF at ``~ d / dt`` (600 rad/s for 2.5 rad at 1/240 s) with the opposite reaction on the rest of the
tree; :mod:`steel.solvers.featherstone.advance` scales the push-out so no DOF returns faster than
``max(10 rad/s, |qd|)``. Before that bound the 3-link chain below reached 172 rad/s and nv_humanoid
with its hinges at 3 rad 6e23 rad/s within 500 steps.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import newton
import newton.examples
import steel.solvers

from .scenes import G, pendulum_builder

DT = 1.0 / 240.0
STEPS = 500
LIMIT_KE = 1.0e4  # [N·m/rad]
RETURN_SPEED = 10.0  # the documented fastest return from rest [rad/s]; stated here, not imported


def _chain_started_outside() -> newton.Model:
    """The 3-link unit-mass chain of 1 m links, limits ±0.5 rad, its first hinge at 3 rad (2.5 rad outside)."""
    b = pendulum_builder(links=3)
    for d in range(3):
        b.joint_limit_lower[d], b.joint_limit_upper[d], b.joint_limit_ke[d] = -0.5, 0.5, LIMIT_KE
    b.joint_q[:] = [3.0, 0.0, 0.0]
    return b.finalize(device="cpu")


def _humanoid_started_outside() -> newton.Model:
    """nv_humanoid in the air (no ground) with every hinge coordinate at 3 rad, far outside every range."""
    b = newton.ModelBuilder()
    b.add_mjcf(newton.examples.get_asset("nv_humanoid.xml"), ignore_names=["floor"])
    model = b.finalize(device="cpu")
    q = model.joint_q.numpy()
    q[7:] = 3.0  # after the FREE root's 7 coordinates: one per hinge DOF
    model.joint_q.assign(q)
    return model


def _limited_dofs(model: newton.Model):
    """``(coordinate, dof)`` index arrays of every non-FREE DOF (hinges here: one coordinate each)."""
    q_start, qd_start = model.joint_q_start.numpy(), model.joint_qd_start.numpy()
    coords, dofs = [], []
    for j, kind in enumerate(model.joint_type.numpy()):
        if kind in (newton.JointType.REVOLUTE, newton.JointType.PRISMATIC, newton.JointType.D6):
            for k in range(qd_start[j + 1] - qd_start[j]):
                coords.append(q_start[j] + k)
                dofs.append(qd_start[j] + k)
    return np.array(coords), np.array(dofs)


def _mechanical_energy(model: newton.Model, state: newton.State) -> float:
    """Kinetic plus gravitational energy [J] of the chain, zero height at the pivot (point-like links 1 m
    below their body origins; the 1e-6 kg·m² inertia is ignored)."""
    mass = model.body_mass.numpy()
    body_q = state.body_q.numpy()
    # COM height from the pose: origin + R (0, 0, -1).
    x, y, z, w = body_q[:, 3], body_q[:, 4], body_q[:, 5], body_q[:, 6]
    com = body_q[:, 2] - (1.0 - 2.0 * (x * x + y * y))
    v = state.body_qd.numpy()[:, :3]
    return float((0.5 * mass * (v * v).sum(axis=1) + mass * G * com).sum())


def _run(model: newton.Model):
    """Step STEPS times at DT; returns the final state and, per step, the worst limit violation [rad] and the
    fastest inward speed [rad/s] of a DOF that started the step outside its limits."""
    coords, dofs = _limited_dofs(model)
    lower, upper = model.joint_limit_lower.numpy()[dofs], model.joint_limit_upper.numpy()[dofs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the start-outside warning, tested in test_joints.py
        solver = steel.solvers.SolverFeatherstone(model)
    state = model.state()
    violation, inward, energy = [], [], []
    for _ in range(STEPS):
        q_in = state.joint_q.numpy()[coords]
        solver.step(state, state, None, None, DT)
        q, qd = state.joint_q.numpy()[coords], state.joint_qd.numpy()[dofs]
        outside = (q_in < lower) | (q_in > upper)
        speed = np.where(q_in < lower, qd, -qd)
        inward.append(float(speed[outside].max()) if outside.any() else 0.0)
        violation.append(float(np.maximum(lower - q, q - upper).max()))
        energy.append(_mechanical_energy(model, state))
    return state, np.array(violation), np.array(inward), np.array(energy)


def test_chain_started_far_outside_returns_at_the_bounded_speed_without_gaining_energy():
    """The 3-link chain 2.5 rad outside ±0.5 rad (limit_ke 1e4) comes back at 10 rad/s, is inside within
    70 steps and never has more energy afterwards than when it got back; finite for 500 steps."""
    model = _chain_started_outside()
    state, violation, inward, energy = _run(model)
    assert np.isfinite(state.joint_q.numpy()).all() and np.isfinite(state.joint_qd.numpy()).all()
    # Gravity also pulls the first link back while it is outside: measured 10.03 rad/s (600 without the bound).
    assert inward.max() < RETURN_SPEED + 0.1, f"returned at {inward.max():.2f} rad/s"
    # 2.5 rad at 10 rad/s is 60 steps of 1/240 s (measured: all inside after step 61).
    back = int(np.argmax(violation <= 0.0))
    assert violation[back] <= 0.0 and back < 70, f"not back inside by step {back + 1}"
    # Undamped, the chain keeps swinging into its limits (impacts of up to 0.44 rad at this stiffness), but
    # the limit gives nothing back beyond what it took: measured -14 J at the end, 2122 J on return.
    assert energy[-1] < energy[back], f"energy {energy[-1]:.0f} J at the end, {energy[back]:.0f} J on return"


def test_humanoid_with_hinges_far_outside_stays_finite_and_ends_inside_its_limits():
    """nv_humanoid with every hinge at 3 rad returns each at 10 rad/s or less and, falling freely (nothing
    loads a joint), ends inside every limit; finite for 500 steps (6e23 rad/s without the bound)."""
    model = _humanoid_started_outside()
    state, violation, inward, _ = _run(model)
    qd = state.joint_qd.numpy()
    assert np.isfinite(state.joint_q.numpy()).all() and np.isfinite(qd).all()
    assert inward.max() < RETURN_SPEED + 0.1, f"returned at {inward.max():.2f} rad/s"
    assert np.abs(qd).max() < 3.0 * RETURN_SPEED, f"|qd| reached {np.abs(qd).max():.3g}"  # measured 20.5
    assert violation[-1] <= 0.0, f"ends {violation[-1]:.2e} rad outside a limit"
    # Measured 1.0e-5 rad over the last 100 steps: a swing arriving at a limit, stopped by its stiffness.
    assert violation[-100:].max() < 1.0e-4


def test_a_limit_holding_a_load_is_not_weakened_by_the_push_out_bound():
    """A pendulum resting on a soft limit (limit_ke 100 N·m/rad) holds at upper + m g L sin(upper) / ke: the
    bound only acts on a DOF returning fast, never on a limit at rest under load (within 1e-4 rad)."""
    b = pendulum_builder(links=1)
    b.joint_limit_upper[0], b.joint_limit_ke[0], b.joint_limit_kd[0] = -0.3, 100.0, 20.0
    b.joint_q[0] = -0.4  # inside, swinging into the limit
    model = b.finalize(device="cpu")
    solver = steel.solvers.SolverFeatherstone(model)
    state = model.state()
    for _ in range(2000):
        solver.step(state, state, None, None, DT)
    q = float(state.joint_q.numpy()[0])
    expected = -0.3
    for _ in range(50):  # fixed point of ke (q - upper) = -m g L sin q
        expected = -0.3 - G * np.sin(expected) / 100.0
    assert q == pytest.approx(expected, abs=1.0e-4)
