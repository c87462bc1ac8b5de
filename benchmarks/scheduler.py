"""Collision scheduling benchmark: ``steel.CollisionSubstepScheduler`` against collide-every-substep and
Newton's ``newton.CollisionSubstepScheduler``, same scene, same substep solver, same run.

What is compared
----------------
Three *loops* advance identical copies of a scene by whole frames of ``SUBSTEPS`` solver substeps:

* ``every``  -- ``pipeline.collide(state, contacts, dt=h)`` before every substep (``h = frame_dt /
  substeps``): the baseline, ``SUBSTEPS`` collision calls per frame;
* ``steel``  -- :class:`steel.CollisionSubstepScheduler`, which refreshes on the travel budget only
  (the seed's reserve makes velocity changes harmless);
* ``newton`` -- :class:`newton.CollisionSubstepScheduler` (1.8.0), which has no reserve and refreshes
  whenever any shape's velocity changes.

All three use one ``newton.CollisionPipeline(model, speculative_contact_gap_max=GAP_MAX)`` each and
the same substep solver, :class:`steel.solvers.SolverSteel` (``newton.solvers.SolverXPBD`` only where
SolverSteel cannot run the scene; the row says so). Each loop has its own model, solver, pipeline and
states, so nothing is shared between them.

Interleaving and timing
-----------------------
The loops advance frame by frame in turn (the order rotates every frame), so machine noise and the
scene's own evolution (a landing tower costs more than a resting one) hit all three alike. Each frame
is timed on its own, ``wp.synchronize_device`` before the clock stops. ``WARMUP_FRAMES`` untimed
frames run first (kernel compilation and loading happen there); then ``frames`` timed frames.
Reported: mean frame time [ms] over the timed frames, its ratio to collide-every-substep's, collision
calls per frame (mean and max), Python-level Warp launches of one extra frame after the window, the
contact count of the last collision call, and the outcome: the largest body-position difference
[m] from collide-every-substep at the end of the window.

Cases
-----
``tower x16 drop``    :func:`benchmarks.scenes.build_tower` with 16 worlds from its initial poses: the
                      towers fall from up to 1.5 m and land within the first second.
``tower x16 rest``    the same towers after ``SETTLE_FRAMES`` frames of collide-every-substep, copied
                      into all three loops, so they start from the same resting state and the
                      position difference measures only what the collision schedule changes. The
                      issue's target, <= 1.5 collision calls per frame, applies here.
``projectile``        the scene of ``python -m steel.examples adaptive_collision`` (one world: a brick
                      wall, a resting tower and a dense sphere), the sphere launched at
                      ``PROJECTILE_VELOCITY`` at the first timed frame. The wall breaks up chaotically,
                      so position differences here are large by nature and not an error measure.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import warp as wp

import newton

from . import scenes as sc
from .measure import LaunchCounter, _captured_stdout, _recorded_warnings

FRAME_DT = 1.0 / 60.0  # [s]
SUBSTEPS = 8  # solver substeps per frame (the setting)
# speculative_contact_gap_max [m]: the scheduler's travel budget and reserve, and the pipeline's cap
# on velocity-adapted search in the other two loops. 0.1 m is the example's value.
GAP_MAX = 0.1
TOWER_WORLDS = 16
WARMUP_FRAMES = 2  # untimed frames per case (kernel compilation and loading)
SETTLE_FRAMES = 90  # 1.5 s: the towers dropped from 1.5 m have landed and stopped bouncing
DEFAULT_FRAMES = 60  # timed frames per case (1 s simulated)
PROJECTILE_VELOCITY = (-20.0, 0.0, 2.5)  # launch velocity [m/s], as in the example

LOOPS = ("every", "steel", "newton")
LOOP_LABELS = {
    "every": "collide every substep",
    "steel": "steel.CollisionSubstepScheduler",
    "newton": "newton.CollisionSubstepScheduler",
}


@dataclass
class SchedulerEntry:
    """One row of the scheduler report: one loop on one case.

    Attributes:
        case: ``"tower x16 drop"``, ``"tower x16 rest"`` or ``"projectile"``.
        loop: one of :data:`LOOPS`.
        label: the loop as shown in the table.
        solver: the substep solver, ``module.Class``.
        frames: timed frames.
        substeps: solver substeps per frame.
        frame_ms: mean wall time per timed frame [ms].
        frame_ms_median: median wall time per timed frame [ms].
        ratio: ``frame_ms`` / collide-every-substep's ``frame_ms`` on the same case.
        calls_per_frame: mean collision calls per timed frame.
        calls_per_frame_max: most collision calls in one timed frame.
        launches_per_frame: Python-level Warp launches over one extra frame after the window.
        contacts_last: ``rigid_contact_count`` after the last collision call of the window.
        position_diff_max_m: largest body-position difference from collide-every-substep at the end
            of the window [m] (``None`` on the baseline row).
        overflow_frames: frames with ``interval_overflow`` set (schedulers only).
        sanity: scene outcome (tower drift and lowest box; projectile position), with ``text``.
        warnings: distinct warnings and notes (solver fallback, solver prints).
        error: the exception text where the loop could not run.
    """

    case: str
    loop: str
    label: str
    solver: str = ""
    frames: int = 0
    substeps: int = SUBSTEPS
    frame_ms: float | None = None
    frame_ms_median: float | None = None
    ratio: float | None = None
    calls_per_frame: float | None = None
    calls_per_frame_max: int | None = None
    launches_per_frame: float | None = None
    contacts_last: int | None = None
    position_diff_max_m: float | None = None
    overflow_frames: int | None = None
    sanity: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


# ----------------------------------------------------------------------------------------------
# One loop: model, solver, pipeline, states and the frame function
# ----------------------------------------------------------------------------------------------


def _steel_solver(model: newton.Model):
    from steel.solvers import SolverSteel  # noqa: PLC0415 - keep the runner importable while it changes

    return SolverSteel(model)


def _xpbd_solver(model: newton.Model):
    return newton.solvers.SolverXPBD(model, iterations=4)


SOLVERS: tuple[tuple[str, Callable], ...] = (
    ("steel.SolverSteel", _steel_solver),
    ("newton.SolverXPBD", _xpbd_solver),  # fallback only, when SolverSteel cannot run the scene
)


class _Loop:
    """One collision strategy on its own copy of the scene."""

    def __init__(self, kind: str, model: newton.Model, make_solver: Callable, device: str):
        self.kind = kind
        self.model = model
        self.device = device
        self.solver = make_solver(model)
        self.pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=GAP_MAX)
        self.contacts = self.pipeline.contacts()
        self.states = (model.state(), model.state())
        self.control = model.control()
        self.calls = 0
        self.scheduler = None
        self._h = FRAME_DT / SUBSTEPS  # substep [s]
        if kind == "every":
            self._frame = self._collide_every_substep
        else:
            cls = _scheduler_class(kind)
            self.scheduler = cls(
                self.pipeline,
                self.states,
                collision_callback=self._collide,
                substep_callback=self._substep,
                frame_dt=FRAME_DT,
                substeps=SUBSTEPS,
            )
            self._frame = self.scheduler.step

    def _collide(self, state: newton.State, collision_dt: float) -> None:
        self.calls += 1
        self.pipeline.collide(state, self.contacts, dt=collision_dt)

    def _substep(self, state_in: newton.State, state_out: newton.State, dt: float) -> None:
        state_in.clear_forces()
        self.solver.step(state_in, state_out, self.control, self.contacts, dt)

    def _collide_every_substep(self) -> None:
        for i in range(SUBSTEPS):
            state_in, state_out = self.states[i % 2], self.states[1 - i % 2]
            self._collide(state_in, self._h)
            self._substep(state_in, state_out, self._h)

    def frame(self) -> tuple[float, int]:
        """Run one frame; return (wall time [s], collision calls)."""
        self.calls = 0
        t0 = time.perf_counter()
        self._frame()
        wp.synchronize_device(self.device)
        return time.perf_counter() - t0, self.calls

    def overflow(self) -> int:
        return int(self.scheduler.interval_overflow.numpy()[0]) if self.scheduler is not None else 0

    @property
    def state(self) -> newton.State:
        """The state every frame begins and ends in."""
        return self.states[0]


def _scheduler_class(kind: str):
    if kind == "steel":
        import steel  # noqa: PLC0415

        return steel.CollisionSubstepScheduler
    return newton.CollisionSubstepScheduler


def _set_state(state: newton.State, model: newton.Model, source: newton.State | None = None) -> None:
    """Copy ``source`` into ``state`` (or keep it), then make body poses and twists follow the joint
    coordinates, so reduced- and maximal-coordinate solvers and the schedulers all see the same state."""
    if source is not None:
        state.assign(source)
    newton.eval_fk(model, state.joint_q, state.joint_qd, state)


def _launch_body(model: newton.Model, state: newton.State, body: int, velocity) -> None:
    """Give ``body`` (free joint, parent = world) the linear COM velocity ``velocity`` [m/s]."""
    joint = int(np.nonzero(model.joint_child.numpy() == body)[0][0])
    start = int(model.joint_qd_start.numpy()[joint])
    qd = state.joint_qd.numpy()
    qd[start : start + 3] = velocity  # FREE joint: COM velocity in the parent (world) frame first
    state.joint_qd.assign(qd)
    _set_state(state, model)


# ----------------------------------------------------------------------------------------------
# Cases
# ----------------------------------------------------------------------------------------------


@dataclass
class _Case:
    """How to build one case: a model factory, an optional shared start state and a per-frame hook."""

    name: str
    build: Callable[[str], newton.Model]
    start: Callable[[newton.Model, Callable, str], newton.State] | None = None  # shared start state
    before_timed: Callable[[_Loop], None] = lambda loop: None
    sanity: Callable[[_Loop], dict] = lambda loop: {"text": "ok"}


def _tower_model(device: str) -> newton.Model:
    return sc.build_tower(TOWER_WORLDS, device).model


def _tower_sanity(loop: _Loop) -> dict:
    """The tower scene's own outcome (max horizontal drift, lowest box centre) from the initial layout."""
    layout = np.asarray(sc.tower_layout(), dtype=np.float64)  # every body of one world, in order
    q = loop.state.body_q.numpy().reshape(TOWER_WORLDS, len(layout), 7).astype(np.float64)
    start = np.tile(layout[None], (TOWER_WORLDS, 1, 1))
    finite = bool(np.isfinite(q).all() and np.isfinite(loop.state.body_qd.numpy()).all())
    return sc.outcome("drift", q[..., :3], q[..., 3:], start, finite)


