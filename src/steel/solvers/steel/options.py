"""SolverSteel's constructor options: one table (``OPTIONS``), the rules between options, and the docs.

Each option is declared once, as a row of ``OPTIONS`` (an :class:`~steel.solvers.option_table.Option`:
name, default, kind, range, unit, meaning, assignable or not, status). ``SteelOptions``, the
constructor signature, :func:`validate_option`, ``STEP_OPTIONS``, the refused options and values and
the docs derive from it. The rules between options (``solve_mode='colored'`` needs the propagation
response, ``velocity_iterations`` with ``enable_sleeping``, ...) run in :func:`build_options` after
every row's own check, in a fixed order, so the first error raised names the same option every time.

Every option of the reference constructor exists here with its reference name and default, so a
user can swap ``newton.solvers.SolverSteel`` for ``steel.solvers.SolverSteel``. Options whose
feature is not built yet raise ``NotImplementedError`` naming the option when set to a
non-default value; they are never silently ignored. Validation runs before the solver allocates
anything, and every error names the option and the bad value.

Deliberate differences from the reference (see ``docs/architecture.md``):

* ``articulation_constraint_max`` and ``free_body_constraint_max`` default to ``None``: the
  capacity is then sized from the model so that no row can be dropped (see
  :mod:`steel.solvers.steel.rows.capacity`). An explicit value is honoured exactly.
* ``friction_anchor_beta=None`` resolves to ``0.2`` (friction patches on, as in the reference), or to
  ``0`` (point friction, with a warning) under ``contact_compliance`` or a ``friction_mode`` other than
  ``"fixed_normal"``; the resolved value is reported on the instance (``solver.friction_anchor_beta``).

:func:`options_docstring` writes every option, its default and its state (built, not built yet,
serial fallback on the CPU, assignable after construction) into ``SolverSteel.__init__.__doc__``,
so ``help(SolverSteel)`` documents the options rather than the base class's constructor;
:func:`not_built_markdown` writes the README's table of options not built (a test keeps the two equal).
"""

from __future__ import annotations

import math
import warnings
import warp as wp

import newton

from ..option_table import (INF, REFUSED, SERIAL_FALLBACK, Option, is_real, not_built_table, options_dataclass,
                            validators)
from .contacts.compliance import check_compliance_options
from .contacts.friction_modes import check_friction_mode_options


def _number_or_none(name: str, value):
    # Any real number (+-inf included: no gap bound) or None; NaN and non-numbers are ValueError, as the
    # reference words them, not TypeError (a generic float row would raise TypeError for a string).
    if value is None:
        return None
    if not is_real(value) or math.isnan(value):
        raise ValueError(f"{name} must be a number or None, got {value!r}")
    return float(value)


def _deterministic(name: str, value):
    if value is not None and not isinstance(value, wp.DeterministicMode):
        raise TypeError(f"{name} must be a warp.DeterministicMode or None, got {value!r}")
    if value == wp.DeterministicMode.GPU_TO_GPU:
        raise ValueError(f"{name}=GPU_TO_GPU is not supported; use RUN_TO_RUN")
    return value


