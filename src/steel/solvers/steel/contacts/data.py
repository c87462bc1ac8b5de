"""The contact stages' argument groups, declared once: what the contact-row and history kernels read and write.

The contact-row kernel (``contacts/rows.py``) used to take 95 loose parameters from a positional list, so two
same-typed arguments swapped would have gone unnoticed. Its inputs come in groups that change at different
times, and each group is one Warp struct, built once and refilled only when what it holds changes:

=================  ====================================================================  =========================
struct             holds                                                                 rebuilt when
=================  ====================================================================  =========================
``ContactModel``   shape materials and ``steel:`` shape attributes, body COMs, the plan's  a model change notice
                   body/joint/articulation maps, the solver's body tables, gravity        (``SteelContactData.refresh``)
``ContactParams``  the resolved contact options and step factors                        a value changes (compared
                                                                                         each step on the host)
``ContactInput``   the arrays of one ``newton.Contacts`` buffer the rows read             another buffer is passed
``ContactSlots``   the solver's per-contact-slot results (row, world, anchors, age)      never (allocated once)
=================  ====================================================================  =========================

The history's arrays are ``HistoryArrays`` (``contacts/history.py``), the row pool ``RowBuffers`` (``data.py``).
Launches replay their packed arguments (``steel.launches``): a struct passes by reference, so a field assigned
after the first launch reaches every replay, and a struct built anew each step would defeat the replay. The
kernels read the fields where they use them (``cm.shape_mu[s0]``); the ``wp.func`` helpers they call keep
taking single arrays, so no ~1 kB struct is copied per call (see ``data.py`` on ``RowBuffers``).
"""

from __future__ import annotations

import warp as wp

from ..data import UNBOUNDED
from .friction_modes import MODE_INDEX
from ....structs import CachedStruct, struct_of


@wp.struct
class ContactModel:
    """Per-shape, per-body and per-articulation arrays the contact rows read. Comments: meaning [units] (shape)."""

    shape_count: int  # shapes of the model; the history's pair key is s0 * shape_count + s1
    shape_body: wp.array[int]  # body of each shape, -1: static  (shape,)
    shape_mu: wp.array[float]  # sliding friction coefficient (non-dimensional)  (shape,)
    shape_mu_torsional: wp.array[float]  # torsional friction [m] (steel:condim 4/6, contacts/angular.py)  (shape,)
    shape_mu_rolling: wp.array[float]  # rolling friction [m] (steel:condim 6)  (shape,)
    shape_condim: wp.array[wp.int32]  # steel:condim 1, 3, 4 or 6  (shape,)
    shape_torsion_radius: wp.array[float]  # steel:min_torsional_patch_radius [m] (contacts/torsion.py)  (shape,)
    shape_adhesion: wp.array[float]  # adhesion pull [N] (contacts/adhesion.py)  (shape,)
    shape_restitution: wp.array[float]  # restitution coefficient (non-dimensional)  (shape,)
    body_com: wp.array[wp.vec3]  # centre of mass in the body frame [m]  (body,)
    joint_qd_start: wp.array[int]  # first DOF of each joint  (joint + 1,)
    body_articulation: wp.array[int]  # articulation of each body, -1: outside every articulation  (body,)
    body_joint: wp.array[int]  # the joint whose child the body is, -1: none  (body,)
    joint_parent_joint: wp.array[int]  # the joint above each joint in its tree, -1: the root  (joint,)
    art_dof_start: wp.array[int]  # first DOF of each articulation  (articulation,)
    art_dof_count: wp.array[int]  # DOFs of each articulation  (articulation,)
    art_mass_start: wp.array[int]  # first entry of each articulation's mass-matrix block  (articulation,)
    body_row_world: wp.array[wp.int32]  # world whose sweep solves the body's rows (tables.py)  (body,)
    body_is_global: wp.array[wp.int32]  # 1 for a body of world -1  (body,)
    body_responds: wp.array[wp.int32]  # 1 if an impulse on the body moves a non-prescribed DOF  (body,)
    body_is_free: wp.array[wp.int32]  # 1 for a free single body  (body,)
    body_max_depenetration: wp.array[float]  # steel:rigid_body_max_depenetration_velocity [m/s]  (body,)
    gravity: wp.array[wp.vec3]  # gravity of each world [m/s²]; the sweep key's height axis is -gravity[0]  (world,)


