"""The solvers' option tables: every derived view (docs, README, signature, checks) agrees with its table."""

import inspect
import re
from pathlib import Path

import pytest

from steel.solvers import SolverFeatherstone, SolverSteel, SolverVBD
from steel.solvers.option_table import (REFUSED, Option, check_int, check_real, describe_range, docstring_args,
                                        docstring_entry, option_help_lines, option_table, refused_values, validator,
                                        with_option_args)
from steel.solvers.featherstone import validate as featherstone_options
from steel.solvers.steel import options as steel_options
from steel.solvers.vbd import options as vbd_options
from tests.solvers.steel.scenes import single_box

ROOT = Path(__file__).resolve().parents[2]
SOLVER_NAMES = ("steel", "vbd", "featherstone")
SOLVERS = {"steel": SolverSteel, "vbd": SolverVBD, "featherstone": SolverFeatherstone}


def args_entries(doc: str) -> dict[str, str]:
    """``{name: entry text}`` of a Google-style ``Args:`` section (an entry: its line and the deeper-indented
    lines after it, whitespace collapsed), in order."""
    lines = inspect.cleandoc(doc).splitlines()
    entries, name = {}, None
    for line in lines[lines.index("Args:") + 1:]:
        match = re.match(r"    (\w+): (.*)", line)
        if match:
            name = match.group(1)
            entries[name] = match.group(2)
        elif line.startswith(" " * 8) and name is not None:
            entries[name] += " " + line.strip()
        else:
            break
    return entries


def test_readme_not_built_table_is_the_rendered_one():
    """The README's "Options built" table is exactly what the table renders (edit the row, then paste the render)."""
    section = (ROOT / "README.md").read_text().split("## Options built", 1)[1].split("\n## ", 1)[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("|"))
    assert table == steel_options.not_built_markdown()


@pytest.mark.parametrize("solver_name", SOLVER_NAMES)
def test_every_default_passes_its_own_check_unchanged(solver_name):
    """A row's default is a valid value of the row (a typo in a range would otherwise reject the default)."""
    for row in option_table(solver_name):
        value = validator(row)(row.default)
        assert value == row.default or (value != value and row.default != row.default), row.name


@pytest.mark.parametrize("solver_name", SOLVER_NAMES)
def test_every_row_has_a_meaning(solver_name):
    """Every row says what it does, so no docstring entry or help line is a bare name and default (a row added
    without a meaning fails here rather than documenting nothing)."""
    missing = [row.name for row in option_table(solver_name) if not row.meaning.strip()]
    assert missing == []


@pytest.mark.parametrize("solver_name", SOLVER_NAMES)
def test_help_lines_name_every_option_once(solver_name):
    lines = option_help_lines(solver_name)
    names = [re.match(r"(\w+) \(", line).group(1) for line in lines]
    assert names == [row.name for row in option_table(solver_name)]
    assert all("default" in line for line in lines)


def test_steel_signature_and_dataclass_follow_the_table():
    params = inspect.signature(SolverSteel.__init__).parameters
    rows = steel_options.OPTIONS
    assert [p for p in params if p not in ("self", "model")] == [row.name for row in rows]
    assert all(params[row.name].default == row.default for row in rows)
    assert steel_options.STEP_OPTIONS == {row.name for row in rows if row.assignable}
    defaults = steel_options.SteelOptions()
    assert all(getattr(defaults, row.name) == row.default for row in rows)


@pytest.mark.parametrize("name", ["articulation_constraint_max", "free_body_constraint_max"])
def test_a_row_capacity_below_one_is_the_tables_rule(name):
    """>= 1 or None in the table itself (assignment, build_options and the constructor read the same rule)."""
    with pytest.raises(ValueError, match=rf"^{name} must be >= 1 \(or None to size it from the model\), got 0$"):
        steel_options.validate_option(name, 0)
    assert steel_options.validate_option(name, None) is None
    assert steel_options.validate_option(name, 1) == 1


def test_one_range_wording_for_every_solver():
    assert describe_range("int", 0) == ">= 0"
    assert describe_range("float", 0.0) == "finite and >= 0"
    assert describe_range("float", 0.0, low_open=True) == "finite and > 0"
    assert describe_range("float", 0.0, 1.0, low_open=True, high_open=True) == "finite and in (0, 1)"
    assert describe_range("float", 0.0, 1.0, inf_ok=True) == "in [0, 1] or inf"
    assert describe_range("float", 0.0, optional=True) == "finite and >= 0 or None"
    with pytest.raises(TypeError, match=r"^n must be an int, got 1.5$"):
        check_int("n", 1.5, 0)
    with pytest.raises(TypeError, match=r"^n must be an int, got True$"):
        check_int("n", True, 0)
    with pytest.raises(ValueError, match=r"^n must be >= 1, got 0$"):
        check_int("n", 0, 1)
    with pytest.raises(TypeError, match=r"^x must be a real number, got '1'$"):
        check_real("x", "1", 0.0)
    for bad in (-1.0, float("nan"), float("inf"), float("-inf")):
        with pytest.raises(ValueError, match=r"^x must be finite and >= 0, got "):
            check_real("x", bad, 0.0)
    assert check_real("x", float("inf"), 0.0, inf_ok=True) == float("inf")
    assert check_real("x", 2, 0.0) == 2.0 and type(check_real("x", 2, 0.0)) is float


