"""The A/B timer (benchmarks/ab.py) times contact scenes in contact, and refuses a tree that cannot."""

import os

import pytest

from benchmarks import ab

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_worker_times_a_row_of_this_tree_with_and_without_the_settle_time():
    settled = ab._run_worker(ROOT, ["steel:cartpole:1"], 2, 0, settle=True, dt=1 / 240)
    plain = ab._run_worker(ROOT, ["steel:cartpole:1"], 2, 0, settle=False)
    for times in (settled, plain):
        assert list(times) == ["steel:cartpole:1"] and times["steel:cartpole:1"] > 0.0  # [s per step]


def test_a_tree_without_the_settled_start_is_refused_not_timed_differently(tmp_path):
    """An older tree's run_solver has no settle_start: the worker fails naming --no-settle."""
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    (bench / "__init__.py").write_text("")
    (bench / "measure.py").write_text(
        "def run_solver(solver_cls, scene_name, worlds, device, steps, warmup, count_steps):\n"
        "    raise AssertionError('must not be reached')\n")
    with pytest.raises(RuntimeError, match="no settled start; pass --no-settle"):
        ab._run_worker(str(tmp_path), ["steel:cartpole:1"], 2, 0, settle=True)
    with pytest.raises(RuntimeError, match="takes no dt"):
        ab._run_worker(str(tmp_path), ["steel:cartpole:1"], 2, 0, settle=False, dt=1 / 240)
