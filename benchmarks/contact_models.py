"""SolverSteel's seed-only contact models timed against MuJoCo C, for the record.

``steel:condim`` 6 (torsional and rolling friction) and ``steel:adhesion`` exist in the seed but not
in Newton's reference solver, so there is no reference row to take a ratio against; MuJoCo C, whose
laws they borrow, runs the same MJCF. Both backends read one MJCF string per scene: MuJoCo compiles
it, Newton's importer builds one world from it (geom ``adhesion`` into ``steel:adhesion``; the
importer leaves ``condim`` to ``mujoco:condim``, so ``steel:condim`` is set to 6 on every shape after
import), replicated ``worlds`` times; MuJoCo steps ``worlds`` separate ``MjData``, single thread.

* ``rolling_balls`` (condim 6): 16 balls of radius 5 cm launched rolling at 1 m/s on a plane with
  friction ``1 0.005 0.01``; rolling friction stops them after ~0.7 s (5 mu_r g / (7 R) = 1.4 m/s^2).
  Sanity: the mean ball speed [m/s] after the run (predicted max(0, 1 - 1.4 t)).
* ``hanging_cubes`` (adhesion): 8 cubes of 0.1 kg (W = 0.98 N) held under a static ceiling only by
  adhesion, 1 N per contact point at 4 points; they must stay (both backends hang them at the 1 cm
  margin). Sanity: the largest drop [m].

Timed like :mod:`benchmarks.measure`: untimed warm-up steps (kernel compilation), then ``steps``
steps of collide-then-step, best of ``repeats``.
"""

from __future__ import annotations

import contextlib
import tempfile
import time

import numpy as np
import warp as wp

import newton

DT = 1.0 / 600.0  # [s] the shipped scenes' step
DEFAULT_STEPS = 300
DEFAULT_WARMUP = 10
DEFAULT_WORLDS = 16
BALL_R = 0.05  # [m]
BALL_V = 1.0  # [m/s]
CUBE_HALF = 0.05  # [m]


def _balls_mjcf(dt: float) -> str:
    balls = "\n".join(
        f'<body name="ball{i}" pos="{0.3 * (i % 4)} {0.3 * (i // 4)} {BALL_R}"><freejoint/>'
        f'<geom type="sphere" size="{BALL_R}" density="1000" condim="6" friction="1 0.005 0.01"/></body>'
        for i in range(16))
    return f"""<mujoco model="rolling_balls"><option timestep="{dt}" cone="elliptic"/>
<worldbody><geom name="floor" type="plane" size="5 5 .1" condim="6" friction="1 0.005 0.01"/>
{balls}
</worldbody></mujoco>"""


def _cubes_mjcf(dt: float) -> str:
    top = 1.0  # [m] the ceiling's underside
    cubes = "\n".join(
        f'<body name="cube{i}" pos="{0.3 * i} 0 {top - CUBE_HALF}"><freejoint/>'
        f'<geom type="box" size="{CUBE_HALF} {CUBE_HALF} {CUBE_HALF}" density="100" adhesion="1" '
        f'margin="0.01" gap="0.01"/></body>'
        for i in range(8))
    return f"""<mujoco model="hanging_cubes"><option timestep="{dt}" cone="elliptic"/>
<worldbody><geom name="ceiling" type="box" size="2 1 0.05" pos="1 0 {top + 0.05}"/>
{cubes}
</worldbody></mujoco>"""


SCENES = {"rolling_balls": _balls_mjcf, "hanging_cubes": _cubes_mjcf}


def _initial_velocity(name: str, body_count: int) -> np.ndarray:
    """Per free body (linear, angular) [m/s, rad/s] at the start: rolling along x for the balls."""
    v = np.zeros((body_count, 6))
    if name == "rolling_balls":
        v[:, 0] = BALL_V
        v[:, 4] = BALL_V / BALL_R  # rolling about +y moves the contact point backward: no slip
    return v


def _sanity(name: str, pos: np.ndarray, vel: np.ndarray, start: np.ndarray, finite: bool) -> dict:
    if not finite:
        return {"nan": True, "text": "NaN"}
    if name == "rolling_balls":
        speed = float(np.linalg.norm(vel[:, :3], axis=-1).mean())
        return {"nan": False, "mean_speed_m_s": speed, "text": f"mean ball speed {speed:.3f} m/s"}
    drop = float((start[:, 2] - pos[:, 2]).max())
    return {"nan": False, "max_drop_m": drop, "text": f"largest drop {drop * 1000:.2f} mm"}


