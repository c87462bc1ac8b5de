"""Benchmark runner: Steel against Newton's reference solvers and MuJoCo C, side by side.

Usage (from the repository root)::

    python -m benchmarks.run                       # defaults, ~minutes on a laptop CPU
    python -m benchmarks.run --scenes ant --worlds 64 --dt 1/240 --steps 200 --repeats 3 --out results/bench

For every scene, world count and time step (``--dt``, default 1/240 and 1/600 s) the candidates run
back to back (Newton's reference solver, then ours of the same name, then MuJoCo C), repeated
``--repeats`` times with the best time kept, so that machine noise hits all of them alike. A contact
scene (tower, humanoid, ant) is timed in contact: each candidate first runs the scene's settle time
untimed (:mod:`benchmarks.settle`; ``--no-settle`` skips it), the start of every window is checked
(settled or not, shown in the table), and the repeats time successive windows of that settled scene.
Throughput is reported as world-steps per second (``worlds * steps / seconds``), and each Steel entry as a
ratio to the ``newton.solvers`` class of the same name. Then, unless ``--no-scheduler``, the
collision-scheduling benchmark of :mod:`benchmarks.scheduler` (frame time and collision calls per frame
of ``steel``'s and Newton's ``CollisionSubstepScheduler`` against collide-every-substep), and unless
``--no-vbd`` the SolverVBD particle benchmark of :mod:`benchmarks.vbd`.  See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import platform
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field

import warp as wp

from . import contact_models
from . import scenes as sc
from . import scheduler as sched
from . import settle
from . import vbd
from .measure import CorePair, Measurement, MujocoRun, SolverRun

REFERENCE_MODULE = "newton.solvers"
OURS_MODULE = "steel.solvers"
DEFAULT_SOLVERS = ("newton.solvers:SolverFeatherstone", "newton.solvers:SolverSteel")
# Default world counts per scene: small enough that `make bench` fits in ~10 minutes on 2 CPU cores
# (ant x 64 is the count the solver comparisons are judged on).
DEFAULT_WORLDS = {"tower": [1, 16], "humanoid": [16], "ant": [64], "chain": [64], "cartpole": [64]}
DEFAULT_DT = "1/240,1/600"  # [s] the time steps every scene is timed at
CORE_SCENES = ("humanoid", "ant", "chain")
CORE_OURS = "core: steel FK+bias+H+chol"
CORE_REF = "core: newton eval_fk+eval_mass_matrix"
MUJOCO = "mujoco C"


@dataclass
class Candidate:
    """One thing to time on a scene: a solver class, MuJoCo C, or one side of the core benchmark."""

    label: str
    kind: str  # "solver", "mujoco", "core"
    spec: str = ""  # "module:Class" for solvers, "ours"/"reference" for core
    reference: str | None = None  # label of the entry this one's ratio is taken against


@dataclass
class Entry:
    """One row of the report (the best of ``--repeats`` runs)."""

    scene: str
    worlds: int
    solver: str
    kind: str
    reference: str | None
    dt: str | None = None  # the time step as given to --dt ("1/240"); None for the core rows
    world_steps_per_s: float | None = None
    seconds: float | None = None
    steps: int | None = None
    ratio: float | None = None
    step_world_steps_per_s: float | None = None  # collision time left out (CPU devices)
    step_ratio: float | None = None  # step-only, against the same reference
    mujoco_ratio: float | None = None  # world-steps/s over MuJoCo C's on the same scene and world count
    mujoco_step_ratio: float | None = None  # step-only world-steps/s over MuJoCo C's (whose step collides too)
    launches_per_step: float | None = None
    collide_launches_per_step: float | None = None
    sanity: dict = field(default_factory=dict)
    start: dict = field(default_factory=dict)  # the settle check at the kept window's start (benchmarks.settle)
    ratio_unsettled: bool = False  # this row's or its reference's window did not start settled
    settle_wall_s: float | None = None  # wall time of the untimed settle and warm-up steps [s] (not timed)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


# ----------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--scenes", default=",".join(sc.SCENES), help="comma list of scenes (default: all)")
    p.add_argument(
        "--worlds",
        default="",
        help="world counts: a comma list for every scene ('1,64'), or per scene ('tower=1,tower=16,ant=64'); "
        "scenes not named keep their defaults " + str(DEFAULT_WORLDS),
    )
    p.add_argument(
        "--dt",
        default=DEFAULT_DT,
        help=f"comma list of time steps [s], as fractions or decimals (default {DEFAULT_DT}); every scene runs at each",
    )
    # The contact scenes settle before the window (--settle), so the window need not be long enough for
    # anything to land: 300 steps is 0.5 s simulated at 1/600 s, 1.25 s at 1/240 s.
    p.add_argument("--steps", type=int, default=300, help="timed steps per window (default 300)")
    p.add_argument(
        "--warmup", type=int, default=10, help="untimed steps first, incl. kernel compilation (default 10); "
        "a contact scene's settle time comes on top"
    )
    p.add_argument(
        "--settle",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="time contact scenes in contact: run each scene's settle time untimed first "
        f"(simulated seconds {settle.SETTLE_S}, see benchmarks/settle.py)",
    )
    p.add_argument("--repeats", type=int, default=3, help="runs per entry, best kept (default 3)")
    p.add_argument("--count-steps", type=int, default=3, help="extra steps over which launches are counted")
    p.add_argument("--device", default=None, help="Warp device (default: Warp's preferred device)")
    p.add_argument(
        "--solvers",
        default=",".join(DEFAULT_SOLVERS),
        help="comma list of module:Class with Newton's step API; each newton.solvers class is paired with "
        "steel.solvers' class of the same name when that exists, and vice versa ('' for none)",
    )
    p.add_argument("--mujoco", action=argparse.BooleanOptionalAction, default=True, help="include MuJoCo C rows")
    p.add_argument(
        "--core", action=argparse.BooleanOptionalAction, default=True, help="include the articulation-core benchmark"
    )
    p.add_argument("--core-worlds", default="1,64", help="world counts for the core benchmark (default 1,64)")
    p.add_argument(
        "--scheduler",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="include the collision-scheduling benchmark (benchmarks/scheduler.py: steel's vs Newton's "
        "CollisionSubstepScheduler vs collide-every-substep; its own cases, independent of --scenes)",
    )
    p.add_argument(
        "--scheduler-frames",
        type=int,
        default=sched.DEFAULT_FRAMES,
        help=f"timed frames per scheduler case (default {sched.DEFAULT_FRAMES} = 1 s simulated)",
    )
    p.add_argument(
        "--vbd",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="include the SolverVBD benchmark (benchmarks/vbd.py: cloth 16/32/64, cloth with self-contact, "
        "soft cube; towers x1 and x16, a 20-box stack, a hard chain holding a 1000 kg block; ours against "
        "newton.solvers.SolverVBD)",
    )
    p.add_argument("--vbd-steps", type=int, default=vbd.DEFAULT_STEPS, help="timed steps per VBD case")
    p.add_argument(
        "--contact-models",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="include SolverSteel's seed-only contact models against MuJoCo C (benchmarks/contact_models.py: "
        "condim-6 rolling balls, cubes hanging by adhesion)",
    )
    p.add_argument("--verbose", action="store_true", help="keep Warp's module-load log (shows compile times)")
    p.add_argument("--out", default=None, help="directory for bench.json and bench.md")
    return p.parse_args(argv)


def _ints(text: str) -> list[int]:
    return [int(t) for t in text.split(",") if t.strip()]


def parse_dts(text: str) -> list[tuple[str, float]]:
    """``--dt`` as ``[(label, seconds)]``: ``"1/240,0.002"`` -> ``[("1/240", 1/240), ("0.002", 0.002)]``."""
    out = []
    for item in [t.strip() for t in text.split(",") if t.strip()]:
        num, slash, den = item.partition("/")
        try:
            value = float(num) / float(den) if slash else float(item)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"--dt: {item!r} is not a time step in seconds (e.g. 1/240 or 0.004)") from None
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f"--dt: {item!r} is not a positive finite time step")
        out.append((item, value))
    if not out:
        raise ValueError(f"--dt: no time step in {text!r}")
    return out


def resolve_worlds(text: str, scene_names: list[str]) -> dict[str, list[int]]:
    """World counts per scene from ``--worlds`` (see :func:`parse_args`)."""
    out = {s: list(DEFAULT_WORLDS.get(s, [1])) for s in scene_names}
    explicit: dict[str, list[int]] = {}
    common: list[int] = []
    for item in [t.strip() for t in text.split(",") if t.strip()]:
        if "=" in item:
            name, n = item.split("=", 1)
            explicit.setdefault(name.strip(), []).append(int(n))
        else:
            common.append(int(item))
    for s in scene_names:
        if s in explicit:
            out[s] = explicit[s]
        elif common:
            out[s] = common
    return out


def _load_class(spec: str):
    module, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"solver {spec!r} is not of the form module:Class")
    return getattr(importlib.import_module(module), name)


def _has_class(module: str, name: str) -> bool:
    try:
        return hasattr(importlib.import_module(module), name)
    except Exception:  # missing, or broken mid-development: run without it rather than crash the run
        return False


def _short(spec: str) -> str:
    """``newton.solvers:SolverSteel`` -> ``newton.SolverSteel`` for the table."""
    module, _, name = spec.partition(":")
    return f"{module.split('.')[0]}.{name}"


def solver_candidates(specs: list[str]) -> list[Candidate]:
    """Reference/ours pairs in run order: each reference directly followed by ours of the same name.

    A ``newton.solvers`` class brings in ``steel.solvers``' class of the same name when it exists (so
    our solvers are picked up automatically once written); an explicit ``steel.solvers`` class brings
    in its reference.  Any other ``module:Class`` runs on its own, paired with a same-named reference
    if ``newton.solvers`` has one.
    """
    out: list[Candidate] = []
    seen: set[str] = set()

    def add(spec: str, reference: str | None) -> None:
        if spec not in seen:
            seen.add(spec)
            out.append(Candidate(_short(spec), "solver", spec, reference))

    for spec in specs:
        module, _, name = spec.partition(":")
        ref_spec = f"{REFERENCE_MODULE}:{name}"
        ours_spec = f"{OURS_MODULE}:{name}"
        if module == REFERENCE_MODULE:
            add(spec, None)
            if _has_class(OURS_MODULE, name):
                add(ours_spec, _short(spec))
        else:
            has_ref = _has_class(REFERENCE_MODULE, name)
            if has_ref:
                add(ref_spec, None)
            add(spec, _short(ref_spec) if has_ref else None)
    return out


# ----------------------------------------------------------------------------------------------
# Running
# ----------------------------------------------------------------------------------------------


def _start_run(cand: Candidate, scene: str, worlds: int, dt: float, args) -> SolverRun | MujocoRun:
    """A candidate's scene built and advanced through its warm-up and (``--settle``) settle time."""
    if cand.kind == "solver":
        run = SolverRun(_load_class(cand.spec), scene, worlds, args.device, dt)
    else:
        run = MujocoRun(scene, worlds, dt)
    run.advance(args.warmup + (settle.settle_steps(scene, dt) if args.settle else 0))
    return run


