"""The ``steel`` command line.

* ``steel demo``: the package's main job on its default scene: the four box towers with
  SolverSteel for 10 s on the CPU, writing ``results/demo/`` (see :mod:`steel.app.runner`).
* ``steel run SCENE``: any shipped scene (tower, humanoid, ant, chain, cartpole) or an
  MJCF/URDF/USD path with SolverSteel or SolverFeatherstone; ``--option NAME=VALUE`` passes solver
  options (validated by the solver), ``--fixed-base``, ``--start-height`` and ``--keyframe`` set up
  a robot file (see :mod:`steel.app.robot_files`).
* ``steel run cloth --solver vbd``: a particle scene (cloth over a sphere with self-contact,
  cloth_hang, soft_cube) with SolverVBD (see :mod:`steel.app.particle_runner`); ``--size`` sets its
  resolution.
* ``steel run tower --solver vbd``: a rigid scene or robot file with SolverVBD's rigid bodies
  (Augmented VBD, contact history on; see :mod:`steel.app.runner`); a joint it does not support is a
  one-line error naming it.
* ``steel run --help`` ends with every solver's options, one line each (default, unit, range, meaning),
  written from the option tables (:func:`steel.solvers.option_table.option_help_lines`).
* ``steel --version``.

``steel --version`` and ``steel --help`` import neither Warp nor Newton (seconds); ``steel run --help``
imports the option tables only when that help is printed, and they load without Warp and Newton too
(milliseconds).

While ``demo`` or ``run`` lasts, each Warp module is named before it compiles, with an estimate
(:mod:`steel.app.compile_progress`): with an empty kernel cache a first run compiles for minutes.

Exit status: 0 the run completed; 1 it diverged (the guard stopped it, see :mod:`steel.app.guard`);
2 bad input (arguments, robot file, solver options), nothing written.
"""

from __future__ import annotations

import argparse
import ast
import sys

