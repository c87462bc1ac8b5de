"""nv_humanoid in free fall, stepped by the articulation core alone (no contacts, no solver).

``python -m steel.examples free_fall [--world-count N] [--viewer null|usd|gl] [--num-frames F] [--test]``

Each step (four of 1/240 s per 1/60 s frame) is kinematics -> RNEA bias and CRBA mass matrix ->
Cholesky -> ``qdd = -H^-1 bias`` -> symplectic Euler. World 0 starts at rest,
so it falls rigidly and its root COM must follow the symplectic-Euler closed form
``z_n = z_0 - g dt^2 n (n + 1) / 2`` to float32 rounding. The other worlds start with random joint
velocities: they tumble and flail, and their total energy ``1/2 qd^T H qd + sum m g z`` is reported.
Semi-implicit Euler on *velocities* with a configuration-dependent ``H`` is not exactly symplectic,
so the energy drifts at first order in ``dt``: measured over 0.5 s, the largest drift of four
worlds was 4.9 J at dt = 1/240 s, 1.22 J at 1/960 s and 0.30 J at 1/3840 s
(``tests/test_examples.py::test_free_fall_energy_drift_is_first_order_in_dt``).
``--test`` (default 60 frames, 1 s, 4 worlds) checks world 0 against the closed form within 1e-3 m
and every world's energy drift within 10 J.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton
import newton.examples

from ..articulation import ArticulationCore, padded_blocks
from ..articulation.integrate import integrate_joints
from . import common

SUBSTEPS = 4  # per 1/60 s frame: dt = 1/240 s
CLOSED_FORM_TOL = 1e-3  # [m] float32 rounding over 240 steps stays well below this
ENERGY_DRIFT_TOL = 10.0  # [J] first-order drift at dt = 1/240 s: 8.9 J measured over the --test's 1 s (4.9 J in 0.5 s)


def build_humanoid_worlds(world_count: int, device) -> newton.Model:
    """``world_count`` copies of Newton's nv_humanoid.xml, no ground."""
    robot = newton.ModelBuilder()
    robot.add_mjcf(newton.examples.get_asset("nv_humanoid.xml"))
    scene = newton.ModelBuilder()
    scene.replicate(robot, world_count)
    return scene.finalize(device=device)


def _com_height(body_q: np.ndarray, body_com: np.ndarray) -> np.ndarray:
    """World z of each body's COM [m] from poses ``(p, quat xyzw)`` and body-frame COMs."""
    u, w = body_q[:, 3:6], body_q[:, 6:7]
    t = 2.0 * np.cross(u, body_com)
    rotated = body_com + w * t + np.cross(u, t)  # quaternion rotation q c q*
    return body_q[:, 2] + rotated[:, 2]


def _energy(model: newton.Model, core: ArticulationCore, state: newton.State) -> np.ndarray:
    """Kinetic plus gravitational potential energy per articulation [J]."""
    H = padded_blocks(core.plan, core.data.mass_matrix)
    qd = state.joint_qd.numpy().astype(np.float64)
    g = float(np.linalg.norm(model.gravity.numpy()[0]))
    com_world = _com_height(state.body_q.numpy().astype(np.float64), model.body_com.numpy().astype(np.float64))
    mass = model.body_mass.numpy()
    energies = np.zeros(core.plan.articulation_count)
    body_joint = core.plan.body_joint_np
    art_of_joint = model.joint_articulation.numpy()
    for a in range(core.plan.articulation_count):
        n = int(core.plan.dof_count_np[a])
        d0 = int(core.plan.dof_start_np[a])
        v = qd[d0 : d0 + n]
        energies[a] = 0.5 * v @ H[a, :n, :n] @ v
    for b in range(model.body_count):
        j = body_joint[b]
        if j >= 0:
            energies[art_of_joint[j]] += mass[b] * g * com_world[b]
    return energies


class Example:
    """The example in Newton's shape: ``step()`` one frame, ``render()``, ``test_final()``."""

    def __init__(self, viewer, args, seed: int = 0):
        self.viewer, self.frame, self.sim_time, self.steps = viewer, 0, 0.0, 0
        self.world_count = args.world_count
        self.frame_dt = 1.0 / 60.0  # [s]
        self.sim_dt = self.frame_dt / SUBSTEPS  # [s]
        self.model = build_humanoid_worlds(args.world_count, None)
        self.core = ArticulationCore(self.model)
        self.state_0 = self.model.state()
        # World 0 starts at rest (the closed-form check); the others tumble with random joint velocities.
        qd0 = self.state_0.joint_qd.numpy()
        first = self.core.plan.dof_start_np[1] if args.world_count > 1 else qd0.size
        qd0[first:] = np.random.default_rng(seed).normal(scale=1.0, size=qd0.size - first)
        self.state_0.joint_qd.assign(qd0)
        self.qdd = wp.zeros(self.model.joint_dof_count, dtype=float, device=self.model.device)
        self.root_bodies = self.core.plan.root_body_np
        self.core.step_quantities(self.state_0)
        self.z0 = float(self.state_0.body_q.numpy()[self.root_bodies[0], 2])
        self.energy0 = _energy(self.model, self.core, self.state_0)
        self.guard = common.guard_for(self.state_0.body_q.numpy(), args)
        self.viewer.set_model(self.model)

    def step(self):
        for _ in range(SUBSTEPS):
            self.core.solve(self.core.data.dof_bias, self.qdd, scale=-1.0)
            integrate_joints(self.model, self.state_0.joint_q, self.state_0.joint_qd, self.qdd, self.sim_dt,
                             self.state_0.joint_q, self.state_0.joint_qd)
            self.core.step_quantities(self.state_0)
        self.steps += SUBSTEPS
        self.frame += 1
        self.sim_time += self.frame_dt
        self.guard.check_state(self.state_0, self.sim_time, self.steps)

    def render(self):
        self.viewer.begin_frame(self.sim_time)
        self.viewer.log_state(self.state_0)
        self.viewer.end_frame()

    def closed_form_error(self) -> float:
        """|world 0 root z - (z0 - g dt² n (n + 1) / 2)| [m]."""
        g = float(np.linalg.norm(self.model.gravity.numpy()[0]))
        n = self.steps
        expected = self.z0 - g * self.sim_dt**2 * n * (n + 1) / 2.0
        return abs(float(self.state_0.body_q.numpy()[self.root_bodies[0], 2]) - expected)

    def energy_drift(self) -> float:
        """Largest |E - E0| over the worlds [J]."""
        return float(np.abs(_energy(self.model, self.core, self.state_0) - self.energy0).max())

    def test_final(self):
        assert self.closed_form_error() < CLOSED_FORM_TOL, f"world 0 is {self.closed_form_error():.2e} m off"
        assert self.energy_drift() < ENERGY_DRIFT_TOL, f"energy drifted by {self.energy_drift():.2f} J"

    def summary(self) -> dict:
        return {"scene": "nv_humanoid free fall (articulation core, no contacts)", "world_count": self.world_count,
                "dt": self.sim_dt, "steps": self.steps, "world0_closed_form_error_m": self.closed_form_error(),
                "max_energy_drift_J": self.energy_drift()}


def main(argv: list[str] | None = None) -> int:
    parser = common.create_parser("free_fall", __doc__, num_frames=60)
    newton.examples.add_world_count_arg(parser)
    parser.set_defaults(world_count=4)
    viewer, args = common.init(parser, argv)
    return common.run(Example(viewer, args), args, "free_fall")
