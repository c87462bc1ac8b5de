"""Steel: physics solvers on NVIDIA Warp for the Newton physics engine.

The subpackages load on first use (``steel.solvers``, ``steel.articulation``,
``steel.CollisionSubstepScheduler``), so ``steel --version`` and ``steel --help`` (the command line,
:mod:`steel.app.cli`) answer without importing Warp and Newton. ``steel.app`` (the command line and its
run tooling: scenes, runners, run records) is not part of the library's API and is not loaded from here.
"""

import importlib

__version__ = "0.1.0"

__all__ = ["CollisionSubstepScheduler", "__version__", "articulation", "solvers"]


def __getattr__(name: str):
    if name in ("articulation", "solvers"):
        return importlib.import_module(f".{name}", __name__)
    if name == "CollisionSubstepScheduler":
        return importlib.import_module(".collision_schedule", __name__).CollisionSubstepScheduler
    raise AttributeError(f"module 'steel' has no attribute {name!r}")
