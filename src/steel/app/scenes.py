"""The shipped scenes: the four box towers, nv_humanoid, nv_ant, a 10-link chain and the cartpole.

Every scene is one robot (or stack of boxes) built once and replicated ``world_count`` times with
``ModelBuilder.replicate``, so world ``w`` holds bodies ``w * bodies_per_world + k``. They are
what ``make demo``, ``steel run`` and the benchmarks step; ``benchmarks/scenes.py`` adds their
MuJoCo twins and the sanity outcomes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import warp as wp

import newton
import newton.examples

from .catalog import DT, SCENES, VBD_SCENES  # noqa: E402  (the time step and names live where --help can read them)

# Tower layout (from the issue): boxes per tower, base heights [m], spacing [m], box half extent [m].
TOWER_HEIGHTS = (6, 7, 5, 6)
TOWER_BASES = (0.0, 0.5, 1.0, 1.5)
TOWER_SPACING = 1.2
BOX_HALF = 0.1
TOWER_MU = 0.7

# Chain: links of length [m], half thickness [m], pivot height [m].
CHAIN_LINKS = 10
CHAIN_LINK_LEN = 0.1
CHAIN_HALF_THICK = 0.01
CHAIN_PIVOT_Z = 1.0

HUMANOID_Z = 1.5  # start height [m] of the humanoid torso (it drops onto the ground, as in Newton's examples)
CARTPOLE_Q0 = (0.0, 0.1, -0.05)  # cart [m], pole1 [rad], pole2 [rad]: off the unstable upright equilibrium


@dataclass
class Scene:
    """A replicated Newton model plus what the sanity check watches.

    Attributes:
        name: scene name (one of :data:`SCENES`).
        model: the finalized Newton model.
        world_count: number of replicated worlds.
        dt: time step [s].
        bodies_per_world: Newton bodies in one world.
        watched: local (per-world) Newton body indices the sanity outcome uses.
        metric: ``"drift"``, ``"torso"``, ``"tip"``, ``"stretch"`` or ``"none"``.
        tip_offset: tip point in the watched body's frame [m] (``"tip"`` only).
    """

    name: str
    model: newton.Model
    world_count: int
    dt: float
    bodies_per_world: int
    watched: list[int] = field(default_factory=list)
    metric: str = "none"
    tip_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def watched_global(self) -> np.ndarray:
        """Global Newton body indices of the watched bodies, shape ``(world_count, len(watched))``."""
        w = np.arange(self.world_count)[:, None] * self.bodies_per_world
        return w + np.asarray(self.watched, dtype=np.int64)[None, :]


# ----------------------------------------------------------------------------------------------
# Newton scenes
# ----------------------------------------------------------------------------------------------


def _replicated(robot: newton.ModelBuilder, world_count: int, device: str, ground, ground_cfg=None,
                color: bool = False) -> newton.Model:
    """``world_count`` copies of ``robot`` (one world each), plus one shared ground plane if ``ground``.

    ``color`` runs ``ModelBuilder.color()`` before finalizing: SolverVBD sweeps bodies by the colour
    groups it writes (``model.body_color_groups``) and refuses a model without them.
    """
    scene = newton.ModelBuilder()
    scene.replicate(robot, world_count)
    if ground:
        scene.add_ground_plane(cfg=ground_cfg)
    if color:
        scene.color()
    return scene.finalize(device=device)


def tower_layout() -> list[tuple[float, float, float]]:
    """Centres [m] of every box, tower by tower, bottom to top."""
    centres = []
    for k, (count, base) in enumerate(zip(TOWER_HEIGHTS, TOWER_BASES, strict=True)):
        for i in range(count):
            centres.append((TOWER_SPACING * k, 0.0, BOX_HALF + base + 2.0 * BOX_HALF * i))
    return centres


def build_tower(world_count: int, device: str, color: bool = False) -> Scene:
    """Four box towers (6, 7, 5, 6 boxes) dropped from 0, 0.5, 1, 1.5 m onto a ground plane, mu 0.7."""
    robot = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=TOWER_MU)
    for x, y, z in tower_layout():
        # add_body makes a free-jointed single-body articulation, what reduced-coordinate solvers need.
        body = robot.add_body(xform=wp.transform(wp.vec3(x, y, z), wp.quat_identity()))
        robot.add_shape_box(body, hx=BOX_HALF, hy=BOX_HALF, hz=BOX_HALF, cfg=cfg)
    nb = robot.body_count
    model = _replicated(robot, world_count, device, ground=True, ground_cfg=cfg, color=color)
    return Scene("tower", model, world_count, DT, nb, list(range(nb)), "drift")


def _mjcf_robot(asset: str, z: float | None = None) -> newton.ModelBuilder:
    robot = newton.ModelBuilder()
    xform = wp.transform(wp.vec3(0.0, 0.0, z), wp.quat_identity()) if z is not None else None
    # The asset's own floor is dropped: every world shares the one ground plane added after replication.
    robot.add_mjcf(newton.examples.get_asset(asset), xform=xform, ignore_names=["floor", "ground"])
    return robot


def build_humanoid(world_count: int, device: str, color: bool = False) -> Scene:
    """``nv_humanoid.xml`` dropped from a torso height of 1.5 m onto a ground plane."""
    robot = _mjcf_robot("nv_humanoid.xml", HUMANOID_Z)
    model = _replicated(robot, world_count, device, ground=True, color=color)
    return Scene("humanoid", model, world_count, DT, robot.body_count, [0], "torso")


def _asset_xml(asset: str) -> str:
    """Text of one of Newton's example assets."""
    with open(newton.examples.get_asset(asset), encoding="utf-8") as f:
        return f.read()


