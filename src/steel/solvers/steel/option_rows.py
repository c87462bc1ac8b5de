"""SolverSteel's option table (``OPTIONS``): one :class:`~steel.solvers.option_table.Option` row per constructor option.

Only the rows: what derives from them, and the rules between options, are :mod:`steel.solvers.steel.options`.
This module imports neither Warp nor Newton (a row's check that needs Warp imports it when it runs), so the
command line's ``steel run --help`` lists the options without loading them.
"""

from __future__ import annotations

import math

from ..option_table import INF, REFUSED, SERIAL_FALLBACK, Option, check_deterministic, is_real


def _number_or_none(name: str, value):
    # Any real number (+-inf included: no gap bound) or None; NaN and non-numbers are ValueError, as the
    # reference words them, not TypeError (a generic float row would raise TypeError for a string).
    if value is None:
        return None
    if not is_real(value) or math.isnan(value):
        raise ValueError(f"{name} must be a number or None, got {value!r}")
    return float(value)


def _deterministic(name: str, value):
    import warp as wp  # when a solver is built (Warp loaded then), not with the table

    if check_deterministic(name, value) == wp.DeterministicMode.GPU_TO_GPU:
        raise ValueError(f"{name}=GPU_TO_GPU is not supported; use RUN_TO_RUN")
    return value


# SolverSteel's options, one row each, in the reference constructor's order. Everything else about
# an option derives from its row (see steel.solvers.option_table): SteelOptions, the constructor
# signature and docstring, validate_option, STEP_OPTIONS, the refused options and values, the
# README's table of options not built, the `steel run --help` lines.
_RANGE_0 = {"low": 0.0}  # finite and >= 0
_POSITIVE = {"low": 0.0, "low_open": True}  # finite and > 0
_SIZED = "size it from the model"

