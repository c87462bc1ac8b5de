"""The one-pass side write (contacts/sides.py, ``fill_contact_jacobians``) against the cleared walk it replaces.

A side whose body's path descends through the DOF numbering is written in one pass, each entry stored once; any
other side is cleared and walked. Both must give the same bits: every body of a humanoid and of a chain, the
normal row alone and with its friction pair, each side's entries first set to NaN so an entry the pass missed
shows.
"""

import numpy as np
import pytest
import warp as wp

import newton
from benchmarks.scenes import build_scene
from steel.solvers import SolverSteel
from steel.solvers.steel.contacts.data import ContactModel, current_contact_model
from steel.solvers.steel.contacts.sides import (add_contact_jacobians, clear_side, fill_contact_jacobians,
                                                path_descends, set_side_range)
from steel.solvers.steel.data import RowBuffers

ARM = wp.constant(wp.vec3(0.13, -0.27, 0.41))  # [m] an arbitrary contact point relative to the origin
NORMAL = wp.constant(wp.vec3(0.36, 0.48, 0.8))  # unit
TANGENT1 = wp.constant(wp.vec3(0.8, -0.6, 0.0))  # unit, normal to NORMAL
TANGENT2 = wp.constant(wp.vec3(0.48, 0.64, -0.6))  # NORMAL x TANGENT1


@wp.kernel
def _both_ways(rows: RowBuffers, cm: ContactModel, dof_S: wp.array[wp.spatial_vector], count: int,
               out: wp.array3d[float], descends: wp.array[int]):
    """Body ``b`` (the thread) as side 0 of rows 0.. ``count`` - 1: the cleared walk into ``out[b, 0]``, the one pass
    into ``out[b, 1]`` (each row's ``stride`` entries; NaN past the side)."""
    b = wp.tid()
    art = cm.body_articulation[b]
    if art < 0:
        return
    start = cm.art_dof_start[art]
    width = cm.art_dof_count[art]
    for k in range(count):
        set_side_range(rows, b * 3 + k, 0, wp.vec4i(start, width, 0, art))
    r = b * 3
    for way in range(2):
        for k in range(count):
            for i in range(rows.stride):
                rows.J[(r + k) * 2 * rows.stride + i] = wp.nan
        if way == 0:
            for k in range(count):
                clear_side(rows, r + k, 0)
            add_contact_jacobians(rows, r, 0, count, b, ARM, NORMAL, TANGENT1, TANGENT2, -1.0, start, cm.body_joint,
                                  cm.joint_parent_joint, cm.joint_qd_start, dof_S)
        else:
            fill_contact_jacobians(rows, r, 0, count, b, ARM, NORMAL, TANGENT1, TANGENT2, -1.0, start, width,
                                   cm.body_joint, cm.joint_parent_joint, cm.joint_qd_start, dof_S)
        for k in range(count):
            for i in range(rows.stride):
                out[b, way, k * rows.stride + i] = rows.J[(r + k) * 2 * rows.stride + i]
    descends[b] = path_descends(b, start, width, cm.body_joint, cm.joint_parent_joint, cm.joint_qd_start)


@pytest.mark.parametrize("name", ["humanoid", "chain"])
@pytest.mark.parametrize("count", [1, 3])
def test_the_one_pass_writes_the_bits_of_the_cleared_walk(name, count):
    model = build_scene(name, 1, "cpu").model
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    pipeline.collide(s0, contacts)
    solver.step(s0, s1, None, contacts, 1.0 / 240.0)  # dof_S of the step's input
    sm, sd = solver.steel_model, solver.steel_data
    rows = sd.rows.buffers
    bodies = model.body_count
    assert rows.J.shape[0] >= bodies * 3 * 2 * rows.stride, "the test writes three rows per body"
    out = wp.zeros((bodies, 2, count * rows.stride), dtype=float)
    descends = wp.zeros(bodies, dtype=int)
    wp.launch(_both_ways, dim=bodies, inputs=[rows, current_contact_model(sm), sm.core.data.dof_S, count],
              outputs=[out, descends])
    got = out.numpy()
    assert descends.numpy().all(), "every body of a scene built parent first has a descending path"
    walked, filled = got[:, 0], got[:, 1]
    assert np.array_equal(walked.view(np.uint32), filled.view(np.uint32))
    # Each side's entries are written (finite), the rest of a row's stride left alone (NaN); some entries are
    # nonzero, so the comparison is not of zeros alone.
    width = model.joint_dof_count
    for k in range(count):
        side = filled[:, k * rows.stride:k * rows.stride + width]
        assert np.isfinite(side).all()
        assert (side != 0.0).any()
