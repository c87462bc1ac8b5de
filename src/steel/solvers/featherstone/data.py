"""SolverFeatherstone's kernel arguments, declared once: the Warp structs its kernels take, built per solver.

Why structs. The stage kernels took 25 to 42 loose parameters each, passed as positional lists, where two
arrays of one type (``joint_limit_ke`` and ``joint_limit_kd``, ``contact_point0`` and ``contact_point1``)
could swap unnoticed. Each recurring group is one struct below, named by what it holds, so a kernel's
signature is a handful of groups plus the arrays that change from step to step (the states, whose input
and output swap every step, and the control, which the caller may pass anew each step) and the step's
scalars. The structs are shared where the group recurs: ``Trees`` and ``Buffers`` by :mod:`.forces` and
:mod:`.advance`, ``ContactBodies`` by :mod:`.contacts` and :mod:`.particles`.

Built once. :class:`KernelArgs` builds the structs at construction and keeps them: a struct is packed by
reference and keyed by identity in :func:`steel.launches.launch`, so one kept struct replays its recorded
launch, where a struct rebuilt per step would record a new launch every step (and pay its packing).
Fields are reassigned in place, never the struct replaced, when an array they hold is rebound:

* the model's arrays (``DofForceModel``, ``ContactBodies``), whenever one is rebound on the model
  (:meth:`KernelArgs.bind_model`, every step), so gains and materials stay read live as with loose
  arguments, whether edited in place (``model.joint_target_ke.assign``) or replaced;
* the contact buffers (``RigidContacts``, ``SoftContacts``), whenever any of their arrays differs from
  the last step's (:meth:`KernelArgs.rigid_contacts`, :meth:`KernelArgs.soft_contacts`): a new
  ``Contacts`` object, another pipeline's, or an array rebound on the same object.

Each check fetches the arrays with one ``operator.attrgetter`` call and compares the tuple with the last
one by identity, on the host (no device work).

Rejected: keeping the per-step arrays (states, control) in structs too. Input and output states swap every
step, so that would be two structs per solver kept in step with the caller's states, for a few arguments.

Size. A CPU launch copies its whole argument block per thread, structs included, whether or not the
kernel reads a field; the per-contact kernels (one thread per contact slot) therefore take the small
``ContactBodies``/``ContactChains`` groups rather than the solver-wide ``Buffers``.

Gradients: the structs hold the arrays themselves, so an array's ``grad`` travels with it as with a loose
argument (Warp builds a struct's adjoint from its fields' gradients).

``FeatherstoneData`` (in :mod:`.solver`) documents the per-step buffers that ``Buffers`` views.
"""

from __future__ import annotations

import operator

import warp as wp

import newton


@wp.struct
class Trees:
    """The articulation trees and the dense mass-matrix layout in use. Comments: meaning [units] (shape)."""

    tree_start: wp.array[wp.int32]  # first entry of each articulation in tree_joint  (articulation + 1,)
    tree_joint: wp.array[wp.int32]  # joints of every articulation, parents first  (articulated joint,)
    dof_start: wp.array[wp.int32]  # first DOF of each articulation  (articulation,)
    dof_count: wp.array[wp.int32]  # DOF count n of each articulation  (articulation,)
    mass_start: wp.array[wp.int32]  # first entry of each articulation's n x n block in mass_matrix,
    #                                 mass_factor and Buffers.contact_mass (the core's or the tile path's)
    #                                 (articulation,)
    mass_matrix: wp.array[float]  # H with armature, row-major blocks [kg, kg·m, kg·m²]  (sum n²,)
    mass_factor: wp.array[float]  # Cholesky factor of A = H + K + diag(D), same layout (.advance)  (sum n²,)


