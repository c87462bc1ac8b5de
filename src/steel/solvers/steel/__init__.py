"""SolverSteel: reduced-coordinate dynamics with a projected Gauss-Seidel impulse solve."""

from .solver import SolverSteel

__all__ = ["SolverSteel"]
