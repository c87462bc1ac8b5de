"""The reserve: during ``collision_callback`` the pipeline detects every pair within the budget
B = speculative_contact_gap_max, whatever the velocities, and ``model.shape_gap`` is back to its
authored values before the substep solver and any later ``collide`` run.

Scene: a sphere (r = 0.1 m) over a ground plane, both with authored gap 0, no gravity, so a contact
exists only through the speculative machinery. Separations are far from B (0.02 m or 0.04 m against
0.03 m), so the float32 geometry of the narrow phase cannot flip a verdict."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
import steel

from .scenes import BUDGET, FRAME_DT, sphere_model

SUBSTEPS = 10
SUBSTEP_DT = FRAME_DT / SUBSTEPS


def probe(separation: float, vz: float, *, gap: float = 0.0):
    """Run one frame with the sphere ``separation`` [m] above the ground moving at ``vz`` [m/s]
    (poses frozen) and return (contacts seen inside the callback, shape_gap inside the callback,
    shape_gap seen by each substep, contacts of a plain ``collide`` after the frame, authored gaps)."""
    model = sphere_model(height=0.1 + separation, gap=gap, ground=True)
    authored = model.shape_gap.numpy().copy()
    pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=BUDGET)
    contacts = pipeline.contacts()
    states = (model.state(), model.state())
    for state in states:
        state.body_qd.assign(np.array([[0.0, 0.0, vz, 0.0, 0.0, 0.0]], dtype=np.float32))
    inside_counts, inside_gaps, substep_gaps = [], [], []

    def collide(state, collision_dt):
        pipeline.collide(state, contacts, dt=collision_dt)
        inside_counts.append(int(contacts.rigid_contact_count.numpy()[0]))
        inside_gaps.append(model.shape_gap.numpy().copy())

    def substep(state_in, state_out, dt):
        substep_gaps.append(model.shape_gap.numpy().copy())
        wp.copy(state_out.body_q, state_in.body_q)
        wp.copy(state_out.body_qd, state_in.body_qd)

    scheduler = steel.CollisionSubstepScheduler(
        pipeline, states, collision_callback=collide, substep_callback=substep, frame_dt=FRAME_DT, substeps=SUBSTEPS
    )
    scheduler.step()
    pipeline.collide(states[0], contacts, dt=SUBSTEP_DT)
    after = int(contacts.rigid_contact_count.numpy()[0])
    return inside_counts, inside_gaps, substep_gaps, after, authored


@pytest.mark.parametrize("vz", [0.0, 0.5], ids=["at_rest", "receding"])
def test_pair_within_budget_is_detected_inside_the_callback(vz):
    """0.02 m apart, at rest or moving apart: no velocity-adapted contact, but the reserve finds it."""
    inside_counts, _, _, after, _ = probe(0.02, vz)
    assert inside_counts and all(count >= 1 for count in inside_counts)
    assert after == 0  # outside the callback the pipeline is velocity-adapted again


def test_pair_beyond_budget_is_not_detected():
    """0.04 m apart at rest: beyond B, so the reserve adds nothing (it is B, not more)."""
    inside_counts, _, _, _, _ = probe(0.04, 0.0)
    assert inside_counts == [0]


def test_reserve_raises_gaps_only_during_the_callback():
    """Inside the callback each gap is max(authored, B/2); every substep and the caller see the
    authored gaps bit for bit (a larger authored gap, 0.05 m on both shapes, is kept)."""
    for gap in (0.0, 0.05):
        _, inside_gaps, substep_gaps, _, authored = probe(0.02, 0.0, gap=gap)
        np.testing.assert_array_equal(inside_gaps[0], np.maximum(authored, np.float32(0.5 * BUDGET)))
        assert len(substep_gaps) == SUBSTEPS
        for gaps in substep_gaps:
            np.testing.assert_array_equal(gaps, authored)


def test_gaps_restored_when_the_callback_raises():
    """An exception in the callback propagates, and the authored gaps are restored first."""
    model = sphere_model(ground=True)
    authored = model.shape_gap.numpy().copy()
    pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=BUDGET)

    def failing(state, collision_dt):
        raise RuntimeError("callback failed")

    scheduler = steel.CollisionSubstepScheduler(
        pipeline,
        (model.state(), model.state()),
        collision_callback=failing,
        substep_callback=lambda a, b, dt: None,
        frame_dt=FRAME_DT,
        substeps=SUBSTEPS,
    )
    with pytest.raises(RuntimeError, match="callback failed"):
        scheduler.step()
    np.testing.assert_array_equal(model.shape_gap.numpy(), authored)
