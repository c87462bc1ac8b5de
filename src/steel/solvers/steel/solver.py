"""SolverSteel: options, validation and the step recipe. Each stage lives in its own module."""

from __future__ import annotations

import warnings
import inspect
from dataclasses import fields

import numpy as np
import warp as wp

import newton
from newton.solvers import SolverBase

from ...articulation import ArticulationCore
from ...articulation.checks import BODY_MASS_FIELDS, DOF_GAIN_FIELDS, body_name, dof_joint, joint_name, negative_or_nan
from ...articulation.factor import tree_factor_mass_matrix
from ..inputs import as_python_scalar, check_contacts, check_control, check_dt, check_model_type, check_state
from . import attributes as _attributes
from .coupling import SteelCoupling
from .finish import finish_and_publish, finish_fuses, finish_step
from .kinematics_carry import input_kinematics
from .model import SteelModel
from .observables import (SteelObservableKind, SteelObservables, parent_f_outputs, publish_parent_f,
                          write_observables)
from ..option_table import signature as option_signature
from .options import (
    OPTIONS,
    STEP_OPTIONS,
    SteelOptions,
    build_options,
    check_options_on_device,
    options_docstring,
    validate_option,
)
from .sweep.pgs import sweep
from .sweep.velocity import velocity_sweep
from .predict import eval_free_dynamics, eval_joint_forces, flag_changed_diagonal, free_dynamics_fuses, predict_velocity
from .contacts.compliance import COMPLIANT, SKIPPED, check_compliance_contacts
from .contacts.rows import build_contact_rows
from .joints.drives import build_drive_rows
from .contacts.history import bias_time, forget_worlds, record_contacts
from .joints.rows import build_joint_rows
from .joints.loop_closures import (check_equality_constraints, closure_joints, flag_disabled_tree_joints,
                                 warn_ignored_dof_settings)
from .sweep.preelimination import warn_body_parent_f_once
from .joints.velocity_limits import input_velocity, velocity_limits_fused
from .contacts.warmstart import check_contacts as check_warm_start_contacts
from .sweep.shock import shock_pass
from .sleeping.islands import label_islands
from .sleeping.stages import (begin_step, collect_island_awake, freeze_outputs, publish_frozen, update_sleep, wake_changed,
                       wake_islands, wake_worlds, write_body_awake, write_sleep_observables)
from .step_data import SteelData
from ...launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


_OPTION_NAMES = frozenset(f.name for f in fields(SteelOptions))


