"""One row per constructor option, and the option checks every solver shares.

Each solver declares its options once, as a tuple of :class:`Option` rows (SolverSteel's in
:mod:`steel.solvers.steel.options`, SolverVBD's in :mod:`steel.solvers.vbd.options`,
SolverFeatherstone's in :mod:`steel.solvers.featherstone.validate`). Everything else about an option
derives from its row: the dataclass of option values (:func:`options_dataclass`), the constructor
signature (:func:`signature`), the per-option validator (:func:`validators`), which options are
assignable after construction or refused, the constructor docstring, the CLI's help lines
(:func:`option_help_lines`) and the README's table of options not built (:func:`not_built_table`).
Rules between options (``velocity_iterations`` with ``enable_sleeping``, ...) are not rows: each
solver checks them in explicit functions after every option passed its own row's check.

One wording for every solver's range errors: ``TypeError("{name} must be an int, got ...")`` /
``"... must be a real number, got ..."`` for the wrong type, ``ValueError("{name} must be <range>,
got {value!r}")`` for a value outside the row's range, the range written by :func:`describe_range`
(``>= 1``, ``finite and >= 0``, ``finite and in (0, 1)``, ``in [0, 1] or inf``, ``... or None``).
Booleans are :func:`steel.solvers.inputs.check_bool`, step sizes :func:`steel.solvers.inputs.check_dt`.

The validators are closures built once per table (rather than one function reading the row on
every call): an option assigned every step (``solver.baumgarte = 0.2``) then costs one dict lookup
and a few comparisons.
"""

from __future__ import annotations

import importlib
import inspect
import numbers
from dataclasses import dataclass, field, make_dataclass
from typing import Callable

from .inputs import check_bool

INF = float("inf")

# Status of an option (one per row). A value-level refinement sits in the row's ``built_values`` /
# ``fallback_values`` / ``deprecated`` columns.
BUILT = "built"  # every valid value is solved as the reference solves it
REFUSED = "refused"  # not built yet: any value but the default raises NotImplementedError naming it
SEED_ONLY = "seed-only"  # a later revision's tuning knob: validated, and any value runs the seed's behaviour
ALIAS = "alias"  # another spelling of an option (``alias_of``), accepted with that option's meaning
SERIAL_FALLBACK = "serial-fallback"  # ``fallback_values`` run the serial sweep on the CPU, refused on CUDA

KINDS = ("bool", "int", "float", "enum", "object")


@dataclass(frozen=True)
class Option:
    """One constructor option: its declaration, its check and its documentation.

    ``low``/``high`` bound an ``int`` or ``float`` (inclusive unless ``low_open``/``high_open``);
    floats are finite unless ``inf_ok`` (``+inf`` accepted besides the range). ``optional``: ``None``
    is a value of its own (``none_means`` says what it does, in the docs and the range error);
    ``none_is_default``: ``None`` is read as ``default`` (a later revision's "use the default").
    ``check(name, value)`` replaces the generated check for a kind the columns cannot express.
    """

    name: str
    default: object
    kind: str  # one of KINDS
    meaning: str = ""  # help text, units in brackets
    unit: str = ""  # SI unit of the value ("" for non-dimensional, switches and choices)
    low: float = -INF
    high: float = INF
    low_open: bool = False
    high_open: bool = False
    inf_ok: bool = False
    optional: bool = False
    none_means: str = ""
    none_is_default: bool = False
    choices: tuple = ()
    assignable: bool = False  # may be set on the instance after construction (re-validated)
    status: str = BUILT
    built_values: tuple = ()  # enum values built (empty: every choice)
    fallback_values: tuple = ()  # SERIAL_FALLBACK: the values that fall back
    deprecated: tuple = ()  # ((old value, replacements dict, message), ...): deprecated value spellings
    alias_of: str = ""  # ALIAS: the option this name spells
    later: bool = False  # a later revision's option, outside the seed signature
    annotation: str = ""  # dataclass field type (default: from kind)
    check: Callable | None = field(default=None, compare=False)


