"""Vertex Block Descent (``SolverVBD``): particle solve in ``particles/``, rigid AVBD (bodies, joints) in ``rigid/``."""

from .solver import SolverVBD

__all__ = ["SolverVBD"]
