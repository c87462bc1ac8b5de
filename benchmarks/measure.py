"""One timed measurement each: a Newton-API solver, MuJoCo C, or the articulation core.

Every candidate builds what it needs from scratch (a fresh model, so one solver cannot leave state
behind for the next), runs untimed steps (this is where Warp compiles or loads kernels, and where a
contact scene settles: :mod:`benchmarks.settle`), synchronizes, then times ``steps`` steps with
``time.perf_counter`` and synchronizes again before stopping the clock. :class:`SolverRun` and
:class:`MujocoRun` keep their scene between timed windows, so a scene settled once is timed over
successive windows; :func:`run_solver` and :func:`run_mujoco` build, advance and time one window.
Launches are counted afterwards over a few extra steps, so the counting wrapper never runs inside the
timed window.

All of them return a :class:`Measurement`; they raise on failure and the runner records the error.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import warp as wp

import newton

from . import scenes as sc
from . import settle


@dataclass
class Measurement:
    """Result of one timed run.

    Attributes:
        seconds: wall time of the timed steps [s].
        steps: number of timed steps (or core iterations).
        worlds: number of worlds.
        launches_step: Python-level Warp launches per ``solver.step`` (or per core iteration).
        launches_collide: Python-level Warp launches per ``CollisionPipeline.collide``.
        sanity: physical sanity outcome (see :func:`benchmarks.scenes.outcome`).
        warnings: distinct warning messages raised while building and stepping.
        collide_seconds: the part of ``seconds`` spent in ``CollisionPipeline.collide`` [s], timed per call on
            a CPU device (launches there are synchronous); ``None`` elsewhere or without collision.
        start: the settle check at the window's start (:mod:`benchmarks.settle`), ``{}`` when not checked.
    """

    seconds: float
    steps: int
    worlds: int
    launches_step: float | None = None
    launches_collide: float | None = None
    sanity: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    collide_seconds: float | None = None
    start: dict = field(default_factory=dict)

    @property
    def world_steps_per_s(self) -> float:
        """Throughput [world-steps/s]: ``worlds * steps / seconds``."""
        return self.worlds * self.steps / self.seconds if self.seconds > 0 else math.inf

    @property
    def step_world_steps_per_s(self) -> float | None:
        """Step-only throughput [world-steps/s]: collision time left out (``None`` where not split)."""
        if self.collide_seconds is None:
            return None
        step_seconds = self.seconds - self.collide_seconds
        return self.worlds * self.steps / step_seconds if step_seconds > 0 else math.inf


# ----------------------------------------------------------------------------------------------
# Launch counting
# ----------------------------------------------------------------------------------------------


class LaunchCounter:
    """Counts kernel launches while active: ``warp.launch``, ``warp.launch_tiled`` and replays of recorded
    launches (``warp.Launch.launch``, how Steel's solvers launch once a launch's arguments repeat).

    It swaps those attributes for counting wrappers and restores them on exit. This counts
    *Python-level* launch calls (how Newton and Steel call Warp); launches Warp issues internally
    (``launch_tiled`` forwards to the unpatched internal ``launch``, so it is counted once), array
    fills/copies and native helpers such as scans and sorts are not counted. A
    ``warp.launch(..., record_cmd=True)`` only records a launch and is not counted (its replay is).
    """

    def __init__(self):
        self.count = 0
        self._saved = None

    def __enter__(self) -> LaunchCounter:
        self._saved = (wp.launch, wp.launch_tiled, wp.Launch.launch)
        launch, launch_tiled, replay = self._saved

        def counted_launch(*args, **kwargs):
            if not kwargs.get("record_cmd"):
                self.count += 1
            return launch(*args, **kwargs)

        def counted_launch_tiled(*args, **kwargs):
            self.count += 1
            return launch_tiled(*args, **kwargs)

        def counted_replay(cmd, *args, **kwargs):
            self.count += 1
            return replay(cmd, *args, **kwargs)

        wp.launch, wp.launch_tiled, wp.Launch.launch = counted_launch, counted_launch_tiled, counted_replay
        return self

    def __exit__(self, *exc) -> None:
        wp.launch, wp.launch_tiled, wp.Launch.launch = self._saved


@contextlib.contextmanager
def _recorded_warnings(out: list[str]):
    """Collect distinct warning messages (the reference solvers may warn, e.g. on contact overflow)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for w in caught:
                msg = f"{w.category.__name__}: {str(w.message).splitlines()[0][:160]}"
                if msg not in out:
                    out.append(msg)


