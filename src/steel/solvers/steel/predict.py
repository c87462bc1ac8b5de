"""Free dynamics of a step: joint forces, implicit drive terms, and the unconstrained velocity.

Owns ``sd.dof_f`` (explicit joint forces), ``sd.dof_diag`` (implicit mass-matrix terms)
and the predicted velocity ``qd*`` that the rows then correct.

Implicit drives and passive joint terms (``drive_mode="augmented"``; with ``drive_mode="rows"`` the
drives are rows instead, ``joints/drives.py``, and only the passive terms stay here). A PD drive evaluated at the
end of the step, ``f = ke (q_t - q - dt qd') + kd (qd_t - qd')``, with ``H (qd' - qd) = dt (f + f_other)``
rearranges to

    (H + dt kd + dt^2 ke) (qd' - qd) = dt (f_other + f_exp),   f_exp = ke (q_t - q - dt qd) + kd (qd_t - qd)

so the drive's stiffness and damping fold into the mass-matrix diagonal and only ``f_exp`` is
applied explicitly; ``f_exp`` is what ``joint_effort_limit`` clamps, the implicit response is not
bounded. Passive springs (``joint_stiffness`` toward ``joint_rest_q``) and ``joint_damping`` take the
same form with target velocity 0: damping ``c`` adds ``dt c`` to the diagonal and ``-c qd`` to ``f_exp``,
so ``M (qd' - qd) = dt (... - c qd')``, backward Euler in the damping too. The reference applies
``joint_damping`` as the explicit force ``-c qd`` instead (measured on a 1 kg slider, c 20 N·s/m, drive
ke 50 N/m, kd 5 N·s/m to 1.5 m, 120 steps of 1/120 s: ours 1.310985 m, the backward-Euler recursion;
the reference 1.307882 m, the explicit one; ``tests/solvers/steel/test_dynamics.py::
test_passive_damping_on_a_slider_with_an_augmented_drive_is_backward_euler``); kept implicit because it is stable for any ``c``, where the
explicit force reverses the velocity once ``c dt`` exceeds twice the augmented mass. The invariant a
test checks: a driven DOF with no other load converges to its target without overshoot for any ``dt``.

Prescribed (kinematic) DOFs get ``KINEMATIC_ARMATURE`` on the diagonal, so neither forces nor
row impulses move them and their subtree rides along; their velocity is restored to the input
after the sweep.

Free single bodies (one body on a world-rooted FREE joint) replace the explicit gyroscopic term
of the general path by one Newton step of the implicit rigid-body rotation update
``I w' + dt w' x I w' = I w + dt tau`` (Catto, "Numerical Methods", GDC 2015), which keeps a
torque-free spin bounded where the explicit term gains energy, followed by a momentum-form
correction: ``w'`` is re-solved with the inertia the body will have after turning by ``dt w'``, so
that the world angular momentum ``I w`` is carried over unchanged (measured: |L| changes by at most 1.3e-4
of itself over a 5 s intermediate-axis tumble at dt = 1/240 s, against 1.4 % without the correction;
``tests/solvers/steel/test_dynamics.py::test_torque_free_spin_conserves_angular_momentum_and_flips``).

The fused launch also writes what the dormant contact rows are bounded by (``contacts/dormant.py``): per joint,
after the input kinematics, the sums of its path's motion-subspace magnitudes, and per articulation, after
``qd*``, the largest input velocity and the largest change ``qd* - qd_in``.

Its input kinematics are skipped for an articulation whose coordinates and velocities are those the last
fused finish placed it from: the finish's placement is restored instead (``kinematics_carry.py``).

One launch (``_free_dynamics``). When ``H`` is rebuilt this step (the default
``update_mass_matrix_interval=1``) and every joint lies in an articulation's tree, the input kinematics,
joint forces, RNEA + CRBA, factor and ``qd*`` run as one kernel, one thread per articulation, calling the
same ``wp.func``s as the separate kernels in the same order per articulation: every stage reads only its
own articulation's joints, DOFs and bodies, so the bits are those of the five launches and the diagonal
copy it replaces (on the CPU a launch costs its fixed host and runtime overhead whatever its work). A stale
``H`` between rebuilds (its ``wp.capture_if`` on a gain edit) and models with loop closures or joints outside
the articulations keep the separate launches. On the CPU the launch is one thread walking the articulations
in order (``launches.serial_threads``): a thread per articulation (rejected) copied the kernel's argument
block once per articulation, 704 times per tower x16 step. That, a free body's factor and solve in local
storage, CRBA pairs computed once (``articulation/dynamics.py``) and the root pose placed once by the
kinematics made the launch cheaper, bitwise the same (figures in benchmarks/README.md's performance log).

Native loops. The tree-sparse factor, the CRBA and the predicted velocity's solve run as native C++ on the
arrays' data (``articulation/factor.py``, ``articulation/dynamics.py``; Warp's float operations in Warp's
order, bitwise the same): there the time went to address arithmetic. The input kinematics and the RNEA
forward pass are floating-point bound (a perf profile puts most samples on scalar multiplies and adds), so
they, the RNEA backward pass and the joint forces stay Warp code: native code did not pay where the work is
arithmetic. Rejected: the kinematics and the RNEA forward pass in one walk over the bodies, and the factor
and the prediction as loops of their own after the rest (both within noise). Would pay only with other
arithmetic (not done, not bitwise): a structured ``I a`` for the forward pass's two 6x6 spatial-inertia
products, and a child frame ``X_c`` taken as the identity (``q * identity`` is not ``q`` when a component is
a signed zero). Timings and the per-stage split in benchmarks/README.md's performance log.
"""

