"""Which substeps refresh collisions, with which horizon, and when ``interval_overflow`` is set.

Every case is hand-computed from the rules in ``steel.collision_schedule`` (budget B = 0.03 m,
1/60 s frames, h = frame_dt / substeps). Where the seed and Newton 1.8.0 agree (constant speeds,
rest, caps, overflow) the schedule is compared with ``newton.CollisionSubstepScheduler`` as well;
where they differ (velocity changes alone) each side is pinned separately. Poses stay fixed in these
runs, so the schedule depends on the scripted speeds only and matches exactly (no tolerance)."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
import steel

from .scenes import BUDGET, FRAME_DT, run_scripted, sphere_model

SCHEDULERS = [steel.CollisionSubstepScheduler, newton.CollisionSubstepScheduler]
IDS = ["steel", "newton"]


def constant(vx: float = 0.0, wz: float = 0.0):
    """A scripted twist with constant linear x-speed [m/s] and angular z-speed [rad/s]."""
    return lambda n: (vx, 0.0, 0.0, 0.0, 0.0, wz)


@pytest.mark.parametrize("cls", SCHEDULERS, ids=IDS)
def test_constant_speed_refreshes_at_0_4_8(cls):
    """10 substeps, 2 m/s: t = 2*2/600 m, floor(B/t) = 4, so substeps 0, 4, 8 with horizons 4, 4, 2."""
    log = run_scripted(cls, constant(vx=2.0), frames=2)
    assert log.calls == [(0, 4), (4, 4), (8, 2), (10, 4), (14, 4), (18, 2)]
    assert log.overflow == [0, 0]


@pytest.mark.parametrize("cls", SCHEDULERS, ids=IDS)
def test_body_at_rest_refreshes_once_per_frame(cls):
    """Zero speed: one refresh at substep 0 with a whole-frame horizon."""
    log = run_scripted(cls, constant(), frames=3)
    assert log.calls == [(0, 10), (10, 10), (20, 10)]


@pytest.mark.parametrize("cls", SCHEDULERS, ids=IDS)
def test_substeps_run_exactly_and_ping_pong(cls):
    """Exactly ``substeps`` substep calls per frame, inputs alternating states[0], states[1], ...;
    the first collision call precedes substep 0."""
    log = run_scripted(cls, constant(vx=2.0), substeps=6, frames=2)
    assert log.substep_inputs == [0, 1] * 6
    assert log.calls[0][0] == 0


@pytest.mark.parametrize("cls", SCHEDULERS, ids=IDS)
def test_angular_speed_counts_with_shape_reach(cls):
    """Spin 10 rad/s, sphere r = 0.1 m: reach = AABB corner sqrt(3)*0.1 m, bound 1.732 m/s,
    t = 0.005774 m, floor(B/t) = 5: refreshes at 0 and 5."""
    log = run_scripted(cls, constant(wz=10.0), frames=1)
    assert log.calls == [(0, 5), (5, 5)]


@pytest.mark.parametrize("cls", SCHEDULERS, ids=IDS)
def test_visual_only_shape_is_ignored(cls):
    """A shape without COLLIDE_SHAPES moving at 100 m/s refreshes once per frame, no overflow."""
    log = run_scripted(cls, constant(vx=100.0), frames=2, model=sphere_model(collide=False))
    assert log.calls == [(0, 10), (10, 10)]
    assert log.overflow == [0, 0]


@pytest.mark.parametrize("cls", SCHEDULERS, ids=IDS)
def test_per_substep_overflow(cls):
    """30 m/s: t = 0.1 m > B, so every substep refreshes with a one-substep horizon and overflow is set."""
    log = run_scripted(cls, constant(vx=30.0), frames=1)
    assert log.calls == [(i, 1) for i in range(10)]
    assert log.overflow == [1]


@pytest.mark.parametrize("cls", SCHEDULERS, ids=IDS)
def test_overflow_clear_when_within_budget(cls):
    """1.2 m/s: t = 0.004 m, floor(B/t) = 7 substeps fit (7.5, away from a rounding tie); no overflow."""
    log = run_scripted(cls, constant(vx=1.2), frames=2)
    assert log.calls == [(0, 7), (7, 3), (10, 7), (17, 3)]
    assert log.overflow == [0, 0]


@pytest.mark.parametrize("cls", SCHEDULERS, ids=IDS)
@pytest.mark.parametrize(
    "substeps, cap, expected",
    [
        (14, 6.5, [(0, 6), (6, 6), (12, 2)]),  # rounded down; intervals need not divide the frame
        (10, 3.0, [(0, 3), (3, 3), (6, 3), (9, 1)]),  # an exact multiple stays exact
        (10, 25.0, [(0, 10)]),  # longer than a frame: capped at one frame
    ],
)
def test_collision_dt_max_rounding(cls, substeps, cap, expected):
    """``collision_dt_max`` of ``cap`` substeps at rest gives the listed refreshes and horizons."""
    dt_max = cap * FRAME_DT / substeps
    log = run_scripted(cls, constant(), substeps=substeps, frames=1, collision_dt_max=dt_max)
    assert log.calls == expected


def test_collision_dt_max_snaps_binary_ratios():
    """0.3 s over 0.1 s substeps is 2.9999999999999996 in binary and must mean 3 substeps."""
    model = sphere_model()
    pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=BUDGET)
    scheduler = steel.CollisionSubstepScheduler(
        pipeline,
        (model.state(), model.state()),
        collision_callback=lambda s, d: None,
        substep_callback=lambda a, b, d: None,
        frame_dt=1.0,
        substeps=10,
        collision_dt_max=0.3,
    )
    assert scheduler.collision_interval_max == 3


# ---- where the seed differs from Newton 1.8.0: velocity changes alone do not force a refresh ----


def turning(n: int):
    """0.5 m/s whose direction turns by 1 rad every substep (speed constant, velocity always changing)."""
    return (0.5 * np.cos(n), 0.5 * np.sin(n), 0.0, 0.0, 0.0, 0.0)


def test_turning_body_refreshes_once_per_frame():
    """Seed: a constant-speed turn is harmless under the reserve; one refresh per frame."""
    log = run_scripted(steel.CollisionSubstepScheduler, turning, frames=2)
    assert log.calls == [(0, 10), (10, 10)]


def test_newton_refreshes_turning_body_every_substep():
    """Newton 1.8.0 (no reserve) refreshes on every velocity change: the behaviour the seed removes."""
    log = run_scripted(newton.CollisionSubstepScheduler, turning, frames=1)
    assert [substep for substep, _ in log.calls] == list(range(10))


def test_slowing_down_neither_refreshes_nor_extends_the_deadline():
    """2 m/s then rest from substep 1: the horizon of 4 planned at 0 still ends at 4 (not extended),
    and the drop itself causes no refresh; at 4 the body is at rest, so the horizon is the frame rest."""
    log = run_scripted(steel.CollisionSubstepScheduler, lambda n: (2.0 if n < 1 else 0.0, 0, 0, 0, 0, 0), frames=1)
    assert log.calls == [(0, 4), (4, 6)]


def test_observed_speed_increase_refreshes_early():
    """Rest, then 2 m/s from substep 2. At 2 the completed substep is re-bounded by its end speed
    (T = t = 0.00667 m) plus this substep's t; T + t first exceeds B at substep 5 (5t = 0.0333 m),
    which plans 4 substeps (deadline 9); at 9 the frame has one substep left."""
    log = run_scripted(steel.CollisionSubstepScheduler, lambda n: (0.0 if n < 2 else 2.0, 0, 0, 0, 0, 0), frames=1)
    assert log.calls == [(0, 10), (5, 4), (9, 1)]
    assert log.overflow == [0]


def test_overflow_from_the_speed_correction_alone():
    """2 m/s, then 6 m/s from substep 3: each substep's own travel (0.02 m) fits the budget, but the
    correction 2*(6-2)/600 = 0.01333 m on top of T = 3*0.00667 m exceeds it: overflow in frame 1 only."""
    log = run_scripted(steel.CollisionSubstepScheduler, lambda n: (2.0 if n < 3 else 6.0, 0, 0, 0, 0, 0), frames=2)
    assert log.calls[:2] == [(0, 4), (3, 1)]
    assert log.overflow == [1, 0]


# ---- graph capture (CPU capture records the same conditional branches as CUDA) ----


def test_captured_frame_matches_eager():
    """A frame recorded with ``wp.ScopedCapture`` and replayed makes the same decisions as eager runs:
    the pipeline's contact generation (one bump per ``collide``) advances by 3 per frame at 2 m/s."""
    model = sphere_model()
    pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=BUDGET)
    contacts = pipeline.contacts()
    states = (model.state(), model.state())
    states[0].body_qd.assign(np.array([[2.0, 0, 0, 0, 0, 0]], dtype=np.float32))

    def substep(state_in, state_out, dt):  # constant velocity, kernels only (capture-safe)
        wp.copy(state_out.body_q, state_in.body_q)
        wp.copy(state_out.body_qd, state_in.body_qd)

    scheduler = steel.CollisionSubstepScheduler(
        pipeline,
        states,
        collision_callback=lambda s, d: pipeline.collide(s, contacts, dt=d),
        substep_callback=substep,
        frame_dt=FRAME_DT,
        substeps=10,
    )
    generation = lambda: int(contacts.contact_generation.numpy()[0])  # noqa: E731
    start = generation()
    scheduler.step()
    assert generation() - start == 3
    with wp.ScopedCapture(device=model.device) as capture:
        scheduler.step()
    start = generation()
    for _ in range(2):
        wp.capture_launch(capture.graph)
    assert generation() - start == 6
    assert int(scheduler.interval_overflow.numpy()[0]) == 0
