"""Shared contact anchors (``contact_shared_anchor``, ``contact_friction_shared_anchor``).

By default each side of a contact row acts at its own body's witness point: the effective surface
points ``a0 = X0 (point0 + offset0)`` and ``a1 = X1 (point1 + offset1)``, which differ along the
normal by the contact's gap or penetration. A friction force pair applied at two points separated
along the normal is a couple: on a body sunk ``d`` [m] into the ground the friction acts at its own
surface point, a lever arm ``d`` longer than the ground's point. PhysX applies a contact at one
point instead; these options do the same with the midpoint ``m = (a0 + a1) / 2`` of the two:

* ``contact_shared_anchor``: every contact row (normal, point friction) acts at ``m`` on both sides;
* ``contact_friction_shared_anchor``: only the point-friction rows do.

``phi`` is still measured between the witness points, so the normal law is unchanged. Friction
patch anchors (``ROW_PATCH``) keep their own points, as they carry their displacement between
steps; with patches the first option therefore moves only the normal rows, and the second has no
effect, so the constructor warns (``NewtonWarning``) when either is combined with patches. Angular
rows (spin, rolling, torsion) have no point.

Example with an analytic answer (``tests/solvers/steel/test_shared_anchor.py``): a sphere of radius
``R`` held ``d`` deep in the ground (no push-out) and launched sliding at ``v0`` without spin rolls
once friction has made the friction point's velocity zero; with the point at depth ``h`` below the
centre the final speed is ``v0 k / (1 + k)``, ``k = m h^2 / I``. Own witness point: ``h = R``
(``5/7 v0``); shared anchor: ``h = R - d / 2``.

Phases, as the other row modules: the point of a row's side (:func:`row_points`, read by
``contacts.py`` when it writes the rows) and the construction check (:func:`warn_shared_anchor_patches`).
"""

from __future__ import annotations

import warnings

import warp as wp

import newton

from ..data import ROW_COUPLED, ROW_FRICTION


@wp.func
def row_points(k: int, kind: int, a0: wp.vec3, a1: wp.vec3, shared: int, friction_shared: int):
    """The points [m, world] at which row ``k`` of a contact (0: normal) acts on bodies 0 and 1."""
    mid = 0.5 * (a0 + a1)
    if k == 0 and shared != 0:
        return mid, mid
    if (kind == ROW_FRICTION or kind == ROW_COUPLED) and (shared != 0 or friction_shared != 0):
        return mid, mid
    return a0, a1


def warn_shared_anchor_patches(options) -> None:
    """``NewtonWarning`` when a shared-anchor option meets friction patches (resolved ``friction_anchor_beta > 0``)."""
    chosen = [name for name in ("contact_shared_anchor", "contact_friction_shared_anchor") if getattr(options, name)]
    if chosen and options.friction_anchor_beta > 0.0:
        moved = "moves only the normal rows" if options.contact_shared_anchor else "has no effect"
        warnings.warn(
            f"SolverSteel: {'=True, '.join(chosen)}=True with friction patches (friction_anchor_beta="
            f"{options.friction_anchor_beta!r}): patch anchors keep their own points, so this {moved}; "
            "friction_anchor_beta=0 applies it to point friction",
            newton.NewtonWarning, stacklevel=4,
        )
