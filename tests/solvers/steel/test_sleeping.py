"""SolverSteel sleeping (enable_sleeping): options, rejections, fall-asleep timing, freeze, wake events.

Timing rule under test (measured on the reference): an island's quiet timer is float32 and adds
float32(dt) for each quiet step, counting the input state of the step; the island falls asleep in
the first step ``n`` with ``sum >= sleep_quiet_time`` and that step publishes its input pose with
zero velocity. Every freeze comparison is bitwise: a frozen state is a copy, so no tolerance applies.
"""

import math

import numpy as np
import pytest
import warp as wp

import newton
from steel.launches import recorded_launches
from steel.solvers import SolverSteel

from .scenes import G, pendulum, single_box

DT = 0.01  # [s]
QUIET = 0.05  # [s] short quiet time: 6 float32 steps of 0.01 s (5 give 0.049999997 s)


def float32_sleep_step(dt, quiet_time):
    """The first step whose float32 running sum of dt reaches the quiet time."""
    t, n = np.float32(0.0), 0
    while t < np.float32(quiet_time):
        t = np.float32(t + np.float32(dt))
        n += 1
    return n


class Sim:
    """A model, a sleeping solver, a default pipeline and the body_awake observable."""

    def __init__(self, model, **options):
        self.model = model
        options.setdefault("sleep_quiet_time", QUIET)
        self.solver = SolverSteel(model, enable_sleeping=True, **options)
        self.pipeline = newton.CollisionPipeline(model)
        self.contacts = self.pipeline.contacts()
        self.obs = self.solver.observables({SolverSteel.ObservableKind.BODY_AWAKE})
        self.s0, self.s1 = model.state(), model.state()
        self.control = model.control()

    def step(self, n=1, dt=DT):
        for _ in range(n):
            self.pipeline.collide(self.s0, self.contacts)
            self.solver.step(self.s0, self.s1, self.control, self.contacts, dt, observables=self.obs)
            self.s0, self.s1 = self.s1, self.s0
        return self.awake()

    def awake(self):
        return self.obs.body_awake.numpy().copy()

    def step_until_asleep(self, limit=400):
        for i in range(limit):
            if not self.step().any():
                return i + 1
        raise AssertionError("never fell asleep")


@pytest.mark.parametrize("name", ["sleep_linear_threshold", "sleep_angular_threshold", "sleep_quiet_time"])
@pytest.mark.parametrize("value", [-1.0, 0.0, math.nan, math.inf])
def test_sleep_thresholds_must_be_finite_and_positive(name, value):
    """E2: a non-positive or non-finite threshold or quiet time is a ValueError naming the option."""
    with pytest.raises(ValueError, match=name):
        SolverSteel(single_box(), enable_sleeping=True, **{name: value})


@pytest.mark.parametrize("option", [{"contact_warmstart": True}, {"velocity_iterations": 2}])
def test_sleeping_rejects_warm_start_and_velocity_iterations(option):
    """E6: sleeping with contact_warmstart or velocity sweeps is a ValueError naming the option."""
    with pytest.raises(ValueError, match=next(iter(option))):
        SolverSteel(single_box(), enable_sleeping=True, **option)


def test_sleeping_rejects_a_model_without_articulations():
    """E6: nothing could sleep in a model without articulations (ValueError)."""
    builder = newton.ModelBuilder()
    builder.add_ground_plane()
    with pytest.raises(ValueError, match="articulation"):
        SolverSteel(builder.finalize(device="cpu"), enable_sleeping=True)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("solve_mode", ["serial", "colored"])
def test_sleeping_rejects_the_serial_propagation_sweep(solve_mode):
    """E6: propagation with the serial sweep, and colored on the CPU (the same sweep), are NotImplementedError."""
    with pytest.raises(NotImplementedError, match="enable_sleeping"):
        SolverSteel(single_box(), enable_sleeping=True, solve_mode=solve_mode,
                    articulated_contact_response="propagation")


def test_body_awake_needs_sleeping():
    """E8: requesting body_awake without sleeping is a ValueError; supported_observables omits it."""
    solver = SolverSteel(single_box())
    assert "body_awake" not in solver.supported_observables
    with pytest.raises(ValueError, match="body_awake"):
        solver.observables({SolverSteel.ObservableKind.BODY_AWAKE})
    assert "body_awake" in SolverSteel(single_box(), enable_sleeping=True).supported_observables


