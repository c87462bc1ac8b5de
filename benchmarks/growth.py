"""Growth with the work: SolverSteel's time per step against the number of rows and of worlds.

Two series, each stepped by Newton's reference ``newton.solvers.SolverSteel`` and directly after it by
ours, ``steel.solvers.SolverSteel`` (default options both), ``--repeats`` times with the best kept so
machine noise hits both alike:

* a 2D pyramid of boxes (``benchmarks.scenes.build_pyramid``) of 10, 20 and 30 levels (55, 210 and
  465 boxes), one world: the work grows with the rows of one world;
* the four box towers (``tower``) at 1, 16, 64 and 256 worlds: the work grows with the worlds.

Each run builds a fresh model, runs untimed steps until it has settled (``benchmarks.settle``: the towers
``SETTLE_S["tower"]`` = 1.5 s simulated, every box resting; a pyramid, which starts stacked,
``PYRAMID_SETTLE_S``) and ``--warmup`` more (kernel compilation), then ``--steps`` steps of Newton's
``CollisionPipeline.collide`` + ``solver.step`` at ``--dt`` (default 1/240 s), each call timed on its own with
a device synchronize after it: a contact solver is timed with its contacts carrying the load, not while the
towers are in the air. *rows* are the constraint rows our solver reserved in the last step
(``rows.world_row_count`` summed over worlds and row families), *contacts* the pipeline's
``rigid_contact_count``; both are read after the timed window. The fitted exponent is the slope of
log(time per step) against log(rows) (pyramids) and log(worlds) (towers), least squares; 1 is linear.

``--stand SECONDS`` then steps the 30-level pyramid alone with ours for that long (simulated) and
reports whether it stands: max horizontal drift of any box [m], lowest box centre [m] (ideal
``BOX_HALF`` = 0.1 m) and the largest sink of any box below its start height [m].

    .venv/bin/python -m benchmarks.growth --quick --out results/bench        # what make bench runs
    .venv/bin/python -m benchmarks.growth --steps 40 --repeats 3 --stand 10 --out results/bench
    .venv/bin/python -m benchmarks.growth --dt 1/600 --quick                    # the other time step
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import warp as wp

import newton
import newton.solvers
import steel.solvers
from steel.solvers.steel.rows.capacity import resolved_rigid_contact_max

from . import scenes as sc
from .measure import _captured_stdout, _finite, _watched_pose
from .run import parse_dts
from .settle import settle_steps

DEFAULT_LEVELS = "10,20,30"
DEFAULT_TOWER_WORLDS = "1,16,64,256"
SOLVERS = {"reference": newton.solvers.SolverSteel, "ours": steel.solvers.SolverSteel}
DEFAULT_DT = "1/240"  # [s] the step users of contact-rich scenes run (PhysX-based RL, many Newton examples)
# [s] simulated time a pyramid runs untimed: it starts stacked at rest, so only its first contacts' impulses
# and the contact history need to build up (a few steps); the towers use benchmarks.settle's SETTLE_S.
PYRAMID_SETTLE_S = 0.25


def make_solver(which: str, model: newton.Model):
    """Ours with default options; the reference with its free-body row pool sized by our rule (three rows per
    contact a world can meet): its fixed default (512 rows per world) drops most rows of a pyramid, which
    would time a different problem."""
    if which == "ours":
        return steel.solvers.SolverSteel(model)
    per_world = math.ceil(resolved_rigid_contact_max(model) / max(int(model.world_count), 1))
    return newton.solvers.SolverSteel(model, free_body_constraint_max=max(512, 3 * per_world))


@dataclass
class GrowthEntry:
    """One (case, solver) result, the best of the repeats.

    Attributes:
        case: ``pyramidN`` or ``tower``.
        dt: the time step [s].
        settle_steps: untimed settling steps before the warm-up (module docstring).
        series: ``"pyramid"`` (rows grow) or ``"towers"`` (worlds grow).
        worlds: number of worlds.
        boxes: boxes over all worlds.
        solver: ``"reference"`` or ``"ours"``.
        step_ms: mean ``solver.step`` time [ms per step].
        total_ms: mean collide + step time [ms per step].
        rows: constraint rows our solver reserved in the last step, all worlds (ours only; the reference
            exposes no count, and the rows of the same contacts are the same work).
        rows_dropped: rows that did not fit our row pool (ours only).
        contacts: the pipeline's rigid contact count after the last step.
        sanity: ``benchmarks.scenes.outcome`` of the final state.
        notes: overflow or warning lines the solver printed.
    """

    case: str
    series: str
    worlds: int
    boxes: int
    solver: str
    step_ms: float
    total_ms: float
    dt: float = 0.0  # [s] the time step timed
    settle_steps: int = 0  # untimed steps run before the warm-up and the timed window
    rows: int | None = None
    rows_dropped: int | None = None
    contacts: int = 0
    sanity: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _ints(text: str, name: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{name} must be a comma list of positive ints, got {text!r}") from None
    if not values or min(values) < 1:
        raise ValueError(f"{name} must be a comma list of positive ints, got {text!r}")
    return values


def build_case(case: str, worlds: int, device: str) -> sc.Scene:
    """The scene of a case name: ``pyramidN`` (N levels) or ``tower``."""
    if case.startswith("pyramid"):
        return sc.build_pyramid(int(case[len("pyramid"):]), worlds, device)
    return sc.build_scene(case, worlds, device)


def _setup(scene: sc.Scene):
    """Newton's pipeline, its contacts, two states at the model's pose, a control and the watched start [m]."""
    model = scene.model
    pipeline = newton.CollisionPipeline(model)
    s0, s1 = model.state(), model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    start, _ = _watched_pose(scene, s0.body_q.numpy())
    return pipeline, pipeline.contacts(), s0, s1, model.control(), start


def case_settle_steps(case: str, dt: float) -> int:
    """Untimed steps before a case's warm-up: the towers' settle time, a pyramid's ``PYRAMID_SETTLE_S``."""
    if case.startswith("pyramid"):
        return int(round(PYRAMID_SETTLE_S / dt))
    return settle_steps(case, dt)


