"""Inertial prediction and the first iterate of a particle step (one launch).

Implicit Euler as an optimization (Chen et al., "Vertex Block Descent", ACM TOG 43(4) 2024, eq. 1):
the step minimizes ``G(x) = 1/(2 dt²) |x - y|²_M + E(x)`` over positions, with the inertial target

    y = x_t + dt v_t + dt² (g + f_ext / m)

(``f_ext`` = ``state_in.particle_f`` [N]). Block descent starts from a first iterate ``x⁰``; two are
built, chosen by ``work.adaptive_init`` (``SolverVBD.particle_adaptive_init``):

* **inertial** (default): ``x⁰ = y``, the seed's "forward integrate particles" and where
  ``newton.solvers.SolverVBD`` starts (with it, and otherwise the same step, a pinned 5x5 cloth
  follows Newton's trajectory to 5e-7 m over 20 steps of 10 iterations).
* **adaptive** (the paper's sec. 3.6): keep only the part of the last step's acceleration that
  points along gravity, clamped to ``[0, |g|]``:

      a_t = (v_t - v_{t-1}) / dt,   â = a_t · ĝ,   ã = ĝ clamp(â, 0, |g|),   x⁰ = x_t + dt v_t + dt² ã

  with ``v_{t-1}`` the velocity this stage read at the previous step (``work.particle_qd_last``); a
  particle without one (first step, after ``reset``) starts at ``y``. Checked against the paper: a
  resting particle starts where it rests (ã = 0), a free-falling one at ``y`` (ã = g), and pinned
  particles keep their position whatever their history.

Both starts reach the same minimizer (200 iterations: 4.3e-5 m apart over 20 steps); they differ in
where a fixed number of iterations ends, and neither is better everywhere (measured, 10 iterations
unless stated):

* swinging pinned 5x5 cloth, 20 steps: the inertial start ends 7.6e-3 m from the converged
  trajectory, the adaptive one 7.8e-2 m (``tests/solvers/vbd/test_solver_vbd.py::
  test_on_a_swinging_cloth_the_inertial_start_ends_closer_to_the_converged_trajectory``);
* Newton's cloth_stiff_material_hanging (tri_ke 1e8, released flat at z = 2 m, pinned along one side,
  dt 1/600 s): from the adaptive start the cloth swings over the pin line and up to z 2.99 m by frame
  100 (an energy gain of the unconverged solve: it was released flat at the pin's height) and leaves
  the example's box; from the inertial start
  it stays below z 2.000 m over 150 frames, as Newton's does (max x 2.187 m against Newton's 2.184 m);
* a 49x49 grid version of that cloth (uniform grid, 1 s): the other way round, inertial 2.49 m (Newton
  2.50 m), adaptive 2.00 m; so 10 sweeps on 1e8 N/m are far from converged whichever the start;
* a 9x9 cloth lying on the ground (0.01 kg particles, contact ke 1750 N/m, dt 1/60 s): adaptive at
  the static depth ``m g / ke`` = 5.6e-5 m within 1e-7 m with 2 iterations; inertial 3.6 mm deeper
  with 2, 0.39 mm with 5, 2.1e-5 m with 10 (test_solver_vbd.py).

The inertial start is the default because the seed asks for "forward integrate" (the inertial
prediction), because Newton's examples are tuned on it (drop-in: cloth_stiff_material_hanging passes
its own check with it and fails with the adaptive one) and because it tracks converged swinging
motion better; the adaptive start is kept for scenes resting in contact at few iterations.

Inactive particles (``ParticleFlags.ACTIVE`` clear) and particles without mass keep their position;
``finish`` then gives them zero velocity. This stage also stores ``v_t`` for the next step's
acceleration estimate and ``x_t`` for the velocity update and the damping and friction rates.
"""

from __future__ import annotations

import warp as wp

import newton
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

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
    launch(
        _predict_particles,
        dim=model.particle_count,
        inputs=[model.particle_flags, model.particle_inv_mass, model.particle_world, model.gravity, float(dt),
                int(work.adaptive_init), state_in.particle_q, state_in.particle_qd, state_in.particle_f,
                work.particle_qd_last, work.particle_has_last],
        outputs=[work.particle_q_prev, work.particle_inertia, state_out.particle_q],
        device=model.device,
    )
