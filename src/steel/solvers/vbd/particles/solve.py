"""The VBD vertex block step, one colour per launch (:func:`solve_color`; :mod:`.sweep` runs the colours).

Vertex Block Descent (Chen, Liu, Yang, Yuksel, ACM TOG 43(4) 2024, sec. 3.2-3.4) minimizes the
implicit-Euler energy ``G(x) = 1/(2 dt²) |x - y|²_M + E(x)`` one vertex at a time with everything
else fixed. For vertex ``i`` the local problem is a 3x3 Newton step

    f_i = m_i/dt² (y_i - x_i) + Σ_e f_{e,i} + Σ_c f_{c,i}
    H_i = m_i/dt² I + Σ_e H_{e,i} + Σ_c H_{c,i},      x_i ← x_i + H_i⁻¹ f_i

where ``f_{e,i} = -∂E_e/∂x_i`` and ``H_{e,i}`` (SPD-projected diagonal block, damping included) come
from the element energies of :mod:`.elastic` (triangles, bending edges, tetrahedra, springs) and
``f_{c,i}, H_{c,i}`` from the particle–shape contacts (:mod:`.contacts`). A block whose Hessian is
numerically singular (``|det H| <= 1e-12``, e.g. a massless neighbourhood) is skipped that iteration
rather than divided by zero.

Gauss-Seidel across colours, Jacobi within one: each colour's pass reads the positions as they were
when the pass began (a copy, ``work.particle_q_colour``) and writes only its own vertices, so every
colour sees the colours before it. Reading the live array instead would not be a race-free
Gauss-Seidel: ``ModelBuilder.color()`` by default (``include_bending=False``) gives the two vertices
opposite a bending edge the same colour although they share the hinge, and an in-place update
would make the result depend on thread order (CPU launch order, GPU scheduling). With the copy the
step is deterministic on every device, and it is the update Newton's SolverVBD makes: one iteration
of a pinned 5x5 cloth with bending lands on its result to 6e-8 m, where the in-place update is
8e-5 m away.

Inactive or massless particles are not in play: ``predict`` left them at ``x_t`` and they are
skipped here, so they stay fixed and act as pins for their elements.
"""

from __future__ import annotations

import warp as wp

from .attachments import particle_attachments
from .contacts import ContactData, record_force_hessian, record_weight
from .elastic import bending_force_hessian, spring_force_hessian, tet_force_hessian
from .elastic import triangle_snh_force_hessian as triangle_force_hessian  # the membrane law Newton uses
from .predict import particle_is_free
from .self_contact_force import SelfContactData, self_contact_force_hessian, truncate_displacement
from ..dat import truncate_rigid_soft

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.struct
class ElementData:
    """The model's element arrays the vertex step reads, with the vertex -> element tables."""

    tri_indices: wp.array2d[wp.int32]
    tri_poses: wp.array[wp.mat22]
    tri_areas: wp.array[float]
    tri_materials: wp.array2d[float]
    edge_indices: wp.array2d[wp.int32]
    edge_rest_angle: wp.array[float]
    edge_rest_length: wp.array[float]
    edge_bending_properties: wp.array2d[float]
    tet_indices: wp.array2d[wp.int32]
    tet_poses: wp.array[wp.mat33]
    tet_volumes: wp.array[float]
    tet_materials: wp.array2d[float]
    spring_indices: wp.array[wp.int32]
    spring_rest_length: wp.array[float]
    spring_stiffness: wp.array[float]
    spring_damping: wp.array[float]
    tri_start: wp.array[wp.int32]
    tri_entry: wp.array[wp.int32]
    edge_start: wp.array[wp.int32]
    edge_entry: wp.array[wp.int32]
    tet_start: wp.array[wp.int32]
    tet_entry: wp.array[wp.int32]
    spring_start: wp.array[wp.int32]
    spring_entry: wp.array[wp.int32]


@wp.func
def triangle_entry_force_hessian(k: int, el: ElementData, x: wp.array[wp.vec3], xp: wp.array[wp.vec3], dt: float):
    """``(-∂E_t/∂x_v, ∂²E_t/∂x_v²)`` [N, N/m] of the triangle and vertex named by ``el.tri_entry[k]``."""
    t = el.tri_entry[k] >> 2
    o = el.tri_entry[k] & 3
    a = el.tri_indices[t, 0]
    b = el.tri_indices[t, 1]
    c = el.tri_indices[t, 2]
    return triangle_force_hessian(o, x[a], x[b], x[c], xp[a], xp[b], xp[c], el.tri_poses[t], el.tri_areas[t],
                                  el.tri_materials[t, 0], el.tri_materials[t, 1], el.tri_materials[t, 2], dt)


@wp.func
def edge_entry_force_hessian(k: int, el: ElementData, x: wp.array[wp.vec3], xp: wp.array[wp.vec3], dt: float):
    """Bending force and Hessian [N, N/m] of the edge and vertex named by ``el.edge_entry[k]``."""
    e = el.edge_entry[k] >> 2
    o = el.edge_entry[k] & 3
    a = el.edge_indices[e, 0]
    b = el.edge_indices[e, 1]
    c = el.edge_indices[e, 2]
    d = el.edge_indices[e, 3]
    return bending_force_hessian(o, x[a], x[b], x[c], x[d], xp[a], xp[b], xp[c], xp[d], el.edge_rest_angle[e],
                                 el.edge_rest_length[e], el.edge_bending_properties[e, 0],
                                 el.edge_bending_properties[e, 1], dt)


