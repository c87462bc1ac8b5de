"""The articulation core as one object: plan, buffers and the per-step chain."""

from __future__ import annotations

import warp as wp

import newton

from .data import ArticulationData
from .dynamics import eval_articulation_dynamics
from .factor import factor_mass_matrix, solve_mass_matrix
from .kinematics import eval_articulation_kinematics
from .topology import ArticulationPlan
from ..structs import require_contiguous


class ArticulationCore:
    """Plan and work buffers for a model, with the kinematics -> dynamics -> factor chain.

    Args:
        model: a finalized Newton model.

    Raises:
        ValueError: the model has a joint the core does not support (see :class:`ArticulationPlan`).
    """

    def __init__(self, model: newton.Model):
        self.model = model
        self.plan = ArticulationPlan(model)
        self.data = ArticulationData(self.plan)
        # Read by the native snippets of factor.py and dynamics.py through .data (structs.py).
        require_contiguous("ArticulationCore", joint_qd_start=model.joint_qd_start, joint_child=model.joint_child,
                           joint_armature=model.joint_armature, dof_parent=self.plan.dof_parent,
                           mass_matrix=self.data.mass_matrix, mass_factor=self.data.mass_factor)

    def kinematics(self, joint_q: wp.array, joint_qd: wp.array, body_q: wp.array, body_qd: wp.array) -> None:
        """Forward kinematics and body twists (see :func:`eval_articulation_kinematics`)."""
        eval_articulation_kinematics(self.model, self.plan, self.data, joint_q, joint_qd, body_q, body_qd)

    def dynamics(self, body_q, body_f=None, joint_f=None, dof_diag_extra=None, compute_mass_matrix=True) -> None:
        """Bias forces and mass matrix (see :func:`eval_articulation_dynamics`)."""
        eval_articulation_dynamics(
            self.model, self.plan, self.data, body_q, body_f, joint_f, dof_diag_extra, compute_mass_matrix
        )

    def factor(self) -> None:
        """Cholesky factor of every mass matrix."""
        factor_mass_matrix(self.plan, self.data)

    def solve(self, rhs: wp.array, x: wp.array, scale: float = 1.0) -> None:
        """``x = scale * H^-1 rhs`` per articulation."""
        solve_mass_matrix(self.plan, self.data, rhs, x, scale)

    def step_quantities(self, state: newton.State, control: newton.Control | None = None) -> None:
        """FK, bias forces, mass matrix and factor for ``state`` (writes its ``body_q``/``body_qd``)."""
        self.kinematics(state.joint_q, state.joint_qd, state.body_q, state.body_qd)
        joint_f = control.joint_f if control is not None else None
        self.dynamics(state.body_q, state.body_f, joint_f)
        self.factor()
