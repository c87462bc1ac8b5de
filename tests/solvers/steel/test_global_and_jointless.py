"""Global entities (world -1) and models without joints or articulations."""

import math
import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

from .scenes import G, run

DT = 1.0 / 240.0
WORLDS = 3


def _world_boxes(builder, cfg, z=0.2, x0=0.0, spacing=0.0):
    """One free box per world [half extent 0.1 m] at height ``z``; returns their body indices."""
    boxes = []
    for w in range(WORLDS):
        builder.begin_world()
        box = builder.add_body(xform=wp.transform(wp.vec3(x0 + spacing * w, 0.0, z), wp.quat_identity()))
        builder.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
        builder.end_world()
        boxes.append(box)
    return boxes


def _quiet_construct(model, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solver = SolverSteel(model, **options)
    return solver, [str(w.message) for w in caught if issubclass(w.category, newton.NewtonWarning)]


def test_global_kinematic_platform_carries_a_box_in_every_world():
    """A kinematic global slab moving at 0.5 m/s carries each world's box, identically, no warning."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=1.0)
    slab = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.05), wp.quat_identity()), is_kinematic=True)
    builder.add_shape_box(slab, hx=1.0, hy=1.0, hz=0.05, cfg=cfg)
    builder.joint_qd[0] = 0.5  # the slab's free joint: 0.5 m/s along x
    boxes = _world_boxes(builder, cfg)
    model = builder.finalize(device="cpu")
    assert int(model.body_world.numpy()[slab]) == -1
    solver, warned = _quiet_construct(model)
    assert warned == []
    state, _ = run(model, solver, 240, DT)
    q, qd = state.body_q.numpy(), state.body_qd.numpy()
    assert q[slab, 0] == pytest.approx(0.5, abs=1e-4)  # [m] prescribed: 1 s at 0.5 m/s
    for box in boxes:
        assert qd[box, 0] == pytest.approx(0.5, abs=0.01)  # [m/s] friction carries it
        assert q[box, 2] == pytest.approx(0.2, abs=2e-3)  # [m] resting on the slab's top at 0.1 m
        np.testing.assert_array_equal(q[box], q[boxes[0]])  # the worlds are identical
    assert not solver.constraint_overflow.numpy().any()


def test_global_articulation_is_solved_with_world_zero_like_the_reference():
    """A global pendulum beside per-world pendulums swings like a world pendulum and like the reference."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))

    def pendulum(x):
        body = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-4), com=wp.vec3(0.0, 0.0, -0.5))
        joint = builder.add_joint_revolute(-1, body, axis=(0.0, 1.0, 0.0),
                                           parent_xform=wp.transform(wp.vec3(x, 0.0, 1.0), wp.quat_identity()))
        builder.add_articulation([joint])
        builder.joint_q[-1] = 0.5

    pendulum(-2.0)  # world -1
    for w in range(WORLDS):
        builder.begin_world()
        pendulum(2.0 * w)
        builder.end_world()
    model = builder.finalize(device="cpu")
    assert model.articulation_world.numpy().tolist() == [-1, 0, 1, 2]
    ours, _ = run(model, SolverSteel(model), 120, DT)
    ref, _ = run(model, newton.solvers.SolverSteel(model), 120, DT)
    q = ours.joint_q.numpy()
    assert np.all(q == q[0])  # the global pendulum moves exactly like the world ones
    np.testing.assert_allclose(q, ref.joint_q.numpy(), atol=1e-5)  # [rad] float32 rounding