@pytest.mark.parametrize(("dt", "quiet_time"), [(1.0 / 240.0, 0.5), (0.01, 0.5), (0.01, 0.055), (1.0 / 240.0, 0.1)])
def test_resting_box_falls_asleep_at_the_quiet_time_to_the_step(dt, quiet_time):
    """E1/E2: a box resting on the ground sleeps in the float32 quiet-time step (121, 51, 6, 24 as the reference)."""
    sim = Sim(single_box(), sleep_quiet_time=quiet_time)
    expected = float32_sleep_step(dt, quiet_time)
    for n in range(1, expected):
        assert sim.step(dt=dt).all(), f"asleep early, at step {n}"
    before = sim.s1.body_q.numpy().copy()  # the input of the fall-asleep step
    assert not sim.step(dt=dt).any()
    np.testing.assert_array_equal(sim.s0.body_q.numpy(), before)
    np.testing.assert_array_equal(sim.s0.body_qd.numpy(), 0.0)
    np.testing.assert_array_equal(sim.s0.joint_qd.numpy(), 0.0)


@pytest.mark.parametrize(("dof", "threshold"), [(0, 0.05), (5, 0.15)])
@pytest.mark.parametrize("factor", [0.7, 1.4])
def test_moving_box_sleeps_only_below_the_speed_thresholds(dof, threshold, factor):
    """E1/E2: a box on frictionless ground sliding along x (default sleep_linear_threshold 0.05 m/s) or
    spinning about z (sleep_angular_threshold 0.15 rad/s) at 0.7 or 1.4 times the threshold: below it
    the box sleeps at the float32 quiet-time step although it moves (the thresholds define "quiet");
    above it the box is awake after 30 steps (0.3 s, six quiet times)."""
    sim = Sim(single_box(mu=0.0))
    qd = sim.s0.joint_qd.numpy().copy()
    qd[dof] = factor * threshold  # the FREE joint's linear x [m/s] or angular z [rad/s]
    sim.s0.joint_qd.assign(qd)
    if factor < 1.0:
        assert sim.step_until_asleep() == float32_sleep_step(DT, QUIET)
    else:
        assert sim.step(30).all()
        assert abs(sim.s0.joint_qd.numpy()[dof]) > threshold  # still moving above it (friction 0)


@pytest.mark.parametrize(("dt", "quiet_time"), [(1.0 / 16.0, 0.5), (0.125, 0.5)])
def test_quiet_time_reached_exactly_sleeps_in_that_step(dt, quiet_time):
    """E2: with dt = 1/16 s (1/8 s) the float32 timer reaches 0.5 s exactly, in step 8 (4): the box sleeps in
    that step (the timer compares with >=), not one later."""
    sim = Sim(single_box(), sleep_quiet_time=quiet_time)
    expected = float32_sleep_step(dt, quiet_time)
    assert np.float32(expected * np.float32(dt)) == np.float32(quiet_time)  # lands exactly
    for n in range(1, expected):
        assert sim.step(dt=dt).all(), f"asleep early, at step {n}"
    assert not sim.step(dt=dt).any()


def test_asleep_body_q_is_bitwise_constant():
    """E1: while asleep the published body_q and joint_q do not change by a bit (100 steps)."""
    sim = Sim(single_box())
    sim.step_until_asleep()
    body_q, joint_q = sim.s0.body_q.numpy().copy(), sim.s0.joint_q.numpy().copy()
    for _ in range(100):
        assert not sim.step().any()
        np.testing.assert_array_equal(sim.s0.body_q.numpy(), body_q)
        np.testing.assert_array_equal(sim.s0.joint_q.numpy(), joint_q)


def test_free_flight_never_sleeps():
    """E1: an unsupported body at rest (no gravity, above the ground) stays awake."""
    sim = Sim(single_box(z=1.0, gravity=(0.0, 0.0, 0.0)))
    assert sim.step(50).all()


def test_skip_constraints_false_publishes_the_same_trajectory():
    """E3: sleep_skip_constraints True and False give bitwise equal states through sleep and a wake
    (contacts of asleep islands keep their friction history record in both)."""
    runs = []
    for skip in (True, False):
        sim = Sim(single_box(z=0.15), sleep_skip_constraints=skip)
        poses = []
        for i in range(60):
            if i == 30:
                sim.s0.body_f.assign(np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 5.0]], np.float32))
            if i == 31:
                sim.s0.body_f.zero_()
            sim.step()
            poses.append(sim.s0.body_q.numpy().copy())
        runs.append(np.array(poses))
    np.testing.assert_array_equal(runs[0], runs[1])


