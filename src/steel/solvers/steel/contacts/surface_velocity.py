"""Surface velocity of moving meshes (conveyor belts): friction drives toward the surface's speed.

A mesh built with ``newton.Mesh(..., enable_surface_velocity=True)`` whose finalized Warp mesh
carries per-vertex ``velocities`` [m/s] has a surface that moves while its body does not (a belt,
a tread). The collision pipeline then allocates ``Contacts.rigid_contact_surface_velocity``, the
world velocity of shape 1's surface relative to shape 0's at each contact [m/s], and fills it
every collision pass; without an opted-in mesh the array is ``None`` and nothing here runs.

Law. The surfaces' material velocities are the bodies' point velocities plus their surface
velocities, so a contact sticks when ``(v1 - v0)_t + s_t = 0`` (``s_t`` the tangential part of
``s``): each friction row ``t . (v1 - v0) = target`` takes ``-t . s`` into its target (and into its
velocity-sweep target). Only the tangential part acts: the normal row and its law are unchanged,
as Newton documents (normal motion must move the geometry). A box of mass ``m`` set on a belt
moving at ``v`` is accelerated by ``mu m g`` and reaches ``v`` at ``t = v / (mu g)``, then rides
with it (``tests/solvers/steel/test_surface_velocity.py``).

Anchors. Friction anchors (``contacts/history.py``, ``contacts/patches.py``) read slip as the separation of
two material points. A contact that rides the belt separates them by ``-s_t dt`` each step, which
is not slip; the anchor placed this step, and the one a sliding contact is released to, is
therefore shifted ahead by ``s_t dt`` with this step's ``dt``, the displacement the surface makes
over the same step, so the next step reads zero slip for a riding contact whatever the step sizes.
(Released to its unshifted point, a contact sliding on a belt read ``v dt`` of slip each step and
the patch anchors' correction ``-beta v`` held the box at ``V / (1 + beta)``: 0.833 m/s.)

Phases, as the other row modules: the tangential surface velocity of a contact
(:func:`surface_tangent_velocity`, read by ``contacts.py`` when it writes the friction targets and
anchors); ``ContactInput`` (``contacts/data.py``) carries the buffer's array or a placeholder.
"""

from __future__ import annotations

import warp as wp


@wp.func
def surface_tangent_velocity(c: int, enabled: int, contact_surface_velocity: wp.array[wp.vec3], n: wp.vec3):
    """Tangential part of contact ``c``'s relative surface velocity [m/s, world]; zero when disabled."""
    if enabled == 0:
        return wp.vec3(0.0)
    s = contact_surface_velocity[c]
    return s - wp.dot(s, n) * n
