"""The examples a user runs first: the README's Usage file and `python -m steel.examples`, in their --test modes.

Every example's --test runs at its defaults, as the README promises (none is shortened)."""

import importlib.util
import json
import re
import runpy
from pathlib import Path

import pytest

import newton
import newton.examples

from steel.examples import EXAMPLES
from steel.examples.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
NEWTON_FLAGS = ("--viewer", "--num-frames", "--test", "--device", "--quiet", "--benchmark")


def test_the_readme_example_table_lists_every_example_once():
    """The README's example table and `python -m steel.examples` come from one list (steel.examples.EXAMPLES);
    the table once left out avbd_stacks."""
    section = (ROOT / "README.md").read_text().split("## Examples", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)` \|", section, re.M)
    assert sorted(rows) == sorted(EXAMPLES)


def test_example_viewers_are_those_that_open(capsys):
    """An example's --viewer offers null, usd and gl only: Newton's parser also offered rtx, rerun and viser,
    which then failed; asking for one is now an argument error (exit 2) before anything runs."""
    assert main(["free_fall", "--viewer", "rerun", "--num-frames", "1"]) == 2
    assert "invalid choice: 'rerun' (choose from 'null', 'usd', 'gl')" in capsys.readouterr().err


def test_readme_usage_is_the_tested_file_and_the_humanoid_ends_lying_on_the_ground():
    """examples/usage.py (the README's Usage code, verbatim) leaves every body of the humanoid below 0.5 m.

    The old README snippet lifted the MJCF's own floor with the robot and launched the humanoid to 49 m."""
    code = (ROOT / "examples" / "usage.py").read_text()
    block = re.search(r"## Usage\n.*?```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    body = code.split('"""', 2)[2].strip()  # the file without its docstring
    assert block.strip() == body, "the README's Usage block differs from examples/usage.py"
    scope = runpy.run_path(str(ROOT / "examples" / "usage.py"))
    z = scope["s0"].body_q.numpy()[:, 2]
    assert z.max() < 0.5 and z.min() > -0.1


def test_examples_are_listed_with_descriptions_and_exit_0(capsys):
    """`python -m steel.examples` lists every example with a one-line description and exits 0 (it exited 2)."""
    assert main([]) == 0
    out = capsys.readouterr().out
    for name in EXAMPLES:
        line = next(line for line in out.splitlines() if line.strip().startswith(name))
        assert len(line.split(name, 1)[1].strip()) > 20
    for solver in ("SolverSteel", "SolverFeatherstone", "SolverVBD", "articulation core", "scheduled"):
        assert solver in out  # one example per solver


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_takes_newtons_example_flags(name, capsys):
    """--help of each example shows Newton's flags (free_fall and adaptive_collision ignored every argument)."""
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    for flag in NEWTON_FLAGS:
        assert flag in out, (name, flag)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_test_mode_passes(name, tmp_path, monkeypatch):
    """Each example's --test mode at its defaults (what the README promises and CI runs) passes and, without
    --out, writes nothing. The suite ran six of them shortened (fewer frames, an earlier throw or kick, a 6x6
    cloth, fewer worlds), so a default that failed went unseen."""
    monkeypatch.chdir(tmp_path)
    assert main([name, "--test", "--quiet"]) == 0
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["featherstone_humanoid", "--world-count", "0"], "--world-count must be at least 1"),
        (["free_fall", "--num-frames", "-1"], "--num-frames must be at least 1"),
        (["cloth_drape", "--size", "1"], "--size must be at least 2"),
        (["adaptive_collision", "--no-such-flag"], "unrecognized arguments"),
        (["free_fall", "--max-speed", "-1"], "--max-speed must be positive"),
    ],
)
def test_bad_example_arguments_exit_2_before_any_work(args, message, tmp_path, monkeypatch, capsys):
    """Bad arguments are an argparse error with exit 2 (featherstone_humanoid --world-count 0 was an AttributeError)."""
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("substeps, drift", [(4, 4.9), (16, 1.22), (64, 0.30)])
def test_free_fall_energy_drift_is_first_order_in_dt(substeps, drift, monkeypatch):
    """free_fall's docstring: over 0.5 s the largest energy drift of its four worlds is 4.9 J at dt = 1/240 s,
    1.22 J at 1/960 s and 0.30 J at 1/3840 s (measured 4.904, 1.219, 0.302 J: a quarter per quartered step).
    rtol 0.1 [J]: the docstring's two or three digits; a second-order integrator would drop sixteenfold."""
    from steel.examples import common, free_fall

    monkeypatch.setattr(free_fall, "SUBSTEPS", substeps)
    parser = common.create_parser("free_fall", free_fall.__doc__, num_frames=30)
    newton.examples.add_world_count_arg(parser)
    parser.set_defaults(world_count=4)
    viewer, args = common.init(parser, ["--viewer", "null", "--quiet"])
    example = free_fall.Example(viewer, args)
    for _ in range(30):  # 0.5 s of 1/60 s frames
        example.step()
    assert example.energy_drift() == pytest.approx(drift, rel=0.1)


