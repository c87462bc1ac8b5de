"""nv_humanoid dropped on the ground with SolverSteel (PGS contacts, joint limits on); it falls and lies still.

``python -m steel.examples steel_humanoid [--world-count N] [--viewer null|usd|gl] [--num-frames F] [--test]``

``--world-count`` humanoids (default 1), each in its own world over one shared ground plane, are
dropped from a torso height of 1.5 m and stepped at 10 substeps of 1/600 s per 1/60 s frame. The
joint limits are on (``enable_joint_limits=True``; the reference default is off, which lets the
knees fold past their range). ``--test`` (default 150 frames, 2.5 s) checks that every body ends
below 0.5 m (the humanoid lies on the ground; standing, its torso is at 1.3 m), at rest, with every
hinge inside its limits within 0.05 rad.
"""

from __future__ import annotations

import numpy as np

import newton
import newton.examples

from ..app import scenes
from ..app.runner import joint_limit_overshoot
from ..solvers import SolverSteel
from . import common

SUBSTEPS = 10  # per 1/60 s frame: dt = 1/600 s
LYING_Z = 0.5  # [m] every body origin below this: lying on the ground
REST_SPEED = 0.2  # [m/s] largest body speed at rest
LIMIT_TOL = 0.05  # [rad] allowed overshoot of a joint limit




class Example:
    """The example in Newton's shape: ``step()`` one frame, ``render()``, ``test_final()``."""

    def __init__(self, viewer, args):
        self.viewer, self.frame, self.sim_time = viewer, 0, 0.0
        self.frame_dt = 1.0 / 60.0  # [s]
        self.sim_dt = self.frame_dt / SUBSTEPS  # [s]
        self.world_count = args.world_count
        self.model = scenes.build_humanoid(args.world_count, None).model  # dropped from 1.5 m
        self.solver = SolverSteel(self.model, enable_joint_limits=True)
        self.pipeline = newton.CollisionPipeline(self.model)
        self.contacts = self.pipeline.contacts()
        self.control = self.model.control()
        self.state_0, self.state_1 = self.model.state(), self.model.state()
        newton.eval_fk(self.model, self.state_0.joint_q, self.state_0.joint_qd, self.state_0)
        self.guard = common.guard_for(self.state_0.body_q.numpy(), args)
        self.viewer.set_model(self.model)

    def step(self):
        for _ in range(SUBSTEPS):
            self.pipeline.collide(self.state_0, self.contacts)
            self.solver.step(self.state_0, self.state_1, self.control, self.contacts, self.sim_dt)
            self.state_0, self.state_1 = self.state_1, self.state_0
        self.frame += 1
        self.sim_time += self.frame_dt
        self.guard.check_state(self.state_0, self.sim_time, self.frame * SUBSTEPS)

    def render(self):
        self.viewer.begin_frame(self.sim_time)
        self.viewer.log_state(self.state_0)
        self.viewer.end_frame()

    def limit_overshoot(self) -> float:
        """Largest distance of a limited hinge outside its range [rad] (0 inside)."""
        return joint_limit_overshoot(self.model, self.state_0)

    def test_final(self):
        z = self.state_0.body_q.numpy()[:, 2]
        speed = np.linalg.norm(self.state_0.body_qd.numpy()[:, :3], axis=1).max()
        assert z.max() < LYING_Z, f"a body is at {z.max():.2f} m after {self.sim_time:.2f} s: not lying down"
        assert speed < REST_SPEED, f"a body moves at {speed:.2f} m/s after {self.sim_time:.2f} s: not at rest"
        assert self.limit_overshoot() < LIMIT_TOL, f"a hinge is {self.limit_overshoot():.3f} rad past its limit"

    def summary(self) -> dict:
        return {"solver": "SolverSteel", "options": {"enable_joint_limits": True}, "dt": self.sim_dt,
                "world_count": self.world_count, "simulated_seconds": self.sim_time,
                "highest_body_m": float(self.state_0.body_q.numpy()[:, 2].max()),
                "joint_limit_overshoot_rad": self.limit_overshoot()}


def main(argv: list[str] | None = None) -> int:
    parser = common.create_parser("steel_humanoid", __doc__, num_frames=150)
    newton.examples.add_world_count_arg(parser)
    viewer, args = common.init(parser, argv)
    return common.run(Example(viewer, args), args, "steel_humanoid")
