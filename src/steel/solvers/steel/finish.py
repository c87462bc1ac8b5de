"""End of a step: solved velocities -> damping, clamps, prescribed DOFs -> positions.

Owns ``state_out.joint_qd`` and ``state_out.joint_q``. Per joint:

* prescribed (kinematic) DOFs take their input velocity back (the sweep could only have nudged
  them by ``~1/KINEMATIC_ARMATURE``);
* the child of a world-rooted FREE joint (free body or floating base) is damped by the seed-004
  attributes, ``w *= max(1 - d_w dt, 0)`` and ``v *= max(1 - d_v dt, 0)``, and a free single body
  has ``|v|`` and ``|w|`` clamped to its ``max_linear/angular_velocity``;
* joints outside every articulation pass their coordinates through.

Positions then follow from the finished velocities by the core's symplectic integrator.

With ``velocity_iterations > 0`` the step carries two velocities: the position-solve velocity
``sd.qd_position``, which alone advances the positions, and the refined velocity ``sd.qd``
that ``state_out.joint_qd`` publishes. Both are finished by the same rules (damping and clamps
apply identically).

One launch (``_finish_articulations``). With one velocity and every joint in an articulation's tree,
finishing, integrating and the output forward kinematics run as one kernel, one thread per
articulation, through the same ``wp.func``s: a joint's finish and integration read only its own DOFs and
coordinates, and the kinematics only its own articulation, so the bits are those of the three separate
launches.
It also keeps the numbers each articulation was placed from and its placement, which the next step's
input kinematics take instead of running again when it starts from the same numbers (``kinematics_carry.py``).
"""

from __future__ import annotations

import warp as wp

from ...articulation.data import CoreBuffers
from ...articulation.integrate import integrate_joint, integrate_joints
from ...articulation.joint_model import JointModel
from ...articulation.kinematics import JOINT_DISTANCE, JOINT_FREE, articulation_forward_kinematics
from ...articulation.topology import PlanArrays
from ...launches import launch, serial_threads
from .kinematics_carry import KeptPlacement, keep_kinematics, void_kept

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.func
def _clamp_norm(v: wp.vec3, limit: float):
    m = wp.length(v)
    if m > limit:
        return v * (limit / m)
    return v


@wp.struct
class FinishModel:
    """What finishing a joint's velocity reads besides the joint struct (``SteelModel.finish_model``, a
    ``CachedStruct`` refilled from :func:`finish_model_values` each step). Comments: meaning [units] (shape)."""

    joint_articulation: wp.array[int]  # articulation of each joint, -1: outside every one  (joint,)
    dof_is_kinematic: wp.array[wp.int32]  # 1: the DOF keeps its input velocity (prescribed)  (dof,)
    body_is_free: wp.array[wp.int32]  # 1: a free rigid body, whose speed caps apply  (body,)
    angular_damping: wp.array[float]  # steel:angularDamping [1/s]  (body,)
    linear_damping: wp.array[float]  # steel:linearDamping [1/s]  (body,)
    max_linear_velocity: wp.array[float]  # steel:maxLinearVelocity [m/s]  (body,)
    max_angular_velocity: wp.array[float]  # steel:maxAngularVelocity [rad/s]  (body,)


def finish_model_values(sm) -> tuple:
    """:class:`FinishModel`'s arrays as they are now, in declaration order.

    Read each step, not once: a ``steel:`` body attribute replaced on the model is picked up at the next step
    (``attributes.py``), and the tables re-upload on a model change. The cache compares the arrays by identity
    (a tuple compares ``is`` first; ``wp.array`` has no ``__eq__`` of its own), so an unchanged step assigns
    nothing."""
    attrs, tables = sm.attributes, sm.tables
    return (sm.model.joint_articulation, tables.dof_is_kinematic, tables.body_is_free, attrs.angular_damping,
            attrs.linear_damping, attrs.max_linear_velocity, attrs.max_angular_velocity)


@wp.func
def finish_joint_velocity(
    j: int,
    dt: float,
    joints: JointModel,
    fm: FinishModel,
    # Data in:
    joint_qd_in: wp.array[float],
    qd_solved: wp.array[float],
    # Data out:
    joint_qd_out: wp.array[float],
):
    """Finished velocity of joint ``j``'s DOFs (the module docstring's rules)."""
    joint_articulation = fm.joint_articulation
    dof_is_kinematic = fm.dof_is_kinematic
    d0 = joints.qd_start[j]
    d1 = joints.qd_start[j + 1]
    if joint_articulation[j] < 0:
        for d in range(d0, d1):
            joint_qd_out[d] = joint_qd_in[d]
        return
    if joints.articulation_skip[joint_articulation[j]] != 0:
        return  # a sleeping island: its output is the frozen state (sleeping/stages.py)
    for d in range(d0, d1):
        if dof_is_kinematic[d] != 0:
            joint_qd_out[d] = joint_qd_in[d]
        else:
            joint_qd_out[d] = qd_solved[d]
    jtype = joints.kind[j]
    if (jtype == JOINT_FREE or jtype == JOINT_DISTANCE) and joints.parent[j] < 0 and dof_is_kinematic[d0] == 0:
        child = joints.child[j]
        v = wp.vec3(joint_qd_out[d0], joint_qd_out[d0 + 1], joint_qd_out[d0 + 2])
        w = wp.vec3(joint_qd_out[d0 + 3], joint_qd_out[d0 + 4], joint_qd_out[d0 + 5])
        v = v * wp.max(1.0 - fm.linear_damping[child] * dt, 0.0)
        w = w * wp.max(1.0 - fm.angular_damping[child] * dt, 0.0)
        if fm.body_is_free[child] != 0:
            v = _clamp_norm(v, fm.max_linear_velocity[child])
            w = _clamp_norm(w, fm.max_angular_velocity[child])
        for k in range(3):
            joint_qd_out[d0 + k] = v[k]
            joint_qd_out[d0 + 3 + k] = w[k]


