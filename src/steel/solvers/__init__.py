"""Steel's solvers, with the class names of Newton's own versions.

The solver classes load on first use (``from steel.solvers import SolverSteel``), as :mod:`steel` loads
this package: importing a solver imports Warp and Newton (seconds), and the option tables
(:mod:`steel.solvers.option_table`, each package's ``option_rows``) are read by the command line's
``steel run --help`` without them.
"""

import importlib

__all__: list[str] = ["SolverFeatherstone", "SolverSteel", "SolverVBD"]

_HOMES = {"SolverFeatherstone": ".featherstone", "SolverSteel": ".steel", "SolverVBD": ".vbd"}


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name], __name__), name)
    if name in ("featherstone", "steel", "vbd"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'steel.solvers' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
