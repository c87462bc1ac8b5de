"""The measurements ``steel run`` prints and writes for a rigid run, chosen by the kind of scene.

What informs depends on the scene, so each kind gets its own (names and definitions in
:data:`steel.app.catalog.METRICS`, which ``steel run --help`` and the README show):

* ``stack`` (free bodies: the towers, the cable pile): ``stack_top_m``, the highest body origin;
  ``stack_drift_max_m``, the largest horizontal distance of any body from where it started over the
  run (a stack that stands keeps it near 0); the deepest overlap of any contact pair at each report.
* ``floating`` (robots with a free base: the humanoid, the ant, a robot file): per world the base
  (the root body) height ``base_height_m``, its tilt ``base_tilt_deg`` (angle between the base's up
  axis now and at the start) and ``fallen`` (tilt beyond ``FALLEN_TILT_DEG``); the base's horizontal
  travel ``base_travel_max_m`` is written but not printed, since a robot that falls over travels
  its own height without anything being wrong.
* ``fixed_base`` (robots welded or jointed to the world: the chain, the cartpole, ``--fixed-base``):
  the largest hinge and slider travel from the start pose (``hinge_travel_max_deg``,
  ``slider_travel_max_m``) and the largest hinge and slider speed; a base that cannot move has no drift.

Rejected alternative: one set of columns for every scene ("highest root 0.000 m, max drift 0.00 mm"
on every line of a welded arm, "max drift 991.69 mm" for a humanoid that simply fell over).
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from .catalog import FALLEN_TILT_DEG  # noqa: F401  (here so --help states it)

KINDS = ("stack", "floating", "fixed_base")


def root_bodies(model: newton.Model) -> np.ndarray:
    """The child of each articulation's first joint (a tower box, a robot's torso); every body without any."""
    if model.articulation_count == 0:
        return np.arange(model.body_count)
    start = model.articulation_start.numpy()[:-1]
    return model.joint_child.numpy()[start]


def scene_kind(model: newton.Model, shipped_kind: str | None = None) -> str:
    """``shipped_kind`` when given (a shipped scene states its own), else from the model: ``fixed_base`` when no
    root joint is FREE, ``stack`` when every articulation is one free body, ``floating`` otherwise."""
    if shipped_kind is not None:
        if shipped_kind not in KINDS:
            raise ValueError(f"scene kind must be one of {KINDS}, got {shipped_kind!r}")
        return shipped_kind
    if model.articulation_count == 0:
        return "stack"
    start = model.articulation_start.numpy()
    free = model.joint_type.numpy()[start[:-1]] == int(newton.JointType.FREE)
    if not free.any():
        return "fixed_base"
    if (np.diff(start) == 1).all():
        return "stack"
    return "floating"


def _up_axes(quat: np.ndarray) -> np.ndarray:
    """The body z axis in world of unit quaternions (N, 4) stored (x, y, z, w)."""
    x, y, z, w = quat[:, 0], quat[:, 1], quat[:, 2], quat[:, 3]
    return np.stack([2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)], axis=1)


class KindMetrics:
    """Tracks the measurements of one scene kind over a run (see the module docstring).

    ``observe`` takes a state at a report or frame time; ``progress`` is the log line's text, ``summary``
    the summary's entries, ``series`` the two time series of the plot."""

    def __init__(self, kind: str, model: newton.Model, state: newton.State, joints_from_bodies: bool = False):
        self.kind, self.model = scene_kind(model, kind), model
        q = state.body_q.numpy()
        self.roots = root_bodies(model)
        self.start_xy = q[:, :2].copy()
        self.start_up = _up_axes(q[self.roots, 3:7].astype(np.float64))
        jtype = model.joint_type.numpy()
        q_start, qd_start = model.joint_q_start.numpy(), model.joint_qd_start.numpy()
        hinge = jtype == int(newton.JointType.REVOLUTE)
        slider = jtype == int(newton.JointType.PRISMATIC)
        self.hinge_q, self.hinge_qd = q_start[:-1][hinge], qd_start[:-1][hinge]
        self.slider_q, self.slider_qd = q_start[:-1][slider], qd_start[:-1][slider]
        # A maximal-coordinate solver (SolverVBD) steps body poses and leaves joint_q as it was: the joint
        # coordinates then come from the poses (newton.eval_ik) into scratch arrays.
        self.scratch = (wp.clone(state.joint_q), wp.clone(state.joint_qd)) if joints_from_bodies else None
        self.q0 = self._joints(state)[0]
        self.times: list[float] = []
        self.values: list[dict] = []

    def _joints(self, state: newton.State) -> tuple[np.ndarray, np.ndarray]:
        """``(joint_q, joint_qd)`` of ``state``, from its body poses for a maximal-coordinate solver."""
        if self.scratch is None:
            return state.joint_q.numpy().astype(np.float64), state.joint_qd.numpy().astype(np.float64)
        newton.eval_ik(self.model, state, *self.scratch)
        return self.scratch[0].numpy().astype(np.float64), self.scratch[1].numpy().astype(np.float64)

    def observe(self, state: newton.State, time: float, overlap: float | None = None) -> dict:
        """Measure ``state`` at simulated ``time`` [s]; ``overlap`` [m] the deepest contact overlap (stacks)."""
        q = state.body_q.numpy().astype(np.float64)
        if self.kind == "stack":
            drift = np.linalg.norm(q[:, :2] - self.start_xy, axis=1)
            now = {"top_m": float(q[:, 2].max()) if len(q) else 0.0,
                   "drift_m": float(drift.max()) if len(drift) else 0.0, "overlap_m": overlap}
        elif self.kind == "floating":
            cos = np.clip((_up_axes(q[self.roots, 3:7]) * self.start_up).sum(axis=1), -1.0, 1.0)
            tilt = np.degrees(np.arccos(cos))
            travel = np.linalg.norm(q[self.roots, :2] - self.start_xy[self.roots], axis=1)
            now = {"height_m": q[self.roots, 2].tolist(), "tilt_deg": tilt.tolist(), "travel_m": float(travel.max())}
        else:
            jq, jqd = self._joints(state)
            jqd = np.abs(jqd)
            now = {"hinge_travel_deg": float(np.degrees(np.abs(jq[self.hinge_q] - self.q0[self.hinge_q])).max())
                   if len(self.hinge_q) else None,
                   "slider_travel_m": float(np.abs(jq[self.slider_q] - self.q0[self.slider_q]).max())
                   if len(self.slider_q) else None,
                   "hinge_speed_deg_s": float(np.degrees(jqd[self.hinge_qd]).max()) if len(self.hinge_qd) else None,
                   "slider_speed_m_s": float(jqd[self.slider_qd].max()) if len(self.slider_qd) else None}
        self.times.append(time)
        self.values.append(now)
        return now

    def progress(self) -> str:
        """The latest measurement as the log line's text."""
        now = self.values[-1]
        if self.kind == "stack":
            overlap = "" if now["overlap_m"] is None else f"  overlap {1000 * now['overlap_m']:.2f} mm"
            return f"top body {now['top_m']:.3f} m  stack drift {1000 * now['drift_m']:.2f} mm{overlap}"
        if self.kind == "floating":
            fallen = sum(t > FALLEN_TILT_DEG for t in now["tilt_deg"])
            worlds = len(now["tilt_deg"])
            state = (("fallen" if fallen else "upright") if worlds == 1 else f"{fallen} of {worlds} fallen")
            return (f"base height {min(now['height_m']):.3f} m  base tilt {max(now['tilt_deg']):.0f} deg "
                    f"({state})")
        parts = []
        if now["hinge_travel_deg"] is not None:
            parts.append(f"hinge travel {now['hinge_travel_deg']:.1f} deg  speed {now['hinge_speed_deg_s']:.0f} deg/s")
        if now["slider_travel_m"] is not None:
            parts.append(f"slider travel {1000 * now['slider_travel_m']:.1f} mm  speed "
                         f"{now['slider_speed_m_s']:.2f} m/s")
        return "  ".join(parts) or "no hinge or slider joints"

    def _max(self, key: str):
        seen = [v[key] for v in self.values if v.get(key) is not None]
        return float(max(seen)) if seen else None

    def summary(self) -> dict:
        """The summary's entries of this kind (see :data:`steel.app.catalog.METRICS`)."""
        if not self.values:
            return {"kind": self.kind}
        now = self.values[-1]
        if self.kind == "stack":
            return {"kind": self.kind, "stack_top_m": now["top_m"], "stack_drift_max_m": self._max("drift_m"),
                    "stack_drift_final_m": now["drift_m"]}
        if self.kind == "floating":
            return {"kind": self.kind, "base_height_m": now["height_m"], "base_tilt_deg": now["tilt_deg"],
                    "fallen": [t > FALLEN_TILT_DEG for t in now["tilt_deg"]],
                    "base_travel_max_m": self._max("travel_m")}
        return {"kind": self.kind, "hinge_travel_max_deg": self._max("hinge_travel_deg"),
                "slider_travel_max_m": self._max("slider_travel_m"),
                "hinge_speed_max_deg_s": self._max("hinge_speed_deg_s"),
                "slider_speed_max_m_s": self._max("slider_speed_m_s")}

    def series(self) -> tuple[tuple, tuple]:
        """Two ``(values, y label, title)`` series of the plot."""
        if self.kind == "stack":
            return (([v["top_m"] for v in self.values], "top body [m]", "height"),
                    ([1000 * v["drift_m"] for v in self.values], "stack drift [mm]", "drift"))
        if self.kind == "floating":
            return (([min(v["height_m"]) for v in self.values], "lowest base height [m]", "base height"),
                    ([max(v["tilt_deg"]) for v in self.values], "largest base tilt [deg]", "tilt"))
        hinge = [v["hinge_travel_deg"] or 0.0 for v in self.values]
        speed = [v["hinge_speed_deg_s"] or 0.0 for v in self.values]
        return ((hinge, "largest hinge travel [deg]", "joint travel"),
                (speed, "largest hinge speed [deg/s]", "joint speed"))