def test_vbd_signature_dataclass_and_derived_sets_follow_the_table():
    params = inspect.signature(SolverVBD.__init__).parameters
    seed = [row for row in vbd_options.OPTIONS if not row.later]
    assert [p for p in params if p not in ("self", "model")] == [row.name for row in seed]
    assert all(params[row.name].default == row.default for row in seed)
    assert set(vbd_options.EXTRAS) | set(vbd_options.ALIASES) | {vbd_options.LATER_GAP} == {
        row.name for row in vbd_options.OPTIONS if row.later}
    assert vbd_options.ALIASES == {vbd_options.RELAXATION: vbd_options.OLD_RELAXATION}


def test_featherstone_signature_keeps_its_annotated_defaults():
    """The signature derived from the table is the one the explicit constructor declared: defaults and types."""
    params = inspect.signature(SolverFeatherstone.__init__).parameters
    assert {name: (p.default, p.annotation) for name, p in params.items() if name not in ("self", "model")} == {
        "angular_damping": (0.05, "float"), "update_mass_matrix_interval": (1, "int"),
        "friction_smoothing": (1.0, "float"), "use_tile_gemm": (False, "bool"), "fuse_cholesky": (True, "bool"),
        "deterministic": (None, "wp.DeterministicMode | None")}
    assert params["model"].annotation == "newton.Model"
    assert [row.name for row in featherstone_options.OPTIONS] == [p for p in params if p not in ("self", "model")]


def test_unknown_options_are_type_errors_in_every_solver():
    model = single_box(z=0.5)
    for cls in (SolverSteel, SolverFeatherstone):
        with pytest.raises(TypeError, match=rf"^{cls.__name__}\(\) got an unexpected keyword argument 'bogus'$"):
            cls(model, bogus=1)


@pytest.mark.parametrize("solver_name", SOLVER_NAMES)
def test_constructor_docstring_documents_every_row_with_its_default(solver_name):
    """``Solver.__init__.__doc__``'s ``Args:`` are ``model`` and then exactly the table's rows, in its order, each with
    its default (and "not built:" where a value is refused): a documented name the table lacks, or a row the
    docstring lacks, fails here, so the two cannot drift."""
    entries = args_entries(SOLVERS[solver_name].__init__.__doc__)
    rows = option_table(solver_name)
    assert list(entries) == ["model"] + [row.name for row in rows]
    for row in rows:
        assert f"default {row.default!r}" in entries[row.name], (row.name, entries[row.name])
        assert ("not built:" in entries[row.name]) == bool(refused_values(row)), row.name
        if row.unit:
            assert f"[{row.unit}]" in entries[row.name], row.name


# snake_case names the hand-written constructor text uses that are not options (Warp's, Newton's spellings).
_NOT_OPTIONS = {"vbd": {"fast_math"}, "steel": set(), "featherstone": set()}


@pytest.mark.parametrize("solver_name", SOLVER_NAMES)
def test_hand_written_constructor_text_names_only_options_of_the_table(solver_name):
    """Every ````snake_case```` (or ````snake_case=value````) in the hand-written part of the constructor docstring
    is an option of the table: renaming a row without its notes fails here."""
    doc = SOLVERS[solver_name].__init__.__doc__
    named = set(re.findall(r"``([a-z][a-z0-9]*_[a-z0-9_]+)(?:=[^`]*)?``", doc))
    assert named or solver_name == "steel", "the pattern finds the notes' option names"  # Steel's text names none
    assert named - {row.name for row in option_table(solver_name)} - _NOT_OPTIONS[solver_name] == set()


def test_docstring_entry_wording():
    """One entry: meaning, unit, default, range and state, in that order; long entries wrap under their name."""
    row = Option("gap", 0.5, "float", low=0.0, unit="m", assignable=True, meaning="distance a row waits")
    assert docstring_entry(row) == (
        "gap: distance a row waits [m]; default 0.5; finite and >= 0; assignable after construction.")
    refused = Option("fancy", False, "bool", status=REFUSED)
    assert docstring_entry(refused, no_meaning="as the reference") == (
        "fancy: as the reference; default False; not built: only the default (False).")
    lines = docstring_args([Option("n", 1, "int", low=-1, meaning="a " * 60)], width=60)
    assert lines[0].startswith("    n: a a") and all(line.startswith(" " * 8) for line in lines[1:])
    assert lines[-1].endswith("default 1; >= -1.") and all(len(line) <= 60 for line in lines)
    with pytest.raises(ValueError, match="Args:"):
        with_option_args("Summary only.", (row,))
