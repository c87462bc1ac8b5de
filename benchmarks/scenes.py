"""Benchmark scenes, each as a replicated Newton model and, where feasible, the same scene as MuJoCo C.

Every Newton scene is one robot (or stack of boxes) built once and replicated ``world_count`` times
with ``ModelBuilder.replicate``, so world ``w`` holds bodies ``w * bodies_per_world + k``.  The
MuJoCo twin describes one world; the runner steps ``world_count`` separate ``MjData`` for it.

Sanity outcomes are computed from the positions [m] and orientations of a few *watched* bodies per
world, extracted the same way from both backends, so Newton and MuJoCo rows are comparable:

* ``tower``     max horizontal drift [m] of any box from its start x, y, and the lowest box centre [m];
* ``humanoid``, ``ant``  torso (root body) height [m], mean, min and max over worlds;
* ``chain``     tip height [m] (end of the last link), mean over worlds;
* ``cartpole``  NaN check only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import warp as wp

import newton
import newton.examples
from steel.app.scenes import (  # noqa: F401  (re-exported: the runner imports scene names from here)
    BOX_HALF,
    BUILDERS,
    CHAIN_HALF_THICK,
    CHAIN_LINK_LEN,
    CHAIN_LINKS,
    CARTPOLE_Q0,
    CHAIN_PIVOT_Z,
    DT,
    HUMANOID_Z,
    SCENES,
    TOWER_BASES,
    TOWER_HEIGHTS,
    TOWER_MU,
    TOWER_SPACING,
    Scene,
    ant_init_qpos,
    build_ant,
    build_cartpole,
    build_chain,
    build_humanoid,
    build_scene,
    _asset_xml,
    build_tower,
    tower_layout,
)


@dataclass
class MjScene:
    """One world of a scene as MuJoCo C.

    Attributes:
        model: the compiled ``mujoco.MjModel`` (time step set to the scene's ``dt``).
        qpos0: initial generalized coordinates (MuJoCo layout).
        watched: MuJoCo body ids matching :attr:`Scene.watched`, in the same order.
    """

    model: object
    qpos0: np.ndarray
    watched: list[int]



# ----------------------------------------------------------------------------------------------
# Pyramid of boxes (the growth benchmark)
# ----------------------------------------------------------------------------------------------

PYRAMID_GAP = 0.01  # horizontal gap [m] between neighbouring boxes of a level: side faces do not touch


def pyramid_layout(levels: int) -> list[tuple[float, float, float]]:
    """Centres [m] of a 2D pyramid of ``levels`` levels of cubes (half extent ``BOX_HALF``), bottom level
    first: level ``i`` holds ``levels - i`` boxes, each straddling the gap between two below, faces
    touching vertically; ``levels (levels + 1) / 2`` boxes in all."""
    if isinstance(levels, bool) or not isinstance(levels, int) or levels < 1:
        raise ValueError(f"levels must be a positive int, got {levels!r}")
    pitch = 2.0 * BOX_HALF + PYRAMID_GAP
    return [((j - 0.5 * (levels - 1 - i)) * pitch, 0.0, BOX_HALF + 2.0 * BOX_HALF * i)
            for i in range(levels) for j in range(levels - i)]


def build_pyramid(levels: int, world_count: int, device: str) -> Scene:
    """:func:`pyramid_layout` of free boxes resting on a ground plane (mu 0.7), replicated; every box watched
    (``"drift"``: the ideal is no drift and the lowest centre at ``BOX_HALF``)."""
    robot = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=TOWER_MU)
    for x, y, z in pyramid_layout(levels):
        body = robot.add_body(xform=wp.transform(wp.vec3(x, y, z), wp.quat_identity()))
        robot.add_shape_box(body, hx=BOX_HALF, hy=BOX_HALF, hz=BOX_HALF, cfg=cfg)
    scene = newton.ModelBuilder()
    scene.replicate(robot, world_count)
    scene.add_ground_plane(cfg=cfg)
    nb = robot.body_count
    return Scene(f"pyramid{levels}", scene.finalize(device=device), world_count, DT, nb, list(range(nb)), "drift")


# ----------------------------------------------------------------------------------------------
# Sanity outcome, shared by both backends
# ----------------------------------------------------------------------------------------------


def _rotate(q_xyzw: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vector ``v`` by unit quaternions ``q`` (x, y, z, w), broadcasting over leading axes."""
    u, w = q_xyzw[..., :3], q_xyzw[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def outcome(scene_metric: str, pos: np.ndarray, quat: np.ndarray, start: np.ndarray, finite: bool, tip_offset=None):
    """Physical sanity outcome of a run.

    Args:
        scene_metric: :attr:`Scene.metric`.
        pos: watched body origins [m], shape ``(worlds, watched, 3)``.
        quat: watched body orientations (x, y, z, w), shape ``(worlds, watched, 4)``.
        start: watched body origins at the start [m], same shape as ``pos``.
        finite: whether the whole state (not just the watched bodies) is free of NaN/inf.
        tip_offset: tip point in the watched body's frame [m] (``"tip"`` only).

    Returns:
        ``dict`` with ``nan`` (bool), the metric values [m] and a short human-readable ``text``.
    """
    res: dict = {"nan": not finite}
    if not finite:
        res["text"] = "NaN"
        return res
    if scene_metric == "drift":
        drift = np.linalg.norm(pos[..., :2] - start[..., :2], axis=-1)
        res["drift_max_m"] = float(drift.max())
        # Lowest box centre: BOX_HALF when resting on the ground, less when sinking into it.
        res["box_z_min_m"] = float(pos[..., 2].min())
        res["text"] = f"drift {res['drift_max_m']:.3f} m, lowest box z {res['box_z_min_m']:.3f} m"
    elif scene_metric == "torso":
        # Worlds are identical copies, so a spread between them flags nondeterminism or instability.
        z = pos[:, 0, 2]
        res["torso_z_mean_m"], res["torso_z_min_m"], res["torso_z_max_m"] = map(float, (z.mean(), z.min(), z.max()))
        res["text"] = f"torso z {z.mean():.3f} m [{z.min():.3f}, {z.max():.3f}]"
    elif scene_metric == "tip":
        tip = pos[:, -1] + _rotate(quat[:, -1], np.asarray(tip_offset, dtype=np.float64))
        res["tip_z_mean_m"] = float(tip[:, 2].mean())
        res["text"] = f"tip z {res['tip_z_mean_m']:.3f} m"
    else:
        res["text"] = "ok"
    return res


# ----------------------------------------------------------------------------------------------
# MuJoCo twins (one world each)
# ----------------------------------------------------------------------------------------------


def _tower_mjcf(dt: float) -> str:
    bodies = "\n".join(
        f'    <body name="box{i}" pos="{x} {y} {z}"><freejoint/>'
        f'<geom type="box" size="{BOX_HALF} {BOX_HALF} {BOX_HALF}"/></body>'
        for i, (x, y, z) in enumerate(tower_layout())
    )
    return f"""<mujoco model="tower">
  <option timestep="{dt}"/>
  <default><geom friction="{TOWER_MU} 0.005 0.0001"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
{bodies}
  </worldbody>
</mujoco>"""


def _chain_mjcf(dt: float) -> str:
    geom = (
        f'<geom type="box" size="{0.5 * CHAIN_LINK_LEN} {CHAIN_HALF_THICK} {CHAIN_HALF_THICK}" '
        f'pos="{0.5 * CHAIN_LINK_LEN} 0 0"/>'
    )
    xml = ""
    for i in reversed(range(CHAIN_LINKS)):
        pos = f"0 0 {CHAIN_PIVOT_Z}" if i == 0 else f"{CHAIN_LINK_LEN} 0 0"
        xml = f'<body name="link{i}" pos="{pos}"><joint type="hinge" axis="0 1 0"/>{geom}{xml}</body>'
    return f"""<mujoco model="chain">
  <option timestep="{dt}"/>
  <default><geom friction="{TOWER_MU} 0.005 0.0001"/></default>
  <worldbody>{xml}</worldbody>
</mujoco>"""


def build_mujoco(name: str, dt: float = DT) -> MjScene | None:
    """One world of scene ``name`` as MuJoCo C, or ``None`` when no twin exists (or mujoco is missing)."""
    try:
        import mujoco  # noqa: PLC0415 - optional dependency, only needed for the comparison rows
    except ImportError:
        return None
    watched: list[int] = []
    if name == "tower":
        m = mujoco.MjModel.from_xml_string(_tower_mjcf(dt))
        watched = list(range(1, m.nbody))
    elif name == "humanoid":
        # The sensor block names a site the file does not define; sensors do not affect dynamics.
        xml = re.sub(r"<sensor>.*?</sensor>", "", _asset_xml("nv_humanoid.xml"), flags=re.S)
        m = mujoco.MjModel.from_xml_string(xml)
        watched = [m.body("torso").id]
    elif name == "ant":
        # The floor's zaxis="0 1 0" makes a vertical wall in MuJoCo; Newton ignores it and adds a z-up plane.
        xml = _asset_xml("nv_ant.xml").replace('zaxis="0 1 0"', 'zaxis="0 0 1"')
        m = mujoco.MjModel.from_xml_string(xml)
        watched = [m.body("torso").id]
    elif name == "chain":
        m = mujoco.MjModel.from_xml_string(_chain_mjcf(dt))
        watched = [m.body(f"link{CHAIN_LINKS - 1}").id]
    elif name == "cartpole":
        # MuJoCo's URDF importer welds the massless root link (the rail) to the world, as Newton does.
        m = mujoco.MjModel.from_xml_path(newton.examples.get_asset("cartpole.urdf"))
    else:
        return None
    m.opt.timestep = dt
    qpos0 = m.qpos0.copy()
    if name == "humanoid":
        qpos0[2] = HUMANOID_Z  # free joint: x, y, z, then quaternion
    elif name == "ant":
        qpos0[:] = ant_init_qpos()
    elif name == "cartpole":
        qpos0[:3] = CARTPOLE_Q0
    return MjScene(m, qpos0, watched)
