"""reset() equal to a fresh solver, reset-mask validation, and the capacity status snapshot."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.app.scenes import build_scene
from steel.solvers import SolverSteel

from .scenes import single_box

DT = 1.0 / 240.0


def _steps(model, solver, state, steps, pipeline, contacts):
    """Step ``steps`` times from ``state`` (left unchanged); return the body poses of every step."""
    s0, s1 = model.state(), model.state()
    for name in ("joint_q", "joint_qd"):
        wp.copy(getattr(s0, name), getattr(state, name))
    poses = []
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        poses.append(s0.body_q.numpy().copy())
    return s0, np.array(poses)


@pytest.mark.parametrize("scene, options", [
    ("tower", {}),
    ("tower", {"velocity_iterations": 2}),
    ("humanoid", {"update_mass_matrix_interval": 3, "enable_joint_limits": True}),
])
def test_reset_without_mask_makes_the_solver_step_like_a_fresh_one_bit_for_bit(scene, options):
    """After 40 steps (friction history, interval cadence, dt seen), reset(state) forgets all of it.

    The used solver and a freshly built one step the same state 25 more times; every published
    pose agrees exactly (CPU launches are serial, so equal inputs give equal bits).
    """
    model = build_scene(scene, 1, "cpu").model
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    used = SolverSteel(model, **options)
    state, _ = _steps(model, used, model.state(), 40, pipeline, contacts)
    used.reset(state)
    _, after_reset = _steps(model, used, state, 25, pipeline, contacts)
    _, fresh = _steps(model, SolverSteel(model, **options), state, 25, pipeline, contacts)
    np.testing.assert_array_equal(after_reset, fresh)


def test_reset_mask_is_validated_like_the_reference_before_anything_changes():
    """Wrong type, dtype, ndim or length raise TypeError/ValueError in both classes; flags kept."""
    model = single_box(world_count=2)
    ours, ref = SolverSteel(model), newton.solvers.SolverSteel(model)
    ours.constraint_overflow.fill_(True)
    bad = [(np.zeros(3, bool), TypeError), (wp.zeros(3, dtype=wp.int32), TypeError),
           (wp.zeros((3, 1), dtype=wp.bool), ValueError), (wp.zeros(2, dtype=wp.bool), ValueError)]
    state = model.state()
    for mask, error in bad:
        with pytest.raises(error, match="world_mask"):
            ours.reset(state, world_mask=mask)
        with pytest.raises(error, match="world_mask"):
            ref.reset(state, world_mask=mask)
    assert ours.constraint_overflow.numpy().all()
    # The global entry (last) is cleared by the last mask entry alone.
    ours.reset(state, world_mask=wp.array([False, False, True], dtype=wp.bool))
    assert ours.constraint_overflow.numpy().tolist() == [True, True, False]


def _overflowing_world_model():
    builder = newton.ModelBuilder()
    for w in range(2):
        builder.begin_world()
        for k in range(4 if w == 1 else 1):  # world 1 stacks four boxes: more rows than its capacity
            body = builder.add_body(xform=wp.transform(wp.vec3(3.0 * w, 0.0, 0.1 + 0.2 * k), wp.quat_identity()))
            builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
        builder.end_world()
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


def test_capacity_snapshot_reports_the_status_when_it_was_taken():
    """check_constraint_capacity(snapshot=True) reads the last snapshot, as the reference documents."""
    model = _overflowing_world_model()
    solver = SolverSteel(model, free_body_constraint_max=12, warn_constraint_overflow=False)
    with pytest.raises(RuntimeError, match="snapshot_constraint_status"):
        solver.check_constraint_capacity(snapshot=True)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    state = model.state()
    solver.snapshot_constraint_status()  # before any step: nothing lost
    solver.check_constraint_capacity(snapshot=True)
    for _ in range(10):
        pipeline.collide(state, contacts)
        solver.step(state, state, None, contacts, DT)
    solver.check_constraint_capacity(snapshot=True)  # the old snapshot still says clean
    with pytest.raises(RuntimeError, match="world 1"):
        solver.check_constraint_capacity()
    solver.snapshot_constraint_status()
    solver.reset(state)  # an unchecked snapshot is kept across a reset...
    with pytest.raises(RuntimeError, match="world 1"):
        solver.check_constraint_capacity(snapshot=True)
    solver.reset(state)  # ...a checked one is retaken
    solver.check_constraint_capacity(snapshot=True)
    solver.check_constraint_capacity()


def test_contact_buffer_larger_than_the_capacity_names_the_contact_capacity():
    """The step's contact-buffer check is a ValueError that names the contact capacity."""
    model = single_box(z=0.5)
    solver = SolverSteel(model)
    big = newton.CollisionPipeline(model, rigid_contact_max=model.rigid_contact_max + 10).contacts()
    state = model.state()
    with pytest.raises(ValueError, match="contact capacity"):
        solver.step(state, state, None, big, DT)
