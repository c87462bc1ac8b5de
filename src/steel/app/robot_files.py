"""Load a robot file (MJCF, URDF or USD) for ``steel run``, with one rule for every format.

* Base: as the file says unless ``fixed_base`` welds the root to the world. In MJCF and USD a root
  body with a free joint floats and one without a joint is welded (a table stays put); URDF cannot
  say, so its root floats. The whole robot is lifted by ``start_height`` [m] above the pose the
  file gives it (default 0: as written) for every format, so ``robot.urdf`` and ``robot.usda`` of
  one robot start alike.
* An MJCF's own ``floor``/``ground`` geoms are dropped: every world shares one ground plane at z = 0.
* MJCF start pose: ``keyframe`` names a ``<keyframe><key>`` (by name or index) or the
  ``<numeric name="init_qpos">`` some assets declare instead; ``"auto"`` (the default) applies
  ``init_qpos`` when the file has one, ``"none"`` keeps the body poses of the file. MuJoCo's
  ``qpos`` order is converted to Newton's: quaternions go from (w, x, y, z) to (x, y, z, w).
* Errors are one line naming the file: malformed XML with its line and column, an empty file, a
  file without bodies, an importer failure.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import warp as wp

import newton

SUFFIXES = {".xml": "MJCF", ".urdf": "URDF", ".usd": "USD", ".usda": "USD", ".usdc": "USD"}


class RobotFileError(ValueError):
    """A robot file that cannot be used; the message names the file (and line, for XML)."""


def _parse_xml(path: Path) -> ET.Element:
    if path.stat().st_size == 0:
        raise RobotFileError(f"{path}: the file is empty")
    try:
        return ET.parse(path).getroot()
    except OSError as exc:
        raise RobotFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ET.ParseError as exc:
        line, column = exc.position
        raise RobotFileError(f"{path}:{line}:{column}: malformed or empty XML ({exc})") from None


def mjcf_start_qpos(root: ET.Element, keyframe: str, path: Path) -> np.ndarray | None:
    """MuJoCo ``qpos`` of the chosen key (see the module docstring), or None for the file's poses."""
    if keyframe == "none":
        return None
    keys = root.findall("./keyframe/key")
    numeric = {n.get("name"): n.get("data") for n in root.findall("./custom/numeric")}
    numeric.update({n.get("name"): n.get("data") for n in root.findall("./numeric")})
    if keyframe == "auto":
        text = numeric.get("init_qpos")
    elif keyframe == "init_qpos" and "init_qpos" in numeric:
        text = numeric["init_qpos"]
    else:
        by_name = {k.get("name"): k for k in keys}
        if keyframe in by_name:
            key = by_name[keyframe]
        elif keyframe.lstrip("-").isdigit() and -len(keys) <= int(keyframe) < len(keys):
            key = keys[int(keyframe)]
        else:
            names = [k.get("name") or str(i) for i, k in enumerate(keys)]
            names += ["init_qpos"] if "init_qpos" in numeric else []
            raise RobotFileError(f"{path}: no keyframe {keyframe!r}; the file has {names or 'none'}")
        text = key.get("qpos")
        if text is None:
            raise RobotFileError(f"{path}: keyframe {keyframe!r} sets no qpos")
    return None if text is None else np.array([float(v) for v in text.split()])


def apply_mujoco_qpos(robot: newton.ModelBuilder, qpos: np.ndarray, path: Path) -> None:
    """Write MuJoCo-ordered ``qpos`` into ``robot.joint_q`` (free/ball quaternions reordered)."""
    if len(qpos) != len(robot.joint_q):
        raise RobotFileError(f"{path}: the keyframe has {len(qpos)} qpos values, the model {len(robot.joint_q)} "
                             "coordinates (with --fixed-base, use --keyframe none)")
    starts = [*robot.joint_q_start, len(robot.joint_q)]
    q = []
    for j, jtype in enumerate(robot.joint_type):
        k = qpos[starts[j] : starts[j + 1]]
        if jtype == newton.JointType.FREE:
            q += [*k[:3], *k[4:7], k[3]]
        elif jtype == newton.JointType.BALL:
            q += [*k[1:4], k[0]]
        else:
            q += list(k)
    robot.joint_q[:] = [float(v) for v in q]


def _lift_free_joints(robot: newton.ModelBuilder, height: float) -> None:
    """Raise every free joint's position by ``height`` [m] (after a keyframe replaced it)."""
    for jtype, start in zip(robot.joint_type, robot.joint_q_start, strict=True):
        if jtype == newton.JointType.FREE:
            robot.joint_q[start + 2] += height


def load_robot(path: str | Path, *, fixed_base: bool = False, start_height: float = 0.0,
               keyframe: str = "auto") -> newton.ModelBuilder:
    """One robot from ``path`` in a fresh builder (see the module docstring); raises :class:`RobotFileError`."""
    path = Path(path)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise RobotFileError(f"{path}: a robot file must be .xml (MJCF), .urdf or .usd/.usda/.usdc")
    if not path.is_file():
        raise RobotFileError(f"{path}: no such file")
    if not np.isfinite(start_height):
        raise RobotFileError(f"start height must be finite, got {start_height!r}")
    if kind != "MJCF" and keyframe not in ("auto", "none"):
        raise RobotFileError(f"{path}: --keyframe applies to MJCF files only")
    root = _parse_xml(path) if kind in ("MJCF", "URDF") else None
    if kind == "URDF" and not root.findall("link"):
        raise RobotFileError(f"{path}: the URDF file defines no links")
    if kind == "USD" and path.stat().st_size == 0:
        raise RobotFileError(f"{path}: the file is empty")
    robot = newton.ModelBuilder()
    lift = wp.transform(wp.vec3(0.0, 0.0, float(start_height)), wp.quat_identity())
    floating = False if fixed_base else None  # None: as the file says
    try:
        if kind == "MJCF":
            robot.add_mjcf(str(path), xform=lift, floating=floating, ignore_names=["floor", "ground"])
        elif kind == "URDF":
            robot.add_urdf(str(path), xform=lift, floating=not fixed_base)
        else:
            robot.add_usd(str(path), xform=lift, floating=floating)
    except ImportError as exc:
        raise RobotFileError(f"{path}: loading {kind} needs an optional package ({exc}); "
                             "pip install 'steel[usd]'") from None
    except Exception as exc:  # the importers raise anything from KeyError to StopIteration on bad files
        raise RobotFileError(f"{path}: could not load as {kind}: {type(exc).__name__} {exc}".rstrip()) from None
    if robot.body_count == 0:
        raise RobotFileError(f"{path}: the {kind} file defines no bodies")
    if kind == "MJCF":
        qpos = mjcf_start_qpos(root, keyframe, path)
        if qpos is not None:
            apply_mujoco_qpos(robot, qpos, path)
            _lift_free_joints(robot, float(start_height))
    return robot
