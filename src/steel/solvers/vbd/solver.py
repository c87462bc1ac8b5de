"""SolverVBD: options, model checks and the step recipe. Each stage lives in its own module."""

from __future__ import annotations

import warnings

import numpy as np
import warp as wp

import newton
from newton.solvers import SolverBase
from newton.solvers.experimental.coupled import CouplingInterface

from ..inputs import check_bool, check_contacts, check_control, check_dt, check_soft_contacts, check_state
from ..option_table import with_option_args
from .coupling import BodyParticleCoupling, coupled_bodies
from .dat import RigidSoftDat, check_dat, check_dat_schedule
from .features import check_joint_features, check_joint_properties, check_model_features, check_tendons_external
from .particles.attachments import Attachments, check_attachments
from .collision import (Frequency, Slot, check_pipeline, check_schedule_change, contacts_before_step,
                        iteration_detection)
from .observables import reserve, write_observables
from .option_rows import OPTIONS
from .options import SIGNATURE, build_options
from .particles.contacts import check_full_surface_contacts, mesh_particle_shapes, prepare_contacts
from .proxy_coupling import (check_input_update, check_iteration_restarts, harvest_body_contact_feedback,
                             harvest_contact_feedback, proxy_snapshot, StepRewind)
from .particles.data import ParticleWork
from .particles.finish import finish_particles
from .particles.predict import predict_particles
from .particles.self_contact import SelfContact
from .particles.sweep import solve_particles, sweep_particles
from .particles.solve_tile import active_families, tile_solve_pays_off
from .reset import check_world_mask, reset_bodies
from .rigid.attributes import JointSlot, check_joint_slot, register_vbd_attributes
from .rigid.compliant import resolve_compliant
from .rigid.data import RigidWork, check_rigid_model, dynamic_bodies
from .rigid.reset import reset_rigid_history
from .scene import register_scene_attributes, scene_iterations, scene_rigid_settings
from .rigid.step import step_rigid


_BASE_OPTIONS = ("collision_pipeline", "collision_frequency", "collision_frequency_type")


# [s] shortest step: m / dt^2 and k dt^2 terms stay finite and meaningful in float32 for masses up to 1e8 kg
# (1 / dt^2 = 1e30); dt = 1e-30 turned a step to NaN that stayed NaN.
DT_MIN = 1.0e-15

