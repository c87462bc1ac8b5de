"""Contact compliance (``contact_compliance``): contacts with a stiffness as implicit spring-dampers.

A contact whose ``Contacts.rigid_contact_stiffness`` ``k`` [N/m] is positive (the per-contact material
of hydroelastic contacts) is solved with the unilateral spring-damper law

    F = max(0, -k phi_next - c u_next),    phi_next = phi + dt u_next

instead of the rigid normal law, where ``phi`` [m] is the contact's signed separation at the start of
the step, ``u_next`` [m/s] its normal velocity after the step and ``c`` [N·s/m] its
``rigid_contact_damping`` (zero stays zero: no damping). While the gap is open (``phi > 0``) the
damping term is dropped, so an open contact pulls nothing and only resists closing past the surface.
Contacts with zero or infinite stiffness keep the rigid law (the law's limit would push out a whole
overlap in one step, without the rigid rows' bias and ceiling). A live contact with a NaN or negative
stiffness or damping is invalid input (it let a box sink through the ground unflagged).

Row form (implicit in ``u_next``, as the soft constraints of Catto's "Soft Step", GDC 2011, and the
constraint force mixing of ODE). With the impulse ``lambda = F dt`` [N·s], ``F > 0`` reads

    u_next + k phi / (dt k + c) + lambda / (dt (dt k + c)) = 0,

so the normal row becomes ``J qd >= target - s lambda`` with

    target = -k phi / (dt k + c)  [m/s],    s = 1 / (dt (dt k + c))  [1/kg],

``lambda >= 0``. The sweep solves it as the exact projected step of ``1/2 l^T (A + S) l - b^T l``
(``S = diag(s)``), which is its ``contact_regularization`` step with ``g = s / d``
(``d = J Y + cfm``; ``sweep/pgs.py``): ``lambda <- max(0, lambda + (target - J qd - s lambda) / (d + s))``.
At rest (``u_next = 0``) a compliant contact carries ``F = -k phi``: a body of weight ``W`` resting on
``n`` contacts of equal stiffness ``k`` and depth sinks ``W / (n k)`` [m], whatever ``dt`` and ``c``.
The law has no position bias and no push-out cap: the force stays the spring's however deep the
overlap (the rigid rows' 10 m/s push-out ceiling would change the static answer of a deep, soft
contact). The friction weight ``rigid_contact_friction``, when positive, scales the pair's ``mu`` once;
friction is point friction (two tangent rows on the disk ``mu lambda``).

Counters (read on the host, :attr:`SolverSteel.compliance_contact_count` and
``compliance_skipped_contact_count``): compliant contacts that received rows in the last step, and
positive-stiffness contacts the row builder excluded on purpose (no moving body, beyond
``contact_gap_gate``, a cross-world pair). A compliant contact lost to the row capacity, or one with a
positive restitution while ``enable_restitution`` is on, or any live contact with a NaN or negative
stiffness or damping, is invalid input: an eager step raises before solving (naming the first such
contact's slot and value); a step captured in a CUDA graph defers it to ``check_constraint_capacity`` until
:meth:`reset`.

Phases, as the other row modules: the options check (:func:`check_compliance_options`, at
construction), the contacts check (:func:`check_compliance_contacts`, each step), the row law
(:func:`compliant_law`, per contact in ``contacts.py``), the sweep's soft step (``sweep/pgs.py``, through
``rows.compliance``) and the counters (:func:`count_compliant_contacts`, after the rows are built).
"""

from __future__ import annotations

import warnings

import warp as wp

import newton
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

# Entries of the counters array, one step's counts (the last two are errors).
COMPLIANT = 0
SKIPPED = 1
WITH_RESTITUTION = 2
LOST_TO_CAPACITY = 3
INVALID_MATERIAL = 4
NO_SLOT = 2147483647


@wp.func
def compliant_law(phi: float, stiffness: float, damping: float, dt: float):
    """``(target [m/s], softness [1/kg])`` of a compliant normal row (see the module docstring)."""
    c = damping
    if phi > 0.0:
        c = 0.0  # damping is dropped while the gap is open
    denominator = dt * stiffness + c
    return wp.vec2(-stiffness * phi / denominator, 1.0 / (dt * denominator))


