"""Small scenes shared by the SolverFeatherstone tests (each a finalized CPU model)."""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

G = 9.81  # gravity magnitude of every scene here [m/s²]


def pendulum(length: float = 1.0, mass: float = 1.0, inertia: float = 1.0e-6, links: int = 1) -> newton.Model:
    """A chain of ``links`` revolute (axis y) point-like masses, each ``length`` below its pivot, from the world."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    parent, joints = -1, []
    for i in range(links):
        body = b.add_link(
            xform=wp.transform((0.0, 0.0, -length * i), wp.quat_identity()),
            com=wp.vec3(0.0, 0.0, -length),
            inertia=wp.mat33(np.eye(3) * inertia),
            mass=mass,
        )
        anchor = wp.transform((0.0, 0.0, 0.0 if parent < 0 else -length), wp.quat_identity())
        joints.append(b.add_joint_revolute(parent, body, parent_xform=anchor, axis=(0.0, 1.0, 0.0)))
        parent = body
    b.add_articulation(joints)
    return b.finalize(device="cpu")


def free_box(half=(0.1, 0.2, 0.3), z: float = 1.0, gravity: float = -G, density: float = 1000.0) -> newton.Model:
    """One free box (``add_body``: a FREE joint of its own) with half extents ``half`` [m] at height ``z``."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, gravity))
    body = b.add_body(xform=wp.transform((0.0, 0.0, z), wp.quat_identity()))
    b.add_shape_box(body, hx=half[0], hy=half[1], hz=half[2], cfg=newton.ModelBuilder.ShapeConfig(density=density))
    return b.finalize(device="cpu")


def run(solver, model: newton.Model, state, steps: int, dt: float, control=None, contacts=None, pipeline=None):
    """Step ``steps`` times in place (``state_in is state_out``) and return the state."""
    for _ in range(steps):
        if pipeline is not None:
            pipeline.collide(state, contacts)
        solver.step(state, state, control, contacts, dt)
    return state