class SolverVBD(SolverBase, CouplingInterface):
    """Vertex Block Descent for particles: cloth, springs and tetrahedral soft bodies.

    Each step minimizes the implicit-Euler variational energy one vertex at a time: a 3x3 Newton
    step per vertex on inertia, element energies (triangles, bending edges, tetrahedra, springs) and
    particle–shape contacts, Gauss-Seidel over vertex colours (Chen, Liu, Yang, Yuksel, "Vertex Block
    Descent", ACM TOG 43(4) 2024), started at the inertial target ``x_t + dt v_t + dt² a_ext`` as
    Newton's SolverVBD is. ``solver.particle_adaptive_init = True`` starts from the paper's adaptive
    initialization (sec. 3.6) instead. Measured (10 iterations): neither start is better everywhere; the
    inertial one tracks converged swinging cloth closer (7.6e-3 m against 7.8e-2 m over 20 steps) and
    keeps Newton's cloth_stiff_material_hanging inside its box (the adaptive start swings that 1e8 N/m
    cloth up to z 2.99 m from a release at 2 m, failing the example's check); the adaptive one keeps a
    cloth resting on the ground at its static depth with 2 iterations (the inertial one 3.6 mm deeper).
    Figures and the reasons for the default: :mod:`steel.solvers.vbd.particles.predict`.

    The constructor takes the seed revision's options (all keyword-only, same names and defaults;
    ``inspect.signature`` shows them) and accepts the later revision's spellings as aliases (see
    :mod:`steel.solvers.vbd.options`). Built so far: the particle solve, rigid joints, body–body
    contacts, two-way body–particle contacts, particle–body attachments, soft and hard
    (:mod:`steel.solvers.vbd.particles.attachments`), 1.8.0's compliant ALM for joints and contacts, and 1.8.0's
    routed tendons through anchors and frictionless pinholes and rollers, static and dynamic
    (:mod:`steel.solvers.vbd.rigid.tendons`).

    * ``particle_enable_tile_solve=True`` runs the vertex step with one block of threads
      per vertex splitting its elements (:mod:`steel.solvers.vbd.particles.solve_tile`), specialized
      at construction to the element families present; False runs one thread per vertex. On the
      CPU, where Warp gives a block one lane (unless ``wp.config.enable_cpu_blocks``), the general
      kernel runs either way: it is faster there and gives bitwise the same positions.
    * ``particle_enable_self_contact=True`` adds vertex–triangle and edge–edge contacts with a C2
      log-barrier law and penetration-free displacement truncation
      (:mod:`steel.solvers.vbd.particles.self_contact`); :meth:`rebuild_bvh` and
      :meth:`check_self_contact_overflow` go with it.
    * Rigid bodies: Augmented VBD (Giles, Diaz, Yuksel, SIGGRAPH 2025; :mod:`steel.solvers.vbd.rigid`),
      a 6x6 Newton step per body over ``model.body_color_groups`` with BALL, FIXED, REVOLUTE,
      PRISMATIC and D6 joints as hard (augmented-Lagrangian) or soft slots, drives and limits, and joint-owned
      mimics ``q_f = c0 + c1 q_l`` (``ModelBuilder.set_joint_mimic``; :mod:`steel.solvers.vbd.rigid.mimic`).
      Body–body contacts from the step's ``Contacts`` are hard (augmented Lagrangian) or soft
      (penalty) with smoothed Coulomb friction (:mod:`steel.solvers.vbd.rigid.contacts`). Particles
      touching a dynamic body push it back in the same solve: each iteration sweeps the particle
      colours, then the body colours, the body's 6x6 block taking the reactions of its particle
      contacts (:mod:`steel.solvers.vbd.coupling`). Full-surface soft contacts
      (``CollisionPipeline(enable_rigid_soft_full_surface_contact=True)``) are consumed: an edge or face
      record acts at its barycentric soft point, each particle taking its weight's share, the body the
      reaction (:mod:`steel.solvers.vbd.particles.contacts`; triangle-mesh shapes raise
      ``NotImplementedError``). ``rigid_soft_contact_use_log_barrier=True`` gives body–particle contacts the
      self-contact C2 log barrier instead of the quadratic penalty. ``rigid_soft_enable_dat=True`` (with an owned
      ``collision_pipeline``) makes them penetration-free: between two RIGID detections every particle update and
      every dynamic body's pose update is truncated against the division plane of each of its contacts and to an
      isotropic budget of ``0.5 x dat_conservative_bound_relaxation x`` the smallest query radius
      (:mod:`steel.solvers.vbd.dat`; full-surface edge/face records bound per corner; mesh and heightfield
      shapes refused). Static
      shapes and kinematic bodies pass from ``state_in`` to ``state_out`` unchanged; with
      ``integrate_with_external_rigid_solver=True`` no body is moved.
    * ``rigid_compliant_alm=True`` (Newton 1.8.0's default formulation; omitted here, the seed's AVBD
      runs) makes joints and body–body contacts finite materials: each non-cable structural joint slot
      is a spring of ``rigid_joint_linear_ke`` [N/m] / ``rigid_joint_angular_ke`` [N·m/rad] and each contact
      one of its shapes' ``ke`` [N/m], solved as an augmented Lagrangian with an internal metric ``ρ``
      (``k_eff = k ρ/(k + ρ)``, multiplier weight ``k/(k + ρ)``, ``λ`` kept by ``rigid_avbd_gamma``), so a
      joint deflects ``load / k`` and a resting box sinks ``weight / ke``
      (:mod:`steel.solvers.vbd.rigid.compliant`). Drives, limits, cables and body–particle contacts keep
      their laws; the per-slot hard/soft mode has no effect there.
    * Routed tendons (``ModelBuilder.add_tendon``; :mod:`steel.solvers.vbd.rigid.tendons`): ANCHOR guides,
      frictionless PINHOLE guides and frictionless ROLLER guides (between point guides; dynamic ones engage while
      the cable presses on them and are bypassed otherwise) on bodies or the world. A route splits at its
      internal anchors into runs; each run is one tension-only row ``C = Σ span lengths + Σ wraps - L`` with the
      spans' compliances in series (zero taken as 1e-8 m/N) and damping, solved in the body blocks as a compliant
      augmented-Lagrangian row: a slack run exerts nothing, a taut one ``C / c`` [N], the same for any ``dt``.
      The State's tendon arrays
      carry the rest lengths (material slides over frictionless guides; :meth:`reset` restores them);
      ``notify_model_changed(TENDON_PROPERTIES)`` rebuilds the runs from the model. Call
      ``ModelBuilder.color()`` after ``add_tendon``. Guide friction (``mu > 0``: capstans, rolling,
      motorized pulleys) and rollers at a route's end or next to another roller are refused.

    Args:
        model: a finalized :class:`newton.Model`; with particles it must be coloured
            (``ModelBuilder.color()`` before ``finalize``).

    Raises:
        ValueError: a model with particles but no ``particle_color_groups``; a tendon span between two bodies of
            one colour (``builder.color()`` before ``add_tendon``); an invalid option value
            or one option under both of its spellings (the message names it); particle–body attachments with
            ``integrate_with_external_rigid_solver=True``; a scene ``newton:maxSolverIterations`` below -1 or 0; a
            scene joint stiffness or damping (``newton:vbd:rigid:joint*``) negative or not finite (:mod:`.scene`);
            with ``rigid_compliant_alm=True``, a shape material (``ke``, ``kd``, ``mu``) negative or not finite;
            ``rigid_soft_enable_dat=True`` without ``collision_pipeline``, with an external rigid solver or a
            non-positive query radius, and at ``step`` with a NONE ``RIGID`` schedule or (self-contact on too) one
            not equivalent to the self-contact cadence (:func:`steel.solvers.vbd.dat.check_dat_schedule`).
        TypeError: an unknown option or a value of the wrong type.
        NotImplementedError: a model feature the solve does not run, named: DISTANCE joints, drives or limits
            on BALL or multi-angle D6 DOFs, sparse mimic constraints and mimics of multi-angle D6 axes, tendon
            guide friction, tendon rollers at a route's end or beside another roller, tendon guide flags other than
            DYNAMIC, tendons with ``integrate_with_external_rigid_solver``,
            muscles, unconverted MuJoCo equalities (the audit: :mod:`steel.solvers.vbd.features`);
            or a later-revision option selecting an unbuilt feature; the seed's sticking-contact options
            (``rigid_contact_stick_*``) set with ``rigid_compliant_alm=True``; at ``step``, full-surface soft contacts
            on triangle-mesh shapes; proxy-particle harvesting after a step on full-surface contacts;
            ``rigid_soft_dat_use_interval_arithmetic=True``; with ``rigid_soft_enable_dat=True``, mesh or heightfield
            shapes colliding with particles.
    """

    JointSlot = JointSlot
    SUPPORTED_OBSERVABLES = frozenset({"contact_f"})  # one wrench per contact record (.observables)

    def __init__(self, model: newton.Model, **options):
        """Check the options and the model, then allocate the particle solve.

        Every option is keyword-only. ``inspect.signature`` shows the seed revision's options; the later
        revision's (Newton 1.8.0) spellings and additions, marked "a later revision's option" below, are
        accepted besides. Each check runs before anything is allocated, and an error names the option and
        the value. The ``Args:`` entries after ``model`` are written from :mod:`steel.solvers.vbd.option_rows`
        (one row per option: meaning, unit, default, range); what follows them is how the options act together.

        Args:
            model: a finalized :class:`newton.Model` (see the class docstring).

        ``None`` for a seed option (1.8.0's "scene value or built-in" spelling) means its seed default,
        except ``iterations=None``, which reads the scene's ``vbd:max_solver_iterations`` (the default when
        absent or -1), and the rigid settings the scene carries: ``vbd:rigid_contact_history`` and
        ``vbd:rigid_joint_{linear,angular}_{ke,kd}`` (USD ``newton:vbd:rigid:jointLinearStiffness``, ...) stand in
        for those options given as None, or omitted under ``rigid_compliant_alm=True``; an explicit value wins
        (:mod:`steel.solvers.vbd.scene`).

        Self-contact buffers: pairs beyond ``particle_vertex_contact_buffer_size`` /
        ``particle_edge_contact_buffer_size`` are counted (:meth:`check_self_contact_overflow`), never written
        out of bounds. ``particle_self_contact_margin`` (detection) is at least ``particle_self_contact_radius``
        (interaction).

        Rigid bodies (:mod:`steel.solvers.vbd.rigid.joints`, :mod:`steel.solvers.vbd.rigid.contacts`): each
        iteration ramps a joint's penalty by ``rigid_avbd_linear_beta`` / ``rigid_avbd_angular_beta`` (each
        ``rigid_avbd_beta`` when None) from ``rigid_joint_linear_k_start`` / ``rigid_joint_angular_k_start`` up
        to ``rigid_joint_linear_ke`` / ``rigid_joint_angular_ke``; ``rigid_avbd_gamma`` decays k and the hard
        slots' λ each step (λ also scaled by alpha). ``rigid_contact_k_start`` also seeds every particle–shape
        contact. Body contacts beyond ``rigid_body_contact_buffer_size`` are dropped and counted
        (:meth:`check_rigid_contact_overflow`); a body with more particle contacts than
        ``rigid_body_particle_contact_buffer_size`` scans every record instead (none lost; counted,
        :meth:`check_body_particle_contact_overflow`). Hard contacts that stick replay their points when
        ``rigid_contact_history`` is on; the freeze deadzones are
        :meth:`steel.solvers.vbd.rigid.contacts.RigidContacts.end`.

        ``deterministic`` is validated and kept: on the CPU every step repeats bitwise; on CUDA the order in
        which a particle's shape contacts are filed (atomic slots) can vary, and with it the float32 rounding
        of their sum.

        The later revision's spellings and additions (see :mod:`steel.solvers.vbd.options`):

        * ``dat_conservative_bound_relaxation`` is ``particle_conservative_bound_relaxation``, shared with
          rigid–soft DAT; given both, the seed's spelling overrides it with a ``NewtonDeprecationWarning``, as
          1.8.0 does (alone, it never warns). Any other option spelled both ways is a ``ValueError``.
        * With ``particle_self_contact_gap`` given, ``particle_self_contact_margin`` is the interaction
          distance (the seed's radius) and the gap the extra detection reach (detection at margin + gap).
        * ``collision_pipeline`` / ``collision_frequency`` / ``collision_frequency_type`` select a solver-owned
          pipeline whose RIGID slot detects before the step (AUTO = PRE_INIT), also right after
          initialization (PRE_POST_INIT: particles at their first iterate, bodies at their input pose), before
          every k-th iteration on the iterate (ITERATIONS, k from ``collision_frequency``; needs a matching
          pipeline) or not at all (NONE) (:mod:`steel.solvers.vbd.collision`); a SOFT_SELF_CONTACT entry sets
          the self-contact cadence instead of ``particle_collision_detection_interval``.
        * ``rigid_compliant_alm=True``: 1.8.0's compliant ALM formulation (see the class docstring), with
          ``rigid_avbd_alpha`` defaulting to 0, no penalty ramp, no sticking contacts, and one
          ``NewtonDeprecationWarning`` naming the betas, ``rigid_contact_hard`` and k_start seeds passed; False:
          the seed's AVBD with 1.8.0's ``DeprecationWarning``; omitted: the seed's AVBD, no warning.
        * ``rigid_soft_contact_use_log_barrier=True``: body–particle normal contacts use the self-contact log
          barrier in the distance to the raw shape surface, with the radius particle radius + shape margin
          (:mod:`steel.solvers.vbd.particles.contacts`).
        * ``rigid_soft_enable_dat=True``: rigid–soft Divide-and-Truncate against the owned pipeline's contacts
          (:mod:`steel.solvers.vbd.dat`); its RIGID slot's AUTO then resolves to PRE_POST_INIT, the bodies
          detected at their truncated first iterate. ``rigid_soft_dat_use_interval_arithmetic=True`` is not
          built: the body bound here certifies the whole rotation with a chord bound.
        * ``tendon_max_sweeps``, ``tendon_settle_tol`` and ``tendon_activation_tol`` tune 1.8.0's capstan
          material relaxation (friction at guides, refused here) and the hysteresis of its dynamic-roller
          activation, which the continuous geometric switch here does without
          (:mod:`steel.solvers.vbd.rigid.tendons`).
        * ``enable_fast_math``: every kernel here compiles with Warp's exact division and square root on every
          device. Newton 1.8.0 compiles its particle kernels, rigid solve and joint dual update with
          ``fast_math`` on CUDA (rounding-level differences; ignored on the CPU), so on CUDA ours computes as
          the reference does with ``enable_fast_math=False``.
        """
        opts, extras = build_options(**options)  # validate everything before allocating anything
        compliant = extras.get("rigid_compliant_alm") is True
        if "iterations" in options and options["iterations"] is None:
            opts.iterations = scene_iterations(model)  # 1.8.0's None: the scene's count (.scene)
        for name, value in scene_rigid_settings(model, options, compliant).items():  # None (or omitted, compliant): the scene's
            setattr(opts, name, value)
        self.compliant = resolve_compliant(model, opts, options, extras)  # None: the seed's AVBD
        history = opts.rigid_contact_history and not opts.integrate_with_external_rigid_solver and model.body_count
        check_pipeline(extras.get("collision_pipeline"), bool(history))
        check_dat(model, opts, extras)  # rigid–soft DAT's requirements (.dat)
        _check_model(model, opts.integrate_with_external_rigid_solver)
        check_model_features(model)  # tendon rollers, muscles, ...: refused, never dropped (.features)
        check_tendons_external(model, opts.integrate_with_external_rigid_solver)
        check_attachments(model, opts.integrate_with_external_rigid_solver)
        if not opts.integrate_with_external_rigid_solver and dynamic_bodies(model).any():
            check_joint_properties(model)  # joint friction refused; armature, effort/velocity limits named
        super().__init__(model, **{k: extras[k] for k in _BASE_OPTIONS if k in extras})
        self.options = opts
        self.extras = extras
        # Particle–shape contacts ramp their penalty with the linear AVBD beta, as Newton's solver does (all shapes).
        beta = opts.rigid_avbd_beta if opts.rigid_avbd_linear_beta is None else opts.rigid_avbd_linear_beta
        self.work = (ParticleWork(model, opts.friction_epsilon, beta, opts.rigid_contact_k_start,
                                  extras.get("rigid_soft_contact_use_log_barrier", False))
                     if model.particle_count else None)
        self.self_contact = SelfContact(model, opts) if opts.particle_enable_self_contact and self.work else None
        self.dat = (RigidSoftDat(model, opts.particle_conservative_bound_relaxation, extras["collision_pipeline"],
                                 dynamic_bodies(model), self.work) if extras.get("rigid_soft_enable_dat") else None)
        if self.dat is not None and self.contacts is not None:
            self.dat.reserve(self.contacts.soft_contact_max)  # the owned buffer's records: no step allocates
        # The tile kernel is specialized here to the element families present; on a CPU
        # without Warp's CPU blocks it would be the general loop plus tile overhead (see solve_tile).
        tile = opts.particle_enable_tile_solve and self.work is not None and tile_solve_pays_off(model.device)
        self._tile_families = active_families(self.work.elements) if tile else None
        rigid = not opts.integrate_with_external_rigid_solver and dynamic_bodies(model).any()
        self.rigid = RigidWork(model, opts, self.compliant) if rigid else None
        self.attachments = self._attachments()
        self.coupling = self._coupling()
        self.proxy_snapshot = proxy_snapshot(model, self.coupling)  # proxy-body harvest (.proxy_coupling)
        self.mesh_shapes = mesh_particle_shapes(model)  # their full-surface records are refused (.particles.contacts)
        self.rewind = None  # coupled iteration restarts (coupling_notify_iteration_restarts)
        # Body poses at the end of the last step, i.e. the next step's previous poses (for
        # collect_rigid_contact_forces: snapshot before step()).
        self.body_q_prev = wp.clone(model.body_q) if model.body_count else None

    __init__.__signature__ = SIGNATURE
    __init__.__doc__ = with_option_args(__init__.__doc__, OPTIONS)  # one Args: entry per row, from the table

    def _coupling(self):
        """Per-body lists of the two-way body–particle contacts, or None when no particle can touch a dynamic body."""
        if self.rigid is None or self.work is None:
            return None
        coupled = coupled_bodies(self.model, self.rigid.dynamic)
        if self.attachments is not None:  # an attached body takes its particles' pull in the same sweep
            coupled |= self.attachments.coupled(int(self.model.body_count))
        if not coupled.any():
            return None
        return BodyParticleCoupling(self.model, coupled, self.options.rigid_body_particle_contact_buffer_size)

    def _attachments(self):
        """The model's particle–body attachments (:mod:`.particles.attachments`), or None without them."""
        if self.work is None or not int(getattr(self.model, "attachment_particle_body_count", 0) or 0):
            return None
        dynamic = dynamic_bodies(self.model) if self.rigid is not None else np.zeros(self.model.body_count, bool)
        return Attachments(self.model, dynamic, self.options)

    supports_collision_pipeline = True  # a solver-owned newton.CollisionPipeline (see .collision)

    def set_collision_frequency(self, *, collision_frequency=None, collision_frequency_type=None) -> None:
        """Change the detection schedule from the next step (see :mod:`steel.solvers.vbd.collision`).

        The ``SOFT_SELF_CONTACT`` slot sets the self-contact detection interval (PRE_INIT = -1,
        PRE_POST_INIT = 0, ITERATIONS every k = k); NONE while self-contact is on raises ``ValueError``.
        The ``RIGID`` slot schedules the owned pipeline: NONE, PRE_INIT (= AUTO), PRE_POST_INIT, or ITERATIONS
        every k (needs a matching pipeline, ``ValueError`` from ``SolverBase`` otherwise). Everything is checked
        before anything changes.
        """
        interval = check_schedule_change(self, collision_frequency, collision_frequency_type)
        super().set_collision_frequency(collision_frequency=collision_frequency,
                                        collision_frequency_type=collision_frequency_type)
        contact = self.__dict__.get("self_contact")
        if contact is not None and interval is not None:
            contact.interval = interval

    def _default_collision_frequency_type(self, slot):
        """AUTO: the owned pipeline before the step (RIGID; with rigid–soft DAT also after initialization, as
        1.8.0 resolves it); self-contact before and after initialization."""
        if slot == Slot.SOFT_SELF_CONTACT:
            return Frequency.PRE_POST_INIT
        if slot == Slot.RIGID and self.__dict__.get("extras", {}).get("rigid_soft_enable_dat"):
            return Frequency.PRE_POST_INIT
        return super()._default_collision_frequency_type(slot)

    def __getattr__(self, name):
        opts = self.__dict__.get("options")
        if opts is not None and hasattr(opts, name):
            return getattr(opts, name)
        raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")

    @property
    def particle_adaptive_init(self) -> bool:
        """First iterate of a particle step: False (default) the inertial target, as Newton's SolverVBD;
        True the paper's adaptive initialization (see :mod:`steel.solvers.vbd.particles.predict`)."""
        return self.work is not None and bool(self.work.adaptive_init)

    @particle_adaptive_init.setter
    def particle_adaptive_init(self, value: bool) -> None:
        value = check_bool("particle_adaptive_init", value)
        if self.work is not None:
            self.work.adaptive_init = value

    # -- the step ---------------------------------------------------------------------------------

    def observables(self, kinds, *, contacts=None, requires_grad=None):
        """Newton's allocator (``"contact_f"``); also sizes the rigid force outputs so no step allocates them."""
        result = super().observables(kinds, contacts=contacts, requires_grad=requires_grad)
        if result.contact_f is not None:
            reserve(self, result.contacts_for_kind("contact_f"))
        return result

    def step(self, state_in, state_out, control, contacts, dt, *, observables=None) -> None:
        """Advance particles and bodies by one implicit-Euler step of ``dt`` [s] (``iterations`` sweeps).

        ``contacts`` (from ``CollisionPipeline.collide`` on ``state_in``) supplies particle–shape and
        body–body contacts; ``None`` steps without them. With a solver-owned ``collision_pipeline`` it must be
        ``None`` and the solver detects into ``solver.contacts`` (:mod:`.collision`). ``control``
        supplies drive targets (``joint_target_q``/``joint_target_qd``) to the rigid solve.
        ``observables`` (a container from :meth:`observables`, checked before anything runs): with
        ``"contact_f"`` requested, one wrench per body–body and particle–shape contact record at the final
        configuration (:mod:`.observables`); the states come out bitwise the same as without it.
        """
        dt = check_dt(dt)  # the shared check: 1e-300 is 0 and 1e300 inf in the kernels' float32
        if dt < DT_MIN:
            raise ValueError(f"dt must be at least {DT_MIN:g} s for SolverVBD (its inertia terms m / dt^2 leave "
                             f"float32 below it), got {dt!r}")
        model, work, external = self.model, self.work, self.options.integrate_with_external_rigid_solver
        check_state(model, state_in, "state_in", particles=True)
        check_state(model, state_out, "state_out", particles=True)
        check_control(model, control)  # a Control of another model stepped to NaN
        self.validate_observables(observables, contacts)
        if self.dat is not None:
            check_dat_schedule(self)  # RIGID active, and equivalent to SOFT_SELF_CONTACT with both DATs on
        contacts = contacts_before_step(self, state_in, contacts, dt)
        if contacts is not None:
            # Another model's Contacts names particles and shapes this model lacks: the kernels below would read
            # past its arrays (a larger cloth's pipeline crashed the process). Lengths always, ids on the CPU.
            check_soft_contacts(model, contacts)
            if contacts.rigid_contact_max:
                check_contacts(model, contacts)
        check_full_surface_contacts(contacts, self.mesh_shapes)  # edge/face records
        coupling, attachments, iterations = self.coupling, self.attachments, self.options.iterations
        if self.rewind is not None:
            self.rewind.begin_step()
        redetect = iteration_detection(self, state_in, state_out, contacts, dt)  # RIGID at ITERATIONS/PRE_POST_INIT
        # Particles and bodies sweep in one loop when coupled, or when a pass between iterations serves both.
        interleave = work is not None and (coupling is not None or (redetect is not None and self.rigid is not None))
        if work is not None:
            predict_particles(model, state_in, state_out, work, dt)
            if attachments is not None:
                attachments.begin_step(model, work, state_in, state_out, dt)
            prepare_contacts(model, state_in, state_out, contacts, work, dt, external, coupling)
            dat = self.dat
            if dat is not None:  # the first detection's planes; the first iterate truncated to them
                dat.record(model, contacts, state_in.particle_q, state_in.body_q if model.body_count else None)
                if self.self_contact is None:
                    dat.truncate_particles(model, work, state_out.particle_q)
            if self.self_contact is not None:
                self.self_contact.begin_step(model, work.particle_q_prev, state_out.particle_q,
                                             None if dat is None else lambda q: dat.truncate_particles(model, work, q))
            if not interleave and attachments is None and redetect is None:
                solve_particles(model, state_out, work, iterations, dt, self.self_contact, self._tile_families)
            elif not interleave:
                for iteration in range(iterations):  # hard attachments: a dual step per iteration
                    if redetect is not None:
                        redetect(iteration)
                    sweep_particles(model, state_out, work, iteration, dt, self.self_contact, self._tile_families)
                    if attachments is not None:
                        attachments.update_duals(model, state_out)
            if not interleave:
                finish_particles(model, state_out, work, dt)
        if interleave:
            # Each iteration sweeps the particle colours, then the body colours (two-way coupling when coupled).
            if coupling is not None:
                coupling.bind(work, state_out, contacts)

            def particle_sweep(iteration):
                if redetect is not None:
                    redetect(iteration)
                if attachments is not None and iteration > 0:
                    attachments.update_duals(model, state_out)  # the last iteration's dual step
                if self.proxy_snapshot is not None and iteration == iterations - 1:
                    self.proxy_snapshot.take(state_out)
                sweep_particles(model, state_out, work, iteration, dt, self.self_contact, self._tile_families)

            step_rigid(model, state_in, state_out, control, self.rigid, iterations, dt, contacts,
                       coupling.data if coupling is not None else None, particle_sweep, self._truncate_bodies())
            if attachments is not None and iterations > 0:
                attachments.update_duals(model, state_out)
            finish_particles(model, state_out, work, dt)
            wp.copy(self.body_q_prev, state_out.body_q)
        elif self.rigid is not None:
            if self.dat is not None and work is None:
                self.dat.record(model, contacts, None, state_in.body_q)
            step_rigid(model, state_in, state_out, control, self.rigid, iterations, dt, contacts, before_sweep=redetect,
                       after_sweep=self._truncate_bodies())
            wp.copy(self.body_q_prev, state_out.body_q)
        elif model.body_count and not external and state_out is not state_in:
            state_out.body_q.assign(state_in.body_q)  # static/kinematic colliders keep their pose
            state_out.body_qd.assign(state_in.body_qd)
        write_observables(self, observables, contacts, state_in, state_out, dt)
        self._warn_dropped_once()

    def _truncate_bodies(self):
        """The rigid stage's truncation hook (``after_sweep(body_q)``), or None without rigid–soft DAT."""
        dat, model = self.dat, self.model
        return None if dat is None else (lambda body_q: dat.truncate_bodies(model, body_q))

    # -- rigid joints -------------------------------------------------------------------------------

    @classmethod
    def register_custom_attributes(cls, builder, *, dahl_defaults_enabled: bool = True) -> None:
        """Register ``vbd:joint_is_hard``, ``vbd:dahl_eps_max``, ``vbd:dahl_tau`` (per joint, see
        :mod:`.rigid.attributes`) and the scene settings (:mod:`.scene`): ``vbd:max_solver_iterations`` (USD
        ``newton:maxSolverIterations``, read by ``iterations=None``), ``vbd:rigid_contact_history``
        (``newton:vbd:rigid:contactHistory``), ``vbd:rigid_joint_linear_ke`` / ``_angular_ke`` / ``_linear_kd`` /
        ``_angular_kd`` (``newton:vbd:rigid:jointLinearStiffness`` / ``jointAngularStiffness`` /
        ``jointLinearDamping`` / ``jointAngularDamping``), read when those options are omitted or None."""
        register_vbd_attributes(builder, dahl_defaults_enabled=dahl_defaults_enabled)
        register_scene_attributes(builder)

    @property
    def joint_kappa_prev(self):
        """Per joint (``wp.array`` of vec3): a cable's rotation from its rest shape at the last step's end [rad],
        as (bend about x, bend about y, twist about z) of its parent anchor frame (+z along the rod); zero on
        other joints and before the first step. None without a rigid stage."""
        return self.rigid.joints.kappa_end if self.rigid is not None and self.rigid.joint_count else None

    @property
    def joint_sigma_prev(self):
        """Per joint (``wp.array`` of vec3): the Dahl friction moment a cable holds at the last step's end [N·m],
        same axes as :attr:`joint_kappa_prev` (the joint's elastic moment there is ``k κ`` per axis, bend or
        twist stiffness); zero without Dahl friction and after ``reset``. None without a rigid stage."""
        return self.rigid.joints.sigma_end if self.rigid is not None and self.rigid.joint_count else None

    def set_joint_constraint_mode(self, joint_index: int, hard: bool, slot: int | None = None) -> None:
        """Make a joint's structural slots hard (augmented Lagrangian) or soft (penalty only) from the next step.

        With ``rigid_compliant_alm=True`` it has no effect (every structural slot is a compliant ALM row) and warns
        ``NewtonDeprecationWarning``, as Newton 1.8.0 does; the arguments are still checked.

        Args:
            joint_index: the joint.
            hard: True for the augmented-Lagrangian mode (persistent ``λ``, C0 stabilization), False for
                penalty only.
            slot: ``JointSlot.LINEAR`` (0) or ``JointSlot.ANGULAR`` (1); None sets every structural slot.

        Raises:
            ValueError: the joint index is out of range, or the slot is a drive/limit slot (>= 2) or beyond
                the joint's structural slots (BALL has LINEAR only; FREE has none).
        """
        layout = self.rigid.layout if self.rigid is not None else None
        check_joint_slot(self.model, layout, joint_index, slot)
        if self.compliant is not None:
            warnings.warn("SolverVBD.set_joint_constraint_mode is deprecated and has no effect under "
                          "rigid_compliant_alm=True: every structural joint slot is a compliant ALM row of the material "
                          "stiffness rigid_joint_*_ke", newton.NewtonDeprecationWarning, stacklevel=2)
            return
        if self.rigid is not None:
            self.rigid.set_joint_mode(int(joint_index), bool(hard), None if slot is None else int(slot))

    # -- rigid contacts -----------------------------------------------------------------------------

    def set_rigid_history_update(self, update: bool) -> None:
        """Whether the next step refreshes body–body contact rows from its ``Contacts`` (one-shot; default True).

        With False the next step reuses the last refresh's rows and per-body lists, warm-starting their
        ``λ`` and ``k`` and recomputing ``C0`` (substeps between collision passes): pass the same,
        un-recollided ``Contacts`` then. The flag goes back to True after that step.
        """
        rc = self.rigid.contacts if self.rigid is not None else None
        if rc is not None:
            rc.update_next = bool(update)

    def collect_rigid_contact_forces(self, body_q, body_q_prev, contacts, dt):
        """Per-contact body–body forces and world points after a step, with the step's ``Contacts``.

        Args:
            body_q: body transforms after the step (``state_out.body_q``).
            body_q_prev: the step's previous poses (snapshot ``solver.body_q_prev`` before ``step``).
            contacts: the ``Contacts`` the step used; None returns the zero/sentinel outputs.
            dt: the step [s].

        Returns:
            ``(body0, body1, point0_world, point1_world, force_on_body1, rigid_contact_count)``: bodies
            of shape 0 and 1 (int32, -1 static), world contact points [m], the force on body 1 [N]
            (normal push plus friction; the reaction acts on body 0), and a length-1 count. Arrays grow on
            demand and never shrink: read up to the count.
        """
        rc = self.rigid.contacts if self.rigid is not None else None
        if rc is None:
            dev = self.model.device
            sentinel = wp.full(1, -1, dtype=wp.int32, device=dev)
            return (sentinel, wp.clone(sentinel), wp.zeros(1, dtype=wp.vec3, device=dev),
                    wp.zeros(1, dtype=wp.vec3, device=dev), wp.zeros(1, dtype=wp.vec3, device=dev),
                    wp.zeros(1, dtype=wp.int32, device=dev))
        return rc.forces(body_q, body_q_prev, contacts, float(dt))

    def _warn_dropped_once(self) -> None:
        """Warn on the eager step that first drops contacts, once per cause, as SolverSteel does for rows (a
        6-box stack with ``rigid_body_contact_buffer_size=1`` fell 4.9 m through the ground with the overflow
        only counted). Reads the device's counters while a cause is unreported; captured steps report through
        the ``check_*`` methods."""
        if self.model.device.is_cuda and self.model.device.is_capturing:
            return
        warned = self.__dict__.setdefault("_warned_drops", set())
        if "rigid" not in warned and self.rigid is not None and self.rigid.contacts is not None:
            if self.rigid.contacts.check_overflow():
                warned.add("rigid")
                self.check_rigid_contact_overflow()
        if "particle" not in warned and self.work is not None:
            dropped = int(self.work.contact_overflow.numpy()[0])
            if dropped:
                warned.add("particle")
                warnings.warn(f"SolverVBD: {dropped} particle–shape contacts were dropped by full per-particle lists "
                              "(they exert no force)", newton.NewtonWarning, stacklevel=3)
        if "self" not in warned and self.self_contact is not None and any(self.self_contact.overflow()):
            warned.add("self")
            self.check_self_contact_overflow()

    def check_rigid_contact_overflow(self) -> int:
        """Body–body contacts dropped so far by full per-body lists; warns when nonzero (reads the device).

        Raise ``rigid_body_contact_buffer_size`` to keep them.
        """
        rc = self.rigid.contacts if self.rigid is not None else None
        dropped = 0 if rc is None else rc.check_overflow()
        if dropped:
            warnings.warn(f"SolverVBD: {dropped} body–body contacts were dropped by full per-body lists; raise "
                          "rigid_body_contact_buffer_size", newton.NewtonWarning, stacklevel=2)
        return dropped

    def check_body_particle_contact_overflow(self) -> int:
        """Body–particle contacts filed past a body's list so far; warns when nonzero (reads the device).

        None is lost: a body whose list is full scans every soft-contact record for its own that step,
        which costs time; raise ``rigid_body_particle_contact_buffer_size`` to avoid the scan.
        """
        extra = 0 if self.coupling is None else self.coupling.check_overflow()
        if extra:
            warnings.warn(f"SolverVBD: {extra} body–particle contacts did not fit their bodies' lists (applied through "
                          "a slower scan); raise rigid_body_particle_contact_buffer_size", newton.NewtonWarning,
                          stacklevel=2)
        return extra

    # -- self-contact -------------------------------------------------------------------------------

    def rebuild_bvh(self, state) -> None:
        """Rebuild the self-contact BVHs from ``state.particle_q``.

        Steps only refit the trees; rebuild after a large deformation or a teleport, when refitted boxes
        grow loose and queries slow down.
        """
        if self.self_contact is not None:
            check_state(self.model, state, "state", particles=True)
            self.self_contact.rebuild(state.particle_q)

    def check_self_contact_overflow(self) -> tuple[int, int]:
        """Self-contact pairs dropped so far by full buffers, ``(vertex-triangle, edge-edge)``; warns when nonzero.

        Reads the device (call it outside captured graphs). Dropped pairs exert no force but still limit
        the displacement bounds, so the mesh stays penetration-free; raise
        ``particle_vertex_contact_buffer_size`` / ``particle_edge_contact_buffer_size`` to keep them.
        """
        return (0, 0) if self.self_contact is None else self.self_contact.check_overflow()

    # -- reset and notifications ------------------------------------------------------------------

    def reset(self, state, world_mask=None, flags=None) -> None:
        """Copy ``model.body_q``/``body_qd`` into ``state`` for the selected worlds (seed revision).

        Args:
            state: the state to reset (modified in place).
            world_mask: ``None`` (everything), or a 1-D ``wp.bool`` array on the solver's device of
                length ``world_count`` (local worlds) or ``world_count + 1`` (the last entry selects
                entities of no world, ``-1``).
            flags: ``newton.StateFlags`` (or int) naming the body fields to copy; ``None`` = all.
                Particle flags are not supported: with particles in the model they only warn, and the
                particle state and solver history stay as they are.

        Rigid AVBD history of the selected worlds is cleared whatever the flags: joint multipliers and
        C0 zeroed, penalties back to their minimum, the adaptive start cold, body–body contacts cold at the next
        contact refresh (:mod:`.rigid.reset`), tendon tensions zeroed and the spans' rest lengths in ``state`` back to
        their initial values (:mod:`.rigid.tendons`); particle–body attachments' multipliers of those worlds cleared.
        """
        check_world_mask(self.model, world_mask)
        flags = int(newton.StateFlags.ALL) if flags is None else int(flags)
        if self.model.particle_count and flags & int(newton.StateFlags.PARTICLE):
            warnings.warn("SolverVBD.reset: particle flags are not supported; particle state is unchanged",
                          newton.NewtonWarning, stacklevel=2)
        if not self.options.integrate_with_external_rigid_solver:
            reset_bodies(self.model, state, world_mask, flags)
        if self.rigid is not None:
            reset_rigid_history(self.model, self.rigid, world_mask, state)  # tendon material too
        if self.attachments is not None:
            self.attachments.reset(self.model, world_mask)  # attachments' multipliers (soft and hard rows)

    def notify_model_changed(self, flags) -> None:
        """Re-check bodies (``BODY_PROPERTIES``/``BODY_INERTIAL_PROPERTIES``); rebuild the joint layout on those
        and on ``JOINT_PROPERTIES``.

        Particle masses, flags, element materials and contact materials, body masses and inertias, and
        joint drive and limit gains are read from the model's arrays every step, so in-place edits act
        at the next step without a notification. A rebuild keeps the joints' hard/soft modes and starts
        the rigid history cold; it also re-derives which bodies are coupled to particles.

        ``TENDON_PROPERTIES`` rebuilds the tendon runs from the model's tendon arrays: routes, compliance, damping and
        the rest lengths :meth:`reset` restores (the current material lives in the State); tensions start cold.
        Every call re-runs the model-feature audit (:mod:`.features`); ``JOINT_DOF_PROPERTIES`` also re-runs
        the joint refusals, so a drive or limit set on a BALL or multi-angle D6 DOF after construction
        raises ``NotImplementedError`` there (before anything changes) instead of being ignored.
        ``SHAPE_PROPERTIES`` re-reads which triangle-mesh shapes collide with particles (their full-surface
        soft contacts are refused at ``step``).
        """
        flags, mf = int(flags), newton.ModelFlags
        body = flags & (int(mf.BODY_PROPERTIES) | int(mf.BODY_INERTIAL_PROPERTIES))
        joint = flags & int(mf.JOINT_PROPERTIES)
        check_model_features(self.model)
        check_tendons_external(self.model, self.options.integrate_with_external_rigid_solver)
        check_attachments(self.model, self.options.integrate_with_external_rigid_solver)  # stiffness set to inf
        if flags & int(mf.SHAPE_PROPERTIES):
            self.mesh_shapes = mesh_particle_shapes(self.model)  # COLLIDE_PARTICLES may have changed
        if flags & int(mf.TENDON_PROPERTIES) and self.rigid is not None:
            self.rigid.refresh_tendons(self.model)  # routes, materials, reset rest lengths; tensions cold
        if flags & int(mf.JOINT_DOF_PROPERTIES) and not joint and self.rigid is not None:
            check_joint_features(self.model)  # a drive gained on a BALL DOF is refused, not ignored
            check_joint_properties(self.model)
        if body:
            _check_model(self.model, self.options.integrate_with_external_rigid_solver)
        if (body or joint) and not self.options.integrate_with_external_rigid_solver:
            modes = self.rigid.joints.hard.numpy() if self.rigid is not None else None
            self.rigid = (RigidWork(self.model, self.options, self.compliant) if dynamic_bodies(self.model).any()
                          else None)
            self.attachments = self._attachments()
            self.coupling = self._coupling()
            self.proxy_snapshot = proxy_snapshot(self.model, self.coupling)
            if self.rigid is not None and modes is not None and self.rigid.joint_count:
                self.rigid.joints.hard.assign(modes)

    # -- proxy coupling (Newton's SolverCoupledProxy; see .proxy_coupling) --------------------------

    def coupling_supports_inertial_property_refresh(self) -> bool:
        """True: body masses and inertias are read from the model's arrays every step (no derived cache)."""
        return True

    def coupling_supports_full_surface_soft_contacts(self) -> bool:
        """True: edge and face soft-contact records are consumed, their soft point re-evaluated at the current
        iterate (:mod:`.particles.contacts`; triangle-mesh shapes are refused at ``step``)."""
        return True

    def coupling_notify_iteration_restarts(self, enabled: bool) -> None:
        """With restarts, every step saves its history and a restart restores it (:class:`.proxy_coupling.StepRewind`)."""
        check_iteration_restarts(enabled)
        self.rewind = StepRewind(self) if enabled else None

    def coupling_notify_input_state_update(self, state, flags, *, iteration_restart: bool = False,
                                           dt: float = 0.0) -> None:
        """Accept coupler edits of ``state`` (proxy poses, velocities, forces) before the next step.

        No history needs converting: every step snapshots its input body and particle poses as the
        step's start (the implicit-Euler inertial targets, contact displacements and the harvest's
        ``particle_q_prev``), so edited poses take effect as they are. A reset restart (``dt == 0``)
        clears the rigid history as :meth:`reset` does; an iteration restart (``dt > 0``) makes the next
        step start from the history the step's first pass started from.
        """
        check_input_update(int(flags) if isinstance(flags, newton.StateFlags) else flags, dt)
        if iteration_restart and dt > 0.0 and self.rewind is not None:
            self.rewind.restart = True
        elif iteration_restart and self.rigid is not None:
            reset_rigid_history(self.model, self.rigid, None)

    def coupling_prepare_proxy_contacts(self, state, contacts, *, contacts_freshly_detected: bool = False):
        """Keep every contact, proxy ones included (they stiffen the solve; the harvest leaves them out).

        Fresh contacts refresh the body–body contact history as usual; re-used contacts are solved
        again without a history update (:meth:`set_rigid_history_update`). An iteration restart
        resolves the step's contacts as its first pass did (the rewind restores that pass's flag).
        """
        del state
        if self.rigid is not None and contacts is not None:
            self.set_rigid_history_update(bool(contacts_freshly_detected))
        return contacts

    def coupling_harvest_proxy_wrenches(self, body_local_to_proxy_global, out_body_f, *, body_qd_before, state,
                                        state_out, contacts, dt) -> None:
        """Write the contact wrenches on proxy bodies [N, N·m]: particle and body–body contacts (see .proxy_coupling)."""
        del body_qd_before
        harvest_contact_feedback(self, state_out, dt, body_map=body_local_to_proxy_global, out_body_f=out_body_f)
        harvest_body_contact_feedback(self, state, state_out, contacts, dt, body_local_to_proxy_global, out_body_f)

    def coupling_harvest_proxy_particle_forces(self, particle_local_to_proxy_global, out_particle_f, *,
                                               particle_qd_before, state, state_out, contacts, dt) -> None:
        """Write the contact forces on proxy particles [N]: from VBD-integrated bodies and from self-contact pairs
        with non-proxy vertices (contact-force based, see .proxy_coupling)."""
        del particle_qd_before, state, contacts
        if self.work is not None and self.work.full_surface and particle_local_to_proxy_global.shape[0]:
            raise NotImplementedError(
                "SolverVBD: proxy-particle force harvesting with full-surface soft contacts "
                "(enable_rigid_soft_full_surface_contact=True) is not supported")
        harvest_contact_feedback(self, state_out, dt, particle_map=particle_local_to_proxy_global,
                                 out_particle_f=out_particle_f)


def _check_model(model, external_bodies: bool) -> None:
    """Refuse what the solve cannot run: uncoloured particles or bodies."""
    if model.particle_count and not model.particle_color_groups:
        raise ValueError(
            "SolverVBD requires particle coloring: model.particle_color_groups is empty; call builder.color() "
            "(newton.ModelBuilder.color) before builder.finalize()"
        )
    if model.body_count and not external_bodies:
        check_rigid_model(model)


__all__ = ["SolverVBD"]
