"""SolverFeatherstone options, validation, step API and body_parent_f."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import warp as wp

import newton
import steel.solvers
from benchmarks import scenes as bench_scenes

from .scenes import G, pendulum, run


@pytest.fixture(scope="module")
def model():
    return pendulum(links=3)


@pytest.mark.parametrize(
    "option, value, error",
    [
        ("angular_damping", -0.1, ValueError),
        ("angular_damping", math.nan, ValueError),
        ("angular_damping", "0.1", TypeError),
        ("update_mass_matrix_interval", 0, ValueError),
        ("update_mass_matrix_interval", 1.5, TypeError),
        ("friction_smoothing", math.inf, ValueError),
        ("friction_smoothing", -1.0, ValueError),
        ("use_tile_gemm", "yes", TypeError),
        ("fuse_cholesky", None, TypeError),
        ("deterministic", 3, TypeError),
    ],
)
def test_invalid_option_raises_naming_it(model, option, value, error):
    """An option of the wrong type raises TypeError, one out of range ValueError (as SolverSteel), naming it."""
    with pytest.raises(error, match=option):
        steel.solvers.SolverFeatherstone(model, **{option: value})


def test_rod_joint_is_rejected_by_name():
    """A ROD joint raises ValueError naming the joint."""
    m = pendulum(links=2)
    types = m.joint_type.numpy()
    types[1] = int(newton.JointType.ROD)
    m.joint_type.assign(types)
    with pytest.raises(ValueError, match="joint 1.*ROD"):
        steel.solvers.SolverFeatherstone(m)


def test_in_place_step_equals_ping_pong():
    """Stepping with state_in is state_out gives bitwise the same trajectory as two states, contacts included."""
    scene = bench_scenes.build_humanoid(1, "cpu")
    m = scene.model
    pipeline = newton.CollisionPipeline(m)
    contacts = pipeline.contacts()
    results = []
    for in_place in (True, False):
        solver = steel.solvers.SolverFeatherstone(m)
        a, b = m.state(), m.state()
        for _ in range(200):
            pipeline.collide(a, contacts)
            solver.step(a, a if in_place else b, None, contacts, 1.0 / 600.0)
            if not in_place:
                a, b = b, a
        results.append((a.joint_q.numpy(), a.body_q.numpy()))
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])


def test_deterministic_runs_are_bitwise_identical():
    """With deterministic=RUN_TO_RUN two runs of a contact scene give bitwise-identical states."""
    scene = bench_scenes.build_tower(1, "cpu")
    m = scene.model
    pipeline = newton.CollisionPipeline(m)
    contacts = pipeline.contacts()
    finals = []
    for _ in range(2):
        solver = steel.solvers.SolverFeatherstone(m, deterministic=wp.DeterministicMode.RUN_TO_RUN)
        s = run(solver, m, m.state(), 100, 1.0 / 600.0, contacts=contacts, pipeline=pipeline)
        finals.append(s.body_q.numpy())
    assert np.array_equal(finals[0], finals[1])


def test_hanging_chain_parent_f_carries_subtree_weight():
    """At rest, each link of a hanging 3-link chain receives its subtree's weight through its joint, within 0.5 %.

    Checked through both routes: the seed's request_state_attributes("body_parent_f") and observables().
    """
    m = pendulum(links=3, mass=2.0)
    with pytest.warns(Warning):  # Newton 1.8 deprecates the route the seed documents
        m.request_state_attributes("body_parent_f")
    solver = steel.solvers.SolverFeatherstone(m)
    obs = solver.observables({solver.ObservableKind.BODY_PARENT_F})
    state = m.state()
    solver.step(state, state, None, None, 1.0e-3, observables=obs)
    for f in (state.body_parent_f.numpy(), obs.body_parent_f.numpy()):
        expected = 2.0 * G * np.array([3.0, 2.0, 1.0])
        np.testing.assert_allclose(f[:, 2], expected, rtol=5.0e-3)
        assert np.abs(f[:, :2]).max() < 1.0e-3 * expected[0]


def test_spinning_link_parent_f_shows_the_centripetal_force():
    """A link spinning at w about a vertical hinge receives m w² r toward the axis, within 0.5 %."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_link(com=wp.vec3(0.3, 0.0, 0.0), mass=2.0, inertia=wp.mat33(np.eye(3) * 1e-3))
    b.add_articulation([b.add_joint_revolute(-1, body, axis=(0.0, 0.0, 1.0))])
    m = b.finalize(device="cpu")
    solver = steel.solvers.SolverFeatherstone(m)
    obs = solver.observables({"body_parent_f"})
    state = m.state()
    state.joint_qd.assign([5.0])
    solver.step(state, state, None, None, 1.0e-4, observables=obs)
    f = obs.body_parent_f.numpy()[0]
    assert f[0] == pytest.approx(-2.0 * 25.0 * 0.3, rel=5.0e-3)
    assert abs(f[1]) < 1.0e-3 and abs(f[2]) < 1.0e-3


def test_control_none_uses_model_defaults(model):
    """control=None steps with the model's default control (here a model-level joint_f torque)."""
    m = pendulum(links=1)
    m.joint_f.assign([3.0])
    solver = steel.solvers.SolverFeatherstone(m)
    state = run(solver, m, m.state(), 10, 1.0e-3)
    assert float(state.joint_q.numpy()[0]) > 0.0


def test_unsupported_observable_is_rejected(model):
    """Requesting an observable other than body_parent_f raises ValueError."""
    solver = steel.solvers.SolverFeatherstone(model)
    with pytest.raises(ValueError):
        solver.observables({"body_qdd"})