def measure(case: str, series: str, worlds: int, which: str, device: str, steps: int, warmup: int,
            dt: float = sc.DT) -> GrowthEntry:
    """Time one solver on a fresh scene at time step ``dt`` [s], after it settled (see the module docstring)."""
    notes: list[str] = []
    with _captured_stdout(notes):
        scene = build_case(case, worlds, device)
        solver = make_solver(which, scene.model)
        pipeline, contacts, s0, s1, control, start = _setup(scene)
        settle = case_settle_steps(case, dt)
        t_collide = t_step = 0.0
        for k in range(settle + warmup + steps):
            t0 = time.perf_counter()
            pipeline.collide(s0, contacts)
            wp.synchronize_device(device)
            t1 = time.perf_counter()
            s0.clear_forces()
            solver.step(s0, s1, control, contacts, dt)
            wp.synchronize_device(device)
            t2 = time.perf_counter()
            s0, s1 = s1, s0
            if k >= settle + warmup:
                t_collide += t1 - t0
                t_step += t2 - t1
        pos, quat = _watched_pose(scene, s0.body_q.numpy())
        finite = _finite(s0.body_q, s0.body_qd)
        sanity = sc.outcome(scene.metric, pos, quat, start, finite)
        rows = dropped = None
        if which == "ours":
            rows = int(solver.steel_data.rows.world_row_count.numpy().sum())
            dropped = int(solver.steel_data.rows.world_rows_dropped.numpy().sum())
        n_contacts = int(contacts.rigid_contact_count.numpy()[0])
    n = max(steps, 1)
    return GrowthEntry(case, series, worlds, scene.bodies_per_world * worlds, which, 1e3 * t_step / n,
                       1e3 * (t_step + t_collide) / n, dt, settle, rows, dropped, n_contacts, sanity, notes)


