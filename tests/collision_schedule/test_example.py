"""The adaptive_collision example runs, refreshes once per frame at rest and saves far fewer calls."""

from __future__ import annotations

import json

from steel.examples import EXAMPLES
from steel.examples.adaptive_collision import run_adaptive_collision


def test_example_short_run(tmp_path):
    """30 frames with a launch at frame 10: 1 call per frame before it, at most 8 after, summary saved."""
    assert "adaptive_collision" in EXAMPLES
    summary = run_adaptive_collision(frames=30, launch_frame=10, out_dir=tmp_path, log=lambda *args: None)
    assert summary["calls_per_frame_before_launch"] == 1.0
    assert max(summary["calls_per_frame"][10:]) <= 8
    assert summary["collision_calls_total"] < summary["collide_every_substep_calls_total"]
    assert json.loads((tmp_path / "summary.json").read_text())["frames"] == 30
