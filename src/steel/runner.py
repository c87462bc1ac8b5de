"""The package's main job: step a scene with one of our solvers, report progress, write results.

``steel run SCENE`` and ``make demo`` (the four towers with SolverSteel) call :func:`run_scene`.
A scene is one of :data:`steel.scenes.SCENES` or a path to an MJCF, URDF or USD file (floating
base, dropped onto a ground plane). Results under ``out_dir``:

* ``summary.json``: scene, solver, worlds, dt, wall time, world-steps/s, NaN check, the largest
  horizontal drift of any root body [m], final root heights [m], dropped constraint rows;
* ``final_state.npz``: ``joint_q``, ``joint_qd``, ``body_q``, ``body_qd`` of the last step;
* ``trajectory.png``: the highest root body [m] and the largest horizontal drift [m] over time
  (needs matplotlib);
* ``motion.usd`` when the USD viewer is used (needs ``usd-core``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import warp as wp

import newton
import newton.viewer

from . import scenes

SOLVERS = ("steel", "featherstone")
VIEWERS = ("null", "usd", "gl")
FRAME_DT = 1.0 / 60.0  # [s] viewer frame interval


def build_model(scene: str, world_count: int, device=None) -> newton.Model:
    """A shipped scene by name, or a robot file (MJCF/URDF/USD) replicated and dropped on a ground plane.

    A robot file is lifted 1 m; an MJCF's own ``floor``/``ground`` geoms are dropped in favour of the
    shared ground plane.
    """
    if scene in scenes.SCENES:
        return scenes.build_scene(scene, world_count, device).model
    path = Path(scene)
    if not path.exists():
        raise ValueError(f"scene {scene!r} is neither a shipped scene ({', '.join(scenes.SCENES)}) nor a file")
    robot = newton.ModelBuilder()
    lift = wp.transform(wp.vec3(0.0, 0.0, 1.0), wp.quat_identity())
    suffix = path.suffix.lower()
    if suffix == ".xml":
        # The file's own floor is replaced by the one ground plane every world shares.
        robot.add_mjcf(str(path), xform=lift, ignore_names=["floor", "ground"])
    elif suffix == ".urdf":
        robot.add_urdf(str(path), xform=lift, floating=True)
    elif suffix in (".usd", ".usda", ".usdc"):
        robot.add_usd(str(path))
    else:
        raise ValueError(f"scene file {scene!r} must be .xml (MJCF), .urdf or .usd/.usda/.usdc")
    world = newton.ModelBuilder()
    world.replicate(robot, world_count)
    world.add_ground_plane()
    return world.finalize(device=device)


def make_solver(name: str, model: newton.Model):
    """``"steel"`` or ``"featherstone"`` with default options."""
    from .solvers import SolverFeatherstone, SolverSteel

    if name == "steel":
        return SolverSteel(model)
    if name == "featherstone":
        return SolverFeatherstone(model)
    raise ValueError(f"solver must be one of {SOLVERS}, got {name!r}")


def make_viewer(kind: str, out_dir: Path, frames: int):
    """Newton's viewer of that kind; raises a clear error, before any work, if it cannot run."""
    if kind == "null":
        return newton.viewer.ViewerNull(num_frames=frames)
    if kind == "usd":
        try:
            import pxr  # noqa: F401
        except ImportError as exc:
            raise RuntimeError("--viewer usd needs the usd-core package (pip install usd-core)") from exc
        return newton.viewer.ViewerUSD(str(out_dir / "motion.usd"), fps=int(round(1.0 / FRAME_DT)), num_frames=frames)
    if kind == "gl":
        try:
            return newton.viewer.ViewerGL()
        except Exception as exc:  # no display, no pyglet
            raise RuntimeError(f"--viewer gl could not open a window ({exc})") from exc
    raise ValueError(f"viewer must be one of {VIEWERS}, got {kind!r}")


