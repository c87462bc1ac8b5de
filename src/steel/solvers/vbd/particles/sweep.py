"""The particle sweeps: ``iterations`` Gauss-Seidel passes over the particle colours (Chen et al. 2024, sec. 3.4).

Each pass copies the positions once per colour and launches that colour's vertex block steps: the plain kernel
(:func:`.solve.solve_color`) or the tile kernel (:mod:`.solve_tile`, bitwise equal). This module owns the loop
so that the two kernel modules do not import each other (the tile kernel reuses the plain one's element and
finish functions).
"""

from __future__ import annotations

import warp as wp

from .contacts import ramp_contacts
from .self_contact import disabled_self_contact
from .solve import solve_color
from .solve_tile import launch_solve_colour_tile
from ....launches import launch


def solve_particles(model, state_out, work, iterations: int, dt: float, self_contact=None, tile_families=None) -> None:
    """Run ``iterations`` Gauss-Seidel sweeps over the particle colours on ``state_out.particle_q``.

    ``self_contact`` (a :class:`.self_contact.SelfContact` or None) detects before the iterations its
    cadence names and adds its forces and truncation to every vertex step. ``tile_families`` (the
    flags of :func:`.solve_tile.active_families`) selects the tile kernel, bitwise equal to this one.
    """
    for iteration in range(iterations):
        sweep_particles(model, state_out, work, iteration, dt, self_contact, tile_families)


def sweep_particles(model, state_out, work, iteration: int, dt: float, self_contact=None, tile_families=None) -> None:
    """Iteration ``iteration`` of :func:`solve_particles`: one pass over every particle colour."""
    dev = model.device
    sc_data = self_contact.data if self_contact is not None else disabled_self_contact(dev)
    if self_contact is not None:
        self_contact.before_iteration(state_out.particle_q, iteration)
    ramp_contacts(model, state_out, work)
    for group in model.particle_color_groups:
        if group.shape[0] == 0:
            continue
        wp.copy(work.particle_q_colour, state_out.particle_q)
        inputs = [model.particle_flags, model.particle_mass, model.particle_inv_mass, work.elements,
                  work.contact_data, sc_data, group, float(dt), work.particle_q_prev, work.particle_inertia,
                  work.particle_q_colour]
        if tile_families is not None:
            launch_solve_colour_tile(tile_families, inputs, state_out.particle_q, group, dev)
        else:
            launch(solve_color, dim=group.shape[0], inputs=inputs, outputs=[state_out.particle_q], device=dev)
