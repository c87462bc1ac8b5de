"""SolverSteel: reduced-coordinate dynamics with a projected Gauss-Seidel impulse solve.

``SolverSteel`` loads on first use, so ``option_rows`` (the option table) imports without Warp and Newton
(see :mod:`steel.solvers`).
"""

__all__ = ["SolverSteel"]


def __getattr__(name: str):
    if name == "SolverSteel":
        from .solver import SolverSteel

        globals()[name] = SolverSteel  # later lookups skip this function
        return SolverSteel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
