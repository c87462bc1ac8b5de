"""Inputs both rigid solvers share: dt, scalar types, the model type; errors raised before anything changes.

SolverSteel and SolverFeatherstone answer the same careless input with the same exception type:
``TypeError`` for a value of the wrong type, ``ValueError`` for one out of range.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverFeatherstone, SolverSteel

from ..fixtures import box_column
from .steel.scenes import single_box

DT = 1.0 / 240.0
SOLVERS = {"steel": SolverSteel, "featherstone": SolverFeatherstone}


def _resting_box_stepped(solver_cls, steps=3):
    """A box resting on the ground, stepped with contacts so a solver holds contact history."""
    model = single_box(z=0.1)
    solver = solver_cls(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    state = model.state()
    for _ in range(steps):
        pipeline.collide(state, contacts)
        solver.step(state, state, None, contacts, DT)
    return model, solver, pipeline, contacts, state


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("dt", [1e-300, 1e300])
def test_dt_that_is_zero_or_inf_in_float32_raises_before_anything_changes(name, dt):
    """dt = 1e-300 is 0 and 1e300 is inf in float32 (the kernels' type): ValueError, state unchanged.

    Unchecked, the step turns NaN and the NaN stays in the contact history, so the next normal
    step is NaN too; the last assertion steps with DT after the rejected call and expects finite.
    """
    model, solver, pipeline, contacts, state = _resting_box_stepped(SOLVERS[name])
    before = state.joint_q.numpy().copy()
    with pytest.raises(ValueError, match="dt"):
        solver.step(state, state, None, contacts, dt)
    np.testing.assert_array_equal(state.joint_q.numpy(), before)
    pipeline.collide(state, contacts)
    solver.step(state, state, None, contacts, DT)
    assert np.isfinite(state.joint_q.numpy()).all()


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("dt", [wp.float32(DT), np.float32(DT), np.float64(DT)])
def test_warp_and_numpy_scalars_are_accepted_for_dt(name, dt):
    """A dt kept as wp.float32 or a NumPy scalar steps exactly like the Python float it holds."""
    results = []
    for value in (dt, float(np.float32(DT)) if not isinstance(dt, np.float64) else DT):
        model = single_box(z=0.5)
        solver = SOLVERS[name](model)
        state = model.state()
        solver.step(state, state, None, None, value)
        results.append(state.joint_q.numpy())
    np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("dt", ["0.01", True, None])
def test_dt_of_the_wrong_type_raises_type_error(name, dt):
    model = single_box(z=0.5)
    solver = SOLVERS[name](model)
    state = model.state()
    with pytest.raises(TypeError, match="dt"):
        solver.step(state, state, None, None, dt)


@pytest.mark.parametrize("scalar", [wp.float32, np.float32])
def test_warp_and_numpy_scalars_are_accepted_for_options(scalar):
    """Options given as wp.float32/np.float32 (and int types) are accepted by both solvers, as by the reference."""
    model = single_box(z=0.5)
    fs = SolverFeatherstone(model, angular_damping=scalar(0.1), friction_smoothing=scalar(1.0),
                            update_mass_matrix_interval=np.int32(2))
    assert fs.update_mass_matrix_interval == 2
    st = SolverSteel(model, baumgarte=scalar(0.25), iterations=np.int32(7))
    assert st.iterations == 7 and abs(st.baumgarte - 0.25) < 1e-7
    st.baumgarte = scalar(0.5)  # a step option set between steps
    assert st.baumgarte == 0.5


@pytest.mark.parametrize("name, option", [("steel", "baumgarte"), ("featherstone", "angular_damping")])
def test_option_errors_have_the_same_types_in_both_solvers(name, option):
    model = single_box(z=0.5)
    with pytest.raises(TypeError, match=option):
        SOLVERS[name](model, **{option: "0.1"})
    with pytest.raises(ValueError, match=option):
        SOLVERS[name](model, **{option: -1.0})


@pytest.mark.parametrize("name", SOLVERS)
def test_a_non_model_raises_type_error(name):
    with pytest.raises(TypeError, match="newton.Model"):
        SOLVERS[name](object())


@pytest.mark.parametrize("option", ["articulation_constraint_max", "free_body_constraint_max"])
def test_a_row_capacity_of_zero_is_rejected(option):
    """0 rows would drop every contact of its kind; the reference rejects it too."""
    with pytest.raises(ValueError, match=option):
        SolverSteel(single_box(z=0.5), **{option: 0})


def test_state_out_none_raises_before_the_solver_records_anything():
    """step(state_out=None) raises TypeError before the dt record or the contact history moves.

    A new dt would have flagged the mass matrix for rebuild; checked here through ``_last_dt``.
    """
    model, solver, pipeline, contacts, state = _resting_box_stepped(SolverSteel)
    last_dt = solver._last_dt
    history = {k: v.numpy().copy() for k, v in vars(solver.steel_data.history).items() if isinstance(v, wp.array)}
    with pytest.raises(TypeError, match="state_out"):
        solver.step(state, None, None, contacts, 2 * DT)
    assert solver._last_dt == last_dt
    for k, v in vars(solver.steel_data.history).items():
        if isinstance(v, wp.array):
            np.testing.assert_array_equal(v.numpy(), history[k], err_msg=k)


@pytest.mark.parametrize("name", ["steel", "featherstone", "vbd"])
def test_a_full_collision_buffer_warns_once_and_a_roomy_one_not(name):
    """Newton's pipeline stops writing at rigid_contact_max and clamps the count, silently: a 6-box column under a
    pipeline sized for 8 contacts keeps 8 of its 24 and the upper boxes fall through. Every solver warns once per
    Contacts whose count reached its capacity (the only trace), naming the field; a pipeline of the default size
    (count 24 of more) steps without that warning."""
    import warnings  # noqa: PLC0415

    from steel.solvers import SolverVBD  # noqa: PLC0415

    cls = {"steel": SolverSteel, "featherstone": SolverFeatherstone, "vbd": SolverVBD}[name]
    for capacity, expected in ((8, 1), (None, 0)):
        model = box_column(6, color=True)
        solver = cls(model)
        pipeline = newton.CollisionPipeline(model, rigid_contact_max=capacity)
        contacts = pipeline.contacts()
        s0, s1 = model.state(), model.state()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                pipeline.collide(s0, contacts)
                solver.step(s0, s1, None, contacts, DT)
                s0, s1 = s1, s0
        full = [w for w in caught if "rigid_contact_count reached" in str(w.message)]
        assert len(full) == expected, [str(w.message) for w in caught]
        if expected:
            assert int(contacts.rigid_contact_count.numpy()[0]) == 8
            assert "contacts.rigid_contact_max = 8" in str(full[0].message)