# -- wake events: each its own test ----------------------------------------------------------------


@pytest.fixture
def asleep_box():
    sim = Sim(single_box())
    sim.step_until_asleep()
    assert not sim.step().any()
    return sim


@pytest.mark.parametrize("value", [1e-3, math.nan])
@pytest.mark.parametrize("component", [0, 5])
def test_body_f_wakes(asleep_box, value, component):
    """E4: a nonzero or non-finite State.body_f (a force along x or a torque about z) on an asleep body
    wakes it in that step."""
    f = np.zeros((1, 6), np.float32)
    f[0, component] = value
    asleep_box.s0.body_f.assign(f)
    assert asleep_box.step().all()


def test_joint_f_wakes(asleep_box):
    """E4: a nonzero Control.joint_f on an asleep articulation wakes it."""
    asleep_box.control.joint_f.assign(np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1e-3], np.float32))
    assert asleep_box.step().all()


@pytest.mark.parametrize("array", ["joint_q", "joint_qd", "body_q"])
def test_written_state_wakes(asleep_box, array):
    """E4: a user write to joint_q, joint_qd or body_q of an asleep articulation wakes it."""
    values = getattr(asleep_box.s0, array).numpy().copy()
    values.reshape(-1)[0] += 1e-4
    getattr(asleep_box.s0, array).assign(values)
    assert asleep_box.step().all()


def test_gravity_change_wakes(asleep_box):
    """E4: a changed Model.gravity wakes the islands of its world."""
    asleep_box.model.set_gravity((0.0, 0.0, -2.0 * G))
    assert asleep_box.step().all()


def test_reset_wakes(asleep_box):
    """E4/E10: reset of the world wakes it."""
    asleep_box.solver.reset(asleep_box.s0)
    assert asleep_box.step().all()


def test_notify_model_changed_wakes(asleep_box):
    """E4: notify_model_changed after a change of the box's mass wakes it."""
    asleep_box.model.body_mass.assign(np.array([2.0], np.float32))
    asleep_box.solver.notify_model_changed(newton.ModelFlags.BODY_PROPERTIES)
    assert asleep_box.step().all()


def two_boxes():
    """Two boxes resting 1 m apart: two islands of one world (articulations 0 and 1)."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    for x in (0.0, 1.0):
        b = builder.add_body(xform=wp.transform(wp.vec3(x, 0.0, 0.1), wp.quat_identity()))
        builder.add_shape_box(b, hx=0.1, hy=0.1, hz=0.1)
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


@pytest.mark.parametrize("array", ["joint_q", "joint_qd", "body_q"])
def test_written_state_wakes_only_the_articulation_written(array):
    """E4: a write to one articulation's joint_q, joint_qd or body_q wakes its island only."""
    sim = Sim(two_boxes())
    sim.step_until_asleep()
    values = getattr(sim.s0, array).numpy().copy()
    values.reshape(len(values), -1)[1 if array == "body_q" else 7 if array == "joint_q" else 6] += 1e-4
    getattr(sim.s0, array).assign(values)
    assert sim.step().tolist() == [False, True]


