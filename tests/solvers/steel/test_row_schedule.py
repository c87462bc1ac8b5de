"""row_schedule: which rows have the last word, on a load two supports could carry.

A uniform rod of mass m and length L hinged at one end rests horizontal both on its joint limit and,
near its tip, on a static block: the gravity torque m g L / 2 about the hinge can be held by either,
so the split is the sweep's choice. "contact_then_internal" solves the contacts for every iteration
first: they stop the rod alone and the contact torque about the hinge is m g L / 2, the limit idle.
"phased" solves the internal rows (the limit) first in each iteration: the limit stops the rod and
the contacts, seeing it at rest, carry nothing.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

G = 9.81
DT = 1.0 / 240.0
L = 1.0  # [m] rod length
PIVOT_Z = 0.5  # [m]
HALF_Z = 0.02  # [m] rod half thickness


def _rod_on_block():
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.0, density=500.0)
    pivot = wp.transform(wp.vec3(0.0, 0.0, PIVOT_Z), wp.quat_identity())
    rod = builder.add_link(xform=pivot)
    builder.add_shape_box(rod, xform=wp.transform(wp.vec3(0.5 * L, 0.0, 0.0), wp.quat_identity()),
                          hx=0.5 * L, hy=0.05, hz=HALF_Z, cfg=cfg)
    # Gravity turns the rod to positive q (tip down); the upper limit 0 holds it horizontal.
    joint = builder.add_joint_revolute(-1, rod, parent_xform=pivot, axis=(0.0, 1.0, 0.0), limit_lower=-1.0,
                                       limit_upper=0.0)
    builder.add_articulation([joint])
    # The block's top face touches the rod's bottom face under its last 0.2 m.
    builder.add_shape_box(-1, xform=wp.transform(wp.vec3(L - 0.1, 0.0, PIVOT_Z - HALF_Z - 0.05), wp.quat_identity()),
                          hx=0.1, hy=0.1, hz=0.05, cfg=cfg)
    return builder.finalize(device="cpu")


def _contact_torque(schedule):
    """Torque [N·m] about the hinge of the contact forces on the rod after one step, and m g L / 2."""
    model = _rod_on_block()
    # The touching faces meet within float round-off (phi ~ 4e-6 m); without the speculative allowance
    # (-phi / dt, about 1 mm/s here) the contacts must stop the rod outright, as the limit does.
    solver = SolverSteel(model, enable_joint_limits=True, row_schedule=schedule, contact_speculative_scale=0.0)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    obs = solver.observables({"contact_f"}, contacts=contacts)
    s0, s1 = model.state(), model.state()
    pipeline.collide(s0, contacts)
    solver.step(s0, s1, None, contacts, DT, observables=obs)
    n = int(contacts.rigid_contact_count.numpy()[0])
    assert n >= 2
    force_z = obs.contact_f.numpy()[:n, 2]
    # Every contact pushes the same way; the rod's frame is the world's shifted to the hinge at q = 0 and
    # the block is static, so either point's x is the lever arm [m].
    x = contacts.rigid_contact_point0.numpy()[:n, 0]
    torque = abs(float(np.sum(force_z * x)))
    load = float(model.body_mass.numpy()[0]) * G * 0.5 * L
    return torque, load


def test_contact_then_internal_gives_the_contacts_the_whole_load():
    """The contacts, solved first to convergence, hold m g L / 2 within 1 % (the limit gets nothing left)."""
    torque, load = _contact_torque("contact_then_internal")
    assert torque == pytest.approx(load, rel=0.01)


def test_phased_gives_the_limit_the_whole_load():
    """The limit, solved first in every iteration, stops the rod; the contacts carry under 1 % of m g L / 2."""
    torque, load = _contact_torque("phased")
    assert torque < 0.01 * load


def test_unknown_schedule_raises():
    with pytest.raises(ValueError, match="row_schedule"):
        SolverSteel(_rod_on_block(), row_schedule="contacts_last")