class SolverSteel(SolverBase, SteelCoupling):
    """Reduced-coordinate articulated dynamics with a projected Gauss-Seidel impulse solve.

    Each step evaluates forward kinematics, RNEA bias forces and the CRBA mass matrix over every
    articulation tree (Featherstone, *Rigid Body Dynamics Algorithms*, 2008), folds implicit
    drive and passive terms into it, factors it and predicts the unconstrained velocity. Contacts
    and joint limits then become rows solved by projected Gauss-Seidel in impulse space with the
    generalized response ``Y = H^-1 J^T`` (Catto, GDC 2005-2013), and positions follow from the
    solved velocities by symplectic Euler. With ``velocity_iterations > 0`` the positions follow the
    position-solve velocity and further sweeps without the position bias refine the published
    velocity (see :mod:`steel.solvers.steel.sweep.pgs`). See ``docs/architecture.md`` for the stages.

    The options are those of ``newton.solvers.SolverSteel`` (all keyword-only, same names and
    defaults); see :mod:`steel.solvers.steel.options` for the two deliberate differences
    (capacities sized from the model by default; ``friction_anchor_beta=None`` resolving to 0.2)
    and for the options not built yet, which raise ``NotImplementedError`` when set.

    Args:
        model: a finalized :class:`newton.Model` without particles or gradients.

    Raises:
        NotImplementedError: the model has particles, requires gradients or has a ROD joint,
            or an option selects a feature not built yet.
        ValueError, TypeError: an option value is invalid (the message names it); a joint's
            finite lower limit exceeds its upper limit or a limit is NaN; a dynamic DOF moves no mass (its subtree
            is massless along it and it has no armature), naming the joint and body.

    Models without joints step too: bodies outside every articulation pass their input pose and
    velocity through and report a zero ``body_parent_f``. Global entities (world -1) are solved
    with world 0; a kinematic global body supports every world, and a dynamic global body that
    can touch moving bodies of several worlds warns at construction (those contacts are dropped
    and flag both the world's and the global entry of :attr:`constraint_overflow`).
    """

    SUPPORTED_OBSERVABLES = frozenset({"contact_f", "body_parent_f", "body_awake"})
    ObservableKind = SteelObservableKind
    Observables = SteelObservables
    supports_body_pair_reduced_contacts = True

    def __init__(self, model: newton.Model, **options):
        check_model_type(model, "SolverSteel")
        options = {name: as_python_scalar(value) for name, value in options.items()}
        opts = build_options(**options)  # validate everything before allocating anything
        _check_model(model)
        _check_model_values(model, int(newton.ModelFlags.ALL))
        check_options_on_device(opts, model.device)
        if opts.deterministic is not None and model.device.is_cuda:
            # On the CPU each launch runs serially, so rows are reserved in contact order and runs
            # repeat bitwise. On CUDA the atomic reservation order varies; the sorted reservation
            # the option asks for is not built yet.
            raise NotImplementedError("SolverSteel option deterministic is not implemented on CUDA yet")
        super().__init__(model)
        object.__setattr__(self, "options", opts)
        # What the stages read: the model side, validated and resolved once (model.py), and the arrays the step
        # writes (step_data.py). No stage reads this object.
        self.steel_model = SteelModel(model, opts)
        self.steel_data = SteelData(self.steel_model)
        self._default_control = model.control()
        self._step_count = 0
        self._last_dt = None
        self._refresh_mass_matrix = True
        self._warned_overflow = False
        self._status_snapshot = None  # (overflow flags, dropped counts) copied by snapshot_constraint_status
        self._status_snapshot_checked = False

    @property
    def velocity_limits_fused(self) -> bool:
        """Driven DOFs' velocity limits are end-of-iteration clamps (``fuse_joint_velocity_limits``)."""
        return velocity_limits_fused(self.options)

    @property
    def supported_observables(self) -> frozenset[str]:
        """``body_awake`` only with ``enable_sleeping``."""
        sleeping = self.steel_data.sleep is not None
        return self.SUPPORTED_OBSERVABLES if sleeping else self.SUPPORTED_OBSERVABLES - {"body_awake"}

    def observables(self, kinds, *, contacts=None, requires_grad=None):
        """Newton's allocator; ``body_awake`` starts from the current sleep flags."""
        result = super().observables(kinds, contacts=contacts, requires_grad=requires_grad)
        if result.body_awake is not None:
            write_body_awake(self.steel_model, self.steel_data.sleep, result.body_awake)
        return result

    # -- options as attributes -------------------------------------------------------------------

    def __getattr__(self, name):
        opts = self.__dict__.get("options")
        if opts is not None and name in _OPTION_NAMES:
            return getattr(opts, name)
        raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")

    def __setattr__(self, name, value):
        opts = self.__dict__.get("options")
        if opts is not None and name in _OPTION_NAMES:  # every attribute set per step passes here: no rebuilt set
            if name not in STEP_OPTIONS:
                raise AttributeError(f"SolverSteel option {name!r} is set at construction only")
            setattr(opts, name, validate_option(name, as_python_scalar(value)))  # raises before changing anything
            return
        object.__setattr__(self, name, value)

    @staticmethod
    def register_custom_attributes(builder: newton.ModelBuilder) -> None:
        """Register the ``steel:`` rigid-body and shape attributes on ``builder``."""
        _attributes.register_custom_attributes(builder)

    # -- the step ---------------------------------------------------------------------------------

    def step(self, state_in, state_out, control, contacts, dt, *, observables=None):
        """Advance ``state_in`` by ``dt`` [s] into ``state_out`` (which may be the same object).

        Input handling, checked on the host before anything is launched (array shapes are host
        metadata, so the checks never synchronize the device):

        * ``state_in``, ``state_out`` or ``control`` made by another model (arrays of other
          lengths or on another device) raise ``ValueError`` naming the argument and array.
        * FREE/BALL quaternions in ``state_in.joint_q`` are normalized on read (an all-zero
          quaternion reads as the identity); the output quaternions are unit length.
        * Non-finite values in ``state_in`` are not searched for (that would cost a device read
          per step). They are contained: each world's rows and DOFs are solved apart, so a NaN in
          one world's coordinates never reaches another world; that world's output turns
          non-finite and the caller can reset it.

        Returns:
            ``state_out``.

        Raises:
            TypeError: ``dt`` is not a real number (Python, NumPy or Warp scalar), or a state is ``None``.
            ValueError: ``dt`` is not positive and finite in float32, ``contacts`` holds more contacts
                than the capacity sized at construction, an array of ``contacts`` is shorter than its
                capacity or (on the CPU) a live contact names a shape the model does not have, ``contact_warmstart`` is on and
                ``contacts`` has no ``rigid_contact_match_index`` (a pipeline without contact
                matching), or a state/control does not fit the model.
        """
        # Every argument is checked before _check_step, which records dt and marks H for rebuild.
        dt = check_dt(dt)
        check_state(self.model, state_in, "state_in")
        check_state(self.model, state_out, "state_out")
        check_control(self.model, control)
        self.validate_observables(observables, contacts)
        self._check_step(contacts, dt)
        sm, sd = self.steel_model, self.steel_data
        if sd.sleep is None:
            self._advance(state_in, state_out, control, contacts, dt, observables)
        else:
            self._advance_with_sleeping(state_in, state_out, control, contacts, dt, observables)
        self._step_count += 1
        if (self.options.warn_constraint_overflow and not self._warned_overflow and sd.rows.world_count
                and self.model.device.is_cpu):
            # On the CPU the flag read is free; on CUDA it would synchronize every step and break
            # graph capture, so there the flags are read by check_constraint_capacity() only.
            self._warn_overflow_once()
        return state_out

    def _advance_with_sleeping(self, state_in, state_out, control, contacts, dt, observables):
        """The step with sleeping (sleeping/stages.py, steps 1-5 of its docstring): wake events and island labels, then
        the solve of the awake articulations, or the frozen outputs when none is awake. The branches are
        ``wp.capture_if``s on device flags, so a CUDA graph capture records both."""
        sm, sd = self.steel_model, self.steel_data
        sleep = sd.sleep

        def skip_solve():
            publish_frozen(sm, sd, sleep, state_in, state_out)
            publish_parent_f(sd, parent_f_outputs(observables, state_out))  # every body holds its kept value
            if observables is not None and observables.is_requested("contact_f") and observables.contact_f is not None:
                observables.contact_f.zero_()  # every row is skipped

        def solve():
            self._advance(state_in, state_out, control, contacts, dt, observables, kinematics_done=True)
            freeze_outputs(sm, sd, sleep, state_out)

        def some_island_awake():
            wake_islands(sm, sleep)
            input_kinematics(sm, sd, state_in)
            update_sleep(sm, sd, sleep, state_in, dt)
            if sleep.skip_constraints:
                wp.capture_if(sleep.any_awake, on_true=solve, on_false=skip_solve)
            else:
                solve()  # keep every row and the dynamics; only the published state freezes

        begin_step(sm, sleep, state_in, control, contacts)
        if sleep.articulation_count:
            label_islands(sm, sd, sleep.islands, contacts, state_in.joint_qd, sleep.arrays.articulation_wake)
            collect_island_awake(sm, sleep)
        if sleep.skip_constraints:
            wp.capture_if(sleep.some_island_awake, on_true=some_island_awake, on_false=skip_solve)
        else:
            some_island_awake()
        write_sleep_observables(sm, sd, sleep, observables, contacts)

    def _advance(self, state_in, state_out, control, contacts, dt, observables, *, kinematics_done=False):
        """Stages 1-6 of the step, the solve (sleeping skips it when no articulation is awake)."""
        control = self._default_control if control is None else control
        sm, sd = self.steel_model, self.steel_data
        core, opts = sm.core, sm.options

        refresh = self._refresh_mass_matrix or self._step_count % opts.update_mass_matrix_interval == 0
        # The kinematics write every body (none outside the trees, none asleep): no pass-through copies.
        kinematics_write_every_body = sd.sleep is None and not len(core.plan.bodies_outside_np)
        fused = free_dynamics_fuses(sm, refresh)
        # The fused launch with the input kinematics writes what dormant contact rows are bounded by.
        dormant_bounds = fused and not kinematics_done
        if fused:
            # 1-2 in one launch, one thread per articulation (predict.py), bitwise the stages below.
            if not kinematics_done:
                if sm.model.body_count and not kinematics_write_every_body:
                    wp.copy(sd.body_qd_in, state_in.body_qd)  # bodies outside every articulation keep their twist
                input_velocity(sm, sd, state_in, prescale=True)
            eval_free_dynamics(sm, sd, state_in, control, dt, input_velocity(sm, sd, state_in),
                               with_kinematics=not kinematics_done)
            self._refresh_mass_matrix = False
        else:
            # 1. Kinematics of the input state (callers need no eval_fk before stepping).
            if not kinematics_done:
                input_kinematics(sm, sd, state_in)
            qd_in = input_velocity(sm, sd, state_in)
            # 2. Free dynamics: explicit joint forces, implicit terms, H, factor, predicted velocity.
            eval_joint_forces(sm, sd, state_in, control, dt, qd_in)

            def rebuild():
                core.dynamics(state_in.body_q, state_in.body_f, sd.dof_f, sd.dof_diag, compute_mass_matrix=True)
                factor_articulations(core)
                wp.copy(sd.dof_diag_factored, sd.dof_diag)

            if refresh:
                rebuild()
                self._refresh_mass_matrix = False
            else:
                core.dynamics(state_in.body_q, state_in.body_f, sd.dof_f, sd.dof_diag, compute_mass_matrix=False)
                wp.capture_if(flag_changed_diagonal(sm, sd), on_true=rebuild)  # a gain edit: fold the new diagonal
            predict_velocity(sm, sd, qd_in, dt)
        # 3. Rows: drives, contacts, then joint limits, joint friction and velocity limits.
        sd.rows.begin_step()
        if opts.drive_mode == "rows":
            build_drive_rows(sm, sd, state_in.joint_q, control, dt)  # first: the last rows to be dropped
        if contacts is not None and contacts.rigid_contact_max > 0:
            build_contact_rows(sm, sd, contacts, state_in.body_q, sd.body_qd_in, dt, dormant_bounds)
            if opts.contact_compliance:
                sd.compliance.count(sm, sd, contacts)  # an eager step raises here on invalid input
        build_joint_rows(sm, sd, state_in, dt)  # limits, mimics, joint friction, velocity limits: one launch
        sm.closures.build(sm, sd, state_in, dt)  # loop-closing joints (no launch without them)
        # 4. Projected Gauss-Seidel on the predicted velocity.
        sweep(sm, sd, sd.qd)
        if opts.iterations > 0:
            shock_pass(sm, sd, sd.qd)  # heavy on light only (sweep/shock.py)
        if sd.qd_position is not None:
            # 4b. velocity_iterations: keep the position-solve velocity for the positions, then
            # refine the velocity without the position bias (sweep/velocity.py).
            wp.copy(sd.qd_position, sd.qd)
            velocity_sweep(sm, sd, sd.qd)
            shock_pass(sm, sd, sd.qd)
        # 5. Observables and contact history of this step (before an in-place output overwrites the input).
        warn_body_parent_f_once(sm, sd, observables)  # sweep/preelimination.py
        write_observables(sm, sd, observables, contacts, state_in, dt, state_out)
        if contacts is not None and contacts.rigid_contact_max > 0 and dt >= sd.bias_dt:
            # Forces over the bias time; a step far shorter than the one before keeps its records (contacts/history.py).
            record_contacts(sm, sd, contacts, dt)
        # 6. Velocities -> positions, then publish body poses and twists.
        fused_finish = finish_fuses(sm, sd.qd_position)
        if not fused_finish:
            finish_step(sm, sd, state_in, state_out, dt, sd.qd_position)
        if state_out is not state_in and sm.model.body_count and not kinematics_write_every_body:
            wp.copy(state_out.body_q, state_in.body_q)  # bodies outside every articulation pass through
            wp.copy(state_out.body_qd, sd.body_qd_in)
        if fused_finish:
            finish_and_publish(sm, sd, state_in, state_out, dt)  # finish.py: one launch, bitwise the two lines
        else:
            core.kinematics(state_out.joint_q, state_out.joint_qd, state_out.body_q, state_out.body_qd)
            sd.kinematics_carry.void()  # the kinematics' outputs are no longer the kept placement's

    # -- capacity ---------------------------------------------------------------------------------

    @property
    def compliance_contact_count(self) -> int:
        """Compliant contacts that received rows in the last step (``contact_compliance`` only; else 0).

        Reads the device on the host: ``RuntimeError`` during CUDA graph capture.
        """
        return self._compliance_count("compliance_contact_count", COMPLIANT)

    @property
    def compliance_skipped_contact_count(self) -> int:
        """Positive-stiffness contacts the row builder excluded on purpose in the last step
        (``contact_compliance`` only; else 0): no moving body, beyond ``contact_gap_gate``, or a
        cross-world pair. Contacts lost to the capacity are an error instead.

        Reads the device on the host: ``RuntimeError`` during CUDA graph capture.
        """
        return self._compliance_count("compliance_skipped_contact_count", SKIPPED)

    def _compliance_count(self, name: str, entry: int) -> int:
        if not self.options.contact_compliance:
            return 0
        self._refuse_during_capture(name)
        return self.steel_data.compliance.value(entry)

    @property
    def constraint_overflow(self) -> wp.array:
        """Device bools, one per world plus one for global articulations: rows were dropped since the last reset."""
        return self.steel_data.rows.constraint_overflow

    def check_constraint_capacity(self, *, snapshot: bool = False) -> None:
        """Raise ``RuntimeError`` naming every world that dropped rows since its last reset (host read).

        Args:
            snapshot: report the status copied by the last :meth:`snapshot_constraint_status`
                instead of reading the live status.

        Raises:
            RuntimeError: called during graph capture, ``snapshot`` set before any snapshot, or
                any world (or the global entry, index ``world_count``) is flagged.
        """
        self._refuse_during_capture("check_constraint_capacity")
        if snapshot:
            if self._status_snapshot is None:
                raise RuntimeError(
                    "check_constraint_capacity(snapshot=True) needs a snapshot: call snapshot_constraint_status() first"
                )
            flags_array, dropped_array = self._status_snapshot
            self._status_snapshot_checked = True
        else:
            rows = self.steel_data.rows
            flags_array, dropped_array = rows.constraint_overflow, rows.world_rows_dropped
            if self.options.contact_compliance:
                self.steel_data.compliance.check()  # invalid compliant input of captured steps since the last reset
        flags, dropped = flags_array.numpy(), dropped_array.numpy()
        worlds = np.nonzero(flags)[0]
        if len(worlds):
            detail = ", ".join(
                f"world {w}: {int(dropped[w, 0])} articulated and {int(dropped[w, 1])} free-body rows dropped"
                if w < len(dropped) else "global entry: contacts lost" for w in worlds
            )
            raise RuntimeError(
                f"SolverSteel dropped contacts or constraint rows ({detail}); capacities per world are "
                f"articulation_constraint_max={self.steel_data.rows.articulation_capacity}, "
                f"free_body_constraint_max={self.steel_data.rows.free_body_capacity}"
            )

    def snapshot_constraint_status(self) -> None:
        """Copy the status :meth:`check_constraint_capacity` reports, on the device, without waiting.

        ``check_constraint_capacity(snapshot=True)`` then reports this copy. A new snapshot
        replaces the previous one; a :meth:`reset` retakes a checked snapshot and keeps an
        unchecked one, so a check after the reset still reports the steps before it.

        Raises:
            RuntimeError: called during graph capture.
        """
        self._refuse_during_capture("snapshot_constraint_status")
        self._take_status_snapshot()

    def _take_status_snapshot(self) -> None:
        if self._status_snapshot is None:
            self._status_snapshot = (wp.empty_like(self.steel_data.rows.constraint_overflow),
                                     wp.empty_like(self.steel_data.rows.world_rows_dropped))
        wp.copy(self._status_snapshot[0], self.steel_data.rows.constraint_overflow)
        wp.copy(self._status_snapshot[1], self.steel_data.rows.world_rows_dropped)
        self._status_snapshot_checked = False

    def _refuse_during_capture(self, what: str) -> None:
        if self.model.device.is_cuda and self.model.device.is_capturing:
            raise RuntimeError(f"SolverSteel.{what}() reads the device on the host; call it outside graph capture")

    def _warn_overflow_once(self) -> None:
        # One host read per step only while nothing has been reported yet, through a NumPy view of the
        # CPU flags made once (``.numpy()`` wraps the buffer anew each call; cost: performance log, host_views.py).
        flags = self.steel_data.rows.constraint_overflow
        view = self.__dict__.get("_overflow_view")
        if view is None or view[0] is not flags:
            view = self._overflow_view = (flags, flags.numpy())
        if view[1].any():
            self._warned_overflow = True
            warnings.warn(
                "SolverSteel dropped contacts or constraint rows for lack of capacity; see constraint_overflow and "
                "check_constraint_capacity()",
                newton.NewtonWarning if hasattr(newton, "NewtonWarning") else RuntimeWarning,
                stacklevel=3,
            )

    # -- model and state changes ------------------------------------------------------------------

    def reset(self, state, world_mask=None, flags=None) -> None:
        """Clear solver-owned state of the selected worlds; ``state`` is not modified (``flags`` unused).

        For the selected worlds (mask of length ``world_count + 1``, the last entry the global
        entry) this clears the capacity status and the contact friction history and requests a
        mass-matrix refresh. A full reset (``world_mask=None``) also restarts the host-side
        cadence (mass-matrix interval, ``dt`` change detection, the once-only overflow warning),
        so the following eager steps equal those of a freshly constructed solver bit for bit.

        Raises:
            TypeError: ``world_mask`` is not a Warp bool array.
            ValueError: ``world_mask`` is not 1-D, not on the solver's device, or its length is not
                ``world_count + 1``.
        """
        del state, flags
        mask = self._normalize_reset_world_mask(world_mask)  # validates before anything changes
        if mask is None:
            self.steel_data.rows.constraint_overflow.zero_()
            self.steel_data.rows.world_rows_dropped.zero_()
            self.steel_data.history.clear()
            self.steel_data.compliance.reset()
            self._warned_overflow = False
            self._step_count = 0
            self._last_dt = None
            self.steel_data.bias_dt = None
            self.steel_data.kinematics_carry.void()  # as constructed: the first step places its bodies in full
        else:
            forget_worlds(self.steel_model, self.steel_data, mask)
            rows = self.steel_data.rows
            launch(_reset_worlds, dim=rows.world_count + 1, inputs=[mask],
                   outputs=[rows.constraint_overflow, rows.world_rows_dropped], device=self.model.device)
        if self.steel_data.sleep is not None:
            wake_worlds(self.steel_model, self.steel_data.sleep, mask)  # the selected worlds wake
        if self._status_snapshot is not None and self._status_snapshot_checked and not (
                self.model.device.is_cuda and self.model.device.is_capturing):
            self._take_status_snapshot()
        self._refresh_mass_matrix = True

    def notify_state_changed(self, state, *, world_mask=None) -> None:
        """Forget what the solver carries from the state it published, after ``state`` was written outside
        :meth:`step` (Newton 1.8.0's call for its ``reuse_kinematics`` carry).

        The carried kinematics (``kinematics_carry.py``) compare an input's coordinates and velocities with the
        numbers they were placed from, so an edited state is never served stale placements; this voids them all
        the same (every world: one outside ``world_mask`` only places its bodies afresh, the same numbers).

        Raises:
            TypeError: ``world_mask`` is not a Warp bool array.
            ValueError: ``world_mask`` is not 1-D, not on the solver's device, or its length is not
                ``world_count + 1`` (as :meth:`reset`).
        """
        del state
        self._normalize_reset_world_mask(world_mask)  # validates before anything changes
        self.steel_data.kinematics_carry.void()

    def constraint_row_watermarks(self) -> dict[str, int]:
        """Newton 1.8.0's row high-water marks, keyed as the reference keys them; every value is 0, as the
        reference reports them with ``row_watermark`` off, the only setting built (``row_watermark=True`` is
        refused at construction). This solver's per-world record of dropped rows is
        :attr:`constraint_overflow` with ``rows.world_rows_dropped``."""
        marks = ("high_water", "raw_high_water", "dropped_contact_rows_high_water", "overflow_excess_high_water",
                 "overflow_world_steps")
        keys = [f"{family}_{mark}" for family in ("articulation", "free_body", "propagation") for mark in marks]
        return {**dict.fromkeys(keys, 0), "contact_high_water": 0}

    def notify_model_changed(self, flags, *, world_mask=None) -> None:
        """Re-read what ``flags`` names: body flags, inertias, armature, gains and the ``steel:`` attributes.

        SHAPE_PROPERTIES re-validates the ``steel:`` shape attributes (see ``attributes.py``). With
        ``enable_sleeping``, only the islands whose flagged arrays changed wake (``sleeping/model_diff.py``).

        Raises:
            ValueError: with ``enable_sleeping``, a flagged array was replaced by one with another
                entity count; a shape attribute is invalid (a non-finite ``shape_material_mu``, see
                ``attributes.py``); a mimic index or coefficient is invalid (``joints/mimic.py``); a
                ``joint_target_kd``, ``joint_effort_limit`` or ``body_mass`` is NaN or negative; before
                anything changes.
        """
        del world_mask
        flags = int(flags)
        sm, sd = self.steel_model, self.steel_data
        _check_model_values(self.model, flags)  # as at construction, before anything changes
        sm.refresh_checked(flags)  # steel: shape attributes, mimic pairs: validated as read (model.py)
        if sd.sleep is not None:
            wake_changed(sd.sleep, flags)  # sleeping/stages.py: the islands whose arrays changed (host read)
        sm.refresh(flags)  # tables, body attributes, shock setup, the kernels' structs (model.py)
        if flags & int(newton.ModelFlags.JOINT_PROPERTIES):
            flag_disabled_tree_joints(self.model, sd.rows.constraint_overflow)  # joints/loop_closures.py
        if sm.closures.count and flags & (int(newton.ModelFlags.JOINT_PROPERTIES)
                                          | int(newton.ModelFlags.JOINT_DOF_PROPERTIES)):
            warn_ignored_dof_settings(self.model, sm.closures.joint_list)
        if flags & int(newton.ModelFlags.CONSTRAINT_PROPERTIES):
            check_equality_constraints(self.model, closure_joints(self.model))  # joints/loop_closures.py
        if sm.joint_friction is not None and flags & (int(newton.ModelFlags.JOINT_DOF_PROPERTIES)
                                                      | int(newton.ModelFlags.JOINT_DOF_FORCE_PROPERTIES)):
            sm.joint_friction.check()
        if sd.sleep is not None:
            sd.sleep.refresh(sm)
        sd.kinematics_carry.void()  # joint frames, axes or COMs may have changed: place the bodies in full
        self._refresh_mass_matrix = True

    def _check_step(self, contacts, dt) -> None:
        capacity = self.steel_model.rigid_contact_capacity
        if contacts is not None and contacts.rigid_contact_max > capacity:
            raise ValueError(
                f"SolverSteel contact capacity exceeded: contacts.rigid_contact_max={contacts.rigid_contact_max} "
                f"slots, but the solver was built for model.rigid_contact_max={capacity}; "
                "set model.rigid_contact_max (or build the CollisionPipeline) before constructing the solver"
            )
        if contacts is not None:
            check_contacts(self.model, contacts)  # lengths, devices, shape ids (inputs.py)
        check_warm_start_contacts(self.options, contacts)
        check_compliance_contacts(self.options, contacts)
        self.steel_data.bias_dt = bias_time(dt, self.steel_data.bias_dt)
        if dt != self._last_dt:
            self._refresh_mass_matrix = True  # the implicit drive terms depend on dt
            self._last_dt = dt