def _measure(cand: Candidate, run, scene: str, args, core: CorePair | None) -> Measurement:
    """One timed window of ``run`` (a contact scene's start checked), or one core timing."""
    check = scene in settle.SETTLE_S
    if cand.kind == "solver":
        return run.window(args.steps, args.count_steps, check_start=check)
    if cand.kind == "mujoco":
        return run.window(args.steps, check_start=check)
    if core is None:
        raise RuntimeError("core benchmark could not be set up")
    return core.time(cand.spec, args.steps, args.warmup, args.count_steps)


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def run_group(scene: str, worlds: int, cands: list[Candidate], args, t_start: float, core=None,
              dt: tuple[str, float] | None = None) -> list[Entry]:
    """Run the candidates of one (scene, worlds, dt) interleaved, ``--repeats`` times, keep each one's best.

    A contact scene with ``--settle`` is built and settled once per candidate and its repeats time successive
    windows (settling again per repeat would cost more than the windows); other scenes are built afresh per
    repeat. ``dt``: ``(label, seconds)``; ``None`` for the core benchmark.
    """
    best: dict[str, Measurement] = {}
    errors: dict[str, str] = {}
    runs: dict[str, object] = {}
    settle_wall: dict[str, float] = {}
    keep = args.settle and scene in settle.SETTLE_S
    for _ in range(max(args.repeats, 1)):
        for cand in cands:
            if cand.label in errors:
                continue
            try:
                run = runs.get(cand.label)
                if run is None and cand.kind != "core":
                    t0 = time.perf_counter()
                    run = _start_run(cand, scene, worlds, dt[1], args)
                    settle_wall[cand.label] = settle_wall.get(cand.label, 0.0) + time.perf_counter() - t0
                    if keep:
                        runs[cand.label] = run
                m = _measure(cand, run, scene, args, core)
            except Exception as exc:  # a solver that cannot handle a scene is a result, not a crash
                errors[cand.label] = _error_text(exc)
                continue
            if cand.label not in best or m.seconds < best[cand.label].seconds:
                best[cand.label] = m
    runs.clear()
    entries = []
    for cand in cands:
        e = Entry(scene, worlds, cand.label, cand.kind, cand.reference, dt=dt[0] if dt else None,
                  error=errors.get(cand.label))
        e.settle_wall_s = settle_wall.get(cand.label)
        m = best.get(cand.label)
        if m is not None:
            e.world_steps_per_s, e.seconds, e.steps = m.world_steps_per_s, m.seconds, m.steps
            e.step_world_steps_per_s = m.step_world_steps_per_s
            e.launches_per_step, e.collide_launches_per_step = m.launches_step, m.launches_collide
            e.sanity, e.warnings, e.start = m.sanity, m.warnings, m.start
        if cand.kind == "core" and core is not None and e.error is None and cand.spec == "ours":
            try:
                e.sanity = core.agreement()
            except Exception as exc:
                e.sanity = {"text": f"check failed: {_error_text(exc)}"}
        entries.append(e)
    by_label = {e.solver: e for e in entries}
    for e in entries:
        # A reference row (Newton's own class, or Newton's core path) is its own reference: ratio 1.
        is_ref = e.solver.startswith("newton.") or e.solver == CORE_REF
        ref = by_label.get(e.reference) if e.reference else (e if is_ref else None)
        if ref is not None and e.world_steps_per_s and ref.world_steps_per_s:
            e.ratio = e.world_steps_per_s / ref.world_steps_per_s
            if e.step_world_steps_per_s and ref.step_world_steps_per_s:
                e.step_ratio = e.step_world_steps_per_s / ref.step_world_steps_per_s
            # A ratio between windows that did not both start settled compares different work.
            e.ratio_unsettled = any(x.start and not x.start.get("settled") for x in (e, ref))
        mj = by_label.get(MUJOCO)
        if e.kind == "solver" and mj is not None and mj.world_steps_per_s and e.world_steps_per_s:
            e.mujoco_ratio = e.world_steps_per_s / mj.world_steps_per_s
            if e.step_world_steps_per_s:
                e.mujoco_step_ratio = e.step_world_steps_per_s / mj.world_steps_per_s
        print(_progress_line(e, time.perf_counter() - t_start), flush=True)
    return entries