def check_compliance_options(values: dict, *, anchor_beta_explicit: bool) -> None:
    """Raise for options ``contact_compliance=True`` cannot be combined with (at construction).

    ``values`` are the validated options by name; ``anchor_beta_explicit`` says whether the user
    passed ``friction_anchor_beta`` (an omitted one selects point friction with a warning, at the
    solver's construction).
    """
    if not values["contact_compliance"]:
        return
    # Checked before the unbuilt-feature test, so a combination the reference rejects says why.
    if values["row_schedule"] != "interleaved":
        raise NotImplementedError(
            f"contact_compliance=True requires row_schedule='interleaved', got {values['row_schedule']!r}")
    if values["articulated_contact_response"] == "propagation" and values["solve_mode"] == "serial":
        raise NotImplementedError(
            "contact_compliance=True is not supported with articulated_contact_response='propagation' and "
            "solve_mode='serial'")
    beta = values["friction_anchor_beta"]
    if anchor_beta_explicit and beta is not None and beta > 0.0:
        raise ValueError(f"contact_compliance=True requires point friction (friction_anchor_beta=0 or None), "
                         f"got friction_anchor_beta={beta!r}")
    rejected = {
        "iterations": values["iterations"] == 0,
        "contact_warmstart": values["contact_warmstart"],
        "velocity_iterations": values["velocity_iterations"] > 0,
        "contact_regularization": values["contact_regularization"] > 0.0,
        "contact_shared_anchor": values["contact_shared_anchor"],
        "contact_friction_shared_anchor": values["contact_friction_shared_anchor"],
        "friction_mode": values["friction_mode"] != "fixed_normal",
        "contact_friction_position_iterations": values["contact_friction_position_iterations"] != -1,
    }
    for name, bad in rejected.items():
        if bad:
            raise ValueError(f"contact_compliance=True is incompatible with {name}={values[name]!r}")


def warn_point_friction(reason: str) -> None:
    """An omitted ``friction_anchor_beta`` selects point friction where patches are not available."""
    warnings.warn(
        f"SolverSteel: {reason} uses point friction; friction_anchor_beta=None resolves to 0 (set it to 0 to "
        "silence this warning)",
        newton.NewtonWarning, stacklevel=4,
    )


def check_compliance_contacts(options, contacts) -> None:
    """``ValueError`` for a contacts buffer compliance cannot read (host metadata only, no device read)."""
    if not options.contact_compliance or contacts is None:
        return
    arrays = ("rigid_contact_stiffness", "rigid_contact_damping", "rigid_contact_friction")
    for name in arrays:
        array = getattr(contacts, name, None)
        if array is None or array.shape[0] < contacts.rigid_contact_max:
            raise ValueError(
                f"contact_compliance=True needs contacts.{name} of the buffer's full capacity "
                f"({contacts.rigid_contact_max}); create the Contacts with per_contact_shape_properties=True "
                "(hydroelastic contacts carry them)")
    if getattr(contacts, "rigid_contact_body_pair_reduced", False):
        raise ValueError("contact_compliance=True does not accept contacts reduced per body pair")


@wp.kernel
def _count_compliant(
    restitution_enabled: int,
    capturing: int,
    contact_count: wp.array[wp.int32],
    contact_shape0: wp.array[wp.int32],
    contact_shape1: wp.array[wp.int32],
    contact_stiffness: wp.array[float],
    contact_damping: wp.array[float],
    shape_restitution: wp.array[float],
    contact_row: wp.array[wp.int32],
    # Data out: this step's counts, and the errors since the last reset (for captured steps).
    counts_out: wp.array[wp.int32],
    errors_out: wp.array[wp.int32],
    first_invalid_out: wp.array[wp.int32],
):
    c = wp.tid()  # one thread per contact slot
    if c >= contact_count[0]:
        return
    k = contact_stiffness[c]
    d = contact_damping[c]
    if wp.isnan(k) or k < 0.0 or wp.isnan(d) or d < 0.0:
        wp.atomic_add(counts_out, INVALID_MATERIAL, 1)
        wp.atomic_min(first_invalid_out, 0, c)
        if capturing != 0:
            errors_out[INVALID_MATERIAL] = 1
        return
    if k <= 0.0 or wp.isinf(k):
        return
    r = contact_row[c]
    if r >= 0:
        wp.atomic_add(counts_out, COMPLIANT, 1)
        s0 = contact_shape0[c]
        s1 = contact_shape1[c]
        if restitution_enabled != 0 and shape_restitution[s0] + shape_restitution[s1] > 0.0:
            wp.atomic_add(counts_out, WITH_RESTITUTION, 1)
            if capturing != 0:
                errors_out[WITH_RESTITUTION] = 1
    elif r == -2:  # contacts/rows.py: the reservation did not fit
        wp.atomic_add(counts_out, LOST_TO_CAPACITY, 1)
        if capturing != 0:
            errors_out[LOST_TO_CAPACITY] = 1
    else:
        wp.atomic_add(counts_out, SKIPPED, 1)


