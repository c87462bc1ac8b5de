"""The tile path of the VBD vertex step (``particle_enable_tile_solve``): one block of threads per vertex.

The general kernel of :mod:`.solve` gives each vertex one thread, which evaluates every element
around the vertex in turn. Element evaluation dominates the step (a membrane block may run two
3x3 eigensolves, a tetrahedron a stable Neo-Hookean block), and a vertex has about 18 elements on
a cloth with bending and about 20 in a tetrahedral grid. Here the ``TILE_BLOCK_DIM`` lanes of one
block split those elements: lane ``l`` evaluates entries ``l, l + B, l + 2B, ...`` of the vertex's
element list (triangles, then bending edges, tetrahedra, springs, in the tables' order), the
per-lane results are gathered into a tile (``wp.tile``) and added in list order
(``wp.tile_extract``), and lane 0 adds inertia, shape contacts and self-contact and takes the
3x3 step with :func:`.solve.finish_vertex_step`, the general kernel's own function.

Same result as the general path, bitwise. Both paths evaluate each element with the same
function and add the element terms one by one in the same order, starting from zero; only who
evaluates differs. A cooperative ``wp.tile_sum`` / ``wp.tile_reduce`` was rejected for the
gather: Warp combines elements in an unspecified order (a tree on the GPU, differing with
``block_dim`` and between devices), so the two paths would differ by float32 rounding and the
option would change trajectories. The ordered gather costs ``B`` additions of a vec3 and a mat33
per round of ``B`` elements, small beside one element evaluation.

Shape contacts and self-contact are summed by lane 0 alone (at most
``PARTICLE_CONTACT_CAPACITY`` shape contacts a vertex, usually none; self-contact through the
general path's per-vertex function), so they keep the general path's order too.

``TILE_BLOCK_DIM = 32``: one GPU warp. A smaller block still occupies a whole warp (the idle lanes
are lost) and a larger one needs block-wide barriers at each gather; with 32 lanes nearly every
vertex of the shipped cloth and tet scenes takes one round.

On the CPU the general kernel runs instead (:func:`tile_solve_pays_off`; same positions, bitwise).
Warp runs a tiled CPU launch with one lane per block unless ``wp.config.enable_cpu_blocks`` is set,
so the tile kernel there is the general loop plus the cost of the tiles (slower; rejected). With
``enable_cpu_blocks`` the lanes are real (fibers) and the tile kernel runs, which is how the tests exercise
its gather on a CPU; it is far slower there, which only a test wants. Timings in benchmarks/README.md's
performance log.

Specialized at construction: the kernel is compiled only with the element families the
model has active entries for (a tet-only model compiles without triangle, edge and spring code),
so adding elements of a new family, or giving stiffness to elements that had none, needs a new
solver (the adjacency tables are built once anyway, see :mod:`.adjacency`).
"""

from __future__ import annotations

import functools

import warp as wp

from .predict import particle_is_free
from .self_contact_force import SelfContactData
from .solve import (
    ContactData,
    ElementData,
    edge_entry_force_hessian,
    finish_vertex_step,
    spring_entry_force_hessian,
    tet_entry_force_hessian,
    triangle_entry_force_hessian,
)

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

TILE_BLOCK_DIM = 32  # lanes per vertex (one GPU warp; see the module docstring)


