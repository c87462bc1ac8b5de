"""Sleeping benchmark: the tower scene with enable_sleeping, ours against Newton's SolverSteel.

For each solver and world count: steps until every body is asleep (time to sleep [s], or the
awake count at the limit), the fraction of bodies asleep at 2 s and 6 s of simulated time (1.0
once all sleep; absent past ``--seconds``), then the cost of a solver step once all sleep, and
once three of the four towers sleep (1e-6 N on tower 0's top box keeps that tower awake), against
the same scene stepped with sleeping off (same pipeline, same state), solver step alone and
collide + step. Times are medians over ``--timed`` steps after ``--warmup`` untimed ones, on the CPU.

    nice .venv/bin/python -m benchmarks.sleeping --worlds 1,16 --seconds 4
    nice .venv/bin/python -m benchmarks.sleeping --worlds 16,64 --seconds 6 --deterministic
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import warp as wp

import newton
import steel
from steel.app.scenes import TOWER_HEIGHTS, build_scene


def _solver(kind: str, model, sleeping: bool):
    cls = steel.solvers.SolverSteel if kind == "steel" else newton.solvers.SolverSteel
    return cls(model, enable_sleeping=sleeping)


def _step_times(model, solver, pipeline, contacts, s0, s1, steps, dt, body_f=None):
    """Median solver-step and collide+step times [s] over ``steps`` steps (state ping-pong);
    ``body_f``, when given, is written to the input state before each step (untimed)."""
    solve, total = [], []
    for _ in range(steps):
        if body_f is not None:
            s0.body_f.assign(body_f)
        t0 = time.perf_counter()
        pipeline.collide(s0, contacts)
        t1 = time.perf_counter()
        solver.step(s0, s1, None, contacts, dt)
        wp.synchronize_device(model.device)
        t2 = time.perf_counter()
        s0, s1 = s1, s0
        solve.append(t2 - t1)
        total.append(t2 - t0)
    return float(np.median(solve)), float(np.median(total)), s0, s1


def measure(kind: str, world_count: int, seconds: float, deterministic: bool, timed: int, warmup: int) -> dict:
    scene = build_scene("tower", world_count, "cpu")
    model, dt = scene.model, scene.dt
    pipeline = newton.CollisionPipeline(model, deterministic=deterministic) if deterministic else \
        newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    solver = _solver(kind, model, True)
    obs = solver.observables({solver.ObservableKind.BODY_AWAKE})
    s0, s1 = model.state(), model.state()
    asleep_at = None
    steps = int(round(seconds / dt))
    marks = {int(round(t / dt)): f"asleep_at_{t:g}s" for t in (2.0, 6.0) if t <= seconds}
    fractions = {}
    for i in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, dt, observables=obs)
        s0, s1 = s1, s0
        if i + 1 in marks:
            fractions[marks[i + 1]] = 1.0 - float(obs.body_awake.numpy().mean())
        if i % 10 == 9 and not obs.body_awake.numpy().any():
            asleep_at = (i + 1) * dt
            break
    awake = int(obs.body_awake.numpy().sum())
    for name in marks.values():
        fractions.setdefault(name, 1.0 if asleep_at is not None else None)
    row = {"solver": kind, "worlds": world_count, "deterministic": deterministic,
           "time_to_sleep_s": asleep_at, "awake_at_end": awake, "bodies": model.body_count, **fractions}
    if asleep_at is None:
        return row
    _step_times(model, solver, pipeline, contacts, s0, s1, warmup, dt)
    row["asleep_step_s"], row["asleep_total_s"], s0, s1 = _step_times(model, solver, pipeline, contacts, s0, s1,
                                                                        timed, dt)
    # Partly asleep: 1e-6 N on the top box of tower 0 in every world wakes that tower's island each
    # step (a nonzero body_f is a wake event); the other three towers sleep on.
    nudge = np.zeros((model.body_count, 6), np.float32)
    nudge[np.arange(world_count) * (model.body_count // world_count) + TOWER_HEIGHTS[0] - 1, 5] = 1.0e-6
    _step_times(model, solver, pipeline, contacts, s0, s1, warmup, dt, nudge)
    row["partly_asleep_step_s"], row["partly_asleep_total_s"], s0, s1 = _step_times(
        model, solver, pipeline, contacts, s0, s1, timed, dt, nudge)
    s0.body_f.assign(nudge)
    pipeline.collide(s0, contacts)
    solver.step(s0, s1, None, contacts, dt, observables=obs)  # untimed: reads who is awake
    s0, s1 = s1, s0
    row["partly_awake_bodies"] = int(obs.body_awake.numpy().sum())
    s0.body_f.zero_()
    s1.body_f.zero_()
    # The same resting state stepped with sleeping off (a fresh solver, no wake-up transient to time).
    awake_solver = _solver(kind, model, False)
    _step_times(model, awake_solver, pipeline, contacts, s0, s1, warmup, dt)
    row["awake_step_s"], row["awake_total_s"], _, _ = _step_times(model, awake_solver, pipeline, contacts, s0, s1,
                                                                  timed, dt)
    row["asleep_over_awake_step"] = row["asleep_step_s"] / row["awake_step_s"]
    row["asleep_over_awake_total"] = row["asleep_total_s"] / row["awake_total_s"]
    row["partly_over_awake_step"] = row["partly_asleep_step_s"] / row["awake_step_s"]
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worlds", default="1,16", help="comma-separated world counts")
    parser.add_argument("--solvers", default="steel,newton", help="steel and/or newton (the reference)")
    parser.add_argument("--seconds", type=float, default=4.0, help="simulated time allowed to fall asleep [s]")
    parser.add_argument("--deterministic", action="store_true", help="CollisionPipeline(deterministic=True)")
    parser.add_argument("--timed", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args(argv)
    wp.config.quiet = True
    for worlds in (int(w) for w in args.worlds.split(",")):
        for kind in args.solvers.split(","):
            row = measure(kind, worlds, args.seconds, args.deterministic, args.timed, args.warmup)
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