def test_free_fall_writes_its_own_folder_not_the_demos(tmp_path, monkeypatch):
    """free_fall writes results/examples/free_fall/ (it overwrote results/demo/), with outcome and command."""
    monkeypatch.chdir(tmp_path)
    assert main(["free_fall", "--world-count", "1", "--num-frames", "2", "--quiet"]) == 0
    summary = json.loads((tmp_path / "results/examples/free_fall/summary.json").read_text())
    assert summary["outcome"] == "completed" and summary["command"].endswith("free_fall --world-count 1 "
                                                                            "--num-frames 2 --quiet")
    assert not (tmp_path / "results" / "demo").exists()


def test_an_example_that_trips_the_guard_exits_1_and_says_when(tmp_path):
    """The divergence guard runs in every example: free fall past 1 m/s stops the run with exit 1."""
    assert main(["free_fall", "--world-count", "1", "--max-speed", "1", "--out", str(tmp_path), "--quiet"]) == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["outcome"] == "diverged" and summary["divergence"]["reason"] == "too fast"
    # g t passes 1 m/s at t = 0.102 s; the guard checks once per 1/60 s frame: the 7th frame catches it
    assert summary["divergence"]["time_s"] == pytest.approx(7.0 / 60.0)


@pytest.mark.skipif(importlib.util.find_spec("pxr") is None, reason="usd-core not installed")
def test_usd_viewer_writes_a_usd_file(tmp_path):
    """--viewer usd writes the motion to --output-path with the humanoid's bodies time-sampled over the frames."""
    from pxr import Usd  # noqa: PLC0415

    path = tmp_path / "motion.usd"
    args = ["featherstone_humanoid", "--world-count", "1", "--num-frames", "6", "--viewer", "usd",
            "--output-path", str(path), "--out", str(tmp_path), "--quiet"]
    assert main(args) == 0
    stage = Usd.Stage.Open(str(path))
    assert stage.GetEndTimeCode() > stage.GetStartTimeCode()
    assert sum(1 for prim in stage.Traverse() if prim.GetAttribute("xformOp:translate").GetNumTimeSamples() > 1)


def test_usd_viewer_without_usd_core_says_so_before_any_work(tmp_path, monkeypatch, capsys):
    """Without usd-core, --viewer usd exits with status 2 and a message naming usd-core, writing nothing."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pxr" else real(name, *a))
    out = tmp_path / "out"
    args = ["featherstone_humanoid", "--viewer", "usd", "--output-path", str(out / "m.usd"), "--out", str(out)]
    assert main(args) == 2
    assert "usd-core" in capsys.readouterr().err
    assert not out.exists()


def test_readme_lists_exactly_the_solversteel_options_not_built_yet():
    """The README's "Options built" table names every option that raises NotImplementedError, and no other.

    When an option gets built, remove its row from the table (the README claimed every option was built)."""
    from steel.solvers.steel.options import ENUMS, NOT_IMPLEMENTED, NOT_IMPLEMENTED_VALUES  # noqa: PLC0415

    section = (ROOT / "README.md").read_text().split("## Options built", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    partial = {name for name, ok in NOT_IMPLEMENTED_VALUES.items() if set(ok) != set(ENUMS[name])}
    assert listed == set(NOT_IMPLEMENTED) | partial


def test_help_documents_the_solvers_own_options():
    """help() of SolverSteel and SolverFeatherstone shows their options, not the base class's constructor doc."""
    import pydoc  # noqa: PLC0415
    from dataclasses import fields  # noqa: PLC0415

    from steel.solvers import SolverFeatherstone, SolverSteel  # noqa: PLC0415
    from steel.solvers.steel.options import NOT_IMPLEMENTED, SteelOptions  # noqa: PLC0415

    from tests.solvers.test_option_tables import args_entries  # noqa: PLC0415

    entries = args_entries(SolverSteel.__init__.__doc__)  # an entry wraps over several lines
    for f in fields(SteelOptions):
        entry = entries[f.name]
        assert "default" in entry and (f.name not in NOT_IMPLEMENTED or "not built" in entry), entry
    for cls in (SolverSteel, SolverFeatherstone):
        assert "Initialize common solver state" not in pydoc.render_doc(cls, renderer=pydoc.plaintext)


def test_steel_sleeping_port_sleeps_wakes_one_tower_and_sleeps_again_on_cpu(tmp_path):
    """steel_sleeping (Newton's example needs CUDA) at its defaults: the 24 tower bodies all sleep by 1.2 s, the kick
    at 5 s wakes tower 1 alone, which (with the block) sleeps again 1.87 s later; no sleeping body moved. (With rigid
    friction-anchor rows it slept again 2.45 s later: the settled anchors' regularized rows, contacts/rows.py, let the
    kicked tower come to rest sooner.)"""
    assert main(["steel_sleeping", "--test", "--out", str(tmp_path), "--quiet"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["towers_asleep_s"] == pytest.approx(1.2, abs=0.3)  # [s] measured 1.2 (one frame is 1/60 s)
    assert summary["towers_woken_by_kick"] == [1]
    assert summary["target_tower_asleep_again_s"] - summary["kick_time_s"] == pytest.approx(1.87, abs=0.5)  # [s]
    assert summary["moved_while_asleep"] is None and summary["finite"]
