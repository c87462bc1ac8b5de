"""SolverSteel sleeping: the stay-awake rules and wake events of the joint rows and the contact producer.

Drive rows keep an articulation awake (spec E5); a world whose rows overflowed or whose contact
producer dropped contacts cannot sleep (E5); joint friction edits, an invalid prescribed velocity and
a non-finite solved state of an asleep articulation wake it (E4). Freeze comparisons are bitwise.
"""

import math

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

from .scenes import G, pendulum, single_box
from .test_sleeping import DT, QUIET, Sim, box_asleep_on_kinematic_slab, float32_sleep_step

STEPS = 40  # [steps] 0.4 s: more than six times the 6 steps the quiet time takes


@pytest.mark.parametrize("gain", ["joint_target_ke", "joint_target_kd"])
def test_drive_row_articulation_stays_awake(gain):
    """E5: with drive_mode='rows' a pendulum at rest with a drive gain never sleeps; without one it
    sleeps at the quiet time (the rule is the driven-articulation rule: drive rows read the same gains)."""
    assert Sim(pendulum(), drive_mode="rows").step_until_asleep() == float32_sleep_step(DT, QUIET)
    model = pendulum()
    getattr(model, gain).assign(np.array([10.0], np.float32))
    sim = Sim(model, drive_mode="rows")
    assert sim.step(STEPS).all()
    assert sim.solver.steel_data.sleep.articulation_timer.numpy()[0] == 0.0


@pytest.mark.filterwarnings("ignore:SolverSteel dropped contacts or constraint rows")
def test_world_with_overflowed_rows_cannot_sleep():
    """E5: a pendulum hanging at rest in a world whose rows overflow every step (an invalid joint
    friction written in place builds no row and flags the world) never sleeps; with a valid
    friction the same pendulum sleeps at the quiet time."""
    def sim(friction):
        model = pendulum()
        s = Sim(model, enable_joint_friction=True)
        model.joint_friction.assign(np.array([friction], np.float32))  # in place: read on the device every step
        return s

    assert sim(0.0).step_until_asleep() == float32_sleep_step(DT, QUIET)
    s = sim(math.nan)
    assert s.step(STEPS).all()
    assert s.solver.constraint_overflow.numpy()[0]
    assert s.solver.steel_data.sleep.articulation_timer.numpy()[0] == 0.0
    np.testing.assert_allclose(s.s0.joint_q.numpy(), 0.0, atol=1e-6)  # [rad] it did hang at rest


def test_dropped_contacts_cannot_authorize_sleep():
    """E5: two worlds, one box on the ground in each, and a contact buffer of 4 slots for 8 contacts:
    Newton's pipeline keeps counting past the capacity (rigid_contact_count 8 > 4), one box keeps its
    four contacts and rests, the other falls through. The resting box never sleeps while contacts are
    dropped; with a buffer of 8 it sleeps at the quiet time."""
    model = single_box(world_count=2)

    def sim(capacity):
        s = Sim(model)
        s.pipeline = newton.CollisionPipeline(model, rigid_contact_max=capacity)
        s.contacts = s.pipeline.contacts()
        return s

    assert sim(8).step_until_asleep() == float32_sleep_step(DT, QUIET)
    s = sim(4)
    assert s.step(STEPS).all()
    assert int(s.contacts.rigid_contact_count.numpy()[0]) > s.contacts.rigid_contact_max
    z = s.s0.body_q.numpy()[:, 2]
    resting = int(np.argmax(z))
    assert z[resting] == pytest.approx(0.1, abs=1e-3)  # [m] on its four contacts (half size 0.1 m)
    assert z[1 - resting] < 0.0  # [m] fell through: its contacts were the dropped ones
    assert s.solver.steel_data.sleep.articulation_timer.numpy()[resting] == 0.0


def test_contact_reduction_overflow_wakes_and_cannot_authorize_sleep():
    """E4/E5: the contact reduction's overflow flag (Newton raises it on the contact buffer when the
    reducer loses contacts) wakes an asleep box and keeps it awake while it is raised; lowered, the
    box sleeps again at the quiet time."""
    sim = Sim(single_box())
    sim.step_until_asleep()
    assert not sim.step().any()
    collide = sim.pipeline.collide

    def collide_losing_contacts(state, contacts):
        collide(state, contacts)
        contacts._reduction_overflow.fill_(1)  # as the reducer reports lost contacts

    sim.pipeline.collide = collide_losing_contacts
    assert sim.step().all()
    assert sim.step(STEPS).all()
    sim.pipeline.collide = collide
    assert sim.step_until_asleep() == float32_sleep_step(DT, QUIET)