# SolverSteel's options, one row each, in the reference constructor's order. Everything else about
# an option derives from its row (see steel.solvers.option_table): SteelOptions, the constructor
# signature and docstring, validate_option, STEP_OPTIONS, the refused options and values, the
# README's table of options not built.
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
    Option("propagation_constraint_max", None, "int", low=1, optional=True, status=REFUSED),
    Option("warn_constraint_overflow", True, "bool", assignable=True,
           meaning="warn once when rows are dropped for lack of capacity"),
    Option("row_watermark", False, "bool", status=REFUSED),
    Option("drive_mode", "augmented", "enum", choices=("augmented", "rows"),
           meaning="'augmented': implicit drives in the mass matrix, only the explicit force clamped by "
                   "joint_effort_limit; 'rows': one soft row per driven DOF whose impulse is clamped by "
                   "joint_effort_limit dt (joints/drives.py)"),
    Option("fuse_joint_velocity_limits", True, "bool",
           meaning="with drive_mode='rows': a driven DOF's velocity limit is a clamp after each sweep iteration "
                   "instead of two rows"),
    Option("enable_bilateral_preelimination", False, "bool"),
    Option("bilateral_preelimination_include_mimics", True, "bool"),
    Option("parallel_tree", False, "bool", status=REFUSED),
    Option("reuse_kinematics", False, "bool", status=REFUSED),
    Option("use_parallel_streams", False, "bool", status=REFUSED),
    Option("double_buffer", False, "bool", status=REFUSED),
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
    Option("contact_warmstart", False, "bool"),
    Option("contact_warmstart_decay", 1.0, "float", **_RANGE_0, assignable=True),
    Option("enable_restitution", True, "bool",
           meaning="bounce with each shape pair's restitution above restitution_velocity_threshold"),
    Option("restitution_velocity_threshold", 0.5, "float", **_RANGE_0, unit="m/s", assignable=True,
           meaning="approach speed below which restitution is ignored [m/s]"),
    Option("contact_speculative_scale", 1.0, "float", **_RANGE_0, assignable=True),
    Option("contact_gap_gate", None, "float", **_RANGE_0, optional=True, unit="m", assignable=True),
    Option("contact_friction_scale", 1.0, "float", **_RANGE_0,
           meaning="scale on the friction coefficient of every contact, non-dimensional"),
    Option("contact_friction_position_iterations", -1, "int", low=-1,
           meaning="sliding friction only in the last k position iterations, held at 0 before (-1: every "
                   "iteration; the velocity sweeps always solve it)"),
    Option("contact_friction_gap_max", None, "float", optional=True, unit="m", assignable=True,
           check=_number_or_none),
    Option("contact_shared_anchor", False, "bool",
           meaning="every contact row at the midpoint of the two witness points (patch anchors keep theirs; "
                   "contacts/shared_anchor.py)"),
    Option("contact_friction_shared_anchor", False, "bool",
           meaning="point-friction rows at the witness midpoint (no effect on patch anchors)"),
    Option("contact_torsion_device", False, "bool"),
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
                        "with articulated_contact_response='propagation'"),)),
    Option("propagation_same_articulation_rows", False, "bool", status=REFUSED),
    Option("propagation_cached_response", True, "bool"),
    Option("propagation_cached_response_body_max", 8, "int", low=1),
    Option("propagation_color_order", "contact", "enum", choices=("contact", "longest_first")),
    Option("deterministic", None, "object", check=_deterministic,
           meaning="warp.DeterministicMode.RUN_TO_RUN: bitwise-repeatable runs (CPU; not built on CUDA)"),
)

SteelOptions = options_dataclass(
    "SteelOptions", OPTIONS, "All constructor options of :class:`~steel.solvers.SolverSteel`, with the reference "
    "defaults (one field per row of ``OPTIONS``).", __name__)
_VALIDATORS = validators(OPTIONS)
_ROWS = {row.name: row for row in OPTIONS}

# Derived views of the table, by the names the rest of the package (and the tests) read.
STEP_OPTIONS = frozenset(row.name for row in OPTIONS if row.assignable)  # assignable after construction
NOT_IMPLEMENTED = tuple(row.name for row in OPTIONS if row.status == REFUSED)  # only the default is built
SERIAL_FALLBACK_VALUES = {row.name: row.fallback_values for row in OPTIONS if row.status == SERIAL_FALLBACK}
DEPRECATED_VALUES = {row.name: {old: (replacements, message) for old, replacements, message in row.deprecated}
                     for row in OPTIONS if row.deprecated}  # name -> {old value: (replacements, message)}
ENUMS = {row.name: row.choices for row in OPTIONS if row.kind == "enum"}
# Enumerations built for some values only: name -> built values (none so far: every value of ENUMS is built).
NOT_IMPLEMENTED_VALUES = {row.name: row.built_values for row in OPTIONS if row.built_values}
OPTION_HELP = {row.name: row.meaning for row in OPTIONS if row.meaning}  # help(SolverSteel)'s line per option


def validate_option(name: str, value):
    """Validate one option and return its normalized value (float/int/bool); raise VE/TE naming it.

    One dict lookup and the row's prebuilt check: ``SolverSteel.__setattr__`` calls it for every option
    assigned between steps.
    """
    return _VALIDATORS[name](value)


def _replace_deprecated_spellings(kwargs: dict) -> dict:
    """Map deprecated option values to their replacements with a ``NewtonDeprecationWarning``."""
    kwargs = dict(kwargs)
    for name, spellings in DEPRECATED_VALUES.items():
        value = kwargs.get(name)
        if isinstance(value, str) and value in spellings:
            replacements, message = spellings[value]
            warnings.warn(f"SolverSteel: {message}.", newton.NewtonDeprecationWarning, stacklevel=4)
            kwargs.update(replacements)
    return kwargs


