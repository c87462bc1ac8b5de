"""The velocity and position update of SolverFeatherstone, fused per articulation with factor and FK.

Owns: ``joint_qdd``, the output ``joint_q``/``joint_qd`` and (when ``publish``) the output
``body_q``/``body_qd``. Needs the dynamics stage first (``dof_bias`` and the mass matrix with
the implicit diagonal). One thread per articulation does, in order:

1. Cholesky factor of ``H`` (only on steps that rebuilt it; otherwise the stale factor is reused,
   which is what ``update_mass_matrix_interval > 1`` asks for);
2. ``qdd = -H^-1 dof_bias`` (Featherstone, *Rigid Body Dynamics Algorithms*, sec. 6.1);
3. per joint, symplectic Euler: ``qd' = qd + dt qdd``, then ``angular_damping`` on FREE and
   DISTANCE joints ``w' *= max(1 - d dt, 0)`` (the seed's free-body damping, applied before the
   position update as rigid-body integrators do), then ``q' = q + dt map(qd')``; kinematic joints
   (child flagged :attr:`newton.BodyFlags.KINEMATIC`) copy ``q``/``qd`` from the input instead;
4. mimic followers overwritten from their leaders (see :mod:`.mimic`);
5. forward kinematics of the new coordinates into the output state.

Fusing saves three launches per step over factor / solve / integrate / FK as separate kernels
(each a serial pass over every world on the CPU). ``joint_q_out`` may alias ``joint_q``.
"""

from __future__ import annotations

import warp as wp

import newton

from ...articulation.factor import cholesky_factor, cholesky_solve
from ...articulation.integrate import integrate_joint_coordinates
from ...articulation.kinematics import JOINT_DISTANCE, JOINT_FREE, articulation_forward_kinematics
from .mimic import apply_mimic_accelerations, apply_mimic_coordinates, fold_mimic_rows


