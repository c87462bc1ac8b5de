"""The particle solve's work buffers, allocated once per solver.

=======================  ==========================================================  ======================
field                    meaning [unit]                                              shape
=======================  ==========================================================  ======================
particle_q_prev          positions at the start of the step ``x_t`` [m]               (particle,)
particle_inertia         inertial target ``y = x_t + dt v_t + dt² (g + f/m)`` [m]     (particle,)
particle_q_colour        positions when the current colour's pass began [m]          (particle,)
particle_qd_last         the previous step's input velocity ``v_{t-1}`` [m/s]          (particle,)
particle_has_last        1 once ``particle_qd_last`` holds a velocity, else 0          (particle,)
particle_contact_count   shape contacts filed for each particle this step             (particle,)
particle_contact         their contact record indices (a record is filed with each    (particle, capacity)
                         of its particles)
contact_body             coupled body the contact is on (VBD moves it), else -1       (soft_contact_max,)
contact_point            shape point at the step's end, world [m]; coupled: body frame (soft_contact_max,)
contact_normal           contact normal out of the shape, world; coupled: body frame  (soft_contact_max,)
contact_disp             shape point's displacement over the step [m]; coupled: its   (soft_contact_max,)
                         world position at the step's start [m]
contact_material         (ke [N/m], kd [N·s/m], mu, particle radius + shape margin);  (soft_contact_max,)
                         zero for a record not kept
contact_k                ramped penalty stiffness [N/m] (with a linear AVBD beta > 0)  (soft_contact_max,)
contact_overflow         contacts dropped because a particle's list was full          (1,)
=======================  ==========================================================  ======================
"""

from __future__ import annotations

import warp as wp

from .adjacency import build_element_adjacency, tet_rest_volumes
from .attachments import empty_attachments
from ..dat import disabled_dat
from .contacts import FULL_SURFACE_CAPACITY, PARTICLE_CONTACT_CAPACITY, ContactData
from .solve import ElementData


def _or_empty(arr, dtype, device, ndim: int = 1, width: int = 1):
    if arr is not None and arr.shape[0] > 0:
        return arr
    shape = (1,) if ndim == 1 else (1, width)
    return wp.zeros(shape, dtype=dtype, device=device)


