"""The ``vbd:`` joint attributes, the structural slot names and the slot checks of set_joint_constraint_mode.

``vbd:joint_is_hard`` (int32 per joint, default 1) picks the augmented-Lagrangian (1) or penalty-only
(0) mode of a joint's structural slots when the solver is built. ``vbd:dahl_eps_max`` and
``vbd:dahl_tau`` (float32 per joint) parameterize Dahl friction on cable bending; they are registered
here so scenes can author them (USD ``newton:vbd:<name>``), and cables will read them.
"""

from __future__ import annotations

import numbers
import warnings

import warp as wp

import newton

from ...inputs import check_bool

NAMESPACE = "vbd"
# Positive Dahl defaults of the deprecated compatibility mode: maximum persistent strain [rad] and
# saturation bend [rad] (as the seed's revision of Newton's SolverVBD registers them); documented in
# register_vbd_attributes.
DAHL_EPS_MAX_DEFAULT = 0.5
DAHL_TAU_DEFAULT = 1.0


class JointSlot:
    """Structural constraint slots of a joint, for ``set_joint_constraint_mode``.

    BALL has LINEAR only; FIXED, REVOLUTE, PRISMATIC and D6 have LINEAR and ANGULAR. STRETCH and BEND
    are the cable names of the same two slots. Drive and limit slots start at 2 and are always soft.
    """

    LINEAR = 0
    ANGULAR = 1
    STRETCH = 0
    BEND = 1


def register_vbd_attributes(builder, *, dahl_defaults_enabled: bool = True) -> None:
    """Declare ``vbd:joint_is_hard``, ``vbd:dahl_eps_max`` and ``vbd:dahl_tau`` on ``builder`` (JOINT frequency).

    ``dahl_defaults_enabled=True`` (deprecated, warns) gives the Dahl attributes positive defaults
    (``dahl_eps_max`` 0.5, ``dahl_tau`` 1.0), enabling Dahl friction on every cable; False leaves them
    0 so Dahl acts only where positive values are authored.
    """
    dahl_defaults_enabled = check_bool("dahl_defaults_enabled", dahl_defaults_enabled)
    if dahl_defaults_enabled:
        warnings.warn("SolverVBD.register_custom_attributes(dahl_defaults_enabled=True) is deprecated: it gives "
                      "every cable positive Dahl friction defaults. Pass dahl_defaults_enabled=False and author "
                      "vbd:dahl_eps_max / vbd:dahl_tau where Dahl friction is wanted", DeprecationWarning,
                      stacklevel=3)
    eps, tau = (DAHL_EPS_MAX_DEFAULT, DAHL_TAU_DEFAULT) if dahl_defaults_enabled else (0.0, 0.0)
    for name, dtype, default in (("joint_is_hard", wp.int32, 1), ("dahl_eps_max", wp.float32, eps),
                                 ("dahl_tau", wp.float32, tau)):
        builder.add_custom_attribute(newton.ModelBuilder.CustomAttribute(
            name=name, dtype=dtype, frequency=newton.Model.AttributeFrequency.JOINT, namespace=NAMESPACE,
            default=default, usd_attribute_name=f"newton:{NAMESPACE}:{name}"))


def check_joint_slot(model, layout, joint_index, slot) -> None:
    """Raise ``ValueError`` unless ``joint_index`` is a joint and ``slot`` (or None) one of its structural slots."""
    if not isinstance(joint_index, numbers.Integral) or isinstance(joint_index, bool):
        raise TypeError(f"joint_index must be an int, got {joint_index!r}")
    if not 0 <= joint_index < int(model.joint_count):
        raise ValueError(f"joint_index {joint_index} is out of range: the model has {int(model.joint_count)} joints")
    if slot is None:
        return
    if not isinstance(slot, numbers.Integral) or isinstance(slot, bool):
        raise TypeError(f"slot must be an int (SolverVBD.JointSlot) or None, got {slot!r}")
    if slot >= 2:
        raise ValueError(f"slot {slot} is a drive/limit slot; only the structural slots LINEAR (0) and ANGULAR (1) "
                         "can be set hard or soft (drive and limit slots are always soft)")
    count = layout.slot_count(joint_index) if layout is not None else _slot_count(model, joint_index)
    if slot < 0 or slot >= count:
        jtype = newton.JointType(int(model.joint_type.numpy()[joint_index])).name
        raise ValueError(f"slot {slot} is out of range for joint {joint_index} ({jtype}), which has {count} "
                         "structural slot(s)")


def _slot_count(model, joint_index: int) -> int:
    """Structural slots by joint type, when no rigid solve was built (no dynamic bodies)."""
    jtype = int(model.joint_type.numpy()[joint_index])
    if jtype == int(newton.JointType.FREE):
        return 0
    return 1 if jtype == int(newton.JointType.BALL) else 2