def ant_init_qpos() -> np.ndarray:
    """The ``init_qpos`` the asset declares (MuJoCo layout: torso x, y, z [m], quaternion w, x, y, z, then
    hip/ankle angles [rad]): standing on its feet with torso at 0.55 m.  The file's body poses put every
    ankle at 0 rad, outside its joint range (30..100 degrees), which makes the reference solvers kick."""
    m = re.search(r'<numeric\s+data="([^"]+)"\s+name="init_qpos"', _asset_xml("nv_ant.xml"))
    return np.array([float(v) for v in m.group(1).split()])


def build_ant(world_count: int, device: str, color: bool = False) -> Scene:
    """``nv_ant.xml`` standing at its declared ``init_qpos`` (torso at 0.55 m) on a ground plane."""
    robot = _mjcf_robot("nv_ant.xml")
    q0 = ant_init_qpos()
    # Newton's free joint is position then quaternion (x, y, z, w); MuJoCo's quaternion is (w, x, y, z).
    robot.joint_q[:] = [*q0[:3], *q0[4:7], q0[3], *q0[7:]]
    model = _replicated(robot, world_count, device, ground=True, color=color)
    return Scene("ant", model, world_count, DT, robot.body_count, [0], "torso")


def build_chain(world_count: int, device: str, color: bool = False) -> Scene:
    """A 10-link revolute pendulum (0.1 m box links, axis y) hanging from the world, released horizontal.

    Each body frame sits on its joint (pivot); the link's box spans ``x`` in [0, 0.1] m of that frame.
    """
    robot = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=TOWER_MU)
    joints = []
    parent = -1
    for i in range(CHAIN_LINKS):
        body = robot.add_link(xform=wp.transform(wp.vec3(CHAIN_LINK_LEN * i, 0.0, CHAIN_PIVOT_Z), wp.quat_identity()))
        robot.add_shape_box(
            body,
            xform=wp.transform(wp.vec3(0.5 * CHAIN_LINK_LEN, 0.0, 0.0), wp.quat_identity()),
            hx=0.5 * CHAIN_LINK_LEN,
            hy=CHAIN_HALF_THICK,
            hz=CHAIN_HALF_THICK,
            cfg=cfg,
        )
        anchor = (0.0, 0.0, CHAIN_PIVOT_Z) if parent < 0 else (CHAIN_LINK_LEN, 0.0, 0.0)
        joints.append(
            robot.add_joint_revolute(
                parent, body, parent_xform=wp.transform(wp.vec3(*anchor), wp.quat_identity()), axis=(0.0, 1.0, 0.0)
            )
        )
        parent = body
    robot.add_articulation(joints)
    model = _replicated(robot, world_count, device, ground=False, color=color)
    return Scene(
        "chain", model, world_count, DT, robot.body_count, [CHAIN_LINKS - 1], "tip", (CHAIN_LINK_LEN, 0.0, 0.0)
    )