def test_wake_crosses_last_steps_island_edges():
    """E4: two boxes resting side by side, touching (one island), sleep; box 0 is then moved 1 m away
    (a written joint_q). Box 1 keeps its ground support and no contact reaches it any more, yet it
    wakes in that step through last step's island edge; it sleeps again after the quiet time."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    for x in (0.0, 0.2):
        b = builder.add_body(xform=wp.transform(wp.vec3(x, 0.0, 0.1), wp.quat_identity()))
        builder.add_shape_box(b, hx=0.1, hy=0.1, hz=0.1)
    builder.add_ground_plane()
    sim = Sim(builder.finalize(device="cpu"))
    sim.step()
    labels = sim.solver.steel_data.sleep.islands.articulation_label.numpy()
    assert labels[0] == labels[1], "the touching boxes should form one island"
    sim.step_until_asleep()
    q = sim.s0.joint_q.numpy().copy()
    q[0] -= 1.0  # box 0: 1 m along -x, body_q too, so collision sees it there
    sim.s0.joint_q.assign(q)
    newton.eval_fk(sim.model, sim.s0.joint_q, sim.s0.joint_qd, sim.s0)
    assert sim.step().tolist() == [True, True]
    assert sim.step_until_asleep() == float32_sleep_step(DT, QUIET)


@pytest.mark.parametrize("body", [0, 1])
def test_body_f_wakes_only_the_body_it_pushes(body):
    """E4: body_f on one body wakes its island; the other island sleeps on."""
    sim = Sim(two_boxes())
    sim.step_until_asleep()
    f = np.zeros((2, 6), np.float32)
    f[body, 0] = 1e-3
    sim.s0.body_f.assign(f)
    assert sim.step().tolist() == [body == 0, body == 1]


def _contact_orders(sim, shape, other):
    """The sides (0, 1) ``shape`` takes in this step's rigid contacts with ``other``."""
    n = int(sim.contacts.rigid_contact_count.numpy()[0])
    s0, s1 = sim.contacts.rigid_contact_shape0.numpy()[:n], sim.contacts.rigid_contact_shape1.numpy()[:n]
    pairs = set(zip(s0.tolist(), s1.tolist()))
    return {side for side, pair in ((0, (shape, other)), (1, (other, shape))) if pair in pairs}


@pytest.mark.parametrize("box_side", [0, 1])
def test_moving_kinematic_support_wakes_what_rests_on_it(box_side):
    """E4: a box asleep on a kinematic slab at rest wakes in the step the slab starts to move
    (0.5 m/s along x) and rides along; a box resting on the ground beside it sleeps on. With the box
    as contact shape 0 (built before the slab) and as shape 1 (after it)."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=1.0)

    def add_box():
        box = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.2), wp.quat_identity()))
        return box, builder.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)

    if box_side == 0:
        box, box_shape = add_box()
    slab = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.05), wp.quat_identity()), is_kinematic=True)
    slab_shape = builder.add_shape_box(slab, hx=0.5, hy=0.5, hz=0.05, cfg=cfg)
    if box_side == 1:
        box, box_shape = add_box()
    other = builder.add_body(xform=wp.transform(wp.vec3(2.0, 0.0, 0.1), wp.quat_identity()))
    builder.add_shape_box(other, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    sim = Sim(builder.finalize(device="cpu"))
    for _ in range(60):
        if not sim.step()[[box, other]].any():
            break
    assert not sim.step()[[box, other]].any()
    assert _contact_orders(sim, box_shape, slab_shape) == {box_side}  # the order under test
    x0 = sim.s0.body_q.numpy()[box, 0]
    qd = sim.s0.joint_qd.numpy().copy()
    qd[6 * slab] = 0.5  # the slab's FREE joint: linear x [m/s]
    sim.s0.joint_qd.assign(qd)
    assert sim.step()[box]
    awake = sim.step(30)  # 0.3 s
    assert awake[box] and not awake[other]
    # It rides along: at the slab's speed, behind the slab's 0.155 m [m] by the slip while friction
    # (mu g = 9.81 m/s^2) accelerated it, v^2 / (2 mu g) = 12.7 mm; 5 mm for the discrete start.
    assert sim.s0.body_qd.numpy()[box, 0] == pytest.approx(0.5, abs=0.01)
    assert sim.s0.body_q.numpy()[box, 0] - x0 == pytest.approx(0.5 * 0.31 - 0.25 / (2 * G), abs=0.005)


def box_asleep_on_kinematic_slab(box_side=1):
    """A box asleep on a kinematic slab at rest 0.5 m above the ground: ``(sim, box, slab)``; the box is
    contact shape ``box_side`` of their contacts (built before the slab for 0, after it for 1)."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))

    def add_box():
        box = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.7), wp.quat_identity()))
        return box, builder.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1)

    if box_side == 0:
        box, box_shape = add_box()
    slab = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.55), wp.quat_identity()), is_kinematic=True)
    slab_shape = builder.add_shape_box(slab, hx=0.5, hy=0.5, hz=0.05)
    if box_side == 1:
        box, box_shape = add_box()
    builder.add_ground_plane()
    sim = Sim(builder.finalize(device="cpu"))
    for _ in range(60):
        if not sim.step()[box]:
            break
    assert not sim.step()[box]
    assert _contact_orders(sim, box_shape, slab_shape) == {box_side}  # the order under test
    return sim, box, slab


