"""``SteelModel``: what SolverSteel derives from its model and options once, for every stage to read.

The stages of a step (``solver.py``'s recipe) take ``(sm, sd, ...)``: this ``SteelModel`` and the per-step
``SteelData`` (``step_data.py``), never the solver object, so a stage's signature says what it may read. The
model side changes only at construction and on ``notify_model_changed`` (:meth:`SteelModel.refresh`):

==========================  ========================================================================  ============
attribute                   meaning                                                                   built by
==========================  ========================================================================  ============
``model``                   the ``newton.Model``                                                      the caller
``options``                 the resolved ``SteelOptions`` (capacities sized, ``friction_anchor_beta``  options.py
                            resolved); step options change here when the solver's are set
``core``                    the articulation core: plan (trees, DOF layout) and its work buffers     articulation/
``tables``                  who responds, which world solves what, free bodies, kinematic DOFs        tables.py
``attributes``              ``steel:`` rigid-body attributes (damping, speed caps, depenetration)    attributes.py
``shape_attributes``        ``steel:`` shape attributes (condim, torsion radius, adhesion)           attributes.py
``mimic`` / ``no_mimic``    mimic constraint pairs (``None`` without) / an empty stand-in            joints/mimic.py
``joint_friction``          joint friction rows' coefficients and load scratch (``None``: off)        joints/friction.py
``closures``                loop-closing joints and equality constraints solved as rows             joints/loop_closures.py
``preeliminate``            bilateral rows eliminated before the sweep (``False``: none)             sweep/preelimination.py
``shock_up``                heavy-on-light shock propagation setup (``None``: off)                   sweep/shock.py
``rigid_contact_capacity``  contact slots the solver was sized for                                   rows/capacity.py
``row_capacities``          ``(articulated, free-body)`` rows per world, and the J stride            rows/capacity.py
``contact_model``           ``ContactModel`` struct of the contact stages                            contacts/data.py
``drive_model``             ``DriveModel`` struct of the free dynamics                               predict.py
``finish_model``            ``FinishModel`` of the velocity finish (a ``CachedStruct``, refilled      finish.py
                            when an array is replaced)
==========================  ========================================================================  ============

Construction validates what only the model can tell (inverted limits, massless DOFs, options that need a
model feature) in the order the solver always did, so the first error raised is unchanged; the solver keeps
the validation of its arguments (options, model type, values) and runs it before this.
"""

from __future__ import annotations

import warnings

import numpy as np

import newton

from ...articulation import ArticulationCore
from ...articulation.checks import body_name, dof_joint, inverted_limits, joint_name, massless_dofs
from . import attributes as _attributes
from .sweep.mass_ratio import warn_mass_ratio
from ...structs import CachedStruct
from .options import SteelOptions
from .predict import drive_model
from .finish import FinishModel
from .contacts.adhesion import check_adhesion_options
from .rows.capacity import resolved_rigid_contact_max, row_capacities
from .contacts.compliance import warn_point_friction
from .contacts.data import contact_model
from .joints.friction import JointFriction, check_joint_friction_options
from .joints.loop_closures import LoopClosures
from .joints.mimic import Mimic, empty_mimic_model
from .sweep.preelimination import check_preelimination_options, preelimination_plan
from .contacts.shared_anchor import warn_shared_anchor_patches
from .contacts.torsion import check_torsion_options
from .sweep.shock import shock_setup
from .sleeping.stages import check_sleeping_model
from .tables import SteelTables, cross_world_global_bodies

FRICTION_ANCHOR_BETA_DEFAULT = 0.2  # what friction_anchor_beta=None resolves to where friction patches apply


