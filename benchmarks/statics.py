"""Statics on real geometry: scenes that must hold still, and the table that compares who holds them.

Scenes (each a function returning a finalized Newton model and what to measure on it):

* :func:`ramp`: a 0.2 m box (1000 kg/m^3) resting flush on a tilted support: a plane shape rotated about
  y, about x, or yawed 30 degrees and then tilted; a static box; a static triangle mesh slab; or a box
  shape carried by a kinematic body, at rest or moving at a constant velocity. Gravity is the default
  (0, 0, -9.81): the ground is tilted, not gravity.
* :func:`tipping_box`: the same box launched along x on a flat ground.
* :func:`perturbed_towers`: the four box towers, each box slightly offset and turned.
* :func:`grasp` / :func:`gripper`: a capsule pinched between two pads; a two-finger gripper lifting a box.
* the heavy-on-light box stacks of ``benchmarks/mass_ratio.py``, with a MuJoCo C twin.

``python -m benchmarks.statics`` writes ``statics.md``: the ramp grid, the mass-ratio stacks and the pinch,
ours beside Newton's reference and MuJoCo C (MJCF twins, MuJoCo's default contact model).

:func:`ramp_displacement` steps a ramp with a solver class and returns how far the box moved relative to its
support between two times [m]; :func:`ramp_slide_acceleration` fits the acceleration along the slope
[m/s^2] for the Coulomb check above the critical angle (``tan(angle) > mu``).

    .venv/bin/python -m benchmarks.statics --out results/bench        # the ramp grid table
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import warp as wp

import newton

G = 9.81
BOX_HALF = 0.1  # [m] half extent of the ramp box
SUPPORTS = ("plane", "box", "mesh", "kinematic", "moving")
ORIENTATIONS = ("y", "x", "yaw")  # tilt about y, about x, or yawed 30 degrees about z first, then tilted about y
MOVING_SPEED = 0.2  # [m/s] the moving kinematic carrier's velocity along world x


@dataclass
class Ramp:
    """A ramp scene: the model, the box, the support body (-1: static) and the slope frame."""

    model: newton.Model
    box: int
    carrier: int  # the kinematic body carrying the support, -1 for a static support
    frame: np.ndarray  # 3x3, columns: downhill, across, normal (world)
    angle: float  # [rad]
    mu: float


def _slab_mesh(hx: float, hy: float, hz: float) -> newton.Mesh:
    """A closed box of half extents ``hx, hy, hz`` [m] as a triangle mesh (12 outward-facing triangles)."""
    v = np.array([[sx * hx, sy * hy, sz * hz] for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)], dtype=np.float32)
    faces = [(0, 2, 3), (0, 3, 1), (4, 5, 7), (4, 7, 6), (0, 1, 5), (0, 5, 4),
             (2, 6, 7), (2, 7, 3), (0, 4, 6), (0, 6, 2), (1, 3, 7), (1, 7, 5)]
    return newton.Mesh(v, np.array(faces, dtype=np.int32).ravel())


def _tilt(angle: float, orientation: str) -> wp.quat:
    if orientation == "y":
        return wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), angle)
    if orientation == "x":
        return wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), angle)
    if orientation == "yaw":
        return wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), angle) * wp.quat_from_axis_angle(
            wp.vec3(0.0, 0.0, 1.0), math.radians(30.0))
    raise ValueError(f"orientation must be one of {ORIENTATIONS}, got {orientation!r}")


def ramp(angle_deg: float, mu: float, *, support: str = "plane", orientation: str = "y",
         device: str = "cpu") -> Ramp:
    """A box resting flush on a support tilted ``angle_deg`` [deg], friction ``mu`` on both shapes.

    The box starts 0.1 mm above the support surface, at the support's orientation, and lands on it.
    """
    if support not in SUPPORTS:
        raise ValueError(f"support must be one of {SUPPORTS}, got {support!r}")
    angle = math.radians(angle_deg)
    q = _tilt(angle, orientation)
    n = wp.quat_rotate(q, wp.vec3(0.0, 0.0, 1.0))
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=mu)
    box = builder.add_body(xform=wp.transform(n * (BOX_HALF + 1.0e-4), q))
    builder.add_shape_box(box, hx=BOX_HALF, hy=BOX_HALF, hz=BOX_HALF, cfg=cfg)
    carrier = -1
    slab = (1.0, 1.0, 0.1)  # [m] half extents of the box, mesh and carried supports
    under = wp.transform(n * -slab[2], q)  # the slab's top face through the origin
    if support == "plane":
        builder.add_shape_plane(body=-1, xform=wp.transform(wp.vec3(0.0), q), width=0.0, length=0.0, cfg=cfg)
    elif support == "box":
        builder.add_shape_box(-1, xform=under, hx=slab[0], hy=slab[1], hz=slab[2], cfg=cfg)
    elif support == "mesh":
        builder.add_shape_mesh(-1, xform=under, mesh=_slab_mesh(*slab), cfg=cfg)
    else:
        carrier = builder.add_body(xform=under, is_kinematic=True)
        builder.add_shape_box(carrier, hx=slab[0], hy=slab[1], hz=slab[2], cfg=cfg)
        if support == "moving":
            builder.joint_qd[builder.joint_qd_start[-1]] = MOVING_SPEED  # the carrier's free joint, along world x
    model = builder.finalize(device=device)
    rot = np.array(wp.quat_to_matrix(q), dtype=np.float64).reshape(3, 3)
    normal = rot[:, 2]
    down = np.array([0.0, 0.0, -1.0]) - normal * -normal[2]
    down = down / np.linalg.norm(down) if np.linalg.norm(down) > 0 else rot[:, 0]
    frame = np.stack([down, np.cross(normal, down), normal], axis=1)
    return Ramp(model, box, carrier, frame, angle, mu)


def simulate(model: newton.Model, solver, dt: float, steps: int, *, control=None, before=None, after=None):
    """Step ``model`` ``steps`` times with Newton's default collision pipeline; ``before(k, state, control)`` runs
    ahead of step ``k`` (1-based: set targets, velocities), ``after(k, state)`` after it. Returns the last state."""
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    for k in range(1, steps + 1):
        if before is not None:
            before(k, s0, control)
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, control, contacts, dt)
        s0, s1 = s1, s0
        if after is not None:
            after(k, s0)
    return s0


def _run(scene: Ramp, solver, dt: float, seconds: float, record):
    return simulate(scene.model, solver, dt, int(round(seconds / dt)), after=lambda k, s: record(k * dt, s))


def _relative(scene: Ramp, state) -> np.ndarray:
    """The box's position [m] relative to its support (the carrier's origin, else the world's)."""
    q = state.body_q.numpy()
    p = q[scene.box, :3].astype(np.float64)
    if scene.carrier >= 0:
        p = p - q[scene.carrier, :3]
    return p


