"""One row per constructor option, and the option checks every solver shares.

Each solver declares its options once, as a tuple of :class:`Option` rows (SolverSteel's in
:mod:`steel.solvers.steel.options`, SolverVBD's in :mod:`steel.solvers.vbd.options`,
SolverFeatherstone's in :mod:`steel.solvers.featherstone.validate`). Everything else about an option
derives from its row: the dataclass of option values (:func:`options_dataclass`), the constructor
signature (:func:`signature`), the per-option validator (:func:`validators`), which options are
assignable after construction or refused, the constructor docstring's ``Args:`` entries
(:func:`with_option_args`), the CLI's help lines (:func:`option_help_lines`) and the README's table of
options not built (:func:`not_built_table`).
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

This module and the three tables (each solver package's ``option_rows``) import neither Warp nor
Newton (the checks that need Warp import it when they run), so ``steel run --help`` lists every
solver's options in a few milliseconds instead of the seconds importing Newton takes.
"""

from __future__ import annotations

import importlib
import inspect
import numbers
import re
import textwrap
from dataclasses import dataclass, field, make_dataclass
from typing import Callable

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


def check_deterministic(name: str, value):
    """A ``warp.DeterministicMode`` or None (every solver's ``deterministic``); ``TypeError`` naming ``name``.

    Warp is imported when the check runs (a solver is being built, so it is loaded), not with the tables."""
    import warp as wp

    if value is not None and not isinstance(value, wp.DeterministicMode):
        raise TypeError(f"{name} must be a warp.DeterministicMode or None, got {value!r}")
    return value


def validator(row: Option) -> Callable:
    """The check of one row: ``check(value) -> normalized value``, raising ``TypeError``/``ValueError`` naming it."""
    name = row.name
    if row.check is not None:
        custom = row.check
        return lambda value: custom(name, value)
    if row.kind == "bool":
        # Imported here, not at the top: steel.solvers.inputs imports Warp, and the tables import this module
        # without it (see the module docstring). Validators are built by the solver modules, which have Warp.
        from .inputs import check_bool

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


def _unit(row: Option) -> str:
    """`` [unit]`` unless the meaning already writes it."""
    return f" [{row.unit}]" if row.unit and f"[{row.unit}]" not in row.meaning else ""


def _facts(row: Option, *, none_means: bool) -> list[str]:
    """What a row accepts and its state, as the help line and the docstring entry word them."""
    facts = []
    if row.kind == "enum":
        facts.append(f"one of {', '.join(map(repr, row.choices))}")
    elif row.kind == "int" and row.check is None and row.low == -INF and row.high == INF:
        facts.append("any int" + (" or None" if row.optional else ""))
    elif row.kind in ("int", "float") and row.check is None:
        facts.append(describe_range(row.kind, row.low, row.high, low_open=row.low_open, high_open=row.high_open,
                                    inf_ok=row.inf_ok, optional=row.optional,
                                    none_means=row.none_means if none_means else ""))
    if refused_values(row):
        facts.append(f"not built: {refused_values(row).replace('`', '')}")
    if row.status == SERIAL_FALLBACK:
        facts.append(f"{', '.join(map(repr, row.fallback_values))} runs the serial sweep on the CPU (warns) and is "
                     "not built on CUDA")
    if row.status == SEED_ONLY:
        facts.append("validated, no effect here")
    if row.alias_of:
        facts.append(f"another spelling of {row.alias_of}")
    if row.later:
        facts.append("a later revision's option")
    if row.assignable:
        facts.append("assignable after construction")
    return facts


def help_line(row: Option) -> str:
    """One line for a command-line ``--help``: name, default, unit, what is accepted and the meaning."""
    parts = [f"default {row.default!r}"] + ([f"[{row.unit}]"] if _unit(row) else []) + _facts(row, none_means=False)
    text = f"{row.name} ({'; '.join(parts)})"
    return f"{text}: {row.meaning}" if row.meaning else text


def docstring_entry(row: Option, *, no_meaning: str = "") -> str:
    """One Google-style ``Args:`` entry, unwrapped: ``name: meaning [unit]; default X; range; state.``

    ``no_meaning`` stands in for a row without a meaning (SolverSteel: "as the reference option of that name")."""
    meaning = (row.meaning or no_meaning) + _unit(row)
    facts = "; ".join([f"default {row.default!r}"] + _facts(row, none_means=True))
    return f"{row.name}: {meaning}; {facts}." if meaning else f"{row.name}: {facts}."


def docstring_args(table, *, no_meaning: str = "", width: int = 100) -> list[str]:
    """Every row's :func:`docstring_entry`, wrapped to ``width`` under an ``Args:`` header (4-space entries,
    8-space continuation lines), in table order."""
    lines = []
    for row in table:
        # No break inside "default X" or ">= -1": their spaces are non-breaking while wrapping.
        entry = re.sub(r"(default|[<>]=?) ", "\\1\xa0", docstring_entry(row, no_meaning=no_meaning))
        lines += textwrap.wrap(entry, width, initial_indent=" " * 4, subsequent_indent=" " * 8,
                               break_long_words=False, break_on_hyphens=False)
    return [line.replace("\xa0", " ") for line in lines]


def with_option_args(doc: str, table, *, no_meaning: str = "") -> str:
    """``doc`` (a hand-written constructor docstring) with the table's entries appended to its ``Args:`` section.

    The hand-written part keeps what no row says (the model argument, how options combine, the physics
    behind them) and names no default, so the two cannot disagree; a docstring without an ``Args:``
    line is a ``ValueError`` (the options would be silently missing from ``help()``)."""
    lines = inspect.cleandoc(doc).splitlines()
    if "Args:" not in lines:
        raise ValueError("a constructor docstring needs an 'Args:' section for its options")
    end = lines.index("Args:") + 1
    while end < len(lines) and lines[end].startswith(" "):  # the section ends at a blank or unindented line
        end += 1
    return "\n".join(lines[:end] + docstring_args(table, no_meaning=no_meaning) + lines[end:])


# Solver name (as ``steel run --solver`` spells it) -> module holding its ``OPTIONS`` table.
_TABLES = {
    "steel": "steel.solvers.steel.option_rows",
    "vbd": "steel.solvers.vbd.option_rows",
    "featherstone": "steel.solvers.featherstone.option_rows",
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