def _settled_towers(model: newton.Model, make_solver: Callable, device: str) -> newton.State:
    """The towers after ``SETTLE_FRAMES`` frames of collide-every-substep (untimed)."""
    loop = _Loop("every", model, make_solver, device)
    _set_state(loop.state, model)
    for _ in range(SETTLE_FRAMES):
        loop.frame()
    return loop.state


def _projectile_model(device: str) -> newton.Model:
    from steel.examples.adaptive_collision import build_scene  # noqa: PLC0415

    return build_scene(device=device)[0]


def _projectile_body(model: newton.Model) -> int:
    return model.body_count - 1  # build_scene adds the projectile last


def _launch_projectile(loop: _Loop) -> None:
    _launch_body(loop.model, loop.state, _projectile_body(loop.model), PROJECTILE_VELOCITY)


def _projectile_sanity(loop: _Loop) -> dict:
    q = loop.state.body_q.numpy()
    p = q[_projectile_body(loop.model), :3].astype(float)
    finite = bool(np.isfinite(q).all() and np.isfinite(loop.state.body_qd.numpy()).all())
    if not finite:
        return {"nan": True, "text": "NaN"}
    return {"nan": False, "projectile_m": p.tolist(), "text": f"projectile at ({p[0]:.2f}, {p[1]:.2f}, {p[2]:.2f}) m"}