def ramp_displacement(scene: Ramp, solver, dt: float, t0: float = 1.0, t1: float = 10.0) -> float:
    """How far [m] the box moved relative to its support from ``t0`` to ``t1`` [s] (both after landing)."""
    marks = {}
    k0, k1 = int(round(t0 / dt)), int(round(t1 / dt))

    def record(t, state):
        k = int(round(t / dt))
        if k in (k0, k1):
            marks[k] = _relative(scene, state)

    _run(scene, solver, dt, t1, record)
    return float(np.linalg.norm(marks[k1] - marks[k0]))


def ramp_slide_acceleration(scene: Ramp, solver, dt: float, seconds: float = 1.0) -> float:
    """Acceleration [m/s^2] of the box down the slope, a quadratic fit over the last half of ``seconds``."""
    ts, xs = [], []

    def record(t, state):
        if t > 0.5 * seconds:
            ts.append(t)
            xs.append(float(_relative(scene, state) @ scene.frame[:, 0]))

    _run(scene, solver, dt, seconds, record)
    return 2.0 * float(np.polyfit(np.array(ts), np.array(xs), 2)[0])


def coulomb_acceleration(angle: float, mu: float) -> float:
    """``g (sin - mu cos)`` [m/s^2]: a box sliding down a slope of ``angle`` [rad] with friction ``mu``."""
    return G * (math.sin(angle) - mu * math.cos(angle))


