"""The settled start: contact scenes are timed only once they have landed and carry their load.

A contact solver's cost depends on what its contacts do: a humanoid still falling through the air has a
few speculative contacts and nothing to push against, one lying on the ground has dozens of rows that
act in every sweep. So before the timed window each contact scene runs :data:`SETTLE_S` simulated
seconds untimed (the same simulated time at every time step, so ``dt`` 1/240 and 1/600 start from
the same moment of the motion), with every candidate's own dynamics (ours, Newton's reference, MuJoCo
C), and the state at the start of the window is checked and recorded (:func:`newton_start`,
:func:`mujoco_start`): every body slower than :data:`SPEED_MAX`, every world in contact, and the
scene's own pose (the humanoid lying, the ant standing, every box resting on a support).

Why a fixed simulated time rather than "step until still": the window must start at the same moment
for every candidate, and a solver that never comes to rest (a penalty contact that jitters, a row
pool that overflows and lets bodies sink) must still be timed, and flagged, not waited on forever.
The times were read off runs of each candidate at both time steps and leave a margin: our towers rest
from 0.75 s (the highest box falls 1.5 m, 0.55 s; MuJoCo's come to rest later), our ant stands still from
0.5 s, and the humanoid lies still from about 4.2 s in ours (a hand topples over before) and 3.5 s in
MuJoCo (it stumbles before it falls). ``tests/test_bench_settle.py`` checks ours at 1/240 s at those
times.

Scenes without contact load (``chain``, ``cartpole``) have no settled state (an undamped pendulum
swings forever) and keep the runner's short ``--warmup``.
"""

from __future__ import annotations

import math

import numpy as np

import newton

from .scenes import Scene

# Simulated time [s] run untimed before the window, per contact scene; see the module docstring.
SETTLE_S = {"tower": 1.5, "humanoid": 4.5, "ant": 1.0}
SPEED_MAX = 0.1  # [m/s] largest body speed of a settled scene (a falling body passes 1 m/s within 0.1 s)
TOUCH_GAP = 1.0e-3  # [m] a Newton contact whose separation is at most this carries load ("touching")
HUMANOID_LYING_Z = 0.5  # [m] torso height below which the humanoid lies (standing: 1.3 m, lying: 0.08-0.33 m)
ANT_STANDING_Z = 0.4  # [m] torso height above which the ant stands on its legs (its torso sphere has radius 0.25 m)


def settle_steps(scene_name: str, dt: float) -> int:
    """Untimed steps before the window: ``SETTLE_S[scene] / dt`` rounded, 0 for scenes without contact load."""
    if not (isinstance(dt, float) and math.isfinite(dt) and dt > 0.0):
        raise ValueError(f"dt must be a positive finite float [s], got {dt!r}")
    return int(round(SETTLE_S.get(scene_name, 0.0) / dt))


