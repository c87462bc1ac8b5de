"""Interleaved A/B timing of two source trees of this package on ``make bench``'s solver rows.

A refactor that must keep speed ("within 3 % of before") is timed against the code before it, on the same
machine, in the same run: each round starts one worker process per tree, in alternating order, and each worker
times every row with the tree's own ``benchmarks.measure.run_solver`` (Newton's collide-then-step loop) and
prints its step-only times (collision excluded, timed per call on the CPU). The ratio reported per row is the
median over rounds of ``after / before`` of the paired rounds, with the range; below 1 is faster.

    git worktree add --detach /tmp/before <commit>
    python -m benchmarks.ab --before /tmp/before --after . --rounds 5

Rows (``--rows``): ``solver:scene:worlds`` with solver ``steel`` or ``featherstone``; the default is every
``make bench`` row of both solvers. The trees must both have ``benchmarks/measure.py`` with ``run_solver``.

Contact scenes are timed in contact, as ``make bench`` times them: each starts with ``benchmarks.settle``'s
settle time untimed (``--no-settle``: only ``--warmup`` steps, for trees older than the settled start), at the
time step ``--dt`` (default the scene's). A tree whose ``run_solver`` cannot do what is asked fails the run
rather than time a different problem.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

DEFAULT_ROWS = ("steel:tower:1", "steel:tower:16", "steel:humanoid:16", "steel:ant:64", "steel:chain:64",
                "steel:cartpole:64", "featherstone:humanoid:16", "featherstone:ant:64", "featherstone:chain:64",
                "featherstone:cartpole:64")
CLASSES = {"steel": "SolverSteel", "featherstone": "SolverFeatherstone"}

# The worker: times each row in the tree on sys.path, prints one JSON line {row: step-only seconds per step}.
_WORKER = """
import json, sys
import warp as wp
wp.config.quiet = True
import steel.solvers as ours
from benchmarks.measure import run_solver
rows, steps, warmup = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
settle, dt = sys.argv[4] == "1", (float(sys.argv[5]) if sys.argv[5] != "none" else None)
import inspect
accepted = inspect.signature(run_solver).parameters
kwargs = {}
if settle:
    if "settle_start" not in accepted:
        raise SystemExit("this tree's run_solver has no settled start; pass --no-settle")
    kwargs["settle_start"] = True
if dt is not None:
    if "dt" not in accepted:
        raise SystemExit("this tree's run_solver takes no dt; leave --dt out")
    kwargs["dt"] = dt
out = {}
for row in rows:
    solver, scene, worlds = row.split(":")
    m = run_solver(getattr(ours, {classes}[solver]), scene, int(worlds), "cpu", steps, warmup, 0, **kwargs)
    out[row] = (m.seconds - (m.collide_seconds or 0.0)) / m.steps
print("AB " + json.dumps(out))
"""


def _run_worker(tree: str, rows: list[str], steps: int, warmup: int, settle: bool = True,
                dt: float | None = None) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(tree, "src"), tree]))
    code = _WORKER.replace("{classes}", repr(CLASSES))
    done = subprocess.run([sys.executable, "-c", code, json.dumps(rows), str(steps), str(warmup),
                           "1" if settle else "0", "none" if dt is None else repr(dt)], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("AB ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"worker in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][3:])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True, help="root of the tree before the change")
    p.add_argument("--after", default=".", help="root of the tree after the change (default: this one)")
    p.add_argument("--rows", default=",".join(DEFAULT_ROWS), help="comma list of solver:scene:worlds")
    p.add_argument("--rounds", type=int, default=5, help="paired rounds (default 5)")
    p.add_argument("--steps", type=int, default=300, help="timed steps per row and round (default 300)")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps after the settle time (default 10)")
    p.add_argument("--no-settle", dest="settle", action="store_false",
                   help="no settle time: only --warmup steps (trees older than benchmarks.settle)")
    p.add_argument("--dt", default=None, help="the time step [s], a fraction or decimal (default: the scene's)")
    args = p.parse_args(argv)
    dt = None
    if args.dt is not None:
        from .run import parse_dts  # noqa: PLC0415 - imports warp and newton; only needed with --dt

        dts = parse_dts(args.dt)
        if len(dts) != 1:
            raise SystemExit(f"--dt takes one time step, got {args.dt!r}")
        dt = dts[0][1]
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    for row in rows:
        parts = row.split(":")
        if len(parts) != 3 or parts[0] not in CLASSES or not parts[2].isdigit():
            raise SystemExit(f"--rows: bad row {row!r}; expected solver:scene:worlds with solver in {sorted(CLASSES)}")
    if args.rounds < 1:
        raise SystemExit(f"--rounds must be >= 1, got {args.rounds}")
    trees = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    times = {name: [] for name in trees}
    for k in range(args.rounds):
        order = ("before", "after") if k % 2 == 0 else ("after", "before")
        for name in order:
            times[name].append(_run_worker(trees[name], rows, args.steps, args.warmup, args.settle, dt))
        print(f"round {k + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(f"{'row':28s} {'before ms':>10s} {'after ms':>10s} {'after/before':>13s}  range")
    for row in rows:
        ratios = [a[row] / b[row] for a, b in zip(times["after"], times["before"])]
        before = statistics.median(t[row] for t in times["before"]) * 1e3
        after = statistics.median(t[row] for t in times["after"]) * 1e3
        print(f"{row:28s} {before:10.3f} {after:10.3f} {statistics.median(ratios):13.3f}  "
              f"{min(ratios):.3f}-{max(ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
