"""SolverSteel's constructor options: names, defaults, validation and what is implemented.

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
so ``help(SolverSteel)`` documents the options rather than the base class's constructor.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field, fields

import warp as wp

import newton

from ..inputs import check_bool
from .contacts.compliance import check_compliance_options
from .contacts.friction_modes import check_friction_mode_options

INF = float("inf")

# Options that may be assigned after construction (re-validated on assignment).
STEP_OPTIONS = frozenset(
    {
        "baumgarte",
        "contact_friction_gap_max",
        "contact_gap_gate",
        "contact_speculative_scale",
        "contact_warmstart_decay",
        "relaxation",
        "restitution_velocity_threshold",
        "velocity_drive_mode",
        "warn_constraint_overflow",
    }
)


@dataclass
class SteelOptions:
    """All constructor options of :class:`~steel.solvers.SolverSteel`, with the reference defaults."""

    solve_mode: str = "serial"
    iterations: int = 12
    baumgarte: float = 0.2
    cfm: float = 1e-6
    relaxation: float = 1.0
    update_mass_matrix_interval: int = 1
    enable_joint_limits: bool = False
    joint_limit_activation_gap: float = INF
    enable_joint_velocity_limits: bool = False
    velocity_limit_activation_fraction: float = 0.0
    enable_joint_friction: bool = False
    articulation_constraint_max: int | None = None
    free_body_constraint_max: int | None = None
    propagation_constraint_max: int | None = None
    warn_constraint_overflow: bool = True
    row_watermark: bool = False
    drive_mode: str = "augmented"
    fuse_joint_velocity_limits: bool = True
    enable_bilateral_preelimination: bool = False
    bilateral_preelimination_include_mimics: bool = True
    parallel_tree: bool = False
    reuse_kinematics: bool = False
    use_parallel_streams: bool = False
    double_buffer: bool = False
    friction_anchor_beta: float | None = None
    contact_regularization: float = 0.0
    velocity_iterations: int = 0
    velocity_drive_mode: str = "freeze"
    row_schedule: str = "interleaved"
    friction_mode: str = "fixed_normal"
    contact_warmstart: bool = False
    contact_warmstart_decay: float = 1.0
    enable_restitution: bool = True
    restitution_velocity_threshold: float = 0.5
    contact_speculative_scale: float = 1.0
    contact_gap_gate: float | None = None
    contact_friction_scale: float = 1.0
    contact_friction_position_iterations: int = -1
    contact_friction_gap_max: float | None = None
    contact_shared_anchor: bool = False
    contact_friction_shared_anchor: bool = False
    contact_torsion_device: bool = False
    contact_compliance: bool = False
    enable_sleeping: bool = False
    sleep_linear_threshold: float = 0.05
    sleep_angular_threshold: float = 0.15
    sleep_quiet_time: float = 0.5
    sleep_skip_constraints: bool = True
    articulated_contact_response: str = "immediate"
    propagation_same_articulation_rows: bool = False
    propagation_cached_response: bool = True
    propagation_cached_response_body_max: int = 8
    propagation_color_order: str = "contact"
    deterministic: object = field(default=None)


# Options whose non-default values select features not built yet (tracked in the issues).
NOT_IMPLEMENTED = (
    "propagation_constraint_max",
    "row_watermark",
    "parallel_tree",
    "reuse_kinematics",
    "use_parallel_streams",
    "double_buffer",
    "propagation_same_articulation_rows",
)
# The row solve built so far is the serial sweep over immediate (dense) rows. On the CPU the
# reference runs "colored" as its serial sweep too, and the propagation response converges to the
# immediate one, so both are accepted there and solved by the serial immediate sweep with a
# warning; on CUDA they select parallel solves that are not built yet.
SERIAL_FALLBACK_VALUES = {
    "solve_mode": ("colored",),
    "articulated_contact_response": ("propagation",),
}
# Deprecated spellings: name -> {old value: (replacements, message)}.
DEPRECATED_VALUES = {
    "solve_mode": {
        "matrix_free": ({"solve_mode": "serial"}, "solve_mode='matrix_free' is deprecated; use solve_mode='serial' "
                        "(the default)"),
        "split": ({"solve_mode": "serial"}, "solve_mode='split' is deprecated and runs solve_mode='serial'; omit "
                  "solve_mode"),
    },
    "articulated_contact_response": {
        "propagation_colored": ({"solve_mode": "colored", "articulated_contact_response": "propagation"},
                                "articulated_contact_response='propagation_colored' is deprecated; use "
                                "solve_mode='colored' with articulated_contact_response='propagation'"),
    },
}
# Enumerations with a single implemented value so far: name -> implemented values.
NOT_IMPLEMENTED_VALUES = {
    "solve_mode": ("serial", "colored"),
    "articulated_contact_response": ("immediate", "propagation"),
}
ENUMS = {
    "solve_mode": ("serial", "colored"),
    "drive_mode": ("augmented", "rows"),
    "velocity_drive_mode": ("freeze", "active"),
    "row_schedule": ("interleaved", "contact_then_internal", "phased"),
    "friction_mode": ("fixed_normal", "bisection", "bisection_desaxce", "coulomb_newton"),
    "articulated_contact_response": ("immediate", "propagation"),
    "propagation_color_order": ("contact", "longest_first"),
}


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _finite_at_least(name: str, value, low: float, *, allow_inf: bool = False, high: float = INF) -> float:
    if not _is_real(value):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not (allow_inf and value > 0)) or value < low or value > high:
        bound = f"in [{low}, {high}]" if high < INF else f">= {low}" + (" or inf" if allow_inf else " and finite")
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return value


def _int_at_least(name: str, value, low: int) -> int:
    if not _is_int(value):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value!r}")
    return int(value)



def _either(choices) -> str:
    """``'a' or 'b'`` / ``'a', 'b' or 'c'``: the reference's wording of an enumeration in its errors."""
    quoted = [repr(c) for c in choices]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def validate_option(name: str, value):
    """Validate one option and return its normalized value (float/int/bool); raise VE/TE naming it."""
    if name in ENUMS:
        if value not in ENUMS[name]:
            raise ValueError(f"{name} must be {_either(ENUMS[name])}, got {value!r}")
        return value
    if name in ("iterations", "velocity_iterations"):
        return _int_at_least(name, value, 0)
    if name == "update_mass_matrix_interval":
        return _int_at_least(name, value, 1)
    if name in ("articulation_constraint_max", "free_body_constraint_max", "propagation_constraint_max"):
        return None if value is None else _int_at_least(name, value, 1 if name == "propagation_constraint_max" else 0)
    if name == "propagation_cached_response_body_max":
        return _int_at_least(name, value, 1)
    if name == "contact_friction_position_iterations":
        return _int_at_least(name, value, -1)
    if name in ("baumgarte", "cfm", "relaxation", "contact_warmstart_decay", "restitution_velocity_threshold",
                "contact_speculative_scale", "contact_friction_scale"):
        return _finite_at_least(name, value, 0.0)
    if name in ("sleep_linear_threshold", "sleep_angular_threshold", "sleep_quiet_time"):
        v = _finite_at_least(name, value, 0.0)
        if v <= 0.0:
            raise ValueError(f"{name} must be positive, got {value!r}")
        return v
    if name == "joint_limit_activation_gap":
        return _finite_at_least(name, value, 0.0, allow_inf=True)
    if name == "velocity_limit_activation_fraction":
        v = _finite_at_least(name, value, 0.0, allow_inf=True)
        if math.isfinite(v) and v > 1.0:
            raise ValueError(f"{name} must be in [0, 1] or inf, got {value!r}")
        return v
    if name == "contact_regularization":
        return _finite_at_least(name, value, 0.0, high=1e6)
    if name == "friction_anchor_beta":
        return None if value is None else _finite_at_least(name, value, 0.0)
    if name == "contact_gap_gate":
        return None if value is None else _finite_at_least(name, value, 0.0)
    if name == "contact_friction_gap_max":
        if value is None:
            return None
        if not _is_real(value) or math.isnan(value):
            raise ValueError(f"contact_friction_gap_max must be a number or None, got {value!r}")
        return float(value)
    if name == "deterministic":
        if value is not None and not isinstance(value, wp.DeterministicMode):
            raise TypeError(f"deterministic must be a warp.DeterministicMode or None, got {value!r}")
        if value == wp.DeterministicMode.GPU_TO_GPU:
            raise ValueError("deterministic=GPU_TO_GPU is not supported; use RUN_TO_RUN")
        return value
    return check_bool(name, value)


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
    names = {f.name for f in fields(SteelOptions)}
    for name in kwargs:
        if name not in names:
            raise TypeError(f"SolverSteel() got an unexpected keyword argument {name!r}")
    kwargs = _replace_deprecated_spellings(kwargs)
    defaults = SteelOptions()
    values = {f.name: validate_option(f.name, kwargs.get(f.name, getattr(defaults, f.name))) for f in fields(SteelOptions)}
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
        if values[name] != getattr(defaults, name) and not (name == "propagation_constraint_max" and propagation):
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


