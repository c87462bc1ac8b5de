"""The package's main job: step a scene with one of our solvers, report progress, write results.

``steel run SCENE`` and ``make demo`` (the four towers with SolverSteel) call :func:`run_scene`.
A scene is one of :data:`steel.scenes.SCENES`, with ``solver="vbd"`` also ``cable_pile``
(:data:`steel.scenes.VBD_SCENES`: crossed layers of wavy cables dropped on the ground), or a path to an MJCF, URDF or USD file, loaded by
:mod:`steel.robot_files` (floating base unless asked, the file's pose lifted by a start height,
MJCF keyframes) and dropped onto a ground plane. The time step defaults to the scenes' ``DT``
(1/600 s). SolverSteel runs with joint limits on (``enable_joint_limits=True``) unless the caller's
options say otherwise: the reference default is off, which lets the humanoid's knees bend to 168°
against a [-160°, 2°] range.

``solver="vbd"`` steps the rigid scenes with SolverVBD (Augmented VBD): the model is coloured
(``ModelBuilder.color()``) and contact history is on (``rigid_contact_history=True``, with the
pipeline's ``contact_matching="latest"``): the reference default is off, and without the carried
multipliers the four towers sink into each other (0.45 m in 5 s, as Newton's SolverVBD does). A
joint SolverVBD does not support (nv_humanoid's two-axis D6 joints with limits) is a one-line error
naming it, before anything is written.

Every frame the :class:`steel.guard.DivergenceGuard` checks the state; a run that blows up stops
there, and its summary says what happened and when (``outcome: "diverged"``). Results under
``out_dir`` (default: a new folder per run under :func:`steel.run_record.default_out_dir`, listed in its
``runs.csv``; see :func:`steel.run_record.resolve_out_dir`), created only once stepping starts:

* ``summary.json``: outcome, scene and input path, solver and its options, worlds, dt, steps,
  command line, versions, wall time (total and stepping) and world-steps/s, the guard's limits,
  the largest horizontal drift of any root body [m], final root heights [m], the lowest and highest
  body centre at the end [m], dropped rows, the deepest overlap of the start pose [m] (over 1 cm a robot
  file kept at its pose gets a `--start-height` hint) and of the final state [m], the scene's promise and
  whether the run kept it (``expectation``: the towers end stacked; a run that breaks it also prints a
  warning), and for a robot file how far it was lifted onto the ground (a floating robot whose start pose reaches
  below the ground is placed on it unless ``keep_pose``);
* ``final_state.npz``: ``joint_q``, ``joint_qd``, ``body_q``, ``body_qd`` of the last step;
* ``trajectory.png``: the highest root body [m] and the largest horizontal drift [m] over time
  (needs matplotlib);
* ``motion.usd`` when the USD viewer is used (needs ``usd-core``).
"""

from __future__ import annotations

import difflib
import inspect
import os
import re
import time
from pathlib import Path

import numpy as np
import warp as wp

import newton
import newton.viewer

from . import scenes
from .guard import DEFAULT_MARGIN, DEFAULT_MAX_SPEED, Diverged, DivergenceGuard
from .robot_files import load_robot
from .run_record import provenance, record_run, resolve_out_dir, write_summary

from .catalog import PARTICLE_SCENES, SCENES, SOLVERS, VBD_SCENES, VIEWERS  # noqa: E402,F401
FRAME_DT = 1.0 / 60.0  # [s] viewer frame interval
START_OVERLAP_WARNING = 0.01  # [m] a deeper overlap at the start is a pose problem, not contact resolution
# [m] a robot file reaching deeper than this below the ground is lifted onto it (run_scene); shallower overlaps
# (a foot mesh's rounding) are left to the contact rows.
GROUND_LIFT_MIN = 1.0e-3
# What steel run changes from the solvers' reference defaults, per solver (see the module docstring).
RUN_DEFAULT_OPTIONS = {"steel": {"enable_joint_limits": True}, "featherstone": {}, "vbd": {"rigid_contact_history": True}}


