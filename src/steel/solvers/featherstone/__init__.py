"""SolverFeatherstone: semi-implicit reduced-coordinate solver with penalty contacts."""

from .solver import SolverFeatherstone

__all__ = ["SolverFeatherstone"]