@wp.kernel
def _finish_velocities(
    dt: float,
    joints: JointModel,
    fm: FinishModel,
    # Data in:
    joint_qd_in: wp.array[float],
    qd_solved: wp.array[float],
    # Data out:
    joint_qd_out: wp.array[float],
):
    j = wp.tid()  # one thread per joint
    finish_joint_velocity(j, dt, joints, fm, joint_qd_in, qd_solved, joint_qd_out)


@wp.kernel
def _finish_articulations(
    threads: int,
    dt: float,
    # Plan and model:
    plan: PlanArrays,
    joints: JointModel,
    fm: FinishModel,
    zero_dof: wp.array[float],
    # Data in:
    joint_q_in: wp.array[float],
    joint_qd_in: wp.array[float],
    qd_solved: wp.array[float],
    # Data out (the output kinematics into the core's buffers, and the placement kept for the next step):
    joint_q_out: wp.array[float],
    joint_qd_out: wp.array[float],
    body_q_out: wp.array[wp.transform],
    body_qd_out: wp.array[wp.spatial_vector],
    core: CoreBuffers,
    kept: KeptPlacement,
):
    # One thread per articulation on CUDA; on the CPU one thread walks them in order (serial_threads).
    for art in range(wp.tid(), plan.articulation_count, threads):
        # Each joint's stages read only its own DOFs and coordinates.
        for t in range(plan.tree_start[art], plan.tree_start[art + 1]):
            j = plan.tree_joint[t]
            finish_joint_velocity(j, dt, joints, fm, joint_qd_in, qd_solved, joint_qd_out)
            # Zero acceleration, as the separate integrator launch is given: qd + dt * 0 keeps its bits there too.
            integrate_joint(j, joints, fm.joint_articulation, joint_q_in, joint_qd_out, zero_dof, dt, joint_q_out,
                            joint_qd_out)
        if joints.articulation_skip[art] == 0:
            articulation_forward_kinematics(art, plan.tree_start, plan.tree_joint, joints, joint_q_out, joint_qd_out,
                                            body_q_out, body_qd_out, core.kinematics)
            # The next step's input kinematics, if it starts from these numbers (kinematics_carry.py).
            keep_kinematics(art, plan.tree_start, plan.tree_joint, joints, joint_q_out, joint_qd_out, body_q_out,
                            body_qd_out, kept.q, kept.qd, kept.body_q, kept.body_qd)
        else:
            void_kept(art, plan.tree_start, plan.tree_joint, joints, kept.q)


def _finish(sm, state_in, dt: float, qd_solved, qd_out) -> None:
    model = sm.model
    launch(
        _finish_velocities,
        dim=model.joint_count,
        inputs=[
            float(dt),
            sm.core.plan.joints,
            sm.finish_model.update(finish_model_values(sm)),
            state_in.joint_qd,
            qd_solved,
        ],
        outputs=[qd_out],
        device=model.device,
    )


def finish_step(sm, sd, state_in, state_out, dt: float, qd_position=None) -> None:
    """Write ``state_out.joint_qd`` from the solved velocities, then integrate ``state_out.joint_q``.

    ``qd_position`` (``velocity_iterations > 0``): the position-solve velocity, finished into itself and
    used for the positions; ``state_out.joint_qd`` then publishes the finished refined ``sd.qd``.
    """
    model = sm.model
    if model.joint_count == 0:
        return
    if qd_position is None:
        _finish(sm, state_in, dt, sd.qd, state_out.joint_qd)
        # Zero acceleration: the integrator only advances positions with the finished velocities.
        integrate_joints(model, state_in.joint_q, state_out.joint_qd, sd.zero_dof, dt, state_out.joint_q,
                         state_out.joint_qd, joints=sm.core.plan.joints)
        return
    # Read state_in.joint_qd (prescribed DOFs) before an in-place output overwrites it.
    _finish(sm, state_in, dt, qd_position, qd_position)
    integrate_joints(model, state_in.joint_q, qd_position, sd.zero_dof, dt, state_out.joint_q, qd_position,
                     joints=sm.core.plan.joints)
    _finish(sm, state_in, dt, sd.qd, state_out.joint_qd)


def finish_fuses(sm, qd_position) -> bool:
    """Whether :func:`finish_and_publish` can finish this step: one velocity (``velocity_iterations=0``) and
    every joint in an articulation's tree (nothing for the per-joint pass-through of loose joints)."""
    plan = sm.core.plan
    return qd_position is None and plan.articulation_count > 0 and plan.trees_cover_every_joint


def finish_and_publish(sm, sd, state_in, state_out, dt: float) -> None:
    """Stage 6 in one launch, one thread per articulation: :func:`finish_step` (finished velocities, then
    positions) followed by the output forward kinematics, bit for bit the separate launches' result.

    Needs :func:`finish_fuses`; ``state_out.body_q``/``body_qd`` must already hold the bodies outside
    every articulation.
    """
    model, plan, data = sm.model, sm.core.plan, sm.core.data
    threads = serial_threads(plan.articulation_count, model.device)
    launch(
        _finish_articulations,
        dim=threads,
        inputs=[
            threads,
            float(dt),
            plan.arrays,
            plan.joints,
            sm.finish_model.update(finish_model_values(sm)),
            sd.zero_dof,
            state_in.joint_q,
            state_in.joint_qd,
            sd.qd,
        ],
        outputs=[state_out.joint_q, state_out.joint_qd, state_out.body_q, state_out.body_qd, data.buffers,
                 sd.kinematics_carry.arrays],
        device=model.device,
    )