def _friction_pendulum(friction, coefficient):
    """A 1 kg bob 0.5 m below a world pivot, held at 0.5 rad by joint friction alone: gravity's torque
    is 1 * G * 0.5 * sin(0.5) = 2.35 N·m, below friction 3 N·m or a load bound of about c * m * G."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    SolverSteel.register_custom_attributes(b)
    link = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-3), com=wp.vec3(0.0, 0.0, -0.5))
    joint = b.add_joint_revolute(-1, link, axis=(0, 1, 0), friction=friction,
                                 custom_attributes={"steel:joint_friction_load_coefficient": coefficient})
    b.add_articulation([joint])
    b.joint_q[0] = 0.5
    return b.finalize(device="cpu")


@pytest.mark.parametrize("array", ["joint_friction", "steel:joint_friction_load_coefficient"])
def test_joint_friction_edit_wakes(array):
    """E4: a pendulum asleep while joint friction holds it at 0.5 rad wakes on notify_model_changed
    after its friction (or the load coefficient of its bound) is set to zero, and swings down."""
    model = _friction_pendulum(3.0, 0.0) if array == "joint_friction" else _friction_pendulum(0.0, 1.0)
    sim = Sim(model, enable_joint_friction=True)
    sim.step_until_asleep()
    assert not sim.step(5).any()
    assert sim.s0.joint_q.numpy()[0] == np.float32(0.5)
    values = model.joint_friction if array == "joint_friction" else model.steel.joint_friction_load_coefficient
    values.assign(np.zeros(1, np.float32))
    sim.solver.notify_model_changed(newton.ModelFlags.JOINT_DOF_PROPERTIES)
    assert sim.step().all()
    sim.step(10)
    assert sim.s0.joint_q.numpy()[0] < 0.45  # [rad] swinging down (0.44 after 0.11 s)


@pytest.mark.parametrize("box_side", [0, 1])
def test_invalid_velocity_of_a_kinematic_support_wakes(box_side):
    """E4: a box asleep on a kinematic slab wakes in the step the slab's prescribed velocity is NaN;
    the box as contact shape 0 and as shape 1."""
    sim, box, slab = box_asleep_on_kinematic_slab(box_side)
    qd = sim.s0.joint_qd.numpy().copy()
    qd[6 * slab] = math.nan  # the slab's FREE joint, a prescribed DOF
    sim.s0.joint_qd.assign(qd)
    assert sim.step()[box]


def test_invalid_velocity_of_a_prescribed_dof_wakes():
    """E4: a pendulum hanging from a kinematic hinge link (a prescribed DOF of its own articulation)
    sleeps, and wakes in the step that DOF's velocity is NaN."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    hub = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-3), is_kinematic=True)
    bob = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-4), com=wp.vec3(0.0, 0.0, -0.5))
    hinge = builder.add_joint_revolute(-1, hub, parent_xform=wp.transform(wp.vec3(0.0, 0.0, 1.0),
                                                                          wp.quat_identity()), axis=(0.0, 0.0, 1.0))
    swing = builder.add_joint_revolute(hub, bob, axis=(0.0, 1.0, 0.0))
    builder.add_articulation([hinge, swing])
    sim = Sim(builder.finalize(device="cpu"))
    assert sim.step_until_asleep() == float32_sleep_step(DT, QUIET)
    qd = sim.s0.joint_qd.numpy().copy()
    qd[0] = math.nan
    sim.s0.joint_qd.assign(qd)
    assert sim.step().all()


def test_non_finite_trial_of_an_asleep_articulation_is_not_frozen_over():
    """E4: with sleep_skip_constraints=False an asleep box is solved every step; when its solved
    (trial) state is not finite it wakes and publishes it instead of the frozen state. The NaN is
    written into the solve's output, as a diverged solve would leave it."""
    sim = Sim(single_box(), sleep_skip_constraints=False)
    sim.step_until_asleep()
    frozen = sim.s0.body_q.numpy().copy()
    assert not sim.step().any()
    np.testing.assert_array_equal(sim.s0.body_q.numpy(), frozen)  # a finite trial is frozen over
    advance = sim.solver._advance

    def diverging(state_in, state_out, *args, **kwargs):
        advance(state_in, state_out, *args, **kwargs)
        state_out.body_q.fill_(wp.transform(wp.vec3(math.nan, 0.0, 0.0), wp.quat_identity()))

    sim.solver._advance = diverging
    awake = sim.step()
    assert awake.all()
    assert np.isnan(sim.s0.body_q.numpy()[0, 0])
    assert sim.solver.steel_data.sleep.articulation_asleep.numpy()[0] == 0
