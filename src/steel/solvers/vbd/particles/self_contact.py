"""Particle self-contact for the VBD step: buffers, detection cadence, truncation, overflow report.

The solver owns one :class:`SelfContact` when ``particle_enable_self_contact`` is True. Per step:

1. :meth:`SelfContact.begin_step` runs after ``predict`` wrote the first iterate ``x⁰``: it
   detects at the step's start ``x_t``, truncates ``x⁰`` to the bounds found there (the
   initialization cannot cross a surface either), and with ``particle_collision_detection_interval
   == 0`` detects again at ``x⁰``.
2. :meth:`SelfContact.before_iteration` runs before every VBD iteration ``k``; with an interval
   ``n >= 1`` it detects when ``k % n == 0``.
3. The vertex step (:mod:`.solve`) adds the pair forces of :mod:`.self_contact_force` and truncates
   each vertex update to its bound around the last detection positions.

So the seed's cadence reads: interval < 0 -> one detection per step, before initialization;
0 -> before and right after initialization; n >= 1 -> before initialization and before every n-th
iteration (0, n, 2n, ...). Between two detections every vertex stays within its bound, so the mesh
cannot pass through itself (see :func:`.self_contact_force.truncate_displacement`). The price is
that a vertex whose primitives touch another primitive at detection (distance 0, e.g. a mesh that
starts self-intersecting or with coincident layers) gets a zero budget and stays where it is; start
from a state free of self-intersection. Pairs removed by the filters are not protected.

Distances [m]: ``particle_self_contact_radius`` ``r`` is the interaction distance (pairs closer
than ``r`` push apart); ``particle_self_contact_margin`` is the detection distance (pairs within it
are gathered, and it caps the motion budget); a margin below the radius is read as the radius, so a
pair can never interact undetected. The later revision's spelling, margin + ``particle_self_contact_gap``,
arrives here as radius = its margin and margin = its margin + gap (:mod:`..options`, measured on
newton's solver).

Material: ``model.soft_contact_ke`` [N/m], ``soft_contact_kd`` [N·s/m] and ``soft_contact_mu`` are
read at every step (as for particle–shape contacts), with the solver's ``friction_epsilon`` [m/s].

Everything here launches kernels and refits BVHs only (no host reads), so a step can be captured in
a graph. Buffer overflow is counted on the device; :meth:`SelfContact.overflow` reads the counts and
:meth:`SelfContact.check_overflow` warns.
"""

from __future__ import annotations

import warnings

import numpy as np
import warp as wp

from .predict import particle_is_free
from .self_contact_detect import (
    FilterData,
    detect_edge_edge,
    detect_vertex_triangle,
    file_incident_entries,
    filter_map_table,
    mesh_edges,
    prepare_detection,
    ring_table,
    vertex_bounds,
    vertex_primitive_table,
)
from .self_contact_force import SelfContactData, truncate_displacement
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


def _int_array(values: np.ndarray, device) -> wp.array:
    return wp.array(np.ascontiguousarray(values, dtype=np.int32), dtype=wp.int32, device=device)


def _indices(arr, width: int) -> np.ndarray:
    if arr is None or arr.shape[0] == 0:
        return np.zeros((0, width), dtype=np.int32)
    return arr.numpy().reshape(-1, width)


@wp.kernel
def _truncate_particles(
    # Model:
    particle_flags: wp.array[wp.int32],
    particle_inv_mass: wp.array[float],
    sc: SelfContactData,
    # Data in/out:
    particle_q: wp.array[wp.vec3],
):
    i = wp.tid()  # one thread per particle
    if particle_is_free(particle_flags[i], particle_inv_mass[i]):
        particle_q[i] = truncate_displacement(i, sc, particle_q[i])


