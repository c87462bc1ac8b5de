"""SolverSteel holds a pinched object: persistent friction anchors, not soft contacts that creep.

MuJoCo's users report a small object pinched between two friction pads creeping at 50-155 um/s (soft
contacts); the scenes are ``benchmarks/statics.py``'s.
"""

import pytest

from benchmarks import statics
from steel.solvers import SolverSteel


@pytest.mark.parametrize("force", [12.0, 30.0, 60.0])
def test_a_pinched_capsule_does_not_slip(force):
    """A 45 g capsule (radius 4 mm) between two pads (mu 0.7) pushed together by ``force`` [N] each through
    their prismatic joints' efforts, gravity on, dt 1/240: mean slip speed from 1 s to 4 s below 1e-8 m/s.

    Measured 0 at 12, 30 and 60 N (the capsule's height is bitwise unchanged; one float32 step of it at
    0.5 m over the window reads 2e-8 m/s, so the limit admits none); the target was 1e-6 m/s.
    """
    scene = statics.grasp()
    assert statics.grasp_slip(scene, SolverSteel(scene.model), 1.0 / 240.0, force, 1.0, 4.0) < 1e-8  # [m/s]


def test_the_pinch_needs_its_squeeze():
    """Control: with 0.2 N per pad (2 mu F = 0.28 N < m g = 0.44 N) the capsule slips (mean speed from 1 s to
    4 s above 1 m/s: it has fallen out of the pads)."""
    scene = statics.grasp()
    assert statics.grasp_slip(scene, SolverSteel(scene.model), 1.0 / 240.0, 0.2, 1.0, 4.0) > 1.0  # [m/s]


@pytest.mark.parametrize("options, slip_limit", [({}, 5e-8), ({"drive_mode": "rows"}, 3.3e-6)])
def test_a_two_finger_gripper_lifts_a_box_and_holds_it(options, slip_limit):
    """Two position-driven prismatic fingers (effort limit 20 N, mu 0.8) close on a 0.5 kg, 0.1 m cube, lift it
    0.1 m and hold it 10 s (dt 1/240): lifted 0.0995 m (augmented drives) / 0.0993 m (drive rows), within
    1 % of the target (the lift drive's sag under the load); slip relative to the palm over the hold 1.5e-8 m
    (one float32 step) / 1.1e-6 m, limits 5e-8 / 3.3e-6 m. The target was 1e-4 m."""
    scene = statics.gripper()
    result = statics.gripper_lift(scene, SolverSteel(scene.model, **options), 1.0 / 240.0)
    assert result["lifted_m"] == pytest.approx(statics.GRIPPER_LIFT, rel=0.01)
    assert result["slip_m"] < slip_limit  # [m]