class ComplianceCounters:
    """The device counters of one solver and their host checks."""

    def __init__(self, device):
        self.counts = wp.zeros(5, dtype=wp.int32, device=device)  # this step's, by the constants above
        self.errors = wp.zeros(5, dtype=wp.int32, device=device)  # set since the last reset
        self.first_invalid = wp.full(1, NO_SLOT, dtype=wp.int32, device=device)  # this step's first invalid slot
        self.no_material = wp.zeros(0, dtype=float, device=device)  # what the contact rows read without compliance

    def count(self, sm, sd, contacts) -> None:
        """Count this step's compliant and skipped contacts; an eager step raises on invalid input."""
        self.counts.zero_()
        self.first_invalid.fill_(NO_SLOT)
        device = sm.model.device
        capturing = bool(device.is_cuda and device.is_capturing)
        launch(
            _count_compliant,
            dim=contacts.rigid_contact_max,
            inputs=[int(sm.options.enable_restitution), int(capturing), contacts.rigid_contact_count,
                    contacts.rigid_contact_shape0, contacts.rigid_contact_shape1, contacts.rigid_contact_stiffness,
                    contacts.rigid_contact_damping, sm.model.shape_material_restitution, sd.contact_slots.row],
            outputs=[self.counts, self.errors, self.first_invalid],
            device=device,
        )
        if capturing:
            return  # deferred to check_constraint_capacity (eager steps raise here and record nothing)
        counts = self.counts.numpy()
        if counts[INVALID_MATERIAL]:
            c = int(self.first_invalid.numpy()[0])  # host reads of the offending slot only
            k = float(contacts.rigid_contact_stiffness.numpy()[c])
            d = float(contacts.rigid_contact_damping.numpy()[c])
            raise ValueError(
                f"contact_compliance: {int(counts[INVALID_MATERIAL])} contacts in this step have a NaN or negative "
                f"stiffness or damping, the first contact {c}: rigid_contact_stiffness={k!r}, "
                f"rigid_contact_damping={d!r}; they must be non-negative (an infinite stiffness is rigid)")
        self._raise(counts, "this step")

    def check(self) -> None:
        """Raise for invalid input of captured steps since the last reset (their deferred check)."""
        self._raise(self.errors.numpy(), "a step since the last reset")

    @staticmethod
    def _raise(counts, when: str) -> None:
        if counts[INVALID_MATERIAL]:
            raise ValueError(
                f"contact_compliance: {int(counts[INVALID_MATERIAL])} contacts in {when} had a NaN or negative "
                "rigid_contact_stiffness or rigid_contact_damping; they must be non-negative")
        if counts[WITH_RESTITUTION]:
            raise ValueError(
                f"contact_compliance: {int(counts[WITH_RESTITUTION])} compliant contacts in {when} have a positive "
                "shape restitution; set the restitution of shapes with compliant contacts to 0 or pass "
                "enable_restitution=False")
        if counts[LOST_TO_CAPACITY]:
            raise RuntimeError(
                f"contact_compliance: {int(counts[LOST_TO_CAPACITY])} compliant contacts in {when} were lost to the "
                "row capacity; raise free_body_constraint_max / articulation_constraint_max (or leave them None)")

    def reset(self) -> None:
        self.counts.zero_()
        self.errors.zero_()

    def value(self, entry: int) -> int:
        return int(self.counts.numpy()[entry])