def run(levels: list[int], tower_worlds: list[int], device: str, steps: int, warmup: int, repeats: int,
        t_start: float | None = None, dt: float = sc.DT) -> list[GrowthEntry]:
    """Every case, reference then ours, ``repeats`` times; the fastest (by collide + step) kept."""
    t_start = time.perf_counter() if t_start is None else t_start
    cases = [(f"pyramid{n}", "pyramid", 1) for n in levels] + [("tower", "towers", w) for w in tower_worlds]
    entries: list[GrowthEntry] = []
    for case, series, worlds in cases:
        best: dict[str, GrowthEntry] = {}
        for _ in range(repeats):
            for which in SOLVERS:  # interleaved: reference, then ours, each repeat
                e = measure(case, series, worlds, which, device, steps, warmup, dt)
                if which not in best or e.total_ms < best[which].total_ms:
                    best[which] = e
        for which in SOLVERS:
            e = best[which]
            entries.append(e)
            print(f"[{time.perf_counter() - t_start:7.1f} s] growth {case} x{worlds} {which}: "
                  f"step {e.step_ms:.2f} ms, collide+step {e.total_ms:.2f} ms, rows {e.rows}, "
                  f"contacts {e.contacts}, {e.sanity.get('text', '')}", flush=True)
    _carry_rows(entries)
    return entries


def _carry_rows(entries: list[GrowthEntry]) -> None:
    """Give each reference entry the rows of ours on the same case (the same contacts, the same rows)."""
    ours = {(e.case, e.worlds): e.rows for e in entries if e.solver == "ours"}
    for e in entries:
        if e.rows is None:
            e.rows = ours.get((e.case, e.worlds))