def run_steel(name: str, worlds: int, device, steps: int, warmup: int) -> dict:
    """Time ``steel.solvers.SolverSteel`` (default options) on ``worlds`` copies of the scene."""
    from steel.solvers import SolverSteel  # noqa: PLC0415

    robot = newton.ModelBuilder()
    SolverSteel.register_custom_attributes(robot)
    robot.add_mjcf(SCENES[name](DT))
    scene = newton.ModelBuilder()
    SolverSteel.register_custom_attributes(scene)
    scene.replicate(robot, worlds)
    model = scene.finalize(device=device)
    if name == "rolling_balls":
        model.steel.condim.fill_(6)
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    qd = s0.joint_qd.numpy().reshape(-1, 6)  # every joint is FREE: linear then angular per body
    qd[:] = _initial_velocity(name, len(qd))
    s0.joint_qd.assign(qd.reshape(-1))
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    start = s0.body_q.numpy()[:, :3].copy()
    for i in range(warmup + steps):
        if i == warmup:
            wp.synchronize_device(device)
            t0 = time.perf_counter()
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
    wp.synchronize_device(device)
    seconds = time.perf_counter() - t0
    q, qd = s0.body_q.numpy(), s0.body_qd.numpy()
    finite = bool(np.isfinite(q).all() and np.isfinite(qd).all())
    return {"seconds": seconds, "sanity": _sanity(name, q[:, :3], qd, start, finite)}


def run_mujoco(name: str, worlds: int, steps: int, warmup: int) -> dict:
    """Time MuJoCo C on ``worlds`` separate ``MjData`` of the same MJCF (single thread)."""
    import mujoco  # noqa: PLC0415 - optional dependency

    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):  # MuJoCo writes MUJOCO_LOG.TXT here
        m = mujoco.MjModel.from_xml_string(SCENES[name](DT))
        datas = []
        for _ in range(worlds):
            d = mujoco.MjData(m)
            v = _initial_velocity(name, m.nbody - 1)
            # MuJoCo's free-joint velocity: linear (world), then angular (body frame; bodies start unrotated).
            d.qvel[:] = v.reshape(-1)
            mujoco.mj_forward(m, d)
            datas.append(d)
        start = np.concatenate([d.xpos[1:].copy() for d in datas])
        for d in datas:
            mujoco.mj_step(m, d, warmup)
        t0 = time.perf_counter()
        for d in datas:
            mujoco.mj_step(m, d, steps)
        seconds = time.perf_counter() - t0
        pos = np.concatenate([d.xpos[1:] for d in datas])
        vel = np.concatenate([d.qvel.reshape(-1, 6) for d in datas])
        finite = all(np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all() for d in datas)
    return {"seconds": seconds, "sanity": _sanity(name, pos, vel, start, finite)}


def run(device, steps: int = DEFAULT_STEPS, warmup: int = DEFAULT_WARMUP, repeats: int = 2,
        worlds: int = DEFAULT_WORLDS, t_start: float | None = None) -> list[dict]:
    """Both scenes, ours then MuJoCo C, best of ``repeats``; one dict per (scene, backend)."""
    entries = []
    for name in SCENES:
        for backend in ("SolverSteel", "mujoco C"):
            best = None
            error = None
            for _ in range(repeats):
                try:
                    r = (run_steel(name, worlds, device, steps, warmup) if backend == "SolverSteel"
                         else run_mujoco(name, worlds, steps, warmup))
                except Exception as exc:  # recorded in the table, as the other benchmarks do
                    error = f"{type(exc).__name__}: {exc}"
                    break
                if best is None or r["seconds"] < best["seconds"]:
                    best = r
            entry = {"scene": name, "worlds": worlds, "backend": backend, "steps": steps, "error": error}
            if best is not None:
                entry.update(seconds=best["seconds"], world_steps_per_s=worlds * steps / best["seconds"],
                             sanity=best["sanity"])
            entries.append(entry)
            if t_start is not None:
                rate = f"{entry['world_steps_per_s']:12,.0f} world-steps/s" if best else error
                print(f"[{time.perf_counter() - t_start:7.1f} s] {name} x{worlds} {backend:12s} {rate}  "
                      f"{(best or {}).get('sanity', {}).get('text', '')}", flush=True)
    return entries


def markdown_lines(entries: list[dict]) -> list[str]:
    """The table for ``bench.md``: each scene's SolverSteel row with its speed relative to MuJoCo C."""
    lines = [
        "### Seed-only contact models against MuJoCo C (`benchmarks/contact_models.py`)",
        "",
        "No reference row: Newton's SolverSteel has neither `steel:condim` nor `steel:adhesion`.",
        "",
        "| scene | worlds | backend | world-steps/s | vs MuJoCo C | sanity |",
        "|---|---|---|---|---|---|",
    ]
    mj = {e["scene"]: e.get("world_steps_per_s") for e in entries if e["backend"] == "mujoco C"}
    for e in entries:
        if e.get("error"):
            lines.append(f"| {e['scene']} | {e['worlds']} | {e['backend']} | error: {e['error']} | | |")
            continue
        ratio = ""
        if e["backend"] == "SolverSteel" and mj.get(e["scene"]):
            ratio = f"{e['world_steps_per_s'] / mj[e['scene']]:.2f}x"
        lines.append(f"| {e['scene']} | {e['worlds']} | {e['backend']} | {e['world_steps_per_s']:,.0f} | {ratio} "
                     f"| {e['sanity']['text']} |")
    return lines


if __name__ == "__main__":
    for line in markdown_lines(run(wp.get_preferred_device(), t_start=time.perf_counter())):
        print(line)
