"""Regressions of an adversarial pass over SolverSteel: odd but legal steps and invalid inputs.

Each test names what broke; invalid inputs must raise ``ValueError`` naming the parameter and the
value before anything changes, and odd legal inputs must leave the simulation sane.
"""

import numpy as np
import warp as wp

import newton
from steel.solvers import SolverSteel

DT = 1.0 / 600.0


def _stack(count=6, mu=0.5):
    builder = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=mu)
    for i in range(count):
        body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.1 + 0.2 * i), wp.quat_identity()))
        builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    return builder.finalize(device="cpu")


def _max_speed_after(tiny_dt):
    """A 6-box stack settled for 1 s at 1/600 s, one step of ``tiny_dt`` (None: none), then 1 s more:
    the largest body speed component over that last second [m/s]."""
    model = _stack()
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    states = [model.state(), model.state()]

    def step(dt):
        pipeline.collide(states[0], contacts)
        solver.step(states[0], states[1], None, contacts, dt)
        states.reverse()

    for _ in range(600):
        step(DT)
    if tiny_dt is not None:
        step(tiny_dt)
    speed = 0.0
    for _ in range(600):
        step(DT)
        speed = max(speed, float(np.abs(states[0].body_qd.numpy()).max()))
    return speed


def test_a_tiny_step_in_a_settled_stack_does_not_launch_the_next_steps():
    """One step of 1e-6 s (1e-9 s) in a settled stack sent it to 3.6 km/s (1e7 m/s) on the next step: the
    push-out asked ``baumgarte depth / dt`` (8.4 m/s) and the records carried impulse / 1e-6 s as forces.
    Measured after the fix: 2.6e-5 (2.4e-5) m/s over the next second, the stack left alone 2.4e-5 m/s."""
    rest = _max_speed_after(None)
    assert rest < 1.0e-4
    for tiny in (1.0e-6, 1.0e-9):
        assert _max_speed_after(tiny) <= 3.0 * rest, tiny
