"""A SolverSteel step recorded in a Warp CPU capture replays bit for bit what eager steps compute.

Inside a capture the host may not read or write device data: the contact-row launches cover the
pipeline's capacity instead of the live count, the history is sorted by the radix sort, and the row
counts are reset by a recorded ``zero_`` rather than through the host's NumPy view.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton
from steel.solvers import SolverSteel

from .scenes import single_box

DT = 1.0 / 240.0


def _stepped(captured: bool, rounds: int = 12):
    """Box dropped from 0.13 m onto the ground (it lands and settles), two worlds: body_q, the contact count and
    the rows per world after the rounds."""
    model = single_box(z=0.13, world_count=2)
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    control = model.control()

    def two_steps():
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, control, contacts, DT)
        pipeline.collide(s1, contacts)
        solver.step(s1, s0, control, contacts, DT)

    two_steps()  # kernels loaded and launches recorded before any capture
    if captured:
        with wp.ScopedCapture(device="cpu") as capture:  # recorded, not run
            two_steps()
        for _ in range(rounds):
            wp.capture_launch(capture.graph)
    else:
        for _ in range(rounds):
            two_steps()
    return s0.body_q.numpy(), contacts.rigid_contact_count.numpy()[0], solver.steel_data.rows.world_row_count.numpy()


def test_captured_steps_replay_the_eager_steps_bitwise():
    eager, eager_contacts, eager_rows = _stepped(False)
    replayed, replayed_contacts, replayed_rows = _stepped(True)
    np.testing.assert_array_equal(replayed, eager)
    # Each replayed step starts its rows from zero, as an eager step does (none left over from the last).
    np.testing.assert_array_equal(replayed_rows, eager_rows)
    assert eager_contacts > 0  # the box touches the ground: contact rows were built and solved
    # It fell and landed: 26 steps of 1/240 s from 0.13 m would free-fall 5.7 cm, past the ground.
    assert np.all(np.abs(eager[:, 2] - 0.1) < 5.0e-3)
