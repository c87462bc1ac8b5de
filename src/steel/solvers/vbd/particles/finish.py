"""Velocities from positions at the end of a particle step (one launch).

Implicit Euler defines the new velocity by the position change, ``v_{t+1} = (x_{t+1} - x_t) / dt``
(Chen et al., "Vertex Block Descent", ACM TOG 43(4) 2024, eq. 1). Particles the solver did not move
(inactive or massless) kept ``x_t`` in ``predict``, so they report zero velocity.
"""

from __future__ import annotations

import warp as wp

from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.kernel
def _particle_velocities(
    dt: float,
    particle_q_prev: wp.array[wp.vec3],
    particle_q: wp.array[wp.vec3],
    particle_qd_out: wp.array[wp.vec3],
):
    i = wp.tid()  # one thread per particle
    particle_qd_out[i] = (particle_q[i] - particle_q_prev[i]) / dt


def finish_particles(model, state_out, work, dt: float) -> None:
    """Write ``state_out.particle_qd`` from ``state_out.particle_q`` and ``work.particle_q_prev``."""
    launch(
        _particle_velocities,
        dim=model.particle_count,
        inputs=[float(dt), work.particle_q_prev, state_out.particle_q],
        outputs=[state_out.particle_qd],
        device=model.device,
    )
