"""The ``steel:`` rigid-body attributes: registration, USD names, validation, device copies.

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

The shape attributes (see :class:`ShapeContactAttributes`):

=======================================  =====  =======  =====================================  ==============================
attribute (namespace ``steel``)          freq.  default  USD name (MJCF)                        effect
=======================================  =====  =======  =====================================  ==============================
condim                                   shape  3        newton:steel:condim                    3/4/6 contact dimensionality
min_torsional_patch_radius [m]           shape  0        physxCollision:minTorsionalPatchRadius contact spin radius
adhesion [N]                             shape  0        newton:steel:adhesion (geom adhesion)  pull per contact point
=======================================  =====  =======  =====================================  ==============================

The joint DOF attribute ``joint_friction_load_coefficient`` (default 0, USD
``newton:steel:jointFrictionLoadCoefficient`` when authored, the older
``newton:steel:joint_friction_load_coefficient`` with a deprecation warning) adds ``c (|F| + |T|)`` to
a DOF's joint friction; it is validated and read by ``joints/friction.py``.

condim 4 adds a spin row to free-body contacts and condim 6 also a rolling pair
(``contacts/angular.py``); a positive torsional radius adds PhysX patch torsion to articulated contacts
(``contacts/torsion.py``); adhesion pulls on the normal rows (``contacts/adhesion.py``). Every value is
validated.

Damping applies to free bodies and floating bases (the child of a world-rooted FREE joint);
joints with a parent body are not damped. Without registration every body takes the defaults, so
the 0.05 root angular damping is always on, as in the reference.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

import newton

from .joints.friction import register_load_coefficient
from .contacts.torsion import check_torsion_shapes

NAMESPACE = "steel"

# name -> (default, USD attribute, USD value transform)
RIGID_BODY_ATTRIBUTES = {
    "rigid_body_angular_damping": (0.05, "physxRigidBody:angularDamping", None),
    "rigid_body_linear_damping": (0.0, "physxRigidBody:linearDamping", None),
    "rigid_body_max_linear_velocity": (math.inf, "physxRigidBody:maxLinearVelocity", None),
    "rigid_body_max_angular_velocity": (math.inf, "physxRigidBody:maxAngularVelocity", "degrees"),
    "rigid_body_max_depenetration_velocity": (math.inf, "physxRigidBody:maxDepenetrationVelocity", None),
}


# name -> (dtype, default, USD attribute, MJCF attribute). condim is not read from MJCF: the importer
# leaves a geom's condim to SolverMuJoCo's mujoco:condim, so its MJCF name is one no file authors.
SHAPE_ATTRIBUTES = {
    "condim": (wp.int32, 3, "newton:steel:condim", "newton_steel_condim"),
    "min_torsional_patch_radius": (wp.float32, 0.0, "physxCollision:minTorsionalPatchRadius", None),
    "adhesion": (wp.float32, 0.0, "newton:steel:adhesion", "adhesion"),
}
CONDIM_VALUES = (3, 4, 6)


def _degrees_to_radians(value, context=None):
    return float(value) * math.pi / 180.0


def register_custom_attributes(builder: newton.ModelBuilder) -> None:
    """Declare the ``steel:`` body, shape and joint DOF attributes on ``builder`` (idempotent)."""
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
    for name, (dtype, default, usd_name, mjcf_name) in SHAPE_ATTRIBUTES.items():
        builder.add_custom_attribute(
            newton.ModelBuilder.CustomAttribute(
                name=name,
                dtype=dtype,
                frequency=newton.Model.AttributeFrequency.SHAPE,
                namespace=NAMESPACE,
                default=default,
                usd_attribute_name=usd_name,
                mjcf_attribute_name=mjcf_name,
            )
        )
    register_load_coefficient(builder)  # steel:joint_friction_load_coefficient (joints/friction.py)


class _Current:
    """A read-only attribute of :class:`RigidBodyAttributes`: the array the kernels read for one ``steel:`` name."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, owner, cls=None):
        return self if owner is None else owner._current(self.name)