def fit_exponent(x, y) -> float | None:
    """Least-squares slope of log(y) against log(x); ``None`` with fewer than two distinct positive x."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = (x > 0) & (y > 0)
    if len(np.unique(x[ok])) < 2:
        return None
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def exponents(entries: list[GrowthEntry]) -> dict:
    """Fitted exponents per solver and timing: pyramid time vs rows, tower time vs worlds and vs rows."""
    out: dict = {}
    for which in SOLVERS:
        for timing in ("step_ms", "total_ms"):
            pyr = [e for e in entries if e.solver == which and e.series == "pyramid"]
            tow = [e for e in entries if e.solver == which and e.series == "towers"]
            out[f"{which} {timing}"] = {
                "pyramid_vs_rows": fit_exponent([e.rows or 0 for e in pyr], [getattr(e, timing) for e in pyr]),
                "towers_vs_worlds": fit_exponent([e.worlds for e in tow], [getattr(e, timing) for e in tow]),
                "towers_vs_rows": fit_exponent([e.rows or 0 for e in tow], [getattr(e, timing) for e in tow]),
            }
    return out


def stand(levels: int, seconds: float, device: str, which: str = "ours", report_every: float = 1.0) -> dict:
    """Step the ``levels`` pyramid with ``which`` solver for ``seconds`` [s] simulated; drift, lowest centre,
    sink [m]."""
    scene = sc.build_pyramid(levels, 1, device)
    solver = make_solver(which, scene.model)
    pipeline, contacts, s0, s1, control, start = _setup(scene)
    steps = int(round(seconds / scene.dt))
    every = max(int(round(report_every / scene.dt)), 1)
    t0 = time.perf_counter()
    res: dict = {}
    for k in range(1, steps + 1):
        pipeline.collide(s0, contacts)
        s0.clear_forces()
        solver.step(s0, s1, control, contacts, scene.dt)
        s0, s1 = s1, s0
        if k % every == 0 or k == steps:
            pos, quat = _watched_pose(scene, s0.body_q.numpy())
            res = sc.outcome("drift", pos, quat, start, _finite(s0.body_q, s0.body_qd))
            if not res["nan"]:
                res["sink_max_m"] = float((start[..., 2] - pos[..., 2]).max())
            res["time_s"] = k * scene.dt
            drift_mm = res.get("drift_max_m", float("nan")) * 1e3
            print(f"  stand pyramid{levels} {which}: t {res['time_s']:.2f} s, {res['text']} ({drift_mm:.4f} mm), "
                  f"sink max {res.get('sink_max_m', float('nan')) * 1e3:.2f} mm "
                  f"({time.perf_counter() - t0:.0f} s wall)", flush=True)
            if res["nan"]:
                break
    dropped = int(solver.steel_data.rows.world_rows_dropped.numpy().sum()) if which == "ours" else None
    res.update(levels=levels, boxes=scene.bodies_per_world, seconds=seconds, wall_s=time.perf_counter() - t0,
               solver=which, dropped_rows=dropped)
    return res


def plot(entries: list[GrowthEntry], path: str) -> None:
    """Log-log plot: time per step against rows (both series) and against worlds (towers)."""
    import matplotlib  # noqa: PLC0415 - only needed for the plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, (ax_rows, ax_worlds) = plt.subplots(1, 2, figsize=(11, 4.5))
    style = {"reference": ("tab:gray", "newton SolverSteel"), "ours": ("tab:blue", "steel SolverSteel")}
    for which, (color, label) in style.items():
        for series, marker in (("pyramid", "o"), ("towers", "s")):
            sel = [e for e in entries if e.solver == which and e.series == series and e.rows]
            if sel:
                ax_rows.loglog([e.rows for e in sel], [e.total_ms for e in sel], marker + "-", color=color,
                               label=f"{label}, {series}")
        tow = [e for e in entries if e.solver == which and e.series == "towers"]
        if tow:
            ax_worlds.loglog([e.worlds for e in tow], [e.total_ms for e in tow], "s-", color=color, label=label)
    for ax, xs in ((ax_rows, [e.rows for e in entries if e.rows]), (ax_worlds, [e.worlds for e in entries
                                                                                 if e.series == "towers"])):
        ys = [e.total_ms for e in entries if e.solver == "ours" and (ax is ax_rows or e.series == "towers")]
        if xs and ys:  # a slope-1 guide through the smallest of ours: linear growth
            x0, x1 = min(xs), max(xs)
            y0 = min(ys)
            ax.loglog([x0, x1], [y0, y0 * x1 / x0], ":", color="k", label="linear (slope 1)")
    ax_rows.set(xlabel="constraint rows per step", ylabel="collide + step [ms]", title="time vs rows")
    ax_worlds.set(xlabel="worlds (towers)", ylabel="collide + step [ms]", title="time vs worlds")
    for ax in (ax_rows, ax_worlds):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _exp(v) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _table(entries: list[GrowthEntry], exps: dict) -> list[str]:
    """The per-case table and the fitted exponents as markdown lines."""
    lines = ["| case | worlds | boxes | rows | contacts | reference step [ms] | ours step [ms] | "
             "reference collide+step [ms] | ours collide+step [ms] | ratio (ref/ours, collide+step) | "
             "ours outcome | reference outcome |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    by = {(e.case, e.worlds, e.solver): e for e in entries}
    nan = float("nan")
    for e in entries:
        if e.solver != "ours":
            continue
        r = by.get((e.case, e.worlds, "reference"))
        ratio = f"{r.total_ms / e.total_ms:.2f}" if r else "n/a"
        drop = f" ({e.rows_dropped} dropped)" if e.rows_dropped else ""
        lines.append(
            f"| {e.case} | {e.worlds} | {e.boxes} | {e.rows}{drop} | {e.contacts} | "
            f"{r.step_ms if r else nan:.2f} | {e.step_ms:.2f} | {r.total_ms if r else nan:.2f} | "
            f"{e.total_ms:.2f} | {ratio} | {e.sanity.get('text', '')} | {r.sanity.get('text', '') if r else ''} |")
    lines += ["", "Fitted exponent of time per step (log-log least squares; 1 = linear):", "",
              "| solver, timing | pyramid vs rows | towers vs worlds | towers vs rows |", "|---|---:|---:|---:|"]
    for key, v in exps.items():
        lines.append(f"| {key} | {_exp(v['pyramid_vs_rows'])} | {_exp(v['towers_vs_worlds'])} | "
                     f"{_exp(v['towers_vs_rows'])} |")
    return lines


def markdown(entries: list[GrowthEntry], exps: dict, stand_res: dict | None, command: str) -> str:
    """The table, the exponents (when cases ran) and the stand check as markdown."""
    lines = _table(entries, exps) if entries else []
    if entries:
        settles = ", ".join(sorted({f"{e.case} {e.settle_steps}" for e in entries if e.solver == "ours"}))
        lines = [f"dt {entries[0].dt:.6g} s; untimed settling steps before the warm-up: {settles}.", ""] + lines
    if stand_res:
        lines += ["", f"Stand check, {stand_res['solver']}, pyramid of {stand_res['levels']} levels "
                  f"({stand_res['boxes']} boxes), "
                  f"{stand_res.get('time_s', 0):.1f} s simulated: {stand_res.get('text', '')}, sink max "
                  f"{stand_res.get('sink_max_m', float('nan')) * 1e3:.2f} mm, dropped rows "
                  f"{'n/a' if stand_res['dropped_rows'] is None else stand_res['dropped_rows']} "
                  f"({stand_res['wall_s']:.0f} s wall)."]
    notes = sorted({f"{e.case} x{e.worlds} {e.solver}: {n}" for e in entries for n in e.notes})
    if notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    lines += ["", f"Command: `{command}`"]
    return "\n".join(lines).lstrip("\n") + "\n"


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.growth", description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", default=DEFAULT_LEVELS, help=f"pyramid levels (default {DEFAULT_LEVELS})")
    p.add_argument("--tower-worlds", default=DEFAULT_TOWER_WORLDS, help=f"tower world counts (default "
                   f"{DEFAULT_TOWER_WORLDS})")
    p.add_argument("--dt", default=DEFAULT_DT, help=f"the time step [s], a fraction or decimal (default {DEFAULT_DT})")
    p.add_argument("--steps", type=int, default=30, help="timed steps per run (default 30)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first, incl. compilation (default 5)")
    p.add_argument("--repeats", type=int, default=2, help="runs per entry, best kept (default 2)")
    p.add_argument("--quick", action="store_true", help="10 timed steps, 3 warmup, 1 repeat (make bench)")
    p.add_argument("--stand", type=float, default=0.0, help="simulated seconds of the stand check of the "
                   "largest pyramid with ours (default 0: skipped)")
    p.add_argument("--stand-solver", choices=tuple(SOLVERS), default="ours", help="solver of the stand check")
    p.add_argument("--stand-only", action="store_true", help="run only the stand check (needs --stand)")
    p.add_argument("--device", default=None, help="Warp device (default: Warp's preferred device)")
    p.add_argument("--out", default=None, help="directory for growth.json, growth.md and growth.png")
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.warmup, args.repeats = 10, 3, 1
    for name in ("steps", "repeats"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.warmup < 0:
        raise ValueError(f"--warmup must be >= 0, got {args.warmup}")
    if args.stand < 0:
        raise ValueError(f"--stand must be >= 0, got {args.stand}")
    dts = parse_dts(args.dt)
    if len(dts) != 1:
        raise ValueError(f"--dt takes one time step, got {args.dt!r}")
    args.dt_label, args.dt_s = dts[0]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    levels, tower_worlds = _ints(args.levels, "--levels"), _ints(args.tower_worlds, "--tower-worlds")
    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    device = args.device or str(wp.get_preferred_device())
    command = (f"python -m benchmarks.growth --levels {args.levels} --tower-worlds {args.tower_worlds} "
               f"--dt {args.dt_label} --steps {args.steps} --warmup {args.warmup} --repeats {args.repeats} --stand {args.stand:g} "
               f"--stand-solver {args.stand_solver}{' --stand-only' if args.stand_only else ''} "
               f"--device {device}" + (f" --out {args.out}" if args.out else ""))
    t0 = time.perf_counter()
    entries = [] if args.stand_only else run(levels, tower_worlds, device, args.steps, args.warmup, args.repeats, t0,
                                                args.dt_s)
    stand_res = stand(max(levels), args.stand, device, args.stand_solver) if args.stand > 0 else None
    exps = exponents(entries)
    md = markdown(entries, exps, stand_res, command)
    print()
    print(md)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "growth.json"), "w", encoding="utf-8") as f:
            json.dump({"command": command, "entries": [asdict(e) for e in entries], "exponents": exps,
                       "stand": stand_res, "total_s": time.perf_counter() - t0}, f, indent=2)
        with open(os.path.join(args.out, "growth.md"), "w", encoding="utf-8") as f:
            f.write(md)
        plot(entries, os.path.join(args.out, "growth.png"))
        print(f"wrote {os.path.join(args.out, 'growth.json')}, growth.md and growth.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
