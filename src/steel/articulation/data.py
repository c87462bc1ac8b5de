"""Per-step work buffers of the articulation core, declared once.

Every spatial quantity below is linear first, world orientation, about the owning
articulation's reference point ``articulation_origin`` (see :mod:`steel.articulation.spatial`).

=====================  ==========================================================================  ===========
field                  meaning [units]                                                             shape
=====================  ==========================================================================  ===========
articulation_origin    reference point of the articulation: its first body's COM, world [m]          (articulation,)
body_v                 body twist about the reference point ``(v_r, w)`` [m/s, rad/s]                (body,)
body_c                 velocity-product acceleration of the inbound joint ``dS/dt qd`` [m/s², rad/s²] (body,)
dof_S                  motion-subspace column of each DOF: twist per unit ``qd`` [m/s or rad/s]       (dof,)
body_a                 RNEA scratch: spatial acceleration with ``qdd = 0``, gravity as a base        (body,)
                       acceleration ``(-g, 0)`` [m/s², rad/s²]
body_f                 RNEA scratch: net spatial force the inbound joint transmits ``(f, tau_r)``     (body,)
                       [N, N·m]
body_Ic                CRBA scratch: composite spatial inertia of the body's subtree [kg, kg·m, kg·m²] (body,)
dof_bias               ``C(q, qd) qd + g(q) - J^T f_ext - joint_f`` [N or N·m]; the generalized force  (dof,)
                       that keeps ``qdd = 0`` once every applied force is accounted for
mass_matrix            joint-space inertia ``H`` with armature, one dense row-major block per          (sum n_a²,)
                       articulation at ``plan.mass_start[a]`` [kg, kg·m, kg·m²]
mass_factor            lower Cholesky factor ``L`` of ``H`` (``H = L L^T``), same layout               (sum n_a²,)
=====================  ==========================================================================  ===========

``dof_bias`` sign: the unconstrained joint acceleration is ``qdd = -H^-1 dof_bias``.
"""

from __future__ import annotations

import warp as wp

from ..structs import struct_of
from .topology import ArticulationPlan


class ArticulationData:
    """Work buffers for one :class:`ArticulationPlan`, allocated once on the plan's device."""

    def __init__(self, plan: ArticulationPlan):
        dev = plan.device
        nb = max(plan.body_count, 1)
        nd = max(plan.dof_count, 1)
        self.articulation_origin = wp.zeros(max(plan.articulation_count, 1), dtype=wp.vec3, device=dev)
        self.body_v = wp.zeros(nb, dtype=wp.spatial_vector, device=dev)
        self.body_c = wp.zeros(nb, dtype=wp.spatial_vector, device=dev)
        self.dof_S = wp.zeros(nd, dtype=wp.spatial_vector, device=dev)
        self.body_a = wp.zeros(nb, dtype=wp.spatial_vector, device=dev)
        self.body_f = wp.zeros(nb, dtype=wp.spatial_vector, device=dev)
        self.body_Ic = wp.zeros(nb, dtype=wp.spatial_matrix, device=dev)
        self.dof_bias = wp.zeros(nd, dtype=float, device=dev)
        self.mass_matrix = wp.zeros(max(plan.mass_size, 1), dtype=float, device=dev)
        self.mass_factor = wp.zeros(max(plan.mass_size, 1), dtype=float, device=dev)
        # The same arrays as structs, for kernels and wp.funcs that take many (built once: never rebound).
        self.kinematics = struct_of(KinematicsBuffers, self)
        self.buffers = struct_of(CoreBuffers, self)


@wp.struct
class KinematicsBuffers:
    """What forward kinematics writes besides the body poses (``data.kinematics``): the first four rows of
    the table above. One struct, so that every kernel fusing :func:`articulation_forward_kinematics` passes
    the group as one argument instead of repeating four."""

    articulation_origin: wp.array[wp.vec3]
    body_v: wp.array[wp.spatial_vector]
    body_c: wp.array[wp.spatial_vector]
    dof_S: wp.array[wp.spatial_vector]


@wp.struct
class CoreBuffers:
    """:class:`ArticulationData`'s arrays as one Warp struct (``data.buffers``); the table above gives
    each field's meaning, units and shape. The arrays are never rebound, so the struct is built once."""

    kinematics: KinematicsBuffers  # articulation_origin, body_v, body_c, dof_S
    body_a: wp.array[wp.spatial_vector]
    body_f: wp.array[wp.spatial_vector]
    body_Ic: wp.array[wp.spatial_matrix]
    dof_bias: wp.array[float]
    mass_matrix: wp.array[float]
    mass_factor: wp.array[float]


def padded_blocks(plan: ArticulationPlan, flat: wp.array):
    """Host copy of a flat per-articulation matrix buffer as ``(articulation, max_dof, max_dof)``.

    The padding is zero, matching the layout of Newton's ``eval_mass_matrix``.
    """
    import numpy as np

    values = flat.numpy()
    n_max = plan.max_dof_count
    out = np.zeros((plan.articulation_count, n_max, n_max), dtype=values.dtype)
    for a in range(plan.articulation_count):
        n = int(plan.dof_count_np[a])
        base = int(plan.mass_start_np[a])
        out[a, :n, :n] = values[base : base + n * n].reshape(n, n)
    return out