class SelfContact:
    """Self-contact state of one solver (field shapes in the comments; see the module docstring)."""

    def __init__(self, model, opts):
        dev = model.device
        self.device = dev
        n = int(model.particle_count)
        tris = _indices(model.tri_indices, 3)
        edges = _indices(model.edge_indices, 4)
        self.particle_count = n
        self.tri_count = len(tris)
        self.edge_count = len(edges)
        self.interval = int(opts.particle_collision_detection_interval)
        self.radius = float(opts.particle_self_contact_radius)
        self.margin = max(float(opts.particle_self_contact_margin), self.radius)
        self.half_relaxation = 0.5 * float(opts.particle_conservative_bound_relaxation)
        self.friction_epsilon = float(opts.friction_epsilon)

        # Host tables, once: topology rings, external maps, vertex -> primitive lists.
        rings = max(int(opts.particle_topological_contact_filter_threshold) - 1, 0)  # excluded: ring < threshold
        ring_start, ring_vertex = ring_table(n, mesh_edges(tris, edges), rings)
        vmap_start, vmap = filter_map_table(opts.particle_external_vertex_contact_filtering_map, n, self.tri_count,
                                            "particle_external_vertex_contact_filtering_map")
        emap_start, emap = filter_map_table(opts.particle_external_edge_contact_filtering_map, self.edge_count,
                                            self.edge_count, "particle_external_edge_contact_filtering_map")
        flt = FilterData()
        flt.ring_start = _int_array(ring_start, dev)
        flt.ring_vertex = _int_array(ring_vertex, dev)
        flt.vertex_map_start = _int_array(vmap_start, dev)
        flt.vertex_map_tri = _int_array(vmap, dev)
        flt.edge_map_start = _int_array(emap_start, dev)
        flt.edge_map_edge = _int_array(emap, dev)
        flt.particle_world = model.particle_world
        flt.rest_q = model.particle_q
        flt.rest_exclusion = float(opts.particle_rest_shape_contact_exclusion_radius)
        flt.parallel_epsilon = float(opts.particle_edge_parallel_epsilon)
        self.filters = flt
        vt_start, vt = vertex_primitive_table(tris, n)
        ve_start, ve = vertex_primitive_table(edges[:, 2:4], n)
        self.vertex_tri_start, self.vertex_tri = _int_array(vt_start, dev), _int_array(vt, dev)
        self.vertex_edge_start, self.vertex_edge = _int_array(ve_start, dev), _int_array(ve, dev)

        # Device buffers.
        bv = int(opts.particle_vertex_contact_buffer_size)
        be = int(opts.particle_edge_contact_buffer_size)
        nt, ne, np1 = max(self.tri_count, 1), max(self.edge_count, 1), max(n, 1)
        self.tri_indices = model.tri_indices if self.tri_count else wp.zeros((1, 3), dtype=wp.int32, device=dev)
        self.edge_indices = model.edge_indices if self.edge_count else wp.zeros((1, 4), dtype=wp.int32, device=dev)
        self.vt_tri = wp.zeros((np1, bv), dtype=wp.int32, device=dev)  # (particle, vertex buffer)
        self.vt_count = wp.zeros(np1, dtype=wp.int32, device=dev)  # pairs stored per vertex
        self.ee_edge = wp.zeros((ne, be), dtype=wp.int32, device=dev)  # (edge, edge buffer)
        self.ee_count = wp.zeros(ne, dtype=wp.int32, device=dev)  # pairs stored per edge
        self.vertex_min_dist = wp.zeros(np1, dtype=float, device=dev)  # [m]
        self.tri_min_dist = wp.zeros(nt, dtype=float, device=dev)  # [m]
        self.edge_min_dist = wp.zeros(ne, dtype=float, device=dev)  # [m]
        self.tri_lower = wp.zeros(nt, dtype=wp.vec3, device=dev)
        self.tri_upper = wp.zeros(nt, dtype=wp.vec3, device=dev)
        self.edge_lower = wp.zeros(ne, dtype=wp.vec3, device=dev)
        self.edge_upper = wp.zeros(ne, dtype=wp.vec3, device=dev)
        self.incident_count = wp.zeros(np1, dtype=wp.int32, device=dev)
        self.incident_end = wp.zeros(np1, dtype=wp.int32, device=dev)
        self.incident_fill = wp.zeros(np1, dtype=wp.int32, device=dev)
        # Every stored pair lists 4 entries: this many can never overflow.
        self.incident_entry = wp.zeros(4 * (np1 * bv + ne * be), dtype=wp.int32, device=dev)
        self.q_detect = wp.zeros(np1, dtype=wp.vec3, device=dev)  # [m]
        self.bound = wp.zeros(np1, dtype=float, device=dev)  # [m]; zero until the first detection
        self.overflow_count = wp.zeros(2, dtype=wp.int32, device=dev)  # dropped pairs: [VT, EE], cumulative
        # Without triangles (edges) nothing is ever found for vertices (edges): the budget is the margin.
        self.vertex_min_dist.fill_(self.margin)
        self.edge_min_dist.fill_(self.margin)
        # Built once; rebuilds are in place, so kernel launches (and captured graphs) keep valid ids.
        # SAH on the CPU, LBVH on a GPU (the constructors whose trees Warp rebuilds in place there).
        self.bvh_constructor = "sah" if wp.get_device(dev).is_cpu else "lbvh"
        self._prepare(model.particle_q)
        self.tri_bvh = wp.Bvh(self.tri_lower, self.tri_upper, constructor=self.bvh_constructor) \
            if self.tri_count else None
        self.edge_bvh = wp.Bvh(self.edge_lower, self.edge_upper, constructor=self.bvh_constructor) \
            if self.edge_count else None

        data = SelfContactData()
        data.enabled = 1
        data.radius = self.radius
        data.friction_epsilon = self.friction_epsilon
        data.parallel_epsilon = flt.parallel_epsilon
        data.tri_indices = self.tri_indices
        data.edge_indices = self.edge_indices
        data.vt_tri = self.vt_tri
        data.ee_edge = self.ee_edge
        data.incident_count = self.incident_count
        data.incident_end = self.incident_end
        data.incident_entry = self.incident_entry
        data.q_detect = self.q_detect
        data.bound = self.bound
        self.data = data
        self.set_material(model)

    # -- public pieces ----------------------------------------------------------------------------------

    def set_material(self, model) -> None:
        """Read ``soft_contact_ke/kd/mu`` from the model (called at every step)."""
        self.data.ke = float(model.soft_contact_ke)
        self.data.kd = float(model.soft_contact_kd)
        self.data.mu = float(model.soft_contact_mu)

    def rebuild(self, particle_q: wp.array) -> None:
        """Rebuild both BVHs in place from ``particle_q`` (refits keep their topology between rebuilds).

        In place, so it can run inside a captured graph (it is replayed against the current positions).
        """
        self._prepare(particle_q)
        for bvh in (self.tri_bvh, self.edge_bvh):
            if bvh is not None:
                bvh.rebuild(self.bvh_constructor)

    def detect(self, particle_q: wp.array) -> None:
        """Gather pairs, distances and bounds at ``particle_q`` (refits the BVHs first)."""
        dev, n = self.device, self.particle_count
        self._prepare(particle_q)
        if self.tri_bvh is not None:
            self.tri_bvh.refit()
            launch(detect_vertex_triangle, dim=n,
                      inputs=[self.tri_bvh.id, self.tri_indices, self.filters, self.margin, particle_q],
                      outputs=[self.vt_tri, self.vt_count, self.vertex_min_dist, self.tri_min_dist,
                               self.incident_count, self.overflow_count], device=dev)
        if self.edge_bvh is not None:
            self.edge_bvh.refit()
            launch(detect_edge_edge, dim=self.edge_count,
                      inputs=[self.edge_bvh.id, self.edge_indices, self.filters, self.margin, particle_q],
                      outputs=[self.ee_edge, self.ee_count, self.edge_min_dist, self.incident_count,
                               self.overflow_count], device=dev)
        wp.utils.array_scan(self.incident_count, self.incident_end, inclusive=True)
        launch(file_incident_entries, dim=n + (self.edge_count if self.edge_bvh is not None else 0),
                  inputs=[self.tri_indices, self.edge_indices, n, self.vt_tri, self.vt_count, self.ee_edge,
                          self.ee_count, self.incident_count, self.incident_end],
                  outputs=[self.incident_fill, self.incident_entry], device=dev)
        launch(vertex_bounds, dim=n,
                  inputs=[self.vertex_tri_start, self.vertex_tri, self.vertex_edge_start, self.vertex_edge,
                          self.half_relaxation, particle_q, self.vertex_min_dist, self.tri_min_dist,
                          self.edge_min_dist],
                  outputs=[self.q_detect, self.bound], device=dev)

    def truncate(self, model, particle_q: wp.array) -> None:
        """Pull every free particle of ``particle_q`` back within its bound of the last detection."""
        launch(_truncate_particles, dim=self.particle_count,
                  inputs=[model.particle_flags, model.particle_inv_mass, self.data], outputs=[particle_q],
                  device=self.device)

    def begin_step(self, model, q_start: wp.array, q_init: wp.array, truncate_more=None) -> None:
        """Detection before initialization, truncation of the first iterate, and (interval 0) after it.

        ``truncate_more(q_init)`` (rigid–soft DAT) truncates the first iterate further before it is detected at.
        """
        self.set_material(model)
        self.detect(q_start)
        self.truncate(model, q_init)
        if truncate_more is not None:
            truncate_more(q_init)
        if self.interval == 0:
            self.detect(q_init)

    def before_iteration(self, particle_q: wp.array, iteration: int) -> None:
        """Detect before iteration ``iteration`` when the interval asks for it (n >= 1)."""
        if self.interval >= 1 and iteration % self.interval == 0:
            self.detect(particle_q)

    def overflow(self) -> tuple[int, int]:
        """Pairs dropped because a buffer was full, ``(vertex–triangle, edge–edge)``, summed over every detection
        so far (a pair dropped at two detections counts twice); reads the device."""
        vt, ee = self.overflow_count.numpy()
        return int(vt), int(ee)

    def check_overflow(self) -> tuple[int, int]:
        """:meth:`overflow`, with a ``UserWarning`` naming the buffer option to raise when pairs were dropped."""
        vt, ee = self.overflow()
        if vt:
            warnings.warn(f"SolverVBD self-contact: {vt} vertex-triangle pairs were dropped because a vertex's buffer "
                          "was full; raise particle_vertex_contact_buffer_size", stacklevel=3)
        if ee:
            warnings.warn(f"SolverVBD self-contact: {ee} edge-edge pairs were dropped because an edge's buffer was "
                          "full; raise particle_edge_contact_buffer_size", stacklevel=3)
        return vt, ee

    # -- internals ----------------------------------------------------------------------------------------

    def _prepare(self, particle_q: wp.array) -> None:
        dim = max(self.tri_count, self.edge_count, self.particle_count)
        launch(prepare_detection, dim=dim,
                  inputs=[self.tri_indices, self.edge_indices, self.margin, self.tri_count, self.edge_count,
                          self.particle_count, particle_q],
                  outputs=[self.tri_lower, self.tri_upper, self.edge_lower, self.edge_upper, self.tri_min_dist,
                           self.incident_count, self.incident_fill], device=self.device)


_DISABLED: dict = {}


def disabled_self_contact(device) -> SelfContactData:
    """A ``SelfContactData`` with ``enabled = 0`` (tiny placeholder arrays) for solvers without self-contact."""
    key = str(device)
    if key not in _DISABLED:
        data = SelfContactData()
        data.enabled = 0
        i1 = wp.zeros(1, dtype=wp.int32, device=device)
        i2 = wp.zeros((1, 1), dtype=wp.int32, device=device)
        data.tri_indices = wp.zeros((1, 3), dtype=wp.int32, device=device)
        data.edge_indices = wp.zeros((1, 4), dtype=wp.int32, device=device)
        data.vt_tri = i2
        data.ee_edge = i2
        data.incident_count = i1
        data.incident_end = i1
        data.incident_entry = i1
        data.q_detect = wp.zeros(1, dtype=wp.vec3, device=device)
        data.bound = wp.zeros(1, dtype=float, device=device)
        _DISABLED[key] = data
    return _DISABLED[key]


__all__ = ["SelfContact", "disabled_self_contact"]
