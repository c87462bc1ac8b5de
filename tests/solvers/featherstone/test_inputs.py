"""SolverFeatherstone on careless input: clear errors before anything changes, or documented containment."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
import steel.solvers
from benchmarks import scenes as bench_scenes

from .scenes import free_box, pendulum, pendulum_builder, run

DT = 1.0e-3


# -- State / Control / Contacts of another model -------------------------------------------------


@pytest.mark.parametrize("which", ["state_in", "state_out", "control"])
def test_arrays_of_another_model_are_refused_before_anything_changes(which):
    """A State or Control made by another model (other lengths) raises ValueError naming it; nothing is written.

    Launched on such arrays the kernels would read and write past the buffers (heap corruption on the CPU).
    """
    model, other = pendulum(links=2), pendulum(links=3)
    solver = steel.solvers.SolverFeatherstone(model)
    state_in, state_out, control = model.state(), model.state(), model.control()
    args = {"state_in": state_in, "state_out": state_out, "control": control}
    args[which] = other.control() if which == "control" else other.state()
    before = [a.numpy().copy() for a in (state_in.joint_q, state_in.joint_qd, state_out.joint_q, state_out.body_q)]
    with pytest.raises(ValueError, match=which):
        solver.step(args["state_in"], args["state_out"], args["control"], None, DT)
    after = [a.numpy() for a in (state_in.joint_q, state_in.joint_qd, state_out.joint_q, state_out.body_q)]
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


def test_state_without_the_models_particles_is_refused():
    """A model with particles refuses a State whose particle arrays have another length."""
    b = pendulum_builder()
    b.add_particle(pos=(0.0, 0.0, 2.0), vel=(0.0, 0.0, 0.0), mass=0.1, radius=0.02)
    model = b.finalize(device="cpu")
    solver = steel.solvers.SolverFeatherstone(model)
    with pytest.raises(ValueError, match="particle_q"):
        solver.step(pendulum().state(), model.state(), None, None, DT)


def test_contacts_of_a_larger_model_do_not_read_past_the_shapes():
    """Contacts collided on a model with more shapes: indices beyond this model's shapes are skipped, no crash."""
    big = bench_scenes.build_tower(1, "cpu").model  # 24 boxes and a ground plane
    pipeline = newton.CollisionPipeline(big)
    contacts = pipeline.contacts()
    big_state = big.state()
    for _ in range(3):
        pipeline.collide(big_state, contacts)
    assert int(contacts.rigid_contact_count.numpy()[0]) > 0
    model = free_box(z=3.0)  # two shapes at most: most indices of the buffer are out of range
    state = model.state()
    run(steel.solvers.SolverFeatherstone(model), model, state, 5, DT, contacts=contacts)
    assert np.isfinite(state.joint_q.numpy()).all()


# -- Non-finite input: contained per world -------------------------------------------------------


