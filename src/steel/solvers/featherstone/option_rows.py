"""SolverFeatherstone's option table (``OPTIONS``): one :class:`~steel.solvers.option_table.Option` row per option.

Only the rows: :class:`~steel.solvers.featherstone.validate.FeatherstoneOptions`, the signature, the checks
and the constructor docstring's ``Args:`` entries derive from them. This module imports neither Warp nor
Newton, so the command line's ``steel run --help`` lists the options without loading them.
"""

from __future__ import annotations

from ..option_table import Option, check_deterministic


# SolverFeatherstone's options, one row each, in the constructor's order.
OPTIONS = (
    Option("angular_damping", 0.05, "float", low=0.0, unit="1/s",
           meaning="damping rate of FREE/DISTANCE angular velocities, w *= max(1 - d dt, 0) each step [1/s]"),
    Option("update_mass_matrix_interval", 1, "int", low=1, meaning="rebuild the CRBA mass matrix H every N-th step"),
    Option("friction_smoothing", 1.0, "float", low=0.0, none_is_default=True, unit="m/s",
           meaning="Huber delta of the friction velocity normalization [m/s] (None: the later reference's default)"),
    Option("use_tile_gemm", False, "bool",
           meaning="H by tile GEMM, factor and solve by warp.tile_cholesky (same results within float32 rounding)"),
    Option("fuse_cholesky", True, "bool",
           meaning="with use_tile_gemm: factor in the mass-matrix kernel instead of in the solve kernel"),
    Option("deterministic", None, "object", optional=True, annotation="wp.DeterministicMode", check=check_deterministic,
           meaning="a warp.DeterministicMode for the atomic-emitting kernels, contact accumulation (None: "
                   "wp.config.deterministic)"),
)
