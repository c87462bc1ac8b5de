"""Joint-space dynamics: RNEA bias forces and the CRBA mass matrix, fused per articulation.

Owns: ``data.dof_bias`` and ``data.mass_matrix``. Needs the kinematics stage first (``body_v``,
``body_c``, ``dof_S``, ``articulation_origin`` and ``body_q``). Does not factor or integrate.

One thread per articulation runs, over its tree (Featherstone, *Rigid Body Dynamics
Algorithms*, 2008: RNEA sec. 5.3, CRBA sec. 6.2), with every quantity about the articulation's
reference point in world orientation:

1. forward pass: ``a_i = a_parent + c_i`` with the base acceleration ``(-g, 0)`` standing in for
   gravity; ``f_i = I_i a_i + v_i x* I_i v_i - f_ext_i`` and ``Ic_i = I_i``;
2. backward pass (reverse tree order): ``bias_k = S_k . f_i - joint_f_k``; ``f_parent += f_i``;
   ``Ic_parent += Ic_i``;
3. CRBA: for each DOF ``k`` of joint ``i``, ``F = Ic_i S_k`` and ``H[k, l] = H[l, k] = S_l . F`` for
   every DOF ``l`` of ``i`` and of its ancestors; then ``H[k, k] += armature_k + extra_k``. Of ``i``'s own
   DOFs only ``l <= k`` are visited: the pair's other order was written first and then overwritten by
   this one, so skipping it keeps the bits and halves a free body's products; a one-joint articulation
   writes its whole block, so it is not zeroed first.

The two passes share the spatial inertias and the tree walk, so fusing them saves a launch and
a second read of the model per step.

Generalized forces. ``joint_f`` of a FREE/DISTANCE joint is, in Newton's convention, a world
wrench ``(f, tau)`` about the child COM; its generalized force is ``S^T`` of that wrench, which
for a world-anchored free joint with identity anchor is the wrench itself. Every other DOF takes
``joint_f`` as is. ``body_f`` is a world wrench about the body COM (Newton's ``State.body_f``).
"""

from __future__ import annotations

import warp as wp

import newton

from .data import ArticulationData, CoreBuffers
from .joint_model import JointModel
from .kinematics import JOINT_DISTANCE, JOINT_FREE
from .spatial import force_cross, motion_dot_force, spatial_inertia, wrench_at_point, wrench_from_point
from .topology import ArticulationPlan, PlanArrays
from ..launches import launch


@wp.func
def body_spatial_inertia(joints: JointModel, body: int, X: wp.transform, origin: wp.vec3):
    """Spatial inertia of ``body`` at pose ``X`` about the reference point ``origin``, world axes;
    also returns the COM relative to ``origin`` [m]."""
    R = wp.quat_to_matrix(wp.transform_get_rotation(X))
    com = wp.transform_point(X, joints.body_com[body]) - origin
    return spatial_inertia(joints.body_mass[body], com, R * joints.body_inertia[body] * wp.transpose(R)), com


# Step 3 as native C++ on the arrays' data: Warp's array indexing wraps negative indices and multiplies by the
# byte stride on every access, which the pair loop below does three times per entry. The buffers are contiguous
# (``wp.zeros``, the model's arrays), so pointer arithmetic gives the same addresses; each float operation is
# the one Warp emitted for the Warp loop this replaced (``motion_dot_force`` as two ``wp::dot`` and an add, the
# diagonal's ``+=`` as an add), one per statement, so H is bitwise the same (timings in benchmarks/README.md's
# performance log).
_COMPOSITE_RIGID_BODY = """
const int* qd_start = joint_qd_start.data;
const wp::vec_t<6, float>* S = dof_S.data;
float* H = mass_matrix_out.data + base;
if (end - start > 1) {
    for (int i = 0; i < n * n; ++i) {
        H[i] = 0.0f;
    }
}
for (int t = start; t < end; ++t) {
    int j = tree_joint.data[t];
    const wp::mat_t<6, 6, float> Ic = body_Ic.data[joint_child.data[j]];
    for (int k = qd_start[j]; k < qd_start[j + 1]; ++k) {
        wp::vec_t<6, float> F = wp::mul(Ic, S[k]);
        int row = k - first_dof;
        for (int m = j; m >= 0; m = joint_parent_joint.data[m]) {
            int l_end = m == j ? k + 1 : qd_start[m + 1];
            for (int l = qd_start[m]; l < l_end; ++l) {
                int col = l - first_dof;
                wp::vec_t<3, float> a = wp::spatial_top(S[l]);
                wp::vec_t<3, float> b = wp::spatial_top(F);
                float top = wp::dot(a, b);
                wp::vec_t<3, float> c = wp::spatial_bottom(S[l]);
                wp::vec_t<3, float> d = wp::spatial_bottom(F);
                float bottom = wp::dot(c, d);
                float h = wp::add(top, bottom);
                H[row * n + col] = h;
                H[col * n + row] = h;
            }
        }
        float diag = joint_armature.data[k];
        if (dof_diag_extra.data) {
            diag = wp::add(diag, dof_diag_extra.data[k]);
        }
        H[row * n + row] = wp::add(H[row * n + row], diag);
    }
}
"""