def _progress_line(e: Entry, elapsed: float) -> str:
    dt = f" dt {e.dt:<6}" if e.dt else ""
    head = f"[{elapsed:7.1f}s] {e.scene:>8} x{e.worlds:<4}{dt} {e.solver:<38}"
    if e.error:
        return f"{head} ERROR {e.error}"
    ratio = f" ratio {e.ratio:.2f}" if e.ratio is not None else ""
    if e.ratio_unsettled:
        ratio += " [not both settled]"
    if e.step_ratio is not None:
        ratio += f" (step-only {e.step_ratio:.2f})"
    if e.mujoco_ratio is not None:
        ratio += f" vs MuJoCo C {e.mujoco_ratio:.3f}"
    launches = f" launches/step {e.launches_per_step:g}" if e.launches_per_step is not None else ""
    start = f"  start [{e.start['text']}]" if e.start else ""
    settled = f" (settle {e.settle_wall_s:.0f} s wall)" if e.settle_wall_s and e.start else ""
    return (f"{head} {e.world_steps_per_s:12,.0f} world-steps/s{ratio}{launches}  "
            f"{e.sanity.get('text', '')}{start}{settled}")


def run(args) -> list[Entry]:
    """Every (scene, worlds) group of solver rows, then the core benchmark; returns all entries."""
    scene_names = [s.strip() for s in args.scenes.split(",") if s.strip()]
    unknown = [s for s in scene_names if s not in sc.SCENES]
    if unknown:
        raise SystemExit(f"unknown scene(s) {unknown}; choose from {', '.join(sc.SCENES)}")
    worlds = resolve_worlds(args.worlds, scene_names)
    dts = parse_dts(args.dt)
    cands = solver_candidates([s.strip() for s in args.solvers.split(",") if s.strip()])
    t_start = time.perf_counter()
    entries: list[Entry] = []
    for scene in scene_names:
        group = list(cands)
        if args.mujoco and sc.build_mujoco(scene) is not None:
            group.append(Candidate(MUJOCO, "mujoco"))
        for n in worlds[scene]:
            for dt in dts:
                if group:
                    entries += run_group(scene, n, group, args, t_start, dt=dt)
    if args.core:
        core_cands = [Candidate(CORE_REF, "core", "reference"), Candidate(CORE_OURS, "core", "ours", CORE_REF)]
        for scene in [s for s in scene_names if s in CORE_SCENES]:
            for n in _ints(args.core_worlds):
                try:
                    core = CorePair(scene, n, args.device)
                except Exception as exc:
                    for c in core_cands:
                        entries.append(Entry(scene, n, c.label, "core", c.reference, error=_error_text(exc)))
                        print(_progress_line(entries[-1], time.perf_counter() - t_start), flush=True)
                    continue
                entries += run_group(scene, n, core_cands, args, t_start, core)
    return entries