def tipping_box(mu: float, speed: float = 2.0, device: str = "cpu") -> newton.Model:
    """A 0.2 m cube on a flat ground launched along x at ``speed`` [m/s], friction ``mu`` on both shapes."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=mu)
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, BOX_HALF), wp.quat_identity()))
    builder.add_shape_box(body, hx=BOX_HALF, hy=BOX_HALF, hz=BOX_HALF, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    builder.joint_qd[0] = speed
    return builder.finalize(device=device)


def perturbed_towers(seed: int = 1, device: str = "cpu") -> newton.Model:
    """The four box towers of the ``tower`` scene (6, 7, 5, 6 boxes of 0.2 m, mu 0.7, dropped from 0, 0.5, 1
    and 1.5 m), each box offset by up to 0.5 mm and turned about z by up to 0.3 degrees (seeded): no exact
    symmetry or identity quaternion helps the solver."""
    from steel.app.scenes import BOX_HALF as HALF, TOWER_MU, tower_layout

    rng = np.random.default_rng(seed)
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=TOWER_MU)
    for x, y, z in tower_layout():
        dx, dy = rng.uniform(-5e-4, 5e-4, 2)
        turn = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), float(rng.uniform(-0.005, 0.005)))
        body = builder.add_body(xform=wp.transform(wp.vec3(x + dx, y + dy, z), turn))
        builder.add_shape_box(body, hx=HALF, hy=HALF, hz=HALF, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    return builder.finalize(device=device)


# ----------------------------------------------------------------------------------------------
# Grasp: a small capsule pinched between two friction pads
# ----------------------------------------------------------------------------------------------

GRASP_RADIUS = 0.004  # [m] capsule radius
GRASP_HALF_HEIGHT = 0.02  # [m] half length of the capsule's cylinder, along y
GRASP_MASS = 0.045  # [kg]
GRASP_MU = 0.7
PAD_HALF = (0.005, 0.03, 0.03)  # [m] half extents of each pad
PAD_MASS = 0.2  # [kg]


@dataclass
class Grasp:
    """The pinch scene: the model, the capsule body and the two pads' prismatic DOFs."""

    model: newton.Model
    capsule: int
    pad_dofs: tuple[int, int]


def grasp(device: str = "cpu") -> Grasp:
    """A 45 g capsule (radius 4 mm, lying along y) between two pads on prismatic joints along x, gravity on.

    Each pad is a one-joint articulation from the world; a squeezing force is the pads' joint efforts
    (``control.joint_f``: +F on the left pad, -F on the right). The pads start touching the capsule.
    """
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    volume = math.pi * GRASP_RADIUS**2 * 2.0 * GRASP_HALF_HEIGHT + 4.0 / 3.0 * math.pi * GRASP_RADIUS**3
    cap_cfg = newton.ModelBuilder.ShapeConfig(mu=GRASP_MU, density=GRASP_MASS / volume)
    z = 0.5  # [m] held in the air
    capsule = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, z), wp.quat_identity()))
    # Newton's capsule axis is its local z: turn it to lie along y.
    builder.add_shape_capsule(capsule, xform=wp.transform(wp.vec3(0.0), wp.quat_from_axis_angle(
        wp.vec3(1.0, 0.0, 0.0), 0.5 * math.pi)), radius=GRASP_RADIUS, half_height=GRASP_HALF_HEIGHT, cfg=cap_cfg)
    pad_cfg = newton.ModelBuilder.ShapeConfig(mu=GRASP_MU, density=PAD_MASS / (8.0 * PAD_HALF[0] * PAD_HALF[1] * PAD_HALF[2]))
    dofs = []
    for side in (-1.0, 1.0):
        x = side * (GRASP_RADIUS + PAD_HALF[0])
        pad = builder.add_link(xform=wp.transform(wp.vec3(x, 0.0, z), wp.quat_identity()))
        builder.add_shape_box(pad, hx=PAD_HALF[0], hy=PAD_HALF[1], hz=PAD_HALF[2], cfg=pad_cfg)
        joint = builder.add_joint_prismatic(-1, pad, parent_xform=wp.transform(wp.vec3(x, 0.0, z), wp.quat_identity()),
                                            axis=(1.0, 0.0, 0.0))
        builder.add_articulation([joint])
        dofs.append(builder.joint_qd_start[joint])
    return Grasp(builder.finalize(device=device), capsule, (dofs[0], dofs[1]))