def run_scene(
    scene: str = "tower",
    solver: str = "steel",
    world_count: int = 1,
    seconds: float = 10.0,
    dt: float = 1.0 / 240.0,
    viewer: str = "null",
    out_dir: str | Path | None = None,
    device=None,
    log=print,
) -> dict:
    """Simulate ``scene`` for ``seconds`` [s] at time step ``dt`` [s]; see the module docstring."""
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    if viewer not in VIEWERS:
        raise ValueError(f"viewer must be one of {VIEWERS}, got {viewer!r}")
    if not isinstance(world_count, int) or world_count < 1:
        raise ValueError(f"world_count must be a positive int, got {world_count!r}")
    if not (seconds > 0.0 and np.isfinite(seconds)) or not (dt > 0.0 and np.isfinite(dt)):
        raise ValueError(f"seconds and dt must be positive and finite, got {seconds!r}, {dt!r}")
    name = Path(scene).stem if scene not in scenes.SCENES else scene
    out = Path(out_dir) if out_dir is not None else Path("results") / "run" / name
    out.mkdir(parents=True, exist_ok=True)

    model = build_model(scene, world_count, device)
    sim = make_solver(solver, model)
    steps = int(round(seconds / dt))
    substeps = max(int(round(FRAME_DT / dt)), 1)
    view = make_viewer(viewer, out, steps // substeps + 1)
    view.set_model(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    roots = _root_bodies(model)
    start_xy = s0.body_q.numpy()[roots, :2].copy()
    times, top, drift = [], [], []
    log(f"[steel] {name}: {world_count} world(s), {solver} solver, {steps} steps of {dt:.5f} s on {model.device}")
    report_every = max(steps // 10, 1)
    wall = 0.0
    for n in range(1, steps + 1):
        t0 = time.perf_counter()
        pipeline.collide(s0, contacts)
        sim.step(s0, s1, None, contacts, dt)
        s0, s1 = s1, s0
        if n > 1:  # the first step compiles kernels: keep it out of the speed figure
            wall += time.perf_counter() - t0
        frame = n % substeps == 0 or n == steps
        report = n % report_every == 0 or n == steps
        if frame or report:
            q = s0.body_q.numpy()
            times.append(n * dt)
            top.append(float(q[roots, 2].max()))
            drift.append(float(np.linalg.norm(q[roots, :2] - start_xy, axis=1).max()))
        if frame:
            view.begin_frame(n * dt)
            view.log_state(s0)
            view.end_frame()
        if report:
            log(f"  t = {n * dt:6.2f} s  highest root {top[-1]:.3f} m  max drift {1000 * drift[-1]:.2f} mm  "
                f"({world_count * max(n - 1, 1) / max(wall, 1e-9):.0f} world-steps/s)")
    view.close()

    finite = bool(np.isfinite(s0.joint_q.numpy()).all() and np.isfinite(s0.body_q.numpy()).all())
    summary = {
        "scene": name,
        "solver": solver,
        "world_count": world_count,
        "dt": dt,
        "steps": steps,
        "device": str(model.device),
        "wall_seconds": wall,
        "world_steps_per_second": world_count * max(steps - 1, 1) / max(wall, 1e-9),
        "finite": finite,
        "max_horizontal_drift_m": float(max(drift)),
        "final_drift_m": float(drift[-1]),
        "final_root_height_m": s0.body_q.numpy()[roots, 2].astype(float).tolist(),
        "rows_dropped": _rows_dropped(sim),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    np.savez(out / "final_state.npz", joint_q=s0.joint_q.numpy(), joint_qd=s0.joint_qd.numpy(),
             body_q=s0.body_q.numpy(), body_qd=s0.body_qd.numpy())
    _plot(out / "trajectory.png", times, top, drift, name, log)
    log(f"[steel] done: {summary['world_steps_per_second']:.0f} world-steps/s, max drift "
        f"{1000 * summary['max_horizontal_drift_m']:.2f} mm, finite={finite}; results in {out}/")
    return summary


def _root_bodies(model: newton.Model) -> np.ndarray:
    """The child of each articulation's first joint (a tower box, a robot's torso)."""
    if model.articulation_count == 0:
        return np.arange(model.body_count)
    start = model.articulation_start.numpy()[:-1]
    return model.joint_child.numpy()[start]


def _rows_dropped(sim) -> int:
    rows = getattr(sim, "rows", None)
    return int(rows.world_rows_dropped.numpy().sum()) if rows is not None else 0


def _plot(path: Path, times, top, drift, name, log) -> None:
    two_panel_plot(path, times, (top, "highest root body [m]", f"{name}: height"),
                   (1000.0 * np.asarray(drift), "max horizontal drift [mm]", f"{name}: drift"), log)


def two_panel_plot(path: Path, times, left, right, log, right_steps: bool = False) -> None:
    """Two time series side by side, each ``(values, y label, title)``; a note instead without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("  (matplotlib not installed: no plot)")
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, (values, ylabel, title), steps in zip(axes, (left, right), (False, right_steps), strict=True):
        if steps:
            ax.step(times, values, where="post")
        else:
            ax.plot(times, values)
        ax.set(xlabel="t [s]", ylabel=ylabel, title=title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