# ----------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def explicit_command(args) -> str:
    """The command line with every option spelled out, so the table is reproducible as is."""
    names = [s.strip() for s in args.scenes.split(",") if s.strip()]
    worlds = ",".join(f"{s}={n}" for s, ns in resolve_worlds(args.worlds, names).items() for n in ns)
    parts = [
        "python -m benchmarks.run",
        f"--scenes {','.join(names)}",
        f"--worlds {worlds}",
        f"--dt {args.dt}",
        f"--steps {args.steps}",
        f"--warmup {args.warmup}",
        "--settle" if args.settle else "--no-settle",
        f"--repeats {args.repeats}",
        f"--count-steps {args.count_steps}",
        f"--device {args.device}",
        f"--solvers {shlex.quote(args.solvers)}",
        "--mujoco" if args.mujoco else "--no-mujoco",
        "--core" if args.core else "--no-core",
        f"--core-worlds {args.core_worlds}",
        "--scheduler" if args.scheduler else "--no-scheduler",
        f"--scheduler-frames {args.scheduler_frames}",
        "--vbd" if args.vbd else "--no-vbd",
        "--contact-models" if args.contact_models else "--no-contact-models",
        f"--vbd-steps {args.vbd_steps}",
    ]
    if args.out:
        parts.append(f"--out {args.out}")
    return " ".join(parts)


