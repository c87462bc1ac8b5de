"""Steel's solvers, with the class names of Newton's own versions."""

from .featherstone import SolverFeatherstone

__all__: list[str] = ["SolverFeatherstone"]
