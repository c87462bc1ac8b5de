"""SolverFeatherstone: semi-implicit Euler in reduced coordinates with penalty contacts and limits.

Owns the options, their validation and the step recipe; each stage lives in its own module:

====================  ===========================================================================
stage                 module
====================  ===========================================================================
FK + joint forces     :mod:`.forces` (drives, limits, springs, damping; linearly implicit)
contacts              :mod:`.contacts` (spring-damper normal, Huber-smoothed Coulomb friction)
bias + mass matrix    :func:`steel.articulation.eval_articulation_dynamics` (RNEA + CRBA)
tile path (option)    :mod:`.tiles` (``H`` by tile GEMM, tile Cholesky and solve)
factor/solve/integ.   :mod:`.advance` (Cholesky, ``qdd``, symplectic Euler, mimic, FK publish)
body_parent_f         :func:`steel.articulation.eval_body_parent_f` (only when requested)
particles             :mod:`.particles` (Newton's public SolverSemiImplicit; body reactions ours)
====================  ===========================================================================

A step is four launches for an articulated scene without particles (FK+forces, contacts,
dynamics, advance), whatever the number of worlds; ``body_parent_f`` adds two. The tile path adds
one launch per DOF-count group each step (the solve), and on rebuild steps one more plus one per
group (fused) or the same (unfused, factor in the solve launch).
"""

from __future__ import annotations

import warnings

import numpy as np
import warp as wp

import newton
from newton.solvers import SolverBase

from ...articulation import ArticulationData, ArticulationPlan, eval_articulation_dynamics, eval_body_parent_f
from ...articulation import eval_articulation_kinematics
from . import contacts as contacts_module
from .advance import advance_joints
from .contacts import eval_contact_forces
from .data import KernelArgs
from .forces import eval_kinematics_and_joint_forces
from .mimic import mimic_tables
from . import particles as particles_module
from .particles import ParticleStepper
from .tiles import TileMassMatrix
from .option_rows import OPTIONS
from .validate import SIGNATURE, build_options, check_dof_inertia, check_joint_limits, warn_start_outside_limits
from ..inputs import check_control, check_dt, check_model_type, check_state, warn_full_contact_buffers
from ..option_table import with_option_args

from newton.solvers.experimental.coupled import CouplingInterface
from ...launches import launch

_REBUILD_FLAGS = (
    newton.ModelFlags.BODY_PROPERTIES
    | newton.ModelFlags.BODY_INERTIAL_PROPERTIES
    | newton.ModelFlags.JOINT_DOF_PROPERTIES
    | newton.ModelFlags.JOINT_DOF_INERTIAL_PROPERTIES
)
_KINEMATIC_FLAGS = (
    newton.ModelFlags.BODY_PROPERTIES
    | newton.ModelFlags.JOINT_DOF_PROPERTIES
    | newton.ModelFlags.JOINT_DOF_INERTIAL_PROPERTIES
)


