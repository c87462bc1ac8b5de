"""The refactor fingerprint (benchmarks/behaviour_hashes.py): a check of the same code passes, a changed hash
is reported and fails, bad options are named."""

import json

import pytest

from benchmarks import behaviour_hashes as bh


def test_a_recorded_run_checks_the_same_and_a_changed_hash_fails(tmp_path, capsys):
    path = tmp_path / "hashes.json"
    assert bh.main(["--cases", "steel/ramp20", "--steps", "5", "--write", str(path)]) == 0
    assert bh.main(["--cases", "steel/ramp20", "--steps", "5", "--check", str(path)]) == 0
    assert "0 of 1 cases differ" in capsys.readouterr().out
    recorded = json.loads(path.read_text())
    recorded["hashes"]["steel/ramp20"] = "0" * 64
    path.write_text(json.dumps(recorded))
    assert bh.main(["--cases", "steel/ramp20", "--steps", "5", "--check", str(path)]) == 1
    assert "DIFFERS" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [(["--cases", "steel/nope"], "unknown 'steel/nope'"),
                                         (["--steps", "0"], "--steps must be >= 1, got 0")])
def test_bad_options_are_named(argv, words):
    with pytest.raises(ValueError, match=words):
        bh.parse_args(argv)


def test_a_check_against_another_step_count_is_refused(tmp_path):
    path = tmp_path / "hashes.json"
    path.write_text(json.dumps({"steps": 300, "worlds": 2, "hashes": {}}))
    with pytest.raises(ValueError, match="recorded with --steps 300, not 5"):
        bh.main(["--cases", "steel/ramp20", "--steps", "5", "--check", str(path)])