@pytest.mark.parametrize("box_side", [0, 1])
def test_lost_support_wakes(box_side):
    """E4: a box asleep on a kinematic slab at rest wakes in the step the slab is moved away from
    under it (a teleport: joint_q and body_q written, joint_qd still zero, so the box loses its
    only support rather than touching a moving body); the box as contact shape 0 and as shape 1."""
    sim, box, slab = box_asleep_on_kinematic_slab(box_side)
    q = sim.s0.joint_q.numpy().copy()
    q[7 * slab] += 5.0  # the slab's FREE joint: 5 m along x
    sim.s0.joint_q.assign(q)
    newton.eval_fk(sim.model, sim.s0.joint_q, sim.s0.joint_qd, sim.s0)
    assert sim.step()[box]
    assert not sim.solver.steel_data.sleep.islands.articulation_supported.numpy()[box]


@pytest.mark.filterwarnings("ignore:SolverSteel dropped contacts or constraint rows")
def test_lost_row_capacity_wakes():
    """E4: a box asleep alone on the ground wakes when its world drops rows: two more boxes land
    1 m to either side and the world's free-body rows, sized to the resting box's own, overflow."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    for x, z in [(0.0, 0.1), (-1.0, 0.5), (1.0, 0.5)]:
        b = builder.add_body(xform=wp.transform(wp.vec3(x, 0.0, z), wp.quat_identity()))
        builder.add_shape_box(b, hx=0.1, hy=0.1, hz=0.1)
    builder.add_ground_plane()
    model = builder.finalize(device="cpu")
    probe = Sim(model)
    probe.step()
    resting_rows = int(probe.solver.steel_data.rows.world_row_count.numpy()[0, 1])  # box 0's; the others are in the air
    assert resting_rows > 0
    sim = Sim(model, free_body_constraint_max=resting_rows)
    woke = None
    for i in range(60):
        awake = sim.step()
        if i > 2 and not awake[0] and woke is None:
            woke = False  # box 0 fell asleep while the others fall
        if woke is False and awake[0]:
            woke = True
            break
    assert woke, "box 0 did not fall asleep and wake"
    assert sim.solver.constraint_overflow.numpy()[0]


@pytest.mark.parametrize("box_first", [True, False])
def test_moving_surface_wakes_what_rests_on_it(box_first):
    """E4: a box asleep on a conveyor mesh at rest wakes in the step its surface starts moving (1 m/s),
    built before the mesh and after it. Newton's pipeline makes the mesh contact shape 0 either way
    (checked), so the other order does not occur with a moving surface."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    vertices = np.array([[-5.0, -1.0, 0.0], [5.0, -1.0, 0.0], [5.0, 1.0, 0.0], [-5.0, 1.0, 0.0]], dtype=np.float32)
    mesh = newton.Mesh(vertices, np.array([0, 1, 2, 0, 2, 3], dtype=np.int32), enable_surface_velocity=True)

    def add_box():
        box = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.1), wp.quat_identity()))
        return builder.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1)

    box_shape = add_box() if box_first else None
    mesh_shape = builder.add_shape_mesh(-1, mesh=mesh)
    box_shape = box_shape if box_first else add_box()
    model = builder.finalize(device="cpu")
    mesh.mesh.velocities.zero_()
    sim = Sim(model)
    sim.step_until_asleep()
    assert not sim.step().any()
    assert _contact_orders(sim, box_shape, mesh_shape) == {1}
    mesh.mesh.velocities.assign(np.tile(np.array([1.0, 0.0, 0.0], dtype=np.float32), (4, 1)))
    assert sim.step().all()


@pytest.mark.parametrize("skip", [True, False])
def test_body_parent_f_of_an_asleep_body_keeps_its_last_awake_value(skip):
    """E7: body_parent_f of a hanging pendulum keeps, bit for bit, the value of its last awake step
    while it sleeps (with its rows skipped or solved)."""
    model = pendulum()
    solver = SolverSteel(model, enable_sleeping=True, sleep_quiet_time=QUIET, sleep_skip_constraints=skip)
    obs = solver.observables({SolverSteel.ObservableKind.BODY_AWAKE, SolverSteel.ObservableKind.BODY_PARENT_F})
    s0, s1, control = model.state(), model.state(), model.control()
    last_awake = None
    for _ in range(20):
        solver.step(s0, s1, control, None, DT, observables=obs)
        s0, s1 = s1, s0
        if obs.body_awake.numpy()[0]:
            last_awake = obs.body_parent_f.numpy().copy()
        else:
            np.testing.assert_array_equal(obs.body_parent_f.numpy(), last_awake)
    assert not obs.body_awake.numpy()[0]
    assert last_awake[0, 2] == pytest.approx(G, rel=1e-3)  # [N] the pivot holds the 1 kg bob up


