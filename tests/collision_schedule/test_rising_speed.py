"""A speed bound that keeps rising must not carry a planned interval over the travel budget.

Newton's adaptive_collision showcase asserts every frame that ``interval_overflow`` stays clear. A
brick tumbling after the impact has a speed bound ``|v_o| + |omega| r`` near 60 m/s that creeps up
by about 0.2 m/s per substep (``|omega|`` of a torque-free tumbling body is not constant), at
B = 0.2 m and h = 1/1200 s, where 60 m/s is exactly the speed at which two substeps fill the
budget. An interval planned at the start speed to end within 0.1 mm of B then ended 0.2 mm over it
once the observed rise corrected the last substep. The planner now carries the last observed rise
one substep ahead, so such an interval ends a substep earlier instead."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
import steel

from .scenes import run_scripted


def test_steady_rise_refreshes_before_the_budget_is_overrun():
    """B = 0.03 m, h = 1/600 s, speed 3.85 + 0.2 n m/s before substep n, so t = v/300 and each
    completed substep is corrected by 2 * 0.2 / 600 = 0.000667 m.

    At 2 (v = 4.25, planned at 4.45 m/s): 2 * 0.01483 = 0.02967 m fits, horizon 2. At 3 (v = 4.45):
    T = 0.01417 + 0.00067 = 0.01483 m, and the next substep planned at 4.65 m/s (0.0155 m) would
    end at 0.03033 m > B: refresh now, one substep at a time from here. Planning at the start speed
    alone (4.45 m/s: 0.02967 m <= B) would wait, and the correction at 4 would end the interval at
    0.03033 m: overflow."""
    log = run_scripted(steel.CollisionSubstepScheduler, lambda n: (3.85 + 0.2 * n, 0, 0, 0, 0, 0), frames=2)
    assert log.calls[:3] == [(0, 2), (2, 2), (3, 1)]
    assert log.calls[3:] == [(n, 1) for n in range(4, 20)]
    assert log.overflow == [0, 0]


FRAMES = 6
SUBSTEPS = 20
BUDGET = 0.2  # [m], as in Newton's adaptive_collision


def _tumbling_brick(spin_z: float):
    """Run a free brick (the showcase's 0.18 x 0.58 x 0.24 m) without gravity, starting at 13 m/s
    with angular velocity (10, 5, ``spin_z``) [rad/s], under Newton's SolverXPBD for FRAMES frames
    of 1/60 s. Returns (interval_overflow per frame, collision horizons [substeps] in call order)."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = builder.add_body(xform=wp.transform((0.0, 0.0, 1.0), wp.quat_identity()))
    builder.add_shape_box(body, hx=0.09, hy=0.29, hz=0.12)
    model = builder.finalize(device="cpu")
    states = (model.state(), model.state())
    states[0].body_qd.assign(np.array([[13.0, 0.0, 0.0, 10.0, 5.0, spin_z]], dtype=np.float32))
    solver = newton.solvers.SolverXPBD(model, iterations=2)
    pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=BUDGET)
    contacts = pipeline.contacts()
    frame_dt = 1.0 / 60.0
    horizons = []

    def collide(state, collision_dt):
        horizons.append(round(collision_dt * SUBSTEPS / frame_dt))
        pipeline.collide(state, contacts, dt=collision_dt)

    scheduler = steel.CollisionSubstepScheduler(
        pipeline,
        states,
        collision_callback=collide,
        substep_callback=lambda state_in, state_out, dt: solver.step(state_in, state_out, None, None, dt),
        frame_dt=frame_dt,
        substeps=SUBSTEPS,
    )
    overflow = []
    for _ in range(FRAMES):
        scheduler.step()
        overflow.append(int(scheduler.interval_overflow.numpy()[0]))
    return overflow, horizons


@pytest.mark.parametrize("spin_z", [140.2, 140.7])
def test_tumbling_brick_crosses_the_two_substep_speed_without_overflow(spin_z):
    """The bound rises from about 58.8 m/s through 60 m/s (the speed at which two substeps fill the
    budget) within these frames. Before the fix these two starts overflowed, in frames 4 and 3;
    now the largest corrected travel stays about 0.5 mm under B. Contacts are still reused: the run
    passes from two-substep horizons to one-substep ones and makes far fewer calls than substeps."""
    overflow, horizons = _tumbling_brick(spin_z)
    assert overflow == [0] * FRAMES
    assert horizons[0] == 2 and horizons[-1] == 1
    assert len(horizons) < 0.75 * FRAMES * SUBSTEPS
