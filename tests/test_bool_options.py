"""Every solver's switches take one check (``steel.solvers.inputs.check_bool``): Python, NumPy and Warp bools in,
anything else (integers included) refused with a ``TypeError`` naming the option, before anything is built.

Before the shared check each solver had its own rule: all three refused ``wp.bool(True)``, only SolverVBD took a
0-d bool array, and ``np.bool_`` passed by three different routes."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverFeatherstone, SolverSteel, SolverVBD
from steel.solvers.inputs import check_bool

CASES = [(SolverSteel, "enable_restitution"), (SolverFeatherstone, "fuse_cholesky"),
         (SolverVBD, "rigid_contact_history")]
TRUE_LIKE = [True, np.bool_(True), np.array(True), wp.bool(True)]


def _model():
    b = newton.ModelBuilder()
    body = b.add_body()
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b.color()  # SolverVBD's rigid bodies need colours; the other two ignore them
    return b.finalize("cpu")


@pytest.mark.parametrize("value", TRUE_LIKE, ids=["bool", "np.bool_", "0-d array", "wp.bool"])
def test_the_shared_check_returns_a_python_bool(value):
    assert check_bool("flag", value) is True
    assert check_bool("flag", wp.bool(False)) is False


@pytest.mark.parametrize("value", [1, 0, 1.0, "yes", None, np.array([True])])
def test_the_shared_check_refuses_non_bools_by_name(value):
    with pytest.raises(TypeError, match=r"^flag must be a bool, got "):
        check_bool("flag", value)


@pytest.mark.parametrize("cls, name", CASES, ids=[c.__name__ for c, _ in CASES])
@pytest.mark.parametrize("value", TRUE_LIKE[1:], ids=["np.bool_", "0-d array", "wp.bool"])
def test_every_solver_takes_numpy_and_warp_bools(cls, name, value):
    cls(_model(), **{name: value})


@pytest.mark.parametrize("cls, name", CASES, ids=[c.__name__ for c, _ in CASES])
@pytest.mark.parametrize("value", [1, "yes"])
def test_every_solver_refuses_an_integer_or_a_string_naming_the_option(cls, name, value):
    with pytest.raises(TypeError, match=rf"{name} must be a bool, got {value!r}"):
        cls(_model(), **{name: value})