def test_masked_reset_wakes_only_the_selected_world():
    """E10: a masked reset wakes the selected world; the other stays asleep."""
    sim = Sim(single_box(world_count=2))
    sim.step_until_asleep()
    sim.solver.reset(sim.s0, world_mask=wp.array([False, True, False], dtype=wp.bool))
    assert sim.step().tolist() == [False, True]


def two_towers_and_a_block():
    """Two 2-box towers 2 m apart (bodies 0-1 and 2-3) and a block resting 1 m to the side (body 4)."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.5)
    h = 0.1
    for x, z in [(0.0, h), (0.0, 3 * h), (2.0, h), (2.0, 3 * h), (-1.0, h)]:
        b = builder.add_body(xform=wp.transform(wp.vec3(x, 0.0, z), wp.quat_identity()))
        builder.add_shape_box(b, hx=h, hy=h, hz=h, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    return builder.finalize(device="cpu")


def throw_block(sim):
    """Throw the block (articulation 4; FREE joint_qd: linear then angular) at tower 0's bottom box:
    4 m/s along x, 1 m/s up, so it reaches x = -0.2 m after 0.2 s at z = 0.104 m, far below tower 1."""
    qd = sim.s0.joint_qd.numpy().copy()
    qd[24:30] = [4.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    sim.s0.joint_qd.assign(qd)


def test_thrown_block_wakes_only_the_tower_it_hits():
    """E4: contact with a moving body wakes that island and no other: two 2-box towers 2 m apart and
    a block resting 1 m to the side all sleep; the block, thrown at tower 0, wakes tower 0 only."""
    sim = Sim(two_towers_and_a_block())
    sim.step_until_asleep()
    assert not sim.step(5).any()
    throw_block(sim)
    woke_tower0 = False
    for _ in range(100):
        awake = sim.step()
        assert not awake[2:4].any(), "tower 1 woke"
        woke_tower0 |= bool(awake[0:2].all())
    assert woke_tower0


def test_partly_awake_world_skips_the_asleep_islands_and_matches_solving_them():
    """E3 in a partly awake world: while the thrown block and tower 0 move, the asleep tower 1's
    contacts get no rows (skipped), and the published trajectory and awake flags equal, bit for
    bit, those of sleep_skip_constraints=False, which solves every row and only freezes the output."""
    runs = []
    for skip in (True, False):
        sim = Sim(two_towers_and_a_block(), sleep_skip_constraints=skip)
        sim.step_until_asleep()
        throw_block(sim)
        poses, flags, skipped = [], [], 0
        for _ in range(60):
            awake = sim.step()
            poses.append(sim.s0.body_q.numpy().copy())
            flags.append(awake)
            if skip and awake[4] and not awake[2:4].any():
                count = int(sim.contacts.rigid_contact_count.numpy()[0])
                bodies = sim.model.shape_body.numpy()[sim.contacts.rigid_contact_shape0.numpy()[:count]]
                bodies1 = sim.model.shape_body.numpy()[sim.contacts.rigid_contact_shape1.numpy()[:count]]
                rows = sim.solver.steel_data.contact_slots.row.numpy()[:count]
                tower1 = np.isin(bodies, [2, 3]) | np.isin(bodies1, [2, 3])
                assert tower1.any() and (rows[tower1] == -1).all(), "an asleep contact got rows"
                assert (rows[~tower1 & ((bodies >= 0) | (bodies1 >= 0))] >= 0).any()
                skipped += 1
        runs.append((np.array(poses), np.array(flags)))
        if skip:
            assert skipped > 0
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][1][:, 0:2].any() and not runs[0][1][:, 2:4].any()  # tower 0 woke, tower 1 slept on


# -- stay awake ----------------------------------------------------------------------------------------


def test_hanging_pendulum_sleeps():
    """E1: a fixed-base pendulum hanging at rest is supported by its welded root and sleeps."""
    sim = Sim(pendulum())
    assert sim.step_until_asleep() == float32_sleep_step(DT, QUIET)


@pytest.mark.parametrize("gain", ["joint_target_ke", "joint_target_kd", "joint_stiffness"])
def test_driven_or_sprung_articulation_stays_awake(gain):
    """E5: an articulation with a drive gain or a passive spring never sleeps (the same pendulum at rest)."""
    model = pendulum()
    getattr(model, gain).assign(np.array([10.0], np.float32))
    sim = Sim(model)
    assert sim.step(50).all()


def test_mimic_and_loop_closure_articulations_stay_awake():
    """E5: an articulation bound by a mimic row (joint-owned or a legacy constraint) or owning a
    loop-closing joint never sleeps, at rest with no load (hinges about the gravity axis, whose
    mimic relation holds at q = 0; a four-bar without gravity); the hinges without a mimic sleep."""
    from .test_loop_closures import _four_bar
    from .test_mimic import _two_hinges

    def sleeps(model):
        sim = Sim(model)
        return not sim.step(20).all()

    assert sleeps(_two_hinges(owned=None))
    assert not sleeps(_two_hinges(owned=(0.0, 2.0)))
    assert not sleeps(_two_hinges(owned=None, legacy=(0.0, 2.0)))
    assert not sleeps(_four_bar()[0])


# -- islands and the cost of an all-asleep step -----------------------------------------------------------


def _host_islands(solver, contacts):
    """Labels (smallest member index) and support per articulation from a union-find over ``contacts``."""
    isl, sleep = solver.steel_data.sleep.islands, solver.steel_data.sleep
    n = sleep.articulation_count
    shape_body = solver.model.shape_body.numpy()
    body_art = sleep.body_articulation.numpy()
    responds = solver.steel_model.tables.body_responds_np
    parent = list(range(n))

    def root(a):
        while parent[a] != a:
            a = parent[a]
        return a

    supported = isl.articulation_fixed_base.numpy()[:n].astype(bool)
    count = int(contacts.rigid_contact_count.numpy()[0])
    for s0, s1 in zip(contacts.rigid_contact_shape0.numpy()[:count], contacts.rigid_contact_shape1.numpy()[:count]):
        ends = []
        for s in (s0, s1):
            b = shape_body[s] if s >= 0 else -1
            ends.append(int(body_art[b]) if b >= 0 and responds[b] else -1)
        if ends[0] >= 0 and ends[1] >= 0:
            r0, r1 = root(ends[0]), root(ends[1])
            parent[max(r0, r1)] = min(r0, r1)
        elif max(ends) >= 0:
            supported[max(ends)] = True
    labels = np.array([root(a) for a in range(n)])
    for r in set(labels):
        supported[labels == r] = supported[labels == r].any()
    return labels, supported


def test_islands_match_a_union_find_of_the_contacts():
    """Labels are each island's smallest articulation index and support is shared across an island,
    whatever the index order along a stack: a 6-box stack added in shuffled order, a touching pair
    floating above the ground (unsupported) and a lone box, in 2 worlds."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.5)
    h = 0.1
    world = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    places = [(0.0, (2 * k + 1) * h) for k in (3, 0, 5, 1, 4, 2)] + [(2.0, 1.0), (2.0, 1.0 + 2 * h), (-2.0, h)]
    for x, z in places:
        b = world.add_body(xform=wp.transform(wp.vec3(x, 0.0, z), wp.quat_identity()))
        world.add_shape_box(b, hx=h, hy=h, hz=h, cfg=cfg)
    builder.replicate(world, 2)
    builder.add_ground_plane(cfg=cfg)
    sim = Sim(builder.finalize(device="cpu"))
    sim.step()
    labels = sim.solver.steel_data.sleep.islands.articulation_label.numpy()
    supported = sim.solver.steel_data.sleep.islands.articulation_supported.numpy().astype(bool)
    want_labels, want_supported = _host_islands(sim.solver, sim.contacts)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(supported, want_supported)
    # The scene exercises what it claims: a 6-member island and an unsupported one in each world.
    sizes = np.bincount(want_labels)
    assert (sizes == 6).sum() == 2 and (~want_supported).sum() == 4


