"""What every run writes about itself: a folder of its own and a summary that can be reproduced.

* :func:`default_out_dir`: ``results/run/<label>/<solver>``, where the label of a shipped scene is its
  name and that of a file is its name with the extension (``cartpole.urdf``) plus a short hash of
  its absolute path, so ``cartpole``, ``cartpole.urdf`` and ``cartpole.usda`` never share a folder,
  nor do two files called ``robot.xml`` in different folders.
* :func:`provenance`: the command line, package versions, Python and platform, for the summary.
* :func:`write_summary`: ``summary.json`` with non-finite numbers written as ``null``, so a run
  that went NaN never leaves ``NaN`` (invalid JSON) in it.

Folders are created only once a run is about to step (see :mod:`steel.runner`), so a run that fails
while loading leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import sys
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
