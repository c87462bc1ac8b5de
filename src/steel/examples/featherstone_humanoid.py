"""nv_humanoid dropped on a ground plane with SolverFeatherstone (penalty contacts) at 1/240 s.

``python -m steel.examples featherstone_humanoid [--world-count N] [--viewer null|usd|gl] [--num-frames F] [--test]``

``--world-count`` humanoids (default 4) fall from a torso height of 1.5 m; each frame of 1/60 s runs
four substeps of ``dt = 1/240 s`` (collide, then step), the step size at which Newton's reference
SolverFeatherstone goes NaN on this scene (see :mod:`steel.solvers.featherstone.forces` for why
ours does not). Prints the torso height of world 0 every half second. Viewers (Newton's):

* ``null`` (default): no output besides ``summary.json`` in ``--out``;
* ``usd``: also the motion at ``--output-path`` (default
  ``results/examples/featherstone_humanoid/featherstone_humanoid.usd``), one time sample per frame.
  Needs ``usd-core`` (``pip install 'steel[usd]'``); without it the example stops before
  simulating, with a message saying so (exit status 2);
* ``gl``: an interactive window; needs ``steel[viewer]`` and a display, and says so otherwise.

``--test`` (default 150 frames, 2.5 s) checks that every humanoid has landed and lies on the ground:
every body origin between -0.1 m and 0.6 m.
"""

from __future__ import annotations

import numpy as np

import newton
import newton.examples

from ..app import scenes
from ..solvers import SolverFeatherstone
from . import common

FRAME_DT = 1.0 / 60.0  # [s]
SUBSTEPS = 4  # dt = 1/240 s
LYING_Z = 0.6  # [m] every body origin below this: lying on the ground
BELOW_GROUND_Z = -0.1  # [m] a body origin below this has gone through the ground




class Example:
    """The example in Newton's shape: ``step()`` one frame, ``render()``, ``test_final()``."""

    def __init__(self, viewer, args, log=print):
        self.viewer, self.log, self.frame, self.sim_time = viewer, log, 0, 0.0
        self.world_count = args.world_count
        self.sim_dt = FRAME_DT / SUBSTEPS  # [s]
        self.model = scenes.build_humanoid(args.world_count, None).model  # dropped from 1.5 m
        self.solver = SolverFeatherstone(self.model)
        self.pipeline = newton.CollisionPipeline(self.model)
        self.contacts = self.pipeline.contacts()
        self.control = self.model.control()
        self.state_0 = self.model.state()
        newton.eval_fk(self.model, self.state_0.joint_q, self.state_0.joint_qd, self.state_0)
        self.guard = common.guard_for(self.state_0.body_q.numpy(), args)
        self.viewer.set_model(self.model)
        log(f"[steel] nv_humanoid x{args.world_count} dropped from {scenes.HUMANOID_Z} m, SolverFeatherstone, "
            f"dt = {self.sim_dt:.5f} s")

    def step(self):
        for _ in range(SUBSTEPS):
            self.pipeline.collide(self.state_0, self.contacts)
            self.solver.step(self.state_0, self.state_0, self.control, self.contacts, self.sim_dt)
        self.frame += 1
        self.sim_time += FRAME_DT
        self.guard.check_state(self.state_0, self.sim_time, self.frame * SUBSTEPS)
        if self.frame % 30 == 0:
            self.log(f"  t = {self.sim_time:4.1f} s  torso z (world 0) = {self.state_0.body_q.numpy()[0, 2]:.3f} m")

    def render(self):
        self.viewer.begin_frame(self.sim_time)
        self.viewer.log_state(self.state_0)
        self.viewer.end_frame()

    def test_final(self):
        z = self.state_0.body_q.numpy()[:, 2]
        assert z.max() < LYING_Z, f"a body is at {z.max():.2f} m after {self.sim_time:.2f} s: not lying down"
        assert z.min() > BELOW_GROUND_Z, f"a body is at {z.min():.2f} m: through the ground"

    def summary(self) -> dict:
        return {"solver": "SolverFeatherstone", "world_count": self.world_count, "dt": self.sim_dt,
                "simulated_seconds": self.sim_time, "finite": bool(np.isfinite(self.state_0.joint_q.numpy()).all()),
                "torso_z_world0_m": float(self.state_0.body_q.numpy()[0, 2])}


def main(argv: list[str] | None = None, log=print) -> int:
    parser = common.create_parser("featherstone_humanoid", __doc__, num_frames=150)
    newton.examples.add_world_count_arg(parser)
    parser.set_defaults(world_count=4)
    viewer, args = common.init(parser, argv)
    return common.run(Example(viewer, args, log), args, "featherstone_humanoid", log)
