"""Patch torsion (``steel:min_torsional_patch_radius``, PhysX's ``minTorsionalPatchRadius``).

A contact region that touches at one point (a sphere, a capsule's end, an edge) has no lever arm
for its friction: however large ``mu``, a body spinning about the contact normal feels no torque.
PhysX gives such a patch an effective radius ``r`` [m]; friction may then transmit a torque about
the normal of up to ``r`` times the friction force the patch can still carry. For uniform pressure
on a disk of radius ``R`` the torque at sliding is ``2 R / 3 mu N``, so ``r = 2 R / 3`` models it.

Row. Every region of an articulated body's contacts (the same regions as friction patches,
``contacts/patches.py``: one shape pair's run of contacts agreeing in normal and plane) whose shapes
carry a positive radius gets one ``ROW_TORSION`` row, hosted by the region's first contact (the
lowest index among its members, ``region_roles`` of ``contacts/patches.py``): the relative angular
velocity about the host's normal, ``(w1 - w0) . n`` [rad/s], target 0, bounded in the sweep by

    |lambda_tau| <= r (mu N - S)        [N·m·s]

with ``r`` the larger radius of the pair, ``N`` [N·s] the region's summed normal impulse and ``S``
[N·s] the summed magnitude of its sliding-friction pairs (point friction or patch anchors): spin
and slip share one Coulomb budget, so a region that slides at the Coulomb limit transmits no
torque, and a region whose anchors already hold a twist by their couple has only the remainder.
Two torsion rows in one sweep region (two shape pairs of one body pair in one plane) share that
budget. ``rows.mu`` of the row holds ``r mu`` [m]. The row is solved after every other row of its
body-pair group in each iteration (``sweep/pgs.py``), so ``N`` and ``S`` are that iteration's. It has
``dir = 0``: torsion is not reported in ``contact_f`` and carries no history (rows are rebuilt every
step), as the reference documents.

A sphere of mass ``m``, radius ``R`` spinning at ``w0`` about the vertical on the ground thus
decelerates at ``r mu m g / I`` (``I = 2 m R^2 / 5``) and stops at ``w0 I / (r mu m g)``
(``tests/solvers/steel/test_torsion.py``).

Scope, as the reference: only contacts of articulated bodies (free single bodies use
``steel:condim`` 4 for spin friction); enabled at construction when any shape has a positive
radius, the radii then read from the model's array every step; the shape types below; no
``contact_warmstart`` and ``friction_mode="fixed_normal"`` (``ValueError`` otherwise), and with
adhesion ``NotImplementedError``, as the seed says. PhysX also grows the radius with the
penetration depth (``physxCollision:torsionalPatchRadius``); this solver does not.
Differs from the reference: the torsion row is reserved with its host contact's rows (all or
nothing) rather than after the world's other rows.

Phases, as the other row modules: the radius of a contact (:func:`torsion_radius`), read with its
region role by ``contacts.py``, which writes the row;
its bound in the sweep (:func:`torsion_bound`); validation at construction
(:func:`check_torsion_options`, :func:`check_torsion_shapes`).
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from ..data import ROW_FRICTION, ROW_PATCH, ROW_TORSION, RowBuffers
from ..rows.common import reserved_end

# The shape types a radius may be set on (the reference's list); others raise ValueError.
SUPPORTED_TYPES = (
    newton.GeoType.SPHERE,
    newton.GeoType.BOX,
    newton.GeoType.CAPSULE,
    newton.GeoType.CYLINDER,
    newton.GeoType.CONE,
    newton.GeoType.ELLIPSOID,
    newton.GeoType.PLANE,
    newton.GeoType.CONVEX_MESH,
)


@wp.func
def torsion_radius(s0: int, s1: int, shape_radius: wp.array[float]):
    """Effective spin radius [m] of a contact between shapes ``s0`` and ``s1``: the larger of the two."""
    return wp.max(shape_radius[s0], shape_radius[s1])


@wp.func(inline=True)
def torsion_bound(rows: RowBuffers, f: int, first: int, last: int, base: int):
    """Bound [N·m·s] of torsion row ``f``: ``r (mu N - S)`` less the other torsion rows of its region.

    ``first``..``last`` is the body-pair group of ``f``'s contact in ``rows.order`` (from ``base``);
    the region's rows are found there by its name, ``rows.region``, as a patch's load is
    (``contacts/patches.py``). An articulated contact's rows are its normal row, an optional sliding pair, and
    an optional torsion row.
    """
    load = float(0.0)
    sliding = float(0.0)
    others = float(0.0)
    # The host's normal row is the unit row before f (f - 1 or f - 3).
    host = f - 1
    if rows.kind[host] == ROW_FRICTION or rows.kind[host] == ROW_PATCH:
        host = f - 3
    region = rows.region[host]
    for g in range(first, last + 1):
        u = rows.order[base + g]
        if rows.region[u] == region:
            load += rows.impulse[u]
            end = reserved_end(rows, u)
            k = u + 1
            if k + 1 < end and (rows.kind[k] == ROW_FRICTION or rows.kind[k] == ROW_PATCH):
                sliding += wp.sqrt(rows.impulse[k] * rows.impulse[k] + rows.impulse[k + 1] * rows.impulse[k + 1])
                k += 2
            if k < end and rows.kind[k] == ROW_TORSION and k != f:
                others += wp.abs(rows.impulse[k])
    mu = rows.mu[host]
    if mu <= 0.0:
        return float(0.0)
    return wp.max(rows.mu[f] * (load - sliding / mu) - others, 0.0)


def check_torsion_options(options) -> None:
    """Raise for options the reference excludes with contact torsion (called when a radius is positive)."""
    if options.contact_warmstart:
        raise ValueError("contact_warmstart=True is incompatible with contact torsion "
                         "(a positive steel:min_torsional_patch_radius)")
    if options.friction_mode != "fixed_normal":
        raise ValueError(f"friction_mode={options.friction_mode!r} is incompatible with contact torsion "
                         "(a positive steel:min_torsional_patch_radius); use 'fixed_normal'")
    if options.row_schedule != "interleaved":
        raise NotImplementedError(f"row_schedule={options.row_schedule!r} with contact torsion (a positive "
                                  "steel:min_torsional_patch_radius) is not implemented, as the reference specifies; "
                                  "use 'interleaved'")


def check_torsion_shapes(model: newton.Model, radius: np.ndarray) -> None:
    """``ValueError`` naming the first shape with a positive radius whose type the torsion rows do not support."""
    types = model.shape_type.numpy()
    supported = np.isin(types, [int(t) for t in SUPPORTED_TYPES])
    bad = np.nonzero((radius > 0.0) & ~supported)[0]
    if len(bad):
        s = int(bad[0])
        label = model.shape_label[s] if s < len(model.shape_label) else str(s)
        raise ValueError(f"steel:min_torsional_patch_radius of shape {s} ('{label}') is set on a "
                         f"{newton.GeoType(int(types[s])).name} shape; contact torsion supports "
                         f"{', '.join(t.name for t in SUPPORTED_TYPES)}")