from __future__ import annotations

import warp as wp

from ...articulation.dynamics import articulation_bias_and_mass_matrix
from ...articulation.factor import factor_articulation, factor_solve, tree_solve_native
from ...articulation.data import CoreBuffers
from ...articulation.joint_model import JointModel
from ...articulation.kinematics import (
    JOINT_D6,
    JOINT_DISTANCE,
    JOINT_FREE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    articulation_forward_kinematics,
)
from ...articulation.topology import PlanArrays
from ...articulation.spatial import skew
from ...launches import launch, serial_threads
from ...structs import struct_of
from .data import DofBuffers
from .kinematics_carry import KeptPlacement, carry_matches, restore_bodies, void_kept
from .contacts.dormant import joint_path_sums, velocity_spread

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

KINEMATIC_ARMATURE = wp.constant(1.0e10)


@wp.struct
class DriveModel:
    """The model arrays and solver tables the joint forces and the free dynamics read, as one struct.

    Comments: meaning [units] (shape). Built by :func:`drive_model`; the solver builds it again after a model
    change notice, as its tables re-upload their arrays then.
    """

    joint_articulation: wp.array[int]  # articulation of each joint, -1: none  (joint,)
    joint_target_q_start: wp.array[int]  # first control.joint_target_q entry of each joint  (joint + 1,)
    joint_target_ke: wp.array[float]  # drive stiffness [N/m or N·m/rad]  (dof,)
    joint_target_kd: wp.array[float]  # drive damping [N·s/m or N·m·s/rad]  (dof,)
    joint_effort_limit: wp.array[float]  # bound on the explicit drive force [N or N·m]  (dof,)
    joint_damping: wp.array[float]  # passive damping [N·s/m or N·m·s/rad]  (dof,)
    joint_stiffness: wp.array[float]  # passive spring toward joint_rest_q [N/m or N·m/rad]  (dof,)
    joint_rest_q: wp.array[float]  # the passive spring's rest coordinate [m or rad]  (dof,)
    joint_armature: wp.array[float]  # added diagonal inertia [kg or kg·m²]  (dof,)
    gravity: wp.array[wp.vec3]  # gravity of each world [m/s²]  (world,)
    dof_is_kinematic: wp.array[wp.int32]  # 1: a prescribed DOF (tables.py)  (dof,)
    articulation_is_free_body: wp.array[wp.int32]  # 1: one dynamic free single body (tables.py)  (articulation,)


