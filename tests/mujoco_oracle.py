"""MuJoCo as an independent float64 oracle for the joint-space mass matrix and bias forces.

The same MJCF file is loaded twice: into Newton (``ModelBuilder.add_mjcf``) and into MuJoCo.
The two importers may compute geom inertias differently, so the Newton model is overwritten
with MuJoCo's compiled inertial data (``body_mass``, ``body_ipos``, ``body_iquat`` and
``body_inertia``; armature ``dof_armature``), after which both describe the same rigid-body
system and differ only in their choice of coordinates. This module maps states and results
between those coordinates.

Coordinates
-----------
Bodies and joints are matched by name (the last component of Newton's label). Hinge DOFs are
identical in both (MuJoCo hinges of one body and the angular axes of Newton's D6 joint compose
as intrinsic rotations in the same order), and so are slide DOFs (MuJoCo ``slide``, Newton
PRISMATIC: the displacement along the same unit axis). A body with no MuJoCo joint is welded to
its parent; Newton gives it a FIXED joint with no coordinates. A root FREE joint (identity parent
and child anchors) and a BALL joint differ:

============  =======================================  ============================================
              MuJoCo                                   Newton
============  =======================================  ============================================
position      body-frame origin ``p`` (world)          ``p`` (child joint frame = body frame here)
orientation   quaternion ``(w, x, y, z)``              quaternion ``(x, y, z, w)``
free velocity ``y = (v_o, w_l)``: origin velocity      ``x = (v_c, w)``: COM velocity (world),
              (world), angular velocity (body frame)   angular velocity (world)
free force    ``(f, tau_o,l)``: force (world), torque  ``(f, tau_c)``: world wrench about the COM
              about the origin (body frame)
ball velocity ``w_l``: angular velocity of the child   ``w``: the same angular velocity in the
              in the child's (rotated) joint frame     parent anchor frame
============  =======================================  ============================================

With ``R`` the body rotation and ``c`` the COM in the body frame, ``w = R w_l`` and
``v_c = v_o + w x (R c)``, so ``x = T(q) y`` with the free block

    T = [[I, -[R c]x R],
         [0,  R       ]]

the ball block ``T = R_b``, the rotation of the ball quaternion (child joint frame to parent
anchor frame), and the identity on every hinge and slide DOF (``T`` also carries the DOF
permutation, here trivial).

Derivation of the mapped quantities
-----------------------------------
*Mass matrix.* Kinetic energy is coordinate-free: ``1/2 y^T M y = 1/2 x^T H x`` with
``y = T^-1 x`` for every ``x``, hence ``H = T^-T M T^-1``.

*Forces.* Power is coordinate-free: ``tau_mj . y = tau_n . x = tau_n . T y`` for every ``y``,
hence ``tau_mj = T^T tau_n`` and ``tau_n = T^-T tau_mj``. (Check on the free block:
``T^T (f, tau_c) = (f, R^T (tau_c + R c x f))``, the wrench moved to the origin and expressed in
the body frame, which is MuJoCo's free-joint generalized force.)

*Bias.* MuJoCo's equations of motion are ``M ydot + b_mj = tau_mj``. Differentiating
``x = T y`` gives ``xdot = T ydot + Tdot y``, so ``ydot = T^-1 (xdot - Tdot y)``. Substituting and
multiplying by ``T^-T``:

    T^-T M T^-1 xdot - T^-T M T^-1 Tdot y + T^-T b_mj = tau_n
    =>  H xdot + b_n = tau_n   with   b_n = T^-T b_mj - H (Tdot y).

``Tdot y`` on the free block: ``wdot = Rdot w_l + R w_ldot = w x w + R w_ldot = R w_ldot``, so the
angular row has no velocity product; ``d/dt (w x R c) = wdot x R c + w x (w x R c)``, so
``Tdot y = (w x (w x R c), 0)``. The ball block is the free block's angular row with ``R_b`` in
place of ``R`` (``Rdot_b = [w]x R_b`` in the parent anchor frame), so its ``Tdot y`` is zero. It depends on velocity only, so it belongs to the
Coriolis/centrifugal part; the gravity part maps as a force, ``g_n = T^-T g_mj``.

MuJoCo's ``qfrc_bias`` is linear in gravity (RNEA with gravity as a base acceleration), so the
Coriolis part is ``qfrc_bias(q, y) - qfrc_bias(q, 0)``.

Everything on the MuJoCo side is float64; Newton states are float32, so the oracle maps the
float32 state (as float64) to MuJoCo, and both sides see exactly the same configuration.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import mujoco
import numpy as np

import newton
import newton.examples

# ---------------------------------------------------------------------------------------------
# Small float64 helpers.


def _skew(a: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def quat_wxyz_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a (not necessarily normalized) quaternion ``(w, x, y, z)``."""
    w, x, y, z = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def xyzw_to_wxyz(q: np.ndarray) -> np.ndarray:
    return np.array([q[3], q[0], q[1], q[2]], dtype=np.float64)


