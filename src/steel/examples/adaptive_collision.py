"""A projectile into a brick wall beside a resting tower, with collisions scheduled per substep.

``python -m steel.examples adaptive_collision``. The scene runs ``substeps`` solver substeps per
frame (Newton's public ``SolverXPBD``; the scheduler works with any solver) and lets
:class:`steel.CollisionSubstepScheduler` decide when to rerun collision detection. While everything
rests, one refresh per frame suffices: the reserve keeps every pair within the budget as a
candidate, and gravity's tiny per-frame velocity changes do not force a refresh. When the
projectile is launched, its speed bound shortens the horizon until it has come to rest in the
rubble. Collide-every-substep would make ``substeps`` calls every frame.

Prints the collision calls of every frame and writes ``calls_per_frame.png`` (when matplotlib is
installed) and ``summary.json`` under ``out_dir``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import warp as wp

import newton

from ..collision_schedule import CollisionSubstepScheduler

BRICK_HALF = (0.1, 0.2, 0.1)  # brick half-extents [m] (x thickness, y length, z height)
TOWER_HALF = 0.1  # tower block half-extent [m]


def build_scene(*, wall_rows: int = 5, wall_columns: int = 3, tower_height: int = 6, device=None):
    """The wall (running bond) at x = 0, a tower at x = -3 m, and a projectile sphere (r = 0.1 m,
    10x brick density) resting on the ground at x = 2 m. Returns ``(model, projectile body index)``."""
    builder = newton.ModelBuilder()
    brick = newton.ModelBuilder.ShapeConfig(gap=0.0, mu=0.7)
    hx, hy, hz = BRICK_HALF
    for row in range(wall_rows):
        offset = hy if row % 2 else 0.0  # staggered courses, as a mason lays them
        for column in range(wall_columns):
            y = (column - 0.5 * (wall_columns - 1)) * 2.0 * hy + offset
            body = builder.add_body(xform=wp.transform((0.0, y, hz + 2.0 * hz * row), wp.quat_identity()))
            builder.add_shape_box(body, hx=hx, hy=hy, hz=hz, cfg=brick)
    for level in range(tower_height):
        z = TOWER_HALF + 2.0 * TOWER_HALF * level
        body = builder.add_body(xform=wp.transform((-3.0, 0.0, z), wp.quat_identity()))
        builder.add_shape_box(body, hx=TOWER_HALF, hy=TOWER_HALF, hz=TOWER_HALF, cfg=brick)
    projectile = builder.add_body(xform=wp.transform((2.0, 0.0, 0.1), wp.quat_identity()))
    builder.add_shape_sphere(
        projectile, radius=0.1, cfg=newton.ModelBuilder.ShapeConfig(gap=0.0, mu=0.7, density=10000.0)
    )
    builder.add_ground_plane(cfg=brick)
    return builder.finalize(device=device), projectile


def run_adaptive_collision(
    frames: int = 150,
    launch_frame: int = 20,
    launch_velocity: tuple[float, float, float] = (-20.0, 0.0, 2.5),
    substeps: int = 8,
    frame_dt: float = 1.0 / 60.0,
    gap_max: float = 0.1,
    out_dir: str | Path = "results/adaptive_collision",
    device=None,
    log=print,
) -> dict:
    """Run the scene and report collision calls per frame.

    Args:
        frames: Frames to simulate.
        launch_frame: Frame at whose start the projectile gets ``launch_velocity`` [m/s].
        substeps: Solver substeps per frame (even).
        frame_dt: Frame duration [s].
        gap_max: ``speculative_contact_gap_max`` [m]: the travel budget and the reserve.
        out_dir: Where the plot and summary go.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model, projectile = build_scene(device=device)
    solver = newton.solvers.SolverXPBD(model, iterations=4)
    pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=gap_max)
    contacts = pipeline.contacts()
    states = (model.state(), model.state())
    control = model.control()
    calls = [0]

    def collide(state: newton.State, collision_dt: float) -> None:
        calls[0] += 1
        pipeline.collide(state, contacts, dt=collision_dt)

    def substep(state_in: newton.State, state_out: newton.State, dt: float) -> None:
        state_in.clear_forces()
        solver.step(state_in, state_out, control, contacts, dt)

    scheduler = CollisionSubstepScheduler(
        pipeline, states, collision_callback=collide, substep_callback=substep, frame_dt=frame_dt, substeps=substeps
    )
    calls_per_frame, overflow, frame_seconds = [], [], []
    for frame in range(frames):
        if frame == launch_frame:
            # Between frames the state is the user's: the next frame's substep 0 refreshes anyway.
            qd = states[0].body_qd.numpy()
            qd[projectile, :3] = launch_velocity
            states[0].body_qd.assign(qd)
        calls[0] = 0
        start = time.perf_counter()
        scheduler.step()
        overflowed = int(scheduler.interval_overflow.numpy()[0])  # also synchronizes the device
        frame_seconds.append(time.perf_counter() - start)
        calls_per_frame.append(calls[0])
        overflow.append(overflowed)
        log(f"frame {frame:3d}: {calls[0]} collision call(s){'  (overflow)' if overflowed else ''}")

    body_q = states[0].body_q.numpy()
    calls_np = np.array(calls_per_frame)
    summary = {
        "scene": "projectile into a brick wall, resting tower, SolverXPBD",
        "frames": frames,
        "substeps": substeps,
        "frame_dt": frame_dt,
        "speculative_contact_gap_max": gap_max,
        "collision_calls_total": int(calls_np.sum()),
        "collide_every_substep_calls_total": frames * substeps,
        "calls_per_frame_before_launch": float(calls_np[:launch_frame].mean()) if launch_frame > 0 else None,
        "calls_per_frame_last_10_frames": float(calls_np[-10:].mean()),
        "calls_per_frame_max": int(calls_np.max()),
        "overflow_frames": int(np.sum(overflow)),
        "mean_frame_seconds": float(np.mean(frame_seconds[1:])),  # frame 0 compiles kernels
        "projectile_final_position": body_q[projectile, :3].tolist(),
        "tower_top_final_z": float(body_q[projectile - 1, 2]),
        "calls_per_frame": calls_per_frame,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415

        fig, ax = plt.subplots(figsize=(8, 3.5))
        ax.step(np.arange(frames), calls_np, where="mid", label="CollisionSubstepScheduler")
        ax.axhline(substeps, color="k", ls="--", lw=0.8, label=f"collide every substep ({substeps})")
        ax.axvline(launch_frame, color="r", ls=":", lw=0.8, label="projectile launched")
        ax.set(xlabel="frame", ylabel="collision calls per frame", ylim=(0, substeps + 1))
        ax.set_title(f"adaptive collision: {summary['collision_calls_total']} calls vs {frames * substeps}")
        ax.legend(fontsize=8, loc="upper right")
        fig.tight_layout()
        fig.savefig(out / "calls_per_frame.png", dpi=100)
        plt.close(fig)
    except ImportError:
        log("  (matplotlib not installed: no plot)")
    log(
        f"[adaptive_collision] {summary['collision_calls_total']} collision calls in {frames} frames "
        f"(collide every substep: {frames * substeps}); {summary['calls_per_frame_before_launch']:.2f} per frame "
        f"at rest before the launch, at most {summary['calls_per_frame_max']} per frame after; results in {out}/"
    )
    return summary