def drive_model(model, tables) -> DriveModel:
    """The :class:`DriveModel` of ``model`` and the solver's ``SteelTables``."""
    return struct_of(DriveModel, tables, model)


@wp.func
def joint_forces(
    j: int,
    dt: float,
    drive_rows: int,
    # Model and solver tables:
    joints: JointModel,
    drives: DriveModel,
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    control_joint_f: wp.array[float],
    control_target_q: wp.array[float],
    control_target_qd: wp.array[float],
    # Data out:
    dof_f_out: wp.array[float],
    dof_diag_out: wp.array[float],
):
    """Explicit force and implicit diagonal of joint ``j``'s DOFs (the body of :func:`eval_joint_forces`)."""
    joint_articulation = drives.joint_articulation
    joint_target_q_start = drives.joint_target_q_start
    joint_target_ke = drives.joint_target_ke
    joint_target_kd = drives.joint_target_kd
    joint_effort_limit = drives.joint_effort_limit
    joint_damping = drives.joint_damping
    joint_stiffness = drives.joint_stiffness
    joint_rest_q = drives.joint_rest_q
    dof_is_kinematic = drives.dof_is_kinematic
    d0 = joints.qd_start[j]
    d1 = joints.qd_start[j + 1]
    jtype = joints.kind[j]
    driven = jtype == JOINT_PRISMATIC or jtype == JOINT_REVOLUTE or jtype == JOINT_D6
    free = jtype == JOINT_FREE or jtype == JOINT_DISTANCE
    for k in range(d1 - d0):
        d = d0 + k
        f = float(0.0)
        if control_joint_f:
            f = control_joint_f[d]
        diag = float(0.0)
        if joint_articulation[j] >= 0 and not free:
            qd = joint_qd[d]
            c = joint_damping[d]
            f -= c * qd
            diag += dt * c
            if driven:  # drive_mode="rows" leaves ke and kd to joints/drives.py
                q = joint_q[joints.q_start[j] + k]
                ke = joint_target_ke[d]
                kd = joint_target_kd[d]
                if (ke != 0.0 or kd != 0.0) and drive_rows == 0:
                    q_t = float(0.0)
                    qd_t = float(0.0)
                    if control_target_q:
                        q_t = control_target_q[joint_target_q_start[j] + k]
                    if control_target_qd:
                        qd_t = control_target_qd[d]
                    limit = joint_effort_limit[d]
                    f += wp.clamp(ke * (q_t - q - dt * qd) + kd * (qd_t - qd), -limit, limit)
                    diag += dt * kd + dt * dt * ke
                ks = joint_stiffness[d]
                if ks != 0.0:
                    f += ks * (joint_rest_q[joints.q_start[j] + k] - q - dt * qd)
                    diag += dt * dt * ks
        if dof_is_kinematic[d] != 0:
            f = 0.0
            diag += KINEMATIC_ARMATURE
        dof_f_out[d] = f
        dof_diag_out[d] = diag


@wp.kernel
def _joint_forces(
    dt: float,
    drive_rows: int,
    # Model and solver tables:
    joints: JointModel,
    drives: DriveModel,
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    control_joint_f: wp.array[float],
    control_target_q: wp.array[float],
    control_target_qd: wp.array[float],
    # Data out:
    dof_f_out: wp.array[float],
    dof_diag_out: wp.array[float],
):
    j = wp.tid()  # one thread per joint
    joint_forces(j, dt, drive_rows, joints, drives, joint_q, joint_qd, control_joint_f, control_target_q,
                 control_target_qd, dof_f_out, dof_diag_out)


