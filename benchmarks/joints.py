"""Joint-model benchmark: a walking ant with drive rows, velocity limits and joint friction.

The ``ant`` scene (Newton's ``nv_ant.xml``, 8 hinge DOFs per robot) with every leg DOF driven by a
PD drive (``ke`` 10 N·m/rad, ``kd`` 0.5 N·m·s/rad, effort limit 3 N·m) toward a trotting gait (hips
+-0.3 rad and ankles +-0.2 rad about the standing pose at 2 Hz, targets updated every 30 steps), a
4 rad/s velocity limit, 0.05 N·m of dry friction and its joint limits, 16 worlds, dt = 1/600 s.

Rows (all CPU, collide + step, world-steps/s = worlds x steps / seconds):

* ``steel``: ``drive_mode="rows"``, joint limits, velocity limits and joint friction;
* ``steel, no friction``: the same without joint friction, as the reference can run it;
* ``newton``: ``newton.solvers.SolverSteel`` with the options it accepts on the CPU: joint friction
  raises ``NotImplementedError`` there ("requires CUDA"), so it runs without friction
  (``articulation_constraint_max=128``: its default 32 rows drop drive and limit rows);
* ``mujoco``: MuJoCo C on the same MJCF, the motors replaced by position servos (``kp``, ``kv``,
  ``forcerange`` of the effort limit: the complete servo force is clamped, as drive rows clamp the
  complete reaction) and ``frictionloss`` on the hinges; MuJoCo has no joint velocity limits.

The solvers take turns in rounds of ``--steps`` steps (the machine is shared) and each keeps its best
round; the simulations continue across rounds, so later rounds walk on.

    nice .venv/bin/python -m benchmarks.joints --worlds 16 --steps 120 --rounds 5
"""

from __future__ import annotations

import argparse
import re
import time

import numpy as np
import warp as wp

import newton
import steel
from steel.app.scenes import _asset_xml, ant_init_qpos, build_scene

from .measure import LaunchCounter

KE, KD, EFFORT, VELOCITY_LIMIT, FRICTION = 10.0, 0.5, 3.0, 4.0, 0.05
GAIT = {"hip": 0.3, "ankle": 0.2}  # amplitude [rad] about the standing pose
FREQUENCY = 2.0  # [Hz]
CONTROL_PERIOD = 30  # steps between target updates


def _targets(q0: np.ndarray, names: list[str], t: float) -> np.ndarray:
    """Leg targets [rad] at time ``t`` [s]: legs 1, 3 in phase, 2, 4 opposite (a trot)."""
    out = q0.copy()
    for i, name in enumerate(names):
        kind, leg = name.rsplit("_", 1)
        phase = 0.0 if int(leg) in (1, 3) else np.pi
        out[i] += GAIT[kind] * np.sin(2.0 * np.pi * FREQUENCY * t + phase)
    return out


def _leg_names() -> list[str]:
    return re.findall(r'<joint axis="[^"]*" name="((?:hip|ankle)_\d)"', _asset_xml("nv_ant.xml"))


def _steel_model(worlds: int):
    scene = build_scene("ant", worlds, "cpu")
    model = scene.model
    legs = np.nonzero(model.joint_type.numpy()[np.searchsorted(model.joint_qd_start.numpy(),
                                                               np.arange(model.joint_dof_count), side="right") - 1]
                      == int(newton.JointType.REVOLUTE))[0]
    for name, value in (("joint_target_ke", KE), ("joint_target_kd", KD), ("joint_effort_limit", EFFORT),
                        ("joint_velocity_limit", VELOCITY_LIMIT), ("joint_friction", FRICTION)):
        values = getattr(model, name).numpy()
        values[legs] = value
        getattr(model, name).assign(values)
    return scene, model, legs


class NewtonRun:
    """One solver on its own copy of the scene; :meth:`advance` steps it with the gait."""

    def __init__(self, kind: str, worlds: int):
        """``kind``: "steel", "steel, no friction" or "newton"."""
        scene, model, legs = _steel_model(worlds)
        options = {"drive_mode": "rows", "enable_joint_limits": True, "enable_joint_velocity_limits": True}
        self.row = {"solver": kind, "worlds": worlds}
        if kind == "steel":
            options["enable_joint_friction"] = True
        if kind == "newton":
            options["articulation_constraint_max"] = 128
            try:
                newton.solvers.SolverSteel(model, **options, enable_joint_friction=True)
            except NotImplementedError as exc:
                self.row["note"] = f"joint friction refused: {exc}"
        cls = newton.solvers.SolverSteel if kind == "newton" else steel.solvers.SolverSteel
        self.scene, self.model, self.solver = scene, model, cls(model, **options)
        self.pipeline = newton.CollisionPipeline(model)
        self.contacts = self.pipeline.contacts()
        self.states = [model.state(), model.state()]
        self.control = model.control()
        self.target = self.control.joint_target_q.numpy()
        leg_joint = np.searchsorted(model.joint_qd_start.numpy(), legs, side="right") - 1
        self.leg_q = model.joint_q_start.numpy()[leg_joint]  # one coordinate per hinge
        self.q0 = model.joint_q.numpy()[self.leg_q].copy()
        self.names = _leg_names() * worlds
        self.steps = 0

    def advance(self, n: int) -> None:
        for _ in range(n):
            if self.steps % CONTROL_PERIOD == 0:
                self.target[self.leg_q] = _targets(self.q0, self.names, self.steps * self.scene.dt)
                self.control.joint_target_q.assign(self.target)
            self.pipeline.collide(self.states[0], self.contacts)
            self.solver.step(self.states[0], self.states[1], self.control, self.contacts, self.scene.dt)
            self.states.reverse()
            self.steps += 1
        wp.synchronize_device(self.model.device)

    def finish(self, seconds: float, steps: int) -> dict:
        with LaunchCounter() as c:
            self.solver.step(self.states[0], self.states[1], self.control, self.contacts, self.scene.dt)
        torso = self.states[1].body_q.numpy()[:: self.scene.bodies_per_world, 2]
        row = dict(self.row, world_steps_per_s=self.row["worlds"] * steps / seconds, launches_per_step=c.count,
                   torso_z_mean=float(torso.mean()), finite=bool(np.isfinite(torso).all()))
        if hasattr(self.solver, "constraint_overflow"):
            row["rows_dropped"] = bool(self.solver.constraint_overflow.numpy().any())
        return row


