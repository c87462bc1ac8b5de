"""Reduced-coordinate articulation core shared by SolverSteel and SolverFeatherstone.

Stages, each one launch over every articulation of every world:

* :func:`eval_articulation_kinematics` — ``joint_q, joint_qd`` -> ``body_q, body_qd`` and motion subspaces;
* :func:`eval_articulation_dynamics` — RNEA bias forces and the CRBA mass matrix (with armature);
* :func:`factor_mass_matrix` / :func:`solve_mass_matrix` — dense Cholesky per articulation.

:class:`ArticulationCore` bundles the plan and buffers for callers that want the whole chain.
"""

from .core import ArticulationCore
from .data import ArticulationData, padded_blocks
from .dynamics import eval_articulation_dynamics, eval_body_parent_f
from .factor import factor_mass_matrix, solve_mass_matrix
from .kinematics import eval_articulation_jacobian, eval_articulation_kinematics
from .topology import SUPPORTED_JOINT_TYPES, ArticulationPlan

__all__ = [
    "SUPPORTED_JOINT_TYPES",
    "ArticulationCore",
    "ArticulationData",
    "ArticulationPlan",
    "eval_articulation_dynamics",
    "eval_articulation_jacobian",
    "eval_articulation_kinematics",
    "eval_body_parent_f",
    "factor_mass_matrix",
    "padded_blocks",
    "solve_mass_matrix",
]
