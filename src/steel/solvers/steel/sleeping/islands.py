"""Islands of SolverSteel's sleeping: which articulations touch, and which rest on a support.

Owns the per-step contact graph over articulations (one node per articulation, the unit that
sleeps and wakes together). It does not decide who sleeps (``sleeping/stages.py``) nor touch the rows.

Graph, rebuilt every step from the step's contacts:

* an edge joins two articulations with a contact between bodies that respond (a DOF on their path
  to the root is not prescribed);
* a contact between a responding body and static geometry (``shape_body == -1``) or a body that
  does not respond (welded to the world, kinematic) *supports* the articulation without joining
  anything: a fixed table separates the boxes on it into separate islands;
* a fixed-base articulation with responding joints supports itself (its root is welded) and joins
  whatever it touches, so a robot arm and the boxes it holds form one island;
* a support that moves (a kinematic body whose articulation's ``joint_qd`` is not zero) or a contact
  with a moving surface (a nonzero ``Contacts.rigid_contact_surface_velocity``) also sets
  ``articulation_wake`` of what touches it: sleeping's wake reason "contact with a moving body".
* last step's islands are edges too: each articulation is joined to the member its last label
  named (``articulation_previous``), so articulations that parted this step (a box pulled away
  from the one it leaned on) still wake, and share support, together for one more step. Without
  contacts (``contacts=None``) no pass runs and every articulation is its own island.

Labels: every articulation starts with its own index and its own support (fixed base); the
caller does this in its first kernel of the step with :func:`start_label`. Each pass then runs one
kernel over the contacts and the articulations together: a contact lowers both ends of its edge to
the smaller label (``atomic_min``) and raises both ends' support flag to the larger; an
articulation follows its label once (pointer jumping, ``label[a] = label[label[a]]``, valid
because a label always names a member of the same island with an index no larger) and shares its
support flag with the articulation its label names. Passes repeat until one changes nothing. Such
a pass read a state that no thread changed, so every edge then joins equal labels and equal
support, every label is its own label, and each island ends labelled by its smallest articulation
index, every member carrying the island's support flag, whatever the contact order or thread
interleaving, on the CPU and on CUDA alike (the loop is ``wp.capture_while`` on a device flag, so
it captures into a graph).

Invariant a test checks: articulations in one island share one label, the label is the island's
smallest index, and ``articulation_supported`` is set on every member of an island exactly when a
member touches a support or is fixed-base.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.func
def start_label(
    a: int,
    # Tables:
    articulation_fixed_base: wp.array[wp.int32],
    # Data out:
    articulation_label_out: wp.array[wp.int32],
    articulation_supported_out: wp.array[wp.int32],
    articulation_previous_out: wp.array[wp.int32],
):
    """Articulation ``a`` before the first pass: its own label, supported when fixed-base; last
    step's label is kept as ``articulation_previous``."""
    articulation_previous_out[a] = articulation_label_out[a]
    articulation_label_out[a] = a
    articulation_supported_out[a] = articulation_fixed_base[a]


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


@wp.func
def _moving_support(shape: int, shape_body: wp.array[int], body_articulation: wp.array[wp.int32],
                    articulation_start: wp.array[int], joint_qd_start: wp.array[int], joint_qd: wp.array[float]):
    """Wake reason "contact with a moving body" for a support: the shape's non-responding body
    belongs to an articulation with a nonzero (or NaN) ``joint_qd``, a kinematic body that moves."""
    if shape < 0:
        return 0
    b = shape_body[shape]
    if b < 0:
        return 0
    a = body_articulation[b]
    if a < 0:
        return 0  # outside every articulation: passes its pose through, never moves
    for j in range(articulation_start[a], articulation_start[a + 1]):
        for d in range(joint_qd_start[j], joint_qd_start[j + 1]):
            if not (joint_qd[d] == 0.0):
                return 1
    return 0


@wp.func
def _raise_support(a: int, articulation_supported: wp.array[wp.int32], changed: wp.array[wp.int32]):
    if wp.atomic_max(articulation_supported, a, 1) == 0:
        changed[0] = 1


