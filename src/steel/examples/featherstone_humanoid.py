"""nv_humanoid dropped on a ground plane, stepped by :class:`steel.solvers.SolverFeatherstone`.

``python -m steel.examples featherstone_humanoid [--viewer null|usd|gl] [--worlds N] [--seconds T]``

Each frame of 1/60 s runs four substeps of ``dt = 1/240 s`` (collide, then step), the step size at
which Newton's reference SolverFeatherstone goes NaN on this scene (see
:mod:`steel.solvers.featherstone.forces` for why ours does not). Prints the torso height of world 0
every half second and writes ``summary.json`` to ``--out``. Viewers (Newton's):

* ``null`` (default): no output besides the summary;
* ``usd``: also ``featherstone_humanoid.usd`` in ``--out``, one time sample per frame. Needs
  ``usd-core`` (``pip install usd-core``, part of the ``dev`` extra); without it the example stops
  before simulating with a message saying so (exit status 2) rather than failing inside Newton;
* ``gl``: an interactive window; needs ``pyglet >= 2`` and a display, and says so otherwise.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np
import warp as wp

import newton
import newton.examples
import newton.viewer

from ..solvers import SolverFeatherstone

FRAME_DT = 1.0 / 60.0  # [s]
SUBSTEPS = 4  # dt = 1/240 s
START_Z = 1.5  # torso start height [m]


def build(world_count: int, device=None) -> newton.Model:
    """``world_count`` nv_humanoids at 1.5 m over one shared ground plane."""
    robot = newton.ModelBuilder()
    robot.add_mjcf(
        newton.examples.get_asset("nv_humanoid.xml"),
        xform=wp.transform(wp.vec3(0.0, 0.0, START_Z), wp.quat_identity()),
        ignore_names=["floor", "ground"],
    )
    scene = newton.ModelBuilder()
    scene.replicate(robot, world_count)
    scene.add_ground_plane()
    return scene.finalize(device=device)


USD_PATH = "featherstone_humanoid.usd"  # file name of the USD output in --out


def _stop(message: str):
    """Print ``message`` to stderr and exit with status 2 (a missing optional dependency)."""
    print(f"[steel] {message}", file=sys.stderr)
    raise SystemExit(2)


def _require_viewer_dependencies(kind: str) -> None:
    """Stop with a clear message, before any work, if the viewer's optional dependency is missing."""
    if kind == "usd" and importlib.util.find_spec("pxr") is None:
        _stop(
            "--viewer usd needs the usd-core package (pip install usd-core, or the steel 'dev' extra); "
            "nothing was simulated or written. Use --viewer null to run without output."
        )


def _viewer(kind: str, out: Path, frames: int):
    """The requested Newton viewer (see the module docstring)."""
    if kind == "usd":
        return newton.viewer.ViewerUSD(str(out / USD_PATH), fps=int(round(1.0 / FRAME_DT)), num_frames=frames)
    if kind == "gl":
        try:
            return newton.viewer.ViewerGL()
        except Exception as exc:  # pyglet missing, no display, no OpenGL context
            _stop(f"--viewer gl could not open a window ({exc}); it needs pyglet >= 2 and a display")
    return newton.viewer.ViewerNull(num_frames=frames)


def run_featherstone_humanoid(argv: list[str] | None = None, log=print) -> dict:
    """Run the example (arguments as on the command line) and return its summary."""
    p = argparse.ArgumentParser(prog="python -m steel.examples featherstone_humanoid")
    p.add_argument("--viewer", choices=("null", "usd", "gl"), default="null")
    p.add_argument("--worlds", type=int, default=4)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--out", default="results/featherstone_humanoid")
    args = p.parse_args(sys.argv[2:] if argv is None else argv)
    _require_viewer_dependencies(args.viewer)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frames = int(round(args.seconds / FRAME_DT))
    viewer = _viewer(args.viewer, out, frames)

    model = build(args.worlds)
    solver = SolverFeatherstone(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    state = model.state()
    viewer.set_model(model)
    dt = FRAME_DT / SUBSTEPS
    log(f"[steel] nv_humanoid x{args.worlds} dropped from {START_Z} m, SolverFeatherstone, dt = {dt:.5f} s")
    t0 = time.perf_counter()
    for frame in range(frames):
        if args.viewer == "gl" and not viewer.is_running():
            break
        for _ in range(SUBSTEPS):
            pipeline.collide(state, contacts)
            solver.step(state, state, None, contacts, dt)
        viewer.begin_frame(frame * FRAME_DT)
        viewer.log_state(state)
        viewer.end_frame()
        if (frame + 1) % 30 == 0:
            z = float(state.body_q.numpy()[0, 2])
            log(f"  t = {(frame + 1) * FRAME_DT:4.1f} s  torso z (world 0) = {z:.3f} m")
    wall = time.perf_counter() - t0
    viewer.close()
    q = state.joint_q.numpy()
    summary = {
        "scene": "nv_humanoid dropped on a ground plane (SolverFeatherstone)",
        "worlds": args.worlds,
        "dt": dt,
        "seconds": frames * FRAME_DT,
        "finite": bool(np.isfinite(q).all()),
        "torso_z_world0_m": float(state.body_q.numpy()[0, 2]),
        "wall_seconds": wall,
        "world_steps_per_second": args.worlds * frames * SUBSTEPS / wall,
        "viewer": args.viewer,
        "usd": str(out / USD_PATH) if args.viewer == "usd" else None,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    log(f"[steel] done: finite={summary['finite']}, {summary['world_steps_per_second']:.0f} world-steps/s, {out}/")
    if summary["usd"]:
        log(f"[steel] USD written: {summary['usd']}")
    return summary