def eval_joint_forces(sm, sd, state, control, dt: float, joint_qd: wp.array) -> None:
    """Explicit joint forces and implicit diagonal terms into ``sd.dof_f``/``sd.dof_diag``, at the step's
    input velocity ``joint_qd`` (``state.joint_qd`` or its velocity-limit prescale)."""
    model = sm.model
    if model.joint_count == 0:
        return
    launch(
        _joint_forces,
        dim=model.joint_count,
        inputs=[
            float(dt),
            int(sm.options.drive_mode == "rows"),
            sm.core.plan.joints,
            sm.drive_model,
            state.joint_q,
            joint_qd,
            control.joint_f,
            control.joint_target_q,
            control.joint_target_qd,
        ],
        outputs=[sd.dof_f, sd.dof_diag],
        device=model.device,
    )


@wp.func
def predict_articulation_velocity(
    art: int,
    dt: float,
    plan: PlanArrays,
    # Solver tables:
    articulation_is_free_body: wp.array[wp.int32],
    articulation_skip: wp.array[wp.int32],
    # Data in (mass_matrix, mass_factor, dof_bias):
    core: CoreBuffers,
    joint_qd: wp.array[float],
    # Data out:
    qd_pred_out: wp.array[float],
):
    """``qd* = qd - dt H^-1 bias`` of articulation ``art`` (the body of :func:`predict_velocity`)."""
    if articulation_skip[art] != 0:
        return  # a sleeping island: no dynamics (sleeping/stages.py)
    n = plan.dof_count[art]
    d0 = plan.dof_start[art]
    base = plan.mass_start[art]
    use_tree = plan.use_tree
    dof_parent = plan.dof_parent
    mass_matrix = core.mass_matrix
    mass_factor = core.mass_factor
    dof_bias = core.dof_bias
    # qd* = qd - dt H^-1 bias, written as the increment first.
    if use_tree != 0:
        tree_solve_native(n, base, d0, dof_parent, mass_factor, dof_bias, d0, -dt, qd_pred_out)
    else:
        factor_solve(use_tree, n, base, d0, d0, dof_parent, mass_factor, dof_bias, -dt, qd_pred_out)
    if articulation_is_free_body[art] == 0:
        for k in range(n):
            qd_pred_out[d0 + k] = joint_qd[d0 + k] + qd_pred_out[d0 + k]
        return
    for k in range(3):
        qd_pred_out[d0 + k] = joint_qd[d0 + k] + qd_pred_out[d0 + k]
    # Angular block of H (inertia + armature, parent-anchor frame) and the explicit result.
    inertia = wp.mat33()
    for a in range(3):
        for b in range(3):
            inertia[a, b] = mass_matrix[base + (3 + a) * n + 3 + b]
    w0 = wp.vec3(joint_qd[d0 + 3], joint_qd[d0 + 4], joint_qd[d0 + 5])
    dw = wp.vec3(qd_pred_out[d0 + 3], qd_pred_out[d0 + 4], qd_pred_out[d0 + 5])
    Iw0 = inertia * w0
    # Torque impulse of everything but the gyroscopic term: I dw = dt (tau - w0 x I w0).
    tau_dt = inertia * dw + dt * wp.cross(w0, Iw0)
    residual = dt * wp.cross(w0, Iw0) - tau_dt
    jac = inertia + dt * (skew(w0) * inertia - skew(Iw0))
    w1 = w0 - wp.inverse(jac) * residual
    # Momentum form: the inertia the body will have after turning by dt w1 must carry the
    # angular momentum I w0 + tau dt, which removes the first-order drift of |L| that a fixed
    # inertia leaves when the body tumbles.
    turn = wp.quat_to_matrix(wp.quat_from_axis_angle(wp.normalize(w1 + wp.vec3(1.0e-30)), wp.length(w1) * dt))
    inertia_next = turn * inertia * wp.transpose(turn)
    w1 = wp.inverse(inertia_next) * (Iw0 + tau_dt)
    for k in range(3):
        qd_pred_out[d0 + 3 + k] = w1[k]


