"""Construction-time checks of a model's articulations that both reduced-coordinate solvers share.

They run on the host once, before a solver keeps any allocation, and return what is wrong so
each solver can raise its own error naming the joint or body.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from .data import ArticulationData
from .dynamics import eval_articulation_dynamics
from .kinematics import eval_articulation_kinematics
from .topology import ArticulationPlan


def joint_name(model: newton.Model, j: int) -> str:
    """``joint 3 ('knee')``: how errors name a joint."""
    label = model.joint_label[j] if j < len(model.joint_label) else ""
    return f"joint {j} ('{label}')"


def body_name(model: newton.Model, b: int) -> str:
    """``body 2 ('shin')``: how errors name a body."""
    label = model.body_label[b] if 0 <= b < len(model.body_label) else ""
    return f"body {b} ('{label}')"


def dof_joint(model: newton.Model, dof: int) -> int:
    """The joint that owns DOF ``dof``."""
    return int(np.searchsorted(model.joint_qd_start.numpy(), dof, side="right") - 1)


def inverted_limits(model: newton.Model, *, include_nan: bool = False) -> list[tuple[int, int]]:
    """``(joint, dof)`` pairs whose finite ``joint_limit_lower`` exceeds ``joint_limit_upper``.

    With ``include_nan``, DOFs with a NaN bound are reported too (a NaN bound would silently
    disable the limit), in DOF order.
    """
    if model.joint_dof_count == 0:
        return []
    lower, upper = model.joint_limit_lower.numpy(), model.joint_limit_upper.numpy()
    invalid = np.isfinite(lower) & np.isfinite(upper) & (lower > upper)
    if include_nan:
        invalid |= np.isnan(lower) | np.isnan(upper)
    bad = np.nonzero(invalid)[0]
    return [(dof_joint(model, int(d)), int(d)) for d in bad]


# (model array, what its entries must be): a negative damping gain gave NaN, a negative effort limit
# lifted a chain above its pivot, a negative mass flew a body to z = 9.8e12 m.
DOF_GAIN_FIELDS = ("joint_target_kd", "joint_effort_limit")
BODY_MASS_FIELDS = ("body_mass",)


def negative_or_nan(model: newton.Model, fields: tuple[str, ...]) -> tuple[str, int, float] | None:
    """The first ``(field, index, value)`` of ``fields`` (model arrays) that is NaN or negative (inf passes:
    an unbounded effort limit), else None."""
    for field in fields:
        array = getattr(model, field, None)
        if array is None or not len(array):
            continue
        values = array.numpy().astype(np.float64)
        bad = np.nonzero(np.isnan(values) | (values < 0.0))[0]
        if len(bad):
            return field, int(bad[0]), float(values[bad[0]])
    return None


def massless_dofs(model: newton.Model, plan: ArticulationPlan, dof_is_prescribed: np.ndarray) -> list[int]:
    """Free (not prescribed) DOFs with no inertia to move: ``H_ii + armature`` is zero.

    ``H_ii = S_i^T I_c S_i`` is the inertia the DOF's subtree presents along its motion subspace
    (Featherstone, RBDA, 2008, section 6.2). It is zero when every body the DOF moves is massless
    along that direction (a massless leaf link without armature, a zero-mass body on a free
    joint); such a DOF has no defined acceleration. Evaluated at ``model.joint_q`` with the
    core's own kinematics and CRBA; a DOF counts as massless below ``1e-9`` times the largest
    diagonal entry of its articulation (exactly zero for an all-massless articulation).
    """
    if plan.dof_count == 0 or plan.articulation_count == 0:
        return []
    data = ArticulationData(plan)
    dev = model.device
    body_q = wp.zeros(max(model.body_count, 1), dtype=wp.transform, device=dev)
    body_qd = wp.zeros(max(model.body_count, 1), dtype=wp.spatial_vector, device=dev)
    joint_qd = wp.zeros(model.joint_dof_count, dtype=float, device=dev)
    eval_articulation_kinematics(model, plan, data, model.joint_q, joint_qd, body_q, body_qd)
    eval_articulation_dynamics(model, plan, data, body_q, compute_mass_matrix=True)
    H = data.mass_matrix.numpy()
    bad = []
    for a in range(plan.articulation_count):
        n, base, d0 = int(plan.dof_count_np[a]), int(plan.mass_start_np[a]), int(plan.dof_start_np[a])
        if n == 0:
            continue
        diag = H[base : base + n * n].reshape(n, n).diagonal()
        scale = float(np.max(np.abs(diag)))
        for k in range(n):
            if not dof_is_prescribed[d0 + k] and diag[k] <= 1e-9 * scale:
                bad.append(d0 + k)
    return bad
