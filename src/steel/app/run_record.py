"""What every run writes about itself: a folder of its own and a summary that can be reproduced.

* :func:`default_out_dir`: ``results/run/<label>/<solver>``, where the label of a shipped scene is its
  name and that of a file is its name with the extension (``cartpole.urdf``) plus a short hash of
  its absolute path, so ``cartpole``, ``cartpole.urdf`` and ``cartpole.usda`` never share a folder,
  nor do two files called ``robot.xml`` in different folders.
* :func:`resolve_out_dir`: where one run writes. Without ``--out`` every run gets a folder of its own
  under the default one, named by its start time (``20261207-153012``, then ``-2``, ``-3`` within the
  same second), and is listed in that folder's ``runs.csv`` (:func:`record_run`): two runs of one input
  with different options never overwrite each other. An ``--out`` folder that already holds a run
  (``summary.json``) is refused unless ``force`` is set, before anything is built or written.
* :func:`provenance`: the command line, package versions, Python and platform, for the summary.
* :func:`write_summary`: ``summary.json`` with non-finite numbers written as ``null``, so a run
  that went NaN never leaves ``NaN`` (invalid JSON) in it.

Folders are created only once a run is about to step (see :mod:`steel.app.runner`), so a run that fails
while loading leaves nothing behind.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import platform
import sys
import time
from importlib import metadata
from pathlib import Path


def input_label(scene: str, shipped: tuple[str, ...]) -> str:
    """Folder name of one input: a shipped scene's name, or a file's name plus a hash of its path."""
    if scene in shipped:
        return scene
    path = Path(scene).resolve()
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:6]
    return f"{path.name}-{digest}"


def default_out_dir(scene: str, shipped: tuple[str, ...], solver: str) -> Path:
    """``results/run/<input label>/<solver>`` (see the module docstring)."""
    return Path("results") / "run" / input_label(scene, shipped) / solver


def resolve_out_dir(out_dir, scene: str, shipped: tuple[str, ...], solver: str, force: bool = False,
                    now: float | None = None) -> tuple[Path, Path | None]:
    """``(folder of this run, runs.csv to list it in or None)``; see the module docstring.

    Raises:
        ValueError: ``out_dir`` already holds a ``summary.json`` and ``force`` is not set.
    """
    if out_dir is not None:
        out = Path(out_dir)
        if (out / "summary.json").exists() and not force:
            raise ValueError(f"--out {out} already holds a run (summary.json); pass --force to overwrite it, "
                             "or leave --out out to get a new folder per run")
        return out, None
    parent = default_out_dir(scene, shipped, solver)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    out, n = parent / stamp, 1
    while out.exists():
        n += 1
        out = parent / f"{stamp}-{n}"
    return out, parent / "runs.csv"


RUNS_COLUMNS = ("folder", "outcome", "expectation_met", "simulated_s", "wall_total_s", "command")
# Summary version 2 renamed the times ("duration_seconds" was the whole run, "wall_seconds" the steps after the
# first): old name -> new name, for reading version-1 summaries and appending to version-1 runs.csv files.
RENAMED = {"simulated_seconds": "simulated_s", "duration_seconds": "wall_total_s", "wall_seconds": "wall_stepping_s",
           "world_steps_per_second": "world_steps_per_s", "steps_per_second": "steps_per_s"}
SUMMARY_VERSION = 2


def read_summary(path: Path) -> dict:
    """A run's ``summary.json`` with version-1 keys (no ``summary_version``) renamed to version 2's (``RENAMED``)."""
    summary = json.loads(Path(path).read_text())
    if summary.get("summary_version", 1) < 2:
        summary = {RENAMED.get(k, k): v for k, v in summary.items()}
    return summary


def record_run(index: Path | None, out: Path, summary: dict) -> None:
    """Append this run's line to ``index`` (``runs.csv``, header on first use); nothing when ``index`` is None.

    A ``runs.csv`` begun by an older version keeps its own columns: each is filled from the summary by its
    name, renamed ones (``RENAMED``; its ``wall_seconds`` was the stepping time) by their new name."""
    if index is None:
        return
    columns = RUNS_COLUMNS
    if index.exists():
        with index.open(newline="") as f:
            columns = tuple(next(csv.reader(f), RUNS_COLUMNS))
    row = {"folder": out.name, "expectation_met": (summary.get("expectation") or {}).get("met"), **summary}
    with index.open("a", newline="") as f:
        writer = csv.writer(f)
        if index.stat().st_size == 0:  # a new file (opening it created it)
            writer.writerow(columns)
        writer.writerow([row.get(RENAMED.get(c, c)) for c in columns])


def versions() -> dict:
    """Versions of this package and of what it runs on."""
    found = {}
    for name in ("steel", "newton", "warp-lang", "numpy", "mujoco", "usd-core"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    found["python"] = platform.python_version()
    found["platform"] = platform.platform()
    return found


def provenance(command: list[str] | None = None) -> dict:
    """Command line (``sys.argv`` unless given) and versions."""
    argv = list(sys.argv if command is None else command)
    return {"command": " ".join(argv), "versions": versions()}


def _finite_or_none(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_none(v) for v in value]
    return value


def write_summary(path: Path, summary: dict) -> None:
    """Write ``summary`` as JSON, NaN and infinities as ``null``."""
    path.write_text(json.dumps(_finite_or_none(summary), indent=2, allow_nan=False, default=str))