def build_model(scene: str, world_count: int, device=None, *, fixed_base: bool = False, start_height: float = 0.0,
                keyframe: str = "auto", color: bool = False) -> newton.Model:
    """A shipped scene by name, or a robot file (see :mod:`steel.robot_files`) replicated over a ground plane.

    ``color`` runs ``ModelBuilder.color()`` (the body colouring SolverVBD sweeps by)."""
    if scene in scenes.BUILDERS:
        if fixed_base or start_height != 0.0 or keyframe != "auto":
            raise ValueError("--fixed-base, --start-height and --keyframe apply to robot files, not shipped scenes")
        return scenes.build_scene(scene, world_count, device, color=color).model
    if not Path(scene).exists():
        shipped = ", ".join(SCENES + VBD_SCENES + PARTICLE_SCENES)
        raise ValueError(f"scene {scene!r} is neither a shipped scene ({shipped}; particle scenes with --solver vbd) "
                         "nor a file")
    robot = load_robot(scene, fixed_base=fixed_base, start_height=start_height, keyframe=keyframe)
    world = newton.ModelBuilder()
    world.replicate(robot, world_count)
    world.add_ground_plane()
    if color:
        world.color()
    return world.finalize(device=device)


def make_solver(name: str, model: newton.Model, options: dict | None = None):
    """``"steel"``, ``"featherstone"`` or ``"vbd"`` with ``options``; the solver validates them itself.

    Unknown names, bad values and options not built yet come back as one ``ValueError`` naming them;
    so does a model feature the solver does not support (SolverVBD names the joint).
    """
    from .solvers import SolverFeatherstone, SolverSteel, SolverVBD

    classes = {"steel": SolverSteel, "featherstone": SolverFeatherstone, "vbd": SolverVBD}
    if name not in classes:
        raise ValueError(f"solver must be one of {SOLVERS}, got {name!r}")
    try:
        return classes[name](model, **(options or {}))
    except NotImplementedError as exc:
        if str(exc).startswith("SolverVBD rigid AVBD:"):  # a joint or coupling the solver does not build
            raise ValueError(f"{classes[name].__name__} cannot step this model: {exc}") from exc
        raise ValueError(f"{classes[name].__name__} options {options}: {exc}") from exc
    except (TypeError, ValueError) as exc:
        unknown = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
        if unknown:
            # One line naming the option alone, with the nearest spellings the class accepts.
            known = [p for p in inspect.signature(classes[name]).parameters if p != "model"]
            close = difflib.get_close_matches(unknown.group(1), known, n=3)
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise ValueError(f"{classes[name].__name__} has no option {unknown.group(1)!r}{hint}") from exc
        raise ValueError(f"{classes[name].__name__} options {options}: {exc}") from exc


def make_viewer(kind: str, out_dir: Path, frames: int):
    """Newton's viewer of that kind; raises a clear error, before any work, if it cannot run."""
    if kind == "null":
        return newton.viewer.ViewerNull(num_frames=frames)
    if kind == "usd":
        try:
            import pxr  # noqa: F401
        except ImportError as exc:
            raise RuntimeError("--viewer usd needs the usd-core package (pip install 'steel[usd]')") from exc
        return newton.viewer.ViewerUSD(str(out_dir / "motion.usd"), fps=int(round(1.0 / FRAME_DT)), num_frames=frames)
    if kind == "gl":
        try:
            return newton.viewer.ViewerGL()
        except Exception as exc:  # no display, no pyglet
            raise RuntimeError(f"--viewer gl could not open a window ({exc}); it needs pip install "
                               "'steel[viewer]' and a display") from exc
    raise ValueError(f"viewer must be one of {VIEWERS}, got {kind!r}")


