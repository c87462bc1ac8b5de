"""One timed measurement each: a Newton-API solver, MuJoCo C, or the articulation core.

Every function builds what it needs from scratch (a fresh model, so one solver cannot leave state
behind for the next), runs ``warmup`` untimed steps (this is where Warp compiles or loads kernels),
synchronizes, then times ``steps`` steps with ``time.perf_counter`` and synchronizes again before
stopping the clock.  Launches are counted afterwards over a few extra steps, so the counting
wrapper never runs inside the timed window.

All functions return a :class:`Measurement`; they raise on failure and the runner records the error.
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
    """

    seconds: float
    steps: int
    worlds: int
    launches_step: float | None = None
    launches_collide: float | None = None
    sanity: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    collide_seconds: float | None = None

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


def run_solver(solver_cls, scene_name: str, worlds: int, device: str, steps: int, warmup: int, count_steps: int):
    """Time ``solver_cls(model)`` on a fresh scene with Newton's standard collide-then-step loop."""
    notes: list[str] = []
    with _captured_stdout(notes), _recorded_warnings(notes):
        scene = sc.build_scene(scene_name, worlds, device)
        model = scene.model
        solver = solver_cls(model)
        pipeline = newton.CollisionPipeline(model)
        contacts = pipeline.contacts()
        states = [model.state(), model.state()]
        control = model.control()
        newton.eval_fk(model, states[0].joint_q, states[0].joint_qd, states[0])
        start, _ = _watched_pose(scene, states[0].body_q.numpy())

        def collide():
            pipeline.collide(states[0], contacts)

        def step():
            states[0].clear_forces()
            solver.step(states[0], states[1], control, contacts, scene.dt)
            states.reverse()  # the output becomes the next input

        for _ in range(warmup):
            collide()
            step()
        wp.synchronize_device(device)
        # On a CPU device launches return when done, so each collide call is timed on its own (the
        # step-only figure); elsewhere a split would need a synchronize per call, which the timed loop avoids.
        split = wp.get_device(device).is_cpu
        collide_seconds = 0.0
        t0 = time.perf_counter()
        for _ in range(steps):
            if split:
                tc = time.perf_counter()
                collide()
                collide_seconds += time.perf_counter() - tc
            else:
                collide()
            step()
        wp.synchronize_device(device)
        seconds = time.perf_counter() - t0

        s = states[0]
        pos, quat = _watched_pose(scene, s.body_q.numpy())
        finite = _finite(s.body_q, s.body_qd, s.joint_q, s.joint_qd)
        sanity = sc.outcome(scene.metric, pos, quat, start, finite, scene.tip_offset)

        # Count collide and step separately so a solver's own launch count is visible on its own.
        n_collide = n_step = 0
        for _ in range(count_steps):
            with LaunchCounter() as c:
                collide()
            n_collide += c.count
            with LaunchCounter() as c:
                step()
            n_step += c.count
        wp.synchronize_device(device)
    return Measurement(
        seconds, steps, worlds, n_step / max(count_steps, 1), n_collide / max(count_steps, 1), sanity, notes,
        collide_seconds if split else None,
    )


# ----------------------------------------------------------------------------------------------
# MuJoCo C
# ----------------------------------------------------------------------------------------------


def run_mujoco(scene_name: str, worlds: int, steps: int, warmup: int) -> Measurement:
    """Time MuJoCo C on ``worlds`` separate ``MjData`` of the scene's MuJoCo twin (single thread).

    Each ``MjData`` is advanced with one ``mj_step(m, d, nstep)`` call, so MuJoCo runs its own loop in
    C with no per-step Python overhead (its best case); worlds are stepped one after the other.
    """
    import mujoco  # noqa: PLC0415 - optional dependency

    notes: list[str] = []
    with _recorded_warnings(notes):
        twin = sc.build_mujoco(scene_name)
        if twin is None:
            raise RuntimeError(f"no MuJoCo model for scene {scene_name!r}")
        scene_meta = sc.build_scene(scene_name, 1, "cpu")  # only for the metric kind and tip offset
        m = twin.model
        datas = []
        for _ in range(worlds):
            d = mujoco.MjData(m)
            d.qpos[:] = twin.qpos0
            mujoco.mj_forward(m, d)
            datas.append(d)
        start = np.stack([d.xpos[twin.watched] for d in datas]) if twin.watched else np.zeros((worlds, 0, 3))

        for d in datas:
            if warmup > 0:
                mujoco.mj_step(m, d, warmup)
        t0 = time.perf_counter()
        for d in datas:
            mujoco.mj_step(m, d, steps)
        seconds = time.perf_counter() - t0

        pos = np.stack([d.xpos[twin.watched] for d in datas]) if twin.watched else np.zeros((worlds, 0, 3))
        # MuJoCo quaternions are (w, x, y, z); the shared outcome wants (x, y, z, w).
        wxyz = np.stack([d.xquat[twin.watched] for d in datas]) if twin.watched else np.zeros((worlds, 0, 4))
        quat = np.concatenate([wxyz[..., 1:], wxyz[..., :1]], axis=-1)
        finite = all(np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all() for d in datas)
        # MuJoCo resets a diverged MjData silently (and raises a warning flag); count that as NaN too.
        finite = finite and not any(d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number for d in datas)
        sanity = sc.outcome(scene_meta.metric, pos, quat, start, finite, scene_meta.tip_offset)
    return Measurement(seconds, steps, worlds, None, None, sanity, notes)


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
