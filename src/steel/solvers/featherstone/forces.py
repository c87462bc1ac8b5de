"""Joint-space forces of SolverFeatherstone, fused with the forward kinematics of the input state.

Owns, per step: ``joint_tau`` (every generalized force the solver applies besides contacts and
``body_f``), ``dof_implicit`` (the matching mass-matrix diagonal term), the decision which
articulations refactor their mass matrix (``articulation_refactor``, see "Refactoring" below) and
``body_f_work`` (the input ``State.body_f`` with kinematic bodies zeroed, which the contact stage
then adds to). Does not touch bodies or joints outside every articulation.

Mimic followers first. Before the forward kinematics, each mimic follower of the input state is
overwritten from its leader (``q_f = c0 + c1 q_l``, ``qd_f = c1 qd_l``, in place in ``state_in``;
see :mod:`.mimic`), so a follower that starts off its relation is corrected before any force,
pose or mass matrix of the step is computed from it (the spec's "before the solve").

Force laws (the seed's; per DOF, ``q``/``qd`` the DOF's coordinate and velocity):

* joint limit, PRISMATIC/REVOLUTE/D6, active while ``q`` is outside ``[lower, upper]``:
  ``f = limit_ke (bound - q) - limit_kd qd``, and the drive of that DOF is switched off; the
  push-out term ``limit_ke (bound - q)`` is also written to ``dof_limit_push`` so that
  :mod:`.advance` can bound the speed it returns the DOF with (see there);
* PD drive, PRISMATIC/REVOLUTE/D6 (BALL, FREE, DISTANCE targets are read, no force):
  ``f = target_ke (target_q - q) + target_kd (target_qd - qd)``;
* passive spring, PRISMATIC/REVOLUTE/D6: ``f = -stiffness (q - rest_q)``, the angular error
  wrapped to ``(-pi, pi]``;
* damping, PRISMATIC/REVOLUTE/D6 and each BALL DOF: ``f = -damping qd``;
* ``Control.joint_f`` added as is (FREE/DISTANCE: Newton's world wrench about the child COM,
  which the dynamics stage maps through ``S^T``).

Time discretization (the one change from a plain explicit evaluation, and why). Summing each
DOF's gains into ``ke`` [N/m or N·m/rad] and ``kd`` [N·s/m or N·m·s/rad], the forces are taken
linearly implicit at the end of the step, ``q' = q + dt qd'`` and ``qd' = qd + dt qdd``:

    f(q', qd') = f(q, qd) - ke dt qd - (dt kd + dt^2 ke) qdd

so ``(H + dt kd + dt^2 ke) qdd = f(q, qd) - ke dt qd - C`` (the "stable PD" of Tan, Liu and Turk,
2011; the implicit drive term of Steel's design). Same force laws and equilibria as the explicit
form, but unconditionally stable for any gains: explicitly, a DOF of effective inertia ``I`` is
stable only for ``dt < 2 sqrt(I / ke)`` and ``dt < 2 I / kd``. nv_humanoid has
``limit_ke = 1e4 N·m/rad``, ``limit_kd = 10`` and wrist/ankle DOFs of ``I ~ 0.01 kg·m²``: at
``dt = 1/240 s`` that is ``dt sqrt(ke / I) ~ 4`` and ``dt kd / I ~ 4``, and the explicit limit
penalty diverges as soon as a limit is touched (why the reference goes NaN on that scene).
Rejected: clamping gains to the stable range (changes the documented stiffness) and substepping
(multiplies the cost of every step). The ``dt^2 ke`` term is an ``O(dt)`` change of the
trajectory where gains are active; with the gains of nv_humanoid in the air it stays below the
tolerance of the side-by-side test (see tests/solvers/featherstone/test_vs_reference.py).

Refactoring (the rule behind ``update_mass_matrix_interval``). The factored matrix is
``H + armature + D`` with ``D = dt kd + dt^2 ke`` per DOF. ``H`` (CRBA with armature) is rebuilt
every N-th step only; ``D`` belongs to the current step, and the linearly implicit force above is
only consistent if the factor carries the same ``D`` as ``joint_tau``. So an articulation is
refactored (stale ``H`` plus the current ``D``) on every rebuild step and on any step whose ``D``
differs bitwise from the ``D`` of its current factor: a gain edit, a new ``dt``, a limit turning on
or off (it swaps the drive gains for the limit gains), a body turning kinematic. Otherwise the
factor is reused. ``dof_implicit_factored`` keeps the ``D`` of each DOF's current factor.

Non-finite input, contained per articulation. A host check of every step's state would cost a
device synchronization, so the kernel checks each articulation's own inputs instead: ``joint_q``,
``joint_qd``, ``State.body_f`` of its bodies, the resulting ``joint_tau`` and diagonal (which
covers ``Control.joint_f``, targets and gains), and the length of each FREE/DISTANCE/BALL
quaternion (zero is invalid; any other length is fine, the kinematics and the integrator
normalize on read). An articulation failing any of these is flagged in ``articulation_invalid``
and not stepped: its output coordinates are its input ones (NaN stays NaN, nothing is repaired),
its factor is left alone, and :mod:`.contacts` and :mod:`.particles` drop every contact that
touches one of its bodies, so nothing computed from it reaches a body of another articulation or
world. Worlds are replicated articulations, so the other worlds step exactly as without it.

Kinematic bodies (:attr:`newton.BodyFlags.KINEMATIC`) get ``KINEMATIC_ARMATURE`` on the diagonal
of their inbound joint's DOFs, so no force moves them; the integrator copies their state.
"""