@wp.struct
class Buffers:
    """The solver's per-step buffers (``FeatherstoneData``; see its table for meaning, units and shape)."""

    body_kinematic: wp.array[wp.int32]
    body_f_work: wp.array[wp.spatial_vector]
    joint_tau: wp.array[float]
    dof_implicit: wp.array[float]
    dof_implicit_factored: wp.array[float]
    dof_limit_push: wp.array[float]
    dof_limit_response: wp.array[float]
    articulation_refactor: wp.array[wp.int32]
    contact_mass: wp.array[float]
    articulation_contact: wp.array[wp.int32]
    articulation_invalid: wp.array[wp.int32]
    joint_qdd: wp.array[float]
    mimic_leader: wp.array[wp.int32]
    mimic_coeffs: wp.array[wp.vec2]
    has_mimic: int  # 1 when the model has a mimic joint, else 0


@wp.struct
class DofForceModel:
    """The model's per-DOF joint-force arrays (:mod:`.forces`). Comments: meaning [units] (shape)."""

    limit_lower: wp.array[float]  # lower limit [m or rad]  (dof,)
    limit_upper: wp.array[float]  # upper limit [m or rad]  (dof,)
    limit_ke: wp.array[float]  # limit stiffness [N/m or N·m/rad]  (dof,)
    limit_kd: wp.array[float]  # limit damping [N·s/m or N·m·s/rad]  (dof,)
    target_ke: wp.array[float]  # drive stiffness [N/m or N·m/rad]  (dof,)
    target_kd: wp.array[float]  # drive damping [N·s/m or N·m·s/rad]  (dof,)
    damping: wp.array[float]  # passive damping [N·s/m or N·m·s/rad]  (dof,)
    stiffness: wp.array[float]  # passive spring stiffness [N/m or N·m/rad]  (dof,)
    rest_q: wp.array[float]  # passive spring rest coordinate [m or rad]  (joint coordinate,)


@wp.struct
class ContactBodies:
    """What the contact stages (:mod:`.contacts`, :mod:`.particles`) read of shapes and bodies: the model's
    materials and COMs, and which bodies take a reaction. Comments: meaning [units] (shape)."""

    shape_body: wp.array[wp.int32]  # body of each shape, -1: static  (shape,)
    shape_ke: wp.array[float]  # contact stiffness [N/m]  (shape,)
    shape_kd: wp.array[float]  # contact damping [N·s/m]  (shape,)
    shape_kf: wp.array[float]  # friction regularization [N·s/m]  (shape,)
    shape_ka: wp.array[float]  # adhesion distance [m]  (shape,)
    shape_mu: wp.array[float]  # friction coefficient, non-dimensional  (shape,)
    body_com: wp.array[wp.vec3]  # body COM in the body frame [m]  (body,)
    body_kinematic: wp.array[wp.int32]  # 1: kinematic, takes no contact force (Buffers.body_kinematic)  (body,)
    body_articulation: wp.array[wp.int32]  # articulation of each body, -1: outside every one  (body,)
    articulation_invalid: wp.array[wp.int32]  # 1: this step's input was non-finite, its contacts are
    #                                           dropped (Buffers.articulation_invalid)  (articulation,)


@wp.struct
class ContactChains:
    """The DOF chains and mass-matrix blocks the implicit contact term (:mod:`.contacts`) is added over."""

    body_joint: wp.array[wp.int32]  # inbound articulated joint of each body, -1: none  (body,)
    joint_qd_start: wp.array[wp.int32]  # first DOF of each joint (the model's)  (joint + 1,)
    joint_parent_joint: wp.array[wp.int32]  # joint of the parent body, -1 at a root  (joint,)
    dof_parent: wp.array[wp.int32]  # previous DOF on the chain to the root, -1 at the root  (dof,)
    dof_start: wp.array[wp.int32]  # first DOF of each articulation (Trees.dof_start)  (articulation,)
    dof_count: wp.array[wp.int32]  # DOF count of each articulation (Trees.dof_count)  (articulation,)
    mass_start: wp.array[wp.int32]  # block of each articulation in Buffers.contact_mass (Trees.mass_start)
    #                                 (articulation,)
    mirror: int  # 1: fill both triangles of a block (the tile path), 0: the lower one


