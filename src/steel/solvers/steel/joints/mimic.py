"""Mimic joints: one bilateral row per follower coordinate, ``q_f = c0 + c1 q_l``, inside one articulation.

A follower ``f`` (PRISMATIC, REVOLUTE or D6) of a leader ``l`` of the same DOF count, in the same
articulation, gets for each DOF ``k`` the row

    qd_f[k] - c1 qd_l[k] = -baumgarte (q_f[k] - c0 - c1 q_l[k]) / dt

(no position bias in the velocity sweeps), solved as a boxed row with an unbounded box (``ROW_BOX``,
``|lambda| <= UNBOUNDED``), so the coupling force takes either sign and the sweep solves it jointly with
drives, limits and contacts. The relation comes from the joint-owned mimic
(``ModelBuilder.set_joint_mimic``: ``Model.joint_mimic_joint``, ``joint_mimic_coeffs``) or from a
legacy mimic constraint (``add_constraint_mimic``: ``constraint_mimic_joint0`` follows
``constraint_mimic_joint1``), which replaces the follower's joint-owned mimic while it is enabled
(MuJoCo's precedence) and is ignored while disabled. Coefficients and the enabled flags are read
every step; the pairs are fixed at construction.

Construction raises ``NotImplementedError`` naming the joints for a mimic across articulations,
on a joint type whose coordinates are not componentwise (BALL, FREE, DISTANCE, also when written
into the model arrays directly), between joints of different DOF counts, or for two legacy
constraints on one follower; and ``ValueError`` for a joint index out of range (a leader of 1e6
read past the joint tables and crashed the process), a joint that follows itself (its row
``(1 - c1) qd_f`` locked it) or a non-finite coefficient. ``notify_model_changed`` with
``JOINT_PROPERTIES`` or ``CONSTRAINT_PROPERTIES`` re-reads the pairs with the same checks. An index
edited out of range without a notification is not searched for each step; the row kernel skips a
leader outside the tables or outside the follower's articulation rather than read past them.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from ....articulation.checks import joint_name
from ..data import FAMILY_ARTICULATED, ROW_BOX, UNBOUNDED, RowBuffers  # UNBOUNDED: a bilateral row's box
from ..rows.common import JointRowModel, reserve_rows, write_dof_row

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

MIMIC_TYPES = (newton.JointType.PRISMATIC, newton.JointType.REVOLUTE, newton.JointType.D6)


@wp.struct
class MimicModel:
    """The mimic relations the rows read: joint-owned per joint, legacy per constraint."""

    joint_leader: wp.array[wp.int32]  # Model.joint_mimic_joint  (joint,)
    joint_coeffs: wp.array[wp.vec2]  # Model.joint_mimic_coeffs: (c0, c1)  (joint,)
    legacy_of_joint: wp.array[wp.int32]  # the legacy constraint on the follower, -1: none  (joint,)
    legacy_leader: wp.array[wp.int32]  # Model.constraint_mimic_joint1  (constraint,)
    legacy_c0: wp.array[float]  # Model.constraint_mimic_coef0  (constraint,)
    legacy_c1: wp.array[float]  # Model.constraint_mimic_coef1  (constraint,)
    legacy_enabled: wp.array[wp.bool]  # Model.constraint_mimic_enabled  (constraint,)


@wp.func(inline=True)
def mimic_rows_of_joint(
    m: JointRowModel,
    mimic: MimicModel,
    rows: RowBuffers,
    j: int,
    owner: wp.vec3i,
    dt: float,
    baumgarte: float,
    joint_q: wp.array[float],
):
    """The mimic rows of follower ``j`` (``owner`` from :func:`~..rows.common.joint_row_owner`)."""
    art = owner[0]
    if art < 0:
        return
    leader = int(mimic.joint_leader[j])
    c = mimic.joint_coeffs[j]
    c0 = c[0]
    c1 = c[1]
    legacy = int(mimic.legacy_of_joint[j])
    if legacy >= 0:
        if mimic.legacy_enabled[legacy]:
            leader = int(mimic.legacy_leader[legacy])
            c0 = mimic.legacy_c0[legacy]
            c1 = mimic.legacy_c1[legacy]
        elif leader < 0:
            return
    if leader < 0 or leader >= m.joint_articulation.shape[0] or m.joint_articulation[leader] != owner[0]:
        return  # none, or an index edited out of range without a notification (module docstring)
    d0 = m.art_dof_start[art]
    for k in range(m.joint_qd_start[j + 1] - m.joint_qd_start[j]):
        dof = m.joint_qd_start[j] + k
        lead_dof = m.joint_qd_start[leader] + k
        if m.dof_is_kinematic[dof] != 0 or lead_dof >= d0 + m.art_dof_count[art]:
            continue
        error = joint_q[m.joint_q_start[j] + k] - c0 - c1 * joint_q[m.joint_q_start[leader] + k]  # [m or rad]
        r = reserve_rows(rows, owner[1], FAMILY_ARTICULATED, 1, owner[2])
        if r < 0:
            continue
        write_dof_row(rows, r, d0, m.art_dof_count[art], m.art_mass_start[art], dof, 1.0, ROW_BOX,
                      -baumgarte * error / dt, 0.0, UNBOUNDED, 0.0)
        rows.J[(2 * r) * rows.stride + lead_dof - d0] = -c1
        rows.dof_start[r, 1] = -1  # two DOFs: J qd by the general loop


class Mimic:
    """Host validation and the device view of a model's mimic relations (built only when it has some)."""

    def __init__(self, model: newton.Model):
        self.model = model
        n = int(model.joint_count)
        dev = model.device
        jtype = model.joint_type.numpy()
        art = model.joint_articulation.numpy()
        dofs = np.diff(model.joint_qd_start.numpy())
        allowed = [int(t) for t in MIMIC_TYPES]
        pairs = []  # (follower, leader, what)
        owned = model.joint_mimic_joint.numpy()
        coeffs = model.joint_mimic_coeffs.numpy()
        for f in np.nonzero(owned >= 0)[0]:
            _check_pair(model, int(f), int(owned[f]), coeffs[f], "joint mimic", "joint_mimic_joint",
                        "joint_mimic_coeffs")
            pairs.append((int(f), int(owned[f]), "joint mimic"))
        count = int(getattr(model, "constraint_mimic_count", 0) or 0)
        legacy_of_joint = np.full(max(n, 1), -1, dtype=np.int32)
        if count:
            followers = model.constraint_mimic_joint0.numpy()
            leaders = model.constraint_mimic_joint1.numpy()
            legacy_coeffs = np.stack([model.constraint_mimic_coef0.numpy(), model.constraint_mimic_coef1.numpy()], 1)
            for c in range(count):
                f, lead = int(followers[c]), int(leaders[c])
                if not 0 <= f < n:
                    raise ValueError(f"SolverSteel mimic constraint {c}: constraint_mimic_joint0={f} is not a joint "
                                     f"index (the model has {n} joints)")
                _check_pair(model, f, lead, legacy_coeffs[c], f"mimic constraint {c}", "constraint_mimic_joint1",
                            "constraint_mimic_coef0/coef1")
                if legacy_of_joint[f] >= 0:
                    raise NotImplementedError(f"SolverSteel: {joint_name(model, f)} follows two mimic constraints "
                                              f"({legacy_of_joint[f]} and {c}); one per follower is supported")
                legacy_of_joint[f] = c
                pairs.append((f, lead, f"mimic constraint {c}"))
        for f, lead, what in pairs:
            names = f"{joint_name(model, f)} and leader {joint_name(model, lead)}"
            if int(jtype[f]) not in allowed or int(jtype[lead]) not in allowed:
                raise NotImplementedError(f"SolverSteel {what}: {names}: only PRISMATIC, REVOLUTE and D6 joints "
                                          "mimic (BALL, FREE and DISTANCE coordinates are not componentwise)")
            if art[f] < 0 or art[f] != art[lead]:
                raise NotImplementedError(f"SolverSteel {what}: {names} are not in one articulation")
            if dofs[f] != dofs[lead]:
                raise NotImplementedError(f"SolverSteel {what}: {names} have {dofs[f]} and {dofs[lead]} DOFs")
        s = MimicModel()
        s.joint_leader = model.joint_mimic_joint
        s.joint_coeffs = model.joint_mimic_coeffs
        s.legacy_of_joint = wp.array(legacy_of_joint, dtype=wp.int32, device=dev)
        if count:
            s.legacy_leader = model.constraint_mimic_joint1
            s.legacy_c0 = model.constraint_mimic_coef0
            s.legacy_c1 = model.constraint_mimic_coef1
            s.legacy_enabled = model.constraint_mimic_enabled
        else:
            s.legacy_leader = wp.zeros(1, dtype=wp.int32, device=dev)
            s.legacy_c0 = s.legacy_c1 = wp.zeros(1, dtype=float, device=dev)
            s.legacy_enabled = wp.zeros(1, dtype=wp.bool, device=dev)
        self.struct = s

    @staticmethod
    def present(model: newton.Model) -> bool:
        """The model has a joint-owned mimic or a legacy mimic constraint."""
        return bool(_followers(model))