def cases() -> list[_Case]:
    return [
        _Case(f"tower x{TOWER_WORLDS} drop", _tower_model, sanity=_tower_sanity),
        _Case(f"tower x{TOWER_WORLDS} rest", _tower_model, start=_settled_towers, sanity=_tower_sanity),
        _Case("projectile", _projectile_model, before_timed=_launch_projectile, sanity=_projectile_sanity),
    ]


# ----------------------------------------------------------------------------------------------
# Running one case
# ----------------------------------------------------------------------------------------------


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def _build_loops(case: _Case, device: str, notes: list[str]) -> tuple[str, dict[str, _Loop]]:
    """The three loops with the first substep solver that can run the case (built and warmed up)."""
    failures = []
    for name, make_solver in SOLVERS:
        try:
            start = case.start(case.build(device), make_solver, device) if case.start else None
            loops = {}
            for kind in LOOPS:
                model = case.build(device)
                loop = _Loop(kind, model, make_solver, device)
                _set_state(loop.state, model, start)
                loops[kind] = loop
            for _ in range(WARMUP_FRAMES):
                for loop in loops.values():
                    loop.frame()
        except Exception as exc:  # the solver cannot run this scene: try the fallback, say so
            failures.append(f"{name} failed ({_error_text(exc)})")
            continue
        if failures:
            notes.append("; ".join(failures) + f"; substep solver fell back to {name}")
        return name, loops
    raise RuntimeError("; ".join(failures))