def wxyz_to_xyzw(q: np.ndarray) -> np.ndarray:
    return np.array([q[1], q[2], q[3], q[0]], dtype=np.float64)


def _is_identity_transform(X: np.ndarray, tol: float = 1e-6) -> bool:
    p, q = X[:3], X[3:]
    return bool(np.abs(p).max() < tol and abs(abs(q[3]) - 1.0) < tol)


# ---------------------------------------------------------------------------------------------
# Loading.


def mujoco_xml(path: str) -> str:
    """The MJCF text at ``path`` with what MuJoCo cannot or need not load removed.

    * the ``<sensor>`` block (``nv_humanoid.xml`` names a missing site in it);
    * plane geoms attached to the world body (``nv_ant.xml``'s floor is vertical for MuJoCo).
      Neither contributes to the mass matrix or the bias forces.
    """
    root = ET.parse(path).getroot()
    for sensor in root.findall("sensor"):
        root.remove(sensor)
    for world in root.findall("worldbody"):
        for geom in world.findall("geom"):
            if geom.get("type") == "plane":
                world.remove(geom)
    return ET.tostring(root, encoding="unicode")


@dataclass
class OracleResult:
    """MuJoCo's quantities at one state, mapped into Newton's coordinates (float64).

    Attributes:
        H: joint-space inertia with armature, ``(dof, dof)``.
        bias: ``C(q, qd) qd + g(q)`` (MuJoCo's ``qfrc_bias``), ``(dof,)``.
        gravity: ``g(q)``, ``(dof,)``.
        coriolis: ``C(q, qd) qd``, ``(dof,)``.
        body_q: MuJoCo's body poses in Newton's layout ``(p, q_xyzw)``, ``(body, 7)``.
        T: the velocity map ``qd_newton = T qvel_mujoco``.
        qpos, qvel: the MuJoCo state evaluated.
    """

    H: np.ndarray
    bias: np.ndarray
    gravity: np.ndarray
    coriolis: np.ndarray
    body_q: np.ndarray
    T: np.ndarray
    qpos: np.ndarray
    qvel: np.ndarray


