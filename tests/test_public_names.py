"""Steel reaches Newton through its public names only: no ``newton._src`` anywhere under ``src/``.

Newton's private modules move between patch releases; a public name (``newton.solvers.X``,
``newton.solvers.experimental.coupled.CouplingInterface``, ...) is the contract. The check parses every
module with :mod:`ast` (so comments and docstrings that mention the path do not count) and reports each
import of a private module and each attribute chain through ``_src`` of ``newton``, with file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attribute accesses on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _is_private(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "newton" and "_src" in parts[1:]


def private_uses(path: Path, root: Path = SRC.parent) -> list[str]:
    """Every line of one file that uses ``newton._src``, as ``path:line: what`` (path relative to ``root``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = {}
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            names = [dotted] if dotted else []
        elif isinstance(node, ast.Call) and _dotted(node.func) in ("importlib.import_module", "__import__"):
            names = [arg.value for arg in node.args[:1] if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        hits = [name for name in names if _is_private(name)]
        if hits and node.lineno not in found:
            found[node.lineno] = f"{path.relative_to(root)}:{node.lineno}: {hits[0]}"
    return [found[line] for line in sorted(found)]


def test_private_use_is_detected(tmp_path):
    """The check itself flags each spelling (import, from-import, attribute, importlib) and ignores text."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""Mentions newton._src.sim in a docstring only."""\n'
        "import newton._src.sim\n"
        "from newton._src.solvers import x\n"
        "from newton import _src\n"
        "y = newton._src.solvers\n"
        "import importlib\n"
        "z = importlib.import_module('newton._src.geometry')\n"
        "ok = newton.solvers.SolverSemiImplicit\n",
        encoding="utf-8",
    )
    lines = [hit.split(":")[1] for hit in private_uses(sample, tmp_path)]
    assert lines == ["2", "3", "4", "5", "7"]


def test_no_private_newton_names_under_src():
    """No module under src/ imports or reaches ``newton._src`` (Newton's private layout)."""
    files = sorted(SRC.rglob("*.py"))
    assert files
    found = [hit for path in files for hit in private_uses(path)]
    assert not found, "private Newton names (use the public API):\n" + "\n".join(found)
