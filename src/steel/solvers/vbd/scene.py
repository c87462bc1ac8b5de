"""The ``vbd:`` scene attributes: solver settings a scene authors, and how the constructor reads them.

Registered by :meth:`SolverVBD.register_custom_attributes` as Newton 1.8.0 does (ONCE per model):

==============================  =======  =======  ==========================================  ==========================
attribute                       dtype    default  USD name                                    default of option
==============================  =======  =======  ==========================================  ==========================
``vbd:max_solver_iterations``   int32    -1       ``newton:maxSolverIterations``              ``iterations`` (None only)
``vbd:rigid_contact_history``   bool     False    ``newton:vbd:rigid:contactHistory``         ``rigid_contact_history``
``vbd:rigid_joint_linear_ke``   float32  1e5      ``newton:vbd:rigid:jointLinearStiffness``   ``rigid_joint_linear_ke``
``vbd:rigid_joint_angular_ke``  float32  1e5      ``newton:vbd:rigid:jointAngularStiffness``  ``rigid_joint_angular_ke``
``vbd:rigid_joint_linear_kd``   float32  0        ``newton:vbd:rigid:jointLinearDamping``     ``rigid_joint_linear_kd``
``vbd:rigid_joint_angular_kd``  float32  0        ``newton:vbd:rigid:jointAngularDamping``    ``rigid_joint_angular_kd``
==============================  =======  =======  ==========================================  ==========================

Precedence, as the reference documents it: an explicit constructor value > the scene's value > the
built-in default. The scene is read for an option given as ``None`` (1.8.0's spelling of "the scene's
value"), and for an omitted one only under ``rigid_compliant_alm=True`` (1.8.0's path): an omitted option on
the seed's path keeps the seed's default, as an omitted ``iterations`` keeps the seed's 10 (the project's
decision table: the seed's API and defaults first, 1.8.0's additions as extras). The registered defaults
are the seed's, so a scene that does not author them changes nothing either way.

Bad scene values raise ``ValueError`` before anything is allocated, naming the USD attribute, the
model attribute, the value and the option that overrides it, with the reference's wording (measured on
``newton.solvers.SolverVBD``): an iteration count neither positive nor -1, a stiffness or damping that is
negative, infinite or NaN. An explicit option wins over a bad scene value without looking at it.
"""

from __future__ import annotations

import math

import warp as wp

import newton

from .rigid.attributes import NAMESPACE

SCENE_ITERATIONS = "max_solver_iterations"
SCENE_ITERATIONS_USD = "newton:maxSolverIterations"
DEFAULT_ITERATIONS = 10  # the seed's default, also 1.8.0's fallback when the scene says -1 or nothing

# option (= the vbd: attribute's name) -> (dtype, default = the seed's option default, USD attribute name)
RIGID_SCENE_SETTINGS = {
    "rigid_contact_history": (wp.bool, False, "newton:vbd:rigid:contactHistory"),
    "rigid_joint_linear_ke": (wp.float32, 1.0e5, "newton:vbd:rigid:jointLinearStiffness"),
    "rigid_joint_angular_ke": (wp.float32, 1.0e5, "newton:vbd:rigid:jointAngularStiffness"),
    "rigid_joint_linear_kd": (wp.float32, 0.0, "newton:vbd:rigid:jointLinearDamping"),
    "rigid_joint_angular_kd": (wp.float32, 0.0, "newton:vbd:rigid:jointAngularDamping"),
}


def register_scene_attributes(builder) -> None:
    """Declare the six ONCE attributes of the table above on ``builder``."""
    once = newton.Model.AttributeFrequency.ONCE
    builder.add_custom_attribute(newton.ModelBuilder.CustomAttribute(
        name=SCENE_ITERATIONS, dtype=wp.int32, frequency=once, namespace=NAMESPACE, default=-1,
        usd_attribute_name=SCENE_ITERATIONS_USD))
    for name, (dtype, default, usd) in RIGID_SCENE_SETTINGS.items():
        builder.add_custom_attribute(newton.ModelBuilder.CustomAttribute(
            name=name, dtype=dtype, frequency=once, namespace=NAMESPACE, default=default, usd_attribute_name=usd))


def _scene_value(model, name: str):
    """The model's ``vbd:<name>`` value as a Python scalar, or None when the attribute is not registered."""
    ns = getattr(model, NAMESPACE, None)
    values = getattr(ns, name, None) if ns is not None else None
    if values is None:
        return None
    return values.numpy().reshape(-1)[0].item() if hasattr(values, "numpy") else values


def scene_iterations(model) -> int:
    """``iterations=None``: the scene's ``vbd:max_solver_iterations``, or 10 when it is absent or -1.

    Raises:
        ValueError: a scene value that is neither positive nor -1 (names the USD attribute and the value).
    """
    value = _scene_value(model, SCENE_ITERATIONS)
    if value is None or int(value) == -1:
        return DEFAULT_ITERATIONS
    value = int(value)
    if value < 1:
        raise ValueError(f"Scene-authored {SCENE_ITERATIONS_USD} (vbd:{SCENE_ITERATIONS}) must be positive or -1 "
                         f"(use the default), got {value}; fix the scene value or pass iterations= explicitly to "
                         "SolverVBD")
    return value


def scene_rigid_settings(model, given: dict, compliant: bool = False) -> dict:
    """The rigid settings the scene supplies: option -> value, for each option given as None (Newton 1.8.0's
    spelling of "the scene's value") and, under ``rigid_compliant_alm=True`` (1.8.0's path), each omitted one.
    An omitted option on the seed's path keeps the seed's default, so a scene never changes a seed default (as
    ``iterations``: the decision table of the specification).

    Only registered attributes are read; each is checked (stiffness and damping finite and >= 0).

    Raises:
        ValueError: a bad scene value, naming the USD attribute, ``model.vbd.<name>``, the value and the option.
    """
    resolved = {}
    for name, (_dtype, _default, usd) in RIGID_SCENE_SETTINGS.items():
        if given.get(name) is not None:
            continue  # an explicit value wins without reading the scene
        if name not in given and not compliant:
            continue  # omitted on the seed's path: the seed's default
        value = _scene_value(model, name)
        if value is None:
            continue
        if name == "rigid_contact_history":
            resolved[name] = bool(value)
            continue
        value = float(value)
        if not math.isfinite(value) or value < 0.0:
            raise ValueError(f"Scene-authored {usd} (model.{NAMESPACE}.{name}) must be finite and >= 0, got {value!r}. "
                             f"Fix the scene value or pass {name}= explicitly to SolverVBD.")
        resolved[name] = value
    return resolved


__all__ = ["RIGID_SCENE_SETTINGS", "register_scene_attributes", "scene_iterations", "scene_rigid_settings"]