@wp.struct
class RigidContacts:
    """One rigid contact buffer as the collision pipeline hands it over (``newton.Contacts.rigid_contact_*``);
    normal from shape0 to shape1. Comments: meaning [units] (shape)."""

    count: wp.array[wp.int32]  # live contacts  (1,)
    normal: wp.array[wp.vec3]  # contact normal, world  (capacity,)
    shape0: wp.array[wp.int32]  # first shape  (capacity,)
    point0: wp.array[wp.vec3]  # contact point on shape0, its body frame [m]  (capacity,)
    margin0: wp.array[float]  # effective radius plus margin of shape0 [m]  (capacity,)
    shape1: wp.array[wp.int32]  # second shape  (capacity,)
    point1: wp.array[wp.vec3]  # contact point on shape1, its body frame [m]  (capacity,)
    margin1: wp.array[float]  # effective radius plus margin of shape1 [m]  (capacity,)
    stiffness: wp.array[float]  # per-contact stiffness [N/m], 0: the materials'; null when not provided  (capacity,)
    damping: wp.array[float]  # per-contact damping [N·s/m], 0: the materials'; null with stiffness  (capacity,)
    friction: wp.array[float]  # per-contact friction scale, 0: the materials'; null with stiffness  (capacity,)
    surface_velocity: wp.array[wp.vec3]  # tangential surface velocity [m/s]; null when not provided  (capacity,)


@wp.struct
class SoftContacts:
    """One particle-shape contact buffer (``newton.Contacts.soft_contact_*``). Comments: meaning [units] (shape)."""

    count: wp.array[wp.int32]  # live contacts  (1,)
    particle: wp.array[wp.int32]  # particle of each contact  (capacity,)
    shape: wp.array[wp.int32]  # shape of each contact  (capacity,)
    body_pos: wp.array[wp.vec3]  # contact point on the shape, its body frame [m]  (capacity,)
    normal: wp.array[wp.vec3]  # contact normal out of the shape, world  (capacity,)


# (struct field, Model or Contacts attribute) of the views rebound from the model and the contacts.
_RIGID_FIELDS = tuple(
    (field, "rigid_contact_" + field)
    for field in ("count", "normal", "shape0", "point0", "margin0", "shape1", "point1", "margin1", "stiffness",
                  "damping", "friction", "surface_velocity")
)
_SOFT_FIELDS = tuple((field, "soft_contact_" + field) for field in ("count", "particle", "shape", "body_pos", "normal"))
_DOF_FIELDS = tuple(
    (field, "joint_" + field)
    for field in ("limit_lower", "limit_upper", "limit_ke", "limit_kd", "target_ke", "target_kd", "damping",
                  "stiffness", "rest_q")
)
_BODY_FIELDS = (("shape_body", "shape_body"), ("body_com", "body_com")) + tuple(
    ("shape_" + field, "shape_material_" + field) for field in ("ke", "kd", "kf", "ka", "mu")
)
_MODEL_ARRAYS = operator.attrgetter(*(attribute for _, attribute in _DOF_FIELDS + _BODY_FIELDS))
_RIGID_ARRAYS = operator.attrgetter(*(attribute for _, attribute in _RIGID_FIELDS))
_SOFT_ARRAYS = operator.attrgetter(*(attribute for _, attribute in _SOFT_FIELDS))


def _rebind(struct, fields, arrays: tuple, device) -> None:
    """``struct.<field> = array`` for each field and array, in order; an absent (None) array as an empty one."""
    for (field, _), array in zip(fields, arrays):
        setattr(struct, field, _present(struct, field, array, device))


