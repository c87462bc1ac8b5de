"""SolverSteel sleeping islands: four towers settle and sleep, a thrown block wakes only the tower it hits.

``python -m steel.examples towers_sleeping [--viewer null|usd|gl] [--num-frames F] [--test] [--out DIR]
[--throw-time T] [--deterministic]``

The four box towers of the tower scene (6, 7, 5, 6 boxes of 0.2 m, dropped from 0, 0.5, 1 and
1.5 m, mu 0.7) and a spare block resting on the ground 1 m in front of tower 2, stepped by
``steel.solvers.SolverSteel(enable_sleeping=True)`` with the default sleep options (0.05 m/s,
0.15 rad/s, quiet for 0.5 s), 10 steps of 1/600 s per 1/60 s frame. Every tower is one island (its
boxes touch each other and rest on the ground); the block is its own.

1. The towers land, settle and fall asleep (about 1.3 s); the block sleeps from its first 0.5 s.
2. At ``--throw-time`` (default 5 s) the block is thrown at tower 2's second box: 4 m/s along +y
   and 2 m/s up, so it arrives 0.2 s later nearly level at z = 0.3 m. Writing its velocity wakes
   the block alone; its contact with tower 2 wakes that tower's island, and no other tower.
3. Tower 2 rocks (its upper boxes shift 3 cm) and, with the block, falls asleep again about
   3 s after the throw; towers 0, 1 and 3 never wake.

Sleeping bodies are drawn in grey-blue (``Model.shape_color``, which Newton's viewers read each
frame), awake ones in their own colours. Each frame records the number of awake bodies, in total
and per tower, and, once the run ends outside ``--test`` (or with ``--out``), writes
``awake.csv`` and ``awake.png`` (the awake-body count over time; needs matplotlib) beside
``summary.json`` in ``results/examples/towers_sleeping/``.

``--test`` (default 600 frames, 10 s; CI runs the defaults) checks that every body sleeps before
the throw, that the throw wakes tower 2 and that no step after it wakes towers 0, 1 or 3, and that
every body sleeps again by the end.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import warp as wp

import newton

from ..app import scenes
from ..solvers import SolverSteel
from . import common

SUBSTEPS = 10  # per 1/60 s frame: dt = 1/600 s, the tower scene's
FRAME_DT = 1.0 / 60.0  # [s]
TARGET = 2  # the tower the block is thrown at
BLOCK_Y = -1.0  # [m] where the spare block rests, in front of the target tower
THROW_VELOCITY = (0.0, 4.0, 2.0)  # [m/s]: 0.8 m to the tower's face in 0.2 s, rising to z = 0.3 m
ASLEEP_COLOR = (0.45, 0.5, 0.62)  # grey-blue
OUT = "results/examples/towers_sleeping"


def build_model(device=None) -> tuple[newton.Model, list[list[int]], int]:
    """The four towers and the spare block; returns the model, each tower's bodies and the block's."""
    builder = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=scenes.TOWER_MU)
    half = scenes.BOX_HALF
    towers = [[] for _ in scenes.TOWER_HEIGHTS]
    starts = np.cumsum((0, *scenes.TOWER_HEIGHTS))
    for i, (x, y, z) in enumerate(scenes.tower_layout()):
        body = builder.add_body(xform=wp.transform(wp.vec3(x, y, z), wp.quat_identity()))
        builder.add_shape_box(body, hx=half, hy=half, hz=half, cfg=cfg)
        towers[int(np.searchsorted(starts, i, side="right")) - 1].append(body)
    block = builder.add_body(xform=wp.transform(wp.vec3(scenes.TOWER_SPACING * TARGET, BLOCK_Y, half),
                                                wp.quat_identity()))
    builder.add_shape_box(block, hx=half, hy=half, hz=half, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    return builder.finalize(device=device), towers, block


class Sim:
    """The model, the sleeping solver, the pipeline and the body_awake observable: what the example
    and the determinism test step (``step()`` is one solver step of 1/600 s)."""

    def __init__(self, device=None, deterministic: bool = False):
        self.model, self.towers, self.block = build_model(device)
        self.dt = FRAME_DT / SUBSTEPS
        self.solver = SolverSteel(self.model, enable_sleeping=True)
        self.pipeline = newton.CollisionPipeline(self.model, deterministic=deterministic)
        self.contacts = self.pipeline.contacts()
        self.observables = self.solver.observables({SolverSteel.ObservableKind.BODY_AWAKE})
        self.control = self.model.control()
        self.state_0, self.state_1 = self.model.state(), self.model.state()
        self.steps = 0

    def step(self) -> None:
        self.pipeline.collide(self.state_0, self.contacts)
        self.solver.step(self.state_0, self.state_1, self.control, self.contacts, self.dt,
                         observables=self.observables)
        self.state_0, self.state_1 = self.state_1, self.state_0
        self.steps += 1

    def awake(self) -> np.ndarray:
        """Per body: True while awake."""
        return self.observables.body_awake.numpy()

    def throw(self) -> None:
        """Give the block ``THROW_VELOCITY`` (its FREE joint_qd: linear, then angular); the write wakes it."""
        qd = self.state_0.joint_qd.numpy()
        start = int(self.model.joint_qd_start.numpy()[self.block])  # one FREE joint per body, in body order
        qd[start:start + 6] = (*THROW_VELOCITY, 0.0, 0.0, 0.0)
        self.state_0.joint_qd.assign(qd)


class Example:
    """The example in Newton's shape: ``step()`` one frame, ``render()``, ``test_final()``."""

    def __init__(self, viewer, args):
        self.viewer, self.frame, self.sim_time = viewer, 0, 0.0
        self.throw_time = args.throw_time
        self.sim = Sim(args.device, args.deterministic)
        self.model, self.control, self.contacts = self.sim.model, self.sim.control, self.sim.contacts
        self.state_0 = self.sim.state_0
        self.guard = common.guard_for(self.sim.state_0.body_q.numpy()[:, :3], args)
        self.groups = [*self.sim.towers, [self.sim.block]]  # towers 0-3, then the block
        self.thrown_at = None  # the step of the throw
        self.rows = []  # per frame: time, awake bodies, then per group awake at any step of the frame
        self.own_colors = self.model.shape_color.numpy().copy() if self.model.shape_color is not None else None
        self.shape_body = self.model.shape_body.numpy()
        self.viewer.set_model(self.model)

    def step(self):
        woke = np.zeros(len(self.groups), dtype=int)
        for _ in range(SUBSTEPS):
            if self.thrown_at is None and self.sim.steps * self.sim.dt >= self.throw_time - 1e-9:
                self.sim.throw()
                self.thrown_at = self.sim.steps
            self.sim.step()
            awake = self.sim.awake()
            woke = np.maximum(woke, [int(awake[g].sum()) for g in self.groups])
        self.state_0 = self.sim.state_0
        self.frame += 1
        self.sim_time += FRAME_DT
        self.guard.check_state(self.sim.state_0, self.sim_time, self.sim.steps)
        self.rows.append([self.sim_time, int(self.sim.awake().sum()), *woke.tolist()])

    def paint(self) -> None:
        """Shapes of sleeping bodies in ``ASLEEP_COLOR``, the others in their own colours."""
        if self.own_colors is None:
            return
        common.paint_asleep(self.model, self.own_colors, self.sim.awake().astype(bool), ASLEEP_COLOR)

    def render(self):
        self.paint()
        self.viewer.begin_frame(self.sim_time)
        self.viewer.log_state(self.sim.state_0)
        self.viewer.end_frame()

    def last_asleep_frame(self, frames) -> int | None:
        """Index of the first frame of ``frames`` from which every body stays asleep, or None."""
        awake = [row[1] for row in frames]
        for i in range(len(awake)):
            if not any(awake[i:]):
                return i
        return None

    def test_final(self):
        assert self.thrown_at is not None, f"the run ended ({self.sim_time:.2f} s) before the throw"
        before = [row for row in self.rows if row[0] <= self.throw_time - FRAME_DT]
        after = [row for row in self.rows if row[0] > self.throw_time]
        assert before and before[-1][1] == 0, f"{before[-1][1] if before else '?'} bodies awake before the throw"
        hit = [row[2 + TARGET] for row in after]
        assert max(hit) == len(self.sim.towers[TARGET]), "the throw did not wake the whole target tower"
        for k in range(len(self.sim.towers)):
            if k != TARGET:
                assert max(row[2 + k] for row in after) == 0, f"tower {k} woke after the throw"
        assert after[-1][1] == 0, f"{after[-1][1]} bodies still awake at {self.sim_time:.2f} s"
        self.paint()
        colors, bodies = self.model.shape_color.numpy(), self.shape_body >= 0
        np.testing.assert_allclose(colors[bodies], np.tile(ASLEEP_COLOR, (bodies.sum(), 1)), rtol=1e-6,
                                   err_msg="a sleeping body is not drawn in the asleep colour")
        np.testing.assert_array_equal(colors[~bodies], self.own_colors[~bodies])  # the ground keeps its own

    def summary(self) -> dict:
        after = [row for row in self.rows if row[0] > self.throw_time]
        before = [row for row in self.rows if row[0] <= self.throw_time]
        first_sleep = self.last_asleep_frame(before)
        again = self.last_asleep_frame(after)
        return {"solver": "steel.solvers.SolverSteel", "options": {"enable_sleeping": True},
                "dt": self.sim.dt, "simulated_seconds": self.sim_time, "throw_time_s": self.throw_time,
                "all_asleep_before_throw_s": before[first_sleep][0] if first_sleep is not None else None,
                "all_asleep_again_s": after[again][0] if again is not None else None,
                "towers_woken_by_throw": [k for k in range(len(self.sim.towers))
                                          if any(row[2 + k] for row in after)],
                "finite": bool(np.isfinite(self.sim.state_0.body_q.numpy()).all())}

    def write(self, folder: Path) -> None:
        """``awake.csv`` and, with matplotlib, ``awake.png`` in ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        header = ["time_s", "awake_bodies", *[f"tower{k}_awake" for k in range(len(self.sim.towers))], "block_awake"]
        with open(folder / "awake.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            writer.writerows([[f"{row[0]:.4f}", *row[1:]] for row in self.rows])
        try:
            import matplotlib  # noqa: PLC0415

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt  # noqa: PLC0415
        except ImportError:
            print("  (matplotlib not installed: no plot)")
            return
        t = [row[0] for row in self.rows]
        fig, ax = plt.subplots(figsize=(8, 3.6))
        ax.step(t, [row[1] for row in self.rows], where="post", label="all bodies")
        for k in range(len(self.sim.towers)):
            ax.step(t, [row[2 + k] for row in self.rows], where="post", lw=0.8, label=f"tower {k}")
        ax.axvline(self.throw_time, color="grey", ls="--", lw=0.8, label="block thrown")
        ax.set(xlabel="t [s]", ylabel="awake bodies", title="SolverSteel sleeping: four towers and a thrown block")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(folder / "awake.png", dpi=100)
        plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = common.create_parser("towers_sleeping", __doc__, num_frames=600)
    parser.add_argument("--throw-time", type=float, default=5.0, help="when the block is thrown [s] (default 5)")
    parser.add_argument("--deterministic", action="store_true", help="CollisionPipeline(deterministic=True)")
    viewer, args = common.init(parser, argv)
    if not 0.0 < args.throw_time < float("inf"):
        parser.error(f"--throw-time must be positive and finite, got {args.throw_time}")
    if args.out is None and not args.test:
        args.out = OUT
    example = Example(viewer, args)
    code = common.run(example, args, "towers_sleeping")
    if args.out is not None:
        example.write(Path(args.out))
    return code