@wp.kernel
def _predict_velocity(
    dt: float,
    plan: PlanArrays,
    articulation_is_free_body: wp.array[wp.int32],
    articulation_skip: wp.array[wp.int32],
    core: CoreBuffers,
    joint_qd: wp.array[float],
    qd_pred_out: wp.array[float],
):
    art = wp.tid()  # one thread per articulation
    predict_articulation_velocity(art, dt, plan, articulation_is_free_body, articulation_skip, core, joint_qd,
                                  qd_pred_out)


def predict_velocity(sm, sd, joint_qd: wp.array, dt: float) -> None:
    """``sd.qd = joint_qd - dt H^-1 bias`` per articulation (implicit gyroscopics for free bodies)."""
    plan, data = sm.core.plan, sm.core.data
    if plan.articulation_count == 0:
        return
    launch(
        _predict_velocity,
        dim=plan.articulation_count,
        inputs=[
            float(dt),
            plan.arrays,
            sm.tables.articulation_is_free_body,
            plan.joints.articulation_skip,
            data.buffers,
            joint_qd,
        ],
        outputs=[sd.qd],
        device=sm.model.device,
    )


@wp.kernel
def _free_dynamics(
    threads: int,
    dt: float,
    drive_rows: int,
    with_kinematics: int,
    plan: PlanArrays,
    joints: JointModel,
    drives: DriveModel,
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    body_f_ext: wp.array[wp.spatial_vector],
    control_joint_f: wp.array[float],
    control_target_q: wp.array[float],
    control_target_qd: wp.array[float],
    # Data out (the kinematics' only with with_kinematics):
    body_q_out: wp.array[wp.transform],
    body_qd_out: wp.array[wp.spatial_vector],
    core: CoreBuffers,
    dofs: DofBuffers,
    path_sums_out: wp.array[wp.vec2],
    spread_out: wp.array[wp.vec2],
    # The last fused finish's placement (kinematics_carry.py), voided here where the kinematics run:
    kept: KeptPlacement,
):
    # One thread per articulation on CUDA; on the CPU one thread walks them in order (serial_threads).
    for art in range(wp.tid(), plan.articulation_count, threads):
        # Every stage below reads only this articulation's entries.
        if with_kinematics != 0 and joints.articulation_skip[art] == 0:
            if carry_matches(art, plan.tree_start, plan.tree_joint, joints, joint_q, joint_qd, kept.q, kept.qd):
                # The finish placed these bodies from the same numbers (kinematics_carry.py).
                restore_bodies(art, plan.tree_start, plan.tree_joint, joints, kept.body_q, kept.body_qd, body_q_out,
                               body_qd_out)
            else:
                articulation_forward_kinematics(art, plan.tree_start, plan.tree_joint, joints, joint_q, joint_qd,
                                                body_q_out, body_qd_out, core.kinematics)
                void_kept(art, plan.tree_start, plan.tree_joint, joints, kept.q)
            # The dormant contact rows' bound on |J| (contacts/dormant.py): the subspaces are this step's.
            joint_path_sums(art, plan.tree_start, plan.tree_joint, plan.joint_parent_joint, joints.qd_start,
                            core.kinematics.dof_S, path_sums_out)
        for t in range(plan.tree_start[art], plan.tree_start[art + 1]):
            j = plan.tree_joint[t]
            joint_forces(j, dt, drive_rows, joints, drives, joint_q, joint_qd, control_joint_f, control_target_q,
                         control_target_qd, dofs.f, dofs.diag)
            for d in range(joints.qd_start[j], joints.qd_start[j + 1]):
                dofs.diag_factored[d] = dofs.diag[d]
        articulation_bias_and_mass_matrix(art, plan, joints, drives.joint_armature, drives.gravity, body_q_out,
                                          body_f_ext, dofs.f, dofs.diag, 1, core)
        # The separate path factors asleep articulations' (stale) H as well; so does this one, bit for bit.
        factor_articulation(plan.use_tree, plan.dof_count[art], plan.mass_start[art], plan.dof_start[art],
                            plan.dof_parent, core.mass_matrix, core.mass_factor)
        predict_articulation_velocity(art, dt, plan, drives.articulation_is_free_body, joints.articulation_skip, core,
                                      joint_qd, dofs.qd)
        velocity_spread(art, joints.articulation_skip[art], plan.dof_start, plan.dof_count, joint_qd, dofs.qd,
                        spread_out)


