"""SolverSteel determinism: two arms sweep through six boxes, and two runs of it stay bitwise identical.

``python -m steel.examples steel_determinism_arms [--viewer null|usd|gl] [--num-frames F] [--test]
[--out DIR]``

A CPU-capable port of Newton 1.8's ``steel_determinism_arms`` example (which needs CUDA and
downloads a Franka arm). Here each arm is built in code, so nothing is downloaded: a fixed base
turning about z, a 0.35 m upper arm, a 0.3 m forearm and a 0.13 m paddle hand (four revolute
joints with position drives, ke 4000 N·m/rad, kd 400 N·m·s/rad, joint limits on). The two arms
face each other across a 3 x 2 grid of 0.12 x 0.10 x 0.12 m boxes (300 kg/m³, mu 0.7, set at
seeded random yaws). Every step the same scripted targets sweep each arm: base yaw +-0.55 rad over
3 s, and the hand's reach between 0.33 and 0.57 m over 1.5 s at a constant height (two-link
inverse kinematics, the wrist keeping the paddle vertical), starting retracted, clear of the
boxes; the second arm runs half a yaw period (1.5 s) behind. The paddles shove the boxes about.

The scene is stepped four times side by side in one process, each copy with its own model,
``steel.solvers.SolverSteel`` and ``newton.CollisionPipeline``, all from the same initial state
and the same control: two copies with the default settings (drawn on the left) and two with
``deterministic=wp.DeterministicMode.RUN_TO_RUN`` and ``CollisionPipeline(deterministic=True)``
(drawn on the right). The two copies of each side are overlaid, half transparent, magenta and
green: coincident copies look like one grey scene, diverging ones come apart into two ghosts. The
plots show each side's largest body distance [mm] between its two copies. 50 frames per second,
4 steps per frame (dt = 1/200 s), eager stepping on every device.

``--test`` checks that every copy stays finite and drops no row, that the paddles moved the boxes
(the mean box displacement exceeds 2 cm, so the copies went through contact), and that the two
deterministic copies' ``body_q``, ``body_qd``, ``joint_q`` and ``joint_qd`` are bitwise identical
at the end. CI runs the defaults (500 frames, 10 s).
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

import newton

from ..solvers import SolverSteel
from . import common

FPS = 50
SUBSTEPS = 4  # dt = 1/200 s
SHOULDER_Z = 0.35  # [m] height of the shoulder joint above the base
UPPER, FORE, HAND = 0.35, 0.30, 0.13  # [m] link lengths
LINK_HALF = 0.03  # [m] half thickness of the links
WRIST_Z = 0.17  # [m] wrist height the reach keeps: paddle spans z 0.04..0.17, the boxes 0.005..0.125
REACH, REACH_AMPLITUDE, REACH_PERIOD = 0.45, 0.12, 1.5  # [m], [m], [s]
YAW_AMPLITUDE, YAW_PERIOD = 0.55, 3.0  # [rad], [s]
BASES = ((-0.25, -0.55, 0.5 * math.pi), (0.25, 0.55, -0.5 * math.pi))  # (x [m], y [m], facing yaw [rad])
BOX_HALF = (0.06, 0.05, 0.06)  # [m]
BOX_COUNT = 6
KE, KD = 4000.0, 400.0  # drive gains [N·m/rad], [N·m·s/rad]
COPY_COLORS = {"magenta": (0.9, 0.2, 0.8), "green": (0.2, 0.8, 0.3)}
SIDE_OFFSET = 1.0  # [m] along y: the default pair at -1 m, the deterministic pair at +1 m
SOLVER_OPTIONS = {"enable_joint_limits": True, "articulation_constraint_max": 384, "free_body_constraint_max": 128}


def arm_targets(t: float) -> tuple[float, float, float, float]:
    """Joint targets (yaw, shoulder, elbow, wrist) [rad] of an arm at its script time ``t`` [s].

    The wrist point sits at horizontal reach ``x`` and height ``WRIST_Z`` - ``SHOULDER_Z``
    relative to the shoulder; the law of cosines gives the elbow bend ``e`` (positive pitch about
    y turns the link from +x down toward -z), the shoulder follows from the triangle, and the wrist
    makes the three pitches sum to pi/2 so the paddle hangs vertical.
    """
    yaw = YAW_AMPLITUDE * math.sin(2.0 * math.pi * t / YAW_PERIOD)
    x = REACH - REACH_AMPLITUDE * math.cos(2.0 * math.pi * t / REACH_PERIOD)  # shortest at t = 0
    drop = SHOULDER_Z - WRIST_Z  # [m] the wrist lies this far below the shoulder
    d2 = x * x + drop * drop
    elbow = math.acos((d2 - UPPER * UPPER - FORE * FORE) / (2.0 * UPPER * FORE))
    shoulder = math.atan2(drop, x) - math.atan2(FORE * math.sin(elbow), UPPER + FORE * math.cos(elbow))
    return yaw, shoulder, elbow, 0.5 * math.pi - shoulder - elbow


def all_targets(t: float) -> np.ndarray:
    """Both arms' joint targets [rad] at time ``t`` [s], the second arm's script half a yaw period behind."""
    return np.concatenate([arm_targets(t - 0.5 * YAW_PERIOD * arm) for arm in range(len(BASES))])


def build_scene() -> tuple[newton.ModelBuilder, int]:
    """Both arms and the boxes (no ground); returns the builder and the DOFs per arm."""
    scene = newton.ModelBuilder()
    scene.rigid_gap = 0.01
    arm_cfg = newton.ModelBuilder.ShapeConfig(mu=0.7)
    pitch = (0.0, 1.0, 0.0)
    for x, y, facing in BASES:
        base_frame = wp.transform(wp.vec3(x, y, 0.0), wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), facing))
        # Links in the arm's own frame (x forward, z up), built straight; the initial joint_q bends them.
        column = scene.add_link()
        scene.add_shape_box(column, xform=wp.transform(wp.vec3(0.0, 0.0, 0.5 * SHOULDER_Z + 0.01), wp.quat_identity()),
                            hx=0.05, hy=0.05, hz=0.5 * SHOULDER_Z - 0.02, cfg=arm_cfg)
        links = [column]
        for length in (UPPER, FORE, HAND):
            link = scene.add_link()
            scene.add_shape_box(link, xform=wp.transform(wp.vec3(0.5 * length, 0.0, 0.0), wp.quat_identity()),
                                hx=0.5 * length - 0.01, hy=LINK_HALF if length != HAND else 0.06, hz=LINK_HALF,
                                cfg=arm_cfg)
            links.append(link)
        joints = [scene.add_joint_revolute(-1, column, parent_xform=base_frame, axis=(0.0, 0.0, 1.0),
                                           limit_lower=-math.pi, limit_upper=math.pi, target_ke=KE, target_kd=KD)]
        anchors = ((0.0, 0.0, SHOULDER_Z), (UPPER, 0.0, 0.0), (FORE, 0.0, 0.0))
        for parent, child, anchor in zip(links[:-1], links[1:], anchors):
            joints.append(scene.add_joint_revolute(parent, child, parent_xform=wp.transform(wp.vec3(*anchor),
                                                                                            wp.quat_identity()),
                                                   axis=pitch, limit_lower=-2.5, limit_upper=2.5,
                                                   target_ke=KE, target_kd=KD))
        scene.add_articulation(joints)
    dofs = len(scene.joint_q) // len(BASES)
    q0 = all_targets(0.0)
    scene.joint_q[:] = q0.tolist()
    scene.joint_target_q[:] = q0.tolist()
    rng = np.random.default_rng(7)
    box_cfg = newton.ModelBuilder.ShapeConfig(density=300.0, mu=0.7)
    for i in range(BOX_COUNT):
        x = -0.25 + 0.25 * (i // 2) + 0.01 * rng.standard_normal()  # 3 columns along x, jittered 1 cm
        centre = wp.vec3(x, -0.07 + 0.14 * (i % 2), BOX_HALF[2] + 0.005)  # 2 rows along y, 5 mm up
        turn = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), float(rng.uniform(0.0, math.pi)))
        box = scene.add_body(xform=wp.transform(centre, turn))
        scene.add_shape_box(box, hx=BOX_HALF[0], hy=BOX_HALF[1], hz=BOX_HALF[2], cfg=box_cfg)
    return scene, dofs


class Copy:
    """One run of the scene: its own model, solver and collision pipeline, drawn as one viewer layer."""

    def __init__(self, name: str, scene: newton.ModelBuilder, deterministic: bool, color, device=None):
        self.name = name
        builder = newton.ModelBuilder()
        builder.rigid_gap = scene.rigid_gap  # the ground plane takes the builder's gap
        builder.replicate(scene, 1)
        builder.shape_color[:] = [color] * builder.shape_count
        builder.shape_opacity[:] = [0.5] * builder.shape_count
        builder.add_ground_plane()
        self.model = builder.finalize(device=device)
        mode = wp.DeterministicMode.RUN_TO_RUN if deterministic else None
        self.solver = SolverSteel(self.model, deterministic=mode, **SOLVER_OPTIONS)
        self.pipeline = newton.CollisionPipeline(self.model, deterministic=deterministic)
        self.contacts = self.pipeline.contacts()
        self.state_0, self.state_1 = self.model.state(), self.model.state()
        newton.eval_fk(self.model, self.model.joint_q, self.model.joint_qd, self.state_0)

    def step(self, control: newton.Control, dt: float) -> None:
        self.state_0.clear_forces()
        self.pipeline.collide(self.state_0, self.contacts)
        self.solver.step(self.state_0, self.state_1, control, self.contacts, dt)
        self.state_0, self.state_1 = self.state_1, self.state_0


class Example:
    """Newton's example shape: ``step()`` advances all four copies by one frame."""

    STATE_FIELDS = ("body_q", "body_qd", "joint_q", "joint_qd")

    def __init__(self, viewer, args):
        self.viewer, self.frame, self.sim_time, self.steps = viewer, 0, 0.0, 0
        self.dt = 1.0 / (FPS * SUBSTEPS)
        scene, self.arm_dofs = build_scene()
        self.box_bodies = np.arange(scene.body_count - BOX_COUNT, scene.body_count)
        self.pairs = {mode: [Copy(f"{mode} {name}", scene, mode == "deterministic", color, args.device)
                             for name, color in COPY_COLORS.items()]
                      for mode in ("default", "deterministic")}
        first = self.pairs["default"][0]
        self.model, self.contacts = first.model, first.contacts
        self.control = first.model.control()  # one control for every copy: they differ only in how they step
        self.state_0 = first.state_0
        self.box_start = first.state_0.body_q.numpy()[self.box_bodies, :3].copy()
        self.guard = common.guard_for(first.state_0.body_q.numpy()[:, :3], args)
        self.divergence = {mode: 0.0 for mode in self.pairs}  # [m] largest body distance between a pair's copies
        self.largest_divergence = dict(self.divergence)
        for sign, copies in zip((-1.0, 1.0), self.pairs.values()):
            for copy in copies:
                self.viewer.activate(copy.name)
                self.viewer.set_model(copy.model)
                self.viewer.set_layer_transform(copy.name, wp.vec3(0.0, sign * SIDE_OFFSET, 0.0))

    def apply_control(self) -> None:
        """The scripted targets of both arms at the start of the next step."""
        targets = self.control.joint_target_q.numpy()
        targets[:self.arm_dofs * len(BASES)] = all_targets(self.steps * self.dt)  # the arms' coordinates come first
        self.control.joint_target_q.assign(targets)

    def step(self):
        for _ in range(SUBSTEPS):
            self.apply_control()
            for copies in self.pairs.values():
                for copy in copies:
                    copy.step(self.control, self.dt)
            self.steps += 1
        self.frame += 1
        self.sim_time += 1.0 / FPS
        self.state_0 = self.pairs["default"][0].state_0
        for copies in self.pairs.values():
            for copy in copies:
                self.guard.check_state(copy.state_0, self.sim_time, self.steps)
        for mode, (a, b) in self.pairs.items():
            gap = np.linalg.norm(a.state_0.body_q.numpy()[:, :3] - b.state_0.body_q.numpy()[:, :3], axis=1)
            self.divergence[mode] = float(gap.max())
            self.largest_divergence[mode] = max(self.largest_divergence[mode], self.divergence[mode])

    def render(self):
        self.viewer.begin_frame(self.sim_time)
        for mode, copies in self.pairs.items():
            for copy in copies:
                self.viewer.activate(copy.name)
                self.viewer.log_state(copy.state_0)
            self.viewer.log_scalar(f"max divergence [mm], {mode}", 1.0e3 * self.divergence[mode])
        self.viewer.end_frame()

    def gui(self, ui):
        ui.text("Left: default, right: deterministic (magenta and green copies)")
        for mode, value in self.divergence.items():
            ui.text(f"  {mode}: {1.0e3 * value:.3f} mm")

    def box_travel(self) -> float:
        """Mean distance [m] the boxes of the first copy moved from their start."""
        now = self.pairs["default"][0].state_0.body_q.numpy()[self.box_bodies, :3]
        return float(np.linalg.norm(now - self.box_start, axis=1).mean())

    def test_final(self):
        for mode, copies in self.pairs.items():
            for copy in copies:
                assert not np.any(copy.solver.constraint_overflow.numpy()), f"{copy.name} dropped constraint rows"
                for name in self.STATE_FIELDS:
                    assert np.isfinite(getattr(copy.state_0, name).numpy()).all(), f"{copy.name}: {name} not finite"
        travel = self.box_travel()
        assert travel > 0.02, f"the boxes moved {travel * 1e3:.1f} mm on average: the arms did not reach them"
        a, b = self.pairs["deterministic"]
        for name in self.STATE_FIELDS:
            x, y = getattr(a.state_0, name).numpy(), getattr(b.state_0, name).numpy()
            differ = int(np.sum(x.view(np.uint32) != y.view(np.uint32)))
            assert differ == 0, f"the deterministic copies differ in {differ} words of {name}"

    def summary(self) -> dict:
        return {"solver": "steel.solvers.SolverSteel", "options": SOLVER_OPTIONS, "dt": self.dt,
                "simulated_seconds": self.sim_time, "box_travel_m": self.box_travel(),
                "final_divergence_m": self.divergence, "largest_divergence_m": self.largest_divergence,
                "finite": all(np.isfinite(c.state_0.body_q.numpy()).all() for cs in self.pairs.values() for c in cs)}


def main(argv: list[str] | None = None) -> int:
    parser = common.create_parser("steel_determinism_arms", __doc__, num_frames=500)
    viewer, args = common.init(parser, argv)
    return common.run(Example(viewer, args), args, "steel_determinism_arms")
