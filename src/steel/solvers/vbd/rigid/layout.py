"""Host-side joint layout for rigid AVBD: which constraint slots each joint has, built once (numpy).

A joint couples a parent body (or the world, ``-1``) and a child body through two structural slots
and its drive/limit DOFs:

* slot 0 (LINEAR): the child's joint-frame origin sits on the parent's, along the *locked* linear
  directions. ``joint_lin_proj`` is the projector onto those directions in the parent's joint frame
  (identity for BALL, FIXED, REVOLUTE; ``I - a aᵀ`` for PRISMATIC; ``I - Σ aᵢ aᵢᵀ`` over a D6's
  orthonormalized linear axes). All zero: no linear slot.
* slot 1 (ANGULAR), by ``joint_ang_mode``: ``ANG_NONE`` (BALL, D6 with three angular axes),
  ``ANG_LOCK`` (FIXED, PRISMATIC, D6 without angular axes: the joint frames' relative rotation),
  ``ANG_HINGE`` (REVOLUTE, D6 with one angular axis: the axis seen from either body agrees),
  ``ANG_UNIVERSAL`` (D6 with two angular axes: the first axis, fixed in the parent, keeps its rest
  angle to the second, fixed in the child).

The child's joint frame is taken from the rest pose ``model.body_q`` (``X_c = T_c⁻¹ T_p X_p``) so a
model built in its rest pose starts with every structural constraint at exactly zero; ``model.joint_q``
at construction is the DOF value of that pose (the offset drives and limits are measured from).
FREE joints contribute nothing; DISTANCE raises.

Cables (``JointType.ROD``, built by ``ModelBuilder.add_rod``) are the seed's cable joints: a stretch
slot (slot 0, the anchors coincide, all three directions) and a bend slot (slot 1, ``ANG_LOCK``: the
anchors' relative rotation equals the structural rest rotation). Unlike the other joints their
frames come from the rod itself, not from ``model.body_q``: the child anchor is ``model.joint_X_c``
with its rotation composed with the inverse rest rotation ``joint_rest_q`` (so a rod authored with a
curved rest shape starts at that curvature's zero). Their stiffness and damping are the material's,
``joint_target_ke/kd`` at ``[shear_x, shear_y, stretch_z, bend_x, bend_y, twist_z]``, per axis of the
parent anchor frame (+z along the rod): the stretch slot is stiff ``shear`` across the rod and
``stretch`` along it, the bend slot ``bend`` about the two cross axes and ``twist`` about the rod.
Shear and bend must be isotropic about the rod (x and y entries equal, else ``ValueError``). Their six
DOFs carry no drives or limits.
"""

from __future__ import annotations

import numpy as np

import newton

KIND_NONE = 0  # FREE: no rows
KIND_BALL = 1
KIND_FIXED = 2
KIND_REVOLUTE = 3
KIND_PRISMATIC = 4
KIND_D6 = 5
KIND_CABLE = 6

ANG_NONE = 0
ANG_LOCK = 1
ANG_HINGE = 2
ANG_UNIVERSAL = 3

DOF_NONE = -1  # no drive/limit measure (multi-angular D6 axis without drive or limit material)
DOF_LINEAR = 0
DOF_ANGULAR = 1

_KINDS = {
    int(newton.JointType.FREE): KIND_NONE,
    int(newton.JointType.BALL): KIND_BALL,
    int(newton.JointType.FIXED): KIND_FIXED,
    int(newton.JointType.REVOLUTE): KIND_REVOLUTE,
    int(newton.JointType.PRISMATIC): KIND_PRISMATIC,
    int(newton.JointType.D6): KIND_D6,
    int(newton.JointType.ROD): KIND_CABLE,
}
_LIMIT_INF = 1.0e9  # Newton's "no limit" is ±1e10; anything beyond this is treated as unbounded


