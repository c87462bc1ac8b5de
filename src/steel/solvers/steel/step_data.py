"""``SteelData``: every array and per-step record SolverSteel writes while it steps, allocated once.

The stages take ``(sm, sd, ...)`` (``SteelModel``, ``model.py``; this ``SteelData``). Everything here is sized
at construction from the ``SteelModel`` and written by the step; ``reset`` clears what it names.

=========================  ===========================================================================  ==============
attribute                  meaning [units]                                                              shape
=========================  ===========================================================================  ==============
``rows``                   the row pool, ``rows.buffers`` the ``RowBuffers`` struct (``data.py``)      per world
``qd``                     the step's velocity: predicted, then solved [m/s or rad/s]                   (dof,)
``qdd``                    accelerations the step applies, for ``body_parent_f`` [m/s² or rad/s²]       (dof,)
``qd_position``            the position-solve velocity (``velocity_iterations > 0``, else ``None``)     (dof,)
``zero_dof``               zeros: the integrator's acceleration when it only advances positions         (dof,)
``dof_f``                  explicit joint forces [N or N·m]                                             (dof,)
``dof_diag``               implicit drive and passive terms on H's diagonal [kg or kg·m²]               (dof,)
``dof_diag_factored``      the diagonal inside the current factor [kg or kg·m²]                         (dof,)
``dofs``                   the four arrays above as the ``DofBuffers`` struct (``data.py``)
``diag_changed``           1 when this step's diagonal differs from the factored one                   (1,)
``body_contact_f``         contact wrench on each body about its COM, world [N, N·m]                    (body,)
``parent_f_kept``          ``body_parent_f`` of asleep bodies: their last awake value [N, N·m]          (body,)
``body_qd_in``             the input state's body twists as the step reads them [m/s, rad/s]            (body,)
``contact_slots``          per-contact-slot results (``ContactSlots``, ``contacts/data.py``)        (contact,)
``contact_params``         the contact options' struct, refilled when a value changes
``contact_input``          the struct of the ``Contacts`` buffer last passed
``joint_row_params``       the joint-row launch's switches and options (``JointRowParams``)
``history``                last step's contact records (``contacts/history.py``)                            (contact,)
``warm_start_contacts``    seed rows from the history (a switch tests and couplers turn off)
``warned``                 names of the once-only warnings already given
``bias_dt``                the last step's bias time [s] (``contacts/history.py``), ``None`` before any
``kinematics_carry``       the last fused finish's placement (``kinematics_carry.py``)
``compliance``             compliant-contact counters (``contacts/compliance.py``)
``prescale``               the rescaled input velocity (joint velocity limits, else ``None``)
``dormant``                speculative contacts built without a Jacobian (``contacts/dormant.py``)
``sleep``                  sleeping's device state (``enable_sleeping``, else ``None``; ``sleeping/state.py``)
=========================  ===========================================================================  ==============
"""

from __future__ import annotations

import warp as wp

from ...structs import CachedStruct, struct_of
from .data import DofBuffers, SteelRows
from .joints.rows import JointRowParams
from .kinematics_carry import KinematicsCarry
from .model import SteelModel
from .contacts.compliance import ComplianceCounters
from .contacts.data import ContactInputCache, ContactParamsCache, allocate_contact_slots
from .contacts.dormant import DormantRows
from .contacts.history import ContactHistory
from .joints.velocity_limits import VelocityLimitPrescale, velocity_limits_fused
from .sleeping.state import SleepState


class SteelData:
    """SolverSteel's per-step arrays for one ``SteelModel`` (see the module docstring)."""

    def __init__(self, sm: SteelModel):
        model, opts, dev = sm.model, sm.options, sm.model.device
        art_cap, free_cap, stride = sm.row_capacities
        self.rows = SteelRows(max(int(model.world_count), 1), art_cap, free_cap, stride, dev,
                              late_rows=sm.shape_attributes.patch_torsion_enabled,
                              clamp_rows=velocity_limits_fused(opts))
        nd = max(model.joint_dof_count, 1)
        self.qd = wp.zeros(nd, dtype=float, device=dev)
        self.qdd = wp.zeros(nd, dtype=float, device=dev)
        self.qd_position = wp.zeros(nd, dtype=float, device=dev) if opts.velocity_iterations > 0 else None
        self.zero_dof = wp.zeros(nd, dtype=float, device=dev)
        self.dof_f = wp.zeros(nd, dtype=float, device=dev)
        self.dof_diag = wp.zeros(nd, dtype=float, device=dev)
        self.dof_diag_factored = wp.zeros(nd, dtype=float, device=dev)
        self.dofs = struct_of(DofBuffers, qd=self.qd, f=self.dof_f, diag=self.dof_diag,
                              diag_factored=self.dof_diag_factored)  # never rebound
        self.diag_changed = wp.zeros(1, dtype=wp.int32, device=dev)
        nb = max(model.body_count, 1)
        self.body_contact_f = wp.zeros(nb, dtype=wp.spatial_vector, device=dev)
        self.parent_f_kept = wp.zeros(nb, dtype=wp.spatial_vector, device=dev)
        rigid_max = max(sm.rigid_contact_capacity, 1)
        self.contact_slots = allocate_contact_slots(rigid_max, dev)
        self.history = ContactHistory(rigid_max, dev)
        self.kinematics_carry = KinematicsCarry(model, dev)
        self.compliance = ComplianceCounters(dev)
        no_surface_velocity = wp.zeros(1, dtype=wp.vec3, device=dev)  # contacts without moving surfaces
        self.contact_params = ContactParamsCache()
        self.joint_row_params = CachedStruct(JointRowParams)  # joints/rows.py
        self.contact_input = ContactInputCache(self.compliance.no_material, no_surface_velocity,
                                               self.history.no_match)
        self.warm_start_contacts = True
        self.warned: set[str] = set()  # the once-only warnings already given
        self.bias_dt = None
        self.sleep = SleepState(sm, self) if opts.enable_sleeping else None
        self.prescale = VelocityLimitPrescale(model, sm.core.plan) if opts.enable_joint_velocity_limits else None
        self.body_qd_in = wp.zeros(nb, dtype=wp.spatial_vector, device=dev)
        self.dormant = DormantRows(sm, self)
