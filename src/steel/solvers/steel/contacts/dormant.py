"""Dormant speculative contact rows: a contact that provably cannot act at the start of the sweep gets its
gate reference at build time and no Jacobian until the sweep needs one.

Why. On the chain scene (64 worlds of a 10-link pendulum, a few dozen self-contacts per world between links
that are inside the 0.1 m gap and never act) clearing and filling the rows' Jacobians was a large share of the
contact-row kernel, and the sweep's first pass then formed a full ``J qd`` of every row before its gate
(``sweep/pgs.py``, "Gate") could skip them.

Bound. The sweep starts from the predicted velocity ``qd*`` (``sd.qd``). Per articulation the free
dynamics store ``Q = max_k |qd_in_k|`` and ``D = max_k |qd*_k - qd_in_k|`` [m/s or rad/s]; per joint, along
its path to the root, ``L = sum |linear part of S_d|`` and ``A = sum |angular part of S_d|`` (``S_d`` the
DOF's motion subspace at the articulation's reference point). A point Jacobian entry is
``n . (v_d + w_d x arm)``, so ``S = L_0 + A_0 |arm_0| + L_1 + A_1 |arm_1|`` bounds ``sum_k |J_k|`` of every
row of the contact (a static side adds 0; a self-contact's summed side ``J0 + J1`` is bounded by the sum).
The closing speed at the start of the step from the body twists, ``u0``, is ``J qd_in`` up to float
rounding, and ``|J (qd* - qd_in)| <= S D``, so

    L0 = u0 - S D - a (S (Q + D) + |u0|) - 1e-9,    norm = S (1 + a)

with ``a`` (``RELATIVE_ALLOWANCE``, at least 1e-4, about 100 times the float32 differences between the two
paths) is below the float ``J qd*`` the sweep would form, and below the lower bound the gate would keep.
A contact is dormant when it is rigid and speculative (``phi > 0``), has only its normal row and possibly
its translational friction pair, starts with no impulse and no preload, and
``L0 - norm drift_last > target``, ``drift_last`` being the drift its world's last sweep ended with (a row
the sweep would materialize anyway costs more there than its build saved: without this condition humanoid
x16's sweep got slower; any subset of the provable rows keeps the iterate);
the rest of the conditions are the host's (:meth:`DormantRows.active`). Its normal row gets the gate reference
``(L0, norm, 0)`` (drift 0: the world's drift when the sweep starts), ``inv_mass`` -2 (normal row only) or
-3 (with its friction pair), which :func:`~..rows.common.ensure_response` reads as "not formed", and a
:class:`DormantRecord`; its side ranges are written, its ``J`` is not.

Materialization. Before anything reads a dormant contact's ``J`` (its normal step when the gate does not
prove it open; the tails of a group that carries load) the sweep calls :func:`materialize`: the rows' ``J``
ranges are written by the build's own function (``contacts/sides.write_contact_jacobians``) with the stored
arms, so ``J`` is bitwise what the build would have written, and the row becomes an ordinary unformed one
(``inv_mass`` -1). Every skip is justified by a
valid lower bound and every other visit computes in full, so the iterate is bitwise what it was.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ..data import RowBuffers
from .sides import write_contact_jacobians

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

# Relative allowance on the bound for float32 differences between the twist path (u0) and the J path
# [non-dimensional]; widened with the sweep's own rounding allowance for very wide rows.
RELATIVE_ALLOWANCE = 1.0e-4
ABSOLUTE_ALLOWANCE = wp.constant(1.0e-9)  # [m/s]
DORMANT_NORMAL = wp.constant(-2.0)  # inv_mass of a dormant normal-only contact
DORMANT_PAIR = wp.constant(-3.0)  # inv_mass of a dormant contact with its friction pair


@wp.struct
class DormantRecord:
    """What the walk of a dormant contact needs (indexed by its normal row)."""

    arm0: wp.vec3  # body 0's contact point minus its articulation's origin [m]
    arm1: wp.vec3  # body 1's, likewise [m]
    start0: wp.int32  # first DOF of body 0's articulation; -1: no side 0 (static side)
    start1: wp.int32  # first DOF of body 1's articulation; -1: none
    side_of_1: wp.int32  # the side body 1's Jacobian goes to (0: a self-contact's shared side)


@wp.struct
class DormantWalk:
    """The records and the tables the sweep's :func:`materialize` walks."""

    record: wp.array[DormantRecord]  # (row,)
    body_joint: wp.array[int]
    joint_parent_joint: wp.array[int]
    joint_qd_start: wp.array[int]
    dof_S: wp.array[wp.spatial_vector]