class RigidBodyAttributes:
    """The per-body attribute arrays the step kernels read, validated on the host.

    Where the model carries a registered ``steel:`` attribute as a float32 array, the kernels read
    the model's own array, so a value edited in place (``model.steel.rigid_body_linear_damping``)
    takes effect on the next step without ``notify_model_changed``, as in the reference. An array
    *replaced* on the model (``model.steel.rigid_body_angular_damping = wp.zeros(...)``) is picked up
    at the next step too, as the reference does (measured: a free body's spin of 4 rad/s decays by
    0.05 dt per step before such a replacement with zeros and holds 3.98004 rad/s after it, in both;
    ``tests/solvers/steel/test_attributes.py::test_a_replaced_angular_damping_matches_the_reference_step_for_step``):
    each property looks the model's array up by identity, and a new one is checked on first use
    (a float32 array of one value per body on the model's device, else ``ValueError`` naming it; its
    values as at construction where the host can read them) and then read live. The host validation
    runs at construction and on ``notify_model_changed(BODY_PROPERTIES)``; an unregistered (or
    deleted) attribute is a device array filled with its default.
    """

    def __init__(self, model: newton.Model):
        self.model = model
        self._bound = {}  # name -> (the model's array it was bound from or None, the array the kernels read)
        self.refresh()

    def _source(self, name: str):
        ns = getattr(self.model, NAMESPACE, None)
        return getattr(ns, name, None) if ns is not None else None

    def _read(self, name: str, source) -> np.ndarray:
        if source is None:
            return np.full(self.model.body_count, RIGID_BODY_ATTRIBUTES[name][0], dtype=np.float64)
        return source.numpy().astype(np.float64)

    def _live(self, source) -> bool:
        """``source`` can be read by the kernels as it is: float32, one value per body, on the model's device."""
        return bool(self.model.body_count and isinstance(source, wp.array) and source.dtype == wp.float32
                    and source.shape == (self.model.body_count,) and source.device == self.model.device)

    def _device_array(self, source, values: np.ndarray) -> wp.array:
        if self._live(source):
            return source  # read live every step
        padded = values if len(values) else np.zeros(1)
        # inf is kept as float32 inf: the clamps compare against it directly.
        return wp.array(padded.astype(np.float32), dtype=float, device=self.model.device)

    def _validate(self, name: str, values: np.ndarray) -> None:
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

    def refresh(self) -> None:
        """Read and validate every attribute (ValueError naming the attribute and body), then bind the arrays."""
        sources = {name: self._source(name) for name in RIGID_BODY_ATTRIBUTES}
        arrays = {}
        for name, source in sources.items():
            arrays[name] = self._read(name, source)
            self._validate(name, arrays[name])
        # Bind only after every attribute validated, so a failed refresh keeps the previous arrays.
        self._bound = {name: (sources[name], self._device_array(sources[name], arrays[name])) for name in sources}

    def _current(self, name: str) -> wp.array:
        """The array the kernels read for ``name``: the bound one while the model still holds the array it was bound
        from, else the model's new array, checked once (a replacement is picked up at the next step)."""
        bound_source, array = self._bound[name]
        source = self._source(name)
        if source is bound_source:
            return array
        if source is not None and not self._live(source):
            shape = getattr(source, "shape", None)
            raise ValueError(
                f"model.{NAMESPACE}.{name} was replaced by {type(source).__name__} of shape {shape}, dtype "
                f"{getattr(source, 'dtype', None)} on {getattr(source, 'device', None)}; it must be a float32 "
                f"wp.array of {self.model.body_count} values (one per body) on {self.model.device}")
        if source is None:  # deleted: the default, as for an unregistered attribute
            values = self._read(name, None)
            self._validate(name, values)
            array = self._device_array(None, values)
        else:
            if not self.model.device.is_capturing:  # a capture cannot read the values: checked at the next notify
                self._validate(name, self._read(name, source))
            array = source
        self._bound[name] = (source, array)
        return array

    # The arrays the kernels read, each the model's current one (see _current).
    angular_damping = _Current("rigid_body_angular_damping")  # [1/s] per body
    linear_damping = _Current("rigid_body_linear_damping")  # [1/s] per body
    max_linear_velocity = _Current("rigid_body_max_linear_velocity")  # [m/s] per body
    max_angular_velocity = _Current("rigid_body_max_angular_velocity")  # [rad/s] per body
    max_depenetration_velocity = _Current("rigid_body_max_depenetration_velocity")  # [m/s] per body