def announce_first_compile(module_prefix: str, log) -> bool:
    """Say so when ``module_prefix``'s kernels are not in Warp's cache yet; returns whether they were not.

    A cold cache costs minutes on a CPU in the first step, with no output otherwise. When cold,
    Warp's own per-module load lines are switched on as progress (the caller restores the level).
    """
    cache = wp.config.kernel_cache_dir
    if cache is None or not os.path.isdir(cache):
        cold = True
    else:
        cold = not any(entry.startswith(f"wp_{module_prefix}") for entry in os.listdir(cache))
    if cold:
        log(f"[steel] compiling kernels, first run only (a few minutes on a CPU; cached in {cache})")
        wp.config.log_level = min(wp.config.log_level, wp.LOG_INFO)
    return cold


def make_out_dir(out: Path) -> list[Path]:
    """Create ``out`` and its missing parents; returns the folders created, deepest first."""
    created = []
    for folder in (out, *out.parents):
        if folder.exists():
            break
        created.append(folder)
    out.mkdir(parents=True, exist_ok=True)
    return created


def remove_empty_dirs(created: list[Path]) -> None:
    """Undo :func:`make_out_dir` for a run that failed before writing anything."""
    for folder in created:
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def check_run_length(seconds: float, dt: float) -> int:
    """Steps in ``seconds`` [s] at ``dt`` [s]; a run shorter than one step is an error, not an empty run."""
    if not (seconds > 0.0 and np.isfinite(seconds)) or not (dt > 0.0 and np.isfinite(dt)):
        raise ValueError(f"seconds and dt must be positive and finite, got {seconds!r}, {dt!r}")
    steps = int(round(seconds / dt))
    if steps < 1:
        raise ValueError(f"--seconds {seconds:g} is shorter than one time step (dt = {dt:g} s)")
    return steps