def build_options(**kwargs) -> SteelOptions:
    """Validate every option (unknown names → TypeError), then reject unbuilt features."""
    for name in kwargs:
        if name not in _ROWS:
            raise TypeError(f"SolverSteel() got an unexpected keyword argument {name!r}")
    kwargs = _replace_deprecated_spellings(kwargs)
    # Each row's own check, in table order (the first bad option in that order is the one named), then the rules
    # between options below, in a fixed order, then the refused values.
    values = {row.name: _VALIDATORS[row.name](kwargs.get(row.name, row.default)) for row in OPTIONS}
    propagation = values["articulated_contact_response"] == "propagation"
    if values["solve_mode"] == "colored" and not propagation:
        raise ValueError(
            "solve_mode='colored' colors the propagation contact rows and requires "
            "articulated_contact_response='propagation', got articulated_contact_response='immediate'"
        )
    if values["propagation_constraint_max"] is not None and not propagation:
        raise ValueError(
            f"propagation_constraint_max={values['propagation_constraint_max']} requires "
            "articulated_contact_response='propagation'"
        )
    if values["velocity_iterations"] > 0:
        # Spec C6: the velocity sweeps are incompatible with these (checked before the unbuilt-feature test).
        for name in ("enable_sleeping", "contact_compliance"):
            if values[name]:
                raise ValueError(f"velocity_iterations={values['velocity_iterations']} is incompatible with {name}=True")
    if values["contact_friction_position_iterations"] >= 0 and values["contact_warmstart"]:
        raise NotImplementedError(
            f"contact_friction_position_iterations={values['contact_friction_position_iterations']} with "
            "contact_warmstart=True is not implemented, as the reference specifies"
        )
    if values["contact_warmstart"]:
        # Spec C14: incompatible with these (checked before the unbuilt-feature test, as above).
        for name in ("enable_sleeping", "contact_compliance"):
            if values[name]:
                raise ValueError(f"contact_warmstart=True is incompatible with {name}=True")
    # Checked before the unbuilt-feature test, so a combination the reference rejects says why.
    anchor_beta_explicit = kwargs.get("friction_anchor_beta") is not None
    check_compliance_options(values, anchor_beta_explicit=anchor_beta_explicit)
    check_friction_mode_options(values, anchor_beta_explicit=anchor_beta_explicit)
    for name in NOT_IMPLEMENTED:
        # propagation_constraint_max is accepted with the propagation response (the CPU's serial fallback, which
        # check_options_on_device refuses on CUDA); without it the ValueError above named the missing response.
        if values[name] != _ROWS[name].default and not (name == "propagation_constraint_max" and propagation):
            raise NotImplementedError(f"SolverSteel option {name}={values[name]!r} is not implemented yet")
    for name, allowed in NOT_IMPLEMENTED_VALUES.items():
        if values[name] not in allowed:
            raise NotImplementedError(f"SolverSteel option {name}={values[name]!r} is not implemented yet")
    return SteelOptions(**values)


def check_options_on_device(opts: SteelOptions, device) -> None:
    """Warn about the CPU's serial fallbacks; refuse on CUDA the parallel solves not built yet."""
    chosen = [f"{name}={getattr(opts, name)!r}" for name, values in SERIAL_FALLBACK_VALUES.items()
              if getattr(opts, name) in values]
    if not chosen:
        return
    if device.is_cuda:
        raise NotImplementedError(f"SolverSteel option {', '.join(chosen)} is not implemented on CUDA yet")
    warnings.warn(
        f"SolverSteel: {', '.join(chosen)} runs the serial sweep over immediate (dense) rows on CPU, so row "
        "order and results differ from the colored/propagation solve on CUDA",
        newton.NewtonWarning, stacklevel=3,
    )


def options_docstring() -> str:
    """The constructor docstring: every option with its default, meaning and state (from ``OPTIONS``)."""
    lines = [
        "Validate the model and the options, then allocate the solver (nothing is kept on an error).",
        "",
        "Every option is keyword-only, with the reference's name and default. Options marked *not built*",
        "raise ``NotImplementedError`` naming them when set to another value; *assignable* ones may also be",
        "set on the instance after construction (re-validated).",
        "",
        "Args:",
        "    model: a finalized :class:`newton.Model` without particles or gradients.",
    ]
    for row in OPTIONS:
        state = []
        if row.status == REFUSED:
            state.append("*not built*: only the default")
        if row.built_values and set(row.built_values) != set(row.choices):
            state.append(f"*not built* beyond {', '.join(map(repr, row.built_values))}")
        if row.status == SERIAL_FALLBACK:
            state.append(f"{', '.join(map(repr, row.fallback_values))} runs the serial sweep on the CPU "
                         "(warns) and is not built on CUDA")
        if row.kind == "enum":
            state.append(f"one of {', '.join(map(repr, row.choices))}")
        if row.assignable:
            state.append("assignable")
        text = row.meaning or "as the reference option of that name"
        lines.append(f"    {row.name}: {text} (default {row.default!r})" + (f"; {'; '.join(state)}." if state else "."))
    return "\n".join(lines)


def not_built_markdown() -> str:
    """The README's "Options built" table: every option with a value not built yet, and what it accepts."""
    return not_built_table(OPTIONS)
