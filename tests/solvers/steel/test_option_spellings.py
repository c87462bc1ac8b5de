"""Deprecated option spellings and the CPU behaviour of the parallel solve modes, against the reference."""

import warnings

import pytest

import newton
from steel.solvers import SolverSteel

from .scenes import run, single_box

DT = 1.0 / 240.0


def _construct(cls, model, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solver = cls(model, **options)
    return solver, [w.category for w in caught]


@pytest.mark.parametrize(
    "options, solve_mode, response, categories",
    [
        ({"solve_mode": "matrix_free"}, "serial", "immediate", [newton.NewtonDeprecationWarning]),
        ({"solve_mode": "split"}, "serial", "immediate", [newton.NewtonDeprecationWarning]),
        ({"articulated_contact_response": "propagation_colored"}, "colored", "propagation",
         [newton.NewtonDeprecationWarning, newton.NewtonWarning]),
        ({"solve_mode": "colored", "articulated_contact_response": "propagation"}, "colored", "propagation",
         [newton.NewtonWarning]),
    ],
)
def test_deprecated_and_cpu_fallback_spellings_match_the_reference(options, solve_mode, response, categories):
    """Both classes resolve the spelling to the same options and warn with the same categories on CPU."""
    model = single_box()
    ours, ours_warned = _construct(SolverSteel, model, **options)
    ref, ref_warned = _construct(newton.solvers.SolverSteel, model, **options)
    assert (ours.solve_mode, ours.articulated_contact_response) == (solve_mode, response)
    assert (ref.solve_mode, ref.articulated_contact_response) == (solve_mode, response)
    assert ours_warned == categories
    assert ref_warned == categories


def test_propagation_on_cpu_steps_like_the_immediate_solve():
    """articulated_contact_response='propagation' is accepted on CPU and rests a box like the default.

    Our CPU fallback solves the same rows with the immediate response, so the trajectories agree
    bit for bit; the warning says so.
    """
    model = single_box(z=0.2)
    with pytest.warns(newton.NewtonWarning, match="serial"):
        propagation = SolverSteel(model, articulated_contact_response="propagation")
    a, _ = run(model, propagation, 60, DT)
    b, _ = run(model, SolverSteel(model), 60, DT)
    assert (a.body_q.numpy() == b.body_q.numpy()).all()


@pytest.mark.parametrize(
    "options, match",
    [
        ({"solve_mode": "colored"}, "requires articulated_contact_response='propagation'"),
        ({"solve_mode": "bogus"}, "solve_mode"),
        ({"articulated_contact_response": "bogus"}, "articulated_contact_response"),
        ({"propagation_constraint_max": 5}, "propagation_constraint_max"),
    ],
)
def test_invalid_spellings_raise_value_error_like_the_reference(options, match):
    """Unknown values and colored without propagation raise ValueError in both classes."""
    model = single_box()
    with pytest.raises(ValueError, match=match):
        SolverSteel(model, **options)
    with pytest.raises(ValueError):
        newton.solvers.SolverSteel(model, **options)
