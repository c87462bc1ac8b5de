"""SolverVBD benchmark: ours against Newton's on particle and rigid scenes, same model, options and steps.

Cases (scenes from :mod:`steel.app.particle_scenes`; every case runs both solvers back to back,
``repeats`` times, best time kept):

* ``cloth_hang`` at 16², 32² and 64² quads: how the cost grows with the vertex count;
* ``cloth`` 32²: the cloth falling on a sphere with self-contact (collision pipeline every step);
* ``soft_cube`` 6³ cells: a tetrahedral cube dropped on the ground;
* ``cloth_boxes`` 32²: the cloth dropped over four free boxes on the ground (two-way body–particle
  contact; the outcome adds the lowest box top [m]).
* ``cloth_boxes_full`` 32²: the same with ``CollisionPipeline(enable_rigid_soft_full_surface_contact=True)``
  (edge and face records besides the particle ones, re-evaluated at every vertex visit).

Reported per case and solver: steps/s (one world), the ratio ours / Newton's, µs per vertex and
step, Python-level launches per step, and the outcome after the timed steps: finite, the lowest
particle [m], kinetic + gravitational energy [J] and the count of self-intersecting edge–triangle
pairs (:mod:`steel.app.intersections`, exact and solver-independent).

Rigid cases (Augmented VBD; scenes from :mod:`steel.app.scenes`, coloured; every solver gets
``rigid_contact_history=True`` and the pipeline ``contact_matching="latest"``): the four towers in
1 and 16 worlds (timed after ``TOWER_WARMUP`` steps, once they have landed: a resting, contact-rich
state), a stack of 20 boxes (contact ke 1e6 N/m ramped by ``rigid_avbd_beta=1e5``), a 20-link BALL chain
holding a 1000 kg block on hard joints (ceilings ``rigid_joint_*_ke=1e6``), and the cable pile of
``steel run cable_pile`` (four crossed layers of four 40-segment cables, Newton's cable-pile example's
material and 5 iterations; timed after ``PILE_WARMUP`` steps, once it has landed). Three
solvers interleaved per repeat: Newton's SolverVBD at its default (``rigid_compliant_alm=True``),
Newton's on its legacy path (``rigid_compliant_alm=False``, the formulation ours follows by default), ours,
and ours with ``rigid_compliant_alm=True`` (the same formulation as Newton's default: the like-for-like ratio).
Reported: world-steps/s, the ratio to Newton's default, launches per step and the outcome after the
timed steps: the largest sink of a box below its ideal stacked height [mm] and sideways drift [mm];
for the chain the block's drop below its rest position [mm] (the chain's stretch); for the pile the
lowest and highest segment centre [mm] (a settled pile of four layers of 24 mm cables is under 96 mm).

Run alone: ``python -m benchmarks.vbd --steps 60 --repeats 2`` (particles),
``python -m benchmarks.vbd --rigid --steps 120 --repeats 1`` (rigid) and ``python -m benchmarks.vbd --extras
--steps 60 --repeats 3`` (attachments and compliant drives, :mod:`benchmarks.vbd_extras`); ``make bench`` runs the
first two after the rigid scenes (``python -m benchmarks.run --no-vbd`` skips them).
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np
import warp as wp

import newton

from .measure import LaunchCounter

CASES = (("cloth_hang", 16), ("cloth_hang", 32), ("cloth_hang", 64), ("cloth", 32), ("soft_cube", 6),
         ("cloth_boxes", 32), ("cloth_boxes_full", 32))
FULL_SURFACE = "_full"  # a scene name ending so: the shipped scene with full-surface soft contacts
SOLVERS = ("newton.SolverVBD", "steel.SolverVBD")
DEFAULT_STEPS = 60
# The draped cloth reaches the sphere (the boxes) after ~120 steps: time at least 0.5 s so contact,
# self-contact and folding are in the measured window and the outcome.
MIN_STEPS = {"cloth": 300, "cloth_boxes": 300, "cloth_boxes_full": 300}
DEFAULT_WARMUP = 10


@dataclass
class VBDEntry:
    """One row: one solver on one case (best of the repeats)."""

    scene: str
    size: int
    solver: str
    particles: int = 0
    steps: int = 0
    steps_per_s: float | None = None
    ratio: float | None = None
    us_per_vertex_step: float | None = None
    launches_per_step: float | None = None
    outcome: dict = field(default_factory=dict)
    error: str | None = None


def _solver_class(label: str):
    if label == "newton.SolverVBD":
        return newton.solvers.SolverVBD
    from steel.solvers import SolverVBD  # noqa: PLC0415

    return SolverVBD


def _outcome(sc, state) -> dict:
    from steel.app.intersections import edge_triangle_intersections  # noqa: PLC0415
    from steel.app.particle_runner import mechanical_energy  # noqa: PLC0415

    x = state.particle_q.numpy()
    finite = bool(np.isfinite(x).all() and np.isfinite(state.particle_qd.numpy()).all())
    out = {"finite": finite}
    if finite:
        out["lowest_z_m"] = float(x[:, 2].min())
        out["energy_J"] = mechanical_energy(sc.model, state)
        tris = sc.tri_indices
        out["self_intersections"] = len(edge_triangle_intersections(x, tris)) if len(tris) else 0
        if sc.model.body_count:
            from steel.app.particle_scenes import BOX_HALF  # noqa: PLC0415

            top = state.body_q.numpy()[:, 2] + BOX_HALF  # box centre + half edge (cloth_boxes) [m]
            out["lowest_box_top_m"] = float(top.min())
    return out


def _timed_loop(pipeline, contacts, solver, states: list, dt: float, device: str, steps: int,
                warmup: int) -> tuple[float, float | None]:
    """``warmup`` untimed then ``steps`` timed collide-then-step steps (no collide without a pipeline),
    ping-ponging ``states`` in place; returns the timed wall time [s], device synchronized at both ends,
    and the part of it spent colliding [s] (timed per call on a CPU device, where launches return when
    done; ``None`` elsewhere)."""
    split = wp.get_device(device).is_cpu
    collide_seconds = [0.0]

    def step(timed: bool):
        if pipeline is not None:
            tc = time.perf_counter()
            pipeline.collide(states[0], contacts)
            if timed:
                collide_seconds[0] += time.perf_counter() - tc
        solver.step(states[0], states[1], None, contacts, dt)
        states.reverse()

    for _ in range(warmup):
        step(False)
    wp.synchronize_device(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        step(split)
    wp.synchronize_device(device)
    return time.perf_counter() - t0, collide_seconds[0] if split else None


def measure(label: str, scene: str, size: int, device: str, steps: int, warmup: int,
            options: dict | None = None) -> VBDEntry:
    """Time ``steps`` steps of one solver on a fresh scene (collide then step, as Newton's examples do).

    ``options`` are added to the scene's solver options (e.g. ``particle_enable_tile_solve``).
    """
    from steel.app.particle_scenes import build_particle_scene  # noqa: PLC0415

    full_surface = scene.endswith(FULL_SURFACE)
    sc = build_particle_scene(scene.removesuffix(FULL_SURFACE), size, device)
    model = sc.model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notices of the reference's renamed options
        solver = _solver_class(label)(model, **{**sc.solver_options, **(options or {})})
    pipeline = (newton.CollisionPipeline(model, enable_rigid_soft_full_surface_contact=full_surface)
                if sc.contacts else None)
    contacts = pipeline.contacts() if pipeline is not None else None
    states = [model.state(), model.state()]

    seconds, _ = _timed_loop(pipeline, contacts, solver, states, sc.dt, device, steps, warmup)
    outcome = _outcome(sc, states[0])
    with LaunchCounter() as c:
        solver.step(states[0], states[1], None, contacts, sc.dt)
    n = int(model.particle_count)
    return VBDEntry(scene, size, label, n, steps, steps / seconds, None, 1e6 * seconds / (steps * n), c.count, outcome)


def run(device: str, steps: int = DEFAULT_STEPS, warmup: int = DEFAULT_WARMUP, repeats: int = 2,
        cases=CASES, t_start: float | None = None, options: dict | None = None) -> list[VBDEntry]:
    """Every case, both solvers interleaved; prints a progress line per row."""
    t_start = time.perf_counter() if t_start is None else t_start
    entries: list[VBDEntry] = []
    for scene, size in cases:
        timed = max(steps, MIN_STEPS.get(scene, 0))
        best, errors = best_of(SOLVERS, repeats,
                               lambda label: measure(label, scene, size, device, timed, warmup, options), "steps_per_s")
        for e in with_ratios(SOLVERS, best, errors, lambda label, err: VBDEntry(scene, size, label, error=err)):
            entries.append(e)
            print(_line(e, time.perf_counter() - t_start), flush=True)
    return entries


def _line(e: VBDEntry, elapsed: float) -> str:
    head = f"[{elapsed:7.1f}s] {e.scene:>10} {e.size:>3} {e.solver:<18}"
    if e.error:
        return f"{head} ERROR {e.error}"
    ratio = f" ratio {e.ratio:.2f}" if e.ratio is not None else ""
    return (f"{head} {e.steps_per_s:9.1f} steps/s{ratio}  {e.us_per_vertex_step:.2f} us/vertex-step  "
            f"launches/step {e.launches_per_step:g}  {_outcome_text(e.outcome)}")


def _outcome_text(o: dict) -> str:
    if not o:
        return ""
    if not o.get("finite"):
        return "NaN"
    boxes = f", lowest box top {o['lowest_box_top_m']:.4f} m" if "lowest_box_top_m" in o else ""
    return (f"lowest z {o['lowest_z_m']:.3f} m, energy {o['energy_J']:.2f} J, "
            f"self-intersections {o['self_intersections']}{boxes}")


def markdown_lines(entries: list[VBDEntry], steps: int, warmup: int) -> list[str]:
    """The VBD table for ``bench.md``."""
    lines = [
        "## SolverVBD (particles)",
        "",
        f"One world, {steps} timed steps (`cloth`, `cloth_boxes`: {MIN_STEPS['cloth']}) after {warmup} warm-up steps, best of the "
        "repeats; both solvers get the "
        "scene's options (10 iterations; self-contact on the `cloth` scene). Ratio: ours / Newton's steps/s. "
        "Outcome after the timed steps: lowest particle, kinetic + gravitational energy (particles), "
        "self-intersecting edge–triangle pairs (exact check); `cloth_boxes` also the lowest box top.",
        "",
        "| scene | size | particles | solver | steps/s | ratio | µs / vertex-step | launches/step | outcome |",
        "|---|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for e in entries:
        if e.error:
            lines.append(f"| {e.scene} | {e.size} | — | {e.solver} | — | — | — | — | error: {e.error.replace('|', '/')} |")
            continue
        lines.append(f"| {e.scene} | {e.size} | {e.particles} | {e.solver} | {e.steps_per_s:,.1f} | "
                     f"{'—' if e.ratio is None else format(e.ratio, '.2f')} | {e.us_per_vertex_step:.2f} | "
                     f"{e.launches_per_step:g} | {_outcome_text(e.outcome)} |")
    return lines


def as_dicts(entries: list[VBDEntry] | list[RigidEntry]) -> list[dict]:
    return [asdict(e) for e in entries]


# ----------------------------------------------------------------------------------------------
# Rigid bodies (Augmented VBD)
# ----------------------------------------------------------------------------------------------

RIGID_CASES = (("tower", 1), ("tower", 16), ("stack", 1), ("heavy_chain", 1), ("cable_pile", 1))
# label -> options on top of the shared ones; the first is the ratio's reference.
RIGID_SOLVERS = {
    "newton.SolverVBD": {},
    "newton.SolverVBD legacy": {"rigid_compliant_alm": False},
    # Sticking contacts off: Newton 1.8.0 has none, so both solve the same problem (on by default in ours,
    # as in the seed's revision; it freezes resting boxes on boxes, which would flatter the timing).
    "steel.SolverVBD": {"rigid_contact_stick_motion_eps": 0.0},
    # Newton 1.8.0's formulation on ours: the like-for-like row for Newton's default (the ratio's reference).
    "steel.SolverVBD compliant": {"rigid_compliant_alm": True},
}
RIGID_OPTIONS = {"rigid_contact_history": True}
# Per scene, for every solver: the stack ramps its stiff contacts (ke 1e6 N/m from k_start by 1e5 per
# iteration); the chain's hard joints get ceilings of 1e6 (the default 1e5 lets the block drop ~0.2 m).
# The cable pile runs Newton's cable-pile example's 5 iterations.
RIGID_SCENE_OPTIONS = {"stack": {"rigid_avbd_beta": 1.0e5},
                       "heavy_chain": {"rigid_joint_linear_ke": 1.0e6, "rigid_joint_angular_ke": 1.0e6},
                       "cable_pile": {"iterations": 5}}
RIGID_DEFAULT_STEPS = 120
TOWER_WARMUP = 1200  # [steps] 2 s: the towers have landed and the impacts have been pushed out
PILE_WARMUP = 600  # [steps] 1 s: the cables have landed (about 0.6 s) and lie still


@dataclass
class RigidEntry:
    """One row: one solver on one rigid case (best of the repeats)."""

    scene: str
    worlds: int
    solver: str
    bodies: int = 0
    steps: int = 0
    world_steps_per_s: float | None = None
    ratio: float | None = None
    step_world_steps_per_s: float | None = None  # collision time left out (CPU devices)
    step_ratio: float | None = None
    launches_per_step: float | None = None
    outcome: dict = field(default_factory=dict)
    error: str | None = None


def _rigid_scene(scene: str, worlds: int, device: str):
    from steel.app import scenes  # noqa: PLC0415

    builders = {"tower": scenes.build_tower, "stack": scenes.build_box_stack, "heavy_chain": scenes.build_heavy_chain,
                "cable_pile": scenes.build_cable_pile}
    return builders[scene](worlds, device, color=True)


def _ideal_heights(scene: str):
    from steel.app import scenes  # noqa: PLC0415

    if scene == "tower":
        return np.array([scenes.BOX_HALF * (1 + 2 * i) for n in scenes.TOWER_HEIGHTS for i in range(n)])
    return np.array([scenes.STACK_HALF * (1 + 2 * i) for i in range(scenes.STACK_BOXES)])


def _rigid_outcome(sc, state, start_q) -> dict:
    """Finite; box scenes: largest sink below the stacked height and sideways drift [mm]; chain: block drop [mm]."""
    q = state.body_q.numpy().reshape(sc.world_count, sc.bodies_per_world, 7)
    if not np.isfinite(q).all():
        return {"finite": False}
    start = start_q.reshape(sc.world_count, sc.bodies_per_world, 7)
    if sc.metric == "pile":
        return {"finite": True, "lowest_mm": 1000.0 * float(q[:, :, 2].min()),
                "highest_mm": 1000.0 * float(q[:, :, 2].max())}
    if sc.metric == "stretch":
        block = sc.watched[0]
        return {"finite": True, "stretch_mm": 1000.0 * float((start[:, block, 2] - q[:, block, 2]).max())}
    sink = _ideal_heights(sc.name)[None, :] - q[:, :, 2]
    drift = np.linalg.norm(q[:, :, :2] - start[:, :, :2], axis=2)
    return {"finite": True, "sink_mm": 1000.0 * float(sink.max()), "drift_mm": 1000.0 * float(drift.max())}


def measure_rigid(label: str, scene: str, worlds: int, device: str, steps: int, warmup: int) -> RigidEntry:
    """Time ``steps`` steps of one solver on a fresh rigid scene after ``warmup`` steps (collide, then step)."""
    sc = _rigid_scene(scene, worlds, device)
    model = sc.model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = _solver_class(label.split()[0])(model, **RIGID_OPTIONS, **RIGID_SCENE_OPTIONS.get(scene, {}),
                                                 **RIGID_SOLVERS[label])
    pipeline = newton.CollisionPipeline(model, contact_matching="latest")
    contacts = pipeline.contacts()
    states = [model.state(), model.state()]
    start_q = states[0].body_q.numpy().copy()

    seconds, collide_seconds = _timed_loop(pipeline, contacts, solver, states, sc.dt, device, steps, warmup)
    outcome = _rigid_outcome(sc, states[0], start_q)
    with LaunchCounter() as c:
        solver.step(states[0], states[1], None, contacts, sc.dt)
    step_rate = None if collide_seconds is None else worlds * steps / max(seconds - collide_seconds, 1.0e-12)
    return RigidEntry(scene, worlds, label, int(model.body_count), steps, worlds * steps / seconds, None, step_rate,
                      None, c.count, outcome)


def rigid_steps(scene: str, worlds: int, steps: int) -> tuple[int, int]:
    """(timed steps, warm-up steps) of a case: 16 worlds time a quarter of the steps; towers land first."""
    timed = max(steps // 4, 20) if worlds > 1 else steps
    return timed, {"tower": TOWER_WARMUP, "cable_pile": PILE_WARMUP}.get(scene, DEFAULT_WARMUP)


def best_of(labels, repeats: int, measure_one, rate: str) -> tuple[dict, dict]:
    """Each label's best entry over ``repeats`` rounds (labels interleaved per round) by the attribute ``rate``,
    and the first error of each label that failed (then skipped); ``measure_one(label)`` returns an entry."""
    best: dict = {}
    errors: dict[str, str] = {}
    for _ in range(max(repeats, 1)):
        for label in labels:
            if label in errors:
                continue
            try:
                e = measure_one(label)
            except Exception as exc:  # a solver that cannot run a case is a result, not a crash
                errors[label] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
                continue
            if label not in best or getattr(e, rate) > getattr(best[label], rate):
                best[label] = e
    return best, errors


def with_ratios(labels, best: dict, errors: dict, missing, rate: str = "steps_per_s") -> list:
    """The entries in label order, a failed label's made by ``missing(label, error)``, each with ``ratio`` = its
    ``rate`` over the first label's (None when either is missing)."""
    labels = list(labels)
    ref = best.get(labels[0])
    out = []
    for label in labels:
        e = best.get(label) or missing(label, errors.get(label))
        if getattr(e, rate) and ref is not None and getattr(ref, rate):
            e.ratio = getattr(e, rate) / getattr(ref, rate)
        out.append(e)
    return out


def run_rigid(device: str, steps: int = RIGID_DEFAULT_STEPS, repeats: int = 1, cases=RIGID_CASES,
              t_start: float | None = None) -> list[RigidEntry]:
    """Every rigid case, the three solvers interleaved per repeat; prints a progress line per row."""
    t_start = time.perf_counter() if t_start is None else t_start
    entries: list[RigidEntry] = []
    for scene, worlds in cases:
        best: dict[str, RigidEntry] = {}
        errors: dict[str, str] = {}
        timed, warmup = rigid_steps(scene, worlds, steps)
        for _ in range(max(repeats, 1)):
            for label in RIGID_SOLVERS:
                if label in errors:
                    continue
                try:
                    e = measure_rigid(label, scene, worlds, device, timed, warmup)
                except Exception as exc:  # a solver that cannot run a case is a result, not a crash
                    errors[label] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
                    continue
                if label not in best or e.world_steps_per_s > best[label].world_steps_per_s:
                    best[label] = e
        ref = best.get(next(iter(RIGID_SOLVERS)))
        for label in RIGID_SOLVERS:
            e = best.get(label) or RigidEntry(scene, worlds, label, error=errors.get(label))
            if e.world_steps_per_s and ref is not None:
                e.ratio = e.world_steps_per_s / ref.world_steps_per_s
                if e.step_world_steps_per_s and ref.step_world_steps_per_s:
                    e.step_ratio = e.step_world_steps_per_s / ref.step_world_steps_per_s
            entries.append(e)
            print(_rigid_line(e, time.perf_counter() - t_start), flush=True)
    return entries


def _rigid_outcome_text(o: dict) -> str:
    if not o:
        return ""
    if not o.get("finite"):
        return "NaN"
    if "highest_mm" in o:
        return f"segments between {o['lowest_mm']:.1f} and {o['highest_mm']:.1f} mm high"
    if "stretch_mm" in o:
        return f"block drop {o['stretch_mm']:.2f} mm"
    return f"sink {o['sink_mm']:.1f} mm, drift {o['drift_mm']:.2f} mm"


def _rigid_line(e: RigidEntry, elapsed: float) -> str:
    head = f"[{elapsed:7.1f}s] {e.scene:>11} x{e.worlds:<3} {e.solver:<26}"
    if e.error:
        return f"{head} ERROR {e.error}"
    step = f" (step-only {e.step_ratio:.2f})" if e.step_ratio is not None else ""
    return (f"{head} {e.world_steps_per_s:9.1f} world-steps/s ratio {e.ratio:.2f}{step}  launches/step "
            f"{e.launches_per_step:g}  {_rigid_outcome_text(e.outcome)}")


def rigid_markdown_lines(entries: list[RigidEntry], steps: int) -> list[str]:
    """The rigid SolverVBD table for ``bench.md``."""
    lines = [
        "## SolverVBD (rigid bodies, AVBD)",
        "",
        f"{steps} timed steps of 1/600 s (16 worlds: {max(steps // 4, 20)}) after {DEFAULT_WARMUP} warm-up steps "
        f"(towers: {TOWER_WARMUP}, cable pile: {PILE_WARMUP}, so they have landed), best of the repeats; every solver gets "
        "`rigid_contact_history=True` and `CollisionPipeline(contact_matching=\"latest\")`, the stack "
        "`rigid_avbd_beta=1e5` (its contacts' ke is 1e6 N/m), the chain `rigid_joint_linear_ke` = `angular_ke` = 1e6, the cable pile 5 iterations, "
        "the other options at their defaults (10 iterations). `legacy`: Newton's `rigid_compliant_alm=False`; `compliant`: ours "
        "with `rigid_compliant_alm=True` (Newton's default formulation; the betas and `k_start` then have no effect on "
        "either). Ratio: world-steps/s over "
        "Newton's default; step-only: the collision pipeline's time left out (each call timed, CPU). Outcome after the timed steps: the largest sink of a box below its ideal stacked height "
        "and sideways drift; the chain's 1000 kg block's drop below its rest position; the pile's lowest and highest "
        "segment centre.",
        "",
        "| scene | worlds | bodies | solver | world-steps/s | ratio | step-only ratio | launches/step | outcome |",
        "|---|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for e in entries:
        if e.error:
            lines.append(f"| {e.scene} | {e.worlds} | — | {e.solver} | — | — | — | — | error: {e.error.replace('|', '/')} |")
            continue
        lines.append(f"| {e.scene} | {e.worlds} | {e.bodies} | {e.solver} | {e.world_steps_per_s:,.1f} | "
                     f"{e.ratio:.2f} | {'—' if e.step_ratio is None else format(e.step_ratio, '.2f')} | "
                     f"{e.launches_per_step:g} | {_rigid_outcome_text(e.outcome)} |")
    return lines


def _cases(text: str) -> list[tuple[str, int]]:
    """``name=size`` items, comma-separated; a bare ``name`` takes every size :data:`CASES` lists for it."""
    out: list[tuple[str, int]] = []
    for item in (c.strip() for c in text.split(",")):
        if not item:
            continue
        name, _, size = item.partition("=")
        name = name.strip()
        if size.strip():
            try:
                out.append((name, int(size)))
            except ValueError:
                raise ValueError(f"--cases: size of {name!r} must be an int, got {size.strip()!r}") from None
            continue
        sizes = [n for case, n in CASES if case == name]
        if not sizes:
            raise ValueError(f"--cases: {name!r} has no listed size; give name=size (listed: "
                             f"{', '.join(sorted({case for case, _ in CASES}))})")
        out.extend((name, n) for n in sizes)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.vbd", description=__doc__.split("\n\n")[0])
    p.add_argument("--rigid", action="store_true", help="the rigid cases (towers, stack, heavy chain) instead")
    p.add_argument("--extras", action="store_true",
                   help="the 1.8.0 extras instead: attachments (cloth_pinned) and compliant drives (drive_chain); "
                        "benchmarks/vbd_extras.py")
    p.add_argument("--steps", type=int, default=None,
                   help=f"timed steps (default {DEFAULT_STEPS}; --rigid {RIGID_DEFAULT_STEPS})")
    p.add_argument("--warmup", type=int, default=DEFAULT_WARMUP)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--cases", default=None,
                   help="comma list of scene=size (particles, default " + ",".join(f"{s}={n}" for s, n in CASES)
                   + ") or scene=worlds (--rigid, default " + ",".join(f"{s}={n}" for s, n in RIGID_CASES) + ")")
    p.add_argument("--device", default=None)
    p.add_argument("--tile-solve", choices=("default", "on", "off"), default="default",
                   help="particle_enable_tile_solve for both solvers (default: the option's default, on)")
    args = p.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    device = args.device or str(wp.get_preferred_device())
    if args.extras:
        from .vbd_extras import EXTRA_CASES, extras_markdown_lines, run_extras  # noqa: PLC0415

        steps = args.steps or DEFAULT_STEPS
        cases = _cases(args.cases) if args.cases else EXTRA_CASES
        entries = run_extras(device, steps, args.warmup, args.repeats, cases)
        print("\n".join(extras_markdown_lines(entries, steps, args.warmup)))
        return 0
    if args.rigid:
        steps = args.steps or RIGID_DEFAULT_STEPS
        cases = _cases(args.cases) if args.cases else RIGID_CASES
        entries = run_rigid(device, steps, args.repeats, cases)
        print("\n".join(rigid_markdown_lines(entries, steps)))
        return 0
    args.steps = args.steps or DEFAULT_STEPS
    cases = _cases(args.cases) if args.cases else CASES
    options = {} if args.tile_solve == "default" else {"particle_enable_tile_solve": args.tile_solve == "on"}
    entries = run(device, args.steps, args.warmup, args.repeats, cases, options=options)
    print("\n".join(markdown_lines(entries, args.steps, args.warmup)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