@wp.func(inline=True)
def is_dormant(rows: RowBuffers, r: int):
    """Row ``r`` is a dormant contact's normal row (its ``J`` not written yet)."""
    return rows.inv_mass[r] < -1.5


@wp.func(inline=True)
def materialize(rows: RowBuffers, walk: DormantWalk, r: int):
    """Write the Jacobians of dormant contact ``r`` as the build would have, bitwise; it is then an ordinary row."""
    count = int(1)
    if rows.inv_mass[r] < -2.5:
        count = 3
    rec = walk.record[r]
    n = rows.dir[r]
    t1 = n
    t2 = n
    if count == 3:
        t1 = rows.dir[r + 1]
        t2 = rows.dir[r + 2]
    write_contact_jacobians(rows, r, count, rows.body[r, 0], int(rec.start0), rec.arm0, rows.body[r, 1],
                            int(rec.start1), int(rec.side_of_1), rec.arm1, n, t1, t2, walk.body_joint,
                            walk.joint_parent_joint, walk.joint_qd_start, walk.dof_S)
    rows.inv_mass[r] = -1.0


@wp.func
def side_norm(body: int, present: int, arm: wp.vec3, body_joint: wp.array[int], path_sums: wp.array[wp.vec2]):
    """Bound on ``sum_k |J_k|`` of one side's point Jacobian [m/s per unit qd]; 0 without a side."""
    if present == 0:
        return float(0.0)
    j = body_joint[body]
    if j < 0:
        return float(0.0)
    p = path_sums[j]
    return p[0] + p[1] * wp.length(arm)


@wp.func
def dormant_bound(u0: float, norm: float, spread: wp.vec2, allowance: float):
    """``(L0, norm)`` of the gate reference (module docstring) from the closing speed ``u0`` [m/s], the bound
    ``norm`` on ``sum_k |J_k|`` and the articulations' ``(Q, D)`` [m/s or rad/s]."""
    q = spread[0]
    d = spread[1]
    lower = u0 - norm * d - allowance * (norm * (q + d) + wp.abs(u0)) - ABSOLUTE_ALLOWANCE
    return wp.vec2(lower, norm * (1.0 + allowance))


@wp.func
def contact_spread(art0: int, art1: int, spread: wp.array[wp.vec2]):
    """The larger ``(Q, D)`` of the contact's articulations (-1: none) [m/s or rad/s]."""
    s = wp.vec2(0.0)
    if art0 >= 0:
        s = spread[art0]
    if art1 >= 0:
        t = spread[art1]
        s = wp.vec2(wp.max(s[0], t[0]), wp.max(s[1], t[1]))
    return s


@wp.func
def dormant_record(arm0: wp.vec3, arm1: wp.vec3, side0: wp.vec4i, side1: wp.vec4i, side_of_1: int):
    """The record of a dormant contact from its arms [m] and sides (``contacts/sides.contact_side``)."""
    rec = DormantRecord()
    rec.arm0 = arm0
    rec.arm1 = arm1
    rec.start0 = wp.int32(-1)
    if side0[3] >= 0:
        rec.start0 = wp.int32(side0[0])
    rec.start1 = wp.int32(-1)
    if side1[3] >= 0:
        rec.start1 = wp.int32(side1[0])
    rec.side_of_1 = wp.int32(side_of_1)
    return rec


