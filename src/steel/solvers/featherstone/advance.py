"""The velocity and position update of SolverFeatherstone, fused per articulation with factor and FK.

Owns: ``joint_qdd``, the output ``joint_q``/``joint_qd``, the mass-matrix factor of the loop path
and (when ``publish``) the output ``body_q``/``body_qd``. Needs the dynamics stage first
(``dof_bias`` and ``H``, the CRBA mass matrix with armature) and the refactor decision of
:mod:`.forces`. One thread per articulation does, in order:

1. unless the tile path already solved (``solved``): on refactor steps, the Cholesky factor of
   ``A = H + K + diag(D)`` (``D = dof_implicit``, the implicit joint-force term, see :mod:`.forces`
   for when an articulation refactors; ``K = contact_mass``, the implicit contact term of
   :mod:`.contacts`, only in articulations with contacts this step), with mimic joints after folding a copy of ``A`` and
   ``dof_bias`` onto the leaders (:mod:`.mimic`); then ``qdd = -A^-1 dof_bias`` (Featherstone,
   *Rigid Body Dynamics Algorithms*, sec. 6.1) with the current (possibly reused) factor. ``H``
   itself is never modified, so a stale ``H`` can be refactored with a new ``D`` on any later step;
2. the limit push-out bound (below), unless the articulation is invalid;
3. per joint, symplectic Euler (articulations flagged invalid by :mod:`.forces`, non-finite input,
   skip step 1 and copy every joint like a kinematic one): ``qd' = qd + dt qdd``, then ``angular_damping`` on FREE and
   DISTANCE joints ``w' *= max(1 - d dt, 0)`` (the seed's free-body damping, applied before the
   position update as rigid-body integrators do), then ``q' = q + dt map(qd')``; kinematic joints
   (child flagged :attr:`newton.BodyFlags.KINEMATIC`) copy ``q``/``qd`` from the input instead;
4. mimic followers overwritten from their leaders (see :mod:`.mimic`; they were also overwritten
   in the input state before the forces, see :mod:`.forces`);
5. forward kinematics of the new coordinates into the output state.

Limit push-out bound. A DOF outside its limits by ``d`` is pushed back by ``limit_ke d``. Taken
linearly implicitly (see :mod:`.forces`) a stiff limit closes the whole gap in about one step, so it
leaves the DOF moving at ``~ d / dt``: a hinge started 2.5 rad outside at ``dt = 1/240 s`` is
returned at ~600 rad/s, with the opposite reaction on the rest of the tree, and the velocity-
squared terms of the next steps blow up (measured: nv_humanoid with every hinge started at 3 rad
reaches 6e23 rad/s within 500 steps). So, as contact push-out is bounded in SolverSteel, the
push-out term is scaled down, for the whole articulation at once, until no DOF outside its limits
returns inward faster than ``max(LIMIT_PUSH_OUT_SPEED_MAX, |qd|)``, ``qd`` its velocity at the
start of the step: a limit never returns a DOF faster than it was moving, or than 10 rad/s (m/s
for a slider) from rest. With ``x = A^-1 dof_limit_push`` the response to the push-out terms
(``A`` the factor of step 1) and ``u_i`` the inward speed DOF ``i`` would get,
``qdd -= c x`` with the smallest ``c`` in ``[0, 1]`` that brings every ``u_i`` down to its bound.
The reaction is scaled with it (one force vector, one solve), so momentum stays consistent. Only
steps where some DOF would exceed its bound pay the extra solve; a limit holding a load, or one hit
at speed ``v`` and bouncing back at no more than ``v``, is untouched, as is every step of a DOF
inside its limits.

Fusing saves three launches per step over factor / solve / integrate / FK as separate kernels
(each a serial pass over every world on the CPU). ``joint_q_out`` may alias ``joint_q``.
"""

from __future__ import annotations

import warp as wp

import newton

from ...articulation.factor import cholesky_factor, cholesky_factor_shifted, cholesky_solve
from ...articulation.integrate import integrate_joint_coordinates
from ...articulation.data import KinematicsBuffers
from ...articulation.joint_model import JointModel
from ...articulation.kinematics import JOINT_DISTANCE, JOINT_FREE, articulation_forward_kinematics
from .data import Buffers, KernelArgs, Trees
from .mimic import apply_mimic_accelerations, apply_mimic_coordinates, fold_mimic_rows
from ...launches import launch

# Fastest a limit returns a DOF that started the step at rest [rad/s or m/s] (see the module docstring).
LIMIT_PUSH_OUT_SPEED_MAX = wp.constant(10.0)


