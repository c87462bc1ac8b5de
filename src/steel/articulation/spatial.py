"""Spatial algebra helpers (``@wp.func``) in the articulation core's convention.

Convention, used by every kernel of :mod:`steel.articulation`:

* Spatial vectors are **linear first**, like Newton's ``body_qd`` and ``body_f``:
  a motion vector is ``(v, w)`` and a force vector is ``(f, tau)``.
* They are expressed with **world orientation about a reference point** ``r`` that is fixed in
  space for the duration of one evaluation (Featherstone's "spatial vectors at a fixed point",
  *Rigid Body Dynamics Algorithms*, 2008, ch. 2). ``v`` is then the velocity of the body-fixed
  point that momentarily coincides with ``r`` [m/s], ``tau`` the moment about ``r`` [N·m].
  Each articulation uses its own reference point (the COM of its first body at the current
  configuration, see :mod:`steel.articulation.kinematics`) rather than the world origin, so the
  ``m |c|^2`` terms of the spatial inertia stay small in float32 when worlds are laid out far
  from the origin.
* Positions handed to these helpers are already relative to ``r``.

Warp's built-in ``spatial_cross`` family assumes angular-first vectors, so it is not used here.
"""

import warp as wp


@wp.func
def motion_cross(m1: wp.spatial_vector, m2: wp.spatial_vector):
    """Spatial motion cross product ``m1 x m2`` (linear first)."""
    v1 = wp.spatial_top(m1)
    w1 = wp.spatial_bottom(m1)
    v2 = wp.spatial_top(m2)
    w2 = wp.spatial_bottom(m2)
    return wp.spatial_vector(wp.cross(w1, v2) + wp.cross(v1, w2), wp.cross(w1, w2))


@wp.func
def force_cross(m: wp.spatial_vector, f: wp.spatial_vector):
    """Spatial force cross product ``m x* f`` (linear first)."""
    v = wp.spatial_top(m)
    w = wp.spatial_bottom(m)
    fl = wp.spatial_top(f)
    fa = wp.spatial_bottom(f)
    return wp.spatial_vector(wp.cross(w, fl), wp.cross(w, fa) + wp.cross(v, fl))


@wp.func
def motion_dot_force(m: wp.spatial_vector, f: wp.spatial_vector):
    """Power pairing ``m . f`` of a motion and a force vector [W per unit]."""
    return wp.dot(wp.spatial_top(m), wp.spatial_top(f)) + wp.dot(wp.spatial_bottom(m), wp.spatial_bottom(f))


@wp.func
def skew(a: wp.vec3):
    """Cross-product matrix ``[a]x`` with ``[a]x b = a x b``."""
    return wp.mat33(0.0, -a[2], a[1], a[2], 0.0, -a[0], -a[1], a[0], 0.0)


@wp.func
def spatial_inertia(mass: float, com: wp.vec3, inertia_com: wp.mat33):
    """Spatial inertia of a rigid body about the reference point.

    Args:
        mass: body mass [kg].
        com: centre of mass relative to the reference point, world frame [m].
        inertia_com: rotational inertia about the COM, world frame [kg·m²].

    Returns the 6x6 matrix ``[[m 1, -m [c]x], [m [c]x, I_c - m [c]x [c]x]]`` mapping a motion
    vector ``(v, w)`` to the momentum ``(p, L)``: ``p = m (v + w x c)``, ``L = c x p + I_c w``.
    """
    cx = skew(com)
    mcx = mass * cx
    lower = inertia_com - mcx * cx
    out = wp.spatial_matrix()
    for i in range(3):
        out[i, i] = mass
        for j in range(3):
            out[i, 3 + j] = -mcx[i, j]
            out[3 + i, j] = mcx[i, j]
            out[3 + i, 3 + j] = lower[i, j]
    return out


@wp.func
def point_velocity(m: wp.spatial_vector, p: wp.vec3):
    """Velocity of the body point at ``p`` (relative to the reference point) [m/s]."""
    return wp.spatial_top(m) + wp.cross(wp.spatial_bottom(m), p)


@wp.func
def twist_at_point(m: wp.spatial_vector, p: wp.vec3):
    """Re-express a reference-point twist as Newton's point twist ``(v_p, w)`` at ``p``."""
    return wp.spatial_vector(point_velocity(m, p), wp.spatial_bottom(m))


@wp.func
def twist_from_point(v_p: wp.vec3, w: wp.vec3, p: wp.vec3):
    """Inverse of :func:`twist_at_point`: a point twist ``(v_p, w)`` at ``p`` as a reference-point twist."""
    return wp.spatial_vector(v_p - wp.cross(w, p), w)


@wp.func
def wrench_from_point(f: wp.vec3, tau: wp.vec3, p: wp.vec3):
    """A force ``f`` [N] and moment ``tau`` [N·m] about point ``p`` as a reference-point force vector."""
    return wp.spatial_vector(f, tau + wp.cross(p, f))


@wp.func
def wrench_at_point(f: wp.spatial_vector, p: wp.vec3):
    """Re-express a reference-point force vector as ``(f, tau_p)`` about point ``p``."""
    fl = wp.spatial_top(f)
    return wp.spatial_vector(fl, wp.spatial_bottom(f) - wp.cross(p, fl))


@wp.func
def revolute_column(axis: wp.vec3, pivot: wp.vec3):
    """Unit twist of a rotation about ``axis`` (world, unit) through ``pivot`` (relative to r)."""
    return wp.spatial_vector(wp.cross(pivot, axis), axis)


@wp.func
def prismatic_column(axis: wp.vec3):
    """Unit twist of a translation along ``axis`` (world, unit)."""
    return wp.spatial_vector(axis, wp.vec3(0.0))