@functools.cache
def _solve_colour_tile_kernel(tri: bool, edge: bool, tet: bool, spring: bool):
    """The tile kernel compiled with the element families flagged ``True`` (the others compile away)."""

    @wp.kernel(module="unique", enable_backward=False)
    def solve_colour_tile(
        # Model:
        particle_flags: wp.array[wp.int32],
        particle_mass: wp.array[float],
        particle_inv_mass: wp.array[float],
        elements: ElementData,
        contacts: ContactData,
        self_contacts: SelfContactData,
        color_particles: wp.array[wp.int32],
        dt: float,
        # Data in:
        particle_q_prev: wp.array[wp.vec3],
        particle_inertia: wp.array[wp.vec3],
        particle_q: wp.array[wp.vec3],  # positions when this colour's pass began
        # Data out (this colour's vertices only):
        particle_q_out: wp.array[wp.vec3],
    ):
        block, lane = wp.tid()  # one block per particle of this colour, one lane per element slot
        i = color_particles[block]
        # Block-uniform: either every lane of the block leaves here or none does, so all reach the tiles.
        if not particle_is_free(particle_flags[i], particle_inv_mass[i]):
            return
        el = elements
        # The vertex's element list, families concatenated: [tri | edge | tet | spring].
        n_tri = int(0)
        n_edge = int(0)
        n_tet = int(0)
        n_spring = int(0)
        if wp.static(tri):
            n_tri = el.tri_start[i + 1] - el.tri_start[i]
        if wp.static(edge):
            n_edge = el.edge_start[i + 1] - el.edge_start[i]
        if wp.static(tet):
            n_tet = el.tet_start[i + 1] - el.tet_start[i]
        if wp.static(spring):
            n_spring = el.spring_start[i + 1] - el.spring_start[i]
        end_edge = n_tri + n_edge
        end_tet = end_edge + n_tet
        total = end_tet + n_spring
        width = wp.block_dim()
        f = wp.vec3(0.0)
        h = wp.mat33(0.0)
        for base in range(0, total, width):
            k = base + lane
            fe = wp.vec3(0.0)
            he = wp.mat33(0.0)
            if k < n_tri:
                if wp.static(tri):
                    fe, he = triangle_entry_force_hessian(el.tri_start[i] + k, el, particle_q, particle_q_prev, dt)
            elif k < end_edge:
                if wp.static(edge):
                    fe, he = edge_entry_force_hessian(el.edge_start[i] + k - n_tri, el, particle_q,
                                                      particle_q_prev, dt)
            elif k < end_tet:
                if wp.static(tet):
                    fe, he = tet_entry_force_hessian(el.tet_start[i] + k - end_edge, el, particle_q,
                                                     particle_q_prev, dt)
            elif k < total:
                if wp.static(spring):
                    fe, he = spring_entry_force_hessian(el.spring_start[i] + k - end_tet, el, particle_q,
                                                        particle_q_prev, dt)
            f_lanes = wp.tile(fe, preserve_type=True)
            h_lanes = wp.tile(he, preserve_type=True)
            # Added in list order, as the general kernel adds them (not wp.tile_sum: see the module docstring).
            for j in range(wp.min(width, total - base)):
                f += wp.tile_extract(f_lanes, j)
                h += wp.tile_extract(h_lanes, j)
        if lane == 0:
            finish_vertex_step(i, f, h, particle_mass, contacts, self_contacts, dt, particle_q_prev,
                               particle_inertia, particle_q, particle_q_out)

    return solve_colour_tile


def tile_solve_pays_off(device) -> bool:
    """Whether the tile kernel runs with real lanes on ``device``: CUDA, or a CPU with ``enable_cpu_blocks``."""
    return bool(wp.get_device(device).is_cuda or wp.config.enable_cpu_blocks)


def active_families(elements: ElementData) -> tuple[bool, bool, bool, bool]:
    """Whether any vertex has a (triangle, edge, tet, spring) entry: the last offset of each table is positive."""
    return tuple(int(getattr(elements, f"{name}_start").numpy()[-1]) > 0 for name in ("tri", "edge", "tet", "spring"))


def launch_solve_colour_tile(families, inputs: list, particle_q_out, group, device) -> None:
    """One colour's pass on the tile path: ``group.shape[0]`` blocks of ``TILE_BLOCK_DIM`` lanes.

    ``inputs`` are the general kernel's inputs in its order, ``families`` the flags of
    :func:`active_families` (computed once per solver).
    """
    wp.launch_tiled(
        _solve_colour_tile_kernel(*families),
        dim=group.shape[0],
        inputs=inputs,
        outputs=[particle_q_out],
        block_dim=TILE_BLOCK_DIM,
        device=device,
    )
