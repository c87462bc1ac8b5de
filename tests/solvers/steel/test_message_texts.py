"""Error and warning texts users match, worded as Newton's SolverSteel words them."""

import warnings

import newton
import pytest
import warp as wp

from steel.solvers import SolverSteel
from tests.fixtures import box_column, step_with_collision


def _box(builder, z=0.1):
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, z), wp.quat_identity()))
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    return body


def _one_box():
    builder = newton.ModelBuilder()
    _box(builder)
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


def test_solve_mode_error_reads_as_the_reference():
    """A bad solve_mode: "solve_mode must be 'serial' or 'colored', got 'bogus'" on both (ours once said "must be
    one of ('serial', 'colored')")."""
    model = _one_box()
    for cls in (SolverSteel, newton.solvers.SolverSteel):
        with pytest.raises(ValueError, match=r"solve_mode must be 'serial' or 'colored', got 'bogus'"):
            cls(model, solve_mode="bogus")


def test_capacity_warning_and_error_say_contacts_or_constraint_rows():
    """A world that drops rows: the once-only warning and check_constraint_capacity() both say "dropped contacts or
    constraint rows" (ours said "dropped constraint rows")."""
    model = box_column(3)
    solver = SolverSteel(model, free_body_constraint_max=3)
    with pytest.warns(newton.NewtonWarning, match="dropped contacts or constraint rows"):
        step_with_collision(model, solver, 3, 1.0 / 240.0)
    with pytest.raises(RuntimeError, match="dropped contacts or constraint rows"):
        solver.check_constraint_capacity()


def test_global_articulations_touching_several_worlds_are_named_once():
    """A dynamic global (world -1) body that can touch the moving bodies of two worlds: one warning naming it as
    "global (world -1) articulations [...]" whose contacts "cannot be solved"."""
    robot = newton.ModelBuilder()
    _box(robot)
    builder = newton.ModelBuilder()
    builder.replicate(robot, 2)
    _box(builder, 0.5)  # outside every world: global
    builder.add_ground_plane()
    model = builder.finalize(device="cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SolverSteel(model)
    texts = [str(w.message) for w in caught if "global (world -1)" in str(w.message)]
    assert len(texts) == 1
    assert "global (world -1) articulations [" in texts[0] and "cannot be solved" in texts[0]
