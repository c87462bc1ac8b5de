"""Vertex Block Descent (``SolverVBD``): particle solve in ``particles/``, rigid AVBD (bodies, joints) in ``rigid/``.

``SolverVBD`` loads on first use, so ``option_rows`` (the option table) imports without Warp and Newton
(see :mod:`steel.solvers`).
"""

__all__ = ["SolverVBD"]


def __getattr__(name: str):
    if name == "SolverVBD":
        from .solver import SolverVBD

        globals()[name] = SolverVBD  # later lookups skip this function
        return SolverVBD
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
