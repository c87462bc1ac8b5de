"""State.body_f and State.particle_f on every solver that takes them, against the analytic motion they cause.

``body_f`` is a world-frame wrench at the body's COM (force first [N], then torque [N·m]);
``particle_f`` a world-frame force [N]. Each solver integrates a constant force exactly (symplectic
Euler for SolverSteel and SolverFeatherstone, implicit Euler for SolverVBD: both give
``v_n = a n dt`` and ``x_n = x_0 + a dt² n(n+1)/2``), so the tolerances below are float32 rounding.
SolverSteel has no particles (it rejects a model with them).
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverFeatherstone, SolverSteel, SolverVBD

G = 9.81
DT = 0.01  # [s]
STEPS = 20
MASS = 2.0  # [kg]
INERTIA = 0.5  # [kg·m²] isotropic, so a spin needs no gyroscopic term
# Angular damping off where a solver defaults it on (0.05 1/s, as Newton's Featherstone and PhysX).
BODY_SOLVERS = {"steel": SolverSteel, "featherstone": lambda m: SolverFeatherstone(m, angular_damping=0.0),
                "vbd": SolverVBD}


def _free_body(gravity):
    """A 2 kg body at 1 m; SolverSteel's default angular damping (0.05 1/s, a PhysX attribute) is off."""
    b = newton.ModelBuilder(gravity=gravity)
    SolverSteel.register_custom_attributes(b)
    body = b.add_body(mass=MASS, inertia=wp.mat33(np.eye(3) * INERTIA),
                      xform=wp.transform((0.0, 0.0, 1.0), wp.quat_identity()),
                      custom_attributes={"steel:rigid_body_angular_damping": 0.0})
    b.add_shape_sphere(body, radius=0.1, cfg=newton.ModelBuilder.ShapeConfig(density=0.0))
    b.color()
    return b.finalize(device="cpu")


def _step(solver, model, s0, force_name, force, steps=STEPS):
    s1 = model.state()
    for _ in range(steps):
        getattr(s0, force_name).assign(force)  # solvers may clear or accumulate into it
        solver.step(s0, s1, model.control(), None, DT)
        s0, s1 = s1, s0
    return s0


@pytest.mark.parametrize("name", list(BODY_SOLVERS))
def test_body_f_accelerates_and_spins_a_free_body_as_newton_says(name):
    """body_f = (4, 0, 0 N; 0, 0, 1 N·m) on a 2 kg body (I = 0.5 kg·m²), no gravity, 20 steps of 0.01 s:
    v = f/m t = 0.4 m/s, ω = τ/I t = 0.4 rad/s, x = f/m dt² n(n+1)/2 = 0.42 m, yaw = 0.042 rad.

    Tolerance (absolute, in m/s, rad/s, m and rad alike) is float32 rounding over 20 steps: measured
    1.7e-7 on SolverSteel and SolverFeatherstone, 4.4e-6 on SolverVBD (its angular velocity from the
    rotation increment); a force of the wrong sign or scale is off by 0.4.
    """
    atol = 1.5e-5 if name == "vbd" else 5e-7
    model = _free_body((0.0, 0.0, 0.0))
    wrench = np.array([[4.0, 0.0, 0.0, 0.0, 0.0, 1.0]], np.float32)
    final = _step(BODY_SOLVERS[name](model), model, model.state(), "body_f", wrench)
    q, qd = final.body_q.numpy()[0], final.body_qd.numpy()[0]
    t, ramp = STEPS * DT, DT * DT * STEPS * (STEPS + 1) / 2
    np.testing.assert_allclose(qd, [4.0 / MASS * t, 0, 0, 0, 0, 1.0 / INERTIA * t], rtol=0, atol=atol)
    np.testing.assert_allclose(q[:3], [4.0 / MASS * ramp, 0.0, 1.0], rtol=0, atol=atol)
    yaw = 2.0 * np.arctan2(q[5], q[6])
    assert abs(yaw - 1.0 / INERTIA * ramp) < atol


@pytest.mark.parametrize("name", list(BODY_SOLVERS))
def test_body_f_equal_to_the_weight_holds_a_body_still(name):
    """body_f = +m g up on a 2 kg body under gravity: it hovers at 1 m for 100 steps, bit for bit
    (force and weight cancel exactly in float32); with the force's sign flipped it falls 2 g t²/2 = 9.8 m."""
    model = _free_body((0.0, 0.0, -G))
    lift = np.array([[0.0, 0.0, MASS * G, 0.0, 0.0, 0.0]], np.float32)
    final = _step(BODY_SOLVERS[name](model), model, model.state(), "body_f", lift, steps=100)
    assert final.body_q.numpy()[0, 2] == 1.0
    assert not final.body_qd.numpy().any()


def _particle(gravity):
    b = newton.ModelBuilder(gravity=gravity)
    b.add_particle(pos=(0.0, 0.0, 1.0), vel=(0.0, 0.0, 0.0), mass=0.1, radius=0.01)
    b.color()
    return b.finalize(device="cpu")


PARTICLE_SOLVERS = {"featherstone": SolverFeatherstone, "vbd": SolverVBD}


@pytest.mark.parametrize("name", list(PARTICLE_SOLVERS))
def test_particle_f_equal_to_the_weight_holds_a_particle_still(name):
    """particle_f = +m g up on a 0.1 kg particle under gravity: it hovers at 1 m for 100 steps, bit for
    bit (force and weight cancel exactly in float32); with the force's sign flipped it falls 9.8 m."""
    model = _particle((0.0, 0.0, -G))
    lift = np.array([[0.0, 0.0, 0.1 * G]], np.float32)
    final = _step(PARTICLE_SOLVERS[name](model), model, model.state(), "particle_f", lift, steps=100)
    assert final.particle_q.numpy()[0, 2] == 1.0
    assert not final.particle_qd.numpy().any()


@pytest.mark.parametrize("name", list(PARTICLE_SOLVERS))
def test_particle_f_accelerates_a_free_particle_as_newton_says(name):
    """particle_f = (0.3, -0.2, 0) N on a 0.1 kg particle, no gravity, 20 steps of 0.01 s: v = f/m t,
    x = f/m dt² n(n+1)/2 (0.63 m along x). Tolerance (absolute, m/s and m) is float32 rounding: measured
    6e-8 on SolverFeatherstone, 5.4e-7 on SolverVBD."""
    atol = 1.5e-6 if name == "vbd" else 2e-7
    model = _particle((0.0, 0.0, 0.0))
    force = np.array([[0.3, -0.2, 0.0]], np.float32)
    final = _step(PARTICLE_SOLVERS[name](model), model, model.state(), "particle_f", force)
    a = force[0] / 0.1
    np.testing.assert_allclose(final.particle_qd.numpy()[0], a * STEPS * DT, rtol=0, atol=atol)
    np.testing.assert_allclose(final.particle_q.numpy()[0], [0, 0, 1.0] + a * DT * DT * STEPS * (STEPS + 1) / 2,
                               rtol=0, atol=atol)