def _present(struct, field: str, array, device):
    """``array``, or for None an empty array of the field's type: a null array to the kernels (``if a:`` is false)
    that ``wp.Tape`` can take the gradient of (its adjoint of a struct reads ``.grad`` of every array field)."""
    if array is not None:
        return array
    return wp.empty(0, dtype=struct._cls.vars[field].type.dtype, device=device)


class KernelArgs:
    """The struct arguments of one solver's kernels, built once (see the module docstring).

    Args:
        model: the solver's model.
        plan: its articulation plan.
        data: the core's buffers (:class:`steel.articulation.ArticulationData`).
        work: the solver's buffers (``FeatherstoneData``).
        mass: ``(mass_start, mass_matrix, mass_factor)`` of the layout in use: the core's, or the tile path's.
        mirror: whether the contact term fills both triangles of a block (the tile path).
    """

    def __init__(self, model: newton.Model, plan, data, work, mass: tuple, mirror: bool):
        self._device = model.device
        trees = Trees()
        trees.tree_start = plan.tree_start
        trees.tree_joint = plan.tree_joint
        trees.dof_start = plan.dof_start
        trees.dof_count = plan.dof_count_per_articulation
        trees.mass_start, trees.mass_matrix, trees.mass_factor = mass
        self.trees = trees

        buffers = Buffers()
        for name in Buffers.vars:
            setattr(buffers, name, getattr(work, name))
        buffers.has_mimic = int(work.has_mimic)
        self.buffers = buffers

        self.kinematics = data.kinematics  # the core's KinematicsBuffers, which FK writes

        chains = ContactChains()
        chains.body_joint = plan.body_joint
        chains.joint_qd_start = model.joint_qd_start
        chains.joint_parent_joint = plan.joint_parent_joint
        chains.dof_parent = plan.dof_parent
        chains.dof_start = plan.dof_start
        chains.dof_count = plan.dof_count_per_articulation
        chains.mass_start = trees.mass_start
        chains.mirror = int(mirror)
        self.chains = chains

        self.dofs = DofForceModel()
        self.bodies = ContactBodies()
        self.bodies.body_kinematic = work.body_kinematic
        self.bodies.body_articulation = plan.body_articulation
        self.bodies.articulation_invalid = work.articulation_invalid
        self._model_arrays = None  # the model arrays dofs and bodies hold (compared by identity)
        self.bind_model(model)

        self._rigid = RigidContacts()
        self._rigid_arrays = None  # the arrays self._rigid holds (compared by identity)
        self._soft = SoftContacts()
        self._soft_arrays = None

    def bind_model(self, model: newton.Model) -> None:
        """Rebind ``dofs`` and ``bodies`` (their fields, in place) where a model array differs from the last call's."""
        arrays = _MODEL_ARRAYS(model)  # one C call; tuples of arrays compare by identity
        if arrays != self._model_arrays:
            split = len(_DOF_FIELDS)
            _rebind(self.dofs, _DOF_FIELDS, arrays[:split], model.device)
            _rebind(self.bodies, _BODY_FIELDS, arrays[split:], model.device)
            self._model_arrays = arrays

    def rigid_contacts(self, contacts: newton.Contacts) -> RigidContacts:
        """The struct view of ``contacts``' rigid buffer, rebound where an array differs from the last call's."""
        arrays = _RIGID_ARRAYS(contacts)  # one C call; tuples of arrays compare by identity
        if arrays != self._rigid_arrays:
            _rebind(self._rigid, _RIGID_FIELDS, arrays, self._device)
            self._rigid_arrays = arrays
        return self._rigid

    def soft_contacts(self, contacts: newton.Contacts) -> SoftContacts:
        """The struct view of ``contacts``' particle-shape buffer, rebound as :meth:`rigid_contacts`."""
        arrays = _SOFT_ARRAYS(contacts)
        if arrays != self._soft_arrays:
            _rebind(self._soft, _SOFT_FIELDS, arrays, self._device)
            self._soft_arrays = arrays
        return self._soft