@wp.func
def _limit_push_out_excess(d: int, dt: float, dof_limit_push: wp.array[float], joint_qd: wp.array[float], qdd: float):
    """How much faster [m/s or rad/s] than its bound DOF ``d`` would return inward (<= 0: within it)."""
    push = dof_limit_push[d]
    if push == 0.0:
        return float(0.0)
    inward = wp.where(push > 0.0, 1.0, -1.0)
    speed = inward * (joint_qd[d] + dt * qdd)
    return speed - wp.max(LIMIT_PUSH_OUT_SPEED_MAX, wp.abs(joint_qd[d]))


@wp.func
def bound_limit_push_out(
    start: int,
    end: int,
    n: int,
    base: int,
    first: int,
    tree_joint: wp.array[int],
    joint_qd_start: wp.array[int],
    mimic_leader: wp.array[int],
    mimic_coeffs: wp.array[wp.vec2],
    has_mimic: int,
    dt: float,
    mass_factor: wp.array[float],
    dof_limit_push: wp.array[float],
    joint_qd: wp.array[float],
    # Data out (in place):
    response: wp.array[float],
    joint_qdd: wp.array[float],
):
    """Scale one articulation's limit push-out so no DOF returns faster than its bound (module docstring)."""
    exceeded = int(0)
    for d in range(first, first + n):
        if _limit_push_out_excess(d, dt, dof_limit_push, joint_qd, joint_qdd[d]) > 0.0:
            exceeded = 1
    if exceeded == 0:
        return
    for d in range(first, first + n):
        response[d] = dof_limit_push[d]
    if has_mimic != 0:
        fold_mimic_rows(
            start, end, n, base, first, tree_joint, joint_qd_start, mimic_leader, mimic_coeffs, 0, mass_factor, response
        )
    cholesky_solve(n, base, first, mass_factor, response, 1.0, response)
    if has_mimic != 0:
        apply_mimic_accelerations(start, end, tree_joint, joint_qd_start, mimic_leader, mimic_coeffs, response)
    cut = float(0.0)
    for d in range(first, first + n):
        excess = _limit_push_out_excess(d, dt, dof_limit_push, joint_qd, joint_qdd[d])
        rate = wp.where(dof_limit_push[d] > 0.0, 1.0, -1.0) * dt * response[d]  # inward speed per unit cut
        if excess > 0.0 and rate > 0.0:
            cut = wp.max(cut, excess / rate)
    cut = wp.min(cut, 1.0)
    for d in range(first, first + n):
        joint_qdd[d] = joint_qdd[d] - cut * response[d]


