"""Newton 1.8.0's SolverSteel calls a user meets beside step: notify_state_changed and constraint_row_watermarks."""

import newton
import numpy as np
import pytest
import warp as wp

from steel.solvers import SolverSteel


def _box_model():
    builder = newton.ModelBuilder()
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.3), wp.quat_identity()))
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


def _steps(solver, model, state, n, edit=None):
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = state, model.state()
    for k in range(n):
        if edit is not None and k == n // 2:
            edit(s0)
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, 1.0 / 240.0)
        s0, s1 = s1, s0
    return s0


def test_notify_state_changed_after_an_edit_steps_the_edited_state():
    """A state edited between steps (the box lifted 0.2 m): with notify_state_changed the run continues from the
    edit, bitwise as without the call (the carried kinematics compare numbers, so the call only voids them); a
    wrong world_mask length is the reference's ValueError, before anything changes. (Before, SolverSteel had no
    such method: AttributeError.)"""
    model = _box_model()
    finals = []
    for notify in (False, True):
        solver = SolverSteel(model)

        def lift(state, solver=solver, notify=notify):
            q = state.joint_q.numpy()
            q[2] += 0.2
            state.joint_q.assign(q)
            newton.eval_fk(model, state.joint_q, state.joint_qd, state)
            if notify:
                solver.notify_state_changed(state)

        state = model.state()
        newton.eval_fk(model, state.joint_q, state.joint_qd, state)
        finals.append(_steps(solver, model, state, 40, edit=lift))
        if notify:
            with pytest.raises(ValueError, match="world_mask"):
                solver.notify_state_changed(finals[-1], world_mask=wp.zeros(5, dtype=wp.bool, device="cpu"))
    assert finals[1].joint_q.numpy()[2] > 0.3  # [m] lifted 0.2 m mid-fall: 0.36 m at the end (free fall without it: 0.164 m)
    assert np.array_equal(finals[0].joint_q.numpy(), finals[1].joint_q.numpy())
    assert np.array_equal(finals[0].joint_qd.numpy(), finals[1].joint_qd.numpy())


def test_constraint_row_watermarks_match_the_reference_with_row_watermark_off():
    """Same keys and values as Newton's SolverSteel on the same model after the same steps (row_watermark off,
    the only setting built: every value 0)."""
    model = _box_model()
    ours, ref = SolverSteel(model), newton.solvers.SolverSteel(model)
    for solver in (ours, ref):
        state = model.state()
        newton.eval_fk(model, state.joint_q, state.joint_qd, state)
        _steps(solver, model, state, 5)
    assert ours.constraint_row_watermarks() == ref.constraint_row_watermarks()
    with pytest.raises(NotImplementedError, match="row_watermark"):
        SolverSteel(model, row_watermark=True)
