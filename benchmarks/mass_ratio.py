"""Heavy-on-light box stacks: how far the stack sinks and hops, ours against Newton's SolverSteel.

0.2 m boxes stacked on the ground, masses bottom first, mu 0.5, dt 1/240 s, 3 s, default options.
Sink and hop are the largest fall and rise of any box from its start [m]. Run on its own:
``python -m benchmarks.mass_ratio [--seconds S] [--no-reference]``; see README.md, "Mass ratios".
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import warp as wp

import newton

STACKS = {
    "1, 10": (1.0, 10.0),
    "1, 100": (1.0, 100.0),
    "0.1, 100": (0.1, 100.0),
    "1, 1000, 1, 1000, 1": (1.0, 1000.0, 1.0, 1000.0, 1.0),
    "(1, 100) x 10": (1.0, 100.0) * 10,
}


def box_stack(masses, half: float = 0.1, mu: float = 0.5, device: str = "cpu") -> newton.Model:
    """Boxes of ``masses`` [kg] and half-size ``half`` [m] stacked on a ground plane, the first at the bottom."""
    builder = newton.ModelBuilder()
    for k, mass in enumerate(masses):
        body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, half + 2.0 * half * k), wp.quat_identity()))
        cfg = newton.ModelBuilder.ShapeConfig(mu=mu, density=mass / (2.0 * half) ** 3)
        builder.add_shape_box(body, hx=half, hy=half, hz=half, cfg=cfg)
    builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(mu=mu))
    return builder.finalize(device=device)


def sink_and_hop(model: newton.Model, solver, dt: float, seconds: float) -> tuple[float, float, bool]:
    """Largest sink and hop of any box over ``seconds`` [m], and whether the poses stayed finite."""
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    z0 = model.body_q.numpy()[:, 2].copy()
    sink = hop = 0.0
    for _ in range(int(round(seconds / dt))):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, dt)
        s0, s1 = s1, s0
        z = s0.body_q.numpy()[:, 2]
        sink, hop = max(sink, float((z0 - z).max())), max(hop, float((z - z0).max()))
    return sink, hop, bool(np.isfinite(s0.body_q.numpy()).all())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--dt", type=float, default=1.0 / 240.0)
    parser.add_argument("--no-reference", action="store_true", help="skip newton.solvers.SolverSteel")
    args = parser.parse_args(argv)
    wp.config.quiet = True
    from steel.solvers import SolverSteel

    solvers = {"ours": SolverSteel}
    if not args.no_reference:
        solvers["reference"] = newton.solvers.SolverSteel
    print("| stack (kg, bottom first) | " + " | ".join(solvers) + " |")
    print("|---|" + "---|" * len(solvers))
    for label, masses in STACKS.items():
        cells = []
        for cls in solvers.values():
            model = box_stack(masses)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", newton.NewtonWarning)  # the mass-ratio warning
                solver = cls(model)
            sink, hop, finite = sink_and_hop(model, solver, args.dt, args.seconds)
            cells.append(f"sink {sink * 1e3:.2f} mm, hop {hop * 1e3:.2f} mm" + ("" if finite else ", NOT FINITE"))
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