def _ant_run(world_count: int, steps: int, poison=None):
    """nv_ant x ``world_count`` on the ground at dt = 1/240 s; ``poison(state, control)`` after step 10."""
    scene = bench_scenes.build_ant(world_count, "cpu")
    model = scene.model
    solver = steel.solvers.SolverFeatherstone(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    state, control = model.state(), model.control()
    for n in range(steps):
        if n == 10 and poison is not None:
            poison(model, state, control)
        pipeline.collide(state, contacts)
        solver.step(state, state, control, contacts, 1.0 / 240.0)
    return model, state, solver


def _world_slice(model: newton.Model, world: int, count: int):
    """Entries of ``world`` in an array of ``count`` entries split evenly over the replicated worlds."""
    per_world = count // model.world_count
    return slice(world * per_world, (world + 1) * per_world)


def _poison_joint_q(model, state, control):
    q = state.joint_q.numpy()
    q[_world_slice(model, 3, model.joint_coord_count)][8] = np.nan  # a hip angle of world 3
    state.joint_q.assign(q)


def _poison_joint_qd(model, state, control):
    qd = state.joint_qd.numpy()
    qd[_world_slice(model, 3, model.joint_dof_count)][2] = np.inf
    state.joint_qd.assign(qd)


def _poison_joint_f(model, state, control):
    f = control.joint_f.numpy()
    f[_world_slice(model, 3, model.joint_dof_count)][7] = np.nan
    control.joint_f.assign(f)


def _poison_quaternion(model, state, control):
    q = state.joint_q.numpy()
    q[_world_slice(model, 3, model.joint_coord_count)][3:7] = 0.0  # zero-length root quaternion
    state.joint_q.assign(q)


@pytest.mark.parametrize(
    "poison",
    [_poison_joint_q, _poison_joint_qd, _poison_joint_f, _poison_quaternion],
    ids=["nan_joint_q", "inf_joint_qd", "nan_joint_f", "zero_quaternion"],
)
def test_non_finite_input_of_one_world_stays_in_that_world(poison):
    """Bad input in world 3 of 8 ants on a shared ground: the other seven step bitwise as in a clean run.

    World 3 is flagged by invalid_worlds() and not stepped (its coordinates carried over as given); no
    contact computed from its bodies reaches any other body.
    """
    steps = 40
    model, clean, _ = _ant_run(8, steps)
    model, dirty, solver = _ant_run(8, steps, poison)
    assert solver.invalid_worlds() == [3]
    coords = model.joint_coord_count // 8
    q_clean, q_dirty = clean.joint_q.numpy().reshape(8, coords), dirty.joint_q.numpy().reshape(8, coords)
    others = [w for w in range(8) if w != 3]
    assert np.isfinite(q_dirty[others]).all()
    np.testing.assert_array_equal(q_dirty[others], q_clean[others])
    bodies = model.body_count // 8
    bq_clean, bq_dirty = clean.body_q.numpy().reshape(8, bodies, 7), dirty.body_q.numpy().reshape(8, bodies, 7)
    np.testing.assert_array_equal(bq_dirty[others], bq_clean[others])


def test_a_repaired_world_steps_again():
    """After the caller writes finite coordinates back, the flag clears and the world moves again."""
    model = pendulum(links=2)
    solver = steel.solvers.SolverFeatherstone(model)
    state = model.state()
    q = state.joint_q.numpy()
    q[0] = np.nan
    state.joint_q.assign(q)
    solver.step(state, state, None, None, DT)
    assert solver.invalid_worlds() == [int(model.articulation_world.numpy()[0])]  # -1: built outside any world
    assert np.isnan(state.joint_q.numpy()[0])
    state.joint_q.assign(np.array([0.3, 0.0], np.float32))
    run(solver, model, state, 10, DT)
    assert solver.invalid_worlds() == []
    assert np.isfinite(state.joint_q.numpy()).all() and abs(state.joint_q.numpy()[0] - 0.3) > 1.0e-6


# -- Quaternions -----------------------------------------------------------------------------------


def _ball_pendulum() -> newton.Model:
    b = newton.ModelBuilder()
    body = b.add_link(com=wp.vec3(0.0, 0.0, -0.5), mass=1.0, inertia=wp.mat33(np.eye(3) * 1.0e-2))
    j = b.add_joint_ball(-1, body, parent_xform=wp.transform((0.0, 0.0, 2.0), wp.quat_identity()))
    b.add_articulation([j])
    return b.finalize(device="cpu")


@pytest.mark.parametrize("kind", ["free", "ball"])
def test_non_unit_quaternions_are_normalized(kind):
    """A FREE or BALL quaternion scaled by 3 gives the trajectory of the unit one, and unit quaternions out.

    The kinematics and the integrator read quaternions normalized; 1e-6 covers float32 rounding of the scale.
    """
    model = free_box() if kind == "free" else _ball_pendulum()
    at = 3 if kind == "free" else 0
    rng = np.random.default_rng(1)
    unit = rng.normal(size=4)
    unit /= np.linalg.norm(unit)
    qd = (rng.normal(size=model.joint_dof_count) * 2.0).astype(np.float32)
    results = []
    for scale in (1.0, 3.0):
        state = model.state()
        q = model.joint_q.numpy()
        q[at : at + 4] = unit * scale
        state.joint_q.assign(q)
        state.joint_qd.assign(qd)
        run(steel.solvers.SolverFeatherstone(model), model, state, 50, DT)
        results.append((state.joint_q.numpy(), state.body_q.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], atol=1.0e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], atol=1.0e-6)
    assert np.linalg.norm(results[1][0][at : at + 4]) == pytest.approx(1.0, abs=1.0e-6)


# -- Model checks at construction ------------------------------------------------------------------


def test_inverted_joint_limits_are_refused_naming_the_joint():
    """lower > upper on a revolute joint raises ValueError at construction naming the joint and both values."""
    b = pendulum_builder(links=2)
    b.joint_label[1] = "elbow"
    b.joint_limit_lower[1], b.joint_limit_upper[1] = 0.5, -0.5
    with pytest.raises(ValueError, match=r"joint 1 \('elbow'\) DOF 0 has lower > upper"):
        steel.solvers.SolverFeatherstone(b.finalize(device="cpu"))


def test_nan_joint_limit_is_refused():
    """A NaN limit (which would silently disable the limit) raises ValueError naming the joint."""
    b = pendulum_builder(links=1)
    b.joint_limit_upper[0] = float("nan")
    with pytest.raises(ValueError, match="joint 0.*NaN limit"):
        steel.solvers.SolverFeatherstone(b.finalize(device="cpu"))