class ParticleWork:
    """Work buffers and the element/contact structs the vertex solve reads (see the module table)."""

    def __init__(self, model, friction_epsilon: float, ramp_beta: float = 0.0, ramp_k_start: float = 0.0,
                 log_barrier: bool = False):
        dev = model.device
        n = max(int(model.particle_count), 1)
        self.device = dev
        self.particle_q_prev = wp.zeros(n, dtype=wp.vec3, device=dev)
        self.particle_inertia = wp.zeros(n, dtype=wp.vec3, device=dev)
        self.particle_q_colour = wp.zeros(n, dtype=wp.vec3, device=dev)
        self.particle_qd_last = wp.zeros(n, dtype=wp.vec3, device=dev)
        self.particle_has_last = wp.zeros(n, dtype=wp.int32, device=dev)
        self.particle_contact_count = wp.zeros(n, dtype=wp.int32, device=dev)
        self.particle_contact = wp.zeros((n, PARTICLE_CONTACT_CAPACITY), dtype=wp.int32, device=dev)
        self.contact_overflow = wp.zeros(1, dtype=wp.int32, device=dev)
        self.empty_transform = wp.zeros(1, dtype=wp.transform, device=dev)
        self.empty_twist = wp.zeros(1, dtype=wp.spatial_vector, device=dev)
        self.empty_vec3 = wp.zeros(1, dtype=wp.vec3, device=dev)
        # Without two-way coupling: no body is coupled, and the per-body lists are placeholders.
        self.no_body_lists = (wp.zeros(max(int(model.body_count), 1), dtype=wp.int32, device=dev),
                              wp.zeros(1, dtype=wp.int32, device=dev), wp.zeros((1, 1), dtype=wp.int32, device=dev),
                              wp.zeros(1, dtype=wp.int32, device=dev))
        self.contact_capacity = 0
        self.attach = empty_attachments(dev)  # the solver sets the model's (.attachments)
        self.dat = disabled_dat(dev)  # rigid–soft DAT references (..dat; the solver sets them when enabled)
        self.friction_epsilon = float(friction_epsilon)
        # Penalty ramp of particle–shape contacts (rigid_avbd_linear_beta / rigid_contact_k_start); 0 = off.
        self.ramp_beta = float(ramp_beta)
        self.ramp_k_start = float(ramp_k_start)
        self.full_surface = False  # the last step's contacts held edge/face records (set by prepare_contacts)
        self.log_barrier = bool(log_barrier)  # rigid_soft_contact_use_log_barrier (see contacts.py)
        self.ramp_records = None  # (count, capacity) of this step's Contacts, set by prepare_contacts
        # First iterate of a step: (False, default) the inertial target y, where newton.solvers.SolverVBD
        # starts, or (True) the paper's adaptive initialization; see predict.py for the measured choice.
        self.adaptive_init = False
        self._allocate_contacts(1)
        self.elements = self._element_data(model)

    def _allocate_contacts(self, capacity: int) -> None:
        dev = self.device
        self.contact_capacity = capacity
        self.contact_body = wp.full(capacity, -1, dtype=wp.int32, device=dev)
        self.contact_point = wp.zeros(capacity, dtype=wp.vec3, device=dev)
        self.contact_normal = wp.zeros(capacity, dtype=wp.vec3, device=dev)
        self.contact_disp = wp.zeros(capacity, dtype=wp.vec3, device=dev)
        self.contact_material = wp.zeros(capacity, dtype=wp.vec4, device=dev)
        self.contact_k = wp.zeros(capacity, dtype=float, device=dev)
        data = ContactData()
        data.particle_contact_count = self.particle_contact_count
        data.particle_contact = self.particle_contact
        data.body = self.contact_body
        data.body_q = self.empty_transform  # the step's body iterate when the model has bodies
        data.point = self.contact_point
        data.normal = self.contact_normal
        data.disp = self.contact_disp
        data.material = self.contact_material
        data.k = self.contact_k
        data.ramp = int(self.ramp_beta > 0.0)
        data.barrier = int(self.log_barrier)
        data.corners = wp.full(1, wp.vec3i(-1, -1, -1), dtype=wp.vec3i, device=dev)  # the step's Contacts' arrays
        data.weights = wp.zeros(1, dtype=wp.vec3, device=dev)
        data.friction_epsilon = self.friction_epsilon
        data.attach = self.attach
        data.dat = self.dat
        self.contact_data = data

    def ensure_contact_capacity(self, soft_contact_max: int, full_surface: bool = False) -> None:
        """Grow the per-contact buffers to the ``Contacts`` buffer's capacity (first step, or a larger one), and
        the per-particle lists to ``FULL_SURFACE_CAPACITY`` for contacts with edge and face records."""
        if full_surface and self.particle_contact.shape[1] < FULL_SURFACE_CAPACITY:
            self.particle_contact = wp.zeros((self.particle_contact.shape[0], FULL_SURFACE_CAPACITY), dtype=wp.int32,
                                             device=self.device)
            self.contact_capacity = 0  # rebuild the struct around the new lists
        if soft_contact_max > self.contact_capacity:
            self._allocate_contacts(max(int(soft_contact_max), 1))

    @staticmethod
    def _element_data(model) -> ElementData:
        dev = model.device
        adj = build_element_adjacency(model)
        el = ElementData()
        el.tri_indices = _or_empty(model.tri_indices, wp.int32, dev, 2, 3)
        el.tri_poses = _or_empty(model.tri_poses, wp.mat22, dev)
        el.tri_areas = _or_empty(model.tri_areas, float, dev)
        el.tri_materials = _or_empty(model.tri_materials, float, dev, 2, 5)
        el.edge_indices = _or_empty(model.edge_indices, wp.int32, dev, 2, 4)
        el.edge_rest_angle = _or_empty(model.edge_rest_angle, float, dev)
        el.edge_rest_length = _or_empty(model.edge_rest_length, float, dev)
        el.edge_bending_properties = _or_empty(model.edge_bending_properties, float, dev, 2, 2)
        el.tet_indices = _or_empty(model.tet_indices, wp.int32, dev, 2, 4)
        el.tet_poses = _or_empty(model.tet_poses, wp.mat33, dev)
        el.tet_volumes = tet_rest_volumes(model)
        el.tet_materials = _or_empty(model.tet_materials, float, dev, 2, 3)
        el.spring_indices = _or_empty(model.spring_indices, wp.int32, dev)
        el.spring_rest_length = _or_empty(model.spring_rest_length, float, dev)
        el.spring_stiffness = _or_empty(model.spring_stiffness, float, dev)
        el.spring_damping = _or_empty(model.spring_damping, float, dev)
        for name in ("tri", "edge", "tet", "spring"):
            setattr(el, f"{name}_start", getattr(adj, f"{name}_start"))
            setattr(el, f"{name}_entry", getattr(adj, f"{name}_entry"))
        return el
