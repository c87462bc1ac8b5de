"""What every example shares: Newton's example flags, the viewer, the run loop, the guard, the summary.

Each example is a class in Newton's example shape (``Example(viewer, args)`` with ``step()`` for
one frame, ``render()``, ``test_final()``, and ``model``/``state_0``/``control``/``contacts``
attributes Newton's test mode checks for NaN), run by Newton's own ``newton.examples.run`` loop.
The flags are Newton's (``newton.examples.create_parser``: ``--viewer``, ``--num-frames``,
``--test``, ``--device``, ``--quiet``, ``--benchmark``, ``--output-path``, ...) with two changes:

* ``--viewer`` defaults to ``null`` rather than ``gl`` (``gl`` needs ``steel[viewer]`` and a
  display; a run on a headless machine should not fail by default);
* ``--out DIR`` (added): where ``summary.json`` goes, default ``results/examples/NAME``; with
  ``--test`` nothing is written unless ``--out`` is given.

Every example's ``step()`` ends with a :class:`steel.app.guard.DivergenceGuard` check, so a blow-up
stops the run with exit status 1 and a summary saying what happened and when. Exit status: 0
completed (and, with ``--test``, its checks passed), 1 diverged or a ``--test`` check failed,
2 bad arguments.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import warp as wp

import newton
import newton.examples
import newton.viewer

from ..app.catalog import VIEWERS
from ..app.guard import DEFAULT_MARGIN, DEFAULT_MAX_SPEED, Diverged, DivergenceGuard
from ..app.run_record import provenance, write_summary


def create_parser(name: str, doc: str, num_frames: int) -> argparse.ArgumentParser:
    """Newton's example parser for example ``name``: its docstring's first line as description."""
    parser = newton.examples.create_parser()
    parser.prog = f"python -m steel.examples {name}"
    for action in parser._actions:
        if action.dest == "viewer":
            # Newton's parser also offers rtx, rerun and viser, which these examples cannot open: offer what runs.
            action.choices = list(VIEWERS)
            action.help = f"viewer to use: {', '.join(VIEWERS)} (default null)"
    parser.description = doc.strip().splitlines()[0]
    parser.set_defaults(viewer="null", num_frames=num_frames, output_path=f"results/examples/{name}/{name}.usd")
    parser.add_argument("--out", default=None,
                        help=f"folder of summary.json (default results/examples/{name}; none with --test)")
    parser.add_argument("--max-speed", type=float, default=DEFAULT_MAX_SPEED,
                        help="divergence guard: largest body or particle speed [m/s]")
    parser.add_argument("--bounds-margin", type=float, default=DEFAULT_MARGIN,
                        help="divergence guard: how far [m] beyond the start's bounding box anything may go")
    return parser


def guard_for(positions, args) -> DivergenceGuard:
    """The divergence guard around the start ``positions`` [m] with the limits of ``args``."""
    return DivergenceGuard.around(positions, args.bounds_margin, args.max_speed)


def paint_asleep(model, own_colors: np.ndarray, awake: np.ndarray, color) -> None:
    """Write ``model.shape_color``: shapes of bodies not ``awake`` in ``color``, the others (and shapes on
    no body) in ``own_colors``. Newton's viewers read ``shape_color`` every frame."""
    colors = own_colors.copy()
    shape_body = model.shape_body.numpy()
    shapes = np.nonzero(shape_body >= 0)[0]
    colors[shapes[~awake[shape_body[shapes]]]] = color
    model.shape_color.assign(colors)


def init(parser: argparse.ArgumentParser, argv: list[str] | None, minimums: dict[str, int] | None = None):
    """Parse ``argv`` and open the viewer, as ``newton.examples.init`` does but from an explicit argv.

    ``minimums`` maps an example's own integer options (``dest`` names) to their smallest value.
    Returns ``(viewer, args)``; raises ``SystemExit(2)`` with a one-line message for bad arguments
    or a viewer that cannot open, before anything is written.
    """
    argv = sys.argv[2:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    args.command = parser.prog.split() + argv
    args.start_time = time.perf_counter()  # the summary's duration includes building the example
    for flag, value in (("--max-speed", args.max_speed), ("--bounds-margin", args.bounds_margin)):
        if not 0.0 < value < float("inf"):
            parser.error(f"{flag} must be positive and finite, got {value}")
    limits = {"num_frames": 1, "world_count": 1, **(minimums or {})}
    for dest, low in limits.items():
        value = getattr(args, dest, low)
        if value < low:
            parser.error(f"--{dest.replace('_', '-')} must be at least {low}, got {value}")
    if args.quiet:
        wp.config.log_level = max(wp.config.log_level, wp.LOG_WARNING)
    if args.device:
        wp.set_device(args.device)
    if args.benchmark is not False:
        args.viewer = "null"
    if args.viewer == "null":
        viewer = newton.viewer.ViewerNull(num_frames=args.num_frames, benchmark=args.benchmark is not False,
                                          benchmark_timeout=args.benchmark or None)
    elif args.viewer == "usd":
        if importlib.util.find_spec("pxr") is None:
            parser.error("--viewer usd needs usd-core: pip install 'steel[usd]'")
        Path(args.output_path).parent.mkdir(parents=True, exist_ok=True)
        viewer = newton.viewer.ViewerUSD(output_path=args.output_path, num_frames=args.num_frames)
    elif args.viewer == "gl":
        try:
            viewer = newton.viewer.ViewerGL(headless=args.headless, paused=args.paused, num_frames=args.num_frames)
        except Exception as exc:  # no pyglet, no display, no OpenGL context
            parser.error(f"--viewer gl could not open a window ({exc}); it needs pip install 'steel[viewer]' "
                         "and a display")
    else:
        parser.error(f"--viewer {args.viewer} is not supported by steel's examples; use null, usd or gl")
    return viewer, args


def run(example, args, name: str, log=print) -> int:
    """Newton's run loop for ``example``; the guard's trip or a failed ``--test`` check is exit 1.

    Writes ``summary.json`` (``example.summary()`` plus outcome, command and versions) unless this
    is a ``--test`` run without ``--out``.
    """
    start = getattr(args, "start_time", time.perf_counter())
    outcome, divergence, code = "completed", None, 0
    try:
        newton.examples.run(example, args)
    except Diverged as exc:
        outcome, divergence, code = "diverged", exc.record(), 1
        log(f"[steel] {name}: DIVERGED: {exc}")
        example.viewer.close()  # Newton's loop stopped before closing it (a USD file is written on close)
    except AssertionError as exc:  # a --test check
        outcome, code = "test failed", 1
        log(f"[steel] {name}: --test check failed: {exc}")
    if args.out is not None or not args.test:
        out = Path(args.out or f"results/examples/{name}")
        out.mkdir(parents=True, exist_ok=True)
        summary = {"example": name, "outcome": outcome, "divergence": divergence, **example.summary(),
                   "frames": int(getattr(example, "frame", 0)), "duration_seconds": time.perf_counter() - start,
                   **provenance(args.command)}
        write_summary(out / "summary.json", summary)
        log(f"[steel] {name}: {outcome}; summary in {out}/summary.json")
    elif code == 0:
        log(f"[steel] {name}: --test passed")
    return code
