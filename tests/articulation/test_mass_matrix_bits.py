"""The native CRBA (dynamics.py ``_COMPOSITE_RIGID_BODY``) writes the bits of the Warp loops it replaced."""

import numpy as np
import pytest
import warp as wp

from steel.articulation import ArticulationCore
from steel.articulation.joint_model import JointModel
from steel.articulation.spatial import motion_dot_force

from ..fixtures import ASSETS, build_asset, every_joint_type, random_joint_state


@wp.kernel
def _mass_matrix_in_warp(
    tree_start: wp.array[int],
    tree_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    dof_start: wp.array[int],
    dof_count: wp.array[int],
    mass_start: wp.array[int],
    joints: JointModel,
    joint_armature: wp.array[float],
    body_Ic: wp.array[wp.spatial_matrix],
    dof_S: wp.array[wp.spatial_vector],
    dof_diag_extra: wp.array[float],
    mass_matrix_out: wp.array[float],
):
    # CRBA as Warp code (as dynamics.py had it before the native version): the reference bits.
    art = wp.tid()
    start = tree_start[art]
    end = tree_start[art + 1]
    first_dof = dof_start[art]
    n = dof_count[art]
    base = mass_start[art]
    if end - start > 1:
        for i in range(n * n):
            mass_matrix_out[base + i] = 0.0
    for t in range(start, end):
        j = tree_joint[t]
        Ic = body_Ic[joints.child[j]]
        for k in range(joints.qd_start[j], joints.qd_start[j + 1]):
            F = Ic * dof_S[k]
            row = k - first_dof
            m = j
            while m >= 0:
                l_end = joints.qd_start[m + 1]
                if m == j:
                    l_end = k + 1
                for l in range(joints.qd_start[m], l_end):
                    col = l - first_dof
                    h = motion_dot_force(dof_S[l], F)
                    mass_matrix_out[base + row * n + col] = h
                    mass_matrix_out[base + col * n + row] = h
                m = joint_parent_joint[m]
            diag = joint_armature[k]
            if dof_diag_extra:
                diag += dof_diag_extra[k]
            mass_matrix_out[base + row * n + row] += diag


@pytest.mark.parametrize("make_model", [lambda: build_asset(ASSETS[0], world_count=2), every_joint_type])
@pytest.mark.parametrize("with_extra", [False, True])
def test_native_mass_matrix_is_bitwise_the_warp_loops(make_model, with_extra):
    """H from the native CRBA equals the Warp loops' bit for bit (a branched tree in two worlds, every joint
    type in one tree), with and without an extra diagonal term."""
    model = make_model()
    core = ArticulationCore(model)
    rng = np.random.default_rng(13)
    state = model.state()
    q, qd = random_joint_state(model, rng)
    state.joint_q.assign(q)
    state.joint_qd.assign(qd)
    core.kinematics(state.joint_q, state.joint_qd, state.body_q, state.body_qd)
    extra = None
    if with_extra:
        extra = wp.array(rng.uniform(0.0, 3.0, model.joint_dof_count).astype(np.float32))
    core.dynamics(state.body_q, dof_diag_extra=extra)
    reference = wp.full_like(core.data.mass_matrix, 7.0)  # entries the CRBA must overwrite or clear
    plan = core.plan
    wp.launch(_mass_matrix_in_warp, dim=plan.articulation_count,
              inputs=[plan.tree_start, plan.tree_joint, plan.joint_parent_joint, plan.dof_start,
                      plan.dof_count_per_articulation, plan.mass_start, plan.joints, model.joint_armature,
                      core.data.body_Ic, core.data.dof_S, extra], outputs=[reference], device="cpu")
    H = core.data.mass_matrix.numpy()
    assert np.isfinite(H).all() and np.abs(H).max() > 0.0
    assert H.tobytes() == reference.numpy().tobytes()