def test_all_asleep_step_skips_kinematics_and_the_solve(asleep_box):
    """A step with every island asleep launches only sleeping's own kernels, at most five (wake
    checks, two island passes, the awake collection, the publish): no kinematics, no solve."""
    asleep_box.pipeline.collide(asleep_box.s0, asleep_box.contacts)
    with recorded_launches() as kernels:
        asleep_box.solver.step(asleep_box.s0, asleep_box.s1, asleep_box.control, asleep_box.contacts, DT)
    launched = [(k.module.name, k.key) for k in kernels]
    modules = {m for m, _ in launched}
    assert modules <= {"steel.solvers.steel.sleeping.stages", "steel.solvers.steel.sleeping.islands"}, launched
    assert len(launched) <= 5, launched
    np.testing.assert_array_equal(asleep_box.s1.body_q.numpy(), asleep_box.s0.body_q.numpy())


def test_tutorial_scene_sleeps_at_the_same_step_in_the_same_state_run_to_run():
    """Determinism: the towers_sleeping tutorial scene with CollisionPipeline(deterministic=True),
    run twice until every body sleeps, falls fully asleep at the same step (about 1.2 s) and ends
    in bitwise the same state (SHA-256 of body_q, joint_q and the asleep flags)."""
    import hashlib

    from steel.examples.towers_sleeping import Sim as Tutorial

    outcomes = []
    for _ in range(2):
        sim = Tutorial("cpu", deterministic=True)
        while sim.awake().any() or sim.steps == 0:
            sim.step()
            assert sim.steps < 1200, "not asleep after 2 s"
        digest = hashlib.sha256()
        for array in (sim.state_0.body_q, sim.state_0.joint_q, sim.solver.steel_data.sleep.articulation_asleep):
            digest.update(array.numpy().tobytes())
        outcomes.append((sim.steps, digest.hexdigest()))
    assert outcomes[0] == outcomes[1]
    assert 600 <= outcomes[0][0] <= 900  # [steps of 1/600 s] the towers land, settle, then stay quiet 0.5 s