def free_dynamics_fuses(sm, rebuild_mass_matrix: bool) -> bool:
    """Whether :func:`eval_free_dynamics` can run this step's free dynamics: ``H`` is rebuilt (the
    default ``update_mass_matrix_interval=1``) and every joint lies in an articulation's tree (no loop
    closure, no joint outside the articulations), so one thread per articulation reaches every DOF."""
    plan = sm.core.plan
    return rebuild_mass_matrix and plan.articulation_count > 0 and plan.trees_cover_every_joint


def eval_free_dynamics(sm, sd, state, control, dt: float, joint_qd: wp.array, with_kinematics: bool) -> None:
    """Stages 1-2 of the step in one launch, one thread per articulation: forward kinematics of the input
    (``with_kinematics``), joint forces, RNEA + CRBA, factor and ``sd.qd``, with ``H`` rebuilt.

    Writes what the separate launches write, bit for bit (the same ``wp.func``s in the same order per
    articulation), including ``sd.dof_diag_factored``. Needs :func:`free_dynamics_fuses`. With
    ``with_kinematics``, ``sd.body_qd_in`` must already hold the twists of bodies outside every
    articulation.
    """
    model, plan, data = sm.model, sm.core.plan, sm.core.data
    threads = serial_threads(plan.articulation_count, model.device)
    launch(
        _free_dynamics,
        dim=threads,
        inputs=[
            threads,
            float(dt),
            int(sm.options.drive_mode == "rows"),
            int(with_kinematics),
            plan.arrays,
            plan.joints,
            sm.drive_model,
            state.joint_q,
            joint_qd,
            state.body_f,
            control.joint_f,
            control.joint_target_q,
            control.joint_target_qd,
        ],
        outputs=[state.body_q, sd.body_qd_in, data.buffers, sd.dofs, sd.dormant.path_sums,
                 sd.dormant.spread, sd.kinematics_carry.arrays],
        device=model.device,
    )


@wp.kernel
def _flag_changed_diagonal(
    # Data in:
    dof_diag: wp.array[float],
    dof_diag_factored: wp.array[float],
    # Data out:
    changed_out: wp.array[wp.int32],
):
    d = wp.tid()  # one thread per DOF
    if dof_diag[d] != dof_diag_factored[d]:
        changed_out[0] = 1


def flag_changed_diagonal(sm, sd) -> wp.array:
    """``sd.diag_changed[0] = 1`` when this step's implicit diagonal differs from the factored one.

    Between mass-matrix rebuilds (``update_mass_matrix_interval > 1``) only the rigid-body ``H`` may
    be stale: the implicit terms ``dt kd + dt² ke`` follow gain edits at once (a drive edited without
    a rebuild otherwise keeps acting with its old stiffness until the next one). The flag stays on the
    device, so the caller branches with ``wp.capture_if`` and a graph capture records both branches.
    """
    sd.diag_changed.zero_()
    n = sm.model.joint_dof_count
    if n:
        launch(_flag_changed_diagonal, dim=n, inputs=[sd.dof_diag, sd.dof_diag_factored],
                  outputs=[sd.diag_changed], device=sm.model.device)
    return sd.diag_changed