from __future__ import annotations

import warp as wp

import newton

from ...articulation.data import KinematicsBuffers
from ...articulation.joint_model import JointModel
from ...articulation.kinematics import (
    JOINT_BALL,
    JOINT_D6,
    JOINT_DISTANCE,
    JOINT_FREE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    articulation_forward_kinematics,
)
from .data import Buffers, DofForceModel, KernelArgs, Trees
from .mimic import apply_mimic_coordinates
from ...launches import launch

KINEMATIC_ARMATURE = wp.constant(1.0e10)  # effective armature of a kinematic joint [kg or kg·m²]
PI = wp.constant(3.14159265358979)


@wp.func
def _wrap_angle(x: float):
    """``x`` wrapped to ``(-pi, pi]`` [rad]."""
    return x - 2.0 * PI * wp.floor((x + PI) / (2.0 * PI))


@wp.kernel
def _kinematics_and_joint_forces(
    # Plan and model:
    trees: Trees,
    joints: JointModel,
    dofs: DofForceModel,
    dt: float,
    rebuild: int,
    # Data in (joint_q/joint_qd: mimic followers are overwritten in place):
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    joint_f: wp.array[float],
    joint_target_q: wp.array[float],
    joint_target_qd: wp.array[float],
    body_f: wp.array[wp.spatial_vector],
    # Data out:
    body_q_out: wp.array[wp.transform],
    body_qd_out: wp.array[wp.spatial_vector],
    kinematics_out: KinematicsBuffers,
    # Data in and out: reads body_kinematic, the mimic tables, dof_implicit_factored and articulation_contact;
    # writes joint_tau, dof_implicit, dof_limit_push, dof_implicit_factored, articulation_refactor,
    # body_f_work, contact_mass (clears last step's blocks), articulation_contact and articulation_invalid.
    work: Buffers,
):
    joint_type = joints.kind
    joint_child = joints.child
    joint_q_start = joints.q_start
    joint_qd_start = joints.qd_start
    joint_dof_dim = joints.dof_dim
    art = wp.tid()  # one thread per articulation: mimic, FK, then the joint forces of its joints
    if work.has_mimic != 0:
        apply_mimic_coordinates(
            trees.tree_start[art],
            trees.tree_start[art + 1],
            trees.tree_joint,
            joint_q_start,
            joint_qd_start,
            work.mimic_leader,
            work.mimic_coeffs,
            joint_q,
            joint_qd,
        )
    articulation_forward_kinematics(
        art,
        trees.tree_start,
        trees.tree_joint,
        joints,
        joint_q,
        joint_qd,
        body_q_out,
        body_qd_out,
        kinematics_out,
    )
    # Containment: any non-finite input of this articulation (coordinates, velocities, loads, gains
    # through tau) or a FREE/BALL quaternion of zero length marks it invalid; see the module docstring.
    finite = int(1)
    for t in range(trees.tree_start[art], trees.tree_start[art + 1]):
        j = trees.tree_joint[t]
        child = joint_child[j]
        kinematic = work.body_kinematic[child] != 0
        f_ext = wp.spatial_vector()
        if body_f and not kinematic:
            f_ext = body_f[child]
        work.body_f_work[child] = f_ext
        if not wp.isfinite(wp.length_sq(f_ext)):
            finite = 0
        for i in range(joint_q_start[j], joint_q_start[j + 1]):
            if not wp.isfinite(joint_q[i]):
                finite = 0
        quat_at = int(-1)
        if joint_type[j] == JOINT_BALL:
            quat_at = joint_q_start[j]
        elif joint_type[j] == JOINT_FREE or joint_type[j] == JOINT_DISTANCE:
            quat_at = joint_q_start[j] + 3
        if quat_at >= 0:
            length_sq = float(0.0)
            for i in range(4):
                length_sq += joint_q[quat_at + i] * joint_q[quat_at + i]
            if not (length_sq > 1.0e-12):
                finite = 0

        jtype = joint_type[j]
        q0 = joint_q_start[j]
        d0 = joint_qd_start[j]
        d1 = joint_qd_start[j + 1]
        lin_count = joint_dof_dim[j, 0]
        driven = jtype == JOINT_PRISMATIC or jtype == JOINT_REVOLUTE or jtype == JOINT_D6
        for d in range(d0, d1):
            tau = float(0.0)
            if joint_f:
                tau = joint_f[d]
            ke = float(0.0)
            kd = float(0.0)
            push = float(0.0)
            qd = joint_qd[d]
            if driven:
                k = d - d0
                q = joint_q[q0 + k]
                lower = dofs.limit_lower[d]
                upper = dofs.limit_upper[d]
                if q < lower or q > upper:
                    bound = wp.where(q < lower, lower, upper)
                    push = dofs.limit_ke[d] * (bound - q)
                    tau += push - dofs.limit_kd[d] * qd
                    ke += dofs.limit_ke[d]
                    kd += dofs.limit_kd[d]
                else:
                    tq = joint_target_q[q0 + k]
                    tqd = joint_target_qd[d]
                    tau += dofs.target_ke[d] * (tq - q) + dofs.target_kd[d] * (tqd - qd)
                    ke += dofs.target_ke[d]
                    kd += dofs.target_kd[d]
                stiffness = dofs.stiffness[d]
                if stiffness != 0.0:
                    err = q - dofs.rest_q[q0 + k]
                    if k >= lin_count:
                        err = _wrap_angle(err)
                    tau -= stiffness * err
                    ke += stiffness
            if driven or jtype == JOINT_BALL:
                tau -= dofs.damping[d] * qd
                kd += dofs.damping[d]
            # Linearly implicit: evaluate the springs at the predicted position q + dt qd.
            tau -= ke * dt * qd
            extra = dt * kd + dt * dt * ke
            if kinematic:
                extra = KINEMATIC_ARMATURE
                push = 0.0
            work.joint_tau[d] = tau
            work.dof_implicit[d] = extra
            work.dof_limit_push[d] = push
            if not (wp.isfinite(tau) and wp.isfinite(extra)):
                finite = 0

    # Refactor on rebuild steps, wherever D differs from the D of the current factor, and where the
    # current factor holds last step's contact term (cleared here; .contacts adds this step's).
    first = trees.dof_start[art]
    refactor = rebuild
    if work.articulation_contact[art] != 0:
        n = trees.dof_count[art]
        base = trees.mass_start[art]
        for e in range(n * n):
            work.contact_mass[base + e] = 0.0
        work.articulation_contact[art] = 0
        refactor = 1
    for d in range(first, first + trees.dof_count[art]):
        if work.dof_implicit[d] != work.dof_implicit_factored[d]:
            refactor = 1
    if finite == 0:
        # Not stepped (see .advance); its factor is not touched, and NaN as the factored D makes the
        # first finite step after a repair refactor (NaN compares unequal to everything).
        refactor = 0
        for d in range(first, first + trees.dof_count[art]):
            work.dof_implicit_factored[d] = wp.nan
    if refactor != 0:
        for d in range(first, first + trees.dof_count[art]):
            work.dof_implicit_factored[d] = work.dof_implicit[d]
    work.articulation_refactor[art] = refactor
    work.articulation_invalid[art] = 1 - finite