def _dynamic_global_box_model(group=-1, collide=True, worlds=True):
    """A dynamic global box dropped across the boxes of three worlds (or of one world)."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.5)
    gcfg = newton.ModelBuilder.ShapeConfig(mu=0.5, collision_group=group, has_shape_collision=collide)
    top = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.45), wp.quat_identity()), label="shared_lid")
    builder.add_shape_box(top, hx=1.0, hy=0.3, hz=0.05, cfg=gcfg)
    if worlds:
        _world_boxes(builder, cfg, z=0.1, x0=-0.6, spacing=0.6)
    else:
        box = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.1), wp.quat_identity()))
        builder.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    return builder.finalize(device="cpu")


def test_dynamic_global_body_touching_several_worlds_warns_drops_and_flags_the_global_entry():
    """The constructor warns once; the unsolvable contacts are dropped and latch the global entry.

    The lid rests on world 0's box (solved in world 0's sweep) but its contacts with worlds 1 and
    2 are dropped, so those entries and the global entry (index world_count) are flagged. A reset
    mask of length world_count + 1 clears the global entry with its own last entry.
    """
    model = _dynamic_global_box_model()
    solver, warned = _quiet_construct(model)
    assert len(warned) == 1 and "shared_lid" in warned[0]
    solver.warn_constraint_overflow = False
    state, _ = run(model, solver, 60, DT)
    assert np.isfinite(state.body_q.numpy()).all()
    flags = solver.constraint_overflow.numpy()
    assert flags.tolist() == [False, True, True, True]
    with pytest.raises(RuntimeError, match="global entry"):
        solver.check_constraint_capacity()
    solver.reset(state, world_mask=wp.array([False, False, False, True], dtype=wp.bool))
    assert solver.constraint_overflow.numpy().tolist() == [False, True, True, False]


@pytest.mark.parametrize("case", ["single world", "collision off", "separate group"])
def test_no_cross_world_warning_when_the_global_body_cannot_couple_worlds(case):
    """A single world, a global shape without collisions, or a group of its own: no warning."""
    kwargs = {"single world": {"worlds": False}, "collision off": {"collide": False},
              "separate group": {"group": 7}}[case]
    model = _dynamic_global_box_model(**kwargs)
    if case == "separate group":
        # the world boxes keep the default group 1, which a positive group 7 never meets
        assert set(model.shape_collision_group.numpy()[1:4].tolist()) == {1}
    _, warned = _quiet_construct(model)
    assert warned == []


# -- models without joints or articulations ------------------------------------------------------


def _jointless(kind):
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    if kind in ("kinematic body", "loose links"):
        for k in range(1 if kind == "kinematic body" else 2):
            body = builder.add_link(xform=wp.transform(wp.vec3(float(k), 0.0, 0.5), wp.quat_identity()), mass=1.0,
                                    is_kinematic=kind == "kinematic body")
            builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


@pytest.mark.parametrize("kind", ["kinematic body", "loose links", "ground only"])
def test_models_without_joints_construct_step_and_publish_their_prescribed_state(kind):
    """No joint at all: the step publishes the input body state unchanged and body_parent_f is zero.

    The reference does the same (its output is compared bit for bit).
    """
    model = _jointless(kind)
    assert model.joint_count == 0
    results = []
    for cls in (SolverSteel, newton.solvers.SolverSteel):
        solver = cls(model)
        obs = solver.observables(["body_parent_f"]) if model.body_count else None
        s0, s1 = model.state(), model.state()
        if model.body_count:
            s0.body_qd.fill_(wp.spatial_vector(0.3, 0.0, 0.0, 0.0, 0.0, 0.0))
        pipeline = newton.CollisionPipeline(model)
        contacts = pipeline.contacts()
        for _ in range(5):
            pipeline.collide(s0, contacts)
            solver.step(s0, s1, None, contacts, DT, observables=obs)
            s0, s1 = s1, s0
        if model.body_count:
            results.append((s0.body_q.numpy(), s0.body_qd.numpy(), obs.body_parent_f.numpy()))
    if model.body_count:
        (q, qd, f), (q_ref, qd_ref, f_ref) = results
        np.testing.assert_array_equal(q, model.state().body_q.numpy())
        assert np.allclose(qd[:, 0], 0.3)
        assert not f.any()
        np.testing.assert_array_equal(q, q_ref)
        np.testing.assert_array_equal(qd, qd_ref)