class FeatherstoneData:
    """The solver's own per-step buffers (the articulation core's are in :class:`ArticulationData`); the
    per-articulation kernels read them as one struct of the same names, :class:`.data.Buffers`.

    ==============  ==========================================================================  =======
    field           meaning [units]                                                             shape
    ==============  ==========================================================================  =======
    body_kinematic  1 where the body is flagged :attr:`newton.BodyFlags.KINEMATIC`               (body,)
    body_f_work     ``State.body_f`` plus contact wrenches, world, about the COM [N, N·m]        (body,)
    joint_tau       generalized forces: ``joint_f`` + drives, limits, springs, damping            (dof,)
                    [N or N·m]; FREE/DISTANCE entries keep Newton's world-wrench convention
    dof_implicit    mass-matrix diagonal of the implicit joint forces ``dt kd + dt^2 ke``          (dof,)
                    [kg or kg·m²]
    dof_limit_push  push-out part ``limit_ke (bound - q)`` of the limit force of a DOF outside     (dof,)
                    its limits, else 0 [N or N·m] (see :mod:`.advance`)
    dof_limit_      the joint-space response ``A^-1 dof_limit_push`` where :mod:`.advance`         (dof,)
      response      bounds a push-out [m/s² or rad/s² per unit scale]; scratch
    dof_implicit_   ``dof_implicit`` as it was when the DOF's current factor was computed           (dof,)
      factored      [kg or kg·m²]
    articulation_   1 where this step refactors the articulation's mass matrix (rebuild, or         (art.,)
      refactor      ``dof_implicit`` changed; see :mod:`steel.solvers.featherstone.forces`)
    contact_mass    implicit contact term ``sum (dt kd + dt^2 ke) J_n^T J_n + dt c_t J_t^T J_t``   (sum n²,)
                    of this step's contacts, one dense block per articulation in the layout of
                    the mass matrix in use [kg, kg·m, kg·m²] (see :mod:`.contacts`)
    articulation_   1 where ``contact_mass`` of the articulation is nonzero (this step's          (art.,)
      contact       contacts; cleared, with the block, by :mod:`.forces` the next step)
    articulation_   1 where this step's input of the articulation was non-finite (or a zero      (art.,)
      invalid       quaternion): not stepped, contacts dropped (see :mod:`.forces`)
    dof_zero        zeros: the core's extra mass-matrix diagonal (``D`` joins ``H`` only in the     (dof,)
                    factor, see :mod:`steel.solvers.featherstone.advance`)
    joint_qdd       joint accelerations of the last step [m/s² or rad/s²]                      (dof,)
    mimic_leader    independent joint each mimic follower copies, -1 otherwise                  (joint,)
    mimic_coeffs    ``(c0, c1)`` of ``q_f = c0 + c1 q_leader`` [m or rad, non-dimensional]      (joint,)
    ==============  ==========================================================================  =======
    """

    def __init__(self, model: newton.Model, plan: ArticulationPlan):
        dev = model.device
        nb, nd, nj = max(model.body_count, 1), max(model.joint_dof_count, 1), max(model.joint_count, 1)
        self.body_kinematic = wp.zeros(nb, dtype=wp.int32, device=dev)
        self.body_f_work = wp.zeros(nb, dtype=wp.spatial_vector, device=dev)
        self.joint_tau = wp.zeros(nd, dtype=float, device=dev)
        self.dof_implicit = wp.zeros(nd, dtype=float, device=dev)
        self.dof_implicit_factored = wp.zeros(nd, dtype=float, device=dev)
        self.dof_limit_push = wp.zeros(nd, dtype=float, device=dev)
        self.dof_limit_response = wp.zeros(nd, dtype=float, device=dev)
        # An array rather than None: Warp packs a None array argument slower per launch on the CPU (performance log).
        self.dof_zero = wp.zeros(nd, dtype=float, device=dev)
        self.articulation_refactor = wp.zeros(max(plan.articulation_count, 1), dtype=wp.int32, device=dev)
        self.contact_mass = wp.zeros(max(plan.mass_size, 1), dtype=float, device=dev)
        self.articulation_contact = wp.zeros(max(plan.articulation_count, 1), dtype=wp.int32, device=dev)
        self.articulation_invalid = wp.zeros(max(plan.articulation_count, 1), dtype=wp.int32, device=dev)
        self.joint_qdd = wp.zeros(nd, dtype=float, device=dev)
        leader, coeffs, self.has_mimic = mimic_tables(model, plan)
        self.mimic_leader = wp.array(leader[:nj], dtype=wp.int32, device=dev)
        self.mimic_coeffs = wp.array(coeffs[:nj], dtype=wp.vec2, device=dev)
        self.refresh_kinematic(model)

    def refresh_kinematic(self, model: newton.Model) -> None:
        """Re-read :attr:`newton.Model.body_flags` (host round trip; only at construction and on notify)."""
        if model.body_count:
            flags = model.body_flags.numpy()
            self.body_kinematic.assign((flags & int(newton.BodyFlags.KINEMATIC) != 0).astype(np.int32))


