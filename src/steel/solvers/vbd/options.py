"""SolverVBD's constructor options: the seed revision's names and defaults, aliases, validation.

Each option is one row of ``OPTIONS`` (an :class:`~steel.solvers.option_table.Option`, in
:mod:`steel.solvers.vbd.option_rows`): the seed revision's rows first, in its order, then the later
revision's spellings and additions (``later=True``). ``VBDOptions``, ``SIGNATURE``,
:func:`validate_option`, ``ALIASES``, ``EXTRAS``, ``EXTRAS_ANY_VALUE``, ``NONE_MEANS_DEFAULT`` and the
constructor docstring's ``Args:`` entries (:mod:`steel.solvers.vbd.solver`) derive from it.

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

import warnings
from dataclasses import fields

import newton

from ..option_table import ALIAS, REFUSED, SEED_ONLY, check_int, options_dataclass, signature, validators
from .option_rows import OPTIONS  # the rows (no Warp, for the command line's help); all below derives from them

_SEED = tuple(row for row in OPTIONS if not row.later)
_VALIDATORS = validators(OPTIONS)

VBDOptions = options_dataclass(
    "VBDOptions", _SEED, "Every option of the seed revision's ``SolverVBD``, with its defaults (units in the "
    "docstrings there); one field per seed row of ``OPTIONS``.", __name__)
SIGNATURE = signature(_SEED)

# Derived views of the table, by the names build_options and the tests read.
# Later-revision spelling -> seed option with the same meaning (per the project's decision table).
ALIASES = {row.name: row.alias_of for row in OPTIONS if row.alias_of}
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

# Later-revision additions: name -> the value that leaves the seed behaviour unchanged. A REFUSED row's other
# values select a feature this solver does not have yet -> NotImplementedError.
EXTRAS = {row.name: row.default for row in OPTIONS if row.later and not row.status == ALIAS}
# Extras any valid value of which is harmless here (validated, no effect).
EXTRAS_ANY_VALUE = frozenset(row.name for row in OPTIONS if row.status == SEED_ONLY)
# Seed options whose later-revision default is None ("scene value or built-in"): None -> seed default.
NONE_MEANS_DEFAULT = frozenset(row.name for row in _SEED if row.none_is_default)
_REFUSED = frozenset(row.name for row in OPTIONS if row.status == REFUSED)


def validate_option(name: str, value):
    """Validate one option (seed or later spelling); return its normalized value or raise ``ValueError``/``TypeError``
    naming it."""
    return _VALIDATORS[name](value)


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
            extras[name] = validate_option(name, value)
        else:
            raise TypeError(f"SolverVBD() got an unexpected keyword argument {name!r}")
    if kwargs.get(LATER_GAP) is not None:
        _later_self_contact_distances(kwargs, seed_values)
    defaults = VBDOptions()
    values = {f.name: validate_option(f.name, seed_values.get(f.name, getattr(defaults, f.name)))
              for f in fields(VBDOptions)}
    _map_collision_frequency(extras, values, "particle_collision_detection_interval" in kwargs)
    for name, value in extras.items():
        if name in _REFUSED and value != EXTRAS[name]:
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
    gap = validate_option(LATER_GAP, kwargs[LATER_GAP])
    margin = seed_values.get("particle_self_contact_margin", VBDOptions().particle_self_contact_margin)
    margin = validate_option("particle_self_contact_margin", margin)
    seed_values["particle_self_contact_radius"] = margin
    seed_values["particle_self_contact_margin"] = margin + gap


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
        return check_int("collision_frequency", 1 if slot_freq is None else slot_freq, 1)
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
