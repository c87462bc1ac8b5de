"""Carried kinematics: one step's output forward kinematics serve as the next step's input kinematics.

Why. A step runs the forward kinematics twice over the same numbers: the fused finish places the bodies of
the new state (``finish.py``), and the next step's fused free dynamics places them again from that state's
coordinates (``predict.py``), because a caller may hand ``step`` any state (a reset, a copy, an edited
``joint_q``). The second pass is a visible share of the solver step on a chain.

How. The fused finish keeps, per articulation, the coordinates and velocities it placed the bodies from and
the poses and COM twists it wrote (:class:`KinematicsCarry`). The next fused free dynamics compares an
articulation's input coordinates and velocities with the kept ones (:func:`carry_matches`); when every one is
equal it writes the kept poses and twists where the kinematics would write them (:func:`restore_bodies`), and
the kinematics' other outputs (the articulation's reference point, spatial velocities, velocity-product
terms and motion subspaces, in ``ArticulationCore.data``) are still the finish's, computed from the same
numbers by the same functions: the values the kinematics would give. Equal compares numbers, so a zero
coordinate of the other sign also matches (placements then may differ in the sign of a zero). Anything else
that writes those outputs voids the kept copies (NaN coordinates never compare equal): a free-dynamics pass
that runs the kinematics voids its articulation's until the finish keeps new ones, and the host voids them
all on ``notify_model_changed``, ``reset`` and the separate (unfused) kinematics launches. The model's joint
and body arrays are read by the kinematics; the carry relies on edits to them being announced with
``notify_model_changed``, as Newton's solvers require.

The fused free dynamics gains more than the fused finish pays for the copies (timings in
benchmarks/README.md's performance log); 200-step joint_q/joint_qd hashes are equal on chain, cartpole, tower,
humanoid and ant.
"""

from __future__ import annotations

import warp as wp

from ...articulation.joint_model import JointModel
from ...structs import struct_of
from .joints.velocity_limits import input_velocity

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.func
def carry_matches(
    art: int,
    tree_start: wp.array[int],
    tree_joint: wp.array[int],
    joints: JointModel,
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    kept_q: wp.array[float],
    kept_qd: wp.array[float],
):
    """Every coordinate and velocity of articulation ``art`` equals the kept one."""
    for t in range(tree_start[art], tree_start[art + 1]):
        j = tree_joint[t]
        for i in range(joints.q_start[j], joints.q_start[j + 1]):
            if joint_q[i] != kept_q[i]:
                return False
        for d in range(joints.qd_start[j], joints.qd_start[j + 1]):
            if joint_qd[d] != kept_qd[d]:
                return False
    return True


@wp.func
def restore_bodies(
    art: int,
    tree_start: wp.array[int],
    tree_joint: wp.array[int],
    joints: JointModel,
    kept_body_q: wp.array[wp.transform],
    kept_body_qd: wp.array[wp.spatial_vector],
    body_q_out: wp.array[wp.transform],
    body_qd_out: wp.array[wp.spatial_vector],
):
    """Write the kept poses [m, quaternion] and COM twists [m/s, rad/s] of articulation ``art``'s bodies."""
    for t in range(tree_start[art], tree_start[art + 1]):
        child = joints.child[tree_joint[t]]
        body_q_out[child] = kept_body_q[child]
        body_qd_out[child] = kept_body_qd[child]


@wp.func
def keep_kinematics(
    art: int,
    tree_start: wp.array[int],
    tree_joint: wp.array[int],
    joints: JointModel,
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    kept_q: wp.array[float],
    kept_qd: wp.array[float],
    kept_body_q: wp.array[wp.transform],
    kept_body_qd: wp.array[wp.spatial_vector],
):
    """Keep the coordinates and velocities articulation ``art`` was just placed from, and its placement."""
    for t in range(tree_start[art], tree_start[art + 1]):
        j = tree_joint[t]
        for i in range(joints.q_start[j], joints.q_start[j + 1]):
            kept_q[i] = joint_q[i]
        for d in range(joints.qd_start[j], joints.qd_start[j + 1]):
            kept_qd[d] = joint_qd[d]
        child = joints.child[j]
        kept_body_q[child] = body_q[child]
        kept_body_qd[child] = body_qd[child]


@wp.func
def void_kept(art: int, tree_start: wp.array[int], tree_joint: wp.array[int], joints: JointModel,
              kept_q: wp.array[float]):
    """Make articulation ``art``'s kept coordinates match nothing (NaN)."""
    for t in range(tree_start[art], tree_start[art + 1]):
        j = tree_joint[t]
        for i in range(joints.q_start[j], joints.q_start[j + 1]):
            kept_q[i] = wp.nan


@wp.struct
class KeptPlacement:
    """The last fused finish's placement, kept for the next step's input kinematics (module docstring)."""

    q: wp.array[float]  # the coordinates the bodies were placed from; NaN: nothing kept  (joint_coord,)
    qd: wp.array[float]  # the velocities they were placed from [m/s or rad/s]  (dof,)
    body_q: wp.array[wp.transform]  # the placed poses [m, quaternion]  (body,)
    body_qd: wp.array[wp.spatial_vector]  # the placed twists (v_com, w) [m/s, rad/s]  (body,)


class KinematicsCarry:
    """The kept copies (see the module docstring); NaN coordinates until a fused finish keeps some."""

    def __init__(self, model, device):
        self.q = wp.full(max(model.joint_coord_count, 1), wp.nan, dtype=float, device=device)
        self.qd = wp.zeros(max(model.joint_dof_count, 1), dtype=float, device=device)
        self.body_q = wp.zeros(max(model.body_count, 1), dtype=wp.transform, device=device)
        self.body_qd = wp.zeros(max(model.body_count, 1), dtype=wp.spatial_vector, device=device)
        self.arrays = struct_of(KeptPlacement, self)  # as the fused kernels take them (never rebound)

    def void(self) -> None:
        """Void every kept copy: the next input kinematics run in full."""
        self.q.fill_(wp.nan)


def input_kinematics(sm, sd, state_in) -> None:
    """Forward kinematics of the input: poses into ``state_in.body_q``, twists into ``sd.body_qd_in`` (from the
    rescaled velocity with velocity limits); ``state_in.joint_q/joint_qd/body_qd`` stay as given. Voids the
    kept placement, whose bodies these outputs replace."""
    if sm.model.body_count:
        wp.copy(sd.body_qd_in, state_in.body_qd)  # bodies outside every articulation keep their twist
    sd.kinematics_carry.void()
    sm.core.kinematics(state_in.joint_q, input_velocity(sm, sd, state_in, prescale=True), state_in.body_q,
                       sd.body_qd_in)