class SolverFeatherstone(SolverBase, CouplingInterface):
    """Semi-implicit (symplectic) Euler on ``joint_q``/``joint_qd`` with the CRBA mass matrix.

    Each step: FK of the input state; joint forces (PD drives, penalty limits, passive springs,
    damping, ``Control.joint_f``) and penalty contact forces; RNEA bias and CRBA mass matrix with
    armature (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, ch. 5-6); Cholesky;
    ``qdd = H^-1 (tau - C)``; ``qd += dt qdd``, ``q += dt map(qd)``; FK of the output state.
    Floating bodies need a FREE joint; bodies outside every articulation are not moved.
    Particles, cloth and soft bodies are stepped by a private :class:`newton.solvers.SolverSemiImplicit`
    (public API only), with the particle-shape contact reactions on bodies evaluated here
    (see :mod:`steel.solvers.featherstone.particles`).

    Joint-space penalties (limits, drives, springs, damping) and the contact spring, damper and
    friction slope are taken linearly implicitly (evaluated at the end of the step through the
    factored matrix), so light links under stiff penalties do not diverge where the explicit form
    would (see :mod:`steel.solvers.featherstone.forces` and :mod:`steel.solvers.featherstone.contacts`);
    the force laws and equilibria are the explicit ones. An articulation in contact refactors its
    matrix every step.

    The options (keyword-only; units, defaults and ranges) are listed by ``help(SolverFeatherstone.__init__)``.

    Input handling (what a careless caller gets; construction and the host checks run before
    anything is allocated or written):

    * a joint DOF with ``joint_limit_lower > joint_limit_upper`` or a NaN limit: ``ValueError`` at
      construction naming the joint and DOF;
    * ``model.joint_q`` outside a DOF's limits: ``UserWarning`` at construction naming the joint; the
      limit brings it back at up to 10 rad/s (m/s) from rest, or its current speed if faster, instead
      of releasing ``limit_ke d²/2`` at once (that launched a chain at hundreds of rad/s; see
      :mod:`steel.solvers.featherstone.advance` and :func:`.validate.warn_start_outside_limits`);
    * zero-mass or zero-inertia bodies: accepted wherever every DOF still has inertia (a massless
      link with massive children, a massless kinematic body); a free DOF with ``H_ii + armature = 0``
      at ``model.joint_q`` (a massless leaf on a revolute joint, a FREE body with a zero inertia
      tensor) raises ``ValueError`` at construction naming the joint, DOF and body
      (:mod:`steel.solvers.featherstone.validate`);
    * models without joints, or whose bodies are all outside every articulation (a jointless
      kinematic body): construct and step; those bodies' ``body_q``/``body_qd`` are carried from
      ``state_in`` to ``state_out`` unchanged (their prescribed state) and ``body_parent_f`` reads 0;
    * a ``State`` or ``Control`` of another model (array lengths or device differ): ``ValueError``
      from :meth:`step` naming the argument and array, before anything changes
      (:mod:`steel.solvers.inputs`; host metadata only, no device sync); a ``Contacts`` buffer whose
      shape or particle indices exceed the model's has those contacts skipped;
    * non-unit FREE/DISTANCE/BALL quaternions in ``state_in.joint_q``: normalized, not refused (the
      kinematics and the integrator read them normalized; ``state_out`` holds unit quaternions and
      the trajectory is that of the normalized input; ``state_in`` is not rewritten);
    * NaN or Inf in an articulation's input (``joint_q``, ``joint_qd``, ``body_f``, ``joint_f``,
      targets, gains) or a zero-length quaternion: contained, not refused (refusing needs a host
      read per step). That articulation is not stepped (its output is its input, NaN included),
      and no contact or reaction computed from it reaches any other body, so every other world
      steps exactly as without it; :meth:`invalid_worlds` lists the affected worlds (one host
      copy). With ``update_mass_matrix_interval > 1``, an ``H`` rebuilt from such a state stays
      non-finite until the next rebuild after the state is repaired.

    Raises:
        ValueError: an option is out of range (the message names it), the model has a ROD joint or
            another unsupported joint (named), a mimic pair is invalid (both joints named), a joint
            limit is inverted or NaN, or a DOF has no inertia (joint, DOF and body named).
    """

    SUPPORTED_OBSERVABLES = frozenset({SolverBase.ObservableKind.BODY_PARENT_F})

    def __init__(self, model: newton.Model, **options):
        """Validate the model and the options (see the class docstring for what is refused), then allocate.

        The ``Args:`` entries after ``model`` are written from :mod:`steel.solvers.featherstone.option_rows`
        (one row per option: meaning, unit, default, range); what follows them is how they act.

        Args:
            model: the model to simulate.

        ``update_mass_matrix_interval``: ``H`` is also rebuilt on the step after :meth:`notify_model_changed`
        with body or DOF (inertial) flags. In between, ``H`` is stale but the implicit joint-force diagonal
        ``dt kd + dt^2 ke`` is always the current step's: an articulation whose diagonal changed (drive or
        limit gains edited, a limit engaging or releasing, a new ``dt``) is refactored from the stale ``H``
        plus the new diagonal that step, so gain and ``dt`` changes take effect immediately (see
        :mod:`steel.solvers.featherstone.forces`).

        ``use_tile_gemm`` builds ``H`` with a tile GEMM and factors and solves with :func:`warp.tile_cholesky`
        and :func:`warp.tile_cholesky_solve`, one kernel per articulation DOF count
        (:mod:`steel.solvers.featherstone.tiles`), on CPU and CUDA. ``fuse_cholesky`` is not used with mimic
        joints (their fold sits between build and factor); the loop path always fuses factor and solve into
        one launch.

        ``friction_smoothing`` is the delta of :func:`warp.norm_huber` (see
        :mod:`steel.solvers.featherstone.contacts`); ``deterministic`` is passed on to the particle stage's
        SolverSemiImplicit as well.
        """
        opts = build_options(**options)  # every option before anything is allocated (validate.OPTIONS)
        deterministic = opts.deterministic
        check_model_type(model, "SolverFeatherstone")
        self._reject_unsupported_joints(model)
        check_joint_limits(model)
        warn_start_outside_limits(model)
        plan = ArticulationPlan(model)  # raises on other unsupported topology
        work = FeatherstoneData(model, plan)  # raises on invalid mimic pairs
        check_dof_inertia(model, plan, work.body_kinematic.numpy(), work.mimic_leader.numpy())
        self._warn_unsupported_constraints(model)

        super().__init__(model=model)
        self.plan = plan
        self.data = ArticulationData(plan)
        self.work = work
        self.angular_damping = opts.angular_damping
        self.update_mass_matrix_interval = opts.update_mass_matrix_interval
        self.friction_smoothing = opts.friction_smoothing
        self.use_tile_gemm = opts.use_tile_gemm
        self.fuse_cholesky = opts.fuse_cholesky
        self.deterministic = deterministic
        mode = deterministic if deterministic is not None else wp.config.deterministic
        for module in (contacts_module, particles_module):
            self._set_module_options({"deterministic": mode, "deterministic_max_records": 0}, module=module)
        self._particles = ParticleStepper(model, deterministic)
        self._step_count = 0
        self._mass_matrix_dirty = True
        self._default_control = model.control(clone_variables=False)
        self._outside = _OutsideCopy(model, plan)
        self._tiles = TileMassMatrix(model, plan, self.fuse_cholesky, work.has_mimic) if self.use_tile_gemm else None
        tiles = self._tiles
        mass = (plan.mass_start, self.data.mass_matrix, self.data.mass_factor) if tiles is None else tiles.mass
        self._args = KernelArgs(model, plan, self.data, work, mass, mirror=self._tiles is not None)
        if model.particle_count > 1 and model.particle_grid is not None:
            with wp.ScopedDevice(model.device):
                model.particle_grid.reserve(model.particle_count)

    # -- construction helpers ------------------------------------------------------------------

    __init__.__signature__ = SIGNATURE  # (model, *, <option_rows.OPTIONS with their defaults and types>)
    __init__.__doc__ = with_option_args(__init__.__doc__, OPTIONS)  # one Args: entry per row, from the table

    @staticmethod
    def _reject_unsupported_joints(model: newton.Model) -> None:
        if not model.joint_count:
            return
        types = model.joint_type.numpy()
        labels = list(getattr(model, "joint_label", None) or [])
        for j in np.nonzero(types == int(newton.JointType.ROD))[0]:
            label = f" ('{labels[j]}')" if j < len(labels) else ""
            raise ValueError(f"SolverFeatherstone does not support ROD joints: joint {j}{label} is a ROD joint")

    @staticmethod
    def _warn_unsupported_constraints(model: newton.Model) -> None:
        """One ``UserWarning`` at construction (never from ``step``) naming what the solver ignores.

        Newton 1.8 stores MuJoCo equality constraints as ``mujoco:equality_constraint`` custom-frequency
        rows (``model.mujoco.equality_constraint_*``, e.g. from an MJCF ``<equality>`` block), and the
        deprecated sparse mimic constraints as ``model.constraint_mimic_*``. Joints outside every
        articulation (``joint_articulation == -1``: loop closures) are not part of any tree the
        reduced coordinates run over.
        """
        ignored = []
        if getattr(model, "constraint_mimic_count", 0):
            ignored.append(f"{model.constraint_mimic_count} sparse (deprecated) mimic constraint(s)")
        equality_count = _equality_constraint_count(model)
        if equality_count:
            ignored.append(f"{equality_count} MuJoCo equality constraint(s)")
        loose = np.nonzero(model.joint_articulation.numpy() < 0)[0] if model.joint_count else []
        if len(loose):
            # Reduced coordinates run over the articulation trees: a joint outside every articulation
            # (a loop closure, or an MJCF connect/weld converted to one) holds nothing.
            labels = list(getattr(model, "joint_label", None) or [])
            named = ", ".join(f"{j} ('{labels[j]}')" if j < len(labels) else str(j) for j in loose[:3])
            more = f" and {len(loose) - 3} more" if len(loose) > 3 else ""
            ignored.append(f"{len(loose)} joint(s) outside every articulation (loop closures: joint {named}{more})")
        if ignored:
            warnings.warn(
                "SolverFeatherstone ignores " + " and ".join(ignored) + "; use joint-owned mimics "
                "(ModelBuilder.set_joint_mimic) or a solver that supports them",
                UserWarning,
                stacklevel=3,
            )

    # -- public API ----------------------------------------------------------------------------

    def notify_model_changed(self, flags: newton.ModelFlags | int) -> None:
        """Pick up model edits: kinematic flags and a forced mass-matrix rebuild on body or DOF
        (inertial) flags. Gains, limits, damping, gravity and materials are read live every step."""
        flags = int(flags)
        if flags & int(_KINEMATIC_FLAGS):
            self.work.refresh_kinematic(self.model)
        if flags & int(_REBUILD_FLAGS):
            self._mass_matrix_dirty = True

    def step(
        self,
        state_in: newton.State,
        state_out: newton.State,
        control: newton.Control | None,
        contacts: newton.Contacts | None,
        dt: float,
        *,
        observables: SolverBase.Observables | None = None,
    ) -> None:
        """Advance ``state_in`` by ``dt`` [s] into ``state_out`` (which may be ``state_in``).

        Args:
            state_in: input state; its ``body_q``/``body_qd`` are recomputed from ``joint_q``/``joint_qd``.
            state_out: output state; ``joint_q``, ``joint_qd``, ``body_q``, ``body_qd`` (and
                ``body_parent_f`` when allocated by :meth:`newton.Model.request_state_attributes`).
            control: targets and ``joint_f``; None uses the model's defaults.
            contacts: rigid contacts (None: no contact forces); body-pair-reduced buffers raise.
            dt: time step [s].
            observables: container from :meth:`observables` (``body_parent_f``).
        """
        particles = self.model.particle_count > 0
        check_state(self.model, state_in, "state_in", particles=particles)
        if state_out is not state_in:
            check_state(self.model, state_out, "state_out", particles=particles)
        check_control(self.model, control)
        self.validate_observables(observables, contacts)
        self._require_unreduced_contacts(contacts)
        warn_full_contact_buffers(contacts)  # a full pipeline buffer: contacts may have been dropped (inputs.py)
        dt = check_dt(dt, allow_zero=True)
        self._apply_module_options()
        model, plan, data, work = self.model, self.plan, self.data, self.work
        control = self._default_control if control is None else control
        rebuild = self._mass_matrix_dirty or self._step_count % self.update_mass_matrix_interval == 0
        parent_f = self._parent_f_outputs(state_out, observables)

        tiles = self._tiles

        self._args.bind_model(model)  # a model array rebound since the last step (edits in place need nothing)
        eval_kinematics_and_joint_forces(model, plan, self._args, state_in, control, dt, rebuild)
        eval_contact_forces(
            model, self._args, data, work, contacts, state_in.body_q, state_in.body_qd, self.friction_smoothing, dt
        )
        self._particles.eval_body_reactions(state_in, contacts, self._args, work)
        self._particles.step(state_in, control, contacts, dt)  # before any output is written (in place)
        build_crba = rebuild and tiles is None  # the tile path builds H itself
        eval_articulation_dynamics(
            model, plan, data, state_in.body_q, work.body_f_work, work.joint_tau, work.dof_zero, build_crba
        )
        if tiles is not None:
            if rebuild:
                tiles.build(model, plan, data, work, state_in.body_q)
            tiles.solve(plan, data, work, rebuilt=rebuild)
        advance_joints(
            model,
            plan,
            self._args,
            data,
            state_in,
            state_out,
            dt,
            self.angular_damping,
            publish=not parent_f,
            solved=tiles is not None and tiles.solves,
        )
        if parent_f:
            eval_body_parent_f(model, plan, data, state_in.body_q, work.joint_qdd, parent_f[0])
            for extra in parent_f[1:]:
                wp.copy(extra, parent_f[0])
            eval_articulation_kinematics(
                model, plan, data, state_out.joint_q, state_out.joint_qd, state_out.body_q, state_out.body_qd
            )
        self._outside.copy(state_in, state_out)
        self._particles.publish(state_out)

        self._mass_matrix_dirty = self._mass_matrix_dirty and not rebuild
        self._step_count += 1

    def invalid_worlds(self) -> list[int]:
        """Worlds with an articulation whose input to the last :meth:`step` was non-finite (or had a
        zero-length quaternion) and was therefore not stepped; one host copy (-1: global articulations)."""
        if self.plan.articulation_count == 0:
            return []
        flagged = self.work.articulation_invalid.numpy()[: self.plan.articulation_count] != 0
        return sorted({int(w) for w in self.plan.articulation_world_np[flagged]})

    # -- step helpers --------------------------------------------------------------------------

    def _parent_f_outputs(self, state_out: newton.State, observables) -> list:
        """Arrays to receive ``body_parent_f``: the observable and/or the legacy state attribute."""
        outputs = []
        if observables is not None and observables.body_parent_f is not None:
            outputs.append(observables.body_parent_f)
        legacy = getattr(state_out, "body_parent_f", None)
        if legacy is not None and self.model.body_count:
            outputs.append(legacy)
        for out in outputs:
            out.zero_()  # bodies that are no joint's child read 0
        return outputs


