"""SolverSteel's API contract: options, errors before any change, capacity, worlds, determinism."""

import math

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

from .scenes import run, single_box

DT = 1.0 / 240.0


@pytest.mark.parametrize(
    "option, value, error",
    [
        ("iterations", -1, ValueError),
        ("iterations", 2.5, TypeError),
        ("baumgarte", float("nan"), ValueError),
        ("cfm", -1e-6, ValueError),
        ("relaxation", float("inf"), ValueError),
        ("update_mass_matrix_interval", 0, ValueError),
        ("joint_limit_activation_gap", -0.1, ValueError),
        ("restitution_velocity_threshold", -1.0, ValueError),
        ("friction_anchor_beta", float("nan"), ValueError),
        ("solve_mode", "fast", ValueError),
        ("drive_mode", "springs", ValueError),
        ("articulation_constraint_max", -1, ValueError),
        ("enable_joint_limits", 1, TypeError),
        ("contact_gap_gate", -0.5, ValueError),
    ],
)
def test_invalid_option_raises_naming_the_option(option, value, error):
    """Every invalid option value raises its documented error, naming the option."""
    model = single_box()
    with pytest.raises(error, match=option):
        SolverSteel(model, **{option: value})


def test_unknown_and_unbuilt_options_are_never_silently_ignored():
    """An unknown keyword is a TypeError; an option whose feature is not built is NotImplementedError."""
    model = single_box()
    with pytest.raises(TypeError, match="bogus"):
        SolverSteel(model, bogus=1)
    with pytest.raises(NotImplementedError, match="double_buffer"):
        SolverSteel(model, double_buffer=True)
    with pytest.raises(NotImplementedError, match="propagation_same_articulation_rows"):
        SolverSteel(model, propagation_same_articulation_rows=True)


def test_step_options_are_assignable_and_validated_construction_options_are_not():
    """baumgarte can be reassigned (validated, old value kept on error); iterations cannot."""
    solver = SolverSteel(single_box())
    solver.baumgarte = 0.1
    assert solver.baumgarte == 0.1
    with pytest.raises(ValueError, match="baumgarte"):
        solver.baumgarte = -1.0
    assert solver.baumgarte == 0.1
    with pytest.raises(AttributeError, match="iterations"):
        solver.iterations = 3
    assert solver.iterations == 12 and solver.cfm == 1e-6  # reference defaults


def test_models_the_solver_does_not_simulate_raise_not_implemented():
    """Particles, gradients and ROD joints raise NotImplementedError at construction."""
    builder = newton.ModelBuilder()
    builder.add_particle((0.0, 0.0, 1.0), (0.0, 0.0, 0.0), mass=1.0)
    with pytest.raises(NotImplementedError, match="particles"):
        SolverSteel(builder.finalize(device="cpu"))
    with pytest.raises(NotImplementedError, match="gradients"):
        SolverSteel(_grad_model())


def _grad_model():
    builder = newton.ModelBuilder()
    body = builder.add_body()
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    return builder.finalize(device="cpu", requires_grad=True)


def test_contacts_larger_than_the_model_capacity_raise_before_anything_changes():
    """A Contacts buffer above the model's rigid_contact_max raises ValueError; the state is untouched."""
    model = single_box(z=0.5)
    solver = SolverSteel(model)
    big = newton.CollisionPipeline(model, rigid_contact_max=model.rigid_contact_max + 10).contacts()
    state = model.state()
    before = state.joint_q.numpy().copy()
    with pytest.raises(ValueError, match="rigid_contact_max"):
        solver.step(state, state, None, big, DT)
    np.testing.assert_array_equal(state.joint_q.numpy(), before)
    with pytest.raises(ValueError, match="dt"):
        solver.step(state, state, None, None, 0.0)


def test_row_overflow_flags_only_the_overflowing_world_and_the_check_raises():
    """With free_body_constraint_max too small for one world's contacts, only that world is flagged."""
    builder = newton.ModelBuilder()
    for w in range(3):
        builder.begin_world()
        # world 1 drops four boxes on each other, the others a single box
        for k in range(4 if w == 1 else 1):
            body = builder.add_body(xform=wp.transform(wp.vec3(3.0 * w, 0.0, 0.1 + 0.2 * k), wp.quat_identity()))
            builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
        builder.end_world()
    builder.add_ground_plane()
    model = builder.finalize(device="cpu")
    solver = SolverSteel(model, free_body_constraint_max=12)  # one box on the ground needs 4 x 3 rows
    state, _ = run(model, solver, 30, DT)
    flags = solver.constraint_overflow.numpy()
    assert flags.tolist() == [False, True, False, False]
    with pytest.raises(RuntimeError, match="world 1"):
        solver.check_constraint_capacity()
    z = state.body_q.numpy()[:, 2]
    assert abs(z[0] - 0.1) < 2e-3 and abs(z[5] - 0.1) < 2e-3  # worlds 0 and 2 rest normally
    solver.reset(state)
    assert not solver.constraint_overflow.numpy().any()


