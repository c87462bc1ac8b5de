"""The ``steel:`` rigid-body attributes of seed 004: registration, USD names, validation, device copies.

=======================================  =====  =======  =====================================  ==============================
attribute (namespace ``steel``)          freq.  default  USD name                               effect
=======================================  =====  =======  =====================================  ==============================
rigid_body_angular_damping [1/s]         body   0.05     physxRigidBody:angularDamping          ``w *= max(1 - d dt, 0)``
rigid_body_linear_damping [1/s]          body   0        physxRigidBody:linearDamping           ``v *= max(1 - d dt, 0)``
rigid_body_max_linear_velocity [m/s]     body   inf      physxRigidBody:maxLinearVelocity       clamps ``|v|`` of free bodies
rigid_body_max_angular_velocity [rad/s]  body   inf      physxRigidBody:maxAngularVelocity      clamps ``|w|`` of free bodies;
                                                                                                USD authors deg/s
rigid_body_max_depenetration_velocity    body   inf      physxRigidBody:maxDepenetrationVelocity bounds contact push-out of
[m/s]                                                                                           free bodies
=======================================  =====  =======  =====================================  ==============================

Damping applies to free bodies and floating bases (the child of a world-rooted FREE joint);
joints with a parent body are not damped. Without registration every body takes the defaults, so
the 0.05 root angular damping is always on, as in the reference.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

import newton

NAMESPACE = "steel"

# name -> (default, USD attribute, USD value transform)
RIGID_BODY_ATTRIBUTES = {
    "rigid_body_angular_damping": (0.05, "physxRigidBody:angularDamping", None),
    "rigid_body_linear_damping": (0.0, "physxRigidBody:linearDamping", None),
    "rigid_body_max_linear_velocity": (math.inf, "physxRigidBody:maxLinearVelocity", None),
    "rigid_body_max_angular_velocity": (math.inf, "physxRigidBody:maxAngularVelocity", "degrees"),
    "rigid_body_max_depenetration_velocity": (math.inf, "physxRigidBody:maxDepenetrationVelocity", None),
}


def _degrees_to_radians(value, context=None):
    return float(value) * math.pi / 180.0


def register_custom_attributes(builder: newton.ModelBuilder) -> None:
    """Declare the ``steel:`` body attributes on ``builder`` (idempotent)."""
    for name, (default, usd_name, transform) in RIGID_BODY_ATTRIBUTES.items():
        kwargs = {}
        if transform == "degrees":
            kwargs["usd_value_transformer"] = _degrees_to_radians
        builder.add_custom_attribute(
            newton.ModelBuilder.CustomAttribute(
                name=name,
                dtype=wp.float32,
                frequency=newton.Model.AttributeFrequency.BODY,
                namespace=NAMESPACE,
                default=default,
                usd_attribute_name=usd_name,
                **kwargs,
            )
        )


class RigidBodyAttributes:
    """Device copies of the rigid-body attributes, validated on the host."""

    def __init__(self, model: newton.Model):
        self.model = model
        n = max(model.body_count, 1)
        dev = model.device
        self.angular_damping = wp.zeros(n, dtype=float, device=dev)
        self.linear_damping = wp.zeros(n, dtype=float, device=dev)
        self.max_linear_velocity = wp.zeros(n, dtype=float, device=dev)
        self.max_angular_velocity = wp.zeros(n, dtype=float, device=dev)
        self.max_depenetration_velocity = wp.zeros(n, dtype=float, device=dev)
        self.refresh()

    def _read(self, name: str) -> np.ndarray:
        default = RIGID_BODY_ATTRIBUTES[name][0]
        ns = getattr(self.model, NAMESPACE, None)
        values = getattr(ns, name, None) if ns is not None else None
        if values is None:
            return np.full(self.model.body_count, default, dtype=np.float64)
        return values.numpy().astype(np.float64)

    def refresh(self) -> None:
        """Read, validate (ValueError naming the attribute and body) and upload every attribute."""
        arrays = {}
        for name in RIGID_BODY_ATTRIBUTES:
            values = self._read(name)
            bad = np.nonzero(np.isnan(values) | (values < 0.0))[0]
            if name.endswith("damping"):
                bad = np.nonzero(~np.isfinite(values) | (values < 0.0))[0]
            if len(bad):
                b = int(bad[0])
                label = self.model.body_label[b] if b < len(self.model.body_label) else str(b)
                raise ValueError(
                    f"{NAMESPACE}:{name} of body {b} ('{label}') must be non-negative"
                    f"{' and finite' if name.endswith('damping') else ''}, got {values[b]!r}"
                )
            arrays[name] = values
        if self.model.body_count == 0:
            return
        self.angular_damping.assign(arrays["rigid_body_angular_damping"].astype(np.float32))
        self.linear_damping.assign(arrays["rigid_body_linear_damping"].astype(np.float32))
        # inf is kept as float32 inf: the clamps compare against it directly.
        self.max_linear_velocity.assign(arrays["rigid_body_max_linear_velocity"].astype(np.float32))
        self.max_angular_velocity.assign(arrays["rigid_body_max_angular_velocity"].astype(np.float32))
        self.max_depenetration_velocity.assign(arrays["rigid_body_max_depenetration_velocity"].astype(np.float32))