@wp.func_native(_COMPOSITE_RIGID_BODY)
def _composite_rigid_body(start: int, end: int, first_dof: int, n: int, base: int, tree_joint: wp.array[int],
                          joint_parent_joint: wp.array[int], joint_child: wp.array[int], joint_qd_start: wp.array[int],
                          joint_armature: wp.array[float], body_Ic: wp.array[wp.spatial_matrix],
                          dof_S: wp.array[wp.spatial_vector], dof_diag_extra: wp.array[float],
                          mass_matrix_out: wp.array[float]):
    """CRBA of the joints at ``tree_joint[start:end]`` into the ``n x n`` block at ``base`` (step 3 of
    :func:`articulation_bias_and_mass_matrix`, which documents the order of the writes)."""
    ...


@wp.func
def articulation_bias_and_mass_matrix(
    art: int,
    plan: PlanArrays,
    # Model:
    joints: JointModel,
    joint_armature: wp.array[float],
    gravity: wp.array[wp.vec3],
    # Data in:
    body_q: wp.array[wp.transform],
    body_f_ext: wp.array[wp.spatial_vector],
    joint_f: wp.array[float],
    dof_diag_extra: wp.array[float],
    compute_mass_matrix: int,
    # Data in (the kinematics) and out (body_a, body_f, body_Ic, dof_bias, mass_matrix):
    core: CoreBuffers,
):
    """RNEA bias forces and (when ``compute_mass_matrix``) the CRBA mass matrix of articulation ``art``
    (the body of :func:`eval_articulation_dynamics`; a ``wp.func`` so that a solver can fuse it with its
    own per-articulation stages in one launch)."""
    tree_start = plan.tree_start
    tree_joint = plan.tree_joint
    joint_parent_joint = plan.joint_parent_joint
    start = tree_start[art]
    end = tree_start[art + 1]
    if start == end or joints.articulation_skip[art] != 0:
        return
    kin = core.kinematics
    articulation_origin = kin.articulation_origin
    body_v = kin.body_v
    body_c = kin.body_c
    dof_S = kin.dof_S
    body_a_out = core.body_a
    body_f_out = core.body_f
    body_Ic_out = core.body_Ic
    dof_bias_out = core.dof_bias
    origin = articulation_origin[art]
    base_accel = wp.spatial_vector(-gravity[plan.gravity_index[art]], wp.vec3(0.0))

    # 1. Forward pass.
    for t in range(start, end):
        j = tree_joint[t]
        child = joints.child[j]
        a = base_accel
        if joint_parent_joint[j] >= 0:
            a = body_a_out[joints.parent[j]]
        a = a + body_c[child]
        body_a_out[child] = a

        I, com = body_spatial_inertia(joints, child, body_q[child], origin)
        v = body_v[child]
        f = I * a + force_cross(v, I * v)
        if body_f_ext:
            fe = body_f_ext[child]
            f = f - wrench_from_point(wp.spatial_top(fe), wp.spatial_bottom(fe), com)
        body_f_out[child] = f
        body_Ic_out[child] = I

    # 2. Backward pass.
    for s in range(end - start):
        j = tree_joint[end - 1 - s]
        child = joints.child[j]
        f = body_f_out[child]
        jtype = joints.kind[j]
        d0 = joints.qd_start[j]
        d1 = joints.qd_start[j + 1]
        wrench = wp.spatial_vector()
        if joint_f and (jtype == JOINT_FREE or jtype == JOINT_DISTANCE):
            com = wp.transform_point(body_q[child], joints.body_com[child]) - origin
            wrench = wrench_from_point(
                wp.vec3(joint_f[d0], joint_f[d0 + 1], joint_f[d0 + 2]),
                wp.vec3(joint_f[d0 + 3], joint_f[d0 + 4], joint_f[d0 + 5]),
                com,
            )
        for d in range(d0, d1):
            S = dof_S[d]
            tau = motion_dot_force(S, f)
            if joint_f:
                if jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
                    tau -= motion_dot_force(S, wrench)
                else:
                    tau -= joint_f[d]
            dof_bias_out[d] = tau
        if joint_parent_joint[j] >= 0:
            parent = joints.parent[j]
            body_f_out[parent] = body_f_out[parent] + f
            body_Ic_out[parent] = body_Ic_out[parent] + body_Ic_out[child]

    if compute_mass_matrix == 0:
        return

    # 3. CRBA.
    _composite_rigid_body(start, end, plan.dof_start[art], plan.dof_count[art], plan.mass_start[art], tree_joint,
                          joint_parent_joint, joints.child, joints.qd_start, joint_armature, body_Ic_out, dof_S,
                          dof_diag_extra, core.mass_matrix)


