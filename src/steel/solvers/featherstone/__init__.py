"""SolverFeatherstone: semi-implicit reduced-coordinate solver with penalty contacts.

``SolverFeatherstone`` loads on first use, so ``option_rows`` (the option table) imports without Warp and Newton
(see :mod:`steel.solvers`).
"""

__all__ = ["SolverFeatherstone"]


def __getattr__(name: str):
    if name == "SolverFeatherstone":
        from .solver import SolverFeatherstone

        globals()[name] = SolverFeatherstone  # later lookups skip this function
        return SolverFeatherstone
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
