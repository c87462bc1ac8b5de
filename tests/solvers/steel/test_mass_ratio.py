"""Construction warns when a contact pair's mass ratio is beyond what the iteration count holds."""

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel
from steel.solvers.steel.mass_ratio import MASS_RATIO_PER_ITERATION

from .scenes import run


def two_box_stack(ratio: float):
    """A 0.2 m box on the ground under a box ``ratio`` times heavier."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    for k, density in enumerate((1000.0, 1000.0 * ratio)):
        body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.1 + 0.2 * k), wp.quat_identity()))
        builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=newton.ModelBuilder.ShapeConfig(density=density))
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


def test_a_light_box_under_a_heavier_one_beyond_the_held_ratio_warns():
    """Ratio 100 at the default 12 iterations (holds about 24) warns, naming the ratio."""
    with pytest.warns(newton.NewtonWarning, match="mass ratio 100"):
        SolverSteel(two_box_stack(100.0))


def test_the_same_stack_with_enough_iterations_does_not_warn():
    """Ratio 90 at 50 iterations (holds about 100) and ratio 10 at 12 build silently."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", newton.NewtonWarning)
        SolverSteel(two_box_stack(90.0), iterations=int(np.ceil(100.0 / MASS_RATIO_PER_ITERATION)))
        SolverSteel(two_box_stack(10.0))


def test_the_warned_ratio_really_sinks_and_the_held_one_stands():
    """The measurement behind the threshold: ratio 100 sinks the light box > 1 cm, ratio 10 < 1 mm."""
    sink = {}
    for ratio in (10.0, 100.0):
        model = two_box_stack(ratio)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", newton.NewtonWarning)
            solver = SolverSteel(model)
        low = []
        run(model, solver, 240, 1.0 / 240.0, record=lambda s: low.append(float(s.body_q.numpy()[0, 2])))
        sink[ratio] = 0.1 - min(low[20:])  # [m] below its resting height
    assert sink[10.0] < 1e-3
    assert sink[100.0] > 1e-2