def _two_links(tip_mass: float, tip_inertia: float, mid_mass: float = 1.0) -> newton.ModelBuilder:
    """Two revolute links hanging from the world (axes y then x), the second labelled 'tip'."""
    b = newton.ModelBuilder()
    mid = b.add_link(com=wp.vec3(0.0, 0.0, -0.5), mass=mid_mass, inertia=wp.mat33(np.eye(3) * mid_mass * 1.0e-3))
    tip = b.add_link(mass=tip_mass, inertia=wp.mat33(np.eye(3) * tip_inertia), label="tip")
    tip_anchor = wp.transform((0.0, 0.0, -1.0), wp.quat_identity())
    j0 = b.add_joint_revolute(-1, mid, parent_xform=wp.transform((0.0, 0.0, 2.0), wp.quat_identity()), axis=(0, 1, 0))
    j1 = b.add_joint_revolute(mid, tip, parent_xform=tip_anchor, axis=(1, 0, 0))
    b.add_articulation([j0, j1])
    return b


def test_massless_leaf_link_is_refused_naming_the_body():
    """A revolute leaf with no mass, inertia or armature has no acceleration: ValueError naming joint and body."""
    with pytest.raises(ValueError, match=r"joint 1 .*DOF 0 has no inertia.*body 1 \('tip'\)"):
        steel.solvers.SolverFeatherstone(_two_links(0.0, 0.0).finalize(device="cpu"))


def test_free_body_without_mass_or_inertia_is_refused():
    """A FREE body of zero mass, or with mass but a zero inertia tensor written into the finalized model
    (finalize itself raises such tensors to 1e-6 kg·m²), has DOFs without inertia: ValueError naming the body."""
    b = newton.ModelBuilder()
    b.add_body(mass=0.0, inertia=wp.mat33(np.zeros((3, 3))), label="point")
    with pytest.raises(ValueError, match=r"DOF 0 has no inertia.*body 0 \('point'\)"):
        steel.solvers.SolverFeatherstone(b.finalize(device="cpu"))
    model = free_box()
    model.body_inertia.assign(np.zeros((1, 3, 3), np.float32))
    with pytest.raises(ValueError, match=r"DOF 3 has no inertia.*body 0"):
        steel.solvers.SolverFeatherstone(model)


def test_massless_link_carried_by_its_child_is_accepted():
    """A zero-mass, zero-inertia intermediate link whose child has mass is fine: every DOF has inertia."""
    b = _two_links(1.0, 1.0e-3, mid_mass=0.0)
    model = b.finalize(device="cpu")
    assert float(model.body_mass.numpy()[0]) == 0.0
    state = model.state()
    state.joint_q.assign(np.array([0.3, 0.2], np.float32))
    run(steel.solvers.SolverFeatherstone(model), model, state, 100, DT)
    assert np.isfinite(state.joint_q.numpy()).all() and abs(float(state.joint_q.numpy()[0]) - 0.3) > 1.0e-4


# -- Models without joints ---------------------------------------------------------------------------


@pytest.mark.parametrize("kinematic", [True, False], ids=["kinematic", "dynamic"])
def test_jointless_body_is_carried_over_with_zero_parent_force(kinematic):
    """A body with no joint at all (no articulation): construction and step work, its input pose and twist
    are published unchanged (its prescribed state), and body_parent_f reads 0."""
    b = newton.ModelBuilder()
    body = b.add_link(xform=wp.transform((0.0, 0.0, 1.0), wp.quat_identity()), mass=0.0 if kinematic else 1.0,
                      is_kinematic=kinematic)
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    model = b.finalize(device="cpu")
    assert model.joint_count == 0
    solver = steel.solvers.SolverFeatherstone(model)
    state_in, state_out = model.state(), model.state()
    pose = np.array([[0.1, 0.2, 1.0, 0.0, 0.0, 0.0, 1.0]], np.float32)
    twist = np.array([[1.0, 0.0, 0.0, 0.0, 0.0, 0.5]], np.float32)
    state_in.body_q.assign(pose)
    state_in.body_qd.assign(twist)
    obs = solver.observables({solver.ObservableKind.BODY_PARENT_F})
    solver.step(state_in, state_out, None, None, DT, observables=obs)
    np.testing.assert_array_equal(state_out.body_q.numpy(), pose)
    np.testing.assert_array_equal(state_out.body_qd.numpy(), twist)
    np.testing.assert_array_equal(obs.body_parent_f.numpy(), 0.0)
    assert solver.invalid_worlds() == []


def test_empty_model_steps():
    """A model with nothing in it constructs and steps."""
    model = newton.ModelBuilder().finalize(device="cpu")
    state = model.state()
    steel.solvers.SolverFeatherstone(model).step(state, state, None, None, DT)