def grasp_slip(scene: Grasp, solver, dt: float, force: float, t0: float = 1.0, t1: float = 10.0) -> float:
    """Mean slip speed [m/s] of the capsule along gravity from ``t0`` to ``t1`` [s], the pads squeezed by
    ``force`` [N] each."""
    model = scene.model
    control = model.control()
    f = np.zeros(model.joint_dof_count, dtype=np.float32)
    f[scene.pad_dofs[0]] = force
    f[scene.pad_dofs[1]] = -force
    control.joint_f.assign(f)
    zs = {}
    k0, k1 = int(round(t0 / dt)), int(round(t1 / dt))

    def after(k, state):
        if k in (k0, k1):
            zs[k] = float(state.body_q.numpy()[scene.capsule, 2])

    simulate(model, solver, dt, k1, control=control, after=after)
    return abs(zs[k1] - zs[k0]) / (t1 - t0)


GRIPPER_BOX_HALF = 0.05  # [m] half extent of the lifted cube
GRIPPER_BOX_MASS = 0.5  # [kg]
GRIPPER_SQUEEZE = 20.0  # [N] each finger's effort limit
GRIPPER_LIFT = 0.1  # [m]


@dataclass
class Gripper:
    """A lift joint carrying two prismatic fingers, and a box on the ground between them."""

    model: newton.Model
    box: int
    palm: int
    lift_coord: int  # coordinate indices (``joint_q``, ``Control.joint_target_q``)
    finger_coords: tuple[int, int]