def run_case(case: _Case, device: str, frames: int) -> list[SchedulerEntry]:
    """Run the three loops of ``case`` frame-interleaved and return one entry per loop."""
    notes: list[str] = []
    entries = {kind: SchedulerEntry(case.name, kind, LOOP_LABELS[kind]) for kind in LOOPS}
    with _captured_stdout(notes), _recorded_warnings(notes):
        try:
            solver_name, loops = _build_loops(case, device, notes)
        except Exception as exc:
            for e in entries.values():
                e.error = _error_text(exc)
            return list(entries.values())
        for loop in loops.values():
            case.before_timed(loop)
        seconds = {kind: [] for kind in LOOPS}
        calls = {kind: [] for kind in LOOPS}
        overflow = {kind: 0 for kind in LOOPS}
        errors: dict[str, str] = {}
        for f in range(frames):
            order = LOOPS[f % len(LOOPS) :] + LOOPS[: f % len(LOOPS)]  # rotate so no loop always goes first
            for kind in order:
                if kind in errors:
                    continue
                try:
                    s, c = loops[kind].frame()
                    overflow[kind] += loops[kind].overflow()
                except Exception as exc:
                    errors[kind] = _error_text(exc)
                    continue
                seconds[kind].append(s)
                calls[kind].append(c)
        base = loops["every"].state.body_q.numpy()[:, :3].astype(np.float64)
        for kind in LOOPS:
            e, loop = entries[kind], loops[kind]
            e.solver, e.frames = solver_name, frames
            if kind in errors:
                e.error = errors[kind]
                continue
            e.frame_ms = 1e3 * float(np.mean(seconds[kind]))
            e.frame_ms_median = 1e3 * float(np.median(seconds[kind]))
            e.calls_per_frame = float(np.mean(calls[kind]))
            e.calls_per_frame_max = int(np.max(calls[kind]))
            e.contacts_last = int(loop.contacts.rigid_contact_count.numpy()[0])
            e.sanity = case.sanity(loop)
            if kind != "every" and "every" not in errors:
                q = loop.state.body_q.numpy()[:, :3].astype(np.float64)
                e.position_diff_max_m = float(np.abs(q - base).max())
            if loop.scheduler is not None:
                e.overflow_frames = overflow[kind]
            # Launches over one extra frame, after everything above was read (the counter is not free).
            with LaunchCounter() as counter:
                loop.frame()
            e.launches_per_frame = float(counter.count)
        every = entries["every"].frame_ms
        for e in entries.values():
            if e.frame_ms is not None and every:
                e.ratio = e.frame_ms / every
    for e in entries.values():
        e.warnings = list(notes)
    return list(entries.values())


