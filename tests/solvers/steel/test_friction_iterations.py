"""SolverSteel ``contact_friction_position_iterations``: sliding friction only in the last k iterations."""

import numpy as np
import pytest

import newton
from steel.solvers import SolverSteel

from .scenes import G, run, single_box, tilted_gravity

DT = 1.0 / 240.0


def _incline_x(solver_class, steps, **options):
    """x [m] after each step of a box with mu 0.5 on a 20 degree incline."""
    model = single_box(z=0.1, mu=0.5, gravity=tilted_gravity(20.0))
    xs = []
    run(model, solver_class(model, **options), steps, DT, record=lambda s: xs.append(float(s.body_q.numpy()[0, 0])))
    return np.array(xs)


def _acceleration(x):
    t = (np.arange(len(x)) + 1) * DT
    late = t > 0.25
    return 2.0 * np.polyfit(t[late], x[late], 2)[0]


def test_zero_friction_iterations_let_the_box_slide_as_if_frictionless():
    """k = 0: no position iteration solves friction, so the box slides at g sin(theta) within 0.5 %.

    Newton's SolverSteel with the same option slides at the same rate (within 0.5 %).
    """
    expected = G * np.sin(np.radians(20.0))
    assert _acceleration(_incline_x(SolverSteel, 240, contact_friction_position_iterations=0)) == pytest.approx(
        expected, rel=0.005)
    reference = _incline_x(newton.solvers.SolverSteel, 240, contact_friction_position_iterations=0)
    assert _acceleration(reference) == pytest.approx(expected, rel=0.005)


def test_friction_in_the_last_iterations_holds_the_box():
    """k = 4 of 12: friction solved in the last four iterations holds mu 0.5 on 20 degrees (< 0.1 mm in 2 s)."""
    x = _incline_x(SolverSteel, 480, contact_friction_position_iterations=4)
    assert abs(x[-1] - x[60]) < 1e-4  # [m]


def test_friction_position_iterations_are_validated():
    """Below -1: ValueError; k >= 0 with contact_warmstart: NotImplementedError, as the reference specifies."""
    model = single_box(z=0.1)
    with pytest.raises(ValueError, match="contact_friction_position_iterations"):
        SolverSteel(model, contact_friction_position_iterations=-2)
    with pytest.raises(NotImplementedError, match="contact_friction_position_iterations"):
        SolverSteel(model, contact_friction_position_iterations=2, contact_warmstart=True)
