"""The ``steel`` command line.

* ``steel demo``: the package's main job on its default scene: the four box towers with
  SolverSteel for 10 s on the CPU, writing ``results/demo/`` (see :mod:`steel.runner`).
* ``steel run SCENE --solver steel|featherstone --worlds N --seconds S --viewer null|usd|gl``:
  any shipped scene (tower, humanoid, ant, chain, cartpole) or an MJCF/URDF/USD path.
* ``steel run cloth --solver vbd``: a particle scene (cloth over a sphere with self-contact,
  cloth_hang, soft_cube) with SolverVBD (see :mod:`steel.particle_runner`); ``--size`` sets its
  resolution.
"""

from __future__ import annotations

import argparse
import sys


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text}")
    return value


def main(argv=None) -> int:
    from .particle_scenes import PARTICLE_SCENES
    from .runner import SOLVERS, VIEWERS

    parser = argparse.ArgumentParser(prog="steel", description="Steel physics solvers for Newton.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="the four towers with SolverSteel; writes results/demo/")
    demo.add_argument("--seconds", type=_positive_float, default=10.0, help="simulated time [s] (default 10)")
    demo.add_argument("--out", default="results/demo", help="output folder (default results/demo)")
    demo.add_argument("--device", default=None, help="warp device: cpu or cuda:0 (default: warp's default)")
    run = sub.add_parser("run", help="step a scene with one of the solvers")
    run.add_argument("scene", help="tower, humanoid, ant, chain, cartpole, or an .xml/.urdf/.usd path; "
                     f"with --solver vbd: {', '.join(PARTICLE_SCENES)}")
    run.add_argument("--solver", choices=(*SOLVERS, "vbd"), default=None,
                     help="steel (default), featherstone, or vbd (default for particle scenes)")
    run.add_argument("--worlds", type=_positive_int, default=1)
    run.add_argument("--seconds", type=_positive_float, default=None, help="simulated time [s] (default 5; 3 for vbd)")
    run.add_argument("--dt", type=_positive_float, default=1.0 / 240.0, help="time step [s]")
    run.add_argument("--viewer", choices=VIEWERS, default="null")
    run.add_argument("--out", default=None, help="output folder (default results/run/SCENE)")
    run.add_argument("--device", default=None)
    run.add_argument("--size", type=_positive_int, default=None,
                     help="particle scenes: quads per cloth side (default 32) or cells per cube side (default 4)")
    args = parser.parse_args(argv)

    import warp as wp

    wp.config.log_level = wp.LOG_WARNING  # no per-module load lines
    from .runner import run_scene

    try:
        if args.command == "demo":
            viewer = "usd" if _has_usd() else "null"
            summary = run_scene("tower", "steel", 1, args.seconds, viewer=viewer, out_dir=args.out, device=args.device)
            if viewer == "null":
                print("  (usd-core not installed: no USD file of the motion)")
        elif args.solver == "vbd" or (args.solver is None and args.scene in PARTICLE_SCENES):
            from .particle_runner import run_particle_scene

            if args.worlds != 1:
                raise ValueError("--worlds: particle scenes run one world")
            summary = run_particle_scene(args.scene, args.seconds or 3.0, args.viewer, args.out, args.device, args.size)
        else:
            summary = run_scene(args.scene, args.solver or "steel", args.worlds, args.seconds or 5.0, args.dt,
                                args.viewer, args.out, args.device)
    except (ValueError, RuntimeError) as exc:
        print(f"steel: error: {exc}", file=sys.stderr)
        return 2
    return 0 if summary["finite"] else 1


def _has_usd() -> bool:
    try:
        import pxr  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