@wp.func
def tet_entry_force_hessian(k: int, el: ElementData, x: wp.array[wp.vec3], xp: wp.array[wp.vec3], dt: float):
    """Force and Hessian [N, N/m] of the tetrahedron and vertex named by ``el.tet_entry[k]``."""
    t = el.tet_entry[k] >> 2
    o = el.tet_entry[k] & 3
    a = el.tet_indices[t, 0]
    b = el.tet_indices[t, 1]
    c = el.tet_indices[t, 2]
    d = el.tet_indices[t, 3]
    return tet_force_hessian(o, x[a], x[b], x[c], x[d], xp[a], xp[b], xp[c], xp[d], el.tet_poses[t],
                             el.tet_volumes[t], el.tet_materials[t, 0], el.tet_materials[t, 1],
                             el.tet_materials[t, 2], dt)


@wp.func
def spring_entry_force_hessian(k: int, el: ElementData, x: wp.array[wp.vec3], xp: wp.array[wp.vec3], dt: float):
    """Force and Hessian [N, N/m] of the spring and vertex named by ``el.spring_entry[k]``."""
    s = el.spring_entry[k] >> 2
    o = el.spring_entry[k] & 3
    a = el.spring_indices[2 * s]
    b = el.spring_indices[2 * s + 1]
    return spring_force_hessian(o, x[a], x[b], xp[a], xp[b], el.spring_rest_length[s], el.spring_stiffness[s],
                                el.spring_damping[s], dt)


@wp.func
def _element_force_hessian(i: int, el: ElementData, x: wp.array[wp.vec3], xp: wp.array[wp.vec3], dt: float):
    """Sum of ``(-∂E_e/∂x_i, ∂²E_e/∂x_i²)`` over every element touching vertex ``i``.

    The order (triangles, edges, tetrahedra, springs, each in table order) is the summation order the
    tile path (:mod:`.solve_tile`) reproduces, so both paths round alike.
    """
    f = wp.vec3(0.0)
    h = wp.mat33(0.0)
    for k in range(el.tri_start[i], el.tri_start[i + 1]):
        fe, he = triangle_entry_force_hessian(k, el, x, xp, dt)
        f += fe
        h += he
    for k in range(el.edge_start[i], el.edge_start[i + 1]):
        fe, he = edge_entry_force_hessian(k, el, x, xp, dt)
        f += fe
        h += he
    for k in range(el.tet_start[i], el.tet_start[i + 1]):
        fe, he = tet_entry_force_hessian(k, el, x, xp, dt)
        f += fe
        h += he
    for k in range(el.spring_start[i], el.spring_start[i + 1]):
        fe, he = spring_entry_force_hessian(k, el, x, xp, dt)
        f += fe
        h += he
    return f, h


@wp.func
def finish_vertex_step(
    i: int,
    f: wp.vec3,
    h: wp.mat33,
    particle_mass: wp.array[float],
    contacts: ContactData,
    self_contacts: SelfContactData,
    dt: float,
    particle_q_prev: wp.array[wp.vec3],
    particle_inertia: wp.array[wp.vec3],
    particle_q: wp.array[wp.vec3],
    particle_q_out: wp.array[wp.vec3],
):
    """Add inertia, shape and self-contacts to vertex ``i``'s element sums ``f``, ``h`` [N, N/m]; take the step.

    Shared by the general and the tile kernels, so both add the same terms in the same order.
    """
    x = particle_q[i]
    m_dt2 = particle_mass[i] / (dt * dt)
    f += m_dt2 * (particle_inertia[i] - x)
    h += m_dt2 * wp.identity(3, dtype=float)
    count = wp.min(contacts.particle_contact_count[i], contacts.particle_contact.shape[1])
    for k in range(count):
        # A record's force acts on its soft point; this vertex takes its weight's share (b = 1 for its own).
        c = contacts.particle_contact[i, k]
        b = record_weight(contacts, c, i)
        fc, hc = record_force_hessian(contacts, c, particle_q, particle_q_prev, dt)
        f += b * fc
        h += (b * b) * hc
    fa, ha = particle_attachments(contacts.attach, i, x, dt)
    f += fa
    h += ha
    fs, hs = self_contact_force_hessian(i, self_contacts, particle_q, particle_q_prev, dt)
    f += fs
    h += hs
    if wp.abs(wp.determinant(h)) > 1.0e-12:
        # Truncation keeps the vertex within its self-contact bound, then within its rigid–soft bounds (each a
        # no-op when off); both scale towards the same detection position (equivalent schedules, ..dat).
        x_new = truncate_displacement(i, self_contacts, x + wp.inverse(h) * f)
        particle_q_out[i] = truncate_rigid_soft(i, contacts.dat, contacts.particle_contact_count,
                                                contacts.particle_contact, x_new)


@wp.kernel
def solve_color(
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
    tid = wp.tid()  # one thread per particle of this colour
    i = color_particles[tid]
    if not particle_is_free(particle_flags[i], particle_inv_mass[i]):
        return
    f, h = _element_force_hessian(i, elements, particle_q, particle_q_prev, dt)
    finish_vertex_step(i, f, h, particle_mass, contacts, self_contacts, dt, particle_q_prev, particle_inertia,
                       particle_q, particle_q_out)