def build_cartpole(world_count: int, device: str, color: bool = False) -> Scene:
    """``cartpole.urdf`` (fixed slider rail, prismatic cart, two revolute poles), poles tilted off upright."""
    robot = newton.ModelBuilder()
    robot.add_urdf(newton.examples.get_asset("cartpole.urdf"), floating=False)
    # The rail is welded to the world, so the three movable coordinates are cart, pole1, pole2.
    robot.joint_q[-3:] = list(CARTPOLE_Q0)
    model = _replicated(robot, world_count, device, ground=False, color=color)
    return Scene("cartpole", model, world_count, DT, robot.body_count, [], "none")


# Benchmark and example scenes for SolverVBD's rigid bodies (not shipped as `steel run` scenes).
STACK_BOXES = 20  # boxes in the stack
STACK_HALF = 0.05  # [m] half edge of a stack box (1 kg at the default density)
STACK_KE = 1.0e6  # [N/m] contact stiffness of the stack; ramp it (rigid_avbd_beta), it exceeds m/dt² = 3.6e5 N/m
HEAVY_CHAIN_LINKS = 20  # links above the block
HEAVY_CHAIN_LINK_LEN = 0.1  # [m] link length (pivot to pivot)
HEAVY_CHAIN_LINK_MASS = 1.0  # [kg]
HEAVY_CHAIN_BLOCK_MASS = 1000.0  # [kg] the block hanging from the last link (1000:1)
HEAVY_CHAIN_TOP = 3.0  # [m] height of the pivot the chain hangs from


def add_box_stack(builder: newton.ModelBuilder, half_extents, x: float = 0.0,
                  cfg: newton.ModelBuilder.ShapeConfig | None = None) -> list[int]:
    """Cubes of ``half_extents`` [m] (bottom first) stacked face to face at ``x`` [m] from z = 0, touching.

    Returns the bodies, bottom first; each is a free body (``add_body``) with the box's density mass."""
    cfg = cfg or newton.ModelBuilder.ShapeConfig(mu=TOWER_MU)
    bodies, z = [], 0.0
    for h in half_extents:
        body = builder.add_body(xform=wp.transform(wp.vec3(x, 0.0, z + h), wp.quat_identity()))
        builder.add_shape_box(body, hx=h, hy=h, hz=h, cfg=cfg)
        bodies.append(body)
        z += 2.0 * h
    return bodies


def add_heavy_chain(builder: newton.ModelBuilder, links: int = HEAVY_CHAIN_LINKS, x: float = 0.0) -> list[int]:
    """``links`` 1 kg links on BALL joints hanging from the world at ``(x, 0, HEAVY_CHAIN_TOP)``, a 1000 kg block
    below; returns the bodies, top first (the block last).

    The AVBD paper's mass-ratio stress scene: hard joints (the default) hold the block, whose drop below
    its start (the chain's stretch) stays small; the links' boxes do not collide and add no mass. The
    block's start centre is ``(links + 0.5) HEAVY_CHAIN_LINK_LEN`` below the top."""
    length, top = HEAVY_CHAIN_LINK_LEN, HEAVY_CHAIN_TOP
    no_contact = newton.ModelBuilder.ShapeConfig(density=0.0, has_shape_collision=False, has_particle_collision=False)
    parent, joints, bodies = -1, [], []
    for i in range(links + 1):
        mass = HEAVY_CHAIN_BLOCK_MASS if i == links else HEAVY_CHAIN_LINK_MASS
        body = builder.add_link(mass=mass, inertia=wp.mat33(np.eye(3) * mass * length**2 / 6.0),
                                xform=wp.transform(wp.vec3(x, 0.0, top - (i + 0.5) * length), wp.quat_identity()))
        builder.add_shape_box(body, hx=0.2 * length, hy=0.2 * length, hz=0.5 * length, cfg=no_contact)
        anchor = (x, 0.0, top) if parent < 0 else (0.0, 0.0, -0.5 * length)
        joints.append(builder.add_joint_ball(parent, body, parent_xform=wp.transform(wp.vec3(*anchor), wp.quat_identity()),
                                             child_xform=wp.transform(wp.vec3(0.0, 0.0, 0.5 * length),
                                                                      wp.quat_identity())))
        bodies.append(body)
        parent = body
    builder.add_articulation(joints)
    return bodies


