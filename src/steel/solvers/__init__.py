"""Steel's solvers, with the class names of Newton's own versions."""

from .featherstone import SolverFeatherstone
from .steel import SolverSteel
from .vbd import SolverVBD

__all__: list[str] = ["SolverFeatherstone", "SolverSteel", "SolverVBD"]
