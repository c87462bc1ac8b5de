"""Observables of a step: ``contact_f`` per contact and ``body_parent_f`` per body.

* ``contact_f[c]`` is the force on shape 0's body [N] in world frame, ``-(sum of the contact's row
  net impulses (impulse plus preload, adhesion's pull) times their directions) / dt``; the torque
  part is zero. Contacts without rows (no
  responding body, gated, dropped for capacity) report zero.
* ``body_parent_f[b]`` is the wrench the parent applies through the inbound joint, about the
  body's COM, world frame, linear first: the core's RNEA backward pass with the step's solved
  joint accelerations ``(qd' - qd) / dt`` and, as external loads, gravity, ``State.body_f`` and the
  contact forces (each contact's force acts at its effective surface point). Bodies outside
  every articulation report zero. It is also written, whether or not the observable is requested,
  into the legacy ``State.body_parent_f`` of ``state_out`` when that attribute is allocated
  (``Model.request_state_attributes("body_parent_f")``), as the reference does; with sleeping each
  output gets the solver's kept copy, so either of two alternating states reads the last awake value.
* ``body_awake[b]`` (``enable_sleeping`` only) is True unless body ``b``'s articulation is asleep;
  written by :mod:`.sleeping.stages`, seeded from the current flags when allocated.
"""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

import newton
from newton.solvers import SolverBase

from ...articulation import eval_body_parent_f
from .data import RowBuffers
from .joints.velocity_limits import input_velocity
from ...launches import launch


class SteelObservableKind(SolverBase.ObservableKind):
    """Newton's observable kinds plus SolverSteel's own."""

    BODY_AWAKE = "body_awake"
    """Per body: True unless its articulation is asleep (``enable_sleeping`` only)."""


@dataclass(eq=False)
class SteelObservables(SolverBase.Observables):
    """Newton's observable arrays plus ``body_awake``."""

    body_awake: wp.array | None = SolverBase.Observables.field(  # noqa: RUF009
        dtype=wp.bool, frequency=newton.Model.AttributeFrequency.BODY
    )
    """Per body: True = awake, shape ``(body_count,)``."""


@wp.kernel
def _contact_wrenches(
    dt: float,
    # Model:
    shape_body: wp.array[int],
    body_com: wp.array[wp.vec3],
    # Contacts:
    contact_count: wp.array[wp.int32],
    contact_shape0: wp.array[wp.int32],
    contact_point0: wp.array[wp.vec3],
    contact_offset0: wp.array[wp.vec3],
    contact_shape1: wp.array[wp.int32],
    contact_point1: wp.array[wp.vec3],
    contact_offset1: wp.array[wp.vec3],
    # Rows:
    contact_row: wp.array[wp.int32],
    contact_row_count: wp.array[wp.int32],
    rows: RowBuffers,
    # Data in:
    body_q: wp.array[wp.transform],
    # Data out:
    contact_f_out: wp.array[wp.spatial_vector],
    body_contact_f_out: wp.array[wp.spatial_vector],
):
    c = wp.tid()  # one thread per contact slot
    f1 = wp.vec3(0.0)
    r = int(-1)
    if c < contact_count[0]:
        r = contact_row[c]
    if r >= 0:
        for k in range(r, r + contact_row_count[c]):
            f1 += rows.dir[k] * ((rows.impulse[k] + rows.preload[k]) / dt)  # net of adhesion's pull
    if contact_f_out:
        contact_f_out[c] = wp.spatial_vector(-f1, wp.vec3(0.0))
    if r < 0 or not body_contact_f_out:
        return
    for side in range(2):
        s = contact_shape0[c]
        point = contact_point0[c] + contact_offset0[c]
        f = -f1
        if side == 1:
            s = contact_shape1[c]
            point = contact_point1[c] + contact_offset1[c]
            f = f1
        b = shape_body[s]
        if b >= 0:
            X = body_q[b]
            arm = wp.transform_point(X, point) - wp.transform_point(X, body_com[b])
            wp.atomic_add(body_contact_f_out, b, wp.spatial_vector(f, wp.cross(arm, f)))