@wp.kernel
def _advance(
    # Plan:
    tree_start: wp.array[int],
    tree_joint: wp.array[int],
    dof_start: wp.array[int],
    dof_count: wp.array[int],
    mass_start: wp.array[int],
    # Model:
    joint_type: wp.array[int],
    joint_parent: wp.array[int],
    joint_child: wp.array[int],
    joint_q_start: wp.array[int],
    joint_qd_start: wp.array[int],
    joint_dof_dim: wp.array2d[int],
    joint_X_p: wp.array[wp.transform],
    joint_X_c: wp.array[wp.transform],
    joint_axis: wp.array[wp.vec3],
    body_com: wp.array[wp.vec3],
    body_kinematic: wp.array[int],
    mimic_leader: wp.array[int],
    mimic_coeffs: wp.array[wp.vec2],
    has_mimic: int,
    angular_damping: float,
    dt: float,
    factor: int,
    publish: int,
    # Data in (mass_matrix and dof_bias are folded in place when there are mimic joints):
    mass_matrix: wp.array[float],
    dof_bias: wp.array[float],
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    # Data out:
    mass_factor_out: wp.array[float],
    joint_qdd_out: wp.array[float],
    joint_q_out: wp.array[float],
    joint_qd_out: wp.array[float],
    body_q_out: wp.array[wp.transform],
    body_qd_out: wp.array[wp.spatial_vector],
    articulation_origin_out: wp.array[wp.vec3],
    body_v_out: wp.array[wp.spatial_vector],
    body_c_out: wp.array[wp.spatial_vector],
    dof_S_out: wp.array[wp.spatial_vector],
):
    art = wp.tid()  # one thread per articulation
    start = tree_start[art]
    end = tree_start[art + 1]
    if start == end:
        return
    n = dof_count[art]
    base = mass_start[art]
    first = dof_start[art]
    if has_mimic != 0:
        fold_mimic_rows(
            start, end, n, base, first, tree_joint, joint_qd_start, mimic_leader, mimic_coeffs, factor, mass_matrix, dof_bias
        )
    if factor != 0:
        cholesky_factor(n, base, mass_matrix, mass_factor_out)
    cholesky_solve(n, base, first, mass_factor_out, dof_bias, -1.0, joint_qdd_out)
    if has_mimic != 0:
        apply_mimic_accelerations(start, end, tree_joint, joint_qd_start, mimic_leader, mimic_coeffs, joint_qdd_out)

    damp = wp.max(1.0 - angular_damping * dt, 0.0)
    for t in range(start, end):
        j = tree_joint[t]
        q0 = joint_q_start[j]
        d0 = joint_qd_start[j]
        d1 = joint_qd_start[j + 1]
        jtype = joint_type[j]
        if body_kinematic[joint_child[j]] != 0:
            # Prescribed: the caller owns the coordinates of a kinematic joint.
            for i in range(q0, joint_q_start[j + 1]):
                joint_q_out[i] = joint_q[i]
            for d in range(d0, d1):
                joint_qd_out[d] = joint_qd[d]
                joint_qdd_out[d] = 0.0
            continue
        for d in range(d0, d1):
            joint_qd_out[d] = joint_qd[d] + dt * joint_qdd_out[d]
        if jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
            for d in range(d0 + 3, d1):
                joint_qd_out[d] = joint_qd_out[d] * damp
        integrate_joint_coordinates(
            jtype, q0, d0, d1, joint_X_c[j], body_com[joint_child[j]], joint_q, joint_qd_out, dt, joint_q_out
        )
    if has_mimic != 0:
        apply_mimic_coordinates(
            start, end, tree_joint, joint_q_start, joint_qd_start, mimic_leader, mimic_coeffs, joint_q_out, joint_qd_out
        )
    if publish != 0:
        articulation_forward_kinematics(
            art,
            tree_start,
            tree_joint,
            joint_type,
            joint_parent,
            joint_child,
            joint_q_start,
            joint_qd_start,
            joint_dof_dim,
            joint_X_p,
            joint_X_c,
            joint_axis,
            body_com,
            joint_q_out,
            joint_qd_out,
            body_q_out,
            body_qd_out,
            articulation_origin_out,
            body_v_out,
            body_c_out,
            dof_S_out,
        )


def advance_joints(
    model: newton.Model,
    plan,
    data,
    work,
    state_in: newton.State,
    state_out: newton.State,
    dt: float,
    angular_damping: float,
    factor: bool,
    publish: bool,
) -> None:
    """Factor (if ``factor``), solve, integrate ``state_in`` into ``state_out`` over ``dt`` [s] and,
    if ``publish``, run FK into ``state_out.body_q``/``body_qd``; one launch.

    ``angular_damping`` [1/s] scales FREE/DISTANCE angular velocities by ``max(1 - d dt, 0)``.
    """
    if plan.articulation_count == 0:
        return
    wp.launch(
        _advance,
        dim=plan.articulation_count,
        inputs=[
            plan.tree_start,
            plan.tree_joint,
            plan.dof_start,
            plan.dof_count_per_articulation,
            plan.mass_start,
            model.joint_type,
            model.joint_parent,
            model.joint_child,
            model.joint_q_start,
            model.joint_qd_start,
            model.joint_dof_dim,
            model.joint_X_p,
            model.joint_X_c,
            model.joint_axis,
            model.body_com,
            work.body_kinematic,
            work.mimic_leader,
            work.mimic_coeffs,
            int(work.has_mimic),
            float(angular_damping),
            float(dt),
            int(factor),
            int(publish),
            data.mass_matrix,
            data.dof_bias,
            state_in.joint_q,
            state_in.joint_qd,
        ],
        outputs=[
            data.mass_factor,
            work.joint_qdd,
            state_out.joint_q,
            state_out.joint_qd,
            state_out.body_q,
            state_out.body_qd,
            data.articulation_origin,
            data.body_v,
            data.body_c,
            data.dof_S,
        ],
        device=model.device,
    )