@wp.kernel
def _copy_outside(
    # Plan:
    bodies_outside: wp.array[int],
    joints_outside: wp.array[int],
    # Model:
    joint_q_start: wp.array[int],
    joint_qd_start: wp.array[int],
    # Data in:
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    # Data out:
    body_q_out: wp.array[wp.transform],
    body_qd_out: wp.array[wp.spatial_vector],
    joint_q_out: wp.array[float],
    joint_qd_out: wp.array[float],
):
    i = wp.tid()  # one thread per body or joint outside every articulation
    if i < bodies_outside.shape[0]:
        b = bodies_outside[i]
        body_q_out[b] = body_q[b]
        body_qd_out[b] = body_qd[b]
    if i < joints_outside.shape[0]:
        j = joints_outside[i]
        for k in range(joint_q_start[j], joint_q_start[j + 1]):
            joint_q_out[k] = joint_q[k]
        for k in range(joint_qd_start[j], joint_qd_start[j + 1]):
            joint_qd_out[k] = joint_qd[k]


class _OutsideCopy:
    """Carries bodies and joints outside every articulation unchanged from input to output state."""

    def __init__(self, model: newton.Model, plan: ArticulationPlan):
        self.model = model
        joints = np.nonzero(model.joint_articulation.numpy() < 0)[0] if model.joint_count else np.zeros(0)
        self.bodies = wp.array(plan.bodies_outside_np, dtype=wp.int32, device=model.device)
        self.joints = wp.array(joints.astype(np.int32), dtype=wp.int32, device=model.device)
        self.count = max(len(plan.bodies_outside_np), len(joints))

    def copy(self, state_in: newton.State, state_out: newton.State) -> None:
        if self.count == 0 or state_in is state_out:
            return
        m = self.model
        launch(
            _copy_outside,
            dim=self.count,
            inputs=[self.bodies, self.joints, m.joint_q_start, m.joint_qd_start]
            + [state_in.body_q, state_in.body_qd, state_in.joint_q, state_in.joint_qd],
            outputs=[state_out.body_q, state_out.body_qd, state_out.joint_q, state_out.joint_qd],
            device=m.device,
        )


def _equality_constraint_count(model: newton.Model) -> int:
    """Number of MuJoCo equality-constraint rows of the model (0 where the frequency is not registered)."""
    try:
        return int(model.get_custom_frequency_count("mujoco:equality_constraint"))
    except (AttributeError, KeyError, ValueError):
        return 0

