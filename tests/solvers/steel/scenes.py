"""Small scenes shared by the SolverSteel tests."""

from __future__ import annotations

import math

import numpy as np
import warp as wp

import newton
from steel.solvers import SolverSteel

G = 9.81


def single_box(*, z=0.1, mu=0.5, restitution=0.0, half=0.1, gravity=(0.0, 0.0, -G), world_count=1,
               attributes=None, sphere=False, device="cpu"):
    """A free box (or sphere) of half extent/radius ``half`` [m] above a ground plane."""
    robot = newton.ModelBuilder(gravity=gravity)
    if attributes is not None:
        SolverSteel.register_custom_attributes(robot)
    cfg = newton.ModelBuilder.ShapeConfig(mu=mu, restitution=restitution)
    body = robot.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, z), wp.quat_identity()),
                          custom_attributes=attributes)
    if sphere:
        robot.add_shape_sphere(body, radius=half, cfg=cfg)
    else:
        robot.add_shape_box(body, hx=half, hy=half, hz=half, cfg=cfg)
    if world_count == 1:
        robot.add_ground_plane(cfg=cfg)
        return robot.finalize(device=device)
    scene = newton.ModelBuilder(gravity=gravity)
    if attributes is not None:
        SolverSteel.register_custom_attributes(scene)
    scene.replicate(robot, world_count)
    scene.add_ground_plane(cfg=cfg)
    return scene.finalize(device=device)


def tilted_gravity(angle_deg: float):
    """Gravity of magnitude G tilted by ``angle_deg`` about y: a flat ground becomes an incline."""
    a = math.radians(angle_deg)
    return (G * math.sin(a), 0.0, -G * math.cos(a))


def run(model, solver, steps, dt, *, control=None, observables=None, record=None):
    """Step ``model`` with a default collision pipeline; ``record(state)`` is called after each step."""
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, control, contacts, dt, observables=observables)
        s0, s1 = s1, s0
        if record is not None:
            record(s0)
    return s0, contacts


def pendulum(length=0.5, mass=1.0, angle=0.0, *, limit=None, device="cpu"):
    """A point-like bob on a massless rod, revolute about y from a world pivot at z = 1 m."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    body = builder.add_link(mass=mass, inertia=wp.mat33(np.eye(3) * 1e-4), com=wp.vec3(0.0, 0.0, -length))
    kwargs = {}
    if limit is not None:
        kwargs = {"limit_lower": limit[0], "limit_upper": limit[1]}
    joint = builder.add_joint_revolute(-1, body, parent_xform=wp.transform(wp.vec3(0.0, 0.0, 1.0), wp.quat_identity()),
                                       axis=(0.0, 1.0, 0.0), **kwargs)
    builder.add_articulation([joint])
    builder.joint_q[0] = angle
    return builder.finalize(device=device)
