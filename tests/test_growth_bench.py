"""Smoke test of the growth benchmark (benchmarks/growth.py): the pyramid scene and two steps of each solver."""

import math

import numpy as np
import pytest

from benchmarks import growth
from benchmarks import scenes as sc


@pytest.mark.parametrize("levels, boxes", [(10, 55), (20, 210), (30, 465)])
def test_pyramid_layout_counts_and_rests_on_ground(levels, boxes):
    centres = np.asarray(sc.pyramid_layout(levels))
    assert len(centres) == boxes
    # Bottom level on the ground (centre at one half extent), each level one box edge higher.
    assert np.isclose(centres[:, 2].min(), sc.BOX_HALF)
    assert np.isclose(centres[:, 2].max(), sc.BOX_HALF * (2 * levels - 1))
    # Symmetric about x = 0, so the pyramid has no built-in lean.
    assert abs(centres[:, 0].sum()) < 1e-9  # [m]


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_pyramid_layout_rejects_bad_levels(bad):
    with pytest.raises(ValueError, match="levels"):
        sc.pyramid_layout(bad)


def test_fit_exponent_recovers_known_slopes():
    x = np.array([10.0, 100.0, 1000.0])
    assert math.isclose(growth.fit_exponent(x, 3.0 * x), 1.0, abs_tol=1e-9)
    assert math.isclose(growth.fit_exponent(x, 0.5 * x**2), 2.0, abs_tol=1e-9)
    assert growth.fit_exponent([5.0, 5.0], [1.0, 2.0]) is None


def test_two_steps_of_the_small_pyramid_both_solvers():
    entries = [growth.measure("pyramid10", "pyramid", 1, which, "cpu", steps=2, warmup=0, dt=1 / 240)
               for which in ("reference", "ours")]
    ref, ours = entries
    # Every box resting on its support makes contacts; ours reserves rows for them and drops none.
    assert ours.rows > ours.contacts > 55
    assert ours.rows_dropped == 0
    assert not any("overflow" in n.lower() for n in ref.notes), ref.notes
    for e in entries:
        assert e.step_ms > 0 and e.total_ms >= e.step_ms
        assert not e.sanity["nan"]
        assert e.settle_steps == 60 and e.dt == 1 / 240  # PYRAMID_SETTLE_S = 0.25 s untimed first
        # Settled and two steps from rest: nothing moves 1 mm [m] (the pyramid starts in contact, at rest).
        assert e.sanity["drift_max_m"] < 1e-3
        assert abs(e.sanity["box_z_min_m"] - sc.BOX_HALF) < 1e-3


def test_the_towers_are_timed_after_they_landed():
    """The towers drop from up to 1.5 m: the timed window starts after benchmarks.settle's 1.5 s, every box
    resting on its support, not while they are in the air."""
    e = growth.measure("tower", "towers", 1, "ours", "cpu", steps=2, warmup=0, dt=1 / 240)
    assert e.settle_steps == 360 and e.dt == 1 / 240
    assert not e.sanity["nan"]
    assert abs(e.sanity["box_z_min_m"] - sc.BOX_HALF) < 1e-3  # the lowest box rests on the ground [m]
    assert e.contacts >= 96  # four corners of each of the 24 boxes carry load (speculative ones come on top)
    assert "dt 0.00416667 s; untimed settling steps before the warm-up: tower 360." in growth.markdown([e], {}, None,
                                                                                                        "cmd")


def test_growth_takes_one_time_step():
    assert growth.parse_args(["--dt", "1/600"]).dt_s == 1 / 600
    assert growth.parse_args([]).dt_label == "1/240"
    with pytest.raises(ValueError, match="one time step"):
        growth.parse_args(["--dt", "1/240,1/600"])


@pytest.mark.parametrize("which", ["ours", "reference"])
def test_stand_check_reports_a_resting_small_pyramid(which):
    res = growth.stand(3, 6 * sc.DT, "cpu", which)
    assert res["solver"] == which and res["boxes"] == 6
    assert not res["nan"] and math.isclose(res["time_s"], 6 * sc.DT)
    # Six steps from rest: nothing drifts or sinks by 1 mm [m]; ours reports its (zero) dropped rows.
    assert res["drift_max_m"] < 1e-3 and abs(res["sink_max_m"]) < 1e-3
    assert res["dropped_rows"] == (0 if which == "ours" else None)
    assert "Stand check, " + which in growth.markdown([], {}, res, "cmd")