def _fmt(v, spec: str) -> str:
    return "—" if v is None else format(v, spec)


def markdown(entries: list[Entry], meta: dict, scheduler_entries=(), vbd_entries=(), vbd_rigid_entries=(),
             contact_entries=()) -> str:
    settle_text = ", ".join(f"{k} {v:g}" for k, v in (meta.get("settle") or {}).items())
    lines = [
        "# Steel benchmarks",
        "",
        f"Device `{meta['device']}` ({meta['cpu']}, {meta['cpu_count']} CPUs), Warp {meta['warp']}, "
        f"Newton {meta['newton']}, MuJoCo {meta['mujoco']}, Python {meta['python']}; {meta['date']}; "
        f"total {meta['total_s']:.0f} s.",
        "",
        f"{meta['steps']} timed steps after {meta['warmup']} warm-up steps, best of {meta['repeats']}; "
        + (f"contact scenes first run their settle time untimed ({settle_text} s simulated), once per candidate, "
           "and their repeats time successive windows of the settled scene; window start: the state the kept "
           "window started from (largest body speed, contacts carrying load per world: Newton's within "
           f"{settle.TOUCH_GAP * 1e3:g} mm, MuJoCo's d.ncon; settled or why not). " if meta.get("settle") else
           "no settle time (--no-settle). ")
        + "world-steps/s = worlds x steps / seconds. Ratio: against the `newton.solvers` class of the same name "
        "(core: against Newton's eval_fk + eval_mass_matrix). Launches: Python-level `wp.launch`/"
        "`wp.launch_tiled` calls per step, solver step + collision pipeline. Step-only: the collision "
        "pipeline's time (each `collide` call timed on its own, CPU only) left out, ratio against the reference's "
        "step-only figure. vs MuJoCo C: world-steps/s over MuJoCo C's on the same scene and world count, with "
        "collision / step-only (MuJoCo's `mj_step` always includes its own collision detection).",
        "",
        "| scene | worlds | dt [s] | solver | world-steps/s | ratio | step-only world-steps/s | step-only ratio | "
        "vs MuJoCo C (with collision / step-only) | launches/step (step + collide) | sanity | window start | notes |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for e in entries:
        dt = e.dt or "—"
        if e.error:
            row = [e.scene, str(e.worlds), dt, e.solver, *["—"] * 8, f"error: {e.error}".replace("|", "/")]
        else:
            launches = _fmt(e.launches_per_step, "g")
            if e.collide_launches_per_step is not None:
                launches += f" + {e.collide_launches_per_step:g}"
            notes = "; ".join(w.replace("|", "/")[:100] for w in e.warnings[:2])
            if len(e.warnings) > 2:
                notes += f" (+{len(e.warnings) - 2} more)"
            row = [
                e.scene,
                str(e.worlds),
                dt,
                e.solver,
                _fmt(e.world_steps_per_s, ",.0f"),
                _fmt(e.ratio, ".2f") + ("*" if e.ratio_unsettled else ""),
                _fmt(e.step_world_steps_per_s, ",.0f"),
                _fmt(e.step_ratio, ".2f") + ("*" if e.ratio_unsettled else ""),
                "—" if e.mujoco_ratio is None else f"{e.mujoco_ratio:.3f} / {_fmt(e.mujoco_step_ratio, '.3f')}",
                launches,
                e.sanity.get("text", ""),
                e.start.get("text", "—"),
                notes,
            ]
        lines.append("| " + " | ".join(row) + " |")
    if any(e.ratio_unsettled for e in entries):
        lines += ["", "\\* this row's window or its reference's did not start settled (see window start): the ratio "
                  "compares different work (a diverged or still falling scene has other contacts than a resting one)."]
    if scheduler_entries:
        lines += ["", *sched.markdown_lines(list(scheduler_entries), meta["scheduler_frames"])]
    if vbd_entries:
        lines += ["", *vbd.markdown_lines(list(vbd_entries), meta["vbd_steps"], vbd.DEFAULT_WARMUP)]
    if vbd_rigid_entries:
        lines += ["", *vbd.rigid_markdown_lines(list(vbd_rigid_entries), vbd.RIGID_DEFAULT_STEPS)]
    if contact_entries:
        lines += ["", *contact_models.markdown_lines(list(contact_entries))]
    lines += ["", "Reproduce:", "", "```", meta["command"], "```", ""]
    return "\n".join(lines)


def _versions() -> dict:
    import newton  # noqa: PLC0415

    try:
        import mujoco  # noqa: PLC0415

        mj = mujoco.__version__
    except ImportError:
        mj = "n/a"
    return {"warp": wp.config.version, "newton": newton.__version__, "mujoco": mj}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.verbose:
        wp.config.log_level = wp.LOG_WARNING  # one line per module load would drown the progress lines
    wp.init()
    if args.device is None:
        args.device = str(wp.get_preferred_device())
    t0 = time.perf_counter()
    entries = run(args)
    scheduler_entries = sched.run(args.device, args.scheduler_frames, t0) if args.scheduler else []
    vbd_entries = vbd.run(args.device, args.vbd_steps, vbd.DEFAULT_WARMUP, 2, t_start=t0) if args.vbd else []
    vbd_rigid_entries = vbd.run_rigid(args.device, vbd.RIGID_DEFAULT_STEPS, 1, t_start=t0) if args.vbd else []
    contact_entries = contact_models.run(args.device, t_start=t0) if args.contact_models else []
    meta = {
        "command": explicit_command(args),
        "invocation": "python -m benchmarks.run " + shlex.join(sys.argv[1:] if argv is None else argv),
        "device": args.device,
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "steps": args.steps,
        "warmup": args.warmup,
        "dt": args.dt,
        "settle": dict(settle.SETTLE_S) if args.settle else None,
        "repeats": args.repeats,
        "scheduler_frames": args.scheduler_frames,
        "vbd_steps": args.vbd_steps,
        "total_s": time.perf_counter() - t0,
        **_versions(),
    }
    md = markdown(entries, meta, scheduler_entries, vbd_entries, vbd_rigid_entries, contact_entries)
    print()
    print(md)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "bench.json"), "w", encoding="utf-8") as f:
            json.dump(
                {
                    "meta": meta,
                    "entries": [asdict(e) for e in entries],
                    "scheduler": [asdict(e) for e in scheduler_entries],
                    "vbd": vbd.as_dicts(vbd_entries),
                    "vbd_rigid": vbd.as_dicts(vbd_rigid_entries),
                    "contact_models": contact_entries,
                },
                f,
                indent=2,
            )
        with open(os.path.join(args.out, "bench.md"), "w", encoding="utf-8") as f:
            f.write(md)
        print(f"wrote {os.path.join(args.out, 'bench.json')} and bench.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
