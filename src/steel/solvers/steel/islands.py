"""Islands of SolverSteel's sleeping: which articulations touch, and which rest on a support.

Owns the per-step contact graph over articulations (one node per articulation, the unit that
sleeps and wakes together). It does not decide who sleeps (``sleeping.py``) nor touch the rows.

Graph, rebuilt every step from the step's contacts:

* an edge joins two articulations with a contact between bodies that respond (a DOF on their path
  to the root is not prescribed);
* a contact between a responding body and static geometry (``shape_body == -1``) or a body that
  does not respond (welded to the world, kinematic) *supports* the articulation without joining
  anything: a fixed table separates the boxes on it into separate islands;
* a fixed-base articulation with responding joints supports itself (its root is welded) and joins
  whatever it touches, so a robot arm and the boxes it holds form one island.

Labels: every articulation starts with its own index; each pass lowers both ends of every edge to
the smaller label (``atomic_min``) and then follows labels once (pointer jumping,
``label[a] = label[label[a]]``, valid because a label always names a member of the same island
with an index no larger). Passes repeat until one changes nothing, so each island ends labelled
by its smallest articulation index whatever the contact order, on the CPU and on CUDA alike
(the loop is ``wp.capture_while`` on a device flag, so it captures into a graph).

Invariant a test checks: articulations in one island share one label, the label is the island's
smallest index, and an island's ``island_supported`` flag is set at its label exactly when a member
touches a support or is fixed-base.
"""

from __future__ import annotations

import warp as wp


@wp.kernel
def _start_labels(
    # Tables:
    articulation_fixed_base: wp.array[wp.int32],
    # Data out:
    articulation_label_out: wp.array[wp.int32],
    articulation_supported_out: wp.array[wp.int32],
    island_supported_out: wp.array[wp.int32],
):
    a = wp.tid()  # one thread per articulation
    articulation_label_out[a] = a
    articulation_supported_out[a] = articulation_fixed_base[a]
    island_supported_out[a] = 0


@wp.func
def _responding_articulation(shape: int, shape_body: wp.array[int], body_responds: wp.array[wp.int32],
                             body_articulation: wp.array[wp.int32]):
    """The articulation a contact shape moves, or -1 for static geometry and non-responding bodies."""
    if shape < 0:
        return -1
    b = shape_body[shape]
    if b < 0:
        return -1
    if body_responds[b] == 0:
        return -1
    return body_articulation[b]


@wp.kernel
def _join_contact_pairs(
    # Model:
    shape_body: wp.array[int],
    # Tables:
    body_responds: wp.array[wp.int32],
    body_articulation: wp.array[wp.int32],
    # Contacts:
    contact_count: wp.array[wp.int32],
    contact_shape0: wp.array[wp.int32],
    contact_shape1: wp.array[wp.int32],
    # Data in/out:
    articulation_label: wp.array[wp.int32],
    articulation_supported: wp.array[wp.int32],
    changed: wp.array[wp.int32],
):
    c = wp.tid()  # one thread per contact slot; support is set again on later passes, harmlessly
    if c >= contact_count[0]:
        return
    a0 = _responding_articulation(contact_shape0[c], shape_body, body_responds, body_articulation)
    a1 = _responding_articulation(contact_shape1[c], shape_body, body_responds, body_articulation)
    if a0 >= 0 and a1 < 0:
        articulation_supported[a0] = 1
    if a1 >= 0 and a0 < 0:
        articulation_supported[a1] = 1
    if a0 < 0 or a1 < 0 or a0 == a1:
        return
    low = wp.min(articulation_label[a0], articulation_label[a1])
    if wp.atomic_min(articulation_label, a0, low) > low:
        changed[0] = 1
    if wp.atomic_min(articulation_label, a1, low) > low:
        changed[0] = 1


@wp.kernel
def _jump_labels(articulation_label: wp.array[wp.int32], changed: wp.array[wp.int32]):
    a = wp.tid()  # one thread per articulation
    up = articulation_label[articulation_label[a]]
    if up < articulation_label[a]:
        articulation_label[a] = up
        changed[0] = 1


@wp.kernel
def _gather_support(
    articulation_label: wp.array[wp.int32],
    articulation_supported: wp.array[wp.int32],
    island_supported_out: wp.array[wp.int32],
):
    a = wp.tid()  # one thread per articulation
    if articulation_supported[a] != 0:
        island_supported_out[articulation_label[a]] = 1


class Islands:
    """Per-articulation island labels and support flags of the current step (device arrays).

    Fields, one entry per articulation ``a`` (shape ``(articulation_count,)``):

    * ``articulation_label[a]``: the smallest articulation index of ``a``'s island;
    * ``articulation_supported[a]``: ``a`` touches a support this step or is fixed-base;
    * ``island_supported[r]``: at a label ``r``, whether island ``r`` rests on a support directly
      or through other members (0 at indices that are not labels).
    """

    def __init__(self, articulation_fixed_base: wp.array, device):
        n = max(articulation_fixed_base.shape[0], 1)
        self.articulation_fixed_base = articulation_fixed_base
        self.articulation_label = wp.zeros(n, dtype=wp.int32, device=device)
        self.articulation_supported = wp.zeros(n, dtype=wp.int32, device=device)
        self.island_supported = wp.zeros(n, dtype=wp.int32, device=device)
        self.changed = wp.zeros(1, dtype=wp.int32, device=device)
        self.count = articulation_fixed_base.shape[0]
        self.device = device


def label_islands(solver, islands: Islands, contacts) -> None:
    """Label this step's islands from ``contacts`` (``None``: every articulation its own island)."""
    model, tables, plan = solver.model, solver.tables, solver.core.plan
    n, dev = islands.count, islands.device
    if n == 0:
        return
    wp.launch(_start_labels, dim=n, inputs=[islands.articulation_fixed_base],
              outputs=[islands.articulation_label, islands.articulation_supported, islands.island_supported],
              device=dev)
    if contacts is not None and contacts.rigid_contact_max > 0:
        contact_inputs = [model.shape_body, tables.body_responds, plan.body_articulation,
                          contacts.rigid_contact_count, contacts.rigid_contact_shape0, contacts.rigid_contact_shape1]

        def one_pass():
            islands.changed.zero_()
            wp.launch(_join_contact_pairs, dim=contacts.rigid_contact_max, inputs=contact_inputs,
                      outputs=[islands.articulation_label, islands.articulation_supported, islands.changed],
                      device=dev)
            wp.launch(_jump_labels, dim=n, inputs=[islands.articulation_label, islands.changed], device=dev)

        one_pass()
        wp.capture_while(islands.changed, one_pass)
    wp.launch(_gather_support, dim=n, inputs=[islands.articulation_label, islands.articulation_supported],
              outputs=[islands.island_supported], device=dev)
