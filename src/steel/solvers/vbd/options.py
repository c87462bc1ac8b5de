"""SolverVBD's constructor options: the seed revision's names and defaults, aliases, validation.

The constructor signature is the seed revision's (every option keyword-only, same names, same
defaults, in the same order); ``SIGNATURE`` is built from :class:`VBDOptions` and installed as the
solver's ``__init__.__signature__`` so ``inspect.signature`` shows exactly that list.

The later revision (Newton 1.8.0) renamed some options. Its spellings are accepted as aliases with
the seed meaning so that its examples run (``ALIASES``); spelling one option both ways raises
``ValueError``, except the DAT relaxation, whose two spellings 1.8.0 itself defines (``RELAXATION``).
Options the later revision added are accepted too (``EXTRAS``); those whose feature
is not built raise ``NotImplementedError`` when set to a non-default value, never silently ignored.
Its ``None`` defaults ("use the scene or built-in default") resolve to the seed defaults.

Every check runs before the solver allocates anything; each error names the option and the value.
"""

from __future__ import annotations

import inspect
import math
import numbers
import warnings
from dataclasses import dataclass, fields

import warp as wp

import newton

from ..inputs import check_bool

INF = float("inf")


@dataclass
class VBDOptions:
    """Every option of the seed revision's ``SolverVBD``, with its defaults (units in the docstrings there)."""

    iterations: int = 10
    friction_epsilon: float = 1e-2
    integrate_with_external_rigid_solver: bool = False
    particle_enable_self_contact: bool = False
    particle_self_contact_radius: float = 0.2
    particle_self_contact_margin: float = 0.2
    particle_conservative_bound_relaxation: float = 0.85
    particle_vertex_contact_buffer_size: int = 32
    particle_edge_contact_buffer_size: int = 64
    particle_collision_detection_interval: int = 0
    particle_edge_parallel_epsilon: float = 1e-5
    particle_enable_tile_solve: bool = True
    particle_topological_contact_filter_threshold: int = 2
    particle_rest_shape_contact_exclusion_radius: float = 0.0
    particle_external_vertex_contact_filtering_map: dict | None = None
    particle_external_edge_contact_filtering_map: dict | None = None
    rigid_avbd_alpha: float = 0.95
    rigid_avbd_joint_alpha: float | None = None
    rigid_avbd_contact_alpha: float | None = None
    rigid_avbd_beta: float = 0.0
    rigid_avbd_linear_beta: float | None = None
    rigid_avbd_angular_beta: float | None = None
    rigid_avbd_gamma: float = 0.999
    rigid_contact_hard: bool = True
    rigid_contact_history: bool = False
    rigid_contact_stick_motion_eps: float = 1.0e-4
    rigid_contact_stick_freeze_translation_eps: float = 1.0e-4
    rigid_contact_stick_freeze_angular_eps: float = 1.0e-4
    rigid_contact_k_start: float = 1.0e2
    rigid_body_contact_buffer_size: int = 64
    rigid_body_particle_contact_buffer_size: int = 256
    rigid_joint_linear_ke: float = 1.0e5
    rigid_joint_angular_ke: float = 1.0e5
    rigid_joint_linear_k_start: float = 1.0e2
    rigid_joint_angular_k_start: float = 1.0e1
    rigid_joint_linear_kd: float = 0.0
    rigid_joint_angular_kd: float = 0.0
    deterministic: object = None


def _signature() -> inspect.Signature:
    params = [
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("model", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    ]
    params += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default) for f in fields(VBDOptions)]
    return inspect.Signature(params)


SIGNATURE = _signature()

# Later-revision spelling -> seed option with the same meaning (per the project's decision table).
ALIASES = {
    "dat_conservative_bound_relaxation": "particle_conservative_bound_relaxation",
}
# 1.8.0's name for the DAT relaxation γ in (0, 1), shared by self-contact and rigid–soft DAT (.dat). Unlike the
# other aliases, 1.8.0 defines both spellings: the seed's is deprecated and overrides the new one, with a
# NewtonDeprecationWarning (measured on newton's SolverVBD, message and override alike); so here too when both are
# passed, rather than the ValueError other doubly spelled options raise. The seed's spelling alone is the seed's
# API here and does not warn (1.8.0 warns on it alone).
RELAXATION = "dat_conservative_bound_relaxation"
OLD_RELAXATION = "particle_conservative_bound_relaxation"
# The later revision's self-contact distances: with ``particle_self_contact_gap`` given, its
# ``particle_self_contact_margin`` (default 0.2) [m] is the interaction distance, the seed's radius,
# and the gap [m] the extra reach of detection only, so the seed's detection margin is margin + gap.
# Measured on newton's SolverVBD with margin 1 mm, gap 0.5 mm: a vertex 0.7 mm over a triangle is
# pushed away, one 1.2 mm over it is not, and a free vertex moves at most 0.85 x 1.5 mm / 2 per
# detection (the conservative bound of a 1.5 mm detection distance). Reading the gap as the seed's
# radius instead (rejected) capped a free vertex at 0.85 x 1 mm / 2 per detection
# there: cloth_poker_cards' falling cards at 0.51 m/s at 1/1200 s (newton's 0.77 m/s), and cloth_twist
# folded a hinge flat through itself from frame 97 (none through 130 frames as read here). Newton's
# cloth_rollers example calls its margin 0.3 + gap 0.3 "the 0.6 query radius".
LATER_GAP = "particle_self_contact_gap"