@wp.kernel
def _bias_and_mass_matrix(
    plan: PlanArrays,
    # Model:
    joints: JointModel,
    joint_armature: wp.array[float],
    gravity: wp.array[wp.vec3],
    # Data in:
    body_q: wp.array[wp.transform],
    body_f_ext: wp.array[wp.spatial_vector],
    joint_f: wp.array[float],
    dof_diag_extra: wp.array[float],
    compute_mass_matrix: int,
    # Data in (the kinematics) and out (body_a, body_f, body_Ic, dof_bias, mass_matrix):
    core: CoreBuffers,
):
    art = wp.tid()  # one thread per articulation
    articulation_bias_and_mass_matrix(art, plan, joints, joint_armature, gravity, body_q, body_f_ext, joint_f,
                                      dof_diag_extra, compute_mass_matrix, core)


def eval_articulation_dynamics(
    model: newton.Model,
    plan: ArticulationPlan,
    data: ArticulationData,
    body_q: wp.array,
    body_f: wp.array | None = None,
    joint_f: wp.array | None = None,
    dof_diag_extra: wp.array | None = None,
    compute_mass_matrix: bool = True,
) -> None:
    """RNEA bias ``data.dof_bias`` and (optionally) CRBA ``data.mass_matrix`` in one launch.

    Args:
        model: the model the plan was built from (inertias, armature, gravity are read each call,
            so edits to them take effect immediately).
        plan, data: the articulation plan and its work buffers, after the kinematics stage.
        body_q: body poses written by the kinematics stage.
        body_f: optional external wrenches, world frame about each body's COM [N, N·m].
        joint_f: optional generalized joint forces in Newton's ``Control.joint_f`` convention.
        dof_diag_extra: optional per-DOF addition to the mass-matrix diagonal on top of
            ``joint_armature`` (the implicit drive and damping terms of the solvers)
            [kg, kg·m²].
        compute_mass_matrix: skip CRBA when False (solvers that reuse a stale ``H``).
    """
    if plan.articulation_count == 0:
        return
    launch(
        _bias_and_mass_matrix,
        dim=plan.articulation_count,
        inputs=[
            plan.arrays,
            plan.joints,
            model.joint_armature,
            model.gravity,
            body_q,
            body_f,
            joint_f,
            dof_diag_extra,
            int(compute_mass_matrix),
        ],
        outputs=[data.buffers],
        device=model.device,
    )