def _mujoco_xml() -> str:
    xml = _asset_xml("nv_ant.xml").replace('zaxis="0 1 0"', 'zaxis="0 0 1"')
    xml = re.sub(r'(<joint axis="[^"]*" name="(?:hip|ankle)_\d")', rf'\1 frictionloss="{FRICTION}"', xml)
    servos = "".join(f'<position joint="{n}" kp="{KE}" kv="{KD}" forcelimited="true" '
                     f'forcerange="-{EFFORT} {EFFORT}"/>' for n in _leg_names())
    return re.sub(r"<actuator>.*?</actuator>", f"<actuator>{servos}</actuator>", xml, flags=re.S)


class MujocoRun:
    """MuJoCo C on ``worlds`` separate ``MjData``, targets set every ``CONTROL_PERIOD`` steps."""

    def __init__(self, worlds: int, dt: float):
        import mujoco  # noqa: PLC0415 - optional dependency

        self.mujoco = mujoco
        self.m = mujoco.MjModel.from_xml_string(_mujoco_xml())
        self.m.opt.timestep = self.dt = dt
        self.names = _leg_names()
        self.datas = []
        for _ in range(worlds):
            d = mujoco.MjData(self.m)
            d.qpos[:] = ant_init_qpos()
            self.datas.append(d)
        self.q0 = np.array([ant_init_qpos()[self.m.joint(n).qposadr[0]] for n in self.names])
        self.steps = 0

    def advance(self, n: int) -> None:
        for d in self.datas:
            for i in range(self.steps, self.steps + n, CONTROL_PERIOD):
                d.ctrl[:] = _targets(self.q0, self.names, i * self.dt)
                self.mujoco.mj_step(self.m, d, min(CONTROL_PERIOD, self.steps + n - i))
        self.steps += n

    def finish(self, seconds: float, steps: int) -> dict:
        torso = np.array([d.xpos[self.m.body("torso").id][2] for d in self.datas])
        return {"solver": "mujoco", "worlds": len(self.datas), "world_steps_per_s": len(self.datas) * steps / seconds,
                "launches_per_step": None, "torso_z_mean": float(torso.mean()),
                "finite": bool(np.isfinite(torso).all()), "note": "no joint velocity limits in MuJoCo"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worlds", type=int, default=16)
    parser.add_argument("--steps", type=int, default=120, help="timed steps per round (120 = 0.2 s simulated)")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per solver, interleaved; best kept")
    args = parser.parse_args(argv)
    wp.config.quiet = True
    runs = [NewtonRun(kind, args.worlds) for kind in ("newton", "steel, no friction", "steel")]
    runs.append(MujocoRun(args.worlds, runs[0].scene.dt))
    for run in runs:
        run.advance(args.warmup)
    # The solvers take turns (the machine is shared): each round times every solver on the next
    # ``steps`` steps of its own simulation, and the best round counts.
    best = [float("inf")] * len(runs)
    for _ in range(args.rounds):
        for i, run in enumerate(runs):
            t0 = time.perf_counter()
            run.advance(args.steps)
            best[i] = min(best[i], time.perf_counter() - t0)
    rows = [run.finish(seconds, args.steps) for run, seconds in zip(runs, best)]
    reference = rows[0]["world_steps_per_s"]
    print("| solver | worlds | world-steps/s | vs newton | launches/step | torso z [m] | notes |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        launches = "" if r["launches_per_step"] is None else str(r["launches_per_step"])
        notes = "; ".join(x for x in (r.get("note", ""), "rows dropped" if r.get("rows_dropped") else "",
                                       "" if r["finite"] else "NaN") if x)
        print(f"| {r['solver']} | {r['worlds']} | {r['world_steps_per_s']:,.0f} | "
              f"{r['world_steps_per_s'] / reference:.2f}x | {launches} | {r['torso_z_mean']:.3f} | {notes} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
