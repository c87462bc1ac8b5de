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
``solver.qd_position``, which alone advances the positions, and the refined velocity ``solver.qd``
that ``state_out.joint_qd`` publishes. Both are finished by the same rules (damping and clamps
apply identically).
"""

from __future__ import annotations

import warp as wp

from ...articulation.integrate import integrate_joints
from ...articulation.kinematics import JOINT_DISTANCE, JOINT_FREE
from ...launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.func
def _clamp_norm(v: wp.vec3, limit: float):
    m = wp.length(v)
    if m > limit:
        return v * (limit / m)
    return v


@wp.kernel
def _finish_velocities(
    dt: float,
    # Model:
    joint_type: wp.array[int],
    joint_articulation: wp.array[int],
    joint_parent: wp.array[int],
    joint_child: wp.array[int],
    joint_qd_start: wp.array[int],
    # Solver tables and attributes:
    dof_is_kinematic: wp.array[wp.int32],
    body_is_free: wp.array[wp.int32],
    angular_damping: wp.array[float],
    linear_damping: wp.array[float],
    max_linear_velocity: wp.array[float],
    max_angular_velocity: wp.array[float],
    articulation_skip: wp.array[wp.int32],
    # Data in:
    joint_qd_in: wp.array[float],
    qd_solved: wp.array[float],
    # Data out:
    joint_qd_out: wp.array[float],
):
    j = wp.tid()  # one thread per joint
    d0 = joint_qd_start[j]
    d1 = joint_qd_start[j + 1]
    if joint_articulation[j] < 0:
        for d in range(d0, d1):
            joint_qd_out[d] = joint_qd_in[d]
        return
    if articulation_skip[joint_articulation[j]] != 0:
        return  # a sleeping island: its output is the frozen state (sleeping.py)
    for d in range(d0, d1):
        if dof_is_kinematic[d] != 0:
            joint_qd_out[d] = joint_qd_in[d]
        else:
            joint_qd_out[d] = qd_solved[d]
    jtype = joint_type[j]
    if (jtype == JOINT_FREE or jtype == JOINT_DISTANCE) and joint_parent[j] < 0 and dof_is_kinematic[d0] == 0:
        child = joint_child[j]
        v = wp.vec3(joint_qd_out[d0], joint_qd_out[d0 + 1], joint_qd_out[d0 + 2])
        w = wp.vec3(joint_qd_out[d0 + 3], joint_qd_out[d0 + 4], joint_qd_out[d0 + 5])
        v = v * wp.max(1.0 - linear_damping[child] * dt, 0.0)
        w = w * wp.max(1.0 - angular_damping[child] * dt, 0.0)
        if body_is_free[child] != 0:
            v = _clamp_norm(v, max_linear_velocity[child])
            w = _clamp_norm(w, max_angular_velocity[child])
        for k in range(3):
            joint_qd_out[d0 + k] = v[k]
            joint_qd_out[d0 + 3 + k] = w[k]


def _finish(solver, state_in, dt: float, qd_solved, qd_out) -> None:
    model = solver.model
    attrs = solver.attributes
    launch(
        _finish_velocities,
        dim=model.joint_count,
        inputs=[
            float(dt),
            model.joint_type,
            model.joint_articulation,
            model.joint_parent,
            model.joint_child,
            model.joint_qd_start,
            solver.tables.dof_is_kinematic,
            solver.tables.body_is_free,
            attrs.angular_damping,
            attrs.linear_damping,
            attrs.max_linear_velocity,
            attrs.max_angular_velocity,
            solver.core.plan.joints.articulation_skip,
            state_in.joint_qd,
            qd_solved,
        ],
        outputs=[qd_out],
        device=model.device,
    )


def finish_step(solver, state_in, state_out, dt: float, qd_position=None) -> None:
    """Write ``state_out.joint_qd`` from the solved velocities, then integrate ``state_out.joint_q``.

    ``qd_position`` (``velocity_iterations > 0``): the position-solve velocity, finished into itself and
    used for the positions; ``state_out.joint_qd`` then publishes the finished refined ``solver.qd``.
    """
    model = solver.model
    if model.joint_count == 0:
        return
    if qd_position is None:
        _finish(solver, state_in, dt, solver.qd, state_out.joint_qd)
        # Zero acceleration: the integrator only advances positions with the finished velocities.
        integrate_joints(model, state_in.joint_q, state_out.joint_qd, solver.zero_dof, dt, state_out.joint_q,
                         state_out.joint_qd, joints=solver.core.plan.joints)
        return
    # Read state_in.joint_qd (prescribed DOFs) before an in-place output overwrites it.
    _finish(solver, state_in, dt, qd_position, qd_position)
    integrate_joints(model, state_in.joint_q, qd_position, solver.zero_dof, dt, state_out.joint_q, qd_position,
                     joints=solver.core.plan.joints)
    _finish(solver, state_in, dt, solver.qd, state_out.joint_qd)