@wp.struct
class ContactParams:
    """The contact options the rows read, resolved (``None`` replaced) and scaled by the step's bias factor."""

    baumgarte: float  # share of a penetration pushed out per step, times the bias factor (non-dimensional)
    regularization: float  # contact_regularization g of penetrating rows (non-dimensional)
    speculative_scale: float  # share of a positive gap allowed to close per step (non-dimensional)
    gap_gate: float  # [m] contacts farther apart get no rows; -1: no gate
    friction_gap_max: float  # [m] contacts farther apart get no friction rows; UNBOUNDED: none
    friction_scale: float  # factor on the mean shape friction (non-dimensional)
    restitution_enabled: int  # 1: enable_restitution
    restitution_threshold: float  # [m/s] closing speed at which a contact rebounds
    torsion_enabled: int  # 1: some shape has steel:condim 4 or 6 (contacts/angular.py)
    patch_torsion_enabled: int  # 1: some shape has a torsional patch radius (contacts/torsion.py)
    adhesion_enabled: int  # 1: some shape has adhesion (contacts/adhesion.py)
    friction_mode: int  # MODE_INDEX of friction_mode (contacts/friction_modes.py)
    compliance_enabled: int  # 1: contact_compliance (contacts/compliance.py)
    shared_anchor: int  # 1: contact_shared_anchor (contacts/shared_anchor.py)
    friction_shared_anchor: int  # 1: contact_friction_shared_anchor
    warm_start: int  # 1: seed rows from the shape-pair history (contacts/history.py)
    anchor_beta: float  # friction_anchor_beta times the bias factor; 0: point friction (non-dimensional)
    contact_warmstart: int  # 1: seed rows from the matched predecessor instead (contacts/warmstart.py)
    warmstart_decay: float  # contact_warmstart_decay (non-dimensional)


@wp.struct
class ContactInput:
    """The arrays of one ``newton.Contacts`` buffer that the rows read (placeholders for absent optional ones)."""

    count: wp.array[wp.int32]  # live contacts  (1,)
    normal: wp.array[wp.vec3]  # unit normal from shape 0 to shape 1 (world)  (contact,)
    shape0: wp.array[wp.int32]  # (contact,)
    shape1: wp.array[wp.int32]  # (contact,)
    point0: wp.array[wp.vec3]  # support point in body 0's frame [m]  (contact,)
    point1: wp.array[wp.vec3]  # support point in body 1's frame [m]  (contact,)
    offset0: wp.array[wp.vec3]  # from the support point to the effective surface point, body 0's frame [m]  (contact,)
    offset1: wp.array[wp.vec3]  # the same on body 1 [m]  (contact,)
    margin0: wp.array[float]  # [m]  (contact,)
    margin1: wp.array[float]  # [m]  (contact,)
    stiffness: wp.array[float]  # [N/m] with contact_compliance, else a placeholder  (contact,)
    damping: wp.array[float]  # [N·s/m] with contact_compliance, else a placeholder  (contact,)
    friction_weight: wp.array[float]  # friction scale of a compliant contact, else a placeholder  (contact,)
    surface_velocity_enabled: int  # 1 when the buffer carries rigid_contact_surface_velocity
    surface_velocity: wp.array[wp.vec3]  # the moving surface's velocity [m/s], else a placeholder  (contact,)
    match_index: wp.array[wp.int32]  # the matched predecessor slot (contact_warmstart), else a placeholder  (contact,)
    match_generation: wp.array[wp.int32]  # the pipeline's match generation, else a placeholder  (1,)


@wp.struct
class ContactSlots:
    """What the contact rows record per contact slot, read by the history, the observables and the tests."""

    row: wp.array[wp.int32]  # first row of the contact; -1: no row on purpose, -2: lost to the capacity  (contact,)
    row_count: wp.array[wp.int32]  # rows of the contact  (contact,)
    world: wp.array[wp.int32]  # world whose sweep solved it  (contact,)
    impact: wp.array[wp.int32]  # 1: an impact this step, whose impulse seeds nothing (contacts/history.py)  (contact,)
    anchor0: wp.array[wp.vec3]  # friction anchor on body 0, body frame [m]  (contact,)
    anchor1: wp.array[wp.vec3]  # friction anchor on body 1, body frame [m]  (contact,)
    release1: wp.array[wp.vec3]  # where a released (sliding) contact re-anchors on body 1 [m]  (contact,)
    age: wp.array[wp.int32]  # steps the contact has persisted  (contact,)


def allocate_contact_slots(capacity: int, device) -> ContactSlots:
    """Per-slot result arrays for ``capacity`` contacts (at least one slot): ``row`` starts at -1, the rest at 0."""
    n = max(capacity, 1)
    dtypes = {"anchor0": wp.vec3, "anchor1": wp.vec3, "release1": wp.vec3}
    fields = {name: wp.zeros(n, dtype=dtypes.get(name, wp.int32), device=device) for name in ContactSlots.vars}
    fields["row"].fill_(-1)
    return struct_of(ContactSlots, **fields)


