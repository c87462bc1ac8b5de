"""``body_parent_f`` with contacts: the joint reports what it carries, not the contact load.

A box resting on the ground is held by the ground, so its inbound joint (FREE, or a vertical
PRISMATIC slider) carries nothing: ``body_parent_f ~ 0``. Adding the contact wrench with the wrong
sign reports 2 m g; leaving it out reports m g.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverFeatherstone, SolverSteel

G = 9.81  # [m/s²]
SOLVERS = {"steel": SolverSteel, "featherstone": SolverFeatherstone}


def _box_on_ground(joint: str):
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    b.add_ground_plane()
    xform = wp.transform((0.0, 0.0, 0.1), wp.quat_identity())
    body = b.add_link(xform=xform)
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    if joint == "free":
        j = b.add_joint_free(body)
    else:
        j = b.add_joint_prismatic(-1, body, axis=(0.0, 0.0, 1.0), parent_xform=xform)
    b.add_articulation([j])
    return b.finalize(device="cpu")


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("joint", ["free", "slider"])
def test_a_resting_box_joint_carries_no_load(name, joint):
    """After 1 s at rest, |body_parent_f| < 1 % of m g (SolverSteel measured ~1e-6 m g; SolverFeatherstone's
    penalty contact leaves a small residual oscillation), where a flipped contact term gives 2 m g."""
    model = _box_on_ground(joint)
    solver = SOLVERS[name](model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    obs = solver.observables({"body_parent_f"})
    s0, s1 = model.state(), model.state()
    dt = 1.0 / 600.0
    for _ in range(600):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, dt, observables=obs)
        s0, s1 = s1, s0
    weight = float(model.body_mass.numpy()[0]) * G
    # [m] it rests on the ground (SolverFeatherstone's penalty contact sinks to m g / (n ke), 7.8 mm here)
    assert abs(float(s0.body_q.numpy()[0, 2]) - 0.1) < 1e-2
    f = obs.body_parent_f.numpy()[0]
    assert np.abs(f[:3]).max() < 0.01 * weight, f