def _quat_mul(a, b):
    """Hamilton product of (x, y, z, w) quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def _quat_rotate(q, v):
    u, w = np.asarray(q[:3]), q[3]
    return v + 2.0 * w * np.cross(u, v) + 2.0 * np.cross(u, np.cross(u, v))


def _inverse(t):
    """Inverse of a (px, py, pz, qx, qy, qz, qw) transform."""
    qi = np.array([-t[3], -t[4], -t[5], t[6]])
    return np.concatenate([-_quat_rotate(qi, t[:3]), qi])


def _compose(a, b):
    return np.concatenate([a[:3] + _quat_rotate(a[3:], b[:3]), _quat_mul(a[3:], b[3:])])


def _orthonormal(axes):
    """Gram-Schmidt over the given directions; returns the independent unit vectors."""
    basis = []
    for a in axes:
        v = np.asarray(a, dtype=np.float64)
        for e in basis:
            v = v - np.dot(v, e) * e
        n = np.linalg.norm(v)
        if n > 1e-6:
            basis.append(v / n)
    return basis


def _label(model, j: int) -> str:
    labels = getattr(model, "joint_label", None)
    name = labels[j] if labels is not None and j < len(labels) and labels[j] else None
    return f"joint {j}" + (f" ({name!r})" if name else "")


class JointLayout:
    """Per-joint slot layout and per-DOF drive/limit layout, as numpy arrays (see the module docstring)."""

    def __init__(self, model):
        n = int(model.joint_count)
        jtype = model.joint_type.numpy() if n else np.zeros(0, np.int32)
        parent = model.joint_parent.numpy() if n else np.zeros(0, np.int32)
        child = model.joint_child.numpy() if n else np.zeros(0, np.int32)
        x_p = model.joint_X_p.numpy() if n else np.zeros((0, 7))
        body_q = model.body_q.numpy() if model.body_count else np.zeros((0, 7))
        dof_dim = model.joint_dof_dim.numpy() if n else np.zeros((0, 2), np.int32)
        qd_start = model.joint_qd_start.numpy() if n else np.zeros(1, np.int32)
        q_start = model.joint_q_start.numpy() if n else np.zeros(1, np.int32)
        # Control.joint_target_q has its own layout where the model publishes one (else joint_q's).
        target_start = getattr(model, "joint_target_q_start", None)
        target_start = target_start.numpy() if target_start is not None and n else q_start
        axis = model.joint_axis.numpy() if model.joint_dof_count else np.zeros((0, 3))
        joint_q = model.joint_q.numpy() if model.joint_coord_count else np.zeros(0)
        target_ke = model.joint_target_ke.numpy() if model.joint_dof_count else np.zeros(0)
        target_kd = model.joint_target_kd.numpy() if model.joint_dof_count else np.zeros(0)
        lower = model.joint_limit_lower.numpy() if model.joint_dof_count else np.zeros(0)
        upper = model.joint_limit_upper.numpy() if model.joint_dof_count else np.zeros(0)
        limit_ke = model.joint_limit_ke.numpy() if model.joint_dof_count else np.zeros(0)

        self.kind = np.zeros(n, np.int32)
        self.x_c = np.zeros((n, 7), np.float32)
        self.lin_proj = np.zeros((n, 3, 3), np.float32)
        self.ang_mode = np.zeros(n, np.int32)
        self.ang_axis0 = np.zeros((n, 3), np.float32)
        self.ang_axis1 = np.zeros((n, 3), np.float32)
        self.ang_rest = np.zeros(n, np.float32)
        self.dof_kind = np.full(max(int(model.joint_dof_count), 1), DOF_NONE, np.int32)
        self.dof_axis = np.zeros((max(int(model.joint_dof_count), 1), 3), np.float32)
        self.dof_offset = np.zeros(max(int(model.joint_dof_count), 1), np.float32)
        self.dof_coord = np.zeros(max(int(model.joint_dof_count), 1), np.int32)  # index into joint_target_q
        # Cable material per joint, slot and parent-anchor axis: slot 0 (shear, shear, stretch) [N/m],
        # slot 1 (bend, bend, twist) [N·m/rad]; damping likewise [N·s/m], [N·m·s/rad].
        self.cable_ke = np.zeros((n, 2, 3), np.float32)
        self.cable_kd = np.zeros((n, 2, 3), np.float32)
        rest_q = model.joint_rest_q.numpy() if n and getattr(model, "joint_rest_q", None) is not None else None
        x_c_model = model.joint_X_c.numpy() if n else np.zeros((0, 7))

        for j in range(n):
            t = int(jtype[j])
            if t not in _KINDS:
                name = newton.JointType(t).name if t in {int(v) for v in newton.JointType} else str(t)
                raise NotImplementedError(f"SolverVBD rigid AVBD: {_label(model, j)} is of type {name}, which is not "
                                          "supported (BALL, FIXED, REVOLUTE, PRISMATIC, D6, ROD and FREE are)")
            kind = _KINDS[t]
            self.kind[j] = kind
            if kind == KIND_NONE:
                continue
            if kind == KIND_CABLE:
                self._cable(model, j, int(qd_start[j]), x_c_model[j], rest_q, int(q_start[j]), target_ke, target_kd)
                continue
            p, c = int(parent[j]), int(child[j])
            t_p = body_q[p].astype(np.float64) if p >= 0 else np.array([0, 0, 0, 0, 0, 0, 1.0])
            t_c = body_q[c].astype(np.float64)
            self.x_c[j] = _compose(_inverse(t_c), _compose(t_p, x_p[j].astype(np.float64)))
            n_lin, n_ang = int(dof_dim[j, 0]), int(dof_dim[j, 1])
            d0 = int(qd_start[j])
            lin_axes = [axis[d0 + i] for i in range(n_lin)]
            ang_axes = [axis[d0 + n_lin + i] for i in range(n_ang)]
            if kind == KIND_BALL:
                lin_axes, ang_axes = [], [None, None, None]
            elif kind == KIND_FIXED:
                lin_axes, ang_axes = [], []
            elif kind == KIND_REVOLUTE:
                lin_axes = []
            elif kind == KIND_PRISMATIC:
                ang_axes = []
            basis = _orthonormal(lin_axes)
            self.lin_proj[j] = np.eye(3) - sum((np.outer(e, e) for e in basis), np.zeros((3, 3)))
            if len(ang_axes) == 0:
                self.ang_mode[j] = ANG_LOCK
            elif len(ang_axes) == 1:
                self.ang_mode[j] = ANG_HINGE
                self.ang_axis0[j] = np.asarray(ang_axes[0]) / np.linalg.norm(ang_axes[0])
            elif len(ang_axes) == 2:
                a0 = np.asarray(ang_axes[0]) / np.linalg.norm(ang_axes[0])
                a1 = np.asarray(ang_axes[1]) / np.linalg.norm(ang_axes[1])
                self.ang_mode[j] = ANG_UNIVERSAL
                self.ang_axis0[j], self.ang_axis1[j] = a0, a1
                self.ang_rest[j] = float(np.dot(a0, a1))
            else:
                self.ang_mode[j] = ANG_NONE
            for i in range(n_lin + n_ang):
                d = d0 + i
                angular = i >= n_lin
                acts = target_ke[d] > 0.0 or target_kd[d] > 0.0 or (
                    limit_ke[d] > 0.0 and (lower[d] > -_LIMIT_INF or upper[d] < _LIMIT_INF))
                if acts and (kind == KIND_BALL or (angular and n_ang > 1)):
                    raise NotImplementedError(
                        f"SolverVBD rigid AVBD: {_label(model, j)} has a drive or limit on DOF {i} of a "
                        f"{'BALL' if kind == KIND_BALL else f'D6 joint with {n_ang} angular axes'}; drives and "
                        "limits are supported on REVOLUTE and PRISMATIC joints and on D6 joints with at most "
                        "one angular axis")
                if kind == KIND_BALL:
                    continue  # quaternion coordinates: no drive/limit measure
                self.dof_axis[d] = axis[d] / max(np.linalg.norm(axis[d]), 1e-12)
                self.dof_coord[d] = int(target_start[j]) + i
                self.dof_offset[d] = joint_q[int(q_start[j]) + i] if model.joint_coord_count else 0.0
                if not angular:
                    self.dof_kind[d] = DOF_LINEAR
                elif n_ang == 1:
                    self.dof_kind[d] = DOF_ANGULAR

        _refuse_mimics(model, self.kind)
        self.has_lin = np.abs(self.lin_proj).sum(axis=(1, 2)) > 1e-6 if n else np.zeros(0, bool)
        self.has_ang = self.ang_mode != ANG_NONE
        self.has_lin &= self.kind != KIND_NONE
        self.has_ang &= self.kind != KIND_NONE

    def _cable(self, model, j, d0, x_c, rest_q, q0, target_ke, target_kd) -> None:
        """Stretch and bend slots of cable ``j`` from the rod's anchors, rest rotation and material."""
        ke, kd = target_ke[d0:d0 + 6], target_kd[d0:d0 + 6]
        for name, values in (("stiffness", ke), ("damping", kd)):
            if not (np.isclose(values[0], values[1], rtol=1e-6) and np.isclose(values[3], values[4], rtol=1e-6)):
                raise ValueError(
                    f"SolverVBD rigid AVBD: {_label(model, j)} is a rod with {name} {values.tolist()} "
                    "(shear_x, shear_y, stretch, bend_x, bend_y, twist); shear and bend must be isotropic "
                    "about the rod (x and y entries equal)")
        rest = rest_q[q0 + 3:q0 + 7].astype(np.float64) if rest_q is not None else np.array([0, 0, 0, 1.0])
        rest = rest / np.linalg.norm(rest)
        inv_rest = np.array([-rest[0], -rest[1], -rest[2], rest[3]])
        self.x_c[j] = np.concatenate([x_c[:3], _quat_mul(x_c[3:].astype(np.float64), inv_rest)])
        self.lin_proj[j] = np.eye(3)
        self.ang_mode[j] = ANG_LOCK
        self.cable_ke[j] = np.reshape(ke, (2, 3))
        self.cable_kd[j] = np.reshape(kd, (2, 3))

    def slot_count(self, j: int) -> int:
        """Structural slots of joint ``j`` addressable by ``set_joint_constraint_mode`` (0, 1 or 2)."""
        if self.kind[j] == KIND_NONE:
            return 0
        return 1 if self.kind[j] == KIND_BALL else 2