OPTIONS = (
    Option("solve_mode", "serial", "enum", choices=("serial", "colored"), status=SERIAL_FALLBACK,
           fallback_values=("colored",),
           deprecated=(("matrix_free", {"solve_mode": "serial"},
                        "solve_mode='matrix_free' is deprecated; use solve_mode='serial' (the default)"),
                       ("split", {"solve_mode": "serial"},
                        "solve_mode='split' is deprecated and runs solve_mode='serial'; omit solve_mode")),
           meaning="row sweep: 'serial' (per world); 'colored' needs articulated_contact_response='propagation'"),
    Option("iterations", 12, "int", low=0, meaning="projected Gauss-Seidel sweeps per step"),
    Option("baumgarte", 0.2, "float", **_RANGE_0, assignable=True,
           meaning="fraction of a position error corrected per step by the velocity bias, non-dimensional"),
    Option("cfm", 1e-6, "float", **_RANGE_0, unit="1/kg or 1/(kg·m²)",
           meaning="constraint force mixing added to each row's diagonal J Y [1/kg or 1/(kg·m²)]"),
    Option("relaxation", 1.0, "float", **_RANGE_0, assignable=True,
           meaning="over-relaxation factor of each impulse update, non-dimensional"),
    Option("update_mass_matrix_interval", 1, "int", low=1,
           meaning="steps between CRBA mass-matrix rebuilds (1: every step)"),
    Option("enable_joint_limits", False, "bool",
           meaning="joint position limits as one-sided rows (off in the reference; `steel run` turns it on)"),
    Option("joint_limit_activation_gap", INF, "float", low=0.0, inf_ok=True, unit="m or rad",
           meaning="distance from a limit at which its row is created [m or rad] (inf: always)"),
    Option("enable_joint_velocity_limits", False, "bool",
           meaning="Model.joint_velocity_limit [m/s or rad/s] of PRISMATIC/REVOLUTE/D6 DOFs as a row pair per DOF, "
                   "after rescaling articulations already over a limit (joints/velocity_limits.py)"),
    Option("velocity_limit_activation_fraction", 0.0, "float", low=0.0, high=1.0, inf_ok=True,
           meaning="create a DOF's velocity-limit rows only while |qd| >= fraction * limit on the input velocity "
                   "(inf: never)"),
    Option("enable_joint_friction", False, "bool",
           meaning="dry joint friction: one row per PRISMATIC/REVOLUTE/BALL/D6 DOF bounded by Model.joint_friction "
                   "[N or N·m] plus steel:joint_friction_load_coefficient times the joint's load "
                   "(joints/friction.py; also on the CPU)"),
    # >= 1 as the reference: a capacity of 0 rows would drop every contact of its kind silently.
    Option("articulation_constraint_max", None, "int", low=1, optional=True, none_means=_SIZED,
           meaning="rows per world for articulated bodies (None: sized from the model, none dropped)"),
    Option("free_body_constraint_max", None, "int", low=1, optional=True, none_means=_SIZED,
           meaning="rows per world for free bodies (None: sized from the model, none dropped)"),
    Option("propagation_constraint_max", None, "int", low=1, optional=True, status=REFUSED,
           meaning="rows per world of the propagation response's contact rows (None: free_body_constraint_max + "
                   "articulation_constraint_max); a value is accepted with articulated_contact_response="
                   "'propagation' only, whose CPU fallback ignores it (its immediate rows use the other two)"),
    Option("warn_constraint_overflow", True, "bool", assignable=True,
           meaning="warn once when rows are dropped for lack of capacity"),
    Option("row_watermark", False, "bool", status=REFUSED,
           meaning="record each row family's per-world high-water marks every step for constraint_row_watermarks() "
                   "(here that method reports zeros)"),
    Option("drive_mode", "augmented", "enum", choices=("augmented", "rows"),
           meaning="'augmented': implicit drives in the mass matrix, only the explicit force clamped by "
                   "joint_effort_limit; 'rows': one soft row per driven DOF whose impulse is clamped by "
                   "joint_effort_limit dt (joints/drives.py)"),
    Option("fuse_joint_velocity_limits", True, "bool",
           meaning="with drive_mode='rows': a driven DOF's velocity limit is a clamp after each sweep iteration "
                   "instead of two rows"),
    Option("enable_bilateral_preelimination", False, "bool",
           meaning="solve each articulation's mimic and connect rows as one regularized block before the sweep, "
                   "which keeps them (falls back with a warning for velocity_iterations > 0, the propagation "
                   "response, a closure with a world or kinematic parent, or over 8 such rows in one articulation; "
                   "sweep/preelimination.py)"),
    Option("bilateral_preelimination_include_mimics", True, "bool",
           meaning="with enable_bilateral_preelimination, eliminate mimic rows too (False: only the connect rows; "
                   "mimic rows stay iterative)"),
    Option("parallel_tree", False, "bool", status=REFUSED,
           meaning="traverse the independent branches of each articulation tree in parallel on CUDA"),
    Option("reuse_kinematics", False, "bool", status=REFUSED,
           meaning="carry the kinematics formed when a step is published into the next step instead of "
                   "re-deriving them (CUDA)"),
    Option("use_parallel_streams", False, "bool", status=REFUSED,
           meaning="run each articulation-size group's factorization and solves on a CUDA stream of its own"),
    Option("double_buffer", False, "bool", status=REFUSED,
           meaning="two sets of grouped mass-matrix and Jacobian buffers, the used one cleared on a side CUDA "
                   "stream"),
    Option("friction_anchor_beta", None, "float", **_RANGE_0, optional=True,
           meaning="friction patches' anchor correction, non-dimensional (None: 0.2, or 0 with a warning under "
                   "contact_compliance or a coupled friction_mode; 0: point friction)"),
    Option("contact_regularization", 0.0, "float", low=0.0, high=1e6,
           meaning="implicit contact spring g of penetrating contact rows, non-dimensional: unique normal splits, "
                   "resting sag about g a dt^2 / baumgarte [m] (0: rigid)"),
    Option("velocity_iterations", 0, "int", low=0,
           meaning="extra sweeps without position bias that refine the published velocity"),
    Option("velocity_drive_mode", "freeze", "enum", choices=("freeze", "active"), assignable=True,
           meaning="velocity drives during the velocity sweeps: 'freeze' or 'active'"),
    Option("row_schedule", "interleaved", "enum", choices=("interleaved", "contact_then_internal", "phased"),
           meaning="sweep order: 'interleaved' (all rows each iteration), 'contact_then_internal' (every contact "
                   "iteration, then every joint-limit iteration), 'phased' (each iteration limits, then contacts)"),
    Option("friction_mode", "fixed_normal", "enum",
           choices=("fixed_normal", "bisection", "bisection_desaxce", "coulomb_newton"),
           meaning="per-contact friction update: 'fixed_normal' (tangent pair on the disk of the normal impulse), "
                   "'bisection', 'bisection_desaxce', 'coulomb_newton' (normal and friction solved together; "
                   "contacts/friction_modes.py)"),
    Option("contact_warmstart", False, "bool",
           meaning="start each contact's normal and friction rows from its matched predecessor's impulse, scaled "
                   "by dt / dt_prev (needs the collision pipeline's contact matching; contacts/warmstart.py)"),
    Option("contact_warmstart_decay", 1.0, "float", **_RANGE_0, assignable=True,
           meaning="factor on the impulses contact_warmstart carries over, non-dimensional"),
    Option("enable_restitution", True, "bool",
           meaning="bounce with each shape pair's restitution above restitution_velocity_threshold"),
    Option("restitution_velocity_threshold", 0.5, "float", **_RANGE_0, unit="m/s", assignable=True,
           meaning="approach speed below which restitution is ignored [m/s]"),
    Option("contact_speculative_scale", 1.0, "float", **_RANGE_0, assignable=True,
           meaning="share of a positive contact gap phi that may close in one step (target -scale phi / dt), "
                   "non-dimensional (0: none; penetration correction unchanged)"),
    Option("contact_gap_gate", None, "float", **_RANGE_0, optional=True, unit="m", assignable=True,
           meaning="gap [m] above which a contact gets no rows (0: touching and penetrating contacts only; None: "
                   "every contact)"),
    Option("contact_friction_scale", 1.0, "float", **_RANGE_0,
           meaning="scale on the friction coefficient of every contact, non-dimensional"),
    Option("contact_friction_position_iterations", -1, "int", low=-1,
           meaning="sliding friction only in the last k position iterations, held at 0 before (-1: every "
                   "iteration; the velocity sweeps always solve it)"),
    Option("contact_friction_gap_max", None, "float", optional=True, unit="m", assignable=True,
           check=_number_or_none,
           meaning="gap [m] above which a contact gets its normal row only (None or inf: every contact keeps its "
                   "friction rows; -inf: none does)"),
    Option("contact_shared_anchor", False, "bool",
           meaning="every contact row at the midpoint of the two witness points (patch anchors keep theirs; "
                   "contacts/shared_anchor.py)"),
    Option("contact_friction_shared_anchor", False, "bool",
           meaning="point-friction rows at the witness midpoint (no effect on patch anchors)"),
    Option("contact_torsion_device", False, "bool",
           meaning="the reference's device (True) or host (False) preparation of contact torsion rows; here both "
                   "build them on the device in the row kernel, with bitwise-equal steps"),
    Option("contact_compliance", False, "bool",
           meaning="contacts with a positive Contacts.rigid_contact_stiffness [N/m] as implicit spring-dampers "
                   "F = max(0, -k phi_next - c u_next) [N] (contacts/compliance.py)"),
    Option("enable_sleeping", False, "bool",
           meaning="put resting islands to sleep (sleeping/stages.py; rejects contact_warmstart, velocity_iterations > 0, "
                   "models without articulations)"),
    Option("sleep_linear_threshold", 0.05, "float", **_POSITIVE, unit="m/s",
           meaning="linear speed under which a body counts as quiet [m/s]"),
    Option("sleep_angular_threshold", 0.15, "float", **_POSITIVE, unit="rad/s",
           meaning="angular speed under which a body counts as quiet [rad/s]"),
    Option("sleep_quiet_time", 0.5, "float", **_POSITIVE, unit="s",
           meaning="time an island must stay quiet before it sleeps [s]"),
    Option("sleep_skip_constraints", True, "bool",
           meaning="skip asleep islands' rows and, when nothing is awake, the whole solve; their contact_f reads 0 "
                   "(False: keep solving them, only freeze the published state)"),
    # On the CPU the reference runs "colored" as its serial sweep too, and the propagation response converges to
    # the immediate one, so both run the serial immediate sweep there with a warning; on CUDA they select parallel
    # solves not built yet (check_options_on_device).
    Option("articulated_contact_response", "immediate", "enum", choices=("immediate", "propagation"),
           status=SERIAL_FALLBACK, fallback_values=("propagation",),
           deprecated=(("propagation_colored", {"solve_mode": "colored", "articulated_contact_response": "propagation"},
                        "articulated_contact_response='propagation_colored' is deprecated; use solve_mode='colored' "
                        "with articulated_contact_response='propagation'"),),
           meaning="contacts on articulated bodies: 'immediate' (dense rows, Y = H^-1 J^T per row) or "
                   "'propagation' (the reference's body rows solved through the trees; here the immediate rows)"),
    Option("propagation_same_articulation_rows", False, "bool", status=REFUSED,
           meaning="with the propagation response, contacts between two links of one articulation as propagation "
                   "rows instead of dense rows"),
    Option("propagation_cached_response", True, "bool",
           meaning="with the propagation response, cached body responses instead of a tree walk per iteration; "
                   "no effect here (that response runs the immediate rows)"),
    Option("propagation_cached_response_body_max", 8, "int", low=1,
           meaning="contact-active bodies per world that propagation_cached_response caches; no effect here"),
    Option("propagation_color_order", "contact", "enum", choices=("contact", "longest_first"),
           meaning="order in which solve_mode='colored' colors contacts: 'contact' (by index) or 'longest_first' "
                   "(most rows first); no effect here ('colored' runs the serial sweep)"),
    Option("deterministic", None, "object", check=_deterministic,
           meaning="warp.DeterministicMode.RUN_TO_RUN: bitwise-repeatable runs (CPU; not built on CUDA)"),
)
