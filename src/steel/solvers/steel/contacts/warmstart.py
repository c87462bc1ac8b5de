"""Contact warm start by contact identity (``contact_warmstart``).

With ``contact_warmstart=True`` each contact starts its normal and friction rows from the impulses
its predecessor carried last step, found through the collision pipeline's contact matching
(``CollisionPipeline(contact_matching="latest" or "sticky")``): ``rigid_contact_match_index[c]`` is
the slot the contact held in the previous collision pass into the same ``Contacts`` buffer.
Without matching that array is ``None`` and :meth:`SolverSteel.step` raises ``ValueError``.

Which previous step a contact set continues, decided per step on the device from the pass's
``rigid_contact_match_generation`` ``g`` (the buffer's pass number when the pass matched against
its previous pass, else -1) and the ``g_s`` recorded with the solved set:

* another buffer than the one last solved: cold;
* ``g = g_s >= 0``: no collision pass since the solve (substeps reusing one contact set), each
  contact continues its own slot;
* ``g >= 0``, ``g != g_s``: a pass matched against its predecessor, which must be the solved set:
  ``g = g_s + 1`` (a skipped pass in between starts cold); when the solved set was itself an
  unmatched pass (``g_s = -1``) its number is unknown and the pass is taken as its successor;
* ``g = -1``: an unmatched pass, cold (also a reuse of an unmatched set, which cannot be told apart).

Carried: the force ``f = lambda / dt_prev`` recorded per slot (``contacts/history.py``), so
``f dt`` scales the impulse by ``dt / dt_prev``; times ``contact_warmstart_decay``. The tangential
force is projected on the current tangents and clamped to the current friction disk ``mu lambda_n``.
Impacts record zero (warm start does not repeat restitution), and angular rows start cold. The
matched contact replaces the shape-pair history's seeds (anchors are unaffected); an unmatched one
starts cold.
"""

from __future__ import annotations

import warp as wp


@wp.func
def predecessor(
    c: int,
    same_buffer: int,
    generation: wp.array[wp.int32],
    solved_generation: wp.array[wp.int32],
    solved_count: wp.array[wp.int32],
    match_index: wp.array[wp.int32],
):
    """Slot of contact ``c``'s predecessor in the solved set, or -1 (cold); see the module docstring."""
    if same_buffer == 0:
        return -1
    g = generation[0]
    g_s = solved_generation[0]
    prev = int(-1)
    if g >= 0 and g == g_s:
        prev = c
    elif g >= 0 and (g_s < 0 or g == g_s + 1):
        prev = match_index[c]
    if prev >= solved_count[0]:
        prev = -1
    return prev


@wp.func
def carried_impulses(
    prev: int,
    dt: float,
    decay: float,
    mu: float,
    t1: wp.vec3,
    t2: wp.vec3,
    force_n: wp.array[float],
    force_t: wp.array[wp.vec3],
):
    """``(lambda_n, lambda_t1, lambda_t2)`` [N·s] carried from slot ``prev``: scaled, rotated and clamped."""
    lam_n = wp.max(force_n[prev] * dt * decay, 0.0)
    ft = force_t[prev] * (dt * decay)
    l1 = wp.dot(ft, t1)
    l2 = wp.dot(ft, t2)
    bound = mu * lam_n
    mag = wp.sqrt(l1 * l1 + l2 * l2)
    if mag > bound:
        scale = float(0.0)
        if mag > 0.0:
            scale = bound / mag
        l1 *= scale
        l2 *= scale
    return wp.vec3(lam_n, l1, l2)


def check_contacts(options, contacts) -> None:
    """``ValueError`` when warm start is on and ``contacts`` carries no contact matching."""
    if contacts is None or not options.contact_warmstart:
        return
    if getattr(contacts, "rigid_contact_match_index", None) is None:
        raise ValueError(
            "SolverSteel(contact_warmstart=True) matches contacts by identity and needs "
            "Contacts.rigid_contact_match_index: build the CollisionPipeline with "
            "contact_matching='latest' or 'sticky'"
        )