def gripper(device: str = "cpu") -> Gripper:
    """A two-finger gripper: a palm on a vertical prismatic joint from the world, two fingers on prismatic
    joints along x from the palm, all position-driven (fingers effort-limited to ``GRIPPER_SQUEEZE``); a 0.5 kg,
    0.1 m cube rests on the ground between the open fingers (mu 0.8)."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.8)
    box_cfg = newton.ModelBuilder.ShapeConfig(mu=0.8, density=GRIPPER_BOX_MASS / (2.0 * GRIPPER_BOX_HALF) ** 3)
    box = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, GRIPPER_BOX_HALF), wp.quat_identity()))
    builder.add_shape_box(box, hx=GRIPPER_BOX_HALF, hy=GRIPPER_BOX_HALF, hz=GRIPPER_BOX_HALF, cfg=box_cfg)
    builder.add_ground_plane(cfg=cfg)
    z = GRIPPER_BOX_HALF  # palm at the box's centre height; the fingers hang from it
    palm = builder.add_link(xform=wp.transform(wp.vec3(0.0, 0.0, z), wp.quat_identity()), mass=1.0,
                            inertia=wp.mat33(np.eye(3) * 1e-3))
    lift = builder.add_joint_prismatic(-1, palm, parent_xform=wp.transform(wp.vec3(0.0, 0.0, z), wp.quat_identity()),
                                       axis=(0.0, 0.0, 1.0), target_ke=2.0e4, target_kd=400.0)
    joints = [lift]
    finger_cfg = newton.ModelBuilder.ShapeConfig(mu=0.8, density=1000.0)
    for side in (-1.0, 1.0):
        x = side * (GRIPPER_BOX_HALF + 0.01 + 0.01)
        finger = builder.add_link(xform=wp.transform(wp.vec3(x, 0.0, z), wp.quat_identity()))
        builder.add_shape_box(finger, hx=0.01, hy=0.03, hz=0.03, cfg=finger_cfg)
        joints.append(builder.add_joint_prismatic(
            palm, finger, parent_xform=wp.transform(wp.vec3(x, 0.0, 0.0), wp.quat_identity()), axis=(1.0, 0.0, 0.0),
            target_ke=5.0e3, target_kd=50.0, effort_limit=GRIPPER_SQUEEZE, limit_lower=-0.05, limit_upper=0.05))
    builder.add_articulation(joints)
    model = builder.finalize(device=device)
    starts = [builder.joint_q_start[j] for j in joints]
    return Gripper(model, box, palm, starts[0], (starts[1], starts[2]))


def gripper_lift(scene: Gripper, solver, dt: float, hold: float = 10.0) -> dict:
    """Close (0.5 s), lift ``GRIPPER_LIFT`` over 1 s, hold ``hold`` [s]: the box's height gain [m] and its slip
    relative to the palm over the hold [m]."""
    model = scene.model
    target = np.zeros(model.joint_coord_count, dtype=np.float32)
    close = 0.03  # [m] each finger's target travel: past the box face, so the effort limit sets the squeeze
    target[scene.finger_coords[0]] = close
    target[scene.finger_coords[1]] = -close
    steps = int(round((1.5 + hold) / dt))
    rel = {}

    def before(k, state, control):
        target[scene.lift_coord] = GRIPPER_LIFT * min(max(k * dt - 0.5, 0.0), 1.0)
        control.joint_target_q.assign(target)

    def after(k, state):
        if k in (int(round(1.5 / dt)), steps):
            q = state.body_q.numpy()
            rel[k] = float(q[scene.box, 2] - q[scene.palm, 2])

    state = simulate(model, solver, dt, steps, control=model.control(), before=before, after=after)
    q = state.body_q.numpy()
    first, last = sorted(rel)
    return {"lifted_m": float(q[scene.box, 2] - GRIPPER_BOX_HALF), "slip_m": abs(rel[last] - rel[first])}


# ----------------------------------------------------------------------------------------------
# The table: the ramp grid, ours beside Newton's reference and MuJoCo C
# ----------------------------------------------------------------------------------------------

GRID_MU = (0.1, 0.3, 0.5, 0.7, 1.0)
GRID_ANGLES = (3, 10, 20, 30, 40)  # [deg]
HOLD_LIMIT = 1.0e-6  # [m] "holds": moved less than this from 1 s to 4 s
SLIDE_TOLERANCE = 1.0e-3  # "slides": acceleration within 0.1 % of g (sin - mu cos)


def _mujoco_ramp(angle_deg: float, mu: float, dt: float):
    """The plane ramp (tilted about y) as MuJoCo C with its default contact model: (model, data)."""
    import mujoco

    half = math.radians(angle_deg) / 2.0
    quat = f"{math.cos(half)} 0 {math.sin(half)} 0"  # w x y z
    n = (math.sin(2 * half), 0.0, math.cos(2 * half))
    pos = " ".join(f"{c * (BOX_HALF + 1e-4)}" for c in n)
    xml = f"""<mujoco><option timestep="{dt}" gravity="0 0 {-G}"/><worldbody>
      <geom type="plane" size="0 0 1" quat="{quat}" friction="{mu} 0.005 0.0001"/>
      <body pos="{pos}" quat="{quat}"><freejoint/>
        <geom type="box" size="{BOX_HALF} {BOX_HALF} {BOX_HALF}" density="1000" friction="{mu} 0.005 0.0001"/>
      </body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    return model, mujoco.MjData(model)