def factor_articulations(core: ArticulationCore) -> None:
    """Tree-sparse ``H = L^T L`` where the DOF numbering allows it (always, for Newton's builders), else dense."""
    if core.plan.tree_factor_ok:
        tree_factor_mass_matrix(core.plan, core.data)
    else:
        core.factor()


def _signature() -> inspect.Signature:
    """``SolverSteel(model, *, <every option with its default>)``, as the reference declares it (from ``OPTIONS``)."""
    return option_signature(OPTIONS, model_annotation="newton.Model")


SolverSteel.__init__.__signature__ = _signature()
SolverSteel.__init__.__doc__ = options_docstring()  # else help() shows the base class's constructor


@wp.kernel
def _reset_worlds(mask: wp.array[wp.bool], overflow: wp.array[wp.bool], dropped: wp.array2d[wp.int32]):
    w = wp.tid()
    if mask[w]:
        overflow[w] = False
        if w < dropped.shape[0]:
            dropped[w, 0] = 0
            dropped[w, 1] = 0


def _check_model_values(model: newton.Model, flags: int) -> None:
    """``ValueError`` naming the DOF or body for a NaN or negative gain, effort limit or mass among the arrays
    ``flags`` names (``articulation/checks.py``)."""
    dof_flags = int(newton.ModelFlags.JOINT_DOF_PROPERTIES) | int(newton.ModelFlags.JOINT_DOF_FORCE_PROPERTIES)
    bad = negative_or_nan(model, DOF_GAIN_FIELDS) if flags & dof_flags else None
    if bad is not None:
        field, d, value = bad
        raise ValueError(f"{joint_name(model, dof_joint(model, d))} DOF {d} has {field}={value!r}; it must be "
                         "non-negative")
    bad = negative_or_nan(model, BODY_MASS_FIELDS) if flags & int(newton.ModelFlags.BODY_INERTIAL_PROPERTIES) else None
    if bad is not None:
        field, b, value = bad
        raise ValueError(f"{body_name(model, b)} has {field}={value!r}; it must be non-negative")


def _check_model(model: newton.Model) -> None:
    """Reject models the solver does not simulate (before anything is allocated)."""
    if int(getattr(model, "particle_count", 0)) > 0:
        raise NotImplementedError("SolverSteel does not simulate particles (model.particle_count > 0)")
    if getattr(model, "requires_grad", False):
        raise NotImplementedError("SolverSteel does not support gradients (model.requires_grad=True)")
    if model.joint_count:
        types = model.joint_type.numpy()
        rod = np.nonzero(types == int(newton.JointType.ROD))[0]
        if len(rod):
            j = int(rod[0])
            label = model.joint_label[j] if j < len(model.joint_label) else str(j)
            raise NotImplementedError(f"SolverSteel does not support ROD joints (joint {j}, '{label}')")
