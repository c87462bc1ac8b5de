"""A cloth dropped over a sphere onto the ground with SolverVBD and self-contact.

``python -m steel.examples cloth_drape [--size N] [--viewer null|usd|gl] [--num-frames F] [--test]``

A 1.6 m square cloth of ``N x N`` quads (default 32) falls 0.2 m onto a 0.4 m sphere resting on the
ground, drapes over it and folds onto itself; vertex–triangle and edge–edge self-contact keep its
layers apart. Each 1/60 s frame runs the scene's 10 substeps. ``--test`` (default 90 frames, 1.5 s)
checks that no particle went through the ground, the cloth came down onto the sphere, and no edge
crosses a triangle of the cloth (an exact check independent of the solver,
:mod:`steel.app.intersections`). The same scene with energy and intersection plots is
``steel run cloth --solver vbd``.
"""

from __future__ import annotations

import numpy as np

import newton

from ..app.intersections import edge_triangle_intersections, mesh_edges
from ..app.particle_scenes import FRAME_DT, SPHERE_RADIUS, build_cloth_drape
from ..solvers import SolverVBD
from . import common

BELOW_GROUND_Z = -0.02  # [m] a particle below this has gone through the ground


class Example:
    """The example in Newton's shape: ``step()`` one frame, ``render()``, ``test_final()``."""

    def __init__(self, viewer, args):
        self.viewer, self.frame, self.sim_time = viewer, 0, 0.0
        scene = build_cloth_drape(args.size)
        self.model, self.sim_dt, self.options = scene.model, scene.dt, scene.solver_options
        self.tris = scene.tri_indices
        self.substeps = max(int(round(FRAME_DT / self.sim_dt)), 1)
        self.solver = SolverVBD(self.model, **self.options)
        self.pipeline = newton.CollisionPipeline(self.model)
        self.contacts = self.pipeline.contacts()
        self.control = self.model.control()
        self.state_0, self.state_1 = self.model.state(), self.model.state()
        self.start_z = float(self.state_0.particle_q.numpy()[:, 2].min())
        self.guard = common.guard_for(self.state_0.particle_q.numpy(), args)
        self.viewer.set_model(self.model)

    def step(self):
        for _ in range(self.substeps):
            self.pipeline.collide(self.state_0, self.contacts)
            self.solver.step(self.state_0, self.state_1, self.control, self.contacts, self.sim_dt)
            self.state_0, self.state_1 = self.state_1, self.state_0
        self.frame += 1
        self.sim_time += FRAME_DT
        self.guard.check_state(self.state_0, self.sim_time, self.frame * self.substeps)

    def render(self):
        self.viewer.begin_frame(self.sim_time)
        self.viewer.log_state(self.state_0)
        self.viewer.end_frame()

    def self_intersections(self) -> int:
        """Edge–triangle pairs of the cloth that cross (exact, float64)."""
        q = self.state_0.particle_q.numpy()
        return len(edge_triangle_intersections(q, self.tris, mesh_edges(self.tris)))

    def test_final(self):
        z = self.state_0.particle_q.numpy()[:, 2]
        assert z.min() > BELOW_GROUND_Z, f"a particle is at {z.min():.3f} m: through the ground"
        assert z.max() < self.start_z, f"the cloth has not come down (highest particle {z.max():.3f} m)"
        assert z.max() > 2.0 * SPHERE_RADIUS - 0.05, f"the cloth is not over the sphere (highest {z.max():.3f} m)"
        assert self.self_intersections() == 0, f"{self.self_intersections()} edge-triangle pairs cross"

    def summary(self) -> dict:
        z = self.state_0.particle_q.numpy()[:, 2]
        return {"solver": "SolverVBD", "options": self.options, "particles": int(self.model.particle_count),
                "dt": self.sim_dt, "simulated_seconds": self.sim_time, "lowest_particle_m": float(z.min()),
                "highest_particle_m": float(z.max()), "self_intersecting_pairs": self.self_intersections(),
                "finite": bool(np.isfinite(z).all())}


def main(argv: list[str] | None = None) -> int:
    parser = common.create_parser("cloth_drape", __doc__, num_frames=90)
    parser.add_argument("--size", type=int, default=32, help="quads per cloth side")
    viewer, args = common.init(parser, argv, minimums={"size": 2})
    return common.run(Example(viewer, args), args, "cloth_drape")