def _refuse_mimics(model, kind: np.ndarray) -> None:
    """The deprecated sparse mimic constraints are not run (Newton 1.8.0's SolverVBD documents them unsupported):
    raise rather than ignore them. Joint-owned mimics run (:mod:`.mimic`, which refuses the DOFs it cannot run)."""
    del kind
    if int(getattr(model, "constraint_mimic_count", 0) or 0):
        raise NotImplementedError("SolverVBD rigid AVBD: the model has deprecated sparse mimic constraints "
                                  f"(model.constraint_mimic_*, {int(model.constraint_mimic_count)}), which are not "
                                  "supported; author joint-owned mimics with ModelBuilder.set_joint_mimic instead")


def body_joint_adjacency(model, kind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR lists of the constraint-bearing joints touching each body: ``(start (body+1,), joints)``."""
    nb = int(model.body_count)
    if not model.joint_count:
        return np.zeros(nb + 1, np.int32), np.zeros(1, np.int32)
    parent, child = model.joint_parent.numpy(), model.joint_child.numpy()
    lists = [[] for _ in range(nb)]
    for j in range(int(model.joint_count)):
        if kind[j] == KIND_NONE:
            continue
        for b in (int(parent[j]), int(child[j])):
            if b >= 0:
                lists[b].append(j)
    start = np.zeros(nb + 1, np.int32)
    start[1:] = np.cumsum([len(x) for x in lists])
    flat = np.array([j for x in lists for j in x] or [0], np.int32)
    return start, flat