@contextlib.contextmanager
def _captured_stdout(out: list[str]):
    """Echo everything written to the process's stdout (file descriptor 1) and keep warning lines.

    Solvers report some problems (e.g. Newton's SolverSteel constraint-row overflow) by printing,
    from Python or from C, rather than through :mod:`warnings`; redirecting the descriptor catches both.
    """
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no real descriptor (e.g. under a capturing test runner)
        yield
        return
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(fd)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), fd)
        try:
            yield
        finally:
            sys.stdout.flush()
            libc.fflush(None)  # C-level printf output sits in libc's buffer until flushed
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode("utf-8", errors="replace")
            sys.stdout.write(text)
            sys.stdout.flush()
            for line in text.splitlines():
                line = line.strip()
                if ("warning" in line.lower() or "overflow" in line.lower()) and line[:200] not in out:
                    out.append(line[:200])


def _finite(*arrays) -> bool:
    return all(np.isfinite(a.numpy()).all() for a in arrays if a is not None and a.size > 0)


def _watched_pose(scene: sc.Scene, body_q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions [m] and quaternions (x, y, z, w) of the watched bodies, ``(worlds, watched, 3|4)``."""
    idx = scene.watched_global()
    q = body_q[idx] if idx.size else np.zeros((scene.world_count, 0, 7))
    return q[..., :3].astype(np.float64), q[..., 3:7].astype(np.float64)


# ----------------------------------------------------------------------------------------------
# Newton-API solver
# ----------------------------------------------------------------------------------------------


class SolverRun:
    """One solver on one scene, built once and stepped on: untimed steps (:meth:`advance`), then timed
    windows (:meth:`window`), each continuing from where the last stopped.

    Newton's standard loop: ``pipeline.collide(state_0, contacts)``, ``state_0.clear_forces()``,
    ``solver.step(state_0, state_1, control, contacts, dt)``, swap. A settled contact scene is settled once
    and its windows follow one another (``--repeats`` then time successive windows of the same settled
    scene, not one window rebuilt). Warnings and solver printouts of every phase land in :attr:`notes`.
    """

    def __init__(self, solver_cls, scene_name: str, worlds: int, device: str, dt: float | None = None,
                 solver_kwargs: dict | None = None):
        self.notes: list[str] = []
        self.device = device
        with _captured_stdout(self.notes), _recorded_warnings(self.notes):
            scene = self.scene = sc.build_scene(scene_name, worlds, device)
            if dt is not None:
                scene.dt = dt
            model = scene.model
            self.solver = solver_cls(model, **(solver_kwargs or {}))
            self.pipeline = newton.CollisionPipeline(model)
            self.contacts = self.pipeline.contacts()
            self.states = [model.state(), model.state()]
            self.control = model.control()
            newton.eval_fk(model, self.states[0].joint_q, self.states[0].joint_qd, self.states[0])
        self.start_pos, _ = _watched_pose(scene, self.states[0].body_q.numpy())
        self.steps_done = 0

    def collide(self) -> None:
        self.pipeline.collide(self.states[0], self.contacts)

    def step(self) -> None:
        s = self.states
        s[0].clear_forces()
        self.solver.step(s[0], s[1], self.control, self.contacts, self.scene.dt)
        s.reverse()  # the output becomes the next input
        self.steps_done += 1

    def advance(self, steps: int) -> None:
        """``steps`` untimed collide-then-step steps (the first compile or load the kernels)."""
        with _captured_stdout(self.notes), _recorded_warnings(self.notes):
            for _ in range(steps):
                self.collide()
                self.step()
            wp.synchronize_device(self.device)

    def start_check(self) -> dict:
        """The settle check (:func:`benchmarks.settle.newton_start`) of the current state, contacts refreshed."""
        self.collide()
        wp.synchronize_device(self.device)
        return settle.newton_start(self.scene, self.states[0], self.contacts, self.steps_done * self.scene.dt)

    def window(self, steps: int, count_steps: int, check_start: bool = False) -> Measurement:
        """Time the next ``steps`` steps; ``check_start``: record the settle check at the window's start first."""
        notes: list[str] = []
        with _captured_stdout(notes), _recorded_warnings(notes):
            start = self.start_check() if check_start else {}
            # On a CPU device launches return when done, so each collide call is timed on its own (the
            # step-only figure); elsewhere a split would need a synchronize per call, which the timed loop avoids.
            split = wp.get_device(self.device).is_cpu
            collide_seconds = 0.0
            t0 = time.perf_counter()
            for _ in range(steps):
                if split:
                    tc = time.perf_counter()
                    self.collide()
                    collide_seconds += time.perf_counter() - tc
                else:
                    self.collide()
                self.step()
            wp.synchronize_device(self.device)
            seconds = time.perf_counter() - t0

            s = self.states[0]
            pos, quat = _watched_pose(self.scene, s.body_q.numpy())
            finite = _finite(s.body_q, s.body_qd, s.joint_q, s.joint_qd)
            sanity = sc.outcome(self.scene.metric, pos, quat, self.start_pos, finite, self.scene.tip_offset)

            # Count collide and step separately so a solver's own launch count is visible on its own.
            n_collide = n_step = 0
            for _ in range(count_steps):
                with LaunchCounter() as c:
                    self.collide()
                n_collide += c.count
                with LaunchCounter() as c:
                    self.step()
                n_step += c.count
            wp.synchronize_device(self.device)
        self.notes += [n for n in notes if n not in self.notes]
        return Measurement(
            seconds, steps, self.scene.world_count, n_step / max(count_steps, 1), n_collide / max(count_steps, 1),
            sanity, list(self.notes), collide_seconds if split else None, start,
        )


def run_solver(solver_cls, scene_name: str, worlds: int, device: str, steps: int, warmup: int, count_steps: int,
               *, dt: float | None = None, settle_start: bool = False, solver_kwargs: dict | None = None):
    """Time ``solver_cls(model)`` on a fresh scene with Newton's standard collide-then-step loop.

    ``warmup`` untimed steps first (plus, with ``settle_start``, the scene's settle time,
    :func:`benchmarks.settle.settle_steps`); ``dt`` [s] replaces the scene's time step. A contact scene's
    window start is checked (:attr:`Measurement.start`) whether settled or not.
    """
    run = SolverRun(solver_cls, scene_name, worlds, device, dt, solver_kwargs)
    run.advance(warmup + (settle.settle_steps(scene_name, run.scene.dt) if settle_start else 0))
    return run.window(steps, count_steps, check_start=scene_name in settle.SETTLE_S)


# ----------------------------------------------------------------------------------------------
# MuJoCo C
# ----------------------------------------------------------------------------------------------


class MujocoRun:
    """MuJoCo C on ``worlds`` separate ``MjData`` of the scene's MuJoCo twin (single thread), built once and
    stepped on like :class:`SolverRun`.

    Each ``MjData`` is advanced with one ``mj_step(m, d, nstep)`` call, so MuJoCo runs its own loop in
    C with no per-step Python overhead (its best case); worlds are stepped one after the other.
    """

    def __init__(self, scene_name: str, worlds: int, dt: float | None = None):
        import mujoco  # noqa: PLC0415 - optional dependency

        self.notes: list[str] = []
        with _recorded_warnings(self.notes):
            self.scene_name = scene_name
            self.twin = sc.build_mujoco(scene_name, sc.DT if dt is None else dt)
            if self.twin is None:
                raise RuntimeError(f"no MuJoCo model for scene {scene_name!r}")
            self.meta = sc.build_scene(scene_name, 1, "cpu")  # only for the metric kind and tip offset
            self.datas = []
            for _ in range(worlds):
                d = mujoco.MjData(self.twin.model)
                d.qpos[:] = self.twin.qpos0
                mujoco.mj_forward(self.twin.model, d)
                self.datas.append(d)
        self.start_pos = self._watched("xpos", 3)

    def _watched(self, field: str, width: int) -> np.ndarray:
        w = self.twin.watched
        return np.stack([getattr(d, field)[w] for d in self.datas]) if w else np.zeros((len(self.datas), 0, width))

    def advance(self, steps: int) -> None:
        import mujoco  # noqa: PLC0415

        if steps > 0:
            for d in self.datas:
                mujoco.mj_step(self.twin.model, d, steps)

    def window(self, steps: int, check_start: bool = False) -> Measurement:
        import mujoco  # noqa: PLC0415

        m = self.twin.model
        notes: list[str] = []
        with _recorded_warnings(notes):
            start = settle.mujoco_start(self.scene_name, m, self.datas, self.twin.watched) if check_start else {}
            t0 = time.perf_counter()
            for d in self.datas:
                mujoco.mj_step(m, d, steps)
            seconds = time.perf_counter() - t0

            pos = self._watched("xpos", 3)
            # MuJoCo quaternions are (w, x, y, z); the shared outcome wants (x, y, z, w).
            wxyz = self._watched("xquat", 4)
            quat = np.concatenate([wxyz[..., 1:], wxyz[..., :1]], axis=-1)
            finite = all(np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all() for d in self.datas)
            # MuJoCo resets a diverged MjData silently (and raises a warning flag); count that as NaN too.
            finite = finite and not any(d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number for d in self.datas)
            sanity = sc.outcome(self.meta.metric, pos, quat, self.start_pos, finite, self.meta.tip_offset)
        self.notes += [n for n in notes if n not in self.notes]
        return Measurement(seconds, steps, len(self.datas), None, None, sanity, list(self.notes), None, start)


def run_mujoco(scene_name: str, worlds: int, steps: int, warmup: int, *, dt: float | None = None,
               settle_start: bool = False) -> Measurement:
    """Time MuJoCo C (:class:`MujocoRun`) on a fresh set of worlds; arguments as :func:`run_solver`'s."""
    run = MujocoRun(scene_name, worlds, dt)
    run.advance(warmup + (settle.settle_steps(scene_name, run.twin.model.opt.timestep) if settle_start else 0))
    return run.window(steps, check_start=scene_name in settle.SETTLE_S)


# ----------------------------------------------------------------------------------------------
# Articulation core against Newton's eval path
# ----------------------------------------------------------------------------------------------


class CorePair:
    """The same state evaluated by Steel's :class:`ArticulationCore` and by Newton's public eval path.

    Ours per iteration: FK + RNEA bias + CRBA mass matrix + Cholesky (``core.step_quantities``).
    Newton's per iteration: ``eval_fk`` + ``eval_mass_matrix`` into preallocated buffers (no bias
    forces, no factorization: Newton has no public call for those, so the reference does less work).
    """

    def __init__(self, scene_name: str, worlds: int, device: str):
        from steel.articulation import ArticulationCore  # noqa: PLC0415 - keep the runner importable without it

        self.scene = sc.build_scene(scene_name, worlds, device)
        model = self.model = self.scene.model
        self.device = device
        self.state = model.state()
        self.control = model.control()
        newton.eval_fk(model, self.state.joint_q, self.state.joint_qd, self.state)
        self.core = ArticulationCore(model)
        n = model.max_dofs_per_articulation
        self.H = wp.zeros((model.articulation_count, n, n), dtype=float, device=device)
        self.body_I_s = wp.zeros(model.body_count, dtype=wp.spatial_matrix, device=device)
        self.joint_S_s = wp.zeros(model.joint_dof_count, dtype=wp.spatial_vector, device=device)

    def ours(self) -> None:
        self.core.step_quantities(self.state, self.control)

    def reference(self) -> None:
        s = self.state
        newton.eval_fk(self.model, s.joint_q, s.joint_qd, s)
        newton.eval_mass_matrix(self.model, s, H=self.H, body_I_s=self.body_I_s, joint_S_s=self.joint_S_s)

    def time(self, which: str, steps: int, warmup: int, count_steps: int) -> Measurement:
        """Time ``which`` (``"ours"`` or ``"reference"``) for ``steps`` iterations on the same state."""
        fn = self.ours if which == "ours" else self.reference
        notes: list[str] = []
        with _captured_stdout(notes), _recorded_warnings(notes):
            for _ in range(warmup):
                fn()
            wp.synchronize_device(self.device)
            t0 = time.perf_counter()
            for _ in range(steps):
                fn()
            wp.synchronize_device(self.device)
            seconds = time.perf_counter() - t0
            with LaunchCounter() as c:
                for _ in range(count_steps):
                    fn()
            wp.synchronize_device(self.device)
        return Measurement(seconds, steps, self.scene.world_count, c.count / max(count_steps, 1), None, {}, notes)

    def agreement(self) -> dict:
        """Cross-check: our mass matrix against Newton's on the current state (both evaluated fresh)."""
        from steel.articulation import padded_blocks  # noqa: PLC0415

        self.reference()
        self.ours()
        h_ref = self.H.numpy().astype(np.float64)
        h_ours = padded_blocks(self.core.plan, self.core.data.mass_matrix).astype(np.float64)
        finite = np.isfinite(h_ours).all() and _finite(self.core.data.dof_bias, self.core.data.mass_factor)
        res: dict = {"nan": not bool(finite)}
        if not finite:
            res["text"] = "NaN"
        elif h_ours.shape != h_ref.shape:
            res["text"] = f"H shape {h_ours.shape} vs {h_ref.shape}"
        else:
            err = float(np.abs(h_ours - h_ref).max() / max(np.abs(h_ref).max(), 1e-30))
            res["H_rel_err"] = err
            res["text"] = f"H rel err {err:.1e}"
        return res