def _check_pair(model: newton.Model, f: int, lead: int, coeffs, what: str, leader_field: str,
                coeffs_field: str) -> None:
    """``ValueError`` for a leader index out of range, a joint that follows itself or a non-finite coefficient."""
    n = int(model.joint_count)
    if not 0 <= lead < n:
        raise ValueError(f"SolverSteel {what}: {joint_name(model, f)} has {leader_field}={lead}, not a joint index "
                         f"(the model has {n} joints)")
    if lead == f:
        raise ValueError(f"SolverSteel {what}: {joint_name(model, f)} follows itself ({leader_field}={lead})")
    values = np.asarray(coeffs, dtype=np.float64)
    if not np.isfinite(values).all():
        raise ValueError(f"SolverSteel {what}: {joint_name(model, f)} has a non-finite coefficient "
                         f"({coeffs_field}={values.tolist()!r})")


def _followers(model: newton.Model) -> list[int]:
    if not model.joint_count:
        return []
    owned = model.joint_mimic_joint.numpy()
    followers = set(np.nonzero(owned >= 0)[0].tolist())
    if int(getattr(model, "constraint_mimic_count", 0) or 0):
        followers |= set(model.constraint_mimic_joint0.numpy().tolist())
    return sorted(int(f) for f in followers)


def mimic_rows_per_world(model: newton.Model) -> int:
    """Most follower DOFs in one world: the rows the mimics take (capacity sizing)."""
    followers = _followers(model)
    if not followers:
        return 0
    world = np.maximum(model.joint_world.numpy(), 0)
    dofs = np.diff(model.joint_qd_start.numpy())
    per_world = np.zeros(max(int(model.world_count), 1), dtype=np.int64)
    for f in followers:
        per_world[world[f]] += int(dofs[f])
    return int(per_world.max())


def empty_mimic_model(device) -> MimicModel:
    """A placeholder for launches without mimics (never read)."""
    s = MimicModel()
    s.joint_leader = s.legacy_of_joint = s.legacy_leader = wp.zeros(1, dtype=wp.int32, device=device)
    s.joint_coeffs = wp.zeros(1, dtype=wp.vec2, device=device)
    s.legacy_c0 = s.legacy_c1 = wp.zeros(1, dtype=float, device=device)
    s.legacy_enabled = wp.zeros(1, dtype=wp.bool, device=device)
    return s