# -- notify_model_changed: arrays are diffed ----------------------------------------------------------


@pytest.mark.parametrize(("flag", "array", "index", "value"), [
    ("BODY_INERTIAL_PROPERTIES", "body_mass", 1, 2.0),
    ("JOINT_DOF_PROPERTIES", "joint_armature", 6, 0.01),
    ("SHAPE_PROPERTIES", "shape_material_mu", 1, 0.9),
])
def test_notify_model_changed_wakes_only_the_changed_island(flag, array, index, value):
    """E4: notify_model_changed wakes the island whose body, DOF or shape array changed (here box 1's),
    not the other; the same notify without a change wakes nothing."""
    sim = Sim(two_boxes())
    sim.step_until_asleep()
    flags = getattr(newton.ModelFlags, flag)
    sim.solver.notify_model_changed(flags)
    assert not sim.step().any()
    values = getattr(sim.model, array).numpy().copy()
    values[index] = value
    getattr(sim.model, array).assign(values)
    sim.solver.notify_model_changed(flags)
    assert sim.step().tolist() == [False, True]


@pytest.mark.parametrize("change", ["ground friction", "MODEL_PROPERTIES"])
def test_notify_model_changed_of_static_geometry_or_other_flags_wakes_every_island(change):
    """E4: a changed static shape (the ground's mu: what rests on it is not tracked) or a flag
    without diffed arrays wakes every island."""
    sim = Sim(two_boxes())
    sim.step_until_asleep()
    if change == "ground friction":
        mu = sim.model.shape_material_mu.numpy().copy()
        mu[2] = 0.1  # shape 2: the ground plane
        sim.model.shape_material_mu.assign(mu)
        sim.solver.notify_model_changed(newton.ModelFlags.SHAPE_PROPERTIES)
    else:
        sim.solver.notify_model_changed(newton.ModelFlags.MODEL_PROPERTIES)
    assert sim.step().all()


def test_notify_model_changed_rejects_a_resized_array():
    """E4: a replaced array with a different entity count is a ValueError naming it, nothing woken."""
    sim = Sim(two_boxes())
    sim.step_until_asleep()
    sim.model.body_mass = wp.zeros(3, dtype=float, device="cpu")
    with pytest.raises(ValueError, match="body_mass"):
        sim.solver.notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
    assert sim.solver.steel_data.sleep.articulation_asleep.numpy().tolist() == [1, 1]