# Later-revision additions: name -> the value that leaves the seed behaviour unchanged. Any other
# (valid) value selects a feature this solver does not have yet -> NotImplementedError.
EXTRAS = {
    # 1.8.0's formulation switch: True selects compliant ALM (.rigid.compliant); False the seed's AVBD with
    # 1.8.0's DeprecationWarning; omitted: the seed's AVBD.
    "rigid_compliant_alm": False,
    "rigid_soft_contact_use_log_barrier": False,  # True: the body–particle log barrier (.particles.contacts)
    "rigid_soft_enable_dat": False,  # True: rigid–soft Divide-and-Truncate (.dat)
    "rigid_soft_dat_use_interval_arithmetic": False,  # True: refused (.dat certifies with a chord bound instead)
    "tendon_max_sweeps": 256,
    "tendon_settle_tol": 1e-3,
    "tendon_activation_tol": 2e-3,
    "enable_fast_math": True,  # 1.8.0's CUDA fast-math switch; kernels here always compile exact: any bool, no effect
    "collision_pipeline": None,
    "collision_frequency": None,
    "collision_frequency_type": None,
}
# Extras any valid value of which is harmless here.
EXTRAS_ANY_VALUE = frozenset({"enable_fast_math", "tendon_max_sweeps", "tendon_settle_tol", "tendon_activation_tol"})
# Seed options whose later-revision default is None ("scene value or built-in"): None -> seed default.
NONE_MEANS_DEFAULT = frozenset({
    "iterations", "particle_self_contact_radius", "particle_self_contact_margin",
    "particle_conservative_bound_relaxation", "particle_collision_detection_interval", "rigid_avbd_alpha",
    "rigid_avbd_beta", "rigid_contact_hard", "rigid_contact_history", "rigid_contact_k_start",
    "rigid_joint_linear_ke", "rigid_joint_angular_ke", "rigid_joint_linear_k_start", "rigid_joint_angular_k_start",
    "rigid_joint_linear_kd", "rigid_joint_angular_kd",
})


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _real(name: str, value, low: float = -INF, high: float = INF, *, open_low: bool = False) -> float:
    if not _is_real(value):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < low or value > high or (open_low and value == low):
        lo = "(" if open_low else "["
        raise ValueError(f"{name} must be finite and in {lo}{low}, {high}], got {value!r}")
    return value


def _int(name: str, value, low: int) -> int:
    if not _is_int(value):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value!r}")
    return int(value)




def _filtering_map(name: str, value):
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be a dict of primitive id -> list/set of primitive ids, or None, got {value!r}")
    for key, items in value.items():
        if not _is_int(key) or key < 0:
            raise ValueError(f"{name} keys must be non-negative int primitive ids, got {key!r}")
        if not isinstance(items, (list, set, tuple, frozenset)) or not all(_is_int(i) and i >= 0 for i in items):
            raise ValueError(f"{name}[{key}] must be a list or set of non-negative int primitive ids, got {items!r}")
    return value


_UNIT = ("rigid_avbd_alpha", "rigid_avbd_gamma")
_UNIT_OR_NONE = ("rigid_avbd_joint_alpha", "rigid_avbd_contact_alpha")
_NON_NEGATIVE = ("friction_epsilon", "particle_self_contact_radius", "particle_self_contact_margin",
                 "particle_edge_parallel_epsilon", "particle_rest_shape_contact_exclusion_radius", "rigid_avbd_beta",
                 "rigid_contact_stick_motion_eps", "rigid_contact_stick_freeze_translation_eps",
                 "rigid_contact_stick_freeze_angular_eps", "rigid_contact_k_start", "rigid_joint_linear_ke",
                 "rigid_joint_angular_ke", "rigid_joint_linear_k_start", "rigid_joint_angular_k_start")
_POSITIVE_INT = ("particle_vertex_contact_buffer_size", "particle_edge_contact_buffer_size",
                 "rigid_body_contact_buffer_size", "rigid_body_particle_contact_buffer_size")


