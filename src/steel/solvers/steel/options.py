"""SolverSteel's constructor options: one table (``OPTIONS``), the rules between options, and the docs.

Each option is declared once, as a row of ``OPTIONS`` (an :class:`~steel.solvers.option_table.Option`:
name, default, kind, range, unit, meaning, assignable or not, status; the rows are in
:mod:`steel.solvers.steel.option_rows`, which the command line reads without Warp). ``SteelOptions``, the
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

import warnings

import newton

from ..option_table import REFUSED, SERIAL_FALLBACK, not_built_table, options_dataclass, validators, with_option_args
from .contacts.compliance import check_compliance_options
from .contacts.friction_modes import check_friction_mode_options
from .option_rows import OPTIONS  # the rows (no Warp, for the command line's help); everything here derives from them

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
    return with_option_args(_INIT_DOC, OPTIONS)  # every row has a meaning (tests/solvers/test_option_tables.py)


_INIT_DOC = """Validate the model and the options, then allocate the solver (nothing is kept on an error).

Every option is keyword-only, with the reference's name and default. An option or value marked "not
built" raises ``NotImplementedError`` naming it when set; "assignable" options may also be set on the
instance after construction (re-validated).

Args:
    model: a finalized :class:`newton.Model` without particles or gradients.
"""


def not_built_markdown() -> str:
    """The README's "Options built" table: every option with a value not built yet, and what it accepts."""
    return not_built_table(OPTIONS)
