"""Which articulations a ``notify_model_changed`` touches: host snapshots of the flagged model arrays, diffed.

Sleeping's wake reason "notify_model_changed for its properties" wakes only the islands whose
joints, DOFs, bodies or shapes changed. For each notify flag this module knows the model arrays it
covers (Newton's and the ``steel:`` custom attributes; a joint friction edit is ``joint_friction`` or
``steel:joint_friction_load_coefficient``) and the entity each is indexed by; it keeps a host copy
of each array, and on a notify compares the flagged arrays with their copies row by row, bitwise (a
NaN written over a NaN is no change; any other write that changes a bit is), then renews the copies.
A changed row maps to the articulation that owns it:

* a body or shape to its body's articulation; a joint, DOF or coordinate to its joint's;
* a changed row owned by static geometry, a kinematic or non-responding body, a prescribed DOF or
  nothing, a changed ``body_flags`` (kinematic membership), or any flag this module has no arrays
  for (model, constraint, tendon, actuator, shape type), wakes every articulation: what rests on a
  changed static or kinematic owner is not known here.

A replaced array with a different entity count raises ``ValueError`` before anything changes.
Reading the arrays is a host read, so a notify with sleeping runs outside graph capture.
"""

from __future__ import annotations

import numpy as np

import newton

from ..attributes import NAMESPACE, RIGID_BODY_ATTRIBUTES, SHAPE_ATTRIBUTES
from ..joints.friction import LOAD_ATTRIBUTE

_F = newton.ModelFlags
_DOF_FLAGS = int(_F.JOINT_DOF_PROPERTIES) | int(_F.JOINT_DOF_FORCE_PROPERTIES) | int(_F.JOINT_DOF_INERTIAL_PROPERTIES)
_BODY_FLAGS = int(_F.BODY_PROPERTIES) | int(_F.BODY_INERTIAL_PROPERTIES)
# flag bits -> (array name, entity); "steel:" names are custom attributes of the model's namespace.
GROUPS = {
    int(_F.JOINT_PROPERTIES): [("joint_X_p", "joint"), ("joint_X_c", "joint"), ("joint_enabled", "joint")],
    _DOF_FLAGS: [(name, "dof") for name in (
        "joint_axis", "joint_armature", "joint_target_ke", "joint_target_kd", "joint_target_mode", "joint_damping",
        "joint_stiffness", "joint_friction", "joint_limit_lower", "joint_limit_upper", "joint_limit_ke",
        "joint_limit_kd", "joint_effort_limit", "joint_velocity_limit")]
    + [(f"steel:{LOAD_ATTRIBUTE}", "dof")],  # joint friction's load coefficient: a friction edit
    int(_F.JOINT_REFERENCE_POSE_PROPERTIES): [("joint_rest_q", "coord")],
    _BODY_FLAGS: [(name, "body") for name in ("body_mass", "body_inertia", "body_com", "body_inv_mass",
                                               "body_inv_inertia", "body_flags")]
    + [(f"steel:{name}", "body") for name in RIGID_BODY_ATTRIBUTES],
    int(_F.SHAPE_PROPERTIES): [(name, "shape") for name in (
        "shape_transform", "shape_scale", "shape_margin", "shape_gap", "shape_flags", "shape_material_mu",
        "shape_material_restitution", "shape_material_mu_torsional", "shape_material_mu_rolling",
        "shape_material_ke", "shape_material_kd", "shape_material_kf", "shape_material_ka")]
    + [(f"steel:{name}", "shape") for name in SHAPE_ATTRIBUTES],
}
_COVERED = 0
for _bits in GROUPS:
    _COVERED |= _bits


def _array(model: newton.Model, name: str):
    if name.startswith("steel:"):
        ns = getattr(model, NAMESPACE, None)
        return getattr(ns, name[6:], None) if ns is not None else None
    return getattr(model, name, None)


def _rows(values: np.ndarray) -> np.ndarray:
    """Each entity's bytes as one row (bitwise comparison, NaN payloads included)."""
    values = np.ascontiguousarray(values)
    return values.view(np.uint8).reshape(values.shape[0], -1) if values.size else values.reshape(len(values), 0)


class ModelSnapshot:
    """Host copies of the arrays of :data:`GROUPS` and the entity owners (see the module docstring)."""

    def __init__(self, sm, dof_articulation: np.ndarray, coord_articulation: np.ndarray):
        self.sm, self.model = sm, sm.model
        self.dof_articulation = dof_articulation
        self.coord_articulation = coord_articulation
        self.copies = {}
        for arrays in GROUPS.values():
            for name, _entity in arrays:
                values = _array(self.model, name)
                if values is not None:
                    self.copies[name] = values.numpy().copy()

    def changed(self, flags: int) -> np.ndarray | None:
        """Articulations whose arrays under ``flags`` changed since the last call (renewing the
        copies), or ``None`` when every articulation must wake.

        Raises:
            ValueError: a flagged array now has a different entity count; nothing is renewed.
        """
        current = {}
        for bits, arrays in GROUPS.items():
            if not flags & bits:
                continue
            for name, _entity in arrays:
                values = _array(self.model, name)
                if values is None or name not in self.copies:
                    continue
                values = values.numpy()
                if values.shape[0] != self.copies[name].shape[0]:
                    raise ValueError(f"notify_model_changed: {name} has {values.shape[0]} entries but the model had "
                                     f"{self.copies[name].shape[0]}; a replaced array must keep its entity count")
                current[name] = values
        wake_all = bool(flags & ~_COVERED)
        owner_of = self._owners()
        owners = set()
        entity_of = {name: entity for arrays in GROUPS.values() for name, entity in arrays}
        for name, values in current.items():
            rows = np.nonzero((_rows(values) != _rows(self.copies[name])).any(axis=1))[0]
            if len(rows) == 0:
                continue
            if name == "body_flags":
                wake_all = True  # kinematic membership changed: the islands themselves change
            owner = owner_of[entity_of[name]][rows]
            wake_all |= bool((owner < 0).any())
            owners.update(int(a) for a in owner if a >= 0)
            self.copies[name] = values.copy()
        if wake_all:
            return None
        return np.array(sorted(owners), dtype=np.int32)

    def _owners(self) -> dict[str, np.ndarray]:
        """Owner articulation per entity under the solver's current tables; -1: a static,
        kinematic or unowned entity (its change wakes every island)."""
        model, tables = self.model, self.sm.tables
        joint_art = model.joint_articulation.numpy() if model.joint_count else np.zeros(0, np.int32)
        body_art = self.sm.core.plan.body_articulation_np if model.body_count else np.zeros(0, np.int32)
        body_owner = np.where(tables.body_responds_np[:model.body_count].astype(bool), body_art[:model.body_count], -1)
        shape_body = model.shape_body.numpy() if model.shape_count else np.zeros(0, np.int32)
        shape_owner = np.full(len(shape_body), -1, dtype=np.int64)
        on_body = shape_body >= 0
        shape_owner[on_body] = body_owner[shape_body[on_body]]
        dofs = model.joint_dof_count
        return {
            "joint": joint_art,
            "dof": np.where(tables.dof_is_kinematic_np[:dofs] != 0, -1, self.dof_articulation[:dofs]),
            "coord": self.coord_articulation[:model.joint_coord_count],
            "body": body_owner,
            "shape": shape_owner,
        }
