"""SolverFeatherstone: semi-implicit reduced-coordinate solver with penalty contacts (seed 003)."""

from .solver import SolverFeatherstone

__all__ = ["SolverFeatherstone"]
