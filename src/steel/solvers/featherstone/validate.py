"""What SolverFeatherstone refuses at construction, and how it names the culprit.

Derives from the option table (``OPTIONS``, one :class:`~steel.solvers.option_table.Option` row per
constructor option, in :mod:`steel.solvers.featherstone.option_rows`) the signature,
:class:`FeatherstoneOptions` and :func:`build_options`, and owns two host-side checks of the model, run once before
the solver keeps any allocation (the per-step checks of ``State``/``Control`` arrays are
:mod:`steel.solvers.inputs`; non-finite states are contained on the device, see :mod:`.forces`):

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
  The test is the shared :func:`steel.articulation.checks.massless_dofs` (SolverSteel applies the
  same one). A body edited to zero mass later (``notify_model_changed``) is not re-checked.
"""

from __future__ import annotations

import warnings

import numpy as np

import newton

from ...articulation.checks import body_name, dof_joint, inverted_limits, joint_name, massless_dofs
from ..inputs import as_python_scalar
from ..option_table import options_dataclass, signature, validators
from .option_rows import OPTIONS  # the rows (no Warp, for the command line's help); all below derives from them

FeatherstoneOptions = options_dataclass(
    "FeatherstoneOptions", OPTIONS, "Every constructor option of :class:`~steel.solvers.SolverFeatherstone`, with its "
    "default (one field per row of ``OPTIONS``).", __name__)
SIGNATURE = signature(OPTIONS, "newton.Model", annotate=True)
_VALIDATORS = validators(OPTIONS)


def build_options(**kwargs) -> FeatherstoneOptions:
    """Check every option in table order (Warp and NumPy scalars accepted); ``TypeError`` for an unknown name
    or a wrong type, ``ValueError`` for a value out of range, each naming the option."""
    for name in kwargs:
        if name not in _VALIDATORS:
            raise TypeError(f"SolverFeatherstone() got an unexpected keyword argument {name!r}")
    values = {}
    for row in OPTIONS:
        value = kwargs.get(row.name, row.default)
        if value is None and row.none_is_default:
            value = row.default
        values[row.name] = _VALIDATORS[row.name](as_python_scalar(value))
    return FeatherstoneOptions(**values)


def check_joint_limits(model: newton.Model) -> None:
    """Raise ``ValueError`` naming the first joint with a NaN limit or ``lower > upper``."""
    if model.joint_dof_count == 0:
        return
    lower, upper = model.joint_limit_lower.numpy(), model.joint_limit_upper.numpy()
    for j, d in inverted_limits(model, include_nan=True)[:1]:
        k = d - int(model.joint_qd_start.numpy()[j])
        problem = "a NaN limit" if np.isnan(lower[d]) or np.isnan(upper[d]) else "lower > upper"
        raise ValueError(
            f"SolverFeatherstone: {joint_name(model, j)} DOF {k} has {problem} "
            f"(joint_limit_lower = {lower[d]:g}, joint_limit_upper = {upper[d]:g}); "
            "no coordinate satisfies it, so the limit penalty would never rest"
        )


def check_dof_inertia(model: newton.Model, plan, body_kinematic: np.ndarray, mimic_leader: np.ndarray) -> None:
    """Raise ``ValueError`` naming the first free DOF with no inertia at ``model.joint_q`` (see module doc).

    Uses the shared :func:`steel.articulation.checks.massless_dofs`; DOFs of kinematic children and of
    mimic followers (carried by their leader) are prescribed here.
    """
    if plan.articulation_count == 0 or plan.dof_count == 0:
        return
    child = model.joint_child.numpy()
    qd_start = model.joint_qd_start.numpy()
    prescribed = np.zeros(plan.dof_count, dtype=bool)
    for j in range(model.joint_count):
        if body_kinematic[child[j]] or mimic_leader[j] >= 0:
            prescribed[qd_start[j] : qd_start[j + 1]] = True
    bad = massless_dofs(model, plan, prescribed)
    if bad:
        d = bad[0]
        j = dof_joint(model, d)
        raise ValueError(
            f"SolverFeatherstone: {joint_name(model, j)} DOF {d - int(qd_start[j])} has no inertia to move "
            f"(H_ii + armature = 0 at model.joint_q): {body_name(model, int(child[j]))} and every body below "
            "it are massless along this DOF; give the body mass and inertia, add joint_armature, or flag it "
            "newton.BodyFlags.KINEMATIC"
        )


def warn_start_outside_limits(model: newton.Model) -> None:
    """Warn (``UserWarning``) naming the first limited DOF that ``model.joint_q`` places outside its limits.

    The limit is a penalty spring: a DOF started ``d`` outside holds ``limit_ke d² / 2`` of energy
    (2.5 rad at ``limit_ke = 1e4`` is 31 kJ), which, released in a step or two, would return it at
    hundreds of rad/s and blow up the velocity-squared terms. :mod:`.advance` bounds that return to
    ``max(10 rad/s or m/s, |qd|)`` (tested: a 3-link chain and nv_humanoid started 2.5-3 rad outside
    stay finite and come back inside), so the start is stable but not what the spring law alone
    gives; the warning says so. A DOF started inside or touching its limit is not flagged. States
    passed to ``step`` later are not checked (that would cost a device read per step).
    """
    if model.joint_dof_count == 0:
        return
    types = model.joint_type.numpy()
    q_start, qd_start = model.joint_q_start.numpy(), model.joint_qd_start.numpy()
    lower, upper, q = model.joint_limit_lower.numpy(), model.joint_limit_upper.numpy(), model.joint_q.numpy()
    scalar = (int(newton.JointType.PRISMATIC), int(newton.JointType.REVOLUTE), int(newton.JointType.D6))
    for j in range(model.joint_count):
        if int(types[j]) not in scalar:
            continue
        for k in range(int(qd_start[j + 1] - qd_start[j])):
            d, value = int(qd_start[j]) + k, float(q[q_start[j] + k])
            outside = max(float(lower[d]) - value, value - float(upper[d]), 0.0)
            if outside > 0.0:
                warnings.warn(
                    f"SolverFeatherstone: {joint_name(model, j)} DOF {k} starts {outside:g} outside its limits "
                    f"[{lower[d]:g}, {upper[d]:g}]; the limit returns it at up to 10 rad/s (m/s) from rest, "
                    "not as its penalty spring alone would; start inside the limits",
                    UserWarning,
                    stacklevel=3,
                )
                return
