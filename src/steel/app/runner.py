"""The package's main job: step a scene with one of our solvers, report progress, write results.

``steel run SCENE`` and ``make demo`` (the four towers with SolverSteel) call :func:`run_scene`.
A scene is one of :data:`steel.app.scenes.SCENES`, with ``solver="vbd"`` also ``cable_pile``
(:data:`steel.app.scenes.VBD_SCENES`: crossed layers of wavy cables dropped on the ground), or a path to an MJCF, URDF or USD file, loaded by
:mod:`steel.app.robot_files` (floating base unless asked, the file's pose lifted by a start height,
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

Every frame the :class:`steel.app.guard.DivergenceGuard` checks the state; a run that blows up stops
there, and its summary says what happened and when (``outcome: "diverged"``). Results under
``out_dir`` (default: a new folder per run under :func:`steel.app.run_record.default_out_dir`, listed in its
``runs.csv``; see :func:`steel.app.run_record.resolve_out_dir`), created only once stepping starts:

* ``summary.json`` (``summary_version`` 2): outcome, the expectation (the scene's promise -- the towers
  end stacked -- plus every run's: nothing frozen in mid-air, no energy gained, nothing leaves the
  scene; whether the run met it and each contradiction, also printed as a warning), the checks behind
  it (:mod:`steel.app.run_checks`), scene and input path, solver and its options, worlds, dt, steps,
  command line, versions, times (``simulated_s``, ``wall_total_s``, ``wall_stepping_s``) and
  world-steps/s, the guard's limits, the measurements of the scene's kind (:mod:`steel.app.run_metrics`:
  stack drift, base height and tilt, or joint travel), every body's final height [m], dropped rows, frames with a full contact buffer,
  the deepest overlap of the start pose [m] (over 1 cm a robot file kept at its pose gets a
  `--start-height` hint) and of the final state [m], and for a robot file how far it was lifted onto
  the ground (a floating robot whose start pose reaches below the ground is placed on it unless
  ``keep_pose``; the shipped ant, whose declared pose reaches 16 mm below it, always is:
  ``placed_on_ground_lift_m``);
* ``final_state.npz``: ``joint_q``, ``joint_qd``, ``body_q``, ``body_qd`` of the last step;
* ``trajectory.png``: the kind's two measurements over time (needs matplotlib);
* ``motion.usd`` when the USD viewer is used (needs ``usd-core``).
"""

from __future__ import annotations

import difflib
import inspect
import re
import time
from pathlib import Path

import numpy as np

import newton
import newton.viewer

from . import scenes
from .guard import DEFAULT_MARGIN, DEFAULT_MAX_SPEED, Diverged, DivergenceGuard
from .robot_files import load_robot
from .run_checks import RunWatch, contact_gaps, contradictions
from .run_metrics import KindMetrics
from .run_record import SUMMARY_VERSION, provenance, record_run, resolve_out_dir, write_summary

from .catalog import (  # noqa: E402,F401
    ENERGY_GAIN_HEIGHT,
    PARTICLE_SCENES,
    SCENE_ENERGY_GAIN_HEIGHT,
    SCENE_KINDS,
    SCENES,
    SOLVERS,
    VBD_SCENES,
    VIEWERS,
)
FRAME_DT = 1.0 / 60.0  # [s] viewer frame interval
START_OVERLAP_WARNING = 0.01  # [m] a deeper overlap at the start is a pose problem, not contact resolution
# [m] a robot file reaching deeper than this below the ground is lifted onto it (run_scene); shallower overlaps
# (a foot mesh's rounding) are left to the contact rows.
GROUND_LIFT_MIN = 1.0e-3
# What steel run changes from the solvers' reference defaults, per solver (see the module docstring).
RUN_DEFAULT_OPTIONS = {"steel": {"enable_joint_limits": True}, "featherstone": {}, "vbd": {"rigid_contact_history": True}}


