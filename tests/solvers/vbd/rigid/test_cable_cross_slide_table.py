"""Newton 1.8.0's cable_cross_slide_table example with our SolverVBD in place of Newton's, as a user swaps it.

Known answer: the example's own checks (``test_post_step`` every frame, ``test_final``): the XY table
tracks its commanded path within 5.0 mm max and 2.5 mm RMS, and the cable and carriages stay in their
bounds. The example puts 1.0 N·m of joint friction on its five free pulley axles, which the
specification lists as unsupported for SolverVBD: ours refuses the model (Newton's runs and ignores
it). With that friction set to 0 before our solver is built, what Newton runs in effect, the example
passes: 1.82 mm max and 1.02 mm RMS at 100 frames (2.7x and 2.4x under its limits). It once failed the
max limit, for the captured graph whose replays cold-started the contact history, the released-side
contact Hessian and stuck anchors replayed on rolling cable–pulley contacts
(test_contact_convergence.py).
"""

from __future__ import annotations

import importlib

import pytest

import newton
import newton.examples
import newton.solvers
import newton.viewer
from steel.solvers import SolverVBD

FRAMES = 100


def _example(monkeypatch, zero_axle_friction: bool):
    module = importlib.import_module("newton.examples.cable.example_cable_cross_slide_table")

    class Swapped(SolverVBD):
        def __init__(self, model, *args, **kwargs):
            if zero_axle_friction:
                model.joint_friction.zero_()
            super().__init__(model, *args, **kwargs)

    monkeypatch.setattr(newton.solvers, "SolverVBD", Swapped)
    args = newton.examples.create_parser().parse_args(["--viewer", "null", "--device", "cpu"])
    return module.Example(newton.viewer.ViewerNull(num_frames=FRAMES), args)


@pytest.mark.filterwarnings("ignore::newton.NewtonWarning")  # joint armature, not run: named, not refused
def test_table_tracks_its_path_with_the_axle_friction_zeroed(monkeypatch):
    example = _example(monkeypatch, zero_axle_friction=True)
    for _ in range(FRAMES):
        example.step()
        example.test_post_step()
    example.test_final()  # raises past 5.0 mm max or 2.5 mm RMS tracking error
    assert example.table_tracking_sample_count >= FRAMES


def test_axle_friction_is_refused_by_name(monkeypatch):
    with pytest.raises(NotImplementedError, match="joint friction"):
        _example(monkeypatch, zero_axle_friction=False)
