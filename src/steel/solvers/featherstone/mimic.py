"""Joint-owned mimic joints of SolverFeatherstone as an exact coordinate reduction.

Owns: validation of ``Model.joint_mimic_joint``/``joint_mimic_coeffs`` at construction, the fold
of the mass matrix and bias onto the leaders, and the overwrite of follower coordinates.

A follower ``f`` of leader ``l`` (PRISMATIC, REVOLUTE or D6, DOF ``k`` following DOF ``k``) obeys
``q_f = c0 + c1 q_l`` and ``qd_f = c1 qd_l``. With ``G`` the map from the independent velocities to
all of ``qd`` (identity, plus ``c1`` in the follower's rows at the leader's column), the reduced
equations are ``(G^T H G) qdd_r = -G^T bias`` (Featherstone, *Rigid Body Dynamics Algorithms*,
sec. 8.1, constraints by a change of coordinates). In the dense per-articulation block that is,
for each follower DOF: add ``c1`` times its row and column to the leader's, then replace its row
and column by the identity (so ``qdd_f`` solves to 0) and move its bias to the leader. After the
solve ``qdd_f = c1 qdd_l``. ``q_f``/``qd_f`` are overwritten from the leader twice per step: in the
input state before the forces and the mass matrix are evaluated (:mod:`.forces`; a follower that
starts off its relation is corrected at once) and in the output state after integration
(:mod:`.advance`), so drift cannot accumulate. Mimic forces are the exact constraint forces (no
penalty gains).

Leaders must themselves be independent (Newton's ``joint_mimic_joint`` names the independent
reference joint) and in the same articulation; otherwise construction raises ``ValueError``
naming both joints.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

MIMIC_TYPES = (newton.JointType.PRISMATIC, newton.JointType.REVOLUTE, newton.JointType.D6)


def mimic_tables(model: newton.Model, plan):
    """Validated ``(leader per joint, coefficients per joint, has_mimic)`` as host arrays.

    Raises:
        ValueError: a follower or leader is not PRISMATIC/REVOLUTE/D6, their DOF counts differ,
            the leader is itself a follower, or the two are not in the same assigned articulation.
    """
    n = int(model.joint_count)
    leader = np.full(max(n, 1), -1, dtype=np.int32)
    coeffs = np.zeros((max(n, 1), 2), dtype=np.float32)
    raw = getattr(model, "joint_mimic_joint", None)
    if raw is None or n == 0:
        return leader, coeffs, False
    raw = raw.numpy()
    if not (raw >= 0).any():
        return leader, coeffs, False
    raw_coeffs = model.joint_mimic_coeffs.numpy()
    jtype = model.joint_type.numpy()
    art = model.joint_articulation.numpy()
    dofs = np.diff(model.joint_qd_start.numpy())
    labels = list(getattr(model, "joint_label", None) or [])

    def name(j):
        return f"joint {j} ('{labels[j]}')" if j < len(labels) else f"joint {j}"

    for f in np.nonzero(raw >= 0)[0]:
        lead = int(raw[f])
        both = f"mimic follower {name(f)} (articulation {art[f]}) and leader {name(lead)} (articulation {art[lead]})"
        if int(jtype[f]) not in MIMIC_TYPES or int(jtype[lead]) not in MIMIC_TYPES:
            raise ValueError(f"{both}: SolverFeatherstone supports mimic joints of type PRISMATIC, REVOLUTE or D6 only")
        if art[f] < 0 or art[f] != art[lead]:
            raise ValueError(f"{both}: SolverFeatherstone needs both joints in the same assigned articulation")
        if dofs[f] != dofs[lead]:
            raise ValueError(f"{both}: the joints have different DOF counts ({dofs[f]} and {dofs[lead]})")
        if raw[lead] >= 0:
            raise ValueError(f"{both}: the leader is itself a mimic follower; point the follower at the independent joint")
        leader[f] = lead
        coeffs[f] = raw_coeffs[f]
    return leader, coeffs, True


@wp.func
def fold_mimic_rows(
    start: int,
    end: int,
    n: int,
    base: int,
    first: int,
    tree_joint: wp.array[int],
    joint_qd_start: wp.array[int],
    mimic_leader: wp.array[int],
    mimic_coeffs: wp.array[wp.vec2],
    fold_matrix: int,
    # Data out (in place):
    mass_matrix: wp.array[float],
    dof_bias: wp.array[float],
):
    """Reduce one articulation's ``H`` (if ``fold_matrix``) and ``dof_bias`` onto the leaders, in place."""
    for t in range(start, end):
        j = tree_joint[t]
        lead = mimic_leader[j]
        if lead < 0:
            continue
        c = mimic_coeffs[j][1]
        for k in range(joint_qd_start[j + 1] - joint_qd_start[j]):
            fr = joint_qd_start[j] + k - first
            lr = joint_qd_start[lead] + k - first
            dof_bias[first + lr] = dof_bias[first + lr] + c * dof_bias[first + fr]
            dof_bias[first + fr] = 0.0
            if fold_matrix != 0:
                # G^T H G for one follower: fold its column, then its row (the diagonal picks up c^2 H_ff).
                for r in range(n):
                    mass_matrix[base + r * n + lr] = mass_matrix[base + r * n + lr] + c * mass_matrix[base + r * n + fr]
                for r in range(n):
                    mass_matrix[base + lr * n + r] = mass_matrix[base + lr * n + r] + c * mass_matrix[base + fr * n + r]
                for r in range(n):
                    mass_matrix[base + r * n + fr] = 0.0
                    mass_matrix[base + fr * n + r] = 0.0
                mass_matrix[base + fr * n + fr] = 1.0


@wp.func
def apply_mimic_coordinates(
    start: int,
    end: int,
    tree_joint: wp.array[int],
    joint_q_start: wp.array[int],
    joint_qd_start: wp.array[int],
    mimic_leader: wp.array[int],
    mimic_coeffs: wp.array[wp.vec2],
    # Data out (in place):
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
):
    """Overwrite each follower's ``q = c0 + c1 q_leader``, ``qd = c1 qd_leader`` in one articulation."""
    for t in range(start, end):
        j = tree_joint[t]
        lead = mimic_leader[j]
        if lead < 0:
            continue
        c = mimic_coeffs[j]
        for k in range(joint_qd_start[j + 1] - joint_qd_start[j]):
            joint_q[joint_q_start[j] + k] = c[0] + c[1] * joint_q[joint_q_start[lead] + k]
            joint_qd[joint_qd_start[j] + k] = c[1] * joint_qd[joint_qd_start[lead] + k]


@wp.func
def apply_mimic_accelerations(
    start: int,
    end: int,
    tree_joint: wp.array[int],
    joint_qd_start: wp.array[int],
    mimic_leader: wp.array[int],
    mimic_coeffs: wp.array[wp.vec2],
    # Data out (in place):
    joint_qdd: wp.array[float],
):
    """``qdd_f = c1 qdd_leader`` for each follower DOF of one articulation (after the reduced solve)."""
    for t in range(start, end):
        j = tree_joint[t]
        lead = mimic_leader[j]
        if lead < 0:
            continue
        c = mimic_coeffs[j][1]
        for k in range(joint_qd_start[j + 1] - joint_qd_start[j]):
            joint_qdd[joint_qd_start[j] + k] = c * joint_qdd[joint_qd_start[lead] + k]