def validate_option(name: str, value):
    """Validate one seed option; return its normalized value or raise ``ValueError``/``TypeError`` naming it."""
    if name == "iterations":
        return _int(name, value, 0)  # 0: no sweeps, the first iterate is the step (1.8.0 accepts it too)
    if name in _POSITIVE_INT:
        return _int(name, value, 1)
    if name == "particle_topological_contact_filter_threshold":
        return _int(name, value, 0)
    if name == "particle_collision_detection_interval":
        if not _is_int(value):
            raise TypeError(f"{name} must be an int, got {value!r}")
        return int(value)
    if name in _UNIT:
        return _real(name, value, 0.0, 1.0)
    if name in _UNIT_OR_NONE:
        return None if value is None else _real(name, value, 0.0, 1.0)
    if name in ("rigid_avbd_linear_beta", "rigid_avbd_angular_beta"):
        return None if value is None else _real(name, value, 0.0)
    if name in ("particle_conservative_bound_relaxation", RELAXATION):
        value = _real(name, value, 0.0, 1.0, open_low=True)
        if value == 1.0:  # (1 - γ) D is the gap DAT keeps: 1 would let primitives touch (1.8.0 refuses it too)
            raise ValueError(f"{name} must be in (0, 1), got {value!r}")
        return value
    if name in _NON_NEGATIVE:
        return _real(name, value, 0.0)
    if name in ("rigid_joint_linear_kd", "rigid_joint_angular_kd"):
        return max(_real(name, value), 0.0)  # documented: negative values are clamped to 0
    if name in ("particle_external_vertex_contact_filtering_map", "particle_external_edge_contact_filtering_map"):
        return _filtering_map(name, value)
    if name == "deterministic":
        if value is not None and not isinstance(value, wp.DeterministicMode):
            raise TypeError(f"deterministic must be a warp.DeterministicMode or None, got {value!r}")
        return value
    return check_bool(name, value)


def _validate_extra(name: str, value):
    if name in ("tendon_max_sweeps",):
        return _int(name, value, 1)
    if name in ("tendon_settle_tol", "tendon_activation_tol"):
        return _real(name, value, 0.0, open_low=True)
    if name in ("collision_pipeline", "collision_frequency", "collision_frequency_type"):
        return value
    return check_bool(name, value)


def build_options(**kwargs) -> tuple[VBDOptions, dict]:
    """Map aliases, validate every option (unknown names -> TypeError), return ``(options, extras)``.

    Raises:
        TypeError: an unknown option or a value of the wrong type.
        ValueError: a value out of range, or one option given under both of its spellings.
        NotImplementedError: a later-revision extra set to a value that selects an unbuilt feature.
    """
    names = {f.name for f in fields(VBDOptions)}
    seed_values, extras = {}, {}
    for name, value in kwargs.items():
        if name == LATER_GAP:
            continue
        if name == RELAXATION:
            if value is not None and OLD_RELAXATION not in kwargs:
                seed_values[OLD_RELAXATION] = validate_option(name, value)  # the error names the spelling passed
        elif name == OLD_RELAXATION:
            if value is not None:
                seed_values[name] = validate_option(name, value)
            if value is not None and RELAXATION in kwargs:
                # The seed's spelling alone is the seed's API and never warns (the project's decision table);
                # beside 1.8.0's spelling it overrides it, with 1.8.0's deprecation warning.
                warnings.warn(f"{OLD_RELAXATION} is deprecated and overrides {RELAXATION}; pass only {RELAXATION}.",
                              newton.NewtonDeprecationWarning, stacklevel=3)
        elif name in ALIASES:
            target = ALIASES[name]
            if target in kwargs:
                raise ValueError(f"SolverVBD got both {target!r} and its alias {name!r}; pass one of them")
            if value is not None:
                seed_values[target] = value
        elif name in names:
            if not (value is None and name in NONE_MEANS_DEFAULT):
                seed_values[name] = value
        elif name in EXTRAS:
            extras[name] = _validate_extra(name, value)
        else:
            raise TypeError(f"SolverVBD() got an unexpected keyword argument {name!r}")
    if kwargs.get(LATER_GAP) is not None:
        _later_self_contact_distances(kwargs, seed_values)
    defaults = VBDOptions()
    values = {f.name: validate_option(f.name, seed_values.get(f.name, getattr(defaults, f.name)))
              for f in fields(VBDOptions)}
    _map_collision_frequency(extras, values, "particle_collision_detection_interval" in kwargs)
    for name, value in extras.items():
        if name in ("rigid_compliant_alm", "rigid_soft_contact_use_log_barrier", "rigid_soft_enable_dat"):
            continue  # both values are built (.rigid.compliant; the barrier in .particles.contacts; .dat)
        if name not in EXTRAS_ANY_VALUE and name not in _SCHEDULE_OPTIONS and value != EXTRAS[name]:
            raise NotImplementedError(f"SolverVBD option {name}={value!r} is not implemented yet")
    if extras.get("rigid_compliant_alm") is False:
        # The caller used 1.8.0's switch to select the legacy path, which 1.8.0 deprecates; seed options
        # passed alone never warn (the project's decision table).
        warnings.warn("SolverVBD: rigid_compliant_alm=False selects the legacy AVBD path, deprecated in Newton "
                      "1.8.0; this solver runs the seed's AVBD, which is also what it runs when the option is "
                      "omitted", DeprecationWarning, stacklevel=3)
    return VBDOptions(**values), extras


