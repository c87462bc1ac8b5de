"""Passed input checks are remembered per object identity (steel.solvers.inputs), and only while true."""

import math
import types

import pytest
import warp as wp

from steel.solvers import SolverSteel
from steel.solvers.inputs import STATE_ARRAYS, check_arrays, check_dt

from .steel.scenes import pendulum, single_box

DT = 1.0 / 240.0


def test_an_array_reassigned_after_passed_steps_is_checked_again():
    model = single_box(z=0.5)
    solver = SolverSteel(model)
    state_in, state_out = model.state(), model.state()
    for _ in range(2):
        solver.step(state_in, state_out, None, None, DT)
    state_out.joint_q = wp.zeros(model.joint_coord_count + 1, dtype=float, device=model.device)
    with pytest.raises(ValueError, match="state_out.joint_q has"):
        solver.step(state_in, state_out, None, None, DT)
    state_in.body_qd = wp.zeros(model.body_count, dtype=wp.spatial_vector, device=model.device)  # fits: accepted
    solver.step(state_in, state_in, None, None, DT)


def test_states_and_controls_of_another_model_raise_after_passed_steps():
    model, other = single_box(z=0.5), pendulum()
    solver = SolverSteel(model)
    state, control = model.state(), model.control()
    solver.step(state, state, control, None, DT)
    with pytest.raises(ValueError, match="state_in.joint_q"):
        solver.step(other.state(), state, control, None, DT)
    with pytest.raises(ValueError, match="control.joint_f"):
        solver.step(state, state, other.control(), None, DT)
    solver.step(state, state, control, None, DT)  # the remembered ones still pass


def test_array_likes_other_than_warp_arrays_are_checked_every_time():
    """A NumPy array can change length in place (``resize``), so only Warp arrays' verdicts are remembered."""
    model = pendulum()
    state = types.SimpleNamespace(**{attr: _Sized(int(getattr(model, count) or 0), model.device)
                                     for attr, count, _ in STATE_ARRAYS})
    check_arrays(model, state, "state_in", STATE_ARRAYS)
    state.joint_q.length += 1  # the same object, now of another length
    with pytest.raises(ValueError, match="state_in.joint_q has"):
        check_arrays(model, state, "state_in", STATE_ARRAYS)


class _Sized:
    """An array-like whose length can change in place."""

    ndim = 1

    def __init__(self, length, device):
        self.length, self.device = length, device

    @property
    def shape(self):
        return (self.length,)


def test_dt_values_that_passed_are_returned_as_given():
    assert check_dt(DT) is DT
    assert check_dt(DT) is DT
    assert math.copysign(1.0, check_dt(0.0, allow_zero=True)) == 1.0
    assert math.copysign(1.0, check_dt(-0.0, allow_zero=True)) == -1.0  # not the remembered 0.0
    with pytest.raises(ValueError, match="dt"):
        check_dt(0.0)  # passed with allow_zero only
    with pytest.raises(ValueError, match="dt"):
        check_dt(1e-300)


def test_a_remembered_check_is_forgotten_when_its_arrays_are_freed():
    """Remembering holds no array alive: freeing a state drops its entry (its ids may then be reused)."""
    from steel.solvers import inputs

    model = single_box(z=0.5)
    state = model.state()
    before = len(inputs._passed_arrays)
    inputs.check_state(model, state, "state_in")
    assert len(inputs._passed_arrays) == before + 1
    del state
    assert len(inputs._passed_arrays) == before