def run(device: str, frames: int = DEFAULT_FRAMES, t_start: float | None = None, log=print) -> list[SchedulerEntry]:
    """Every case; prints one line per entry as it finishes."""
    t_start = time.perf_counter() if t_start is None else t_start
    out: list[SchedulerEntry] = []
    for case in cases():
        for e in run_case(case, device, frames):
            out.append(e)
            log(progress_line(e, time.perf_counter() - t_start), flush=True)
    return out


# ----------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------


def _fmt(v, spec: str) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def progress_line(e: SchedulerEntry, elapsed: float) -> str:
    head = f"[{elapsed:7.1f}s] {e.case:>16} {e.label:<34}"
    if e.error:
        return f"{head} ERROR {e.error}"
    diff = f" diff {e.position_diff_max_m:.1e} m" if e.position_diff_max_m is not None else ""
    return (
        f"{head} {e.frame_ms:8.1f} ms/frame ratio {_fmt(e.ratio, '.2f')} calls/frame {e.calls_per_frame:.2f} "
        f"(max {e.calls_per_frame_max}){diff}  {e.sanity.get('text', '')}"
    )


def markdown_lines(entries: list[SchedulerEntry], frames: int) -> list[str]:
    """The scheduler section of ``bench.md``."""
    solvers = sorted({e.solver for e in entries if e.solver})
    lines = [
        "## Collision scheduling",
        "",
        f"Frames of {SUBSTEPS} substeps of 1/{round(1 / FRAME_DT)} s, substep solver {', '.join(solvers) or '—'}, "
        f"`speculative_contact_gap_max` {GAP_MAX} m; the three loops advance frame-interleaved on their own "
        f"copies of the scene, {WARMUP_FRAMES} warm-up frames excluded, {frames} timed frames. "
        "Ratio: mean frame time / collide-every-substep's. Diff: largest body-position difference from "
        "collide-every-substep at the end [m]. Target: <= 1.5 calls/frame on the resting towers.",
        "",
        "| case | collision loop | ms/frame (median) | ratio | calls/frame (max) | launches/frame | contacts | "
        "diff vs every [m] | overflow frames | sanity | notes |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for e in entries:
        if e.error:
            row = [e.case, e.label, "—", "—", "—", "—", "—", "—", "—", "—", f"error: {e.error}".replace("|", "/")]
        else:
            notes = "; ".join(w.replace("|", "/")[:120] for w in e.warnings[:2])
            if len(e.warnings) > 2:
                notes += f" (+{len(e.warnings) - 2} more)"
            row = [
                e.case,
                e.label,
                f"{e.frame_ms:.1f} ({e.frame_ms_median:.1f})",
                _fmt(e.ratio, ".2f"),
                f"{e.calls_per_frame:.2f} ({e.calls_per_frame_max})",
                _fmt(e.launches_per_frame, "g"),
                _fmt(e.contacts_last, "d"),
                _fmt(e.position_diff_max_m, ".1e"),
                _fmt(e.overflow_frames, "d"),
                e.sanity.get("text", ""),
                notes,
            ]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.scheduler [--frames N] [--device D]``: the scheduler section alone."""
    import argparse  # noqa: PLC0415

    p = argparse.ArgumentParser(prog="python -m benchmarks.scheduler", description=__doc__.split("\n\n")[0])
    p.add_argument("--frames", type=int, default=DEFAULT_FRAMES, help=f"timed frames per case ({DEFAULT_FRAMES})")
    p.add_argument("--device", default=None, help="Warp device (default: Warp's preferred device)")
    args = p.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    device = args.device or str(wp.get_preferred_device())
    entries = run(device, args.frames)
    print()
    print("\n".join(markdown_lines(entries, args.frames)))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
