"""How many rows each world may hold: explicit capacities, or a size derived from the model.

The rule when the user passes no capacity (``None``, our default): a world can meet at most
``ceil(rigid_contact_max / world_count)`` contacts in a replicated scene, and each contact takes at
most three rows (normal and two friction), so

    articulation_constraint_max = 3 * contacts_per_world + limit_bounds_per_world   (if the model
                                  has articulations other than free single bodies, else 0)
    free_body_constraint_max    = 3 * contacts_per_world                                 (if the
                                  model has free single bodies, else 0)

(with 4 rows per free-body contact when a shape has ``steel:condim`` 4, the spin row, and 6 when
one has condim 6, the spin row and the rolling pair; 4 per articulated contact when a shape has a
positive ``steel:min_torsional_patch_radius``, the torsion row a region's first contact hosts), where
``limit_bounds_per_world`` (only with ``enable_joint_limits``) is the largest number of
finite lower and upper bounds of PRISMATIC, REVOLUTE and D6 DOFs in one world, plus one row per
PRISMATIC, REVOLUTE, BALL and D6 DOF with ``enable_joint_friction``, two per PRISMATIC, REVOLUTE and
D6 DOF with ``enable_joint_velocity_limits``, one per such DOF with ``drive_mode="rows"``, one per mimic
follower DOF and 3, 5 or 6 per loop-closing BALL, REVOLUTE or FIXED joint. The
reference's fixed 32 rows per world overflow on nv_humanoid at its initial pose (88 contacts per
world); this rule sizes that scene at 2,700 rows per world. An explicit value is honoured exactly;
rows beyond it are dropped and flagged, never written out of bounds.
"""

from __future__ import annotations

import math

import numpy as np

import newton

from ..joints.friction import FRICTION_TYPES
from ..joints.loop_closures import closure_rows_per_world
from ..joints.mimic import mimic_rows_per_world

ROWS_PER_CONTACT = 3


def _max_per_world(model: newton.Model, types, count) -> int:
    """Largest sum over the worlds of ``count(dof_slice)`` for articulated joints of ``types``."""
    if model.joint_count == 0:
        return 0
    jtype = model.joint_type.numpy()
    jart = model.joint_articulation.numpy()
    jworld = np.maximum(model.joint_world.numpy(), 0)
    qd_start = model.joint_qd_start.numpy()
    types = [int(t) for t in types]
    per_world = np.zeros(max(model.world_count, 1), dtype=np.int64)
    for j in range(model.joint_count):
        if jart[j] >= 0 and int(jtype[j]) in types:
            per_world[jworld[j]] += count(slice(qd_start[j], qd_start[j + 1]))
    return int(per_world.max())


LIMITED_TYPES = (newton.JointType.PRISMATIC, newton.JointType.REVOLUTE, newton.JointType.D6)


def limited_dofs_per_world(model: newton.Model) -> int:
    """Largest count of finite-bounded PRISMATIC/REVOLUTE/D6 DOF bounds over the worlds."""
    if model.joint_count == 0:
        return 0
    lower = model.joint_limit_lower.numpy()
    upper = model.joint_limit_upper.numpy()
    return _max_per_world(model, LIMITED_TYPES,
                          lambda d: int(np.isfinite(lower[d]).sum() + np.isfinite(upper[d]).sum()))


def joint_row_dofs_per_world(model: newton.Model, options) -> int:
    """Rows of the one-DOF joint models per world: friction, velocity-limit pairs and drive rows.

    Sized from the joint types, not from the current coefficients, which may be edited in place.
    """
    per_dof = 2 * int(options.enable_joint_velocity_limits) + int(options.drive_mode == "rows")
    rows = _max_per_world(model, LIMITED_TYPES, lambda d: per_dof * (d.stop - d.start)) if per_dof else 0
    if options.enable_joint_friction:
        rows += _max_per_world(model, FRICTION_TYPES, lambda d: d.stop - d.start)
    return rows + mimic_rows_per_world(model) + closure_rows_per_world(model)


def resolved_rigid_contact_max(model: newton.Model) -> int:
    """The model's rigid contact capacity; resolved through ``newton.CollisionPipeline`` when unset.

    Newton publishes ``model.rigid_contact_max`` when the first pipeline is built and later
    pipelines reuse it, so building one here gives the capacity every default pipeline will have.
    """
    if model.rigid_contact_max is None:
        newton.CollisionPipeline(model)
    return int(model.rigid_contact_max or 0)


def row_capacities(model: newton.Model, options, has_articulated: bool, has_free_bodies: bool,
                   free_rows_per_contact: int = ROWS_PER_CONTACT,
                   articulated_rows_per_contact: int = ROWS_PER_CONTACT) -> tuple[int, int]:
    """``(articulation_capacity, free_body_capacity)`` per world under the rule above."""
    worlds = max(int(model.world_count), 1)
    contacts_per_world = math.ceil(resolved_rigid_contact_max(model) / worlds)
    art = options.articulation_constraint_max
    if art is None:
        art = 0
        if has_articulated:
            art = articulated_rows_per_contact * contacts_per_world
            if options.enable_joint_limits:
                art += limited_dofs_per_world(model)
            art += joint_row_dofs_per_world(model, options)
    free = options.free_body_constraint_max
    if free is None:
        free = free_rows_per_contact * contacts_per_world if has_free_bodies else 0
    return int(art), int(free)
