"""Particles, cloth and soft bodies of SolverFeatherstone, stepped with Newton's SolverSemiImplicit routines.

The seed says this solver "uses the routines from SolverSemiImplicit to simulate particles, cloth,
and soft bodies", so this module calls Newton's own public-solver kernels rather than
re-implementing them: springs, triangle membranes, bending edges, tetrahedra, particle-particle
contact (when the model has a particle grid), triangle contact and particle-shape contact, then
Newton's particle integrator. Particle-shape contact is two-way: its reaction wrenches go into
the solver's ``body_f_work`` *before* the articulation dynamics, so articulated bodies feel
cloth and soft bodies in the same step. Forces accumulate into ``state_in.particle_f`` as in
SolverSemiImplicit. Muscles are not evaluated (as in the reference).
"""

from __future__ import annotations

import newton


def eval_particle_forces(solver, model: newton.Model, state_in: newton.State, control, contacts) -> None:
    """Every particle force of the step into ``state_in.particle_f``, reactions into ``body_f_work``."""
    if model.particle_count == 0:
        return
    from newton._src.solvers.semi_implicit import kernels_contact as kc  # noqa: PLC0415
    from newton._src.solvers.semi_implicit import kernels_particle as kp  # noqa: PLC0415

    particle_f = state_in.particle_f
    kp.eval_spring_forces(model, state_in, particle_f)
    kp.eval_triangle_forces(model, state_in, control, particle_f)
    kp.eval_bending_forces(model, state_in, particle_f)
    kp.eval_tetrahedra_forces(model, state_in, control, particle_f)
    if model.particle_count > 1 and model.particle_grid is not None:
        radius = model.particle_max_radius * 2.0 + model.particle_cohesion
        model.particle_grid.build(state_in.particle_q, radius=radius)
    kc.eval_particle_contact_forces(model, state_in, particle_f)
    kc.eval_triangle_contact_forces(model, state_in, particle_f)
    if contacts is not None:
        body_f = solver.work.body_f_work if model.body_count else None
        kc.eval_particle_body_contact_forces(model, state_in, contacts, particle_f, body_f)


def step_particles(solver, model: newton.Model, state_in, state_out, dt: float) -> None:
    """Symplectic Euler on particles with Newton's integrator (after :func:`eval_particle_forces`)."""
    if model.particle_count == 0:
        return
    solver.integrate_particles(model, state_in, state_out, dt)