class MujocoOracle:
    """A Newton model and a MuJoCo model of one MJCF file with identical inertial data.

    Args:
        asset: an MJCF path, or the name of one of Newton's example assets.
        device: the Warp device of the Newton model.

    Attributes:
        model: the finalized Newton model, inertias and armature overwritten with MuJoCo's.
        mj_model, mj_data: the MuJoCo model and a scratch data.
        body_to_mj: MuJoCo body id of each Newton body.
        dof_to_mj: MuJoCo DOF index of each Newton DOF.
        free_joints: Newton joint indices of the FREE joints.
        ball_joints: Newton joint indices of the BALL joints.

    Supported: root FREE joints with identity anchors (the only FREE joints MJCF produces), BALL,
    slide (PRISMATIC), hinge (REVOLUTE or the angular axes of a D6) and welded bodies (FIXED);
    anything else raises ``NotImplementedError``.
    """

    def __init__(self, asset: str, device: str = "cpu"):
        path = asset if os.path.isfile(asset) else newton.examples.get_asset(asset)
        self.path = path
        self.mj_model = mujoco.MjModel.from_xml_string(mujoco_xml(path))
        self.mj_data = mujoco.MjData(self.mj_model)
        builder = newton.ModelBuilder()
        builder.add_mjcf(path)
        self.model = builder.finalize(device=device)
        self._build_maps()
        self._check_gravity()
        self.copy_inertia_to_newton()

    # -- structure ------------------------------------------------------------------------

    def _build_maps(self) -> None:
        m, mj = self.model, self.mj_model
        mj_body = {mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b): b for b in range(mj.nbody)}
        self.body_to_mj = np.empty(m.body_count, dtype=int)
        for b, label in enumerate(m.body_label):
            name = label.split("/")[-1]
            if name not in mj_body:
                raise KeyError(f"Newton body {label!r} has no MuJoCo body named {name!r}")
            self.body_to_mj[b] = mj_body[name]
        if len(set(self.body_to_mj.tolist())) != m.body_count or m.body_count != mj.nbody - 1:
            raise ValueError("the Newton and MuJoCo bodies do not match one to one")

        types = m.joint_type.numpy()
        child = m.joint_child.numpy()
        parent = m.joint_parent.numpy()
        q_start = m.joint_q_start.numpy()
        qd_start = m.joint_qd_start.numpy()
        dof_dim = m.joint_dof_dim.numpy()
        X_p = m.joint_X_p.numpy()
        X_c = m.joint_X_c.numpy()
        self.dof_to_mj = np.full(m.joint_dof_count, -1, dtype=int)
        self.coord_to_mj = np.full(m.joint_coord_count, -1, dtype=int)
        self.free_joints: list[int] = []
        self.ball_joints: list[int] = []
        hinge_like = (newton.JointType.REVOLUTE, newton.JointType.D6)
        for j in range(m.joint_count):
            mb = self.body_to_mj[child[j]]
            jnt = list(range(mj.body_jntadr[mb], mj.body_jntadr[mb] + mj.body_jntnum[mb]))
            names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, k) for k in jnt]
            label = m.joint_label[j].split("/")[-1]
            # A welded body has no MuJoCo joint to name; Newton names its FIXED joint itself.
            if types[j] != newton.JointType.FIXED and label != "_".join(names):
                raise ValueError(f"Newton joint {m.joint_label[j]!r} does not match MuJoCo joints {names}")
            if types[j] == newton.JointType.FREE:
                if len(jnt) != 1 or mj.jnt_type[jnt[0]] != mujoco.mjtJoint.mjJNT_FREE:
                    raise ValueError(f"FREE joint {label!r} is not a MuJoCo free joint")
                if parent[j] != -1 or not (_is_identity_transform(X_p[j]) and _is_identity_transform(X_c[j])):
                    raise NotImplementedError("only root FREE joints with identity anchors are mapped")
                self.free_joints.append(j)
                self.dof_to_mj[qd_start[j] : qd_start[j] + 6] = np.arange(6) + mj.jnt_dofadr[jnt[0]]
                self.coord_to_mj[q_start[j] : q_start[j] + 7] = np.arange(7) + mj.jnt_qposadr[jnt[0]]
            elif types[j] == newton.JointType.FIXED:
                if jnt:
                    raise ValueError(f"FIXED joint {m.joint_label[j]!r}: MuJoCo body has joints {names}")
            elif types[j] == newton.JointType.BALL:
                if len(jnt) != 1 or mj.jnt_type[jnt[0]] != mujoco.mjtJoint.mjJNT_BALL:
                    raise ValueError(f"BALL joint {label!r} is not a MuJoCo ball joint")
                self.ball_joints.append(j)
                self.dof_to_mj[qd_start[j] : qd_start[j] + 3] = np.arange(3) + mj.jnt_dofadr[jnt[0]]
                self.coord_to_mj[q_start[j] : q_start[j] + 4] = np.arange(4) + mj.jnt_qposadr[jnt[0]]
            elif types[j] == newton.JointType.PRISMATIC:
                if len(jnt) != 1 or mj.jnt_type[jnt[0]] != mujoco.mjtJoint.mjJNT_SLIDE:
                    raise ValueError(f"PRISMATIC joint {label!r} is not a MuJoCo slide joint")
                if mj.qpos0[mj.jnt_qposadr[jnt[0]]] != 0.0:
                    raise NotImplementedError(f"MuJoCo joint {label!r} has a nonzero reference position")
                self.dof_to_mj[qd_start[j]] = mj.jnt_dofadr[jnt[0]]
                self.coord_to_mj[q_start[j]] = mj.jnt_qposadr[jnt[0]]
            elif types[j] in hinge_like:
                if dof_dim[j][0] != 0 or dof_dim[j][1] != len(jnt):
                    raise NotImplementedError(f"joint {label!r}: only hinge DOFs are mapped")
                for k, mj_j in enumerate(jnt):
                    if mj.jnt_type[mj_j] != mujoco.mjtJoint.mjJNT_HINGE:
                        raise NotImplementedError(f"MuJoCo joint {names[k]!r} is not a hinge")
                    if mj.qpos0[mj.jnt_qposadr[mj_j]] != 0.0:
                        raise NotImplementedError(f"MuJoCo joint {names[k]!r} has a nonzero reference angle")
                    self.dof_to_mj[qd_start[j] + k] = mj.jnt_dofadr[mj_j]
                    self.coord_to_mj[q_start[j] + k] = mj.jnt_qposadr[mj_j]
            else:
                raise NotImplementedError(f"joint {label!r} of type {newton.JointType(int(types[j])).name}")
        if (self.dof_to_mj < 0).any() or sorted(self.dof_to_mj.tolist()) != list(range(mj.nv)):
            raise ValueError("the Newton and MuJoCo DOFs do not match one to one")
        if sorted(self.coord_to_mj.tolist()) != list(range(mj.nq)):
            raise ValueError("the Newton and MuJoCo coordinates do not match one to one")
        self._q_start = q_start
        self._qd_start = qd_start

    def _check_gravity(self) -> None:
        g_newton = self.model.gravity.numpy().astype(np.float64)
        if not np.allclose(g_newton, self.mj_model.opt.gravity[None, :], atol=1e-6):
            raise ValueError(f"gravity differs: Newton {g_newton}, MuJoCo {self.mj_model.opt.gravity}")

    def copy_inertia_to_newton(self) -> None:
        """Overwrite the Newton model's mass, COM, inertia (and inverses) and armature with MuJoCo's."""
        m, mj = self.model, self.mj_model
        mass = np.empty(m.body_count)
        com = np.empty((m.body_count, 3))
        inertia = np.empty((m.body_count, 3, 3))
        for b in range(m.body_count):
            mb = self.body_to_mj[b]
            mass[b] = mj.body_mass[mb]
            com[b] = mj.body_ipos[mb]
            R = quat_wxyz_to_matrix(mj.body_iquat[mb])
            inertia[b] = R @ np.diag(mj.body_inertia[mb]) @ R.T
        inv_mass = np.where(mass > 0.0, 1.0 / np.where(mass > 0.0, mass, 1.0), 0.0)
        inv_inertia = np.array([np.linalg.inv(I) if mass[b] > 0.0 else np.zeros((3, 3)) for b, I in enumerate(inertia)])
        m.body_mass.assign(mass.astype(np.float32))
        m.body_inv_mass.assign(inv_mass.astype(np.float32))
        m.body_com.assign(com.astype(np.float32))
        m.body_inertia.assign(inertia.astype(np.float32))
        m.body_inv_inertia.assign(inv_inertia.astype(np.float32))
        m.joint_armature.assign(mj.dof_armature[self.dof_to_mj].astype(np.float32))
        self.body_com = com

    # -- states ---------------------------------------------------------------------------

    def _free_frame(self, j: int, joint_q: np.ndarray):
        """Rotation ``R`` and world COM offset ``R c`` of the child of FREE joint ``j``."""
        a = self._q_start[j]
        R = quat_wxyz_to_matrix(xyzw_to_wxyz(joint_q[a + 3 : a + 7]))
        c = self.body_com[self.model.joint_child.numpy()[j]]
        return R, R @ c

    def _quaternion_coords(self):
        """Newton coordinate index of the first quaternion entry of each FREE and BALL joint."""
        return [self._q_start[j] + 3 for j in self.free_joints] + [self._q_start[j] for j in self.ball_joints]

    def velocity_map(self, joint_q: np.ndarray) -> np.ndarray:
        """``T(q)`` with ``joint_qd = T qvel`` (Newton rows, MuJoCo columns)."""
        q = np.asarray(joint_q, dtype=np.float64)
        nv = self.mj_model.nv
        T = np.zeros((nv, nv))
        T[np.arange(nv), self.dof_to_mj] = 1.0
        for j in self.free_joints:
            d = self._qd_start[j]
            md = self.dof_to_mj[d]
            R, rc = self._free_frame(j, q)
            T[d : d + 6, md : md + 6] = 0.0
            T[d : d + 3, md : md + 3] = np.eye(3)
            T[d : d + 3, md + 3 : md + 6] = -_skew(rc) @ R
            T[d + 3 : d + 6, md + 3 : md + 6] = R
        for j in self.ball_joints:
            d, a = self._qd_start[j], self._q_start[j]
            md = self.dof_to_mj[d]
            T[d : d + 3, md : md + 3] = quat_wxyz_to_matrix(xyzw_to_wxyz(q[a : a + 4]))
        return T

    def velocity_map_rate(self, joint_q: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """``Tdot qvel``, Newton rows: ``(w x (w x R c), 0)`` on each free block, zero elsewhere (ball too)."""
        q = np.asarray(joint_q, dtype=np.float64)
        out = np.zeros(self.mj_model.nv)
        for j in self.free_joints:
            d = self._qd_start[j]
            md = self.dof_to_mj[d]
            R, rc = self._free_frame(j, q)
            w = R @ qvel[md + 3 : md + 6]
            out[d : d + 3] = np.cross(w, np.cross(w, rc))
        return out

    def newton_to_mujoco(self, joint_q: np.ndarray, joint_qd: np.ndarray):
        """Newton ``(joint_q, joint_qd)`` -> MuJoCo ``(qpos, qvel)``, float64."""
        q = np.asarray(joint_q, dtype=np.float64)
        qd = np.asarray(joint_qd, dtype=np.float64)
        qpos = np.empty(self.mj_model.nq)
        qpos[self.coord_to_mj] = q
        for a in self._quaternion_coords():
            ma = self.coord_to_mj[a]
            qpos[ma : ma + 4] = xyzw_to_wxyz(q[a : a + 4])
        qvel = np.linalg.solve(self.velocity_map(q), qd)
        return qpos, qvel

    def mujoco_to_newton(self, qpos: np.ndarray, qvel: np.ndarray):
        """MuJoCo ``(qpos, qvel)`` -> Newton ``(joint_q, joint_qd)``, float64."""
        qpos = np.asarray(qpos, dtype=np.float64)
        q = qpos[self.coord_to_mj].copy()
        for a in self._quaternion_coords():
            ma = self.coord_to_mj[a]
            q[a : a + 4] = wxyz_to_xyzw(qpos[ma : ma + 4])
        qd = self.velocity_map(q) @ np.asarray(qvel, dtype=np.float64)
        return q, qd

    def random_state(self, rng: np.random.Generator, speed: float = 1.0):
        """A random Newton state as float32 ``(joint_q, joint_qd)``.

        Hinges and slides uniform within their MuJoCo range (or +-1 rad or m when unlimited), root
        position uniform in [-1, 1] m, root and ball orientations uniformly random unit
        quaternions (ball ranges ignored), ``joint_qd`` of
        standard deviation ``speed`` in Newton's coordinates.
        """
        mj = self.mj_model
        qpos = np.zeros(mj.nq)
        for k in range(mj.njnt):
            a = mj.jnt_qposadr[k]
            if mj.jnt_type[k] == mujoco.mjtJoint.mjJNT_FREE:
                qpos[a : a + 3] = rng.uniform(-1.0, 1.0, size=3)
                quat = rng.normal(size=4)
                qpos[a + 3 : a + 7] = quat / np.linalg.norm(quat)
            elif mj.jnt_type[k] == mujoco.mjtJoint.mjJNT_BALL:
                quat = rng.normal(size=4)
                qpos[a : a + 4] = quat / np.linalg.norm(quat)
            else:
                lo, hi = mj.jnt_range[k] if mj.jnt_limited[k] else (-1.0, 1.0)
                qpos[a] = rng.uniform(lo, hi)
        q, _ = self.mujoco_to_newton(qpos, np.zeros(mj.nv))
        qd = rng.normal(scale=speed, size=mj.nv)
        return q.astype(np.float32), qd.astype(np.float32)

    # -- evaluation -----------------------------------------------------------------------

    def _forward(self, qpos: np.ndarray, qvel: np.ndarray):
        d = self.mj_data
        d.qpos[:] = qpos
        d.qvel[:] = qvel
        d.qacc[:] = 0.0
        d.qfrc_applied[:] = 0.0
        d.xfrc_applied[:] = 0.0
        d.ctrl[:] = 0.0
        mujoco.mj_forward(self.mj_model, d)
        return d

    def evaluate(self, joint_q: np.ndarray, joint_qd: np.ndarray) -> OracleResult:
        """MuJoCo's mass matrix, bias forces and body poses at a Newton state, in Newton's coordinates."""
        mj = self.mj_model
        q = np.asarray(joint_q, dtype=np.float64)
        qpos, qvel = self.newton_to_mujoco(q, joint_qd)
        T = self.velocity_map(q)
        T_inv = np.linalg.inv(T)

        d = self._forward(qpos, np.zeros(mj.nv))
        gravity_mj = d.qfrc_bias.copy()
        d = self._forward(qpos, qvel)
        bias_mj = d.qfrc_bias.copy()
        M = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, d, M)
        body_q = np.empty((self.model.body_count, 7))
        for b, mb in enumerate(self.body_to_mj):
            body_q[b, :3] = d.xpos[mb]
            body_q[b, 3:] = wxyz_to_xyzw(d.xquat[mb])

        H = T_inv.T @ M @ T_inv
        H = 0.5 * (H + H.T)
        gravity = T_inv.T @ gravity_mj
        coriolis = T_inv.T @ (bias_mj - gravity_mj) - H @ self.velocity_map_rate(q, qvel)
        return OracleResult(
            H=H,
            bias=gravity + coriolis,
            gravity=gravity,
            coriolis=coriolis,
            body_q=body_q,
            T=T,
            qpos=qpos,
            qvel=qvel,
        )