EXIT_OK, EXIT_DIVERGED, EXIT_BAD_INPUT = 0, 1, 2


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}") from None
    if not value > 0.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text}")
    return value


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def parse_option(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` with VALUE a Python literal (``12``, ``0.5``, ``True``, ``None``) or a bare word."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        value = ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError):
        value = raw.strip()  # enumerations: solve_mode=serial
    return name.strip(), value


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("steel")
    except metadata.PackageNotFoundError:
        from .. import __version__

        return __version__


class _Parser(argparse.ArgumentParser):
    """An argument parser whose help can end with text computed only when the help is printed (``help_tail``).

    ``steel run --help`` lists every solver's options this way. An epilog string (rejected) would read the
    tables whenever the parser is built, so every command, ``steel --version`` included, would import them."""

    def __init__(self, *args, help_tail=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.help_tail = help_tail

    def format_help(self) -> str:
        text = super().format_help()
        return f"{text}\n{self.help_tail()}\n" if self.help_tail is not None else text


def solver_options_help() -> str:
    """Every solver's options, one wrapped line each, as ``steel run --help`` ends (from the option tables)."""
    import shutil
    import textwrap

    from ..solvers.option_table import option_help_lines
    from .catalog import SOLVERS

    width = max(shutil.get_terminal_size().columns - 2, 40)  # as argparse sizes its own help
    blocks = []
    for solver in SOLVERS:
        lines = [textwrap.fill(line, width, initial_indent="  ", subsequent_indent="      ", break_long_words=False,
                               break_on_hyphens=False) for line in option_help_lines(solver)]
        blocks.append(f"--solver {solver} options (--option NAME=VALUE):\n" + "\n".join(lines))
    return "\n\n".join(blocks)


def build_parser() -> argparse.ArgumentParser:
    """The ``steel`` argument parser; every option's help states its default."""
    from .catalog import (DEFAULT_MARGIN, DEFAULT_MAX_SPEED, DT, PARTICLE_SCENES, SCENES, SOLVERS, VBD_SCENES, VIEWERS,
                          metrics_help)

    parser = argparse.ArgumentParser(
        prog="steel", description="Steel physics solvers for Newton.",
        epilog="exit status: 0 completed, 1 diverged (stopped by the divergence guard), 2 bad input")
    parser.add_argument("--version", action="version", version=f"steel {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    demo = sub.add_parser("demo", help="the four towers with SolverSteel; writes results/demo/")
    demo.add_argument("--seconds", type=_positive_float, default=10.0, help="simulated time [s] (default 10)")
    demo.add_argument("--out", default=None,
                      help="output folder (default results/demo, which each demo replaces; another folder that "
                      "already holds a run is refused without --force)")
    demo.add_argument("--force", action="store_true",
                      help="overwrite an --out folder that already holds a run (default: refuse)")
    demo.add_argument("--device", default=None, help="warp device: cpu or cuda:0 (default: warp's default)")
    run = sub.add_parser(
        "run", help="step a scene with one of the solvers", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Step a shipped scene or a robot file; every frame a divergence guard checks the state.\n"
        "Scene kinds: stack (free bodies: tower, cable_pile), floating (a free base: humanoid, ant, robot files),\n"
        "fixed_base (welded to the world: chain, cartpole, --fixed-base), particles (cloth, soft_cube, ...).",
        epilog=f"{metrics_help()}\n\nexit status: 0 completed, 1 diverged (stopped by the divergence guard), "
        "2 bad input",
        help_tail=solver_options_help)
    run.add_argument("scene", help=f"{', '.join(SCENES)}, or an .xml/.urdf/.usd path; "
                     f"with --solver vbd: {', '.join(VBD_SCENES + PARTICLE_SCENES)}")
    run.add_argument("--solver", choices=SOLVERS, default=None,
                     help="default: steel, or vbd for cable_pile and the particle scenes; vbd also steps rigid scenes "
                     "and robot files")
    run.add_argument("--worlds", type=_positive_int, default=1, help="replicated worlds (default 1)")
    run.add_argument("--seconds", type=_positive_float, default=None,
                     help="simulated time [s] (default 5; 3 for cable_pile and the particle scenes)")
    run.add_argument("--dt", type=_positive_float, default=None,
                     help=f"time step [s] (default: the scene's, {DT:.6g} s = 1/{round(1 / DT)} for rigid scenes "
                     "and robot files, 1/600 s for particle scenes)")
    run.add_argument("--option", action="append", type=parse_option, default=[], metavar="NAME=VALUE",
                     help="solver option, repeatable, checked by the solver (each solver's are listed below; e.g. "
                     "iterations=20, enable_joint_limits=False); default: the solver's reference defaults, except "
                     "SolverSteel's enable_joint_limits=True")
    run.add_argument("--fixed-base", action="store_true",
                     help="robot files: weld the root to the world (default: as the file says; URDF, which cannot "
                     "say, floats)")
    run.add_argument("--start-height", type=_finite_float, default=0.0, metavar="DZ",
                     help="robot files: lift the robot DZ [m] above the pose the file gives it (default 0)")
    run.add_argument("--keep-pose", action="store_true",
                     help="robot files: keep the file's pose even when it reaches below the ground (default: a "
                     "floating robot that does is lifted onto the ground by the measured overlap)")
    run.add_argument("--keyframe", default="auto", metavar="NAME|INDEX",
                     help="MJCF files: start at this <keyframe><key> or 'init_qpos'; 'none' keeps the file's "
                     "body poses (default auto: init_qpos when the file declares one)")
    run.add_argument("--max-speed", type=_positive_float, default=DEFAULT_MAX_SPEED,
                     help=f"divergence guard: largest body or particle speed [m/s] (default {DEFAULT_MAX_SPEED:g})")
    run.add_argument("--bounds-margin", type=_positive_float, default=DEFAULT_MARGIN,
                     help="divergence guard: how far [m] beyond the start's bounding box anything may go "
                     f"(default {DEFAULT_MARGIN:g})")
    run.add_argument("--viewer", choices=VIEWERS, default="null",
                     help="null (default), usd (writes motion.usd; needs steel[usd]), gl (a window; steel[viewer])")
    run.add_argument("--out", default=None,
                     help="output folder (default: a new folder per run, results/run/INPUT/SOLVER/START-TIME, "
                     "INPUT the scene or file name plus a hash of its path, listed in that SOLVER folder's runs.csv)")
    run.add_argument("--force", action="store_true",
                     help="overwrite an --out folder that already holds a run (default: refuse)")
    run.add_argument("--device", default=None, help="warp device: cpu or cuda:0 (default: warp's default)")
    run.add_argument("--size", type=_positive_int, default=None,
                     help="particle scenes: quads per cloth side (default 32) or cells per cube side (default 4)")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version: 0; bad arguments: 2
        return int(exc.code or 0)
    command = ["steel", *(sys.argv[1:] if argv is None else argv)]

    import warp as wp

    wp.config.log_level = wp.LOG_WARNING  # no per-module lines after loads: compile_progress announces each before
    from .compile_progress import compile_progress
    from .robot_files import RobotFileError

    try:
        with compile_progress(print):  # each Warp module announced before it compiles (a cold cache: minutes)
            summary = _dispatch(args, command)
    except (ValueError, RuntimeError, RobotFileError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"steel: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK if summary["outcome"] == "completed" else EXIT_DIVERGED


def _dispatch(args, command: list[str]) -> dict:
    """Run ``steel demo`` or ``steel run`` as ``args`` say; returns the run's summary."""
    from .catalog import PARTICLE_SCENES, VBD_SCENES
    from .runner import run_scene

    if args.device is not None:
        _check_device(args.device)
    if args.command == "demo":
        viewer = "usd" if _has_usd() else "null"
        # The demo's own folder holds its latest result: each `make demo` replaces it.
        summary = run_scene("tower", "steel", 1, args.seconds, viewer=viewer, out_dir=args.out or "results/demo",
                            device=args.device, command=command, force=args.force or args.out is None)
        if viewer == "null":
            print("  (usd-core not installed: no USD file of the motion)")
    elif args.scene in PARTICLE_SCENES and args.solver in (None, "vbd"):
        from .particle_runner import run_particle_scene

        if args.worlds != 1:
            raise ValueError("--worlds: particle scenes run one world")
        if args.fixed_base or args.start_height != 0.0 or args.keyframe != "auto" or args.keep_pose:
            raise ValueError("--fixed-base, --start-height, --keyframe and --keep-pose apply to robot files")
        summary = run_particle_scene(args.scene, args.seconds or 3.0, args.viewer, args.out, args.device,
                                     args.size, options=dict(args.option), dt=args.dt,
                                     margin=args.bounds_margin, max_speed=args.max_speed, command=command,
                                     force=args.force)
    else:
        if args.size is not None:
            raise ValueError(f"--size applies to particle scenes ({', '.join(PARTICLE_SCENES)})")
        default_solver = "vbd" if args.scene in VBD_SCENES else "steel"
        summary = run_scene(args.scene, args.solver or default_solver, args.worlds,
                            args.seconds or (3.0 if args.scene in VBD_SCENES else 5.0), args.dt,
                            args.viewer, args.out, args.device, options=dict(args.option),
                            fixed_base=args.fixed_base, start_height=args.start_height, keyframe=args.keyframe,
                            margin=args.bounds_margin, max_speed=args.max_speed, command=command,
                            force=args.force, keep_pose=args.keep_pose)
    return summary


def _check_device(name: str) -> None:
    """A ``--device`` Warp cannot open is a one-line error listing the devices it can (and why CUDA is absent)."""
    import warp as wp

    try:
        wp.get_device(name)
    except (ValueError, RuntimeError) as exc:
        devices = ", ".join(str(d) for d in wp.get_devices())
        why = "" if wp.is_cuda_available() else "; no CUDA device: no NVIDIA driver was found"
        raise ValueError(f"--device {name!r} is not available here (devices: {devices}{why})") from exc


def _has_usd() -> bool:
    try:
        import pxr  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
