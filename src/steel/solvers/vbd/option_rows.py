"""SolverVBD's option table (``OPTIONS``): one :class:`~steel.solvers.option_table.Option` row per constructor option.

Only the rows: what derives from them (the signature, aliases, extras) and the rules between options are
:mod:`steel.solvers.vbd.options`. This module imports neither Warp nor Newton (a row's check that needs
Warp imports it when it runs), so the command line's ``steel run --help`` lists the options without loading them.
"""

from __future__ import annotations

from ..option_table import ALIAS, REFUSED, SEED_ONLY, Option, check_deterministic, check_real, is_int


def _filtering_map(name: str, value):
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be a dict of primitive id -> list/set of primitive ids, or None, got {value!r}")
    for key, items in value.items():
        if not is_int(key) or key < 0:
            raise ValueError(f"{name} keys must be non-negative int primitive ids, got {key!r}")
        if not isinstance(items, (list, set, tuple, frozenset)) or not all(is_int(i) and i >= 0 for i in items):
            raise ValueError(f"{name}[{key}] must be a list or set of non-negative int primitive ids, got {items!r}")
    return value


def _damping(name: str, value) -> float:
    return max(check_real(name, value), 0.0)  # documented: negative values are clamped to 0


def _any(name: str, value):
    return value  # handed on unchecked (collision_pipeline and its schedule: .collision checks them)


_NON_NEGATIVE = {"low": 0.0}  # finite and >= 0
_UNIT = {"low": 0.0, "high": 1.0}  # finite and in [0, 1]
_GAMMA = {"low": 0.0, "high": 1.0, "low_open": True, "high_open": True}  # (1 - γ) D is the gap DAT keeps: 1 touches
_DEFAULT = {"none_is_default": True}  # 1.8.0's None ("scene value or built-in") reads as the seed default