@wp.kernel
def _advance(
    # Plan and model (trees.mass_factor is written on refactor steps):
    trees: Trees,
    joints: JointModel,
    angular_damping: float,
    dt: float,
    solved: int,
    publish: int,
    # Data in (dof_bias is folded in place when there are mimic joints):
    dof_bias: wp.array[float],
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    # Data out:
    joint_q_out: wp.array[float],
    joint_qd_out: wp.array[float],
    body_q_out: wp.array[wp.transform],
    body_qd_out: wp.array[wp.spatial_vector],
    kinematics_out: KinematicsBuffers,
    # Data in and out: reads body_kinematic, the mimic tables, dof_implicit, dof_limit_push, contact_mass and
    # the articulation flags of .forces and .contacts; writes joint_qdd and the dof_limit_response scratch.
    work: Buffers,
):
    joint_type = joints.kind
    joint_child = joints.child
    joint_q_start = joints.q_start
    joint_qd_start = joints.qd_start
    joint_X_c = joints.X_c
    body_com = joints.body_com
    tree_joint = trees.tree_joint
    mass_factor = trees.mass_factor
    mimic_leader = work.mimic_leader
    mimic_coeffs = work.mimic_coeffs
    has_mimic = work.has_mimic
    joint_qdd = work.joint_qdd
    art = wp.tid()  # one thread per articulation
    start = trees.tree_start[art]
    end = trees.tree_start[art + 1]
    if start == end:
        return
    n = trees.dof_count[art]
    base = trees.mass_start[art]
    first = trees.dof_start[art]
    # Non-finite input (see .forces): not solved, and every joint carried over like a kinematic one.
    invalid = work.articulation_invalid[art]
    if solved == 0 and invalid == 0:
        refactor = work.articulation_refactor[art]
        in_contact = work.articulation_contact[art]
        if has_mimic == 0 and in_contact == 0:
            if refactor != 0:
                cholesky_factor_shifted(n, base, first, trees.mass_matrix, work.dof_implicit, 1, mass_factor)
        else:
            # The fold edits whole rows and columns, and the contact term is a full block, so both work on
            # a copy A = H + K + diag(D) in the factor buffer.
            if refactor != 0:
                # K holds its lower triangle only (.contacts); mirror it so the mimic fold sees a symmetric A.
                for r in range(n):
                    for c in range(r + 1):
                        value = trees.mass_matrix[base + r * n + c] + work.contact_mass[base + r * n + c]
                        mass_factor[base + r * n + c] = value
                        mass_factor[base + c * n + r] = value
                    mass_factor[base + r * n + r] = mass_factor[base + r * n + r] + work.dof_implicit[first + r]
            if has_mimic != 0:
                fold_mimic_rows(
                    start,
                    end,
                    n,
                    base,
                    first,
                    tree_joint,
                    joint_qd_start,
                    mimic_leader,
                    mimic_coeffs,
                    refactor,
                    mass_factor,
                    dof_bias,
                )
            if refactor != 0:
                cholesky_factor(n, base, mass_factor, mass_factor)  # in place: reads only the lower triangle
        cholesky_solve(n, base, first, mass_factor, dof_bias, -1.0, joint_qdd)
        if has_mimic != 0:
            apply_mimic_accelerations(start, end, tree_joint, joint_qd_start, mimic_leader, mimic_coeffs, joint_qdd)
    if invalid == 0:
        bound_limit_push_out(
            start,
            end,
            n,
            base,
            first,
            tree_joint,
            joint_qd_start,
            mimic_leader,
            mimic_coeffs,
            has_mimic,
            dt,
            mass_factor,
            work.dof_limit_push,
            joint_qd,
            work.dof_limit_response,
            joint_qdd,
        )

    damp = wp.max(1.0 - angular_damping * dt, 0.0)
    for t in range(start, end):
        j = tree_joint[t]
        q0 = joint_q_start[j]
        d0 = joint_qd_start[j]
        d1 = joint_qd_start[j + 1]
        jtype = joint_type[j]
        if invalid != 0 or work.body_kinematic[joint_child[j]] != 0:
            # Prescribed: the caller owns the coordinates of a kinematic joint (and of an invalid articulation).
            for i in range(q0, joint_q_start[j + 1]):
                joint_q_out[i] = joint_q[i]
            for d in range(d0, d1):
                joint_qd_out[d] = joint_qd[d]
                joint_qdd[d] = 0.0
            continue
        for d in range(d0, d1):
            joint_qd_out[d] = joint_qd[d] + dt * joint_qdd[d]
        if jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
            for d in range(d0 + 3, d1):
                joint_qd_out[d] = joint_qd_out[d] * damp
        integrate_joint_coordinates(
            jtype, q0, d0, d1, joint_X_c[j], body_com[joint_child[j]], joint_q, joint_qd_out, dt, joint_q_out
        )
    if has_mimic != 0 and invalid == 0:
        apply_mimic_coordinates(
            start, end, tree_joint, joint_q_start, joint_qd_start, mimic_leader, mimic_coeffs, joint_q_out, joint_qd_out
        )
    if publish != 0:
        articulation_forward_kinematics(
            art,
            trees.tree_start,
            tree_joint,
            joints,
            joint_q_out,
            joint_qd_out,
            body_q_out,
            body_qd_out,
            kinematics_out,
        )


def advance_joints(
    model: newton.Model,
    plan,
    args: KernelArgs,
    data,
    state_in: newton.State,
    state_out: newton.State,
    dt: float,
    angular_damping: float,
    publish: bool,
    solved: bool = False,
) -> None:
    """Factor where :mod:`.forces` decided to, solve (unless ``solved``), integrate ``state_in`` into
    ``state_out`` over ``dt`` [s] and, if ``publish``, run FK into ``state_out.body_q``/``body_qd``;
    one launch.

    ``angular_damping`` [1/s] scales FREE/DISTANCE angular velocities by ``max(1 - d dt, 0)``.
    ``args`` holds the solver's structs; its ``trees`` carry the mass-matrix layout in use (the core's
    dense one, or the tile path's group-ordered buffers). ``solved``: ``work.joint_qdd`` already holds
    the accelerations (the tile path's solve), so only the integration and FK run.
    """
    if plan.articulation_count == 0:
        return
    launch(
        _advance,
        dim=plan.articulation_count,
        inputs=[
            args.trees,
            plan.joints,
            float(angular_damping),
            float(dt),
            int(solved),
            int(publish),
            data.dof_bias,
            state_in.joint_q,
            state_in.joint_qd,
        ],
        outputs=[
            state_out.joint_q,
            state_out.joint_qd,
            state_out.body_q,
            state_out.body_qd,
            args.kinematics,
            args.buffers,
        ],
        device=model.device,
    )