@wp.kernel
def _propagate(
    articulation_count: int,
    # Model:
    shape_body: wp.array[int],
    # Tables:
    body_responds: wp.array[wp.int32],
    body_articulation: wp.array[wp.int32],
    # Contacts:
    contact_count: wp.array[wp.int32],
    contact_shape0: wp.array[wp.int32],
    contact_shape1: wp.array[wp.int32],
    # Moving supports:
    articulation_start: wp.array[int],
    joint_qd_start: wp.array[int],
    joint_qd: wp.array[float],
    articulation_previous: wp.array[wp.int32],
    surface_velocity_enabled: int,
    contact_surface_velocity: wp.array[wp.vec3],
    # Data in/out:
    articulation_label: wp.array[wp.int32],
    articulation_supported: wp.array[wp.int32],
    changed: wp.array[wp.int32],
    articulation_wake: wp.array[wp.int32],
):
    i = wp.tid()  # one thread per contact slot and per articulation (the larger count of the two)
    if i < contact_count[0]:
        a0 = _responding_articulation(contact_shape0[i], shape_body, body_responds, body_articulation)
        a1 = _responding_articulation(contact_shape1[i], shape_body, body_responds, body_articulation)
        if a0 >= 0 and a1 < 0:
            _raise_support(a0, articulation_supported, changed)
            if _moving_support(contact_shape1[i], shape_body, body_articulation, articulation_start, joint_qd_start,
                               joint_qd) != 0:
                articulation_wake[a0] = 1
        if a1 >= 0 and a0 < 0:
            _raise_support(a1, articulation_supported, changed)
            if _moving_support(contact_shape0[i], shape_body, body_articulation, articulation_start, joint_qd_start,
                               joint_qd) != 0:
                articulation_wake[a1] = 1
        if surface_velocity_enabled != 0 and wp.length_sq(contact_surface_velocity[i]) > 0.0:
            # A moving surface (a conveyor mesh) moves what it touches: wake reason "moving body".
            if a0 >= 0:
                articulation_wake[a0] = 1
            if a1 >= 0:
                articulation_wake[a1] = 1
        if a0 >= 0 and a1 >= 0 and a0 != a1:
            low = wp.min(articulation_label[a0], articulation_label[a1])
            if wp.atomic_min(articulation_label, a0, low) > low:
                changed[0] = 1
            if wp.atomic_min(articulation_label, a1, low) > low:
                changed[0] = 1
            if articulation_supported[a0] != 0 or articulation_supported[a1] != 0:
                _raise_support(a0, articulation_supported, changed)
                _raise_support(a1, articulation_supported, changed)
    if i < articulation_count:
        # Last step's island is an edge too (to the member its label named), so members that
        # parted this step still wake together: a box pulled away wakes the one it leaned on.
        p = articulation_previous[i]
        if p != i:
            low = wp.min(articulation_label[i], articulation_label[p])
            if wp.atomic_min(articulation_label, i, low) > low:
                changed[0] = 1
            if wp.atomic_min(articulation_label, p, low) > low:
                changed[0] = 1
            if articulation_supported[i] != 0 or articulation_supported[p] != 0:
                _raise_support(i, articulation_supported, changed)
                _raise_support(p, articulation_supported, changed)
        r = articulation_label[i]
        up = articulation_label[r]
        if up < r:
            wp.atomic_min(articulation_label, i, up)  # only ever lowers, as the contact threads do
            changed[0] = 1
        if articulation_supported[i] != 0:
            _raise_support(r, articulation_supported, changed)
        elif articulation_supported[r] != 0:
            _raise_support(i, articulation_supported, changed)


class Islands:
    """Per-articulation island labels and support flags of the current step (device arrays).

    Fields, one entry per articulation ``a`` (shape ``(articulation_count,)``), after
    :func:`label_islands`:

    * ``articulation_label[a]``: the smallest articulation index of ``a``'s island;
    * ``articulation_supported[a]``: whether ``a``'s island rests on a support (a member touches
      one this step or is fixed-base); equal across the members of an island.
    """

    def __init__(self, articulation_fixed_base: wp.array, device):
        n = max(articulation_fixed_base.shape[0], 1)
        self.articulation_fixed_base = articulation_fixed_base
        # Every articulation its own island before the first step (the first "previous" labels).
        self.articulation_label = wp.array(np.arange(n, dtype=np.int32), dtype=wp.int32, device=device)
        self.articulation_previous = wp.array(np.arange(n, dtype=np.int32), dtype=wp.int32, device=device)
        self.articulation_supported = wp.zeros(n, dtype=wp.int32, device=device)
        self.changed = wp.zeros(1, dtype=wp.int32, device=device)
        self.count = articulation_fixed_base.shape[0]
        self.device = device


def label_islands(sm, sd, islands: Islands, contacts, joint_qd, articulation_wake) -> None:
    """Label this step's islands from ``contacts`` (``None``: every articulation its own island),
    and set ``articulation_wake`` of every articulation that touches a moving kinematic body (its
    articulation's input ``joint_qd`` is not zero): a support that moves wakes what rests on it.

    The labels must have been started (:func:`start_label` for every articulation) earlier in the step.
    """
    model, tables, plan = sm.model, sm.tables, sm.core.plan
    n, dev = islands.count, islands.device
    if n == 0 or contacts is None or contacts.rigid_contact_max == 0:
        return
    # A moving surface (rigid_contact_surface_velocity) counts as a moving support; the contact struct names
    # the buffer's array or a placeholder (contacts/data.py).
    ci = sd.contact_input.update(contacts, sm.options.contact_compliance, sm.options.contact_warmstart)
    inputs = [n, model.shape_body, tables.body_responds, plan.body_articulation, contacts.rigid_contact_count,
              contacts.rigid_contact_shape0, contacts.rigid_contact_shape1, model.articulation_start,
              model.joint_qd_start, joint_qd, islands.articulation_previous, ci.surface_velocity_enabled,
              ci.surface_velocity]
    outputs = [islands.articulation_label, islands.articulation_supported, islands.changed, articulation_wake]
    dim = max(contacts.rigid_contact_max, n)

    def one_pass():
        islands.changed.zero_()
        launch(_propagate, dim=dim, inputs=inputs, outputs=outputs, device=dev)

    one_pass()
    wp.capture_while(islands.changed, one_pass)
