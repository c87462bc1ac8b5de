"""Small scenes shared by the SolverFeatherstone tests (each a finalized CPU model)."""

from __future__ import annotations

import numpy as np
import warp as wp

import newton
import newton.examples

G = 9.81  # gravity magnitude of every scene here [m/s²]


def pendulum(length: float = 1.0, mass: float = 1.0, inertia: float = 1.0e-6, links: int = 1) -> newton.Model:
    """A chain of ``links`` revolute (axis y) point-like masses, each ``length`` below its pivot, from the world."""
    return pendulum_builder(length, mass, inertia, links).finalize(device="cpu")


def pendulum_builder(
    length: float = 1.0, mass: float = 1.0, inertia: float = 1.0e-6, links: int = 1
) -> newton.ModelBuilder:
    """The builder of :func:`pendulum` (one articulation), before finalize."""
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
    return b


def interleaved_chains_and_humanoids(pairs: int = 2, links: int = 4) -> newton.Model:
    """``pairs`` times a ``links``-link hanging chain then an nv_humanoid, in one world: two articulation
    sizes (``links`` and 27 DOFs) interleaved in the model's articulation order."""
    chain = pendulum_builder(length=0.3, mass=0.5, inertia=1.0e-3, links=links)
    humanoid = newton.ModelBuilder()
    humanoid.add_mjcf(newton.examples.get_asset("nv_humanoid.xml"), ignore_names=["floor", "ground"])
    scene = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    for i in range(pairs):
        scene.add_builder(chain, xform=wp.transform((3.0 * i, 0.0, 2.0), wp.quat_identity()))
        scene.add_builder(humanoid, xform=wp.transform((3.0 * i, 2.0, 2.0), wp.quat_identity()))
    return scene.finalize(device="cpu")


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