@wp.func
def joint_path_sums(art: int, tree_start: wp.array[int], tree_joint: wp.array[int],
                    joint_parent_joint: wp.array[int], qd_start: wp.array[int], dof_S: wp.array[wp.spatial_vector],
                    path_sums_out: wp.array[wp.vec2]):
    """Per joint of articulation ``art`` (tree order: a parent before its children), the sums of the linear and
    angular magnitudes of the motion subspaces on its path to the root [m/s and rad/s per unit qd]."""
    for t in range(tree_start[art], tree_start[art + 1]):
        j = tree_joint[t]
        s = wp.vec2(0.0)
        p = joint_parent_joint[j]
        if p >= 0:
            s = path_sums_out[p]
        for d in range(qd_start[j], qd_start[j + 1]):
            s += wp.vec2(wp.length(wp.spatial_top(dof_S[d])), wp.length(wp.spatial_bottom(dof_S[d])))
        path_sums_out[j] = s


@wp.func
def velocity_spread(art: int, skip: int, dof_start: wp.array[int], dof_count: wp.array[int],
                    joint_qd: wp.array[float], qd_pred: wp.array[float], spread_out: wp.array[wp.vec2]):
    """``(max_k |qd_in_k|, max_k |qd*_k - qd_in_k|)`` over articulation ``art``'s DOFs [m/s or rad/s]; infinite
    for an articulation the dynamics skipped (no prediction: never dormant)."""
    if skip != 0:
        spread_out[art] = wp.vec2(wp.inf, wp.inf)
        return
    q = float(0.0)
    d = float(0.0)
    for k in range(dof_start[art], dof_start[art] + dof_count[art]):
        q = wp.max(q, wp.abs(joint_qd[k]))
        d = wp.max(d, wp.abs(qd_pred[k] - joint_qd[k]))
    spread_out[art] = wp.vec2(q, d)


class DormantRows:
    """The dormant-row arrays of one solver: records, per-joint path sums, per-articulation spreads.

    ``enabled`` is the switch (tests compare against it off); :meth:`active` is this step's host decision.
    """

    def __init__(self, sm, sd):
        model, dev = sm.model, sm.model.device
        self.enabled = True
        self.record = wp.zeros(max(sd.rows.row_count_total, 1), dtype=DormantRecord, device=dev)
        self.path_sums = wp.zeros(max(model.joint_count, 1), dtype=wp.vec2, device=dev)
        self.spread = wp.full(max(sm.core.plan.articulation_count, 1), wp.vec2(np.inf, np.inf), dtype=wp.vec2,
                              device=dev)
        self._walk = None

    def allowance(self, sd) -> float:
        """The relative allowance ``a`` of the bound: at least ``RELATIVE_ALLOWANCE``, and 8 times the sweep's
        rounding allowance on a ``J qd`` sum for rows wide enough to need more."""
        return max(RELATIVE_ALLOWANCE, 8.0 * float(sd.rows.buffers.gate_rounding))

    def active(self, sm, sd, bounds_written: bool) -> bool:
        """Dormancy applies this step: the sweep runs with the gate on the "fixed_normal" friction mode, without
        velocity sweeps, sleeping, shared anchors or bilateral pre-elimination (which forms every row's response
        up front), and ``bounds_written``: the fused free dynamics, with the input kinematics, wrote the path
        sums and spreads this step (predict.py)."""
        opts = sm.options
        return (self.enabled and bounds_written and opts.friction_mode == "fixed_normal" and opts.iterations > 0
                and opts.velocity_iterations == 0 and sd.sleep is None and not opts.contact_shared_anchor
                and not opts.contact_friction_shared_anchor and not sm.preeliminate
                and float(sd.rows.buffers.gate_rounding) < 1.0)

    def walk(self, sm) -> DormantWalk:
        """The sweep's struct, rebuilt only when a table was rebound (a reused struct lets the launch replay)."""
        model, plan, data = sm.model, sm.core.plan, sm.core.data
        arrays = (self.record, plan.body_joint, plan.joint_parent_joint, model.joint_qd_start, data.dof_S)
        if self._walk is not None and all(a is b for a, b in zip(self._walk[0], arrays)):
            return self._walk[1]
        w = DormantWalk()
        w.record, w.body_joint, w.joint_parent_joint, w.joint_qd_start, w.dof_S = arrays
        self._walk = (arrays, w)
        return w
