"""Steel: physics solvers on NVIDIA Warp for the Newton physics engine."""

from . import articulation

__version__ = "0.1.0"

__all__ = ["__version__", "articulation"]
