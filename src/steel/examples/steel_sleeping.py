"""SolverSteel sleeping, Newton's steel_sleeping scene on any device: towers sleep, a kicked block wakes one.

``python -m steel.examples steel_sleeping [--viewer null|usd|gl] [--num-frames F] [--test]
[--kick-frame K] [--out DIR]``

The scene of Newton 1.8's ``steel_sleeping`` example, which needs CUDA there (it replays one
captured CUDA graph per frame): four towers of 0.2 m boxes (6, 7, 5, 6 high, every second box
turned 12 degrees about z, 2 mm gaps, dropped from 0, 0.5, 1 and 1.5 m, 1.2 m apart, mu 0.7) and a
0.24 m block on the ground 1.4 m in front of tower 1, in world 0, stepped by
``steel.solvers.SolverSteel(enable_sleeping=True)`` at 60 frames per second with 4 steps per frame
(dt = 1/240 s). This port steps eagerly, the same on CPU and CUDA.

1. The towers land, settle and sleep (all 24 tower bodies by 1.2 s); the block sleeps where it lies.
2. In the first step of frame ``--kick-frame`` (default 300, 5 s) a force ``m v / dt`` on the
   block's ``body_f`` for that one step gives it ``v`` = 5 m/s along +y and 3 m/s up. The force
   wakes the block; its contact with tower 1 wakes that tower's island and no other.
3. Tower 1 and the block settle and sleep again (about 2.5 s after the kick); the other towers
   never wake.

Sleeping bodies are drawn slate blue (``Model.shape_color``), awake ones in their tower's colour.

``--test`` checks, with counts, that all 24 tower bodies are asleep at the kick, that the kick
wakes all 7 bodies of tower 1 and no body of towers 0, 2 and 3, that every body (the block too)
is asleep again in the last frame, that no sleeping body's pose changes by a single bit from one
frame to the next, and that no row was dropped. CI runs the defaults (600 frames, kick at 5 s).
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

import newton

from ..solvers import SolverSteel
from . import common

FPS = 60
SUBSTEPS = 4  # steps per frame: dt = 1/240 s
HEIGHTS = (6, 7, 5, 6)  # boxes per tower
DROPS = (0.0, 0.5, 1.0, 1.5)  # [m] extra height of each tower's bottom box
SPACING = 1.2  # [m] between tower axes, along x
HALF = 0.1  # [m] box half extent
GAP = 0.002  # [m] between stacked boxes at the start
TURN = math.radians(12.0)  # [rad] yaw of every second box
BLOCK_HALF = 0.12  # [m]
BLOCK_Y = -1.4  # [m] the block's start, in front of the target tower
TARGET = 1  # the tower the block is kicked into
KICK_VELOCITY = (0.0, 5.0, 3.0)  # [m/s] the block's velocity change from the one-step kick
MU = 0.7
PALETTE = ((0.93, 0.6, 0.2), (0.13, 0.53, 0.2), (0.8, 0.73, 0.27), (0.67, 0.2, 0.47))  # per tower
BLOCK_COLOR = (0.93, 0.4, 0.47)
ASLEEP_COLOR = (0.36, 0.43, 0.58)  # slate blue


def build_model(device=None) -> tuple[newton.Model, np.ndarray, int]:
    """The towers, the block and the ground in world 0; returns the model, each body's tower
    (-1 for the block) and the block's body index."""
    scene = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=MU)
    tower_of = []
    left = -SPACING * (len(HEIGHTS) - 1) / 2.0
    for tower, (count, drop) in enumerate(zip(HEIGHTS, DROPS)):
        for level in range(count):
            turn = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), TURN if level % 2 else 0.0)
            centre = wp.vec3(left + tower * SPACING, 0.0, drop + HALF + level * (2.0 * HALF + GAP))
            body = scene.add_body(xform=wp.transform(centre, turn), label=f"tower{tower}_box{level}")
            scene.add_shape_box(body, hx=HALF, hy=HALF, hz=HALF, cfg=cfg, color=PALETTE[tower])
            tower_of.append(tower)
    block = scene.add_body(xform=wp.transform(wp.vec3(left + TARGET * SPACING, BLOCK_Y, BLOCK_HALF),
                                              wp.quat_identity()), label="block")
    scene.add_shape_box(block, hx=BLOCK_HALF, hy=BLOCK_HALF, hz=BLOCK_HALF, cfg=cfg, color=BLOCK_COLOR)
    tower_of.append(-1)
    builder = newton.ModelBuilder()
    builder.replicate(scene, 1)  # world 0 rather than the global world, as the reference example
    builder.add_ground_plane(cfg=cfg)
    return builder.finalize(device=device), np.asarray(tower_of), block


