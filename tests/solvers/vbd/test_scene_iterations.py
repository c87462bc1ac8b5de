"""SolverVBD's iteration count: 0 allowed, None reads the scene's vbd:max_solver_iterations, omitted keeps 10."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

DT = 1.0 / 60.0


def _model(scene=None, register=True):
    """A free particle and a free box 1 m up; ``scene`` authors vbd:max_solver_iterations."""
    b = newton.ModelBuilder()
    if register:
        SolverVBD.register_custom_attributes(b, dahl_defaults_enabled=False)
    b.add_particle((0.0, 0.0, 1.0), (0.0, 0.0, 0.0), 0.1)
    body = b.add_body(xform=wp.transform((1.0, 0.0, 1.0), wp.quat_identity()))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b.color()
    model = b.finalize(device="cpu")
    if scene is not None:
        model.vbd.max_solver_iterations.fill_(scene)
    return model


def _fall(model, solver, steps):
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    return s0


def test_zero_iterations_take_the_inertial_target():
    """iterations=0: no sweeps; particle and body follow implicit-Euler free fall z0 - g dt² n(n+1)/2 exactly.

    Measured: 0 and 6e-8 m off after 3 steps (float32 rounding), limit 1e-6 m. (Newton 1.8.0 accepts 0 too;
    its particle then stays at the first step's 0.997275 m while its body falls to 0.98365 m.)
    """
    model = _model()
    state = _fall(model, SolverVBD(model, iterations=0), 3)
    expected = 1.0 - 9.81 * DT * DT * 6
    assert abs(state.particle_q.numpy()[0, 2] - expected) < 1e-6
    assert abs(state.body_q.numpy()[0, 2] - expected) < 1e-6


@pytest.mark.parametrize(("scene", "given", "expected"), [
    (5, {"iterations": None}, 5),   # None reads the scene
    (-1, {"iterations": None}, 10),  # -1: no preference
    (5, {}, 10),                     # omitted: the seed's default, whatever the scene says
    (5, {"iterations": 3}, 3),       # an explicit count wins
])
def test_iterations_none_reads_the_scene_attribute(scene, given, expected):
    """Precedence: explicit > scene (for iterations=None only) > 10; the attribute is newton:maxSolverIterations."""
    model = _model(scene)
    assert SolverVBD(model, **given).iterations == expected


def test_iterations_none_without_the_attribute_is_ten():
    """iterations=None on a model without vbd:max_solver_iterations runs the default 10."""
    assert SolverVBD(_model(register=False), iterations=None).iterations == 10


def _pendulum(scene=None):
    """A 0.1 kg particle on a stiff spring to a fixed one: an iterative solve that each sweep changes."""
    b = newton.ModelBuilder()
    SolverVBD.register_custom_attributes(b, dahl_defaults_enabled=False)
    b.add_particle((0.0, 0.0, 1.0), (0.0, 0.0, 0.0), 0.0)
    b.add_particle((0.5, 0.0, 1.0), (0.0, 0.0, 0.0), 0.1)
    b.add_spring(0, 1, 1e4, 0.0, 0)
    b.spring_rest_length[-1] = 0.4  # stretched at the start: a nonlinear solve
    b.color()
    model = b.finalize(device="cpu")
    if scene is not None:
        model.vbd.max_solver_iterations.fill_(scene)
    return model


def test_scene_count_runs_as_that_many_iterations():
    """The scene's 3 gives bitwise the states of an explicit iterations=3, not those of the default 10."""
    from_scene = _pendulum(3)
    a = _fall(from_scene, SolverVBD(from_scene, iterations=None), 4).particle_q.numpy()
    explicit, default = _pendulum(), _pendulum()
    np.testing.assert_array_equal(a, _fall(explicit, SolverVBD(explicit, iterations=3), 4).particle_q.numpy())
    assert not np.array_equal(a, _fall(default, SolverVBD(default), 4).particle_q.numpy())


@pytest.mark.parametrize("scene", [0, -2])
def test_bad_scene_count_raises_naming_the_attribute(scene):
    """A scene count neither positive nor -1 raises ValueError naming newton:maxSolverIterations and the value."""
    with pytest.raises(ValueError, match=rf"newton:maxSolverIterations.*got {scene}"):
        SolverVBD(_model(scene), iterations=None)


def test_negative_iterations_raise_naming_the_option():
    """iterations=-1 raises ValueError naming the option (0 is the smallest count)."""
    with pytest.raises(ValueError, match="iterations must be >= 0"):
        SolverVBD(_model(), iterations=-1)
