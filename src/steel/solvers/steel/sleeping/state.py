"""Sleeping's device state and the tables it is built from (the policy is in :mod:`.stages`).

:class:`SleepArrays` holds every device array of sleeping as one Warp struct, so a kernel takes a
few arguments rather than twenty (on the CPU a launch's cost is mostly argument packing);
:class:`SleepState` builds it once at construction with the per-articulation tables below: which
articulations never sleep (:func:`articulation_stays_awake`), which are welded to the world, and
the articulation of each coordinate and DOF.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from ....articulation.joint_model import JointModel
from ....structs import struct_of
from .islands import Islands
from .model_diff import ModelSnapshot
from ..joints.loop_closures import closure_joints

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


def articulation_stays_awake(model: newton.Model, plan) -> np.ndarray:
    """Per articulation: 1 when a DOF has a drive gain (``joint_target_ke`` or ``joint_target_kd``)
    or a passive spring (``joint_stiffness``, as the seed asks), or when a mimic row (joint-owned or a
    legacy mimic constraint, ``joints/mimic.py``) or a loop-closing joint (``joints/loop_closures.py``)
    binds it: such articulations never sleep."""
    n = plan.articulation_count
    out = np.zeros(max(n, 1), dtype=np.int32)
    if model.joint_dof_count == 0:
        return out
    joint_art = model.joint_articulation.numpy()
    bound = [j for j in np.nonzero(model.joint_mimic_joint.numpy() >= 0)[0]] if model.joint_mimic_joint is not None \
        else []
    legacy = getattr(model, "constraint_mimic_joint0", None)
    if legacy is not None:
        bound += [int(j) for j in legacy.numpy() if j >= 0]
    for j in bound:
        if joint_art[j] >= 0:
            out[joint_art[j]] = 1
    body_art = plan.body_articulation_np
    parent, child = model.joint_parent.numpy(), model.joint_child.numpy()
    for j in closure_joints(model):
        for b in (parent[j], child[j]):
            if b >= 0 and body_art[b] >= 0:
                out[body_art[b]] = 1
    active = ((model.joint_target_ke.numpy() != 0.0) | (model.joint_target_kd.numpy() != 0.0)
              | (model.joint_stiffness.numpy() != 0.0))
    dof_articulation = _dof_articulation(model)
    for d in np.nonzero(active)[0]:
        if dof_articulation[d] >= 0:
            out[dof_articulation[d]] = 1
    return out


def _dof_articulation(model: newton.Model) -> np.ndarray:
    """Articulation of each DOF (-1: none)."""
    return _entry_articulation(model, model.joint_qd_start, model.joint_dof_count)


def _coord_articulation(model: newton.Model) -> np.ndarray:
    """Articulation of each joint coordinate (-1: none)."""
    return _entry_articulation(model, model.joint_q_start, model.joint_coord_count)


def _entry_articulation(model: newton.Model, joint_start: wp.array, count: int) -> np.ndarray:
    out = np.full(max(count, 1), -1, dtype=np.int32)
    starts, arts = joint_start.numpy(), model.joint_articulation.numpy()
    for j in range(model.joint_count):
        out[starts[j]:starts[j + 1]] = arts[j]
    return out


def _fixed_base(model: newton.Model, plan, body_responds: np.ndarray) -> np.ndarray:
    """Per articulation: 1 when its root joint is welded to the world (not FREE/DISTANCE) and some body responds."""
    n = plan.articulation_count
    out = np.zeros(max(n, 1), dtype=np.int32)
    if n == 0:
        return out
    types, parents, children = model.joint_type.numpy(), model.joint_parent.numpy(), model.joint_child.numpy()
    floating = (int(newton.JointType.FREE), int(newton.JointType.DISTANCE))
    for a in range(n):
        joints = plan.articulation_joints(a)
        roots = [j for j in joints if parents[j] < 0]
        welded = any(int(types[j]) not in floating for j in roots)
        out[a] = int(welded and any(body_responds[children[j]] for j in joints))
    return out


@wp.struct
class SleepArrays:
    """Sleeping's device arrays as one Warp struct, built once (a kernel takes it as one argument).
    Comments: meaning [units] (shape); ``n`` is the articulation count."""

    # Model (the arrays, fixed at construction):
    articulation_start: wp.array[int]  # (n + 1,)
    joint_q_start: wp.array[int]  # (joint + 1,)
    joint_qd_start: wp.array[int]  # (joint + 1,)
    joint_child: wp.array[int]  # (joint,)
    # Tables:
    coord_articulation: wp.array[wp.int32]  # articulation of each coordinate, -1: none  (coord,)
    dof_articulation: wp.array[wp.int32]  # articulation of each DOF, -1: none  (dof,)
    body_articulation: wp.array[wp.int32]  # articulation of each body, -1: none  (body,)
    articulation_world: wp.array[wp.int32]  # (n,)
    articulation_stay_awake: wp.array[wp.int32]  # 1: a drive gain or passive spring, never sleeps  (n,)
    world_overflow: wp.array[wp.bool]  # the rows' overflow flags: a world dropped rows  (world + 1,)
    # Islands of this step (sleeping/islands.py):
    articulation_fixed_base: wp.array[wp.int32]  # (n,)
    articulation_label: wp.array[wp.int32]  # (n,)
    articulation_previous: wp.array[wp.int32]  # last step's label  (n,)
    articulation_supported: wp.array[wp.int32]  # equal across an island  (n,)
    # Sleep state:
    articulation_asleep: wp.array[wp.int32]  # (n,)
    articulation_timer: wp.array[wp.float32]  # quiet time [s]  (n,)
    articulation_wake: wp.array[wp.int32]  # asleep and asked to wake by this step's input  (n,)
    world_wake: wp.array[wp.int32]  # its gravity changed or contacts were dropped this step  (world,)
    gravity_seen: wp.array[wp.vec3]  # gravity at the last step [m/s^2]  (world,)
    island_awake: wp.array[wp.int32]  # at labels: the island is awake or wakes this step  (n,)
    island_timer: wp.array[wp.float32]  # at labels: smallest member timer [s]  (n,)
    some_island_awake: wp.array[wp.int32]  # an island is awake or must wake this step  (1,)
    any_awake: wp.array[wp.int32]  # an articulation is awake after the fall-asleep decision  (1,)
    frozen_joint_q: wp.array[float]  # published coordinates of asleep articulations  (coord,)
    frozen_body_q: wp.array[wp.transform]  # published poses of asleep articulations  (body,)


class SleepState:
    """Device state of sleeping (see the module docstring); ``None`` on a solver without sleeping."""

    def __init__(self, sm, sd):
        model, plan, dev = sm.model, sm.core.plan, sm.model.device
        opts = sm.options
        self.linear_threshold = float(opts.sleep_linear_threshold)
        self.angular_threshold = float(opts.sleep_angular_threshold)
        self.quiet_time = float(opts.sleep_quiet_time)
        self.skip_constraints = bool(opts.sleep_skip_constraints)
        n = max(plan.articulation_count, 1)
        self.articulation_count = plan.articulation_count
        world_count = max(int(model.world_count), 1)
        self.world_count = world_count
        body_art = plan.body_articulation_np if model.body_count else np.zeros(0, np.int32)
        responds = sm.tables.body_responds_np
        self.islands = Islands(wp.array(_fixed_base(model, plan, responds), dtype=wp.int32, device=dev), dev)
        self.snapshot = ModelSnapshot(sm, _dof_articulation(model), _coord_articulation(model))
        # Stand-ins for absent optional inputs (gravity, body_f, joint_f) and outputs, never read or written:
        self.no_float = wp.zeros(1, dtype=float, device=dev)
        self.no_int32 = wp.zeros(1, dtype=wp.int32, device=dev)
        self.no_vec3 = wp.zeros(1, dtype=wp.vec3, device=dev)
        self.no_spatial = wp.zeros(1, dtype=wp.spatial_vector, device=dev)
        self.no_transform = wp.zeros(1, dtype=wp.transform, device=dev)

        arrays = SleepArrays()
        arrays.articulation_start = model.articulation_start
        arrays.joint_q_start = model.joint_q_start
        arrays.joint_qd_start = model.joint_qd_start
        arrays.joint_child = model.joint_child
        arrays.coord_articulation = wp.array(_coord_articulation(model), dtype=wp.int32, device=dev)
        arrays.dof_articulation = wp.array(_dof_articulation(model), dtype=wp.int32, device=dev)
        arrays.body_articulation = wp.array(body_art if len(body_art) else np.full(1, -1, np.int32),
                                            dtype=wp.int32, device=dev)
        arrays.articulation_world = wp.array(sm.tables.articulation_row_world.numpy()[:n], dtype=wp.int32,
                                             device=dev)
        arrays.articulation_stay_awake = wp.array(articulation_stays_awake(model, plan), dtype=wp.int32, device=dev)
        arrays.world_overflow = sd.rows.constraint_overflow
        arrays.articulation_fixed_base = self.islands.articulation_fixed_base
        arrays.articulation_label = self.islands.articulation_label
        arrays.articulation_previous = self.islands.articulation_previous
        arrays.articulation_supported = self.islands.articulation_supported
        arrays.articulation_asleep = wp.zeros(n, dtype=wp.int32, device=dev)
        arrays.articulation_timer = wp.zeros(n, dtype=wp.float32, device=dev)
        arrays.articulation_wake = wp.zeros(n, dtype=wp.int32, device=dev)
        arrays.world_wake = wp.zeros(world_count, dtype=wp.int32, device=dev)
        has_gravity = model.gravity is not None
        arrays.gravity_seen = wp.clone(model.gravity) if has_gravity else self.no_vec3
        self.gravity_seen = arrays.gravity_seen if has_gravity else None
        arrays.island_awake = wp.zeros(n, dtype=wp.int32, device=dev)
        arrays.island_timer = wp.zeros(n, dtype=wp.float32, device=dev)
        arrays.some_island_awake = wp.zeros(1, dtype=wp.int32, device=dev)
        arrays.any_awake = wp.zeros(1, dtype=wp.int32, device=dev)
        arrays.frozen_joint_q = wp.zeros(max(model.joint_coord_count, 1), dtype=float, device=dev)
        arrays.frozen_body_q = wp.zeros(max(model.body_count, 1), dtype=wp.transform, device=dev)
        self.arrays = arrays
        # Host handles of the arrays the solver and the tests read by name:
        self.articulation_asleep = arrays.articulation_asleep
        self.articulation_timer = arrays.articulation_timer
        self.articulation_world = arrays.articulation_world
        self.articulation_stay_awake = arrays.articulation_stay_awake
        self.body_articulation = arrays.body_articulation
        self.some_island_awake = arrays.some_island_awake
        self.any_awake = arrays.any_awake
        if self.skip_constraints:
            # Every kinematics, dynamics and row kernel of the step leaves asleep articulations alone.
            sm.core.plan.joints.articulation_skip = arrays.articulation_asleep
        # The joint struct with the asleep flags as its skip list, whatever sleep_skip_constraints says: body_parent_f
        # of an asleep body keeps its last awake value (observables.py). A second struct, not a swapped field.
        self.joints_skipping_asleep = struct_of(JointModel, sm.core.plan.joints,
                                                articulation_skip=arrays.articulation_asleep)

    def refresh(self, sm) -> None:
        """Re-read the stay-awake table (drive gains and springs may have changed)."""
        self.articulation_stay_awake.assign(articulation_stays_awake(sm.model, sm.core.plan))
