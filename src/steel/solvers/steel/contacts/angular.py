"""Angular contact rows of ``steel:condim`` (MuJoCo's 3/4/6 convention): spin and rolling.

A free-body contact whose shapes enable them takes, after its normal row and sliding pair:

* condim 4 and 6, a spin row: the relative angular velocity about the normal,
  ``(w1 - w0) . n`` [rad/s], bounded by ``|lambda_s| <= mu_t lambda_n`` with ``mu_t`` [m] the
  larger ``shape_material_mu_torsional`` of the shapes with condim >= 4;
* condim 6, a rolling pair: the relative angular velocity about the tangents ``t1``, ``t2``,
  solved on the disk ``|lambda_r| <= mu_r lambda_n`` with ``mu_r`` [m] the larger
  ``shape_material_mu_rolling`` of the shapes with condim 6.

Both are MuJoCo's torsional and rolling friction: a torque bounded by a length times the normal
load, with no radius factor. A ball of radius ``R`` and inertia ``I`` rolling on a plane under
``mu_r`` therefore decelerates at ``mu_r m g R / (I + m R^2)`` (``5 mu_r g / (7 R)`` for a solid
sphere) until it stops, when the pair holds it. The bound is isotropic (a disk) rather than
MuJoCo's elliptic cone over all five friction directions, so a contact that both slides and rolls
is bounded per pair, not jointly.

Phases, as the other row modules: coefficients (:func:`angular_coefficients`, per contact when the
contact rows are built), row count (:func:`angular_row_count`) and row layout (:func:`angular_row`);
the sweep solves them as tail rows of the normal row (``sweep/pgs.py``) and the observables skip them
(``dir = 0``: a torque adds no force to ``contact_f``).
"""

from __future__ import annotations

import warp as wp

from ..data import ROW_ROLLING, ROW_SPIN


@wp.func
def angular_coefficients(
    s0: int,
    s1: int,
    shape_condim: wp.array[wp.int32],
    shape_mu_torsional: wp.array[float],
    shape_mu_rolling: wp.array[float],
):
    """``(mu_t, mu_r)`` [m] of the contact between shapes ``s0`` and ``s1``: the larger enabled coefficient each."""
    mu_t = float(0.0)
    mu_r = float(0.0)
    for side in range(2):
        s = s0
        if side == 1:
            s = s1
        if shape_condim[s] >= 4:
            mu_t = wp.max(mu_t, shape_mu_torsional[s])
        if shape_condim[s] >= 6:
            mu_r = wp.max(mu_r, shape_mu_rolling[s])
    return wp.vec2(mu_t, mu_r)


@wp.func
def angular_row_count(mu: wp.vec2):
    """Rows the coefficients ``mu = (mu_t, mu_r)`` add: 1 for spin, 2 for rolling."""
    count = int(0)
    if mu[0] > 0.0:
        count += 1
    if mu[1] > 0.0:
        count += 2
    return count


@wp.func
def angular_row(j: int, mu: wp.vec2, n: wp.vec3, t1: wp.vec3, t2: wp.vec3):
    """Kind, axis and coefficient of the contact's ``j``-th angular row (spin first, then the rolling pair)."""
    k = j
    if mu[0] > 0.0:
        if k == 0:
            return ROW_SPIN, n, mu[0]
        k -= 1
    if k == 0:
        return ROW_ROLLING, t1, mu[1]
    return ROW_ROLLING, t2, mu[1]