_HINGES_MJCF = """<mujoco><worldbody>
<body name="a" pos="0 0 1"><joint name="ja" type="hinge" axis="0 1 0"/><geom type="sphere" size="0.1" mass="1"/>
 <body name="b" pos="0 0 -0.5"><joint name="jb" type="hinge" axis="0 1 0"/><geom type="sphere" size="0.1" mass="1"/>
 </body></body></worldbody>{equality}</mujoco>"""


def _hinges(equality: str = "", sparse_mimic: bool = False) -> newton.Model:
    b = newton.ModelBuilder()
    b.add_mjcf(_HINGES_MJCF.format(equality=equality))
    if sparse_mimic:
        with pytest.warns(newton.NewtonDeprecationWarning):
            b.add_constraint_mimic(1, 0, 0.0, 1.0)
    return b.finalize(device="cpu")


def _warnings_of_construction_and_steps(model: newton.Model) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solver = steel.solvers.SolverFeatherstone(model)
        state = model.state()
        for _ in range(3):
            solver.step(state, state, None, None, 1.0e-3)
    return [
        str(w.message) for w in caught if issubclass(w.category, UserWarning) and "SolverFeatherstone" in str(w.message)
    ]


@pytest.mark.parametrize(
    "equality, sparse_mimic, expected",
    [
        ('<equality><connect body1="b" body2="world" anchor="0 0 0"/></equality>', False, ["1 MuJoCo equality"]),
        ("", True, ["1 sparse (deprecated) mimic"]),
        # MJCF joint equalities become both an equality row and a sparse mimic constraint in Newton 1.8.
        (
            '<equality><connect body1="b" body2="world" anchor="0 0 0"/><joint joint1="jb" joint2="ja"/></equality>',
            False,
            ["2 MuJoCo equality", "1 sparse (deprecated) mimic"],
        ),
    ],
)
def test_unsupported_constraints_warn_once_at_construction(equality, sparse_mimic, expected):
    """Equality constraints and deprecated sparse mimic constraints give one UserWarning naming them, none per step."""
    messages = _warnings_of_construction_and_steps(_hinges(equality, sparse_mimic))
    assert len(messages) == 1
    for part in expected:
        assert part in messages[0]


def test_model_without_unsupported_constraints_does_not_warn():
    """A plain two-hinge model constructs and steps without the unsupported-constraint warning."""
    assert _warnings_of_construction_and_steps(_hinges()) == []


def test_a_non_finite_or_negative_time_step_is_rejected_before_any_change():
    """step() raises ValueError naming dt for NaN or negative dt, leaving the state untouched."""
    builder = newton.ModelBuilder()
    body = builder.add_body()
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    free_box = builder.finalize(device="cpu")
    solver = steel.solvers.SolverFeatherstone(free_box)
    state = free_box.state()
    before = state.joint_q.numpy().copy()
    for bad in (float("nan"), -0.01):
        with pytest.raises(ValueError, match="dt"):
            solver.step(state, state, None, None, bad)
    np.testing.assert_array_equal(state.joint_q.numpy(), before)


def test_a_loop_closing_joint_is_named_in_the_construction_warning():
    """A joint outside every articulation (here a revolute pin closing a two-link loop to the world) is not part
    of the reduced-coordinate tree: the one construction warning names it instead of dropping it silently."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    inertia = wp.mat33(np.eye(3) * 1e-4)
    upper = b.add_link(mass=0.1, inertia=inertia)
    lower = b.add_link(mass=0.1, inertia=inertia, xform=wp.transform(wp.vec3(0.0, 0.0, -0.5)))
    j0 = b.add_joint_revolute(-1, upper, axis=(0.0, 1.0, 0.0))
    j1 = b.add_joint_revolute(upper, lower, axis=(0.0, 1.0, 0.0), parent_xform=wp.transform(wp.vec3(0.0, 0.0, -0.5)))
    b.add_articulation([j0, j1])
    b.add_joint_revolute(-1, lower, axis=(0.0, 1.0, 0.0), parent_xform=wp.transform(wp.vec3(0.0, 0.0, -1.0)),
                         child_xform=wp.transform(wp.vec3(0.0, 0.0, -0.5)), label="pin")
    messages = _warnings_of_construction_and_steps(b.finalize(device="cpu"))
    assert len(messages) == 1
    assert "1 joint(s) outside every articulation" in messages[0] and "joint 2 ('pin')" in messages[0]


def test_a_model_array_replaced_between_steps_is_read_from_the_next_step():
    """The kernels' struct views of the model follow an array replaced on the model (not only one edited in
    place): a drive stiffness array swapped in after 20 steps gives bitwise the run that edits it in place."""
    dt = 1.0 / 240.0
    final = []
    for replace in (False, True):
        model = pendulum(links=2)
        solver = steel.solvers.SolverFeatherstone(model)
        state = model.state()
        state.joint_q.assign(np.full(model.joint_coord_count, 0.5, np.float32))  # swinging: the drive acts
        run(solver, model, state, 20, dt)
        gains = np.full(model.joint_dof_count, 50.0, np.float32)
        if replace:
            model.joint_target_ke = wp.array(gains, dtype=float, device=model.device)
        else:
            model.joint_target_ke.assign(gains)
        run(solver, model, state, 20, dt)
        final.append(state.joint_q.numpy())
    np.testing.assert_array_equal(final[0], final[1])
