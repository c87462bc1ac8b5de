"""The ``vbd:`` scene attribute ``max_solver_iterations``: the iteration count a scene asks for.

Registered by :meth:`SolverVBD.register_custom_attributes` as Newton 1.8.0 does: ``vbd:max_solver_iterations``
(int32, once per model, default -1 = "no preference"), authored in USD as ``newton:maxSolverIterations``
(``NewtonSceneAPI``). It is read only when the caller passes ``iterations=None`` (1.8.0's default
spelling); an omitted ``iterations`` keeps the seed revision's 10, and an explicit count always wins,
so a scene never changes a seed default. A scene value other than a positive count or -1 raises
``ValueError`` naming the USD attribute, as the reference's does (measured: 0 and -2 raise there).
"""

from __future__ import annotations

import warp as wp

import newton

from .rigid.attributes import NAMESPACE

SCENE_ITERATIONS = "max_solver_iterations"
SCENE_ITERATIONS_USD = "newton:maxSolverIterations"
DEFAULT_ITERATIONS = 10  # the seed's default, also 1.8.0's fallback when the scene says -1 or nothing


def register_scene_attributes(builder) -> None:
    """Declare ``vbd:max_solver_iterations`` (ONCE, int32, default -1, USD ``newton:maxSolverIterations``)."""
    builder.add_custom_attribute(newton.ModelBuilder.CustomAttribute(
        name=SCENE_ITERATIONS, dtype=wp.int32, frequency=newton.Model.AttributeFrequency.ONCE, namespace=NAMESPACE,
        default=-1, usd_attribute_name=SCENE_ITERATIONS_USD))


def scene_iterations(model) -> int:
    """``iterations=None``: the scene's ``vbd:max_solver_iterations``, or 10 when it is absent or -1.

    Raises:
        ValueError: a scene value that is neither positive nor -1 (names the USD attribute and the value).
    """
    ns = getattr(model, NAMESPACE, None)
    values = getattr(ns, SCENE_ITERATIONS, None) if ns is not None else None
    if values is None:
        return DEFAULT_ITERATIONS
    value = int(values.numpy().reshape(-1)[0]) if hasattr(values, "numpy") else int(values)
    if value == -1:
        return DEFAULT_ITERATIONS
    if value < 1:
        raise ValueError(f"Scene-authored {SCENE_ITERATIONS_USD} (vbd:{SCENE_ITERATIONS}) must be positive or -1 "
                         f"(use the default), got {value}; fix the scene value or pass iterations= explicitly to "
                         "SolverVBD")
    return value


__all__ = ["register_scene_attributes", "scene_iterations"]
