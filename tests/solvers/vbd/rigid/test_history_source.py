"""Which contact set SolverVBD's body–body history restores from, as Newton 1.8.0 documents it.

History is restored only from the set the previous step solved: the same set again (no collision pass since)
row by row from itself; one pass since into the same buffer through its match indices; two passes, or another
buffer, cold. Checked on the rows right after the refresh (``RigidContacts.begin``) of a resting box.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

DT = 1.0 / 60.0


def _box_on_ground():
    """A box (20 cm) touching the ground, a matching pipeline, its buffer and a solver with history."""
    b = newton.ModelBuilder()
    b.add_ground_plane()
    body = b.add_body(xform=wp.transform((0.0, 0.0, 0.1), wp.quat_identity()))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b.color()
    model = b.finalize(device="cpu")
    pipeline = newton.CollisionPipeline(model, contact_matching="latest")
    return model, pipeline, pipeline.contacts(), SolverVBD(model, iterations=4, rigid_contact_history=True)


def _resting_box():
    """The box after 20 collide-then-step steps: (model, pipeline, contacts, solver, state)."""
    model, pipeline, contacts, solver = _box_on_ground()
    s0, s1 = model.state(), model.state()
    for _ in range(20):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
    return model, pipeline, contacts, solver, s0


@pytest.mark.parametrize("passes", [0, 1, 2, "other buffer"])
def test_history_restores_only_from_the_solved_set(passes):
    """0 passes: λ of row i is α γ λ_prev[i]; 1 pass: α γ λ_prev[match[i]]; 2 passes or another buffer: 0 (cold)."""
    model, pipeline, contacts, solver, state = _resting_box()
    rc = solver.rigid.contacts
    prev = rc.prev.lam.numpy().copy()
    assert (prev[:4] > 0.0).all()  # four loaded corners
    if passes == "other buffer":
        contacts = pipeline.contacts()
        pipeline.collide(state, contacts)
    else:
        for _ in range(passes):
            pipeline.collide(state, contacts)
    rc.begin(contacts, state.body_q)
    n = int(contacts.rigid_contact_count.numpy()[0])
    lam = rc.data.lam.numpy()[:n]
    keep = np.float32(0.95) * np.float32(0.999)
    if passes == 0:
        np.testing.assert_allclose(lam, keep * prev[:n], rtol=1e-6)
    elif passes == 1:
        match = contacts.rigid_contact_match_index.numpy()[:n]
        assert (match >= 0).all()
        np.testing.assert_allclose(lam, keep * prev[match], rtol=1e-6)
    else:
        np.testing.assert_array_equal(lam, 0.0)


def test_a_repeated_step_after_first_touch_restores_from_itself():
    """A box touching down: the pass that first finds its corners has no matches (-1), so a second step on the same
    contacts must restore from its own rows; the match indices would leave it cold."""
    model, pipeline, contacts, solver = _box_on_ground()
    s0, s1 = model.state(), model.state()
    pipeline.collide(s0, contacts)
    n = int(contacts.rigid_contact_count.numpy()[0])
    assert n == 4 and (contacts.rigid_contact_match_index.numpy()[:n] < 0).all()
    solver.step(s0, s1, None, contacts, DT)
    prev = solver.rigid.contacts.prev.lam.numpy()[:n].copy()
    solver.rigid.contacts.begin(contacts, s1.body_q)
    assert (prev > 0.0).all()
    np.testing.assert_allclose(solver.rigid.contacts.data.lam.numpy()[:n], np.float32(0.95 * 0.999) * prev, rtol=1e-6)