class Example:
    """Newton's example shape: ``step()`` advances one frame, ``render()``, ``test_final()``."""

    def __init__(self, viewer, args):
        self.viewer, self.frame, self.sim_time = viewer, 0, 0.0
        self.kick_frame = args.kick_frame
        self.dt = 1.0 / (FPS * SUBSTEPS)
        self.model, self.tower_of, self.block = build_model(args.device)
        self.solver = SolverSteel(self.model, enable_sleeping=True)
        self.pipeline = newton.CollisionPipeline(self.model)
        self.contacts = self.pipeline.contacts()
        self.observables = self.solver.observables({SolverSteel.ObservableKind.BODY_AWAKE})
        self.control = self.model.control()
        self.state_0, self.state_1 = self.model.state(), self.model.state()
        # The kick: a force held for one step of dt changes the block's velocity by force dt / m.
        mass = float(self.model.body_mass.numpy()[self.block])
        self.kick = np.array([*(mass * np.asarray(KICK_VELOCITY) / self.dt), 0.0, 0.0, 0.0], dtype=np.float32)
        self.guard = common.guard_for(self.state_0.body_q.numpy()[:, :3], args)
        self.own_colors = self.model.shape_color.numpy().copy()
        self.viewer.set_model(self.model)
        # Per frame, for the checks and the summary.
        self.awake_per_tower = []  # (frame, awake bodies of each tower, block awake)
        self.last_q = self.last_awake = None
        self.moved_while_asleep = None  # (frame, body) of the first sleeping body whose pose changed
        self.rows_dropped = False

    def simulate(self) -> None:
        """One frame: SUBSTEPS collide + step pairs, the kick in the first step of the kick frame."""
        for substep in range(SUBSTEPS):
            self.state_0.clear_forces()
            self.viewer.apply_forces(self.state_0)
            if substep == 0 and self.frame == self.kick_frame:
                body_f = self.state_0.body_f.numpy()
                body_f[self.block] += self.kick
                self.state_0.body_f.assign(body_f)
            self.pipeline.collide(self.state_0, self.contacts)
            self.solver.step(self.state_0, self.state_1, self.control, self.contacts, self.dt,
                             observables=self.observables)
            self.state_0, self.state_1 = self.state_1, self.state_0

    def step(self):
        self.simulate()
        self.frame += 1
        self.sim_time += 1.0 / FPS
        self.guard.check_state(self.state_0, self.sim_time, self.frame * SUBSTEPS)
        self.record()

    def record(self) -> None:
        """Awake counts per tower, and whether a body asleep in this frame and the last one moved."""
        body_q, awake = self.state_0.body_q.numpy(), self.observables.body_awake.numpy().astype(bool)
        counts = [int(awake[self.tower_of == k].sum()) for k in range(len(HEIGHTS))]
        self.awake_per_tower.append((self.frame, counts, bool(awake[self.block])))
        if self.last_q is not None and self.moved_while_asleep is None:
            still = ~awake & ~self.last_awake
            # bitwise: a frozen body's pose is not integrated at all, so not even rounding may change it
            moved = np.any(body_q.view(np.uint32) != self.last_q.view(np.uint32), axis=1) & still
            if moved.any():
                self.moved_while_asleep = (self.frame, int(np.argmax(moved)))
        self.last_q, self.last_awake = body_q, awake
        self.rows_dropped |= bool(np.any(self.solver.constraint_overflow.numpy()))

    def paint(self) -> None:
        """Shapes of sleeping bodies slate blue, the others their own colour."""
        common.paint_asleep(self.model, self.own_colors, self.observables.body_awake.numpy().astype(bool),
                            ASLEEP_COLOR)

    def render(self):
        self.paint()
        self.viewer.begin_frame(self.sim_time)
        self.viewer.log_state(self.state_0)
        self.viewer.end_frame()

    def first_all_asleep(self, rows) -> float | None:
        """Time [s] of the first frame of ``rows`` from which no tower body is awake, or None."""
        for i, (frame, _, _) in enumerate(rows):
            if not any(sum(counts) for _, counts, _ in rows[i:]):
                return frame / FPS
        return None

    def test_final(self):
        assert self.frame > self.kick_frame, f"the run ended at frame {self.frame}, before the kick"
        at_kick = next(counts for frame, counts, _ in self.awake_per_tower if frame == self.kick_frame)
        towers = int(np.sum(self.tower_of >= 0))
        assert sum(at_kick) == 0, f"{sum(at_kick)} of {towers} tower bodies awake at the kick (per tower {at_kick})"
        after = [counts for frame, counts, _ in self.awake_per_tower if frame > self.kick_frame]
        woken = [max(counts[k] for counts in after) for k in range(len(HEIGHTS))]
        expected = [HEIGHTS[k] if k == TARGET else 0 for k in range(len(HEIGHTS))]
        assert woken == expected, f"the kick woke {woken} bodies per tower, expected {expected}"
        awake_at_end = int(self.observables.body_awake.numpy().sum())
        assert awake_at_end == 0, f"{awake_at_end} bodies still awake at {self.sim_time:.2f} s"
        assert self.moved_while_asleep is None, "body {1} moved while asleep in frame {0}".format(
            *self.moved_while_asleep)
        assert not self.rows_dropped, "the solver dropped constraint rows"

    def summary(self) -> dict:
        before = [row for row in self.awake_per_tower if row[0] <= self.kick_frame]
        after = [row for row in self.awake_per_tower if row[0] > self.kick_frame]
        return {"solver": "steel.solvers.SolverSteel", "options": {"enable_sleeping": True}, "dt": self.dt,
                "simulated_seconds": self.sim_time, "kick_time_s": self.kick_frame / FPS,
                "towers_asleep_s": self.first_all_asleep(before),
                "towers_woken_by_kick": [k for k in range(len(HEIGHTS)) if any(c[k] for _, c, _ in after)],
                "target_tower_asleep_again_s": self.first_all_asleep(after),
                "moved_while_asleep": self.moved_while_asleep,
                "finite": bool(np.isfinite(self.state_0.body_q.numpy()).all())}


def main(argv: list[str] | None = None) -> int:
    parser = common.create_parser("steel_sleeping", __doc__, num_frames=600)
    parser.add_argument("--kick-frame", type=int, default=300, help="frame of the block's kick (default 300, 5 s)")
    viewer, args = common.init(parser, argv, minimums={"kick_frame": 1})
    return common.run(Example(viewer, args), args, "steel_sleeping")