def _mujoco_positions(angle_deg: float, mu: float, dt: float, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    import mujoco

    model, data = _mujoco_ramp(angle_deg, mu, dt)
    ts, ps = [], []
    for k in range(1, int(round(seconds / dt)) + 1):
        mujoco.mj_step(model, data)
        ts.append(k * dt)
        ps.append(data.qpos[:3].copy())
    return np.array(ts), np.array(ps)


def _newton_positions(scene: Ramp, solver_class, dt: float, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    ts, ps = [], []
    _run(scene, solver_class(scene.model), dt, seconds, lambda t, s: (ts.append(t), ps.append(_relative(scene, s))))
    return np.array(ts), np.array(ps)


def grid_outcome(ts: np.ndarray, ps: np.ndarray, frame: np.ndarray, angle: float, mu: float) -> str:
    """``hold`` / ``slide`` when the run does what Coulomb's law says within the limits, else what it did."""
    holds = math.tan(angle) < mu
    if holds:
        k0, k1 = np.searchsorted(ts, 1.0), np.searchsorted(ts, 4.0)
        moved = float(np.linalg.norm(ps[min(k1, len(ts) - 1)] - ps[k0]))
        return f"holds ({moved:.1e} m)" if moved < HOLD_LIMIT else f"**creeps {moved:.1e} m**"
    late = ts > 0.5 * ts[-1]
    down = ps[late] @ frame[:, 0]
    accel = 2.0 * float(np.polyfit(ts[late], down, 2)[0])
    rel = accel / coulomb_acceleration(angle, mu) - 1.0
    return f"slides ({rel:+.1e})" if abs(rel) < SLIDE_TOLERANCE else f"**slides {rel:+.1e}**"


def ramp_grid(dt: float, solvers: dict, log=print) -> list[dict]:
    """Every (mu, angle) of the grid on a plane shape tilted about y, with each solver; 4 s simulated."""
    rows = []
    for mu in GRID_MU:
        for angle_deg in GRID_ANGLES:
            row = {"mu": mu, "angle": angle_deg}
            for name, cls in solvers.items():
                scene = ramp(angle_deg, mu)
                if cls == "mujoco":
                    ts, ps = _mujoco_positions(angle_deg, mu, dt, 4.0)
                else:
                    ts, ps = _newton_positions(scene, cls, dt, 4.0)
                row[name] = grid_outcome(ts, ps, scene.frame, scene.angle, mu)
            log(f"  mu {mu} angle {angle_deg}: " + ", ".join(f"{k} {row[k]}" for k in solvers), flush=True)
            rows.append(row)
    return rows


def _mujoco_stack(masses, dt: float):
    import mujoco

    bodies = "".join(
        f'<body pos="0 0 {BOX_HALF * (2 * i + 1)}"><freejoint/><geom type="box" size="{BOX_HALF} {BOX_HALF} '
        f'{BOX_HALF}" mass="{m}" friction="0.5 0.005 0.0001"/></body>' for i, m in enumerate(masses))
    xml = (f'<mujoco><option timestep="{dt}" gravity="0 0 {-G}"/><worldbody><geom type="plane" size="0 0 1" '
           f'friction="0.5 0.005 0.0001"/>{bodies}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    return model, mujoco.MjData(model)


def stack_outcome(masses, solver_class, dt: float, seconds: float = 3.0) -> str:
    """Largest sink and hop [m] of any box over ``seconds`` (from its start height), and finiteness; the Newton
    side is ``benchmarks/mass_ratio.py``'s scene and measure."""
    from .mass_ratio import box_stack, sink_and_hop

    if solver_class == "mujoco":
        import mujoco

        model, data = _mujoco_stack(masses, dt)
        start = np.array([BOX_HALF * (2 * i + 1) for i in range(len(masses))])
        sink = hop = 0.0
        for _ in range(int(round(seconds / dt))):
            mujoco.mj_step(model, data)
            z = data.qpos.reshape(-1, 7)[:, 2]
            sink, hop = max(sink, float((start - z).max())), max(hop, float((z - start).max()))
        finite = bool(np.isfinite(data.qpos).all())
    else:
        import warnings

        model = box_stack(masses, half=BOX_HALF)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the mass-ratio warning is the point of the scene
            solver = solver_class(model)
        sink, hop, finite = sink_and_hop(model, solver, dt, seconds)
    if not finite:
        return "**not finite**"
    text = f"sink {sink * 1e3:.2f} mm, hop {hop * 1e3:.2f} mm"
    return text if sink < 1e-3 and hop < 1e-3 else f"**{text}**"


def _mujoco_grasp_slip(force: float, dt: float, t0: float = 1.0, t1: float = 4.0) -> float:
    """The pinch as MuJoCo C (two slide joints pushed by ``force`` [N] through ``qfrc_applied``): the capsule's
    mean slip speed [m/s]."""
    import mujoco

    z = 0.5
    pad = PAD_HALF
    pads = "".join(
        f'<body pos="{s * (GRASP_RADIUS + pad[0])} 0 {z}"><joint name="pad{k}" type="slide" axis="1 0 0"/>'
        f'<geom type="box" size="{pad[0]} {pad[1]} {pad[2]}" mass="{PAD_MASS}" friction="{GRASP_MU} 0.005 0.0001"/>'
        f"</body>" for k, s in enumerate((-1.0, 1.0)))
    xml = (f'<mujoco><option timestep="{dt}" gravity="0 0 {-G}"/><worldbody>{pads}'
           f'<body pos="0 0 {z}"><freejoint/><geom type="capsule" size="{GRASP_RADIUS} {GRASP_HALF_HEIGHT}" '
           f'quat="0.7071068 0.7071068 0 0" mass="{GRASP_MASS}" friction="{GRASP_MU} 0.005 0.0001"/></body>'
           f"</worldbody></mujoco>")
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    marks = {}
    k0, k1 = int(round(t0 / dt)), int(round(t1 / dt))
    for k in range(1, k1 + 1):
        data.qfrc_applied[0] = force
        data.qfrc_applied[1] = -force
        mujoco.mj_step(model, data)
        if k in (k0, k1):
            marks[k] = float(data.qpos[4])  # the capsule's free joint z (after the two slide joints)
    return abs(marks[k1] - marks[k0]) / (t1 - t0)


def main(argv=None) -> int:
    import argparse
    import os

    import newton.solvers

    from steel.solvers import SolverSteel

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="results/bench", help="folder for statics.md")
    p.add_argument("--dt", type=float, default=1.0 / 240.0, help="time step [s]")
    p.add_argument("--no-mujoco", action="store_true", help="leave MuJoCo C out")
    args = p.parse_args(argv)
    if not (args.dt > 0.0 and math.isfinite(args.dt)):
        raise ValueError(f"--dt must be a positive number, got {args.dt}")
    solvers = {"ours": SolverSteel, "reference": newton.solvers.SolverSteel}
    if not args.no_mujoco:
        solvers["mujoco"] = "mujoco"
    print(f"[statics] ramp grid: {len(GRID_MU) * len(GRID_ANGLES)} cases x {len(solvers)} solvers, dt {args.dt:.6g} s")
    rows = ramp_grid(args.dt, solvers)
    lines = [f"Ramp grid: a 0.2 m box on a plane shape tilted about y, dt {args.dt:.6g} s, default options. "
             f"Below the critical angle (tan < mu) *holds* means it moved < {HOLD_LIMIT:g} m from 1 s to 4 s; above "
             f"it *slides* means its acceleration is within {SLIDE_TOLERANCE:.1%} of g (sin - mu cos) (relative "
             "error in brackets). Bold: the law is not met.", "",
             "| mu | angle | " + " | ".join(solvers) + " |", "|---|---|" + "---|" * len(solvers)]
    lines += [f"| {r['mu']} | {r['angle']} | " + " | ".join(r[k] for k in solvers) + " |" for r in rows]

    print("[statics] mass-ratio stacks")
    lines += ["", f"Mass-ratio stacks: 0.2 m boxes (masses bottom first [kg]) on the ground, mu 0.5, dt {args.dt:.6g} s, "
              "3 s, default options; the largest sink and hop of any box from its start height. Bold: above 1 mm.", "",
              "| stack | " + " | ".join(solvers) + " |", "|---|" + "---|" * len(solvers)]
    from .mass_ratio import STACKS

    for name, masses in STACKS.items():
        cells = [stack_outcome(masses, cls, args.dt) for cls in solvers.values()]
        print(f"  {name}: " + ", ".join(f"{k} {c}" for k, c in zip(solvers, cells)), flush=True)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    print("[statics] grasp")
    lines += ["", f"Grasp: a 45 g capsule (radius 4 mm) pinched by two pads (mu 0.7) on prismatic joints pushed by F [N] "
              f"each, gravity on, dt {args.dt:.6g} s: mean slip speed from 1 s to 4 s [m/s].", "",
              "| F | " + " | ".join(solvers) + " |", "|---|" + "---|" * len(solvers)]
    for force in (12.0, 30.0, 60.0):
        cells = []
        for cls in solvers.values():
            if cls == "mujoco":
                cells.append(f"{_mujoco_grasp_slip(force, args.dt):.2e}")
            else:
                scene = grasp()
                cells.append(f"{grasp_slip(scene, cls(scene.model), args.dt, force, 1.0, 4.0):.2e}")
        print(f"  F {force:g}: " + ", ".join(f"{k} {c}" for k, c in zip(solvers, cells)), flush=True)
        lines.append(f"| {force:g} | " + " | ".join(cells) + " |")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "statics.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"[statics] wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