class ShapeContactAttributes:
    """Validation of the ``steel:`` shape attributes (``condim``, ``min_torsional_patch_radius``, ``adhesion``).

    Runs at construction and on ``notify_model_changed(SHAPE_PROPERTIES)``. ``ValueError``: a
    non-finite ``shape_material_mu`` (NaN or inf: Newton's builder refuses them too, and inf times a
    zero normal impulse is NaN in the friction disk; a huge finite one sticks); a condim
    other than 3, 4 or 6; a negative or non-finite adhesion [N] or torsional radius [m]; a negative
    or non-finite ``shape_material_mu_torsional`` [m] (condim >= 4) or ``shape_material_mu_rolling``
    [m] (condim 6) on a shape whose condim enables it.

    condim 4 gives free-body contacts a spin row, condim 6 also a rolling pair. ``torsion_enabled``
    is fixed at construction (any condim above 3): a solver built without it reserves no angular
    rows and ignores later condim edits (rebuild it to gain them), as the seed states;
    ``free_rows_per_contact`` sizes the free-body rows from the condims seen at construction (3, 4
    with a condim 4, 6 with a condim 6), so a later edit to 6 may overflow and is reported.
    ``condim`` is the array the contact kernel reads; a valid edit followed by
    ``notify_model_changed(SHAPE_PROPERTIES)`` takes effect on a solver built with the rows.

    ``adhesion_enabled`` and ``patch_torsion_enabled`` are also fixed at construction (any positive
    value); the contact kernel then reads the model's own ``steel:adhesion`` and
    ``steel:min_torsional_patch_radius`` arrays every step (:attr:`adhesion`, :attr:`torsion_radius`),
    so writes take effect at once. A positive radius on a shape type the torsion rows do not support
    raises ``ValueError``.
    """

    def __init__(self, model: newton.Model):
        self.model = model
        self.torsion_enabled = False
        self.refresh()
        values = self._read("condim")
        self.torsion_enabled = values is not None and bool((values > 3).any())
        self.free_rows_per_contact = 3
        if self.torsion_enabled:
            self.free_rows_per_contact = 6 if bool((values == 6).any()) else 4
        positive = self._positive("adhesion")
        self.adhesion_enabled = positive is not None and bool(positive.any())
        positive = self._positive("min_torsional_patch_radius")
        self.patch_torsion_enabled = positive is not None and bool(positive.any())
        self._no_adhesion = wp.zeros(1, dtype=float, device=model.device)
        self._bind()

    @property
    def adhesion(self) -> wp.array:
        """The model's ``steel:adhesion`` [N] per shape, looked up at each call (a placeholder when absent)."""
        ns = getattr(self.model, NAMESPACE, None)
        values = getattr(ns, "adhesion", None) if ns is not None else None
        return self._no_adhesion if values is None or not self.adhesion_enabled else values

    @property
    def torsion_radius(self) -> wp.array:
        """The model's ``steel:min_torsional_patch_radius`` [m] per shape, looked up at each call.

        A placeholder when absent or when the solver was built without a positive radius (the
        contact kernel then never reads it).
        """
        ns = getattr(self.model, NAMESPACE, None)
        values = getattr(ns, "min_torsional_patch_radius", None) if ns is not None else None
        return self._no_adhesion if values is None or not self.patch_torsion_enabled else values

    def _bind(self) -> None:
        values = self._read("condim")
        if values is None or not len(values):
            values = np.full(1, 3)
        self.condim = wp.array(values.astype(np.int32), dtype=wp.int32, device=self.model.device)

    def _read(self, name: str):
        ns = getattr(self.model, NAMESPACE, None)
        values = getattr(ns, name, None) if ns is not None else None
        return None if values is None else values.numpy()

    def _fail(self, error, name: str, shape: int, value, requirement: str):
        label = self.model.shape_label[shape] if shape < len(self.model.shape_label) else str(shape)
        raise error(f"{NAMESPACE}:{name} of shape {shape} ('{label}') {requirement}, got {value!r}")

    def refresh(self) -> None:
        """Validate every shape attribute; raise ValueError naming the shape."""
        mu = self.model.shape_material_mu.numpy().astype(np.float64) if self.model.shape_count else np.zeros(0)
        bad = np.nonzero(~np.isfinite(mu))[0]
        if len(bad):
            s = int(bad[0])
            label = self.model.shape_label[s] if s < len(self.model.shape_label) else str(s)
            raise ValueError(f"shape_material_mu of shape {s} ('{label}') must be finite, got {float(mu[s])!r}")
        condim = self._read("condim")
        if condim is not None:
            bad = np.nonzero(~np.isin(condim, CONDIM_VALUES))[0]
            if len(bad):
                self._fail(ValueError, "condim", int(bad[0]), int(condim[bad[0]]), "must be 3, 4 or 6")
            for coefficient, lowest in (("shape_material_mu_torsional", 4), ("shape_material_mu_rolling", 6)):
                values = getattr(self.model, coefficient).numpy().astype(np.float64)
                bad = np.nonzero((condim >= lowest) & (~np.isfinite(values) | (values < 0.0)))[0]
                if len(bad):
                    self._fail(ValueError, "condim", int(bad[0]), int(condim[bad[0]]),
                               f"enables {coefficient}={values[bad[0]]!r}, which must be non-negative and finite;"
                               " condim")
        for name in ("min_torsional_patch_radius", "adhesion"):
            values = self._read(name)
            if values is None:
                continue
            values = values.astype(np.float64)
            bad = np.nonzero(~np.isfinite(values) | (values < 0.0))[0]
            if len(bad):
                self._fail(ValueError, name, int(bad[0]), float(values[bad[0]]), "must be non-negative and finite")
        radius = self._read("min_torsional_patch_radius")
        if radius is not None:
            check_torsion_shapes(self.model, radius.astype(np.float64))
        if hasattr(self, "condim"):
            self._bind()

    def _positive(self, name: str):
        values = self._read(name)
        return None if values is None else values > 0.0
