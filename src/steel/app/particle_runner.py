"""Step a particle scene with SolverVBD, report progress and write results (``steel run cloth --solver vbd``).

Results under ``out_dir``:

* ``summary.json``: outcome (``completed`` or ``diverged``, with what and when: the
  :mod:`steel.app.guard` checks every frame), scene, solver options, size, steps, command line,
  versions, wall time, steps/s, NaN check, the lowest particle [m], the energy at start and end [J],
  the largest count of self-intersecting pairs seen;
* ``final_state.npz``: ``particle_q``, ``particle_qd`` of the last step;
* ``energy_contacts.png``: kinetic + gravitational energy [J] and the count of self-intersecting
  edge–triangle pairs per frame (needs matplotlib);
* ``motion.usd`` with ``--viewer usd`` (needs ``usd-core``).

The intersection count comes from :mod:`steel.app.intersections` (exact, NumPy float64), not from the
solver's own contact detection, so it checks the solver rather than repeating it.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import newton

from .guard import DEFAULT_MARGIN, DEFAULT_MAX_SPEED, Diverged, DivergenceGuard
from .intersections import edge_triangle_intersections, mesh_edges
from .particle_scenes import FRAME_DT, PARTICLE_SCENES, ParticleScene, build_particle_scene


def mechanical_energy(model: newton.Model, state: newton.State) -> float:
    """Kinetic plus gravitational potential energy of the particles [J] (potential zero at z = 0)."""
    m = model.particle_mass.numpy().astype(np.float64)
    free = m > 0.0  # pinned particles (mass 0) carry no energy
    x = state.particle_q.numpy().astype(np.float64)
    v = state.particle_qd.numpy().astype(np.float64)
    g = model.gravity.numpy().astype(np.float64)[0]
    kinetic = 0.5 * float((m[free] * (v[free] ** 2).sum(axis=1)).sum())
    potential = -float((m[free] * (x[free] @ g)).sum())
    return kinetic + potential


def run_particle_scene(
    scene: str = "cloth",
    seconds: float = 3.0,
    viewer: str = "null",
    out_dir: str | Path | None = None,
    device=None,
    size: int | None = None,
    log=print,
    *,
    options: dict | None = None,
    dt: float | None = None,
    margin: float = DEFAULT_MARGIN,
    max_speed: float = DEFAULT_MAX_SPEED,
    command: list[str] | None = None,
    force: bool = False,
) -> dict:
    """Simulate particle scene ``scene`` for ``seconds`` [s] with SolverVBD; see the module docstring.

    ``options`` go to SolverVBD on top of the scene's (it validates them); ``dt`` [s] defaults to the
    scene's; ``margin`` [m] and ``max_speed`` [m/s] set the divergence guard; an ``out_dir`` that already
    holds a run is refused unless ``force`` (:func:`steel.app.run_record.resolve_out_dir`).
    """
    from .run_checks import ENERGY_GAIN_HEIGHT
    from .run_record import SUMMARY_VERSION, provenance, record_run, resolve_out_dir, write_summary
    from .runner import check_run_length, make_out_dir, make_viewer, remove_empty_dirs
    from ..solvers import SolverVBD

    if scene not in PARTICLE_SCENES:
        raise ValueError(f"particle scene must be one of {PARTICLE_SCENES}, got {scene!r}")
    if not (seconds > 0.0 and np.isfinite(seconds)):
        raise ValueError(f"seconds must be positive and finite, got {seconds!r}")
    wall_start = time.perf_counter()
    out, index = resolve_out_dir(out_dir, scene, PARTICLE_SCENES, "vbd", force)

    sc: ParticleScene = build_particle_scene(scene, size, device)
    model = sc.model
    step_dt = sc.dt if dt is None else dt
    check_run_length(seconds, step_dt)
    solver_options = {**sc.solver_options, **(options or {})}
    try:
        solver = SolverVBD(model, **solver_options)
    except (TypeError, ValueError, NotImplementedError) as exc:
        raise ValueError(f"SolverVBD options {solver_options}: {exc}") from exc
    substeps = max(int(round(FRAME_DT / step_dt)), 1)
    frames = max(int(round(seconds / FRAME_DT)), 1)
    guard = DivergenceGuard.around(model.particle_q.numpy(), margin, max_speed)
    created = make_out_dir(out)  # nothing is written for a run that fails before this line
    try:
        view = make_viewer(viewer, out, frames + 1)
    except Exception:
        remove_empty_dirs(created)
        raise
    view.set_model(model)
    pipeline = newton.CollisionPipeline(model) if sc.contacts else None
    contacts = pipeline.contacts() if pipeline is not None else None
    s0, s1 = model.state(), model.state()
    tris = sc.tri_indices
    edges = mesh_edges(tris) if len(tris) else None

    def crossings(state) -> int:
        return len(edge_triangle_intersections(state.particle_q.numpy(), tris, edges)) if len(tris) else 0

    times, energy, pierced = [0.0], [mechanical_energy(model, s0)], [crossings(s0)]
    log(f"[steel] {scene}: {model.particle_count} particles, SolverVBD {solver_options}, {frames} frames x "
        f"{substeps} steps of {step_dt:.5f} s on {model.device}")
    report_every = max(frames // 10, 1)
    wall, diverged, f = 0.0, None, 0
    try:
        for f in range(1, frames + 1):
            t0 = time.perf_counter()
            for _ in range(substeps):
                if pipeline is not None:
                    pipeline.collide(s0, contacts)
                solver.step(s0, s1, None, contacts, step_dt)
                s0, s1 = s1, s0
            if f > 1:  # the first frame compiles kernels: keep it out of the speed figure
                wall += time.perf_counter() - t0
            guard.check_state(s0, f * FRAME_DT, f * substeps)
            times.append(f * FRAME_DT)
            energy.append(mechanical_energy(model, s0))
            pierced.append(crossings(s0))
            view.begin_frame(f * FRAME_DT)
            view.log_state(s0)
            view.end_frame()
            if f % report_every == 0 or f == frames:
                rate = (f - 1) * substeps / max(wall, 1e-9) if f > 1 else float("nan")
                lowest = float(s0.particle_q.numpy()[:, 2].min())
                log(f"  t = {f * FRAME_DT:5.2f} s  lowest particle {lowest:.3f} m  energy {energy[-1]:9.3f} J  "
                    f"self-intersecting pairs {pierced[-1]:4d}  ({rate:.1f} steps/s)")
    except Diverged as exc:
        diverged = exc
        log(f"[steel] stopped: {exc}")
    finally:
        view.close()

    x = s0.particle_q.numpy()
    finite = bool(np.isfinite(x).all() and np.isfinite(s0.particle_qd.numpy()).all())
    steps_timed = max(f - 1, 0) * substeps
    # Passive scenes: kinetic + gravitational energy never rises above its start (elastic energy is not counted,
    # and only comes out of those two); the tolerance is steel.app.run_checks' (lifting every particle 5 cm).
    mass = model.particle_mass.numpy().astype(np.float64)
    tolerance = ENERGY_GAIN_HEIGHT * float(mass.sum()) * float(np.linalg.norm(model.gravity.numpy()[0]))
    gain = max(energy) - energy[0]
    found = [f"the run diverged ({diverged.reason} at t = {diverged.time:.3f} s)"] if diverged else []
    if gain > tolerance:
        found.append(f"energy gained: {gain:.3g} J above its start at t = {times[int(np.argmax(energy))]:.3f} s "
                     f"(tolerance {tolerance:.3g} J: lifting every particle {100 * ENERGY_GAIN_HEIGHT:.0f} cm)")
        log(f"[steel] warning: {found[-1]}")
    summary = {
        "summary_version": SUMMARY_VERSION,
        "outcome": "diverged" if diverged else "completed",
        "expectation": {"promise": "no energy gained", "met": not found, "contradictions": found,
                        "energy_gain_J": gain, "tolerance_J": tolerance},
        "divergence": diverged.record() if diverged else None,
        "scene": scene,
        "input": scene,
        "solver": "vbd",
        "solver_options": solver_options,
        "particles": int(model.particle_count),
        "dt": step_dt,
        "steps": frames * substeps,
        "steps_taken": f * substeps,
        "simulated_s": f * FRAME_DT,
        "device": str(model.device),
        **provenance(command),
        "wall_total_s": time.perf_counter() - wall_start,
        "guard": guard.describe(),
        "wall_stepping_s": wall,
        "steps_per_s": steps_timed / wall if wall > 0.0 else None,
        "finite": finite,
        "lowest_particle_m": float(x[:, 2].min()) if finite else None,
        "energy_start_J": energy[0],
        "energy_end_J": energy[-1],
        "max_self_intersecting_pairs": int(max(pierced)),
        "contact_overflow": int(solver.work.contact_overflow.numpy()[0]) if solver.work is not None else 0,
    }
    write_summary(out / "summary.json", summary)
    record_run(index, out, summary)
    np.savez(out / "final_state.npz", particle_q=x, particle_qd=s0.particle_qd.numpy())
    _plot(out / "energy_contacts.png", times, energy, pierced, scene, log)
    if diverged:
        log(f"[steel] DIVERGED: {diverged}; results in {out}/")
    else:
        speed = summary["steps_per_s"]
        speed_text = f"{speed:.1f} steps/s" if speed else "speed not measured: only the first (compiling) frame ran"
        met = "expectation met" if not found else "expectation NOT met (see the warnings)"
        log(f"[steel] done: {speed_text}, {met}, lowest particle {summary['lowest_particle_m']:.3f} m, at most "
            f"{summary['max_self_intersecting_pairs']} self-intersecting pairs; results in {out}/")
    return summary


def _plot(path: Path, times, energy, pierced, name, log) -> None:
    from .runner import two_panel_plot

    two_panel_plot(path, times, (energy, "kinetic + gravitational energy [J]", f"{name}: energy"),
                   (pierced, "pairs", f"{name}: self-intersecting edge-triangle pairs"), log, right_steps=True)