# One line per option for ``help(SolverSteel)``; units in brackets. Options without a line here are
# listed with their default and state only (their meaning is the reference's option of that name).
OPTION_HELP = {
    "solve_mode": "row sweep: 'serial' (per world); 'colored' needs articulated_contact_response='propagation'",
    "iterations": "projected Gauss-Seidel sweeps per step",
    "baumgarte": "fraction of a position error corrected per step by the velocity bias, non-dimensional",
    "cfm": "constraint force mixing added to each row's diagonal J Y [1/kg or 1/(kg·m²)]",
    "relaxation": "over-relaxation factor of each impulse update, non-dimensional",
    "update_mass_matrix_interval": "steps between CRBA mass-matrix rebuilds (1: every step)",
    "enable_joint_limits": "joint position limits as one-sided rows (off in the reference; `steel run` turns it on)",
    "joint_limit_activation_gap": "distance from a limit at which its row is created [m or rad] (inf: always)",
    "enable_joint_velocity_limits": "Model.joint_velocity_limit [m/s or rad/s] of PRISMATIC/REVOLUTE/D6 DOFs as a "
                                    "row pair per DOF, after rescaling articulations already over a limit "
                                    "(joints/velocity_limits.py)",
    "velocity_limit_activation_fraction": "create a DOF's velocity-limit rows only while |qd| >= fraction * limit "
                                          "on the input velocity (inf: never)",
    "fuse_joint_velocity_limits": "with drive_mode='rows': a driven DOF's velocity limit is a clamp after each "
                                  "sweep iteration instead of two rows",
    "drive_mode": "'augmented': implicit drives in the mass matrix, only the explicit force clamped by "
                  "joint_effort_limit; 'rows': one soft row per driven DOF whose impulse is clamped by "
                  "joint_effort_limit dt (joints/drives.py)",
    "enable_joint_friction": "dry joint friction: one row per PRISMATIC/REVOLUTE/BALL/D6 DOF bounded by "
                             "Model.joint_friction [N or N·m] plus steel:joint_friction_load_coefficient times the "
                             "joint's load (joints/friction.py; also on the CPU)",
    "articulation_constraint_max": "rows per world for articulated bodies (None: sized from the model, none dropped)",
    "free_body_constraint_max": "rows per world for free bodies (None: sized from the model, none dropped)",
    "warn_constraint_overflow": "warn once when rows are dropped for lack of capacity",
    "friction_anchor_beta": "friction patches' anchor correction, non-dimensional (None: 0.2, or 0 with a warning "
                            "under contact_compliance or a coupled friction_mode; 0: point friction)",
    "friction_mode": "per-contact friction update: 'fixed_normal' (tangent pair on the disk of the normal impulse), "
                     "'bisection', 'bisection_desaxce', 'coulomb_newton' (normal and friction solved together; "
                     "contacts/friction_modes.py)",
    "row_schedule": "sweep order: 'interleaved' (all rows each iteration), 'contact_then_internal' (every contact "
                    "iteration, then every joint-limit iteration), 'phased' (each iteration limits, then contacts)",
    "contact_shared_anchor": "every contact row at the midpoint of the two witness points (patch anchors keep "
                             "theirs; contacts/shared_anchor.py)",
    "contact_friction_shared_anchor": "point-friction rows at the witness midpoint (no effect on patch anchors)",
    "contact_compliance": "contacts with a positive Contacts.rigid_contact_stiffness [N/m] as implicit spring-dampers "
                          "F = max(0, -k phi_next - c u_next) [N] (contacts/compliance.py)",
    "contact_regularization": "implicit contact spring g of penetrating contact rows, non-dimensional: unique normal "
                              "splits, resting sag about g a dt^2 / baumgarte [m] (0: rigid)",
    "contact_friction_position_iterations": "sliding friction only in the last k position iterations, held at 0 "
                                            "before (-1: every iteration; the velocity sweeps always solve it)",
    "velocity_iterations": "extra sweeps without position bias that refine the published velocity",
    "velocity_drive_mode": "velocity drives during the velocity sweeps: 'freeze' or 'active'",
    "enable_restitution": "bounce with each shape pair's restitution above restitution_velocity_threshold",
    "restitution_velocity_threshold": "approach speed below which restitution is ignored [m/s]",
    "contact_friction_scale": "scale on the friction coefficient of every contact, non-dimensional",
    "enable_sleeping": "put resting islands to sleep (sleeping/stages.py; rejects contact_warmstart, velocity_iterations > 0, "
                       "models without articulations)",
    "sleep_linear_threshold": "linear speed under which a body counts as quiet [m/s]",
    "sleep_angular_threshold": "angular speed under which a body counts as quiet [rad/s]",
    "sleep_quiet_time": "time an island must stay quiet before it sleeps [s]",
    "sleep_skip_constraints": "skip asleep islands' rows and, when nothing is awake, the whole solve; their "
                              "contact_f reads 0 (False: keep solving them, only freeze the published state)",
    "deterministic": "warp.DeterministicMode.RUN_TO_RUN: bitwise-repeatable runs (CPU; not built on CUDA)",
}


def options_docstring() -> str:
    """The constructor docstring: every option with its default, meaning and state."""
    defaults = SteelOptions()
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
    for f in fields(SteelOptions):
        default = getattr(defaults, f.name)
        state = []
        if f.name in NOT_IMPLEMENTED:
            state.append("*not built*: only the default")
        if f.name in NOT_IMPLEMENTED_VALUES and set(NOT_IMPLEMENTED_VALUES[f.name]) != set(ENUMS[f.name]):
            state.append(f"*not built* beyond {', '.join(map(repr, NOT_IMPLEMENTED_VALUES[f.name]))}")
        if f.name in SERIAL_FALLBACK_VALUES:
            state.append(f"{', '.join(map(repr, SERIAL_FALLBACK_VALUES[f.name]))} runs the serial sweep on the CPU "
                         "(warns) and is not built on CUDA")
        if f.name in ENUMS:
            state.append(f"one of {', '.join(map(repr, ENUMS[f.name]))}")
        if f.name in STEP_OPTIONS:
            state.append("assignable")
        text = OPTION_HELP.get(f.name, "as the reference option of that name")
        lines.append(f"    {f.name}: {text} (default {default!r})" + (f"; {'; '.join(state)}." if state else "."))
    return "\n".join(lines)
