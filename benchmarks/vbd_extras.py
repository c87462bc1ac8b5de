"""SolverVBD benchmark of Newton 1.8.0's extras: particle–body attachments and the compliant ALM joint path.

Run by ``python -m benchmarks.vbd --extras`` (:mod:`benchmarks.vbd`). Both solvers run Newton 1.8.0's default
formulation (``rigid_compliant_alm=True``; ours defaults to the seed's AVBD, so it gets the option), on the same
freshly built model, interleaved per repeat, best time kept; ratio = ours / Newton's steps/s.

* ``cloth_pinned`` n: an ``n x n`` cloth (side 1.6 m, 10 kg/m², the shipped hanging cloth's material) whose
  pinned edge is instead held by ``n + 1`` soft attachments (1e4 N/m) to a 2 kg bar; the bar slides on a
  PRISMATIC joint along x held by a drive (200 N/m, target 0) and starts at 0.5 m/s, so the cloth is dragged
  back and forth: attachments in the coupled particle–body sweep, a compliant drive row. No contacts.
  Outcome: the largest particle–anchor gap [mm] (the attachments' stretch under the cloth's weight and
  motion) and the bar's x [mm].
* ``drive_chain`` worlds: a 20-link REVOLUTE chain (0.1 m, 1 kg links, axis y) per world, every joint driven
  to 0 (ke 1e3 N·m/rad, kd 5 N·m·s/rad), released horizontal under gravity: 20 drive rows per world on
  structural ALM rows. No contacts. Outcome: the tip's sag below the pivot [mm], mean over worlds.

dt 1/600 s, 10 iterations. Steps are few (the cases run in about a minute on 2 CPU cores).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import warp as wp

import newton

from .measure import LaunchCounter
from .vbd import best_of, with_ratios

EXTRA_CASES = (("cloth_pinned", 32), ("drive_chain", 1), ("drive_chain", 16))
EXTRA_SOLVERS = {"newton.SolverVBD": {}, "steel.SolverVBD compliant": {"rigid_compliant_alm": True}}
EXTRA_DT = 1.0 / 600.0  # [s]
EXTRA_ITERATIONS = 10
CLOTH_SIDE = 1.6  # [m]
BAR = dict(mass=2.0, half=(0.02, 0.8, 0.02), ke=200.0, speed=0.5)  # [kg], [m], [N/m], [m/s]
CHAIN = dict(links=20, length=0.1, mass=1.0, ke=1.0e3, kd=5.0)  # [-], [m], [kg], [N·m/rad], [N·m·s/rad]


@dataclass
class ExtraEntry:
    """One row: one solver on one extras case (best of the repeats)."""

    scene: str
    size: int
    solver: str
    particles: int = 0
    bodies: int = 0
    steps: int = 0
    steps_per_s: float | None = None
    ratio: float | None = None
    launches_per_step: float | None = None
    outcome: dict = field(default_factory=dict)
    error: str | None = None


def build_cloth_pinned(n: int, device) -> tuple[newton.Model, np.ndarray]:
    """The ``cloth_pinned`` model and, per attachment, its particle (see the module)."""
    b = newton.ModelBuilder()
    cell = CLOTH_SIDE / n
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.0, 2.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=n, dim_y=n,
                     cell_x=cell, cell_y=cell, mass=10.0 * cell * cell, tri_ke=1.0e3, tri_ka=1.0e3, tri_kd=1.0e-1,
                     edge_ke=1.0e1, edge_kd=0.0, particle_radius=0.01)
    hx, hy, hz = BAR["half"]
    centre = np.array([0.0, 0.5 * CLOTH_SIDE, 2.0])
    inertia = BAR["mass"] / 3.0 * np.diag([hy * hy + hz * hz, hx * hx + hz * hz, hx * hx + hy * hy])  # [kg·m²]
    bar = b.add_link(mass=BAR["mass"], inertia=wp.mat33(inertia), xform=wp.transform(tuple(centre), wp.quat_identity()))
    joint = b.add_joint_prismatic(-1, bar, parent_xform=wp.transform(tuple(centre), wp.quat_identity()), axis=(1, 0, 0),
                                  target_ke=BAR["ke"], target_kd=0.0)
    b.add_articulation([joint])
    x = np.array(b.particle_q)
    edge = np.flatnonzero(np.abs(x[:, 0]) < 1e-6)  # the cloth's x = 0 edge, along the bar
    for p in edge:
        b.add_attachment_particle_body(int(p), bar, body_point=tuple(x[p] - centre), stiffness=1.0e4, damping=0.0)
    b.color(include_bending=True)
    model = b.finalize(device=device)
    qd = model.body_qd.numpy()
    qd[bar, 0] = BAR["speed"]
    model.body_qd.assign(qd)
    return model, edge


def build_drive_chain(worlds: int, device) -> newton.Model:
    """``worlds`` copies of the driven chain (see the module)."""
    one = newton.ModelBuilder()
    top, prev, joints, half = np.array([0.0, 0.0, 3.0]), -1, [], 0.5 * CHAIN["length"]
    inertia = wp.mat33(np.eye(3) * CHAIN["mass"] * CHAIN["length"] ** 2 / 6.0)
    for i in range(CHAIN["links"]):
        body = one.add_link(mass=CHAIN["mass"], inertia=inertia,
                            xform=wp.transform(tuple(top + [(i + 0.5) * CHAIN["length"], 0.0, 0.0]), wp.quat_identity()))
        parent = wp.transform(tuple(top) if prev < 0 else (half, 0.0, 0.0), wp.quat_identity())
        joints.append(one.add_joint_revolute(prev, body, parent_xform=parent,
                                             child_xform=wp.transform((-half, 0.0, 0.0), wp.quat_identity()),
                                             axis=(0, 1, 0), target_ke=CHAIN["ke"], target_kd=CHAIN["kd"]))
        prev = body
    one.add_articulation(joints)
    b = newton.ModelBuilder()
    b.replicate(one, worlds)
    b.color()
    return b.finalize(device=device)


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate ``v`` (..., 3) by the unit quaternions ``q`` (..., 4: x, y, z, w)."""
    u, w = q[..., :3], q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def _outcome(scene: str, model, state, edge) -> dict:
    q = state.body_q.numpy()
    x = state.particle_q.numpy() if model.particle_count else np.zeros((0, 3))
    if not (np.isfinite(q).all() and np.isfinite(x).all()):
        return {"finite": False}
    if scene == "cloth_pinned":
        anchor = q[0, :3] + _rotate(q[0, 3:], model.attachment_particle_body_body_point.numpy())
        gap = np.linalg.norm(x[edge] - anchor, axis=1)
        return {"finite": True, "gap_mm": 1000.0 * float(gap.max()), "bar_x_mm": 1000.0 * float(q[0, 0])}
    last = q.reshape(-1, CHAIN["links"], 7)[:, -1]
    tips = last[:, :3] + _rotate(last[:, 3:], np.array([0.5 * CHAIN["length"], 0.0, 0.0]))
    return {"finite": True, "tip_sag_mm": 1000.0 * float(3.0 - tips[:, 2].mean())}