def is_real(value) -> bool:
    """A real number that is not a bool (``True`` is not 1.0 here)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_int(value) -> bool:
    """An integer that is not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _number(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def describe_range(kind: str, low=-INF, high=INF, *, low_open=False, high_open=False, inf_ok=False,
                   optional=False, none_means="") -> str:
    """The wording of a range in every solver's errors and docs: ``finite and >= 0``, ``in [0, 1] or inf``."""
    if low > -INF and high < INF:
        text = f"in {'(' if low_open else '['}{_number(low)}, {_number(high)}{')' if high_open else ']'}"
    elif low > -INF:
        text = f"{'>' if low_open else '>='} {_number(low)}"
    elif high < INF:
        text = f"{'<' if high_open else '<='} {_number(high)}"
    else:
        text = "a number" if kind == "int" else "finite"
    if kind == "float":
        if inf_ok:
            text += " or inf"
        elif text != "finite":
            text = f"finite and {text}"
    if optional:
        text += f" (or None to {none_means})" if none_means else " or None"
    return text


def check_int(name: str, value, low=-INF, high=INF, *, optional=False, none_means="") -> int | None:
    """``value`` as an int in ``[low, high]``; ``TypeError``/``ValueError`` naming ``name`` otherwise."""
    if value is None and optional:
        return None
    if not is_int(value):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < low or value > high:
        bound = describe_range("int", low, high, optional=optional, none_means=none_means)
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return int(value)


def check_real(name: str, value, low=-INF, high=INF, *, low_open=False, high_open=False, inf_ok=False,
               optional=False, none_means="") -> float | None:
    """``value`` as a float in the range (finite unless ``inf_ok``); ``TypeError``/``ValueError`` naming ``name``."""
    return _real_checker(name, low, high, low_open, high_open, inf_ok, optional, none_means)(value)


def _real_checker(name, low, high, low_open, high_open, inf_ok, optional, none_means):
    bound = describe_range("float", low, high, low_open=low_open, high_open=high_open, inf_ok=inf_ok,
                           optional=optional, none_means=none_means)

    def check(value):
        if type(value) is float:  # the per-step path: no isinstance chain
            number = value
        elif value is None and optional:
            return None
        elif is_real(value):
            number = float(value)
        else:
            raise TypeError(f"{name} must be a real number, got {value!r}")
        # NaN fails every comparison; +-inf fail the finite test unless inf_ok admits +inf.
        if ((number > low if low_open else number >= low) and (number < high if high_open else number <= high)
                and -INF < number < INF) or (inf_ok and number == INF):
            return number
        raise ValueError(f"{name} must be {bound}, got {number!r}")

    return check


def _either(choices) -> str:
    """``'a' or 'b'`` / ``'a', 'b' or 'c'``: the reference's wording of an enumeration in its errors."""
    quoted = [repr(c) for c in choices]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def validator(row: Option) -> Callable:
    """The check of one row: ``check(value) -> normalized value``, raising ``TypeError``/``ValueError`` naming it."""
    name = row.name
    if row.check is not None:
        custom = row.check
        return lambda value: custom(name, value)
    if row.kind == "bool":
        return lambda value: check_bool(name, value)
    if row.kind == "int":
        low, high, optional, none_means = row.low, row.high, row.optional, row.none_means
        return lambda value: check_int(name, value, low, high, optional=optional, none_means=none_means)
    if row.kind == "float":
        return _real_checker(name, row.low, row.high, row.low_open, row.high_open, row.inf_ok, row.optional,
                             row.none_means)
    if row.kind == "enum":
        choices, wording = row.choices, _either(row.choices)

        def check_choice(value):
            if value not in choices:
                raise ValueError(f"{name} must be {wording}, got {value!r}")
            return value

        return check_choice
    raise ValueError(f"option {name}: kind {row.kind!r} needs a check")


def validators(table) -> dict:
    """``{name: check}`` for every row of ``table`` (built once, at import)."""
    return {row.name: validator(row) for row in table}


_ANNOTATIONS = {"bool": bool, "int": int, "float": float, "enum": str, "object": object}


def annotation(row: Option) -> str:
    """The row's type as a string, as a module with ``from __future__ import annotations`` has it (``float | None``)."""
    kind = row.annotation or _ANNOTATIONS[row.kind].__name__
    return f"{kind} | None" if row.optional and kind != "object" else kind


def options_dataclass(cls_name: str, table, doc: str, module: str):
    """A mutable dataclass with one field per row (the row's default), in table order."""
    specs = [(row.name, annotation(row), row.default) for row in table]
    cls = make_dataclass(cls_name, specs)
    cls.__doc__, cls.__module__ = doc, module
    return cls


def signature(table, model_annotation=inspect.Parameter.empty, *, annotate: bool = False) -> inspect.Signature:
    """``(self, model, *, <every row with its default>)``: a constructor's signature from its table.

    ``annotate``: each option carries its row's :func:`annotation` (SolverSteel's and SolverVBD's reference
    signatures have none)."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
              inspect.Parameter("model", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=model_annotation)]
    params += [inspect.Parameter(row.name, inspect.Parameter.KEYWORD_ONLY, default=row.default,
                                 annotation=annotation(row) if annotate else inspect.Parameter.empty)
               for row in table]
    return inspect.Signature(params)


def refused_values(row: Option) -> str:
    """What a row accepts when part of it is not built (``""`` when all of it is)."""
    if row.status == REFUSED:
        return f"only the default (`{row.default!r}`)"
    if row.built_values and set(row.built_values) != set(row.choices):
        return f"only {', '.join(f'`{v!r}`' for v in row.built_values)}"
    return ""


def not_built_table(table) -> str:
    """The README's Markdown table of the options not built yet (one row per option with a refused value)."""
    lines = ["| option | accepted |", "|---|---|"]
    lines += [f"| `{row.name}` | {refused_values(row)} |" for row in table if refused_values(row)]
    return "\n".join(lines)


def help_line(row: Option) -> str:
    """One line for a command-line ``--help``: name, default, unit, what is accepted and the meaning."""
    parts = [f"default {row.default!r}"]
    if row.unit and f"[{row.unit}]" not in row.meaning:
        parts.append(f"[{row.unit}]")
    if row.kind == "enum":
        parts.append(f"one of {', '.join(map(repr, row.choices))}")
    elif row.kind in ("int", "float") and row.check is None:
        parts.append(describe_range(row.kind, row.low, row.high, low_open=row.low_open, high_open=row.high_open,
                                    inf_ok=row.inf_ok, optional=row.optional))
    if refused_values(row):
        parts.append(f"not built: {refused_values(row).replace('`', '')}")
    if row.status == SEED_ONLY:
        parts.append("no effect")
    if row.alias_of:
        parts.append(f"another spelling of {row.alias_of}")
    if row.assignable:
        parts.append("assignable after construction")
    text = f"{row.name} ({'; '.join(parts)})"
    return f"{text}: {row.meaning}" if row.meaning else text


# Solver name (as ``steel run --solver`` spells it) -> module holding its ``OPTIONS`` table.
_TABLES = {
    "steel": "steel.solvers.steel.options",
    "vbd": "steel.solvers.vbd.options",
    "featherstone": "steel.solvers.featherstone.validate",
}


def option_table(solver_name: str) -> tuple:
    """The option rows of a solver by its command-line name (``"steel"``, ``"vbd"``, ``"featherstone"``)."""
    try:
        module = _TABLES[solver_name]
    except KeyError:
        raise ValueError(f"unknown solver {solver_name!r}; one of {', '.join(_TABLES)}") from None
    return importlib.import_module(module).OPTIONS


def option_help_lines(solver_name: str) -> list[str]:
    """One help line per option of a solver, for the CLI's ``--option NAME=VALUE`` help (see :func:`help_line`)."""
    return [help_line(row) for row in option_table(solver_name)]
