"""The ``steel`` command line: ``steel demo`` runs the default scene and writes ``results/``."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="steel", description="Steel physics solvers for Newton.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the default scene and write its results")
    demo.add_argument("--worlds", type=int, default=4, help="number of worlds (default 4)")
    demo.add_argument("--seconds", type=float, default=1.0, help="simulated time [s] (default 1)")
    demo.add_argument("--device", default=None, help="warp device, e.g. cpu or cuda:0 (default: warp's default)")
    demo.add_argument("--out", default="results/demo", help="output folder (default results/demo)")
    args = parser.parse_args(argv)

    import warp as wp

    wp.config.log_level = wp.LOG_WARNING  # no per-module load lines
    if args.command == "demo":
        if args.worlds < 1:
            parser.error(f"--worlds must be at least 1, got {args.worlds}")
        if not args.seconds > 0.0:
            parser.error(f"--seconds must be positive, got {args.seconds}")
        from .examples.free_fall import run_free_fall

        summary = run_free_fall(args.worlds, args.seconds, out_dir=args.out, device=args.device)
        return 0 if summary["finite"] else 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