def contact_model(model, plan, tables, attributes, shape_attributes) -> ContactModel:
    """The ``ContactModel`` of a model, its plan (``ArticulationPlan``), the solver's ``SteelTables`` and ``steel:``
    body and shape attributes; build it again after any of them is refreshed."""
    return struct_of(
        ContactModel, plan, tables, model,
        shape_count=int(model.shape_count), shape_mu=model.shape_material_mu,
        shape_mu_torsional=model.shape_material_mu_torsional, shape_mu_rolling=model.shape_material_mu_rolling,
        shape_condim=shape_attributes.condim, shape_torsion_radius=shape_attributes.torsion_radius,
        shape_adhesion=shape_attributes.adhesion, shape_restitution=model.shape_material_restitution,
        art_dof_start=plan.dof_start, art_dof_count=plan.dof_count_per_articulation, art_mass_start=plan.mass_start,
        body_max_depenetration=attributes.max_depenetration_velocity)


def current_contact_model(sm) -> ContactModel:
    """``sm.contact_model`` holding the ``steel:rigid_body_max_depenetration_velocity`` array the model holds now.

    The struct is built at construction and on a model change notice, but a ``steel:`` body attribute array
    *replaced* on the model is read from the next step on, without a notice (``attributes.py``); its field is
    reassigned in place when the array differs (identity), so the kept struct still replays its launch."""
    cm = sm.contact_model
    current = sm.attributes.max_depenetration_velocity  # checks a replacement when first read
    if cm.body_max_depenetration is not current:
        cm.body_max_depenetration = current
    return cm


class ContactParamsCache:
    """One ``ContactParams`` per solver, refilled only when a value changes (``steel.structs.CachedStruct``)."""

    def __init__(self):
        self._cached = CachedStruct(ContactParams)

    def update(self, opts, shape_attributes, warm_start: bool, bias: float) -> ContactParams:
        """The params for options ``opts`` (resolved ``SteelOptions``), the shape attributes' switches, the history's
        warm start and the step's bias factor ``(dt / bias_dt)²`` (``contacts/history.py``)."""
        values = (
            float(opts.baumgarte * bias),
            float(opts.contact_regularization),
            float(opts.contact_speculative_scale),
            -1.0 if opts.contact_gap_gate is None else float(opts.contact_gap_gate),
            float(UNBOUNDED) if opts.contact_friction_gap_max is None else float(opts.contact_friction_gap_max),
            float(opts.contact_friction_scale),
            int(opts.enable_restitution),
            float(opts.restitution_velocity_threshold),
            int(shape_attributes.torsion_enabled),
            int(shape_attributes.patch_torsion_enabled),
            int(shape_attributes.adhesion_enabled),
            MODE_INDEX[opts.friction_mode],
            int(opts.contact_compliance),
            int(opts.contact_shared_anchor),
            int(opts.contact_friction_shared_anchor),
            int(warm_start),
            float(opts.friction_anchor_beta * bias),  # the resolved value (never None here)
            int(opts.contact_warmstart),
            float(opts.contact_warmstart_decay),
        )
        return self._cached.update(values)


class ContactInputCache:
    """One ``ContactInput`` per solver, rebuilt when another ``Contacts`` buffer or another optional array arrives.

    Invariant: the struct names the arrays of the buffer passed to the last :meth:`update` (the pipeline may
    rebind an optional array, so the key holds the arrays, not only the buffer).
    """

    def __init__(self, placeholder_float, placeholder_vec3, placeholder_int):
        self.input = ContactInput()
        self._key = None
        self._float, self._vec3, self._int = placeholder_float, placeholder_vec3, placeholder_int

    def update(self, contacts, compliance: bool, warmstart: bool) -> ContactInput:
        """The struct for ``contacts``, with the compliance and warm-start arrays only when those options are on."""
        surface = getattr(contacts, "rigid_contact_surface_velocity", None)
        material = (contacts.rigid_contact_stiffness, contacts.rigid_contact_damping,
                    contacts.rigid_contact_friction) if compliance else (self._float,) * 3
        match = (contacts.rigid_contact_match_index,
                 contacts.rigid_contact_match_generation) if warmstart else (self._int, self._int)
        arrays = (contacts.rigid_contact_count, contacts.rigid_contact_normal, contacts.rigid_contact_shape0,
                  contacts.rigid_contact_shape1, contacts.rigid_contact_point0, contacts.rigid_contact_point1,
                  contacts.rigid_contact_offset0, contacts.rigid_contact_offset1, contacts.rigid_contact_margin0,
                  contacts.rigid_contact_margin1, *material, surface, *match)
        if arrays == self._key:  # identity first: the same arrays compare equal without reading them
            return self.input
        c = self.input
        (c.count, c.normal, c.shape0, c.shape1, c.point0, c.point1, c.offset0, c.offset1, c.margin0, c.margin1,
         c.stiffness, c.damping, c.friction_weight) = arrays[:13]
        c.surface_velocity_enabled = int(surface is not None)
        c.surface_velocity = surface if surface is not None else self._vec3
        c.match_index, c.match_generation = match
        self._key = arrays
        return c