def build_box_stack(world_count: int, device: str, color: bool = False, count: int = STACK_BOXES) -> Scene:
    """``count`` 1 kg boxes of ``2 STACK_HALF`` edge stacked on a ground plane, touching at the start (mu 0.7,
    contact ke ``STACK_KE``).

    The watched sink is each box's distance below ``STACK_HALF (1 + 2 i)``; nothing should move sideways.
    With SolverVBD ramp the contact stiffness (``rigid_avbd_beta=1e5``): a fixed k above the boxes'
    ``m/dt²`` lets the multipliers overshoot, and at the default ke (2.5e3 N/m) 8 kg boxes of 0.2 m
    sink through each other (231 mm in 130 steps, on Newton's SolverVBD alike; ``tests/solvers/vbd/rigid/
    test_contacts.py::TestStacks::test_at_the_default_stiffness_a_stack_of_8_kg_boxes_sinks_through_itself``).
    """
    robot = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=TOWER_MU, ke=STACK_KE)
    add_box_stack(robot, [STACK_HALF] * count, cfg=cfg)
    model = _replicated(robot, world_count, device, ground=True, ground_cfg=cfg, color=color)
    return Scene("stack", model, world_count, DT, robot.body_count, list(range(robot.body_count)), "drift")


def build_heavy_chain(world_count: int, device: str, color: bool = False, links: int = HEAVY_CHAIN_LINKS) -> Scene:
    """:func:`add_heavy_chain` replicated (no ground); the block (last body) is watched."""
    robot = newton.ModelBuilder()
    add_heavy_chain(robot, links)
    model = _replicated(robot, world_count, device, ground=False, color=color)
    return Scene("heavy_chain", model, world_count, DT, robot.body_count, [links], "stretch")


# Cable pile: Newton's cable-pile example material (rods of capsules, mu 1, contact ke 1e5 N/m, no damping),
# smaller by default so a CPU run takes seconds.
CABLE_SEGMENTS = 40
CABLE_SEGMENT_LEN = 0.05  # [m]
CABLE_RADIUS = 0.012  # [m]
CABLE_STRETCH_KE = 5.0e5  # [N·m] (Newton's add_rod stretch stiffness)
CABLE_BEND_KE = 1.0e2  # [N·m/rad]
CABLE_BEND_KD = 2.0e1
CABLE_LAYERS = 4
CABLE_LANES = 4
CABLE_PILE_BOTTOM = 0.3  # [m] height of the lowest layer at the start


def add_cable_pile(builder: newton.ModelBuilder, layers: int = CABLE_LAYERS, lanes: int = CABLE_LANES,
                   segments: int = CABLE_SEGMENTS) -> None:
    """``layers`` crossed layers of ``lanes`` wavy cables (``segments`` capsules of ``CABLE_SEGMENT_LEN`` each),
    held ``3 CABLE_RADIUS`` apart vertically, alternately along x and y; they drop onto whatever is below.

    Each cable is a ``newton.Rod`` (two sine periods of amplitude 5 % of its length across it) added with
    ``ModelBuilder.add_rod``: a chain of capsule bodies whose cable joints stretch and bend (soft by default).
    """
    cfg = newton.ModelBuilder.ShapeConfig(mu=1.0, ke=1.0e5, kd=0.0)
    length = segments * CABLE_SEGMENT_LEN
    spacing = max(8.0 * CABLE_RADIUS, 0.15)
    for layer in range(layers):
        along_x = layer % 2 == 0
        axis = np.array([1.0, 0.0, 0.0]) if along_x else np.array([0.0, 1.0, 0.0])
        across = np.array([0.0, 1.0, 0.0]) if along_x else np.array([1.0, 0.0, 0.0])
        z = CABLE_PILE_BOTTOM + 3.0 * CABLE_RADIUS * layer
        for lane in range(lanes):
            centre = across * (lane - 0.5 * (lanes - 1)) * spacing + np.array([0.0, 0.0, z])
            t = np.linspace(0.0, 1.0, segments + 1)
            points = (centre[None, :] + np.outer(t - 0.5, axis) * length
                      + np.outer(0.05 * length * np.sin(4.0 * np.pi * t), across))
            rod = newton.Rod([wp.vec3(*map(float, p)) for p in points], radius=CABLE_RADIUS)
            rod.compute_frames(twist_total=0.0)
            builder.add_rod(rod=rod, cfg=cfg, stretch_stiffness=CABLE_STRETCH_KE, bend_stiffness=CABLE_BEND_KE,
                            bend_damping=CABLE_BEND_KD, label=f"cable_{layer}_{lane}")


