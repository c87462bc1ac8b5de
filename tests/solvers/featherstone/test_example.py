"""The featherstone_humanoid example: runs, and its USD viewer writes a file or says why it cannot."""

from __future__ import annotations

import importlib.util
import json

import pytest

from steel.examples import featherstone_humanoid as example

SHORT = ["--worlds", "1", "--seconds", "0.1"]  # 6 frames of 4 substeps: enough to exercise every call


def test_null_viewer_runs_and_writes_its_summary(tmp_path):
    """--viewer null steps the scene and writes summary.json with a finite state."""
    argv = [*SHORT, "--viewer", "null", "--out", str(tmp_path)]
    summary = example.run_featherstone_humanoid(argv, log=lambda _: None)
    assert summary["finite"] and json.loads((tmp_path / "summary.json").read_text())["viewer"] == "null"


@pytest.mark.skipif(importlib.util.find_spec("pxr") is None, reason="usd-core not installed")
def test_usd_viewer_writes_a_usd_file(tmp_path):
    """--viewer usd writes featherstone_humanoid.usd with the humanoid's bodies time-sampled over the frames."""
    from pxr import Usd  # noqa: PLC0415

    summary = example.run_featherstone_humanoid([*SHORT, "--viewer", "usd", "--out", str(tmp_path)], log=lambda _: None)
    path = tmp_path / example.USD_PATH
    assert summary["usd"] == str(path) and path.stat().st_size > 0
    stage = Usd.Stage.Open(str(path))
    assert stage.GetEndTimeCode() > stage.GetStartTimeCode()
    assert sum(1 for prim in stage.Traverse() if prim.GetAttribute("xformOp:translate").GetNumTimeSamples() > 1)


def test_usd_viewer_without_usd_core_says_so_before_any_work(tmp_path, monkeypatch, capsys):
    """Without usd-core, --viewer usd exits with status 2 and a message naming usd-core, writing nothing."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pxr" else real(name, *a))
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        example.run_featherstone_humanoid([*SHORT, "--viewer", "usd", "--out", str(out)])
    assert exit_info.value.code == 2
    assert "usd-core" in capsys.readouterr().err
    assert not out.exists()
