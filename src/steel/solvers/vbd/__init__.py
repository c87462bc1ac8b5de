"""Vertex Block Descent (``SolverVBD``): particle solve in ``particles/``; rigid AVBD is part 2."""

from .solver import SolverVBD

__all__ = ["SolverVBD"]