def _later_self_contact_distances(kwargs: dict, seed_values: dict) -> None:
    """The later revision's (margin, gap) as the seed's (radius, margin); see ``LATER_GAP``."""
    if "particle_self_contact_radius" in kwargs:
        raise ValueError(f"SolverVBD got both 'particle_self_contact_radius' and {LATER_GAP!r}; pass "
                         "particle_self_contact_radius/particle_self_contact_margin (interaction/detection) or "
                         "particle_self_contact_margin/particle_self_contact_gap (interaction/extra detection)")
    gap = _real(LATER_GAP, kwargs[LATER_GAP], 0.0)
    margin = seed_values.get("particle_self_contact_margin", VBDOptions().particle_self_contact_margin)
    margin = validate_option("particle_self_contact_margin", margin)
    seed_values["particle_self_contact_radius"] = margin
    seed_values["particle_self_contact_margin"] = margin + gap


# Handed to newton.solvers.SolverBase, which owns the pipeline and the per-slot schedule (see .collision).
_SCHEDULE_OPTIONS = ("collision_pipeline", "collision_frequency", "collision_frequency_type")


def _map_collision_frequency(extras: dict, values: dict, interval_given: bool) -> None:
    """Read the later revision's self-contact detection schedule as the seed's detection interval.

    Giving both a ``SOFT_SELF_CONTACT`` entry and ``particle_collision_detection_interval`` -> ValueError.
    """
    ftype, freq = extras.get("collision_frequency_type"), extras.get("collision_frequency")
    if ftype is None and freq is None:
        return
    interval = soft_self_contact_interval(ftype, freq, values["particle_enable_self_contact"])
    if (_soft_self_contact_entry(ftype) is not None or _soft_self_contact_entry(freq) is not None) and interval_given:
        raise ValueError("SolverVBD got both particle_collision_detection_interval and a SOFT_SELF_CONTACT entry of "
                         "collision_frequency/collision_frequency_type; pass one of them")
    if interval is not None:
        values["particle_collision_detection_interval"] = interval


def soft_self_contact_interval(ftype, freq, self_contact: bool) -> int | None:
    """The seed's ``particle_collision_detection_interval`` for a later-revision schedule, or None if it sets none.

    ``SOFT_SELF_CONTACT`` at PRE_INIT -> -1, PRE_POST_INIT or AUTO -> 0, ITERATIONS every k -> k
    (``collision_frequency``, default 1). NONE with self-contact on -> ValueError (detection is what keeps
    the mesh penetration-free); other slots are rigid and handled elsewhere.
    """
    for name, mapping in (("collision_frequency_type", ftype), ("collision_frequency", freq)):
        if mapping is not None and not hasattr(mapping, "items"):
            raise TypeError(f"{name} must be a mapping of collision slot -> value, got {mapping!r}")
    slot_type = _soft_self_contact_entry(ftype)
    slot_freq = _soft_self_contact_entry(freq)
    if slot_type is None:
        return None
    kind = getattr(slot_type, "name", str(slot_type)).upper()
    if kind == "PRE_INIT":
        return -1
    if kind in ("PRE_POST_INIT", "AUTO"):
        return 0
    if kind == "ITERATIONS":
        return _int("collision_frequency", 1 if slot_freq is None else slot_freq, 1)
    if kind == "NONE":
        if self_contact:
            raise ValueError("collision_frequency_type[SOFT_SELF_CONTACT] = NONE while particle_enable_self_contact "
                             "is on: self-contact needs its detection")
        return None
    raise ValueError(f"collision_frequency_type has an unknown SOFT_SELF_CONTACT schedule {slot_type!r}")


def _soft_self_contact_entry(mapping):
    """The SOFT_SELF_CONTACT entry of a later-revision schedule mapping (looked up by the slot's name)."""
    if mapping is None:
        return None
    for slot, value in mapping.items():
        if getattr(slot, "name", str(slot)).upper().endswith("SOFT_SELF_CONTACT"):
            return value
    return None


__all__ = ["ALIASES", "EXTRAS", "SIGNATURE", "VBDOptions", "build_options", "soft_self_contact_interval",
           "validate_option"]
