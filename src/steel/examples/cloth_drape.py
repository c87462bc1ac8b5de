"""A cloth dropped over a sphere onto the ground with SolverVBD and self-contact.

``python -m steel.examples cloth_drape [--viewer null|usd|gl] [--size N] [--seconds T] [--out DIR]``

A 1.6 m square cloth of ``N x N`` quads (default 32) falls 0.5 m onto a 0.4 m sphere resting on the
ground, drapes over it and folds onto itself; vertex–triangle and edge–edge self-contact keep its
layers apart. Progress lines report the energy and the number of self-intersecting edge–triangle
pairs (an exact check independent of the solver, :mod:`steel.intersections`) every tenth of the run;
the results folder gets ``summary.json``, ``final_state.npz``, ``energy_contacts.png`` and, with
``--viewer usd`` (the default when usd-core is installed), ``motion.usd``. It is the scene of
``steel run cloth --solver vbd``.
"""

from __future__ import annotations

import argparse

from ..particle_runner import run_particle_scene


def run_cloth_drape(argv: list[str] | None = None, log=print) -> dict:
    """Run the example (see the module docstring); returns the summary."""
    p = argparse.ArgumentParser(prog="python -m steel.examples cloth_drape")
    p.add_argument("--viewer", choices=("null", "usd", "gl"), default=None,
                   help="default: usd when usd-core is installed, else null")
    p.add_argument("--size", type=int, default=32, help="quads per cloth side (default 32)")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--out", default="results/cloth_drape")
    p.add_argument("--device", default=None)
    args = p.parse_args(argv)
    if args.size < 2 or not args.seconds > 0.0:
        p.error(f"--size must be >= 2 and --seconds positive, got {args.size}, {args.seconds}")
    viewer = args.viewer
    if viewer is None:
        try:
            import pxr  # noqa: F401
            viewer = "usd"
        except ImportError:
            viewer = "null"
    return run_particle_scene("cloth", args.seconds, viewer, args.out, args.device, args.size, log)