def measure_extra(label: str, scene: str, size: int, device: str, steps: int, warmup: int) -> ExtraEntry:
    """Time ``steps`` steps (after ``warmup``) of one solver on a fresh model of the case."""
    from steel.solvers import SolverVBD  # noqa: PLC0415

    edge = None
    if scene == "cloth_pinned":
        model, edge = build_cloth_pinned(size, device)
    else:
        model = build_drive_chain(size, device)
    cls = newton.solvers.SolverVBD if label.startswith("newton") else SolverVBD
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = cls(model, iterations=EXTRA_ITERATIONS, **EXTRA_SOLVERS[label])
    states = [model.state(), model.state()]
    for _ in range(warmup):
        solver.step(states[0], states[1], None, None, EXTRA_DT)
        states.reverse()
    wp.synchronize_device(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        solver.step(states[0], states[1], None, None, EXTRA_DT)
        states.reverse()
    wp.synchronize_device(device)
    seconds = time.perf_counter() - t0
    outcome = _outcome(scene, model, states[0], edge)
    with LaunchCounter() as c:
        solver.step(states[0], states[1], None, None, EXTRA_DT)
    return ExtraEntry(scene, size, label, int(model.particle_count), int(model.body_count), steps, steps / seconds,
                      None, c.count, outcome)


def run_extras(device: str, steps: int, warmup: int, repeats: int, cases=EXTRA_CASES,
               t_start: float | None = None) -> list[ExtraEntry]:
    """Every extras case, both solvers interleaved per repeat; prints a progress line per row."""
    t_start = time.perf_counter() if t_start is None else t_start
    entries: list[ExtraEntry] = []
    for scene, size in cases:
        best, errors = best_of(EXTRA_SOLVERS, repeats,
                               lambda label: measure_extra(label, scene, size, device, steps, warmup), "steps_per_s")
        for e in with_ratios(EXTRA_SOLVERS, best, errors, lambda label, err: ExtraEntry(scene, size, label, error=err)):
            entries.append(e)
            print(_line(e, time.perf_counter() - t_start), flush=True)
    return entries


# The outcome's wording per case kind (the pinned cloth reports a gap, the chain a sag).
_OUTCOME_FORMATS = {True: "largest attachment gap {gap_mm:.2f} mm, bar x {bar_x_mm:.1f} mm",
                    False: "tip sag {tip_sag_mm:.2f} mm"}


def _outcome_text(o: dict) -> str:
    if not o or not o.get("finite"):
        return "NaN" if o else ""
    return _OUTCOME_FORMATS["gap_mm" in o].format(**o)


def _line(e: ExtraEntry, elapsed: float) -> str:
    ratio = f" ratio {e.ratio:.2f}" if e.ratio is not None else ""
    body = (f"ERROR {e.error}" if e.error else
            f"{e.steps_per_s:9.1f} steps/s{ratio}  launches/step {e.launches_per_step:g}  {_outcome_text(e.outcome)}")
    return f"[{elapsed:7.1f}s] {e.scene:>12} {e.size:>3} {e.solver:<26} {body}"


_TABLE_HEAD = ("| scene | size | particles | bodies | solver | steps/s | ratio | launches/step | outcome |",
               "|---|---:|---:|---:|---|---:|---:|---:|---|")


def extras_markdown_lines(entries: list[ExtraEntry], steps: int, warmup: int) -> list[str]:
    """The extras table."""
    intro = (f"{steps} timed steps of 1/600 s after {warmup} warm-up steps, best of the repeats, 10 iterations, "
             "both solvers with `rigid_compliant_alm=True` (Newton's default). Ratio: ours / Newton's steps/s "
             "(whole models: `drive_chain` 16 is 16 worlds per step).")
    lines = ["## SolverVBD (attachments, compliant drives)", "", intro, "", *_TABLE_HEAD]
    for e in entries:  # a failed solver's row keeps its error in the outcome column
        numbers = (["—"] * 5 if e.error else
                   [str(e.particles), str(e.bodies), f"{e.steps_per_s:,.1f}",
                    "—" if e.ratio is None else f"{e.ratio:.2f}", f"{e.launches_per_step:g}"])
        cells = [e.scene, str(e.size), *numbers[:2], e.solver, *numbers[2:],
                 f"error: {e.error.replace('|', '/')}" if e.error else _outcome_text(e.outcome)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


__all__ = ["EXTRA_CASES", "ExtraEntry", "build_cloth_pinned", "build_drive_chain", "extras_markdown_lines",
           "measure_extra", "run_extras"]