def _rotate(q_xyzw: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``v`` rotated by unit quaternions (x, y, z, w), row by row."""
    u, w = q_xyzw[:, :3], q_xyzw[:, 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def touching_per_world(model: newton.Model, body_q: np.ndarray, contacts: newton.Contacts) -> np.ndarray:
    """Contacts per world whose separation is at most :data:`TOUCH_GAP` [m], shape ``(world_count,)``.

    The separation of a contact is ``n . (p1 - p0) - (margin0 + margin1)``, its points taken from the
    bodies' frames to the world with ``body_q`` (the state the contacts were found on); the pipeline
    also reports speculative contacts up to the shapes' gap apart, which carry nothing. A contact
    with the shared ground (world -1) counts for the other shape's world.
    """
    n = int(contacts.rigid_contact_count.numpy()[0])
    out = np.zeros(max(int(model.world_count), 1), dtype=np.int64)
    if n == 0:
        return out
    shape_body, shape_world = model.shape_body.numpy(), model.shape_world.numpy()
    s0, s1 = contacts.rigid_contact_shape0.numpy()[:n], contacts.rigid_contact_shape1.numpy()[:n]

    def world_point(shapes, points):
        body = shape_body[shapes]
        moving = body >= 0
        q = body_q[np.where(moving, body, 0)]
        placed = _rotate(q[:, 3:7], points) + q[:, :3]
        return np.where(moving[:, None], placed, points)

    p0 = world_point(s0, contacts.rigid_contact_point0.numpy()[:n].astype(np.float64))
    p1 = world_point(s1, contacts.rigid_contact_point1.numpy()[:n].astype(np.float64))
    normal = contacts.rigid_contact_normal.numpy()[:n].astype(np.float64)
    margin = contacts.rigid_contact_margin0.numpy()[:n] + contacts.rigid_contact_margin1.numpy()[:n]
    gap = np.einsum("ij,ij->i", normal, p1 - p0) - margin
    world = np.maximum(shape_world[s0], shape_world[s1])
    touching = (gap <= TOUCH_GAP) & (world >= 0)
    np.add.at(out, world[touching], 1)
    return out


def verdict(scene_name: str, finite: bool, speed_max: float, touching: np.ndarray, watched_z: np.ndarray,
            bodies_per_world: int) -> tuple[bool, list[str]]:
    """Whether a window start is settled, and the reasons it is not.

    Args:
        scene_name: the scene.
        finite: the whole state is free of NaN/inf.
        speed_max: largest body speed, all worlds [m/s].
        touching: contacts carrying load per world (Newton: :func:`touching_per_world`; MuJoCo: ``d.ncon``).
        watched_z: height of each world's first watched body [m] (the torso), shape ``(worlds,)``.
        bodies_per_world: bodies in one world (the tower needs a loaded contact per box).
    """
    if not finite:
        return False, ["NaN"]
    reasons = []
    if not speed_max < SPEED_MAX:
        reasons.append(f"moving {speed_max:.2f} m/s")
    need = bodies_per_world if scene_name == "tower" else 1
    if touching.size == 0 or touching.min() < need:
        reasons.append(f"{int(touching.min()) if touching.size else 0} contacts in a world (< {need})")
    if scene_name == "humanoid" and watched_z.size and watched_z.max() >= HUMANOID_LYING_Z:
        reasons.append(f"torso at {watched_z.max():.2f} m (not lying)")
    if scene_name == "ant" and watched_z.size and watched_z.min() <= ANT_STANDING_Z:
        reasons.append(f"torso at {watched_z.min():.2f} m (not standing)")
    return not reasons, reasons


def _record(scene_name: str, t: float, finite: bool, speed_max: float, touching: np.ndarray, watched_z: np.ndarray,
            bodies_per_world: int, contact_word: str) -> dict:
    settled, reasons = verdict(scene_name, finite, speed_max, touching, watched_z, bodies_per_world)
    res = {
        "t_s": float(t),
        "settled": settled,
        "speed_max_mps": float(speed_max),
        "contacts_min_per_world": int(touching.min()) if touching.size else 0,
        "contacts_mean_per_world": float(touching.mean()) if touching.size else 0.0,
        "reasons": reasons,
    }
    pose = ""
    if scene_name in ("humanoid", "ant") and watched_z.size:
        res["torso_z_min_m"], res["torso_z_max_m"] = float(watched_z.min()), float(watched_z.max())
        pose = f"torso {watched_z.min():.2f}-{watched_z.max():.2f} m, " if np.ptp(watched_z) > 5e-3 else \
            f"torso {watched_z.mean():.2f} m, "
    word = "settled" if settled else "NOT settled: " + "; ".join(reasons)
    res["text"] = (f"t {t:.2f} s: {pose}v<={speed_max:.3f} m/s, {contact_word} "
                   f"{res['contacts_mean_per_world']:.0f}/world (min {res['contacts_min_per_world']}), {word}")
    return res


def newton_start(scene: Scene, state: newton.State, contacts: newton.Contacts, t: float) -> dict:
    """The settle check of a Newton state at time ``t`` [s]; ``contacts`` must be fresh for ``state``.

    Returns ``{"t_s", "settled", "speed_max_mps", "contacts_min_per_world", "contacts_mean_per_world",
    "reasons", "text"}`` (plus ``torso_z_min_m``/``torso_z_max_m`` for the humanoid and ant).
    """
    body_q = state.body_q.numpy().astype(np.float64)
    body_qd = state.body_qd.numpy().astype(np.float64)
    finite = bool(np.isfinite(body_q).all() and np.isfinite(body_qd).all())
    # body_qd is (linear [m/s], angular [rad/s]), linear first.
    speed = float(np.linalg.norm(body_qd[:, :3], axis=1).max()) if len(body_qd) else 0.0
    touching = touching_per_world(scene.model, body_q, contacts) if finite else np.zeros(0, dtype=np.int64)
    z = body_q[scene.watched_global()[:, 0], 2] if scene.watched else np.zeros(0)
    return _record(scene.name, t, finite, speed, touching, z, scene.bodies_per_world, "touching")


def mujoco_start(scene_name: str, m, datas: list, watched: list[int]) -> dict:
    """The settle check of MuJoCo worlds (one ``MjData`` each); contacts are MuJoCo's own (``d.ncon``, those
    within the geoms' margin, which MuJoCo's solver acts on). Returns what :func:`newton_start` does."""
    import mujoco  # noqa: PLC0415 - optional dependency

    finite = all(np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all() for d in datas)
    vel = np.zeros(6)
    speed = 0.0
    for d in datas:
        for b in range(1, m.nbody):
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, b, vel, 0)  # (angular, linear), world frame
            speed = max(speed, float(np.linalg.norm(vel[3:])))
    touching = np.array([d.ncon for d in datas], dtype=np.int64)
    z = np.array([d.xpos[watched[0]][2] for d in datas]) if watched else np.zeros(0)
    return _record(scene_name, datas[0].time if datas else 0.0, finite, speed, touching, z, m.nbody - 1, "contacts")