def run_scene(
    scene: str = "tower",
    solver: str = "steel",
    world_count: int = 1,
    seconds: float = 10.0,
    dt: float | None = None,
    viewer: str = "null",
    out_dir: str | Path | None = None,
    device=None,
    log=print,
    *,
    options: dict | None = None,
    fixed_base: bool = False,
    start_height: float = 0.0,
    keyframe: str = "auto",
    margin: float = DEFAULT_MARGIN,
    max_speed: float = DEFAULT_MAX_SPEED,
    command: list[str] | None = None,
    force: bool = False,
    keep_pose: bool = False,
) -> dict:
    """Simulate ``scene`` for ``seconds`` [s] at time step ``dt`` [s] (default the scenes' ``DT``).

    ``options`` are the solver's keyword options on top of :data:`RUN_DEFAULT_OPTIONS`; ``margin``
    [m] and ``max_speed`` [m/s] set the divergence guard. Bad input raises ``ValueError`` before
    anything is written, as does an ``out_dir`` that already holds a run unless ``force`` is set
    (:func:`steel.run_record.resolve_out_dir`). See the module docstring for the results.
    """
    wall_start = time.perf_counter()
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    if viewer not in VIEWERS:
        raise ValueError(f"viewer must be one of {VIEWERS}, got {viewer!r}")
    if not isinstance(world_count, int) or world_count < 1:
        raise ValueError(f"world_count must be a positive int, got {world_count!r}")
    if scene in scenes.VBD_SCENES and solver != "vbd":
        raise ValueError(f"scene {scene!r} is stepped by SolverVBD only (solver 'vbd'), got solver {solver!r}")
    dt = scenes.DT if dt is None else dt
    steps = check_run_length(seconds, dt)
    shipped = scene in scenes.BUILDERS
    name = scene if shipped else Path(scene).stem
    if shipped and keep_pose:
        raise ValueError("--keep-pose applies to robot files, not shipped scenes")
    out, index = resolve_out_dir(out_dir, scene, tuple(scenes.BUILDERS), solver, force)
    solver_options = {**RUN_DEFAULT_OPTIONS[solver], **(options or {})}

    model = build_model(scene, world_count, device, fixed_base=fixed_base, start_height=start_height,
                        keyframe=keyframe, color=solver == "vbd")
    lift = 0.0
    if not shipped and not fixed_base and not keep_pose:
        # A robot file whose start pose reaches below the ground (feet at z = 0 in a file whose floor sat
        # lower, a body origin at the floor) is placed on it: lifted by the measured overlap, so the contact
        # rows do not throw it out of the ground. A welded base keeps its pose (lifting it moves the weld).
        lift = ground_lift(model)
        if lift > GROUND_LIFT_MIN:
            model = build_model(scene, world_count, device, fixed_base=fixed_base, start_height=start_height + lift,
                                keyframe=keyframe, color=solver == "vbd")
            log(f"[steel] {name}: the start pose reached {1000 * lift:.0f} mm below the ground; placed on it "
                f"(lifted {lift:.4f} m; --keep-pose keeps the file's pose)")
        else:
            lift = 0.0
    sim = make_solver(solver, model, solver_options)
    # SolverVBD's contact history needs the pipeline to match each contact to last step's.
    history = solver == "vbd" and bool(solver_options.get("rigid_contact_history"))
    pipeline = newton.CollisionPipeline(model, contact_matching="latest" if history else "disabled")
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    guard = DivergenceGuard.around(s0.body_q.numpy(), margin, max_speed)
    substeps = max(int(round(FRAME_DT / dt)), 1)
    created = make_out_dir(out)  # everything before this line may fail without leaving a folder
    try:
        view = make_viewer(viewer, out, steps // substeps + 1)
    except Exception:
        remove_empty_dirs(created)
        raise
    view.set_model(model)
    roots = _root_bodies(model)
    start_xy = s0.body_q.numpy()[roots, :2].copy()
    times, top, drift = [], [], []
    log(f"[steel] {name}: {world_count} world(s), {solver} solver {solver_options}, {steps} steps of {dt:.5f} s "
        f"on {model.device}")
    pipeline.collide(s0, contacts)
    start_overlap = deepest_start_penetration(model, s0, contacts)
    if start_overlap > START_OVERLAP_WARNING and not shipped:
        # A robot file starts at the pose the file gives it; feet at z = 0 or below start inside the ground,
        # and the contact rows push them out at up to the solvers' push-out speed.
        log(f"[steel] warning: the start pose overlaps by {1000 * start_overlap:.0f} mm (a body inside the ground "
            f"or another body); lift it with --start-height {np.ceil(100 * start_overlap) / 100:.2f}")
    log_level = wp.config.log_level
    announce_first_compile(f"steel.solvers.{solver}", log)
    report_every = max(steps // 10, 1)
    wall, diverged, n = 0.0, None, 0
    try:
        guard.check_state(s0, 0.0, 0)
        for n in range(1, steps + 1):
            t0 = time.perf_counter()
            pipeline.collide(s0, contacts)
            sim.step(s0, s1, None, contacts, dt)
            s0, s1 = s1, s0
            if n > 1:  # the first step compiles kernels: keep it out of the speed figure
                wall += time.perf_counter() - t0
            else:
                wp.config.log_level = log_level
            frame = n % substeps == 0 or n == steps
            report = n % report_every == 0 or n == steps
            if frame:
                guard.check_state(s0, n * dt, n)
            if frame or report:
                q = s0.body_q.numpy()
                times.append(n * dt)
                top.append(float(q[roots, 2].max()))
                drift.append(float(np.linalg.norm(q[roots, :2] - start_xy, axis=1).max()))
            if frame:
                view.begin_frame(n * dt)
                view.log_state(s0)
                view.end_frame()
            if report:
                log(f"  t = {n * dt:6.2f} s  highest root {top[-1]:.3f} m  max drift {1000 * drift[-1]:.2f} mm  "
                    f"({_speed_text(world_count * (n - 1), wall)})")
    except Diverged as exc:
        diverged = exc
        log(f"[steel] stopped: {exc}")
    finally:
        wp.config.log_level = log_level
        view.close()

    finite = bool(np.isfinite(s0.joint_q.numpy()).all() and np.isfinite(s0.body_q.numpy()).all())
    # What a user would check first: the scene's promise (a tower that should stand) and the overlap left.
    promise = scenes.expectation(name, s0.body_q.numpy(), world_count) if shipped and finite else None
    end_overlap = None
    if finite:
        pipeline.collide(s0, contacts)
        end_overlap = deepest_start_penetration(model, s0, contacts)
    if promise is not None and not promise["met"]:
        log(f"[steel] warning: the outcome contradicts the scene: not {promise['promise']} (body "
            f"{promise['worst_box']}: {1000 * promise['height_error_m']:.1f} mm from its stacked height, "
            f"{1000 * promise['offset_m']:.1f} mm off its tower)")
    summary = {
        "outcome": "diverged" if diverged else "completed",
        "divergence": diverged.record() if diverged else None,
        "scene": name,
        "input": scene if shipped else str(Path(scene).resolve()),
        "solver": solver,
        "solver_class": f"{type(sim).__module__.split('.')[0]}.solvers.{type(sim).__name__}",
        "solver_options": solver_options,
        "world_count": world_count,
        "dt": dt,
        "steps": steps,
        "steps_taken": n,
        "simulated_seconds": n * dt,
        "robot_file": {"fixed_base": fixed_base, "start_height_m": start_height, "keyframe": keyframe,
                       "placed_on_ground_lift_m": lift, "keep_pose": keep_pose}
        if not shipped else None,
        "device": str(model.device),
        **provenance(command),
        "duration_seconds": time.perf_counter() - wall_start,
        "wall_seconds": wall,
        "world_steps_per_second": world_count * (n - 1) / wall if wall > 0.0 else None,  # step 1 compiles
        "guard": guard.describe(),
        "finite": finite,
        "joint_limit_overshoot_m_or_rad": joint_limit_overshoot(model, s0),
        "max_horizontal_drift_m": float(max(drift)) if drift else None,
        "final_drift_m": float(drift[-1]) if drift else None,
        "final_root_height_m": s0.body_q.numpy()[roots, 2].astype(float).tolist(),
        "final_body_height_range_m": [float(s0.body_q.numpy()[:, 2].min()), float(s0.body_q.numpy()[:, 2].max())],
        "rows_dropped": _rows_dropped(sim),
        "contact_overflow": int(sim.check_rigid_contact_overflow()) if solver == "vbd" else None,
        "start_overlap_m": start_overlap,
        "final_overlap_m": end_overlap,
        "expectation": promise,
    }
    write_summary(out / "summary.json", summary)
    record_run(index, out, summary)
    np.savez(out / "final_state.npz", joint_q=s0.joint_q.numpy(), joint_qd=s0.joint_qd.numpy(),
             body_q=s0.body_q.numpy(), body_qd=s0.body_qd.numpy())
    if times:
        _plot(out / "trajectory.png", times, top, drift, name, log)
    if diverged:
        log(f"[steel] DIVERGED: {diverged}; results in {out}/")
        if not shipped and diverged.time < 0.1:
            # A robot file starts at the pose the file gives it; feet at z = 0 or below start inside the ground.
            log("[steel] a robot file starts at its pose in the file: if it starts inside the ground plane, "
                "lift it with --start-height")
    else:
        log(f"[steel] done: {_speed_text(world_count * (n - 1), wall)}, max drift "
            f"{1000 * summary['max_horizontal_drift_m']:.2f} mm; results in {out}/")
    return summary


def _speed_text(world_steps: int, wall: float) -> str:
    """Stepping speed for the log; the first step compiles kernels and is never timed."""
    if world_steps <= 0 or wall <= 0.0:
        return "speed not measured: only the first (compiling) step ran"
    return f"{world_steps / wall:.0f} world-steps/s"


def joint_limit_overshoot(model: newton.Model, state: newton.State) -> float:
    """Largest distance of a limited revolute or prismatic coordinate outside its range [m or rad] (0 inside)."""
    q = state.joint_q.numpy()
    lower, upper = model.joint_limit_lower.numpy(), model.joint_limit_upper.numpy()
    q_start, qd_start = model.joint_q_start.numpy(), model.joint_qd_start.numpy()
    worst = 0.0
    for j, jtype in enumerate(model.joint_type.numpy()):
        if jtype in (int(newton.JointType.REVOLUTE), int(newton.JointType.PRISMATIC)):
            x, d = q[q_start[j]], qd_start[j]
            worst = max(worst, float(lower[d] - x), float(x - upper[d]))
    return worst


def deepest_start_penetration(model: newton.Model, state: newton.State, contacts: newton.Contacts,
                              ground_only: bool = False) -> float:
    """The deepest overlap of any contact pair in ``contacts`` [m] (0 when nothing overlaps); with
    ``ground_only`` only of the pairs with a static plane (the ground the runner adds).

    Signed gap of a pair: ``d = n . (p_B - p_A)`` between the surface points ``p = X p_body -/+ m n``
    (``m`` the contact margin) -- the gap every solver's contact rows start from."""
    count = int(contacts.rigid_contact_count.numpy()[0])
    if count == 0:
        return 0.0
    body_q = state.body_q.numpy()
    shape_body = model.shape_body.numpy()

    def world_points(shape, point):
        body = shape_body[shape]
        out = point.copy()
        moving = body >= 0
        q = body_q[body[moving]]
        pos, rot = q[:, :3], q[:, 3:7]  # quaternion (x, y, z, w)
        v = point[moving]
        t = 2.0 * np.cross(rot[:, :3], v)
        out[moving] = pos + v + rot[:, 3:4] * t + np.cross(rot[:, :3], t)
        return out

    n = contacts.rigid_contact_normal.numpy()[:count]
    pa = world_points(contacts.rigid_contact_shape0.numpy()[:count], contacts.rigid_contact_point0.numpy()[:count])
    pb = world_points(contacts.rigid_contact_shape1.numpy()[:count], contacts.rigid_contact_point1.numpy()[:count])
    gap = np.einsum("ij,ij->i", n, pb - pa)
    gap -= contacts.rigid_contact_margin0.numpy()[:count] + contacts.rigid_contact_margin1.numpy()[:count]
    if ground_only:
        ground = (shape_body < 0) & (model.shape_type.numpy() == int(newton.GeoType.PLANE))
        on_ground = ground[contacts.rigid_contact_shape0.numpy()[:count]] | ground[
            contacts.rigid_contact_shape1.numpy()[:count]]
        gap = gap[on_ground]
        if not len(gap):
            return 0.0
    return float(max(0.0, -gap.min()))


def ground_lift(model: newton.Model) -> float:
    """How far [m] the model's start pose (its FK) reaches below the ground plane: the lift that places it on it."""
    state = model.state()
    newton.eval_fk(model, state.joint_q, state.joint_qd, state)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    pipeline.collide(state, contacts)
    return deepest_start_penetration(model, state, contacts, ground_only=True)


def _root_bodies(model: newton.Model) -> np.ndarray:
    """The child of each articulation's first joint (a tower box, a robot's torso)."""
    if model.articulation_count == 0:
        return np.arange(model.body_count)
    start = model.articulation_start.numpy()[:-1]
    return model.joint_child.numpy()[start]


def _rows_dropped(sim) -> int:
    rows = getattr(sim, "rows", None)
    return int(rows.world_rows_dropped.numpy().sum()) if rows is not None else 0


def _plot(path: Path, times, top, drift, name, log) -> None:
    two_panel_plot(path, times, (top, "highest root body [m]", f"{name}: height"),
                   (1000.0 * np.asarray(drift), "max horizontal drift [mm]", f"{name}: drift"), log)


def two_panel_plot(path: Path, times, left, right, log, right_steps: bool = False) -> None:
    """Two time series side by side, each ``(values, y label, title)``; a note instead without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("  (matplotlib not installed: no plot)")
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, (values, ylabel, title), steps in zip(axes, (left, right), (False, right_steps), strict=True):
        if steps:
            ax.step(times, values, where="post")
        else:
            ax.plot(times, values)
        ax.set(xlabel="t [s]", ylabel=ylabel, title=title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