def build_cable_pile(world_count: int, device: str, color: bool = True, layers: int = CABLE_LAYERS,
                     lanes: int = CABLE_LANES) -> Scene:
    """:func:`add_cable_pile` over a ground plane (mu 1e9: cables do not slide on it), replicated; SolverVBD only.

    The watched outcome (``"pile"``) is the highest and lowest segment [m]: a settled pile is at most
    ``layers`` cable diameters high and nothing sinks through the ground."""
    robot = newton.ModelBuilder()
    robot.rigid_gap = 0.0
    add_cable_pile(robot, layers, lanes)
    ground = newton.ModelBuilder.ShapeConfig(mu=1.0e9, ke=1.0e5, kd=0.0, gap=0.0)
    model = _replicated(robot, world_count, device, ground=True, ground_cfg=ground, color=color)
    return Scene("cable_pile", model, world_count, DT, robot.body_count, list(range(robot.body_count)), "pile")


BUILDERS = {
    "tower": build_tower,
    "humanoid": build_humanoid,
    "ant": build_ant,
    "chain": build_chain,
    "cartpole": build_cartpole,
    "cable_pile": build_cable_pile,  # VBD_SCENES: SolverVBD only
}


def build_scene(name: str, world_count: int, device: str, *, color: bool = False) -> Scene:
    """The Newton scene ``name`` with ``world_count`` worlds on ``device``; ``color`` for SolverVBD (see
    :func:`_replicated`)."""
    if name not in BUILDERS:
        raise KeyError(f"unknown scene {name!r}; choose from {', '.join(SCENES + VBD_SCENES)}")
    return BUILDERS[name](world_count, device, color)


# The outcome a shipped scene promises, checked on the final state of a run (steel.app.runner's summary).
TOWER_STAND_HEIGHT = 0.005  # [m] a box's centre within this of its stacked height counts as stacked
TOWER_STAND_OFFSET = 0.05  # [m] ... and within this horizontally of its tower's bottom box


def expectation(name: str, body_q, world_count: int) -> dict | None:
    """Whether the final ``body_q`` (Newton's ``(body, 7)`` poses) keeps the promise of shipped scene ``name``.

    ``tower``: every box ends stacked on its tower (centre within ``TOWER_STAND_HEIGHT`` of ``(2 i + 1) h`` for
    the ``i``-th box from the bottom, and within ``TOWER_STAND_OFFSET`` horizontally of the tower's bottom box):
    a run that leaves boxes hanging in the air, sunk, or scattered contradicts it. Other scenes: None.
    Returns ``{"promise", "met", "worst_box", "height_error_m", "offset_m"}``.
    """
    if name != "tower":
        return None
    nb = sum(TOWER_HEIGHTS)
    q = body_q[: nb * world_count].reshape(world_count, nb, -1)
    height_err = np.zeros((world_count, nb))
    offset = np.zeros((world_count, nb))
    start = 0
    for count in TOWER_HEIGHTS:
        boxes = q[:, start:start + count]
        stacked = BOX_HALF * (2.0 * np.arange(count) + 1.0)
        height_err[:, start:start + count] = np.abs(boxes[..., 2] - stacked)
        offset[:, start:start + count] = np.linalg.norm(boxes[..., :2] - boxes[:, :1, :2], axis=-1)
        start += count
    worst = np.unravel_index(np.argmax(height_err / TOWER_STAND_HEIGHT + offset / TOWER_STAND_OFFSET),
                             height_err.shape)
    met = bool((height_err <= TOWER_STAND_HEIGHT).all() and (offset <= TOWER_STAND_OFFSET).all())
    return {"promise": "every box ends stacked on its tower", "met": met,
            "worst_box": int(worst[0] * nb + worst[1]), "height_error_m": float(height_err[worst]),
            "offset_m": float(offset[worst])}

