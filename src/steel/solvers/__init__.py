"""Steel's solvers, with the class names of Newton's own versions."""

__all__: list[str] = []