def build_model(scene: str, world_count: int, device=None, *, fixed_base: bool = False, start_height: float = 0.0,
                keyframe: str = "auto", color: bool = False) -> newton.Model:
    """A shipped scene by name, or a robot file (see :mod:`steel.app.robot_files`) replicated over a ground plane.

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
    from ..solvers import SolverFeatherstone, SolverSteel, SolverVBD

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
    (:func:`steel.app.run_record.resolve_out_dir`). See the module docstring for the results.
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
    elif shipped and SCENE_KINDS.get(scene) == "floating":
        # A shipped robot starts at its declared pose; nv_ant's init_qpos (torso at 0.55 m) puts the feet 16 mm
        # inside the ground, and pushing them out gained 1.7 J (SolverSteel; 0.88 J SolverFeatherstone) at the
        # start of every `steel run ant`. It is placed on the ground by the same measured lift a robot file gets.
        lift = ground_lift(model)
        if lift > GROUND_LIFT_MIN:
            raise_free_roots(model, lift)
            log(f"[steel] {name}: the declared pose reached {1000 * lift:.0f} mm below the ground; placed on it "
                f"(lifted {lift:.4f} m)")
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
    kind = KindMetrics(SCENE_KINDS.get(scene) if shipped else ("fixed_base" if fixed_base else None), model, s0,
                       joints_from_bodies=solver == "vbd")
    watch = RunWatch(model, s0, **energy_tolerance(name if shipped else None, dt))
    log(f"[steel] {name}: {world_count} world(s), {solver} solver {solver_options}, {steps} steps of {dt:.5f} s "
        f"on {model.device}; a {kind.kind.replace('_', '-')} scene")
    pipeline.collide(s0, contacts)
    start_overlap = deepest_start_penetration(model, s0, contacts)
    watch.start_overlap = start_overlap
    if start_overlap > START_OVERLAP_WARNING and not shipped:
        # A robot file starts at the pose the file gives it; feet at z = 0 or below start inside the ground,
        # and the contact rows push them out at up to the solvers' push-out speed.
        log(f"[steel] warning: the start pose overlaps by {1000 * start_overlap:.0f} mm (a body inside the ground "
            f"or another body); lift it with --start-height {np.ceil(100 * start_overlap) / 100:.2f}")
    report_every = max(steps // 10, 1)
    wall, diverged, n = 0.0, None, 0
    full_frames = 0  # frames whose contact buffer was full: the pipeline drops what does not fit without a word
    try:
        guard.check_state(s0, 0.0, 0)
        for n in range(1, steps + 1):
            t0 = time.perf_counter()
            pipeline.collide(s0, contacts)
            sim.step(s0, s1, None, contacts, dt)
            s0, s1 = s1, s0
            if n > 1:  # the first step compiles kernels: keep it out of the speed figure
                wall += time.perf_counter() - t0
            frame = n % substeps == 0 or n == steps
            report = n % report_every == 0 or n == steps
            if frame:
                guard.check_state(s0, n * dt, n)
                watch.observe(s0, contacts, n * dt)
                full_frames += int(0 < contacts.rigid_contact_max <= int(contacts.rigid_contact_count.numpy()[0]))
            if frame or report:
                overlap = deepest_start_penetration(model, s0, contacts) if report and kind.kind == "stack" else None
                kind.observe(s0, n * dt, overlap)
            if frame:
                view.begin_frame(n * dt)
                view.log_state(s0)
                view.end_frame()
            if report:
                log(f"  t = {n * dt:6.2f} s  {kind.progress()}  ({_speed_text(world_count * (n - 1), wall)})")
    except Diverged as exc:
        diverged = exc
        log(f"[steel] stopped: {exc}")
    finally:
        view.close()

    finite = bool(np.isfinite(s0.joint_q.numpy()).all() and np.isfinite(s0.body_q.numpy()).all())
    # What a user would check first: the scene's promise (a tower that should stand), the checks of
    # steel.app.run_checks (nothing frozen in mid-air, no energy gained, nothing left the scene), the overlap left.
    promise = scenes.expectation(name, s0.body_q.numpy(), world_count) if shipped and finite else None
    checks = watch.report() if finite else None
    expect = expectation_entry(promise, checks, diverged)
    end_overlap = None
    if finite:
        pipeline.collide(s0, contacts)
        end_overlap = deepest_start_penetration(model, s0, contacts)
    for found in contradictions(checks) if checks else ():
        log(f"[steel] warning: {found}")
    if full_frames:
        log(f"[steel] warning: the collision pipeline's contact buffer was full ({contacts.rigid_contact_max} "
            f"contacts) on {full_frames} frame(s): contacts beyond it may have been dropped")
    if promise is not None and not promise["met"]:
        log(f"[steel] warning: the outcome contradicts the scene: not {promise['promise']} (body "
            f"{promise['worst_box']}: {1000 * promise['height_error_m']:.1f} mm from its stacked height, "
            f"{1000 * promise['offset_m']:.1f} mm off its tower)")
    wall_total = time.perf_counter() - wall_start
    summary = {
        "summary_version": SUMMARY_VERSION,
        "outcome": "diverged" if diverged else "completed",
        "divergence": diverged.record() if diverged else None,
        "expectation": expect,
        "checks": checks,
        "scene": name,
        "input": scene if shipped else str(Path(scene).resolve()),
        "solver": solver,
        "solver_class": f"{type(sim).__module__.split('.')[0]}.solvers.{type(sim).__name__}",
        "solver_options": solver_options,
        "world_count": world_count,
        "dt": dt,
        "steps": steps,
        "steps_taken": n,
        "simulated_s": n * dt,
        "robot_file": {"fixed_base": fixed_base, "start_height_m": start_height, "keyframe": keyframe,
                       "placed_on_ground_lift_m": lift, "keep_pose": keep_pose}
        if not shipped else None,
        "device": str(model.device),
        **provenance(command),
        "wall_total_s": wall_total,
        "wall_stepping_s": wall,
        "world_steps_per_s": world_count * (n - 1) / wall if wall > 0.0 else None,  # step 1 compiles
        "guard": guard.describe(),
        "finite": finite,
        **kind.summary(),
        "body_height_m": s0.body_q.numpy()[:, 2].astype(float).tolist(),
        "joint_limit_overshoot_m_or_rad": joint_limit_overshoot(model, s0),
        "rows_dropped": _rows_dropped(sim),
        "contact_buffer_full_frames": full_frames,  # frames at the pipeline's rigid_contact_max: contacts may be lost
        "contact_overflow": int(sim.check_rigid_contact_overflow()) if solver == "vbd" else None,
        "placed_on_ground_lift_m": lift,  # [m] a floating robot (shipped or file) lifted out of the ground
        "start_overlap_m": start_overlap,
        "final_overlap_m": end_overlap,
    }
    write_summary(out / "summary.json", summary)
    record_run(index, out, summary)
    np.savez(out / "final_state.npz", joint_q=s0.joint_q.numpy(), joint_qd=s0.joint_qd.numpy(),
             body_q=s0.body_q.numpy(), body_qd=s0.body_qd.numpy())
    if kind.times:
        left, right = kind.series()
        two_panel_plot(out / "trajectory.png", kind.times, (left[0], left[1], f"{name}: {left[2]}"),
                       (right[0], right[1], f"{name}: {right[2]}"), log)
    if diverged:
        log(f"[steel] DIVERGED: {diverged}; results in {out}/")
        if not shipped and diverged.time < 0.1:
            # A robot file starts at the pose the file gives it; feet at z = 0 or below start inside the ground.
            log("[steel] a robot file starts at its pose in the file: if it starts inside the ground plane, "
                "lift it with --start-height")
    else:
        met = "expectation met" if expect["met"] else "expectation NOT met (see the warnings)"
        log(f"[steel] done: {_speed_text(world_count * (n - 1), wall)}, {met}, {kind.progress() if kind.values else ''}"
            f"; results in {out}/")
    return summary


def expectation_entry(promise: dict | None, checks: dict | None, diverged: Diverged | None) -> dict:
    """The summary's ``expectation``: the scene's own promise (``promise``, the towers only) plus what every
    run promises (nothing frozen in mid-air, no energy gained, nothing left the scene: ``checks``), whether the
    run kept them, and a sentence per contradiction. A run that diverged (or ended non-finite) keeps none."""
    entry = dict(promise) if promise is not None else {}
    own = f"{promise['promise']}; " if promise is not None else ""
    entry["promise"] = own + "nothing frozen in mid-air, no energy gained, nothing leaves the scene"
    found = []
    if diverged is not None:
        found.append(f"the run diverged ({diverged.reason} at t = {diverged.time:.3f} s)")
    elif checks is None:
        found.append("the final state is not finite")
    if promise is not None and not promise["met"]:
        found.append(f"not {promise['promise']}")
    found += contradictions(checks) if checks else []
    entry["met"], entry["contradictions"] = not found, found
    return entry


def energy_tolerance(scene: str | None, dt: float) -> dict:
    """:class:`RunWatch`'s energy tolerance for shipped ``scene`` (None: a robot file) at time step ``dt`` [s]:
    the scene's own height of :data:`SCENE_ENERGY_GAIN_HEIGHT` at steps up to the default ``DT`` (where it was
    measured; a smaller step gained less: the chain 0.07 to 0.14 J at DT/4), else the global ``ENERGY_GAIN_HEIGHT``."""
    height = SCENE_ENERGY_GAIN_HEIGHT.get(scene)
    if height is None or dt > scenes.DT * (1.0 + 1e-9):
        return {"gain_height": ENERGY_GAIN_HEIGHT, "gain_reason": ""}
    return {"gain_height": height, "gain_reason": f"the {scene} scene at dt <= {scenes.DT:.6g} s: semi-implicit Euler "
            "gains energy in its motion (Newton's solvers and MuJoCo's Euler alike); see steel.app.catalog"}


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
    shape0, shape1, gap = contact_gaps(model, state, contacts)
    if ground_only:
        ground = (model.shape_body.numpy() < 0) & (model.shape_type.numpy() == int(newton.GeoType.PLANE))
        gap = gap[ground[shape0] | ground[shape1]]
    return float(max(0.0, -gap.min())) if len(gap) else 0.0


def ground_lift(model: newton.Model) -> float:
    """How far [m] the model's start pose (its FK) reaches below the ground plane: the lift that places it on it."""
    state = model.state()
    newton.eval_fk(model, state.joint_q, state.joint_qd, state)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    pipeline.collide(state, contacts)
    return deepest_start_penetration(model, state, contacts, ground_only=True)


def raise_free_roots(model: newton.Model, dz: float) -> None:
    """Move every floating robot of ``model`` (a FREE joint to the world) up by ``dz`` [m], in place: its
    ``joint_q`` height, then the body poses by forward kinematics. Welded or jointed roots keep their pose
    (moving them would move the joint to the world)."""
    q = model.joint_q.numpy()
    free = (model.joint_parent.numpy() < 0) & (model.joint_type.numpy() == int(newton.JointType.FREE))
    q[model.joint_q_start.numpy()[:-1][free] + 2] += dz  # FREE coordinates: position (x, y, z), then quaternion
    model.joint_q.assign(q)
    newton.eval_fk(model, model.joint_q, model.joint_qd, model)


def _rows_dropped(sim) -> int:
    rows = getattr(sim, "rows", None)
    return int(rows.world_rows_dropped.numpy().sum()) if rows is not None else 0


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
