"""Rigid AVBD history reset for selected worlds (``SolverVBD.reset``).

Joint and mimic multipliers and start-of-step values are zeroed and the penalty goes back to its minimum (the
``k_start`` seed when ramping, else the fixed stiffness), and angles unwind from the rest pose's
turn again (whole turns counted before are forgotten); a body's previous-step velocity is dropped,
so the next step starts it from the inertial target instead of the adaptive guess. Body–body
contacts of the selected worlds (a row belongs to its world shape's world; a row between shapes of
no world to the mask's last entry) start cold at the next contact refresh: no ``λ`` or ``k`` is
restored from history. Cable Dahl friction states go to zero. The pose history, and with it the bend
the Dahl state is measured from, needs no rebaseline: every step snapshots its input pose.
"""

from __future__ import annotations

import warp as wp

from .bodies import BodyData
from .joints import JointData
from .mimic import MimicData
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.func
def _selected(world: wp.int32, mask: wp.array[wp.bool], use_mask: wp.int32, local_only: wp.int32):
    """A world-mask entry: local worlds by index; entities of no world (-1) by the last entry, if there is one."""
    if use_mask == 0:
        return True
    if world < 0:
        if local_only != 0:
            return False
        return mask[mask.shape[0] - 1]
    if world >= mask.shape[0]:
        return False
    return mask[world]


@wp.kernel
def _reset_mimics(md: MimicData, mask: wp.array[wp.bool], use_mask: wp.int32, local_only: wp.int32):
    r = wp.tid()  # one thread per mimic row, by its follower joint's world
    if _selected(md.world[r], mask, use_mask, local_only):
        md.lam[r] = 0.0


@wp.kernel
def _reset_joints(
    jd: JointData,
    joint_world: wp.array[wp.int32],
    mask: wp.array[wp.bool],
    use_mask: wp.int32,
    local_only: wp.int32,
):
    j = wp.tid()  # one thread per joint
    if not _selected(joint_world[j], mask, use_mask, local_only):
        return
    jd.lam_lin[j] = wp.vec3(0.0)
    jd.lam_ang[j] = wp.vec3(0.0)
    jd.c0_lin[j] = wp.vec3(0.0)
    jd.c0_ang[j] = wp.vec3(0.0)
    jd.k[j, 0] = jd.k_lo[j, 0]
    jd.k[j, 1] = jd.k_lo[j, 1]
    jd.dahl_s[j] = wp.vec3(0.0)  # cable friction forgets its history; the bend rebaselines at the next step
    jd.sigma_end[j] = wp.vec3(0.0)
    for d in range(jd.qd_start[j], jd.qd_start[j + 1]):
        jd.dof_s0[d] = jd.dof_offset[d]  # angles unwind from the rest pose's turn again
        jd.dof_lam[d] = 0.0  # compliant drive rows start cold


@wp.kernel
def _reset_bodies_history(
    bd: BodyData,
    mask: wp.array[wp.bool],
    use_mask: wp.int32,
    local_only: wp.int32,
):
    b = wp.tid()  # one thread per body
    if _selected(bd.world[b], mask, use_mask, local_only):
        bd.has_last[b] = 0


@wp.kernel
def _mark_cold_worlds(
    mask: wp.array[wp.bool],
    use_mask: wp.int32,
    local_only: wp.int32,
    cold: wp.array[wp.int32],
):
    w = wp.tid()  # one thread per world slot; the last slot stands for entities of no world (-1)
    world = w
    if w == cold.shape[0] - 1:
        world = -1
    if _selected(world, mask, use_mask, local_only):
        cold[w] = 1


def reset_rigid_history(model, work, world_mask, state=None) -> None:
    """Clear AVBD joint state and body velocity history of the worlds ``world_mask`` selects (None: all).

    Tendon tensions of those worlds go to zero and, in ``state`` when given, their spans' rest lengths back to
    the initial values (:meth:`.tendons.Tendons.reset`)."""
    dev = model.device
    use_mask = int(world_mask is not None)
    mask = world_mask if world_mask is not None else wp.zeros(1, dtype=wp.bool, device=dev)
    local_only = int(use_mask and mask.shape[0] == int(model.world_count))
    if work.joint_count:
        launch(_reset_joints, dim=work.joint_count,
                  inputs=[work.joints, model.joint_world, mask, use_mask, local_only], device=dev)
    if work.mimics.count:
        launch(_reset_mimics, dim=work.mimics.count, inputs=[work.mimics.data, mask, use_mask, local_only], device=dev)
    work.tendons.reset(model, state, world_mask)
    launch(_reset_bodies_history, dim=model.body_count, inputs=[work.bodies, mask, use_mask, local_only],
              device=dev)
    if work.contacts is not None:  # body–body warm start: cold at the next refresh of these worlds' rows
        cold = work.contacts.cold_worlds
        launch(_mark_cold_worlds, dim=cold.shape[0], inputs=[mask, use_mask, local_only, cold], device=dev)