def eval_kinematics_and_joint_forces(
    model: newton.Model,
    plan,
    args: KernelArgs,
    state: newton.State,
    control: newton.Control,
    dt: float,
    rebuild: bool,
) -> None:
    """Mimic followers of ``state`` from their leaders, FK of ``state`` (writes its ``body_q``/``body_qd``
    and the core's kinematic buffers), joint forces into ``work.joint_tau``/``work.dof_implicit``, the
    refactor decision into ``work.articulation_refactor`` and ``state.body_f`` into ``work.body_f_work``;
    one launch. Last step's contact blocks of ``work.contact_mass`` (in the mass-matrix layout in use)
    are cleared here.

    Args:
        model, plan: the model and its articulation plan.
        args: the solver's structs (:class:`~steel.solvers.featherstone.data.KernelArgs`): the trees and
            layout, the model's joint-force arrays, the core's kinematic buffers and the solver's
            buffers (``work``, :class:`~steel.solvers.featherstone.solver.FeatherstoneData`).
        state: the input state (``joint_q`` [m or rad], ``joint_qd`` [m/s or rad/s], ``body_f``).
        control: targets and ``joint_f`` [N or N·m].
        dt: time step [s].
        rebuild: whether this step rebuilds ``H`` (every articulation then refactors).
    """
    if plan.articulation_count == 0:
        return
    launch(
        _kinematics_and_joint_forces,
        dim=plan.articulation_count,
        inputs=[
            args.trees,
            plan.joints,
            args.dofs,
            float(dt),
            int(rebuild),
            state.joint_q,
            state.joint_qd,
            control.joint_f,
            control.joint_target_q,
            control.joint_target_qd,
            state.body_f,
        ],
        outputs=[state.body_q, state.body_qd, args.kinematics, args.buffers],
        device=model.device,
    )
