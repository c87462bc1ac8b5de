"""Regression: a time step far below the usual range must not turn a small overlap into a launch.

The contact rows push an overlap out at ``baumgarte (-phi) / dt``; at dt = 1e-9 s a 1 mm overlap
asked for 2e5 m/s and the box left at ~1e6 m/s (83 km after 20 steps). The push-out speed is now
bounded by a solver-wide cap whatever dt (``contacts/rows.py``).
"""

import numpy as np

from steel.solvers import SolverSteel
from steel.solvers.steel.contacts.rows import DEPENETRATION_SPEED_MAX

from .scenes import run, single_box


def test_a_box_one_millimetre_into_the_ground_is_not_launched_by_a_nanosecond_step():
    """20 steps of 1e-9 s from a 1 mm overlap: speed stays under the push-out cap, poses finite."""
    model = single_box(z=0.099)  # half extent 0.1 m: 1 mm into the ground
    solver = SolverSteel(model)
    speeds = []
    final, _ = run(model, solver, 20, 1e-9,
                   record=lambda s: speeds.append(float(np.linalg.norm(s.body_qd.numpy()[0, :3]))))
    assert np.isfinite(final.body_q.numpy()).all()
    # Gauss-Seidel over the four corner rows may overshoot a shared target by float32 rounding.
    assert max(speeds) <= DEPENETRATION_SPEED_MAX * (1.0 + 1e-3)
    assert abs(float(final.body_q.numpy()[0, 2]) - 0.099) < 1e-6  # [m] it moved at most nanometres


def test_velocity_iterations_leave_no_push_out_speed_after_nanosecond_steps():
    """With velocity_iterations the capped push-out moves the box without leaving it the speed."""
    model = single_box(z=0.099)
    solver = SolverSteel(model, velocity_iterations=2)
    final, _ = run(model, solver, 20, 1e-9)
    assert np.isfinite(final.body_q.numpy()).all()
    # [m/s] the velocity sweeps drop the position bias; the plain sweep would leave 10 m/s.
    assert float(np.linalg.norm(final.body_qd.numpy()[0, :3])) < 1e-3
