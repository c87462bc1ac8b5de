"""Steel: physics solvers on NVIDIA Warp for the Newton physics engine."""

from . import articulation, solvers
from .collision_schedule import CollisionSubstepScheduler

__version__ = "0.1.0"

__all__ = ["CollisionSubstepScheduler", "__version__", "articulation", "solvers"]
