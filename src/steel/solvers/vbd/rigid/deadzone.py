"""The deadzone snap of sticking body–body contacts, and the support it needs.

The seed's body-level deadzone (``rigid_contact_stick_freeze_translation_eps`` [m] and
``rigid_contact_stick_freeze_angular_eps`` [rad], both > 0 to act; measured on the seed's revision of
Newton's SolverVBD): a dynamic body whose pushing contacts (``λ > 0`` at the final poses) are all sticking
contacts (:mod:`.contacts`) with other dynamic bodies, at least one, and which moved less than the
translation threshold (COM) and turned less than the angular one this step, is put back at its input pose
bitwise, at rest. A body pressed on static or kinematic geometry is never snapped.

Support. Putting a body back where the step began is only right where what it rests on stays put too, so a
body is snapped only when it is **supported**: a chain of pushing contacts joins it to static geometry or
to a kinematic body that did not move this step. Without it a stack in free fall froze in mid-air: each box
released from rest moves only ``g dt²`` (2.7e-5 m at 1/600 s) in its first step, under the 1e-4 m
threshold, and the contacts between boxes falling together stick, so every box that rested on another was
put back at its start, at rest, step after step (Steel's tower scene: five boxes of one tower held at
1.0-1.8 m for the whole run while the two under them fell away). A stack whose support is taken away
falls the same way, and boxes on a kinematic platform that moves less than the threshold per step were
held back while the platform carried the box under them away. Rejected: a local test (the contacts carry
the body's weight; the supporting body moved less than the threshold), which a slowly moving platform
passes, and a support flag carried from step to step (one contact layer per step), which holds a box
for as many steps as it sits layers above a support that has just gone.

Support is found per world (one thread each) by a breadth-first search over the per-body contact lists
from the bodies pushed by static or resting kinematic geometry; a body whose list overflowed is searched
with the contacts it has. Cost: one launch per step (two with the snap), only with the snap on.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from .contacts import ContactData
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.func
def _other_body(cd: ContactData, i: wp.int32, b: wp.int32):
    """The body on the other side of contact row ``i`` from body ``b`` (-1: static)."""
    return wp.where(cd.body0[i] == b, cd.body1[i], cd.body0[i])


@wp.func
def _resting_support(dynamic: wp.array[wp.int32], com: wp.array[wp.vec3], x_prev: wp.array[wp.vec3],
                     q_prev: wp.array[wp.quat], body_q_in: wp.array[wp.transform], o: wp.int32):
    """1 where ``o`` is static geometry (-1) or a kinematic body at the pose it started the step at."""
    if o < 0:
        return 1
    if dynamic[o] != 0:
        return 0
    t = body_q_in[o]
    same = wp.transform_point(t, com[o]) == x_prev[o] and wp.transform_get_rotation(t) == q_prev[o]
    return wp.where(same, 1, 0)


@wp.kernel
def _find_support(
    cd: ContactData,
    dynamic: wp.array[wp.int32],
    com: wp.array[wp.vec3],
    x_prev: wp.array[wp.vec3],
    q_prev: wp.array[wp.quat],
    body_q_in: wp.array[wp.transform],
    group_start: wp.array[wp.int32],
    group_bodies: wp.array[wp.int32],
    body_group: wp.array[wp.int32],
    queue: wp.array[wp.int32],
    supported: wp.array[wp.int32],
):
    g = wp.tid()  # one thread per world (last: the bodies of no world)
    start = group_start[g]
    end = group_start[g + 1]
    tail = start  # queue[start:end] holds this world's supported bodies in the order found
    for n in range(start, end):
        supported[group_bodies[n]] = 0
    for n in range(start, end):
        b = group_bodies[n]
        if dynamic[b] == 0:
            continue
        for s in range(wp.min(cd.body_count[b], cd.body_list.shape[1])):
            i = cd.body_list[b, s]
            other = _other_body(cd, i, b)
            if cd.lam[i] > 0.0 and supported[b] == 0 and _resting_support(dynamic, com, x_prev, q_prev,
                                                                          body_q_in, other) != 0:
                supported[b] = 1
                queue[tail] = b
                tail += 1
    head = start
    while head < tail:
        b = queue[head]
        head += 1
        for s in range(wp.min(cd.body_count[b], cd.body_list.shape[1])):
            i = cd.body_list[b, s]
            other = _other_body(cd, i, b)
            if other >= 0 and cd.lam[i] > 0.0 and dynamic[other] != 0 and body_group[other] == g:
                if supported[other] == 0:
                    supported[other] = 1
                    queue[tail] = other
                    tail += 1


@wp.kernel
def _deadzone_snap(
    cd: ContactData,
    dynamic: wp.array[wp.int32],
    supported: wp.array[wp.int32],
    com: wp.array[wp.vec3],
    body_q_in: wp.array[wp.transform],
    eps_translation: wp.float32,
    eps_angle: wp.float32,
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
):
    b = wp.tid()  # one thread per body, after the step's velocities
    if dynamic[b] == 0 or supported[b] == 0:
        return
    count = cd.body_count[b]
    if count > cd.body_list.shape[1]:
        return  # some contacts are not in the list: nothing says how the body is held
    held = int(0)
    for s in range(count):
        i = cd.body_list[b, s]
        if cd.lam[i] > 0.0:  # pushing at the final poses (rows in reach but apart do not count)
            other = _other_body(cd, i, b)
            if other < 0:
                return
            if dynamic[other] == 0 or cd.stick[i] == 0:
                return
            held = 1
    if held == 0:
        return
    t0 = body_q_in[b]
    t = body_q[b]
    moved = wp.length(wp.transform_point(t, com[b]) - wp.transform_point(t0, com[b]))
    turn = wp.transform_get_rotation(t) * wp.quat_inverse(wp.transform_get_rotation(t0))
    angle = 2.0 * wp.atan2(wp.length(wp.vec3(turn[0], turn[1], turn[2])), wp.abs(turn[3]))
    if moved < eps_translation and angle < eps_angle:
        body_q[b] = t0
        body_qd[b] = wp.spatial_vector()


class DeadzoneSnap:
    """Per-world body groups and the support flags of the snap (built once from the model)."""

    def __init__(self, model, eps_translation: float, eps_angle: float):
        dev = model.device
        nb = int(model.body_count)
        worlds = int(model.world_count)
        world = model.body_world.numpy() if nb else np.zeros(0, np.int32)
        group = np.where(world >= 0, world, worlds).astype(np.int32)  # bodies of no world: the last group
        order = np.argsort(group, kind="stable").astype(np.int32)
        start = np.zeros(worlds + 2, np.int32)
        start[1:] = np.cumsum(np.bincount(group, minlength=worlds + 1))
        self.groups = worlds + 1
        self.group_start = wp.array(start, dtype=wp.int32, device=dev)
        self.group_bodies = wp.array(order if nb else np.zeros(1, np.int32), dtype=wp.int32, device=dev)
        self.body_group = wp.array(group if nb else np.zeros(1, np.int32), dtype=wp.int32, device=dev)
        self.queue = wp.zeros(max(nb, 1), dtype=wp.int32, device=dev)
        self.supported = wp.zeros(max(nb, 1), dtype=wp.int32, device=dev)
        self.eps_translation = float(eps_translation)
        self.eps_angle = float(eps_angle)
        self.device = dev

    def apply(self, cd, dynamic, bd, body_q_in, body_q, body_qd) -> None:
        """Find the supported bodies, then snap the resting ones back to ``body_q_in`` at rest (in place)."""
        launch(_find_support, dim=self.groups,
               inputs=[cd, dynamic, bd.com, bd.x_prev, bd.q_prev, body_q_in, self.group_start, self.group_bodies,
                       self.body_group, self.queue],
               outputs=[self.supported], device=self.device)
        launch(_deadzone_snap, dim=body_q.shape[0],
               inputs=[cd, dynamic, self.supported, bd.com, body_q_in, self.eps_translation, self.eps_angle],
               outputs=[body_q, body_qd], device=self.device)