@wp.kernel
def _body_parent_wrench(
    # Plan:
    tree_start: wp.array[int],
    tree_joint: wp.array[int],
    joint_parent_joint: wp.array[int],
    # Model:
    joints: JointModel,
    # Data in:
    body_q: wp.array[wp.transform],
    articulation_origin: wp.array[wp.vec3],
    dof_S: wp.array[wp.spatial_vector],
    body_f_bias: wp.array[wp.spatial_vector],
    body_f_extra: wp.array[wp.spatial_vector],
    joint_qdd: wp.array[float],
    # Data out (body_a_out is scratch):
    body_a_out: wp.array[wp.spatial_vector],
    body_parent_f_out: wp.array[wp.spatial_vector],
):
    art = wp.tid()  # one thread per articulation
    start = tree_start[art]
    end = tree_start[art + 1]
    if start == end or joints.articulation_skip[art] != 0:
        return
    origin = articulation_origin[art]
    # Forward: the acceleration each body gains from qdd, and the force I_i times it.
    for t in range(start, end):
        j = tree_joint[t]
        child = joints.child[j]
        a = wp.spatial_vector()
        if joint_parent_joint[j] >= 0:
            a = body_a_out[joints.parent[j]]
        for d in range(joints.qd_start[j], joints.qd_start[j + 1]):
            a = a + dof_S[d] * joint_qdd[d]
        body_a_out[child] = a
        I, com = body_spatial_inertia(joints, child, body_q[child], origin)
        f = I * a
        if body_f_extra:
            fe = body_f_extra[child]
            f = f - wrench_from_point(wp.spatial_top(fe), wp.spatial_bottom(fe), com)
        body_parent_f_out[child] = f
    # Backward: subtree sums, then add the (already subtree-summed) bias force and move to the COM.
    for s in range(end - start):
        j = tree_joint[end - 1 - s]
        child = joints.child[j]
        if joint_parent_joint[j] >= 0:
            parent = joints.parent[j]
            body_parent_f_out[parent] = body_parent_f_out[parent] + body_parent_f_out[child]
    for t in range(start, end):
        child = joints.child[tree_joint[t]]
        com = wp.transform_point(body_q[child], joints.body_com[child]) - origin
        body_parent_f_out[child] = wrench_at_point(body_f_bias[child] + body_parent_f_out[child], com)


def eval_body_parent_f(
    model: newton.Model,
    plan: ArticulationPlan,
    data: ArticulationData,
    body_q: wp.array,
    joint_qdd: wp.array,
    body_parent_f: wp.array,
    body_f_extra: wp.array | None = None,
    joints: JointModel | None = None,
) -> None:
    """Wrench each body receives through its inbound joint, about its COM, world frame [N, N·m].

    ``f_i = sum over the subtree of i of (I_k a_k + v_k x* I_k v_k - f_ext_k)`` with the actual
    accelerations ``a_k`` (bias part plus ``S qdd``): the RNEA backward-pass force (Featherstone,
    sec. 5.3), linear first, moved to the body COM. Call after :func:`eval_articulation_dynamics`
    (whose ``data.body_f`` holds the subtree sums of the bias part, with the same ``body_f`` and
    gravity) with the joint accelerations the solver applied. In equilibrium it balances every
    force on the subtree; for a FREE root it is the residual of the root's own balance.
    ``body_f_extra`` adds external wrenches the bias pass did not see (a solver's contact forces),
    world frame about each COM [N, N·m]. Bodies outside every articulation are not written. ``joints``: the
    joint struct to read instead of ``plan.joints`` (a solver's copy whose ``articulation_skip`` names the
    articulations to leave untouched); those articulations' bodies are not written either.
    """
    if plan.articulation_count == 0:
        return
    launch(
        _body_parent_wrench,
        dim=plan.articulation_count,
        inputs=[
            plan.tree_start,
            plan.tree_joint,
            plan.joint_parent_joint,
            plan.joints if joints is None else joints,
            body_q,
            data.articulation_origin,
            data.dof_S,
            data.body_f,
            body_f_extra,
            joint_qdd,
        ],
        outputs=[data.body_a, body_parent_f],
        device=model.device,
    )