def test_reset_with_a_world_mask_clears_only_the_selected_worlds_flags_and_contact_history():
    """reset(world_mask) clears the overflow flag and contact history of the selected world only."""
    builder = newton.ModelBuilder()
    for w in range(4):
        builder.begin_world()
        # worlds 1 and 2 drop four boxes on each other and overflow, worlds 0 and 3 rest a single box
        for k in range(4 if w in (1, 2) else 1):
            body = builder.add_body(xform=wp.transform(wp.vec3(3.0 * w, 0.0, 0.1 + 0.2 * k), wp.quat_identity()))
            builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
        builder.end_world()
    builder.add_ground_plane()
    model = builder.finalize(device="cpu")
    solver = SolverSteel(model, free_body_constraint_max=12, warn_constraint_overflow=False)
    state, contacts = run(model, solver, 30, DT)
    assert solver.constraint_overflow.numpy().tolist() == [False, True, True, False, False]
    pipeline = newton.CollisionPipeline(model)

    def contact_ages():
        """Age [steps] of each contact with rows after one more step, keyed by world."""
        pipeline.collide(state, contacts)
        solver.step(state, state, None, contacts, DT)
        n = int(contacts.rigid_contact_count.numpy()[0])
        rows = solver.steel_data.contact_slots.row.numpy()[:n] >= 0
        world, age = solver.steel_data.contact_slots.world.numpy()[:n][rows], solver.steel_data.contact_slots.age.numpy()[:n][rows]
        return {w: age[world == w] for w in range(4)}

    before = contact_ages()
    assert all(before[w].min() > 0 for w in range(4))  # every world's contacts carry history
    mask = wp.array([False, True, False, False, False], dtype=wp.bool, device=model.device)
    solver.reset(state, world_mask=mask)
    assert solver.constraint_overflow.numpy().tolist() == [False, False, True, False, False]
    with pytest.raises(RuntimeError, match="world 2") as error:
        solver.check_constraint_capacity()
    assert "world 1" not in str(error.value)
    after = contact_ages()
    # The reset world's contacts start cold (friction anchors and warm starts forgotten), the others not.
    assert (after[1] == 0).all()
    assert all(after[w].min() > 0 for w in (0, 2, 3))
    with pytest.raises(ValueError, match="world_mask"):
        solver.reset(state, world_mask=wp.zeros(4, dtype=wp.bool, device=model.device))


def test_replicated_worlds_match_the_single_world_run_and_repeat_bitwise():
    """16 replicated worlds each match the single-world run; two runs are bitwise equal."""
    single = single_box(z=0.4, mu=0.6)
    batch = single_box(z=0.4, mu=0.6, world_count=16)

    def trajectory(model, **options):
        state = model.state()
        q = state.joint_q.numpy()
        q[3:7] = np.array([0.1, 0.05, 0.0, 1.0]) / np.linalg.norm([0.1, 0.05, 0.0, 1.0])
        state.joint_q.assign(np.tile(q[:7], model.joint_count))
        pipeline = newton.CollisionPipeline(model)
        contacts = pipeline.contacts()
        solver = SolverSteel(model, **options)
        out = model.state()
        for _ in range(120):
            pipeline.collide(state, contacts)
            solver.step(state, out, None, contacts, DT)
            state, out = out, state
        return state.joint_q.numpy().reshape(model.joint_count, 7)

    ref = trajectory(single)[0]
    worlds = trajectory(batch)
    deterministic = trajectory(batch, deterministic=wp.DeterministicMode.RUN_TO_RUN)
    # Worlds are offset in space, so contact points differ in their last bits: float32 tolerance.
    np.testing.assert_allclose(worlds[:, 2:], np.tile(ref[2:], (16, 1)), atol=1e-4)
    np.testing.assert_array_equal(trajectory(batch), worlds)
    np.testing.assert_array_equal(trajectory(batch, deterministic=wp.DeterministicMode.RUN_TO_RUN), deterministic)


def test_in_place_stepping_equals_ping_pong():
    """state_in is state_out gives the same trajectory as alternating two states."""
    model = single_box(z=0.3)
    a = run(model, SolverSteel(model), 60, DT)[0].joint_q.numpy()
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    state = model.state()
    for _ in range(60):
        pipeline.collide(state, contacts)
        solver.step(state, state, None, contacts, DT)
    np.testing.assert_allclose(state.joint_q.numpy(), a, atol=1e-6)
    assert math.isfinite(float(a[2]))


def test_constructor_signature_matches_the_reference_except_the_documented_capacity_defaults():
    """Same keyword-only option names and defaults as newton.solvers.SolverSteel (capacities: None = sized)."""
    import inspect

    ours = inspect.signature(SolverSteel).parameters
    ref = inspect.signature(newton.solvers.SolverSteel).parameters
    assert list(ours) == list(ref)
    for name, p in ref.items():
        if name == "model":
            continue
        assert ours[name].kind is inspect.Parameter.KEYWORD_ONLY
        if name in ("articulation_constraint_max", "free_body_constraint_max"):
            assert ours[name].default is None  # sized from the model (see rows/capacity.py)
        else:
            assert ours[name].default == p.default or (p.default != p.default), name


def test_numpy_float_time_steps_are_accepted():
    """dt may be any real number type (numpy float32 included); a non-number is rejected."""
    model = single_box(z=0.5)
    solver = SolverSteel(model)
    state = model.state()
    solver.step(state, state, None, None, np.float32(DT))
    with pytest.raises(TypeError, match="dt"):
        solver.step(state, state, None, None, "0.01")
