"""SolverVBD benchmark: ours against Newton's on the particle scenes, same model, options and steps.

Cases (scenes from :mod:`steel.particle_scenes`; every case runs both solvers back to back,
``repeats`` times, best time kept):

* ``cloth_hang`` at 16², 32² and 64² quads: how the cost grows with the vertex count;
* ``cloth`` 32²: the cloth falling on a sphere with self-contact (collision pipeline every step);
* ``soft_cube`` 6³ cells: a tetrahedral cube dropped on the ground.

Reported per case and solver: steps/s (one world), the ratio ours / Newton's, µs per vertex and
step, Python-level launches per step, and the outcome after the timed steps: finite, the lowest
particle [m], kinetic + gravitational energy [J] and the count of self-intersecting edge–triangle
pairs (:mod:`steel.intersections`, exact and solver-independent).

Run alone: ``python -m benchmarks.vbd --steps 60 --repeats 2``; ``make bench`` runs it after the
rigid scenes (``python -m benchmarks.run --no-vbd`` skips it).
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

CASES = (("cloth_hang", 16), ("cloth_hang", 32), ("cloth_hang", 64), ("cloth", 32), ("soft_cube", 6))
SOLVERS = ("newton.SolverVBD", "steel.SolverVBD")
DEFAULT_STEPS = 60
# The draped cloth reaches the sphere after ~120 steps: time at least 0.5 s so contact, self-contact
# and folding are in the measured window and the outcome.
MIN_STEPS = {"cloth": 300}
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
    from steel.intersections import edge_triangle_intersections  # noqa: PLC0415
    from steel.particle_runner import mechanical_energy  # noqa: PLC0415

    x = state.particle_q.numpy()
    finite = bool(np.isfinite(x).all() and np.isfinite(state.particle_qd.numpy()).all())
    out = {"finite": finite}
    if finite:
        out["lowest_z_m"] = float(x[:, 2].min())
        out["energy_J"] = mechanical_energy(sc.model, state)
        tris = sc.tri_indices
        out["self_intersections"] = len(edge_triangle_intersections(x, tris)) if len(tris) else 0
    return out


def measure(label: str, scene: str, size: int, device: str, steps: int, warmup: int,
            options: dict | None = None) -> VBDEntry:
    """Time ``steps`` steps of one solver on a fresh scene (collide then step, as Newton's examples do).

    ``options`` are added to the scene's solver options (e.g. ``particle_enable_tile_solve``).
    """
    from steel.particle_scenes import build_particle_scene  # noqa: PLC0415

    sc = build_particle_scene(scene, size, device)
    model = sc.model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notices of the reference's renamed options
        solver = _solver_class(label)(model, **{**sc.solver_options, **(options or {})})
    pipeline = newton.CollisionPipeline(model) if sc.contacts else None
    contacts = pipeline.contacts() if pipeline is not None else None
    states = [model.state(), model.state()]

    def step():
        if pipeline is not None:
            pipeline.collide(states[0], contacts)
        solver.step(states[0], states[1], None, contacts, sc.dt)
        states.reverse()

    for _ in range(warmup):
        step()
    wp.synchronize_device(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    wp.synchronize_device(device)
    seconds = time.perf_counter() - t0
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
        best: dict[str, VBDEntry] = {}
        errors: dict[str, str] = {}
        for _ in range(max(repeats, 1)):
            for label in SOLVERS:
                if label in errors:
                    continue
                try:
                    e = measure(label, scene, size, device, max(steps, MIN_STEPS.get(scene, 0)), warmup, options)
                except Exception as exc:  # a solver that cannot run a case is a result, not a crash
                    errors[label] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
                    continue
                if label not in best or e.steps_per_s > best[label].steps_per_s:
                    best[label] = e
        ref = best.get(SOLVERS[0])
        for label in SOLVERS:
            e = best.get(label) or VBDEntry(scene, size, label, error=errors.get(label))
            if e.steps_per_s and ref is not None and ref.steps_per_s:
                e.ratio = e.steps_per_s / ref.steps_per_s
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
    return (f"lowest z {o['lowest_z_m']:.3f} m, energy {o['energy_J']:.2f} J, "
            f"self-intersections {o['self_intersections']}")


def markdown_lines(entries: list[VBDEntry], steps: int, warmup: int) -> list[str]:
    """The VBD table for ``bench.md``."""
    lines = [
        "## SolverVBD (particles)",
        "",
        f"One world, {steps} timed steps (`cloth`: {MIN_STEPS['cloth']}) after {warmup} warm-up steps, best of the "
        "repeats; both solvers get the "
        "scene's options (10 iterations; self-contact on the `cloth` scene). Ratio: ours / Newton's steps/s. "
        "Outcome after the timed steps: lowest particle, kinetic + gravitational energy, self-intersecting "
        "edge–triangle pairs (exact check).",
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


def as_dicts(entries: list[VBDEntry]) -> list[dict]:
    return [asdict(e) for e in entries]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.vbd", description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    p.add_argument("--warmup", type=int, default=DEFAULT_WARMUP)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--cases", default=",".join(f"{s}={n}" for s, n in CASES), help="comma list of scene=size")
    p.add_argument("--device", default=None)
    p.add_argument("--tile-solve", choices=("default", "on", "off"), default="default",
                   help="particle_enable_tile_solve for both solvers (default: the option's default, on)")
    args = p.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    device = args.device or str(wp.get_preferred_device())
    cases = [(c.split("=")[0], int(c.split("=")[1])) for c in args.cases.split(",") if c.strip()]
    options = {} if args.tile_solve == "default" else {"particle_enable_tile_solve": args.tile_solve == "on"}
    entries = run(device, args.steps, args.warmup, args.repeats, cases, options=options)
    print("\n".join(markdown_lines(entries, args.steps, args.warmup)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
