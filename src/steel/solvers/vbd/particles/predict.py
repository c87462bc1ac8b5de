"""Inertial prediction and the first iterate of a particle step (one launch).

Implicit Euler as an optimization (Chen et al., "Vertex Block Descent", ACM TOG 43(4) 2024, eq. 1):
the step minimizes ``G(x) = 1/(2 dt²) |x - y|²_M + E(x)`` over positions, with the inertial target

    y = x_t + dt v_t + dt² (g + f_ext / m)

(``f_ext`` = ``state_in.particle_f`` [N]). Block descent starts from an initial guess; the paper's
adaptive initialization (sec. 3.6) keeps only the part of the last step's acceleration that points
along gravity, clamped to ``[0, |g|]``:

    a_t = (v_t - v_{t-1}) / dt,   â = a_t · ĝ,   ã = ĝ clamp(â, 0, |g|),   x⁰ = x_t + dt v_t + dt² ã

so a resting object starts where it rests (ã = 0) and a falling one where free fall takes it
(ã = g). A particle without a previous velocity (first step, or after ``reset``) starts at ``y``.

Newton's SolverVBD starts every step at ``y`` instead (measured: with that start, and otherwise the
same step, a pinned 5x5 cloth follows its trajectory to 5e-7 m over 20 steps of 10 iterations,
against 0.08 m with the adaptive start). ``work.adaptive_init = False`` selects that start (the
side-by-side test uses it). Both starts reach the same minimizer; they differ in where a fixed
number of iterations ends. Measured on that swinging cloth: from the same state, the adaptive start
leaves a smaller gradient of ``G`` after 1-8 iterations (largest entry about 1.5 N against 7 N
after one), and after 16 a smaller one early in the fall but a larger one later in the swing (0.7 N
against 0.4 N); over 20 steps of 10 iterations the inertial start stays closer to the
converged trajectory (7.7e-3 m against 7.8e-2 m). The adaptive start keeps only the part of the
last acceleration along gravity, clamped to [0, |g|], while a swinging cloth also accelerates across
gravity (a start with the whole last acceleration ends 0.03 m from Newton's 10-iteration trajectory,
without the clamp 0.08 m, as with it). The adaptive start is kept as the default because
the paper (and the specification) ask for it, and because it starts a resting or supported body where
it rests instead of ``dt² g`` into its support: a 9x9 cloth lying on the ground sits at its static
contact depth (1.1e-4 m) with 2 iterations from the adaptive start, 1.5e-3 m deeper from ``y``
(1e-4 m deeper with 5 iterations, the same with 10).

Inactive particles (``ParticleFlags.ACTIVE`` clear) and particles without mass keep their position;
``finish`` then gives them zero velocity. This stage also stores ``v_t`` for the next step's
acceleration estimate and ``x_t`` for the velocity update and the damping and friction rates.
"""

from __future__ import annotations

import warp as wp

import newton

ACTIVE = wp.constant(int(newton.ParticleFlags.ACTIVE))


@wp.func
def particle_is_free(flags: int, inv_mass: float) -> bool:
    """True for a particle the solver moves: ACTIVE and with mass."""
    return (flags & ACTIVE) != 0 and inv_mass > 0.0


@wp.kernel
def _predict_particles(
    # Model:
    particle_flags: wp.array[wp.int32],
    particle_inv_mass: wp.array[float],
    particle_world: wp.array[wp.int32],
    gravity: wp.array[wp.vec3],
    dt: float,
    adaptive: int,
    # Data in:
    particle_q_in: wp.array[wp.vec3],
    particle_qd_in: wp.array[wp.vec3],
    particle_f_in: wp.array[wp.vec3],
    # Solver history (read, then overwritten with this step's values):
    particle_qd_last: wp.array[wp.vec3],
    particle_has_last: wp.array[wp.int32],
    # Data out:
    particle_q_prev_out: wp.array[wp.vec3],
    particle_inertia_out: wp.array[wp.vec3],
    particle_q_out: wp.array[wp.vec3],
):
    i = wp.tid()  # one thread per particle
    x = particle_q_in[i]
    v = particle_qd_in[i]
    particle_q_prev_out[i] = x
    v_last = particle_qd_last[i]
    has_last = particle_has_last[i]
    particle_qd_last[i] = v
    particle_has_last[i] = 1
    inv_m = particle_inv_mass[i]
    if not particle_is_free(particle_flags[i], inv_m):
        particle_inertia_out[i] = x
        particle_q_out[i] = x
        return
    g = gravity[wp.max(particle_world[i], 0)]
    y = x + dt * v + dt * dt * (g + particle_f_in[i] * inv_m)
    particle_inertia_out[i] = y
    g_norm = wp.length(g)
    if adaptive == 0:
        particle_q_out[i] = y
        return
    if has_last == 0 or g_norm == 0.0:
        # No history: the inertial target (free fall) is the best guess without one.
        particle_q_out[i] = y if has_last == 0 else x + dt * v
        return
    g_dir = g / g_norm
    a_along = wp.dot(v - v_last, g_dir) / dt
    particle_q_out[i] = x + dt * v + dt * dt * wp.clamp(a_along, 0.0, g_norm) * g_dir


def predict_particles(model, state_in, state_out, work, dt: float) -> None:
    """Write ``work.particle_q_prev``, ``work.particle_inertia`` and the first iterate into ``state_out.particle_q``."""
    wp.launch(
        _predict_particles,
        dim=model.particle_count,
        inputs=[model.particle_flags, model.particle_inv_mass, model.particle_world, model.gravity, float(dt),
                int(work.adaptive_init), state_in.particle_q, state_in.particle_qd, state_in.particle_f,
                work.particle_qd_last, work.particle_has_last],
        outputs=[work.particle_q_prev, work.particle_inertia, state_out.particle_q],
        device=model.device,
    )