# SolverVBD's options, one row each: first the seed revision's (the signature, in its order), then the later
# revision's (1.8.0) spellings and additions (``later=True``: accepted, outside the signature). The units and
# the full meaning are in SolverVBD.__init__'s docstring; the rows carry one line each for help texts.
OPTIONS = (
    Option("iterations", 10, "int", low=0, **_DEFAULT,
           meaning="VBD sweeps over all colours per step (0: the first iterate, the inertial target, is the step; None: "
                   "the scene's vbd:max_solver_iterations)"),
    Option("friction_epsilon", 1e-2, "float", **_NON_NEGATIVE, unit="m/s",
           meaning="slip speed below which Coulomb friction is a stiff spring (IPC smoothing; the slip distance is "
                   "friction_epsilon dt), for shape contacts and self-contact"),
    Option("integrate_with_external_rigid_solver", False, "bool",
           meaning="bodies are moved by another solver; state_in/state_out body poses are the colliders' start and "
                   "end of the step"),
    Option("particle_enable_self_contact", False, "bool", meaning="vertex-triangle and edge-edge self-contact"),
    Option("particle_self_contact_radius", 0.2, "float", **_NON_NEGATIVE, **_DEFAULT, unit="m",
           meaning="distance below which self-contact pairs push apart"),
    Option("particle_self_contact_margin", 0.2, "float", **_NON_NEGATIVE, **_DEFAULT, unit="m",
           meaning="self-contact detection distance (at least the radius)"),
    Option("particle_conservative_bound_relaxation", 0.85, "float", **_GAMMA, **_DEFAULT,
           meaning="fraction of the distance to the nearest primitive a vertex may move between detections"),
    Option("particle_vertex_contact_buffer_size", 32, "int", low=1, meaning="self-contact pairs kept per vertex"),
    Option("particle_edge_contact_buffer_size", 64, "int", low=1, meaning="self-contact pairs kept per edge"),
    Option("particle_collision_detection_interval", 0, "int", **_DEFAULT,
           meaning="self-contact detection cadence: < 0 once before initialization, 0 before and right after it, "
                   "n >= 1 also before every n-th iteration"),
    Option("particle_edge_parallel_epsilon", 1e-5, "float", **_NON_NEGATIVE,
           meaning="squared sine of the angle below which two edges count as parallel (closest points from the "
                   "overlap)"),
    Option("particle_enable_tile_solve", True, "bool",
           meaning="Warp tile kernels for the vertex step where the build has them (see the class docstring); "
                   "results agree with the general kernel"),
    Option("particle_topological_contact_filter_threshold", 2, "int", low=0, unit="rings",
           meaning="primitives this close in the mesh never self-collide"),
    Option("particle_rest_shape_contact_exclusion_radius", 0.0, "float", **_NON_NEGATIVE, unit="m",
           meaning="pairs closer than this in model.particle_q never self-collide"),
    Option("particle_external_vertex_contact_filtering_map", None, "object", optional=True, annotation="dict",
           check=_filtering_map, meaning="vertex -> triangles that never collide"),
    Option("particle_external_edge_contact_filtering_map", None, "object", optional=True, annotation="dict",
           check=_filtering_map, meaning="edge -> edges that never collide"),
    Option("rigid_avbd_alpha", 0.95, "float", **_UNIT, **_DEFAULT, meaning="C0 stabilization"),
    Option("rigid_avbd_joint_alpha", None, "float", **_UNIT, optional=True, meaning="joints' alpha (None: alpha)"),
    Option("rigid_avbd_contact_alpha", None, "float", **_UNIT, optional=True,
           meaning="contacts' alpha (None: alpha)"),
    Option("rigid_avbd_beta", 0.0, "float", **_NON_NEGATIVE, **_DEFAULT, unit="N/m² or N·m/rad²",
           meaning="per-iteration penalty ramp (0: fixed k)"),
    Option("rigid_avbd_linear_beta", None, "float", **_NON_NEGATIVE, optional=True, unit="N/m²",
           meaning="linear ramp (None: beta)"),
    Option("rigid_avbd_angular_beta", None, "float", **_NON_NEGATIVE, optional=True, unit="N·m/rad²",
           meaning="angular ramp (None: beta)"),
    Option("rigid_avbd_gamma", 0.999, "float", **_UNIT,
           meaning="per-step decay of k and of hard-slot λ (λ also scaled by alpha)"),
    Option("rigid_contact_hard", True, "bool", **_DEFAULT,
           meaning="body-body contacts as augmented Lagrangian (False: penalty with the shapes' ke/kd)"),
    Option("rigid_contact_history", False, "bool", **_DEFAULT,
           meaning="restore contact λ and k through Contacts.rigid_contact_match_index"),
    Option("rigid_contact_stick_motion_eps", 1.0e-4, "float", **_NON_NEGATIVE, unit="m",
           meaning="hard contacts whose anchors moved less stick (0: off)"),
    Option("rigid_contact_stick_freeze_translation_eps", 1.0e-4, "float", **_NON_NEGATIVE, unit="m",
           meaning="deadzone snap of bodies resting on dynamic bodies, translation (0: off)"),
    Option("rigid_contact_stick_freeze_angular_eps", 1.0e-4, "float", **_NON_NEGATIVE, unit="rad",
           meaning="deadzone snap of bodies resting on dynamic bodies, rotation (0: off)"),
    Option("rigid_contact_k_start", 1.0e2, "float", **_NON_NEGATIVE, **_DEFAULT, unit="N/m",
           meaning="contact penalty ramp seed, also of every particle-shape contact"),
    Option("rigid_body_contact_buffer_size", 64, "int", low=1, meaning="body-body contacts kept per body"),
    Option("rigid_body_particle_contact_buffer_size", 256, "int", low=1,
           meaning="particle contacts listed per coupled body"),
    Option("rigid_joint_linear_ke", 1.0e5, "float", **_NON_NEGATIVE, **_DEFAULT, unit="N/m",
           meaning="joint linear stiffness"),
    Option("rigid_joint_angular_ke", 1.0e5, "float", **_NON_NEGATIVE, **_DEFAULT, unit="N·m/rad",
           meaning="joint angular stiffness"),
    Option("rigid_joint_linear_k_start", 1.0e2, "float", **_NON_NEGATIVE, **_DEFAULT, unit="N/m",
           meaning="joint linear ramp seed"),
    Option("rigid_joint_angular_k_start", 1.0e1, "float", **_NON_NEGATIVE, **_DEFAULT, unit="N·m/rad",
           meaning="joint angular ramp seed"),
    Option("rigid_joint_linear_kd", 0.0, "float", **_DEFAULT, check=_damping, unit="N·s/m",
           meaning="joint linear structural damping (negative: 0)"),
    Option("rigid_joint_angular_kd", 0.0, "float", **_DEFAULT, check=_damping, unit="N·m·s/rad",
           meaning="joint angular structural damping (negative: 0)"),
    Option("deterministic", None, "object", check=check_deterministic,
           meaning="a warp.DeterministicMode, validated and kept"),
    # Later revision (Newton 1.8.0): another spelling, then additions.
    Option("dat_conservative_bound_relaxation", None, "float", **_GAMMA, optional=True, later=True, status=ALIAS,
           alias_of="particle_conservative_bound_relaxation",
           meaning="1.8.0's spelling of the DAT relaxation, shared with rigid-soft DAT"),
    Option("particle_self_contact_gap", None, "float", **_NON_NEGATIVE, optional=True, later=True, status=ALIAS,
           unit="m",
           meaning="1.8.0's extra detection reach: its margin is the seed's radius, margin + gap the seed's margin"),
    Option("rigid_compliant_alm", False, "bool", later=True,
           meaning="True: 1.8.0's compliant ALM formulation; False: the seed's AVBD with 1.8.0's DeprecationWarning; "
                   "omitted: the seed's AVBD, no warning"),
    Option("rigid_soft_contact_use_log_barrier", False, "bool", later=True,
           meaning="body-particle normal contacts with the self-contact log barrier"),
    Option("rigid_soft_enable_dat", False, "bool", later=True, meaning="rigid-soft Divide-and-Truncate"),
    Option("rigid_soft_dat_use_interval_arithmetic", False, "bool", later=True, status=REFUSED,
           meaning="interval bound of rigid-soft DAT (here a chord bound certifies the rotation instead)"),
    Option("tendon_max_sweeps", 256, "int", low=1, later=True, status=SEED_ONLY,
           meaning="1.8.0's capstan relaxation sweeps (guide friction is refused here)"),
    Option("tendon_settle_tol", 1e-3, "float", low=0.0, low_open=True, later=True, status=SEED_ONLY,
           meaning="1.8.0's capstan relaxation tolerance"),
    Option("tendon_activation_tol", 2e-3, "float", low=0.0, low_open=True, later=True, status=SEED_ONLY,
           meaning="1.8.0's dynamic-roller activation hysteresis"),
    Option("enable_fast_math", True, "bool", later=True, status=SEED_ONLY,
           meaning="1.8.0's CUDA fast-math switch; kernels here always compile exact"),
    Option("collision_pipeline", None, "object", later=True, check=_any,
           meaning="a solver-owned newton.CollisionPipeline"),
    Option("collision_frequency", None, "object", later=True, check=_any,
           meaning="collision slot -> detections per step (ITERATIONS: every k-th iteration)"),
    Option("collision_frequency_type", None, "object", later=True, check=_any,
           meaning="collision slot -> schedule (PRE_INIT, PRE_POST_INIT, ITERATIONS, NONE, AUTO)"),
)
