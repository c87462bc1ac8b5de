"""The divergence guard every run and example applies: stop as soon as a simulation has blown up.

A solver that explodes rarely produces NaN at once: bodies first fly off at absurd speeds, and a
run that only checks the final state can end with bodies 77 m away and report success. The guard
checks three stated conditions, in this order, whenever it is called (once per frame):

1. every coordinate and velocity is finite (``joint_q``, ``joint_qd``, ``body_q``, ``body_qd``, or
   ``particle_q``, ``particle_qd``);
2. every body origin or particle stays inside an axis-aligned box: the bounding box of the start
   positions grown by ``margin`` [m] on every side (default 20 m, further than anything in the
   shipped scenes moves);
3. no body COM or particle moves faster than ``max_speed`` [m/s] (default 50 m/s; a drop from
   20 m reaches 20 m/s, the fastest projectile in the examples is launched at 20 m/s).

A trip raises :class:`Diverged`, which carries what happened, where and when; callers turn it into
a non-zero exit and record it in their summary (:meth:`Diverged.record`). Checking copies the
arrays to the host, so it runs once per frame rather than once per step: a blow-up is caught within
one frame of 1/60 s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .catalog import DEFAULT_MARGIN, DEFAULT_MAX_SPEED  # noqa: F401  (defaults shown by --help)


class Diverged(RuntimeError):
    """The simulation left the guard's limits. Attributes name the check, the entity and the time.

    Attributes:
        reason: ``"not finite"``, ``"left the bounding box"`` or ``"too fast"``.
        time: simulated time of the failed check [s].
        step: solver steps taken when it failed.
        detail: what and where (array name, index, value), JSON-ready.
    """

    def __init__(self, reason: str, time: float, step: int, detail: dict):
        self.reason, self.time, self.step, self.detail = reason, float(time), int(step), detail
        where = ", ".join(f"{k} {v}" for k, v in detail.items())
        super().__init__(f"diverged at t = {self.time:.4f} s (step {self.step}): {reason} ({where})")

    def record(self) -> dict:
        """The summary entry: reason, time [s], step and detail."""
        return {"reason": self.reason, "time_s": self.time, "step": self.step, **self.detail}


@dataclass
class DivergenceGuard:
    """Limits a run must stay within; see the module docstring.

    Attributes:
        box_lo: lower corner of the allowed box [m], shape (3,).
        box_hi: upper corner of the allowed box [m], shape (3,).
        max_speed: largest allowed body COM or particle speed [m/s].
    """

    box_lo: np.ndarray
    box_hi: np.ndarray
    max_speed: float = DEFAULT_MAX_SPEED

    @classmethod
    def around(cls, positions: np.ndarray, margin: float = DEFAULT_MARGIN, max_speed: float = DEFAULT_MAX_SPEED):
        """A guard whose box is the bounding box of ``positions`` (N, >=3) [m] grown by ``margin`` [m]."""
        if not (margin > 0.0 and np.isfinite(margin)) or not (max_speed > 0.0 and np.isfinite(max_speed)):
            raise ValueError(f"guard margin and max_speed must be positive and finite, got {margin!r}, {max_speed!r}")
        p = np.asarray(positions, dtype=np.float64).reshape(-1, positions.shape[-1])[:, :3]
        if len(p) == 0 or not np.isfinite(p).all():
            lo = hi = np.zeros(3)  # nothing to watch, or the start itself is broken (check() says so)
        else:
            lo, hi = p.min(axis=0), p.max(axis=0)
        return cls(lo - margin, hi + margin, float(max_speed))

    def describe(self) -> dict:
        """The limits, JSON-ready, for the run summary."""
        return {"box_lo_m": self.box_lo.tolist(), "box_hi_m": self.box_hi.tolist(), "max_speed_m_per_s": self.max_speed}

    def check_state(self, state, time: float, step: int) -> None:
        """Check a Newton ``State`` (bodies and joints, or particles); raise :class:`Diverged` on a trip."""
        arrays = {}
        for name in ("joint_q", "joint_qd", "body_q", "body_qd", "particle_q", "particle_qd"):
            a = getattr(state, name, None)
            if a is not None and a.shape[0] > 0:
                arrays[name] = a.numpy()
        for name, a in arrays.items():
            bad = ~np.isfinite(a.reshape(a.shape[0], -1)).all(axis=1)
            if bad.any():
                raise Diverged("not finite", time, step, {"array": name, "index": int(np.flatnonzero(bad)[0])})
        for pos, vel, kind in (("body_q", "body_qd", "body"), ("particle_q", "particle_qd", "particle")):
            if pos in arrays:
                self.check_motion(arrays[pos][:, :3], arrays.get(vel), kind, time, step)

    def check_motion(self, positions, velocities, kind: str, time: float, step: int) -> None:
        """Box and speed checks on positions (N, 3) [m] and velocities (N, >=3), linear part first [m/s]."""
        outside = ((positions < self.box_lo) | (positions > self.box_hi)).any(axis=1)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise Diverged("left the bounding box", time, step,
                           {kind: i, "position_m": [round(float(x), 3) for x in positions[i]]})
        if velocities is not None:
            speed = np.linalg.norm(velocities[:, :3], axis=1)
            if (speed > self.max_speed).any():
                i = int(np.argmax(speed))
                raise Diverged("too fast", time, step, {kind: i, "speed_m_per_s": round(float(speed[i]), 3)})
