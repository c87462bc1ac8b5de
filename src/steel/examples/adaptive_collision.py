"""A projectile into a brick wall beside a resting tower, with collisions scheduled per substep.

``python -m steel.examples adaptive_collision [--launch-frame K] [--viewer null|usd|gl] [--num-frames F] [--test]``

The scene runs ``substeps`` solver substeps per
frame (Newton's public ``SolverXPBD``; the scheduler works with any solver) and lets
:class:`steel.CollisionSubstepScheduler` decide when to rerun collision detection. While everything
rests, one refresh per frame suffices: the reserve keeps every pair within the budget as a
candidate, and gravity's tiny per-frame velocity changes do not force a refresh. When the
projectile is launched, its speed bound shortens the horizon until it has come to rest in the
rubble. Collide-every-substep would make ``substeps`` calls every frame.

Prints the collision calls of a frame whenever they change (and every frame planned past the budget),
and writes ``calls_per_frame.png`` (when matplotlib is installed) and ``summary.json`` under ``--out``.
``--test`` (default 150 frames, launch at frame 20) checks one collision call per frame at rest before
the launch, at most ``substeps`` per frame after, fewer calls in all than colliding every substep, every
body above the ground at the end, and no interval past the travel budget except where an impact spun a
body up faster than the scheduler's carried rise allows for: at most 2 % of the frames after the launch,
named in the message. The scheduler's contract flags such an interval (``interval_overflow``) and cannot
prevent it, since it observes motion only after each substep: at the default settings frame 97 overflows
when a tumbling brick's angular speed jumps from 7.6 to 13.2 rad/s within one substep (a rise of its speed
bound of about 1.4 m/s, measured).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import warp as wp

import newton
import newton.viewer

from ..collision_schedule import CollisionSubstepScheduler
from ..app.guard import DEFAULT_MARGIN, DEFAULT_MAX_SPEED, DivergenceGuard
from ..app.run_record import write_summary
from . import common

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


class Example:
    """The example in Newton's shape: ``step()`` one frame, ``render()``, ``test_final()``.

    Args:
        launch_frame: Frame at whose start the projectile gets ``launch_velocity`` [m/s].
        substeps: Solver substeps per frame (even).
        frame_dt: Frame duration [s].
        gap_max: ``speculative_contact_gap_max`` [m]: the travel budget and the reserve.
        guard_margin, max_speed: the divergence guard's box margin [m] and speed bound [m/s].
    """

    def __init__(self, viewer, launch_frame: int = 20, launch_velocity=(-20.0, 0.0, 2.5), substeps: int = 8,
                 frame_dt: float = 1.0 / 60.0, gap_max: float = 0.1, device=None, log=print,
                 guard_margin: float = DEFAULT_MARGIN, max_speed: float = DEFAULT_MAX_SPEED):
        self.viewer, self.log, self.frame, self.sim_time = viewer, log, 0, 0.0
        self.launch_frame, self.launch_velocity, self.substeps = launch_frame, launch_velocity, substeps
        self.frame_dt, self.gap_max = frame_dt, gap_max
        self.model, self.projectile = build_scene(device=device)
        self.solver = newton.solvers.SolverXPBD(self.model, iterations=4)
        self.pipeline = newton.CollisionPipeline(self.model, speculative_contact_gap_max=gap_max)
        self.contacts = self.pipeline.contacts()
        self.states = (self.model.state(), self.model.state())
        self.state_0 = self.states[0]
        self.control = self.model.control()
        self.calls = 0
        self.scheduler = CollisionSubstepScheduler(self.pipeline, self.states, collision_callback=self._collide,
                                                   substep_callback=self._substep, frame_dt=frame_dt,
                                                   substeps=substeps)
        self.guard = DivergenceGuard.around(self.state_0.body_q.numpy(), guard_margin, max_speed)
        self.calls_per_frame, self.overflow, self.frame_seconds = [], [], []
        self.viewer.set_model(self.model)

    def _collide(self, state: newton.State, collision_dt: float) -> None:
        self.calls += 1
        self.pipeline.collide(state, self.contacts, dt=collision_dt)

    def _substep(self, state_in: newton.State, state_out: newton.State, dt: float) -> None:
        state_in.clear_forces()
        self.solver.step(state_in, state_out, self.control, self.contacts, dt)

    def step(self):
        if self.frame == self.launch_frame:
            # Between frames the state is the user's: the next frame's substep 0 refreshes anyway.
            qd = self.state_0.body_qd.numpy()
            qd[self.projectile, :3] = self.launch_velocity
            self.state_0.body_qd.assign(qd)
        self.calls = 0
        start = time.perf_counter()
        self.scheduler.step()
        overflowed = int(self.scheduler.interval_overflow.numpy()[0])  # also synchronizes the device
        self.frame_seconds.append(time.perf_counter() - start)
        self.calls_per_frame.append(self.calls)
        self.overflow.append(overflowed)
        if overflowed or len(self.calls_per_frame) == 1 or self.calls != self.calls_per_frame[-2]:
            self.log(f"frame {self.frame:3d}: {self.calls} collision call(s){'  (overflow)' if overflowed else ''}")
        self.frame += 1
        self.sim_time += self.frame_dt
        self.guard.check_state(self.state_0, self.sim_time, self.frame * self.substeps)

    def render(self):
        self.viewer.begin_frame(self.sim_time)
        self.viewer.log_state(self.state_0)
        self.viewer.end_frame()

    def test_final(self):
        s = self.summary()
        if self.launch_frame > 0:
            assert s["calls_per_frame_before_launch"] == 1.0, f"{s['calls_per_frame_before_launch']} calls at rest"
        assert s["calls_per_frame_max"] <= self.substeps, f"{s['calls_per_frame_max']} calls in one frame"
        late = s["frames"] - max(self.launch_frame, 0)
        frames = s["overflow_frame_list"]
        assert all(f >= self.launch_frame for f in frames), f"frames {frames} planned past the travel budget at rest"
        assert len(frames) <= max(1, int(0.02 * late)), f"frames {frames} planned past the travel budget"
        assert s["collision_calls_total"] < s["collide_every_substep_calls_total"]
        assert s["lowest_body_z"] > 0.0, f"a body ended {s['lowest_body_z']:.3f} m below the ground"

    def summary(self) -> dict:
        body_q = self.state_0.body_q.numpy()
        calls = np.array(self.calls_per_frame)
        frames, launch = len(calls), self.launch_frame
        return {
            "scene": "projectile into a brick wall, resting tower, SolverXPBD",
            "frames": frames,
            "substeps": self.substeps,
            "frame_dt": self.frame_dt,
            "speculative_contact_gap_max": self.gap_max,
            "collision_calls_total": int(calls.sum()),
            "collide_every_substep_calls_total": frames * self.substeps,
            "calls_per_frame_before_launch": float(calls[:launch].mean()) if 0 < launch <= frames else None,
            "calls_per_frame_last_10_frames": float(calls[-10:].mean()),
            "calls_per_frame_max": int(calls.max()),
            "overflow_frames": int(np.sum(self.overflow)),
            "overflow_frame_list": [int(f) for f in np.flatnonzero(self.overflow)],
            "lowest_body_z": float(body_q[:, 2].min()),
            "mean_frame_seconds": float(np.mean(self.frame_seconds[1:])) if frames > 1 else None,  # frame 0 compiles
            "projectile_final_position": body_q[self.projectile, :3].tolist(),
            "tower_top_final_z": float(body_q[self.projectile - 1, 2]),
            "calls_per_frame": self.calls_per_frame,
        }


def run_adaptive_collision(
    frames: int = 150,
    launch_frame: int = 20,
    launch_velocity: tuple[float, float, float] = (-20.0, 0.0, 2.5),
    substeps: int = 8,
    frame_dt: float = 1.0 / 60.0,
    gap_max: float = 0.1,
    out_dir: str | Path = "results/examples/adaptive_collision",
    device=None,
    log=print,
) -> dict:
    """Run the scene for ``frames`` without a viewer, write ``summary.json`` and the plot, return the summary.

    The arguments are those of :class:`Example`; ``out_dir`` is where the plot and summary go.
    """
    example = Example(newton.viewer.ViewerNull(num_frames=frames), launch_frame, launch_velocity, substeps,
                      frame_dt, gap_max, device, log)
    for _ in range(frames):
        example.step()
    summary = example.summary()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_summary(out / "summary.json", summary)
    plot_calls(out / "calls_per_frame.png", summary, launch_frame, log)
    return summary


def plot_calls(path: Path, summary: dict, launch_frame: int, log=print) -> None:
    """Collision calls per frame against colliding every substep (needs matplotlib)."""
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        log("  (matplotlib not installed: no plot)")
        return
    frames, substeps = summary["frames"], summary["substeps"]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.step(np.arange(frames), summary["calls_per_frame"], where="mid", label="CollisionSubstepScheduler")
    ax.axhline(substeps, color="k", ls="--", lw=0.8, label=f"collide every substep ({substeps})")
    ax.axvline(launch_frame, color="r", ls=":", lw=0.8, label="projectile launched")
    ax.set(xlabel="frame", ylabel="collision calls per frame", ylim=(0, substeps + 1))
    ax.set_title(f"adaptive collision: {summary['collision_calls_total']} calls vs {frames * substeps}")
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    log(f"[adaptive_collision] {summary['collision_calls_total']} collision calls in {frames} frames "
        f"(collide every substep: {frames * substeps}); results in {path.parent}/")


def main(argv: list[str] | None = None) -> int:
    parser = common.create_parser("adaptive_collision", __doc__, num_frames=150)
    parser.add_argument("--launch-frame", type=int, default=20, help="frame at which the projectile is launched")
    viewer, args = common.init(parser, argv, minimums={"launch_frame": 0})
    log = (lambda *a: None) if args.quiet else print
    example = Example(viewer, launch_frame=args.launch_frame, log=log, guard_margin=args.bounds_margin,
                      max_speed=args.max_speed)
    code = common.run(example, args, "adaptive_collision")
    if code == 0 and not args.test:
        plot_calls(Path(args.out or "results/examples/adaptive_collision") / "calls_per_frame.png",
                   example.summary(), args.launch_frame, log)
    return code