def parent_f_outputs(observables, state_out) -> list:
    """The arrays that receive ``body_parent_f`` this step: the requested observable and the legacy
    ``state_out.body_parent_f`` (allocated by ``Model.request_state_attributes``), each at most once."""
    outputs = []
    if (observables is not None and observables.is_requested("body_parent_f")
            and observables.body_parent_f is not None):
        outputs.append(observables.body_parent_f)
    legacy = getattr(state_out, "body_parent_f", None)
    if legacy is not None and legacy.shape[0] and all(legacy.ptr != a.ptr for a in outputs):
        outputs.append(legacy)
    return outputs


def publish_parent_f(sd, outputs) -> None:
    """With sleeping: copy the kept ``body_parent_f`` (asleep bodies hold their last awake value)
    into every output (``state_out`` alternates between two states, so the legacy attribute of
    either must read the kept value, not what it held two steps ago)."""
    for out in outputs:
        wp.copy(out, sd.parent_f_kept)


def write_observables(sm, sd, observables, contacts, state_in, dt: float, state_out=None) -> None:
    """Fill the requested observables of this step and the legacy ``state_out.body_parent_f`` (call
    before the output state is published)."""
    parent_outputs = parent_f_outputs(observables, state_out)
    if observables is None and not parent_outputs:
        return
    model, rows = sm.model, sd.rows
    want_contact = (observables is not None and observables.is_requested("contact_f")
                    and observables.contact_f is not None)
    want_parent = bool(parent_outputs)
    body_contact_f = None
    if want_contact:
        observables.contact_f.zero_()
    if want_parent:
        sd.body_contact_f.zero_()
        body_contact_f = sd.body_contact_f
    if contacts is not None and (want_contact or want_parent) and contacts.rigid_contact_max > 0:
        launch(
            _contact_wrenches,
            dim=contacts.rigid_contact_max,
            inputs=[
                float(dt),
                model.shape_body,
                model.body_com,
                contacts.rigid_contact_count,
                contacts.rigid_contact_shape0,
                contacts.rigid_contact_point0,
                contacts.rigid_contact_offset0,
                contacts.rigid_contact_shape1,
                contacts.rigid_contact_point1,
                contacts.rigid_contact_offset1,
                sd.contact_slots.row,
                sd.contact_slots.row_count,
                rows.buffers,
                state_in.body_q,
            ],
            outputs=[observables.contact_f if want_contact else None, body_contact_f],
            device=model.device,
        )
    if want_parent:
        # Without sleeping the first output is evaluated (zeroed: bodies outside every articulation
        # report zero) and copied to the other; with sleeping the solver's kept array is evaluated
        # (asleep bodies keep their last awake value) and copied to each output.
        target = parent_outputs[0] if sd.sleep is None else sd.parent_f_kept
        if sd.sleep is None:
            target.zero_()
        qdd_solved_from(sm, sd, state_in, dt)
        eval_body_parent_f(model, sm.core.plan, sm.core.data, state_in.body_q, sd.qdd, target,
                           body_f_extra=body_contact_f,
                           joints=None if sd.sleep is None else sd.sleep.joints_skipping_asleep)
        for out in parent_outputs:
            if out is not target:
                wp.copy(out, target)


@wp.kernel
def _difference_quotient(a: wp.array[float], b: wp.array[float], dt: float, out: wp.array[float]):
    i = wp.tid()
    out[i] = (a[i] - b[i]) / dt


def qdd_solved_from(sm, sd, state_in, dt: float) -> None:
    """``sd.qdd = (qd_solved - qd_in) / dt``: the accelerations the step applies [m/s² or rad/s²]."""
    launch(_difference_quotient, dim=sm.model.joint_dof_count, inputs=[sd.qd, input_velocity(sm, sd, state_in),
                                                                      float(dt)],
           outputs=[sd.qdd], device=sm.model.device)
