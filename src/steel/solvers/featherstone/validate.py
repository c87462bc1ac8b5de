"""What SolverFeatherstone refuses at construction, and how it names the culprit.

Owns two host-side checks of the model, run once before the solver keeps any allocation (the
per-step checks of ``State``/``Control`` arrays are :mod:`steel.solvers.inputs`; non-finite
states are contained on the device, see :mod:`.forces`):

* **Inverted or NaN joint limits.** A DOF whose ``joint_limit_lower > joint_limit_upper`` has no
  admissible coordinate: the penalty of :mod:`.forces` would push it to whichever bound it is
  further from, every step. A NaN bound silently disables the limit. Both raise ``ValueError``
  naming the joint, its DOF and both values.
* **DOFs without inertia.** A free DOF (not prescribed by a kinematic child, not a mimic follower)
  whose diagonal entry ``H_ii + armature`` is zero has no defined acceleration: the factor clamps
  the pivot and any force sends the DOF to ``~1e12`` m/s² or rad/s². ``H_ii = S_i^T I_c S_i`` is
  the inertia of the DOF's whole subtree along its motion subspace (Featherstone, *Rigid Body
  Dynamics Algorithms*, 2008, sec. 6.2), so a zero-mass or zero-inertia *body* is fine as long as
  something below it (or ``joint_armature``) carries that DOF: a massless intermediate link is
  accepted. A massless leaf on a revolute joint, or a FREE body with mass but a zero inertia tensor
  (its three rotational DOFs), raises ``ValueError`` naming the joint, the DOF and the body.
  Evaluated at ``model.joint_q`` with the articulation core's own kinematics and CRBA; a DOF
  counts as without inertia below ``1e-9`` times the largest diagonal entry of its articulation
  (or when the whole articulation is massless). A body edited to zero mass later
  (``notify_model_changed``) is not re-checked.
"""

from __future__ import annotations

import numpy as np

import newton

from ...articulation import ArticulationData, eval_articulation_dynamics, eval_articulation_kinematics

MASSLESS_RATIO = 1.0e-9  # a DOF's H_ii + armature below this fraction of its articulation's largest: no inertia


def _joint_label(model: newton.Model, j: int) -> str:
    labels = list(getattr(model, "joint_label", None) or [])
    return f"joint {j} ('{labels[j]}')" if j < len(labels) else f"joint {j}"


def _body_label(model: newton.Model, b: int) -> str:
    labels = list(getattr(model, "body_label", None) or [])
    return f"body {b} ('{labels[b]}')" if 0 <= b < len(labels) else f"body {b}"


def _dof_joint(model: newton.Model, dof: int) -> int:
    return int(np.searchsorted(model.joint_qd_start.numpy(), dof, side="right") - 1)


def check_joint_limits(model: newton.Model) -> None:
    """Raise ``ValueError`` naming the first joint with a NaN limit or ``lower > upper``."""
    if model.joint_dof_count == 0:
        return
    lower, upper = model.joint_limit_lower.numpy(), model.joint_limit_upper.numpy()
    for d in np.nonzero(np.isnan(lower) | np.isnan(upper) | (lower > upper))[0]:
        j = _dof_joint(model, int(d))
        k = int(d) - int(model.joint_qd_start.numpy()[j])
        problem = "a NaN limit" if np.isnan(lower[d]) or np.isnan(upper[d]) else "lower > upper"
        raise ValueError(
            f"SolverFeatherstone: {_joint_label(model, j)} DOF {k} has {problem} "
            f"(joint_limit_lower = {lower[d]:g}, joint_limit_upper = {upper[d]:g}); "
            "no coordinate satisfies it, so the limit penalty would never rest"
        )


def check_dof_inertia(model: newton.Model, plan, body_kinematic: np.ndarray, mimic_leader: np.ndarray) -> None:
    """Raise ``ValueError`` naming the first free DOF with no inertia at ``model.joint_q`` (see module doc)."""
    if plan.articulation_count == 0 or plan.dof_count == 0:
        return
    data = ArticulationData(plan)
    state = model.state()
    eval_articulation_kinematics(model, plan, data, model.joint_q, model.joint_qd, state.body_q, state.body_qd)
    eval_articulation_dynamics(model, plan, data, state.body_q)
    mass = data.mass_matrix.numpy()
    child = model.joint_child.numpy()
    qd_start = model.joint_qd_start.numpy()
    for a in range(plan.articulation_count):
        n, base, first = int(plan.dof_count_np[a]), int(plan.mass_start_np[a]), int(plan.dof_start_np[a])
        if n == 0:
            continue
        diag = mass[base : base + n * n : n + 1]
        floor = MASSLESS_RATIO * float(diag.max())
        for k in np.nonzero(diag <= floor)[0]:
            d = first + int(k)
            j = _dof_joint(model, d)
            if body_kinematic[child[j]] or mimic_leader[j] >= 0:
                continue  # prescribed, or carried by its leader
            raise ValueError(
                f"SolverFeatherstone: {_joint_label(model, j)} DOF {d - int(qd_start[j])} has no inertia to move "
                f"(H_ii + armature = {diag[k]:g} at model.joint_q): {_body_label(model, int(child[j]))} and every "
                "body below it are massless along this DOF; give the body mass and inertia, add joint_armature, "
                "or flag it newton.BodyFlags.KINEMATIC"
            )