class SteelModel:
    """SolverSteel's model-side data (see the module docstring). Raises what the model checks raise."""

    def __init__(self, model: newton.Model, opts: SteelOptions):
        self.model = model
        self.options = opts
        self.core = ArticulationCore(model)
        self.tables = SteelTables(model, self.core.plan)
        _check_articulations(model, self.core, self.tables)
        if opts.enable_sleeping:
            check_sleeping_model(model, opts)
        self.attributes = _attributes.RigidBodyAttributes(model)
        self.shape_attributes = _attributes.ShapeContactAttributes(model)
        if self.shape_attributes.adhesion_enabled:
            check_adhesion_options(opts, torsion=self.shape_attributes.patch_torsion_enabled)
        if self.shape_attributes.patch_torsion_enabled:
            check_torsion_options(opts)
        check_joint_friction_options(opts)
        check_preelimination_options(opts)
        self.joint_friction = JointFriction(model) if opts.enable_joint_friction else None
        self.mimic = Mimic(model) if Mimic.present(model) else None
        self.no_mimic = empty_mimic_model(model.device)
        self.closures = LoopClosures(model)
        self.preeliminate = preelimination_plan(model, opts, self.closures.joint_list if self.closures.count else [])
        _warn_cross_world_global_bodies(model, self.tables)
        warn_mass_ratio(model, opts.iterations, self.tables.body_responds_np.astype(bool))
        self.shock_up = shock_setup(model, self.tables, self.core.plan)
        free = self.tables.articulation_is_free_body_np
        has_articulated = bool((free == 0).any()) if len(free) else False
        art_cap, free_cap = row_capacities(model, opts, has_articulated, bool(self.tables.body_is_free_np.any()),
                                           self.shape_attributes.free_rows_per_contact,
                                           4 if self.shape_attributes.patch_torsion_enabled else 3)
        self.row_capacities = (art_cap, free_cap, max(self.core.plan.max_dof_count, 1))
        # The resolved values are what the instance reports (capacities sized from the model,
        # FRICTION_ANCHOR_BETA_DEFAULT for an omitted friction_anchor_beta).
        opts.articulation_constraint_max = art_cap
        opts.free_body_constraint_max = free_cap
        if opts.friction_anchor_beta is None:
            opts.friction_anchor_beta = FRICTION_ANCHOR_BETA_DEFAULT
            if opts.contact_compliance or opts.friction_mode != "fixed_normal":
                # Both solve point friction only (contacts/compliance.py, contacts/friction_modes.py).
                warn_point_friction("contact_compliance=True" if opts.contact_compliance
                                    else f"friction_mode={opts.friction_mode!r}")
                opts.friction_anchor_beta = 0.0
        warn_shared_anchor_patches(opts)
        self.rigid_contact_capacity = resolved_rigid_contact_max(model)
        self.joint_row_model_cache = None  # (arrays, JointRowModel) of rows/common.joint_row_model
        self.finish_model = CachedStruct(FinishModel)  # refilled from finish.finish_model_values each step
        self._build_structs()

    def _build_structs(self) -> None:
        """The kernels' argument structs over the arrays the tables and attributes hold now."""
        self.contact_model = contact_model(self.model, self.core.plan, self.tables, self.attributes,
                                           self.shape_attributes)
        self.drive_model = drive_model(self.model, self.tables)

    def refresh_checked(self, flags: int) -> None:
        """Re-read the parts of a model change that validate as they read (``ValueError`` before any change):
        the ``steel:`` shape attributes and the mimic pairs. Runs before the sleeping islands compare the model."""
        if flags & int(newton.ModelFlags.SHAPE_PROPERTIES):
            self.shape_attributes.refresh()
        if self.mimic is not None and flags & (int(newton.ModelFlags.JOINT_PROPERTIES)
                                               | int(newton.ModelFlags.CONSTRAINT_PROPERTIES)):
            self.mimic = Mimic(self.model)

    def refresh(self, flags: int) -> None:
        """Re-read the tables, body attributes and shock setup that ``flags`` (``newton.ModelFlags``) names, and
        rebuild the kernels' structs (after :meth:`refresh_checked`)."""
        model = self.model
        if flags & (int(newton.ModelFlags.BODY_PROPERTIES) | int(newton.ModelFlags.JOINT_DOF_PROPERTIES)):
            self.tables.refresh()
        if flags & int(newton.ModelFlags.BODY_PROPERTIES):
            self.attributes.refresh()
        if flags & (int(newton.ModelFlags.BODY_PROPERTIES) | int(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
                    | int(newton.ModelFlags.MODEL_PROPERTIES)):
            self.shock_up = shock_setup(model, self.tables, self.core.plan)  # masses or gravity changed
        self._build_structs()  # tables and attributes re-upload their arrays: the structs name the new ones


def _check_articulations(model: newton.Model, core: ArticulationCore, tables: SteelTables) -> None:
    """Inverted joint limits and DOFs without inertia raise ``ValueError`` at construction."""
    for j, d in inverted_limits(model, include_nan=True)[:1]:
        lower, upper = float(model.joint_limit_lower.numpy()[d]), float(model.joint_limit_upper.numpy()[d])
        problem = "a NaN limit" if np.isnan(lower) or np.isnan(upper) else "joint_limit_lower above joint_limit_upper"
        raise ValueError(
            f"{joint_name(model, j)} DOF {d} has {problem} (joint_limit_lower={lower!r}, joint_limit_upper={upper!r}); "
            "no coordinate satisfies it"
        )
    for d in massless_dofs(model, core.plan, tables.dof_is_kinematic_np):
        j = dof_joint(model, d)
        child = int(model.joint_child.numpy()[j])
        raise ValueError(
            f"{joint_name(model, j)} DOF {d} moves no mass: {body_name(model, child)} and its subtree have zero "
            "mass or inertia along it and the DOF has no armature; give the bodies mass and inertia, add "
            "joint_armature, or make the body kinematic"
        )


def _warn_cross_world_global_bodies(model: newton.Model, tables: SteelTables) -> None:
    bodies = cross_world_global_bodies(model, tables)
    if bodies:
        names = ", ".join(f"{b} ('{model.body_label[b]}')" if b < len(model.body_label) else str(b) for b in bodies[:5])
        warnings.warn(
            f"SolverSteel: global (world -1) articulations [{names}] can touch moving bodies of several worlds; "
            "such contacts cannot be solved (they would couple the worlds) and are dropped and flagged in "
            "constraint_overflow. Use world geometry or a kinematic body for shared scenery.",
            newton.NewtonWarning, stacklevel=4,
        )
