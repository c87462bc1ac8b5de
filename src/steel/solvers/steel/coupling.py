"""SolverSteel's hooks for Newton's coupled solvers (``newton.solvers.experimental.coupled``).

Roles. SolverSteel can be an *entry* of a coupled solver and a *source* of proxy bodies: the
coupler writes its input state and ``body_f`` (feedback wrenches), steps it, and reads its bodies'
effective masses to give their proxies in another entry a matching inertia. It refuses the
proxy-*destination* role (``coupling_prepare_proxy_contacts``, ``coupling_rewind_proxy_body``,
``coupling_harvest_proxy_wrenches`` and the two particle proxy hooks raise
``NotImplementedError``): filtering proxy contacts, rewinding lagged feedback and harvesting
proxy wrenches are not built for its reduced-coordinate trees, and Steel owns no particles
(construction refuses a model with particles).

Effective mass of a body endpoint: the inverse operational-space inertia ``J H^-1 J^T`` (Khatib,
"A unified approach for motion and force control of robot manipulators: the operational space
formulation", IEEE J. Robotics and Automation, 1987) with ``H`` from the CRBA (Featherstone,
*Rigid Body Dynamics Algorithms*, 2008, sec. 6.2), reduced to scalars. With ``J_p`` the
3 x n Jacobian of the endpoint's world velocity and ``J_w`` that of the body's angular velocity,
both over the articulation's DOFs at ``model.joint_q``, and ``H`` the tree-only joint-space mass
matrix with armature (loop-closing joints, drives, limits and contacts excluded; prescribed DOFs
take the solve's ``KINEMATIC_ARMATURE``):

* mass ``m = 3 / trace(J_p H^-1 J_p^T)`` [kg]: the inverse of the mean, over three world axes, of
  the point's translational compliance. For a free single body at its COM this is its mass.
* inertia ``I_body * max(c_free / c_art, 1)`` [kg·m²], where ``c_free = trace(I_body^-1) / 3`` is
  the free body's mean angular compliance and ``c_art = trace(J_w H^-1 J_w^T) / 3`` the
  articulated one: the joints add the inertia of everything the body drags along, never less
  than the body's own.

Bodies outside every articulation, or without a non-prescribed DOF on their path to the root,
keep the generic estimate of :class:`CouplingInterface` (``1 / body_inv_mass``, inertia scaled by
``max(m / body_mass, 1)``); so does the mass of a point that no joint translates (on a hinge
axis). A body that no joint turns keeps its own inertia. Particle and out-of-range endpoints
get 0.

Restarts. A coupler that iterates re-solves one step several times from the same input state. The
only state SolverSteel carries from one step into the next is the contact friction history
(:mod:`steel.solvers.steel.contacts.history`), which each step both reads (warm start, anchors) and
replaces. So that every try starts from the history the first one saw, the input-state notice of a
new step saves a copy when restarts are possible, and the notice of a restart restores it. The
CRBA mass matrix is the other cross-step reuse (``update_mass_matrix_interval > 1`` skips its
refresh on some steps, which would make the tries of one step differ), hence the rule that
restarts need ``update_mass_matrix_interval=1``. SolverSteel carries no kinematics between steps
(``reuse_kinematics`` is not built), so a kinematic write has nothing else to drop.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton
from newton.solvers.experimental.coupled import CouplingInterface

from ...articulation import ArticulationData, padded_blocks
from ...articulation.dynamics import eval_articulation_dynamics
from ...articulation.kinematics import eval_articulation_kinematics
from .predict import KINEMATIC_ARMATURE

# Notices of these state arrays start a new step's input; only they trigger the history save.
_KINEMATIC_STATE_FLAGS = int(
    newton.StateFlags.JOINT_Q | newton.StateFlags.JOINT_QD | newton.StateFlags.BODY_Q | newton.StateFlags.BODY_QD
)
# Largest |J_p| entry [m/s per unit qd], relative to max(1 m, |p|), below which no joint moves the
# point, and largest |J_w| entry [rad/s per unit qd] below which no joint turns the body: float32
# kinematics leave ~1e-8 where a point on a hinge axis is exactly still.
_MOTION_TOL = 1.0e-6


class SteelCoupling(CouplingInterface):
    """Coupling hooks of :class:`~steel.solvers.SolverSteel` (see the module docstring).

    Reads the solver's ``model``, ``options``, ``steel_model`` (plan, tables) and ``steel_data.history``; keeps its
    own scratch (``_coupling_*`` attributes) created on first use.
    """

    # -- refused roles ------------------------------------------------------------------------

    def coupling_prepare_proxy_contacts(self, state, contacts, *, contacts_freshly_detected=False):
        """Refuse the proxy-destination role (raises ``NotImplementedError``)."""
        raise NotImplementedError(_refusal("a proxy coupling destination"))

    def coupling_rewind_proxy_body(self, body_local_to_proxy_global, state, coupling_forces,
                                   body_gravity_acceleration, dt):
        """Refuse the proxy-destination role (raises ``NotImplementedError``)."""
        raise NotImplementedError(_refusal("a proxy coupling destination"))

    def coupling_harvest_proxy_wrenches(self, body_local_to_proxy_global, out_body_f, *, body_qd_before, state,
                                        state_out, contacts, dt):
        """Refuse the proxy-destination role (raises ``NotImplementedError``)."""
        raise NotImplementedError(_refusal("a proxy coupling destination"))

    def coupling_rewind_proxy_particle(self, particle_local_to_proxy_global, state, coupling_forces,
                                       particle_gravity_acceleration, dt):
        """Refuse proxy particles (raises ``NotImplementedError``): SolverSteel owns no particles."""
        raise NotImplementedError(_refusal("a particle proxy destination (it simulates no particles)"))

    def coupling_harvest_proxy_particle_forces(self, particle_local_to_proxy_global, out_particle_f, *,
                                               particle_qd_before, state, state_out, contacts, dt):
        """Refuse proxy particles (raises ``NotImplementedError``): SolverSteel owns no particles."""
        raise NotImplementedError(_refusal("a particle proxy destination (it simulates no particles)"))

    # -- restarts and input notices ----------------------------------------------------------------

    def coupling_notify_iteration_restarts(self, enabled: bool) -> None:
        """Accept or reject restarts; save the friction history per step only when they can happen.

        Raises:
            NotImplementedError: ``enabled`` with ``update_mass_matrix_interval > 1`` (the tries of
                one step would see different mass matrices).
        """
        if enabled and self.options.update_mass_matrix_interval != 1:
            raise NotImplementedError(
                "SolverSteel in a coupler that restarts steps requires update_mass_matrix_interval=1, "
                f"got {self.options.update_mass_matrix_interval}"
            )
        self._coupling_restarts = bool(enabled)
        if not enabled:
            self._coupling_saved_history = None

    def coupling_notify_input_state_update(self, state, flags, *, iteration_restart: bool = False,
                                           dt: float = 0.0) -> None:
        """Save the friction history before a new step's first try, restore it before a restart.

        Args:
            state: entry input state the coupler wrote (unused: every step re-derives its
                kinematics from its input state).
            flags: :class:`newton.StateFlags` of the arrays the coupler wrote.
            iteration_restart: the coupler repeats the solve of the current step.
            dt: step duration [s]; ``0`` marks a reset distribution, after which the saved copy
                belongs to a state that no longer exists and is dropped.
        """
        del state
        if iteration_restart:
            if dt == 0.0:
                self._coupling_saved_history = None
            elif self.__dict__.get("_coupling_saved_history") is not None:
                _copy_history(self._coupling_saved_history, self.steel_data.history)
            return
        if self.__dict__.get("_coupling_restarts", False) and int(flags) & _KINEMATIC_STATE_FLAGS:
            saved = self.__dict__.get("_coupling_saved_history")
            if saved is None:
                saved = {name: wp.empty_like(a) for name, a in _history_arrays(self.steel_data.history).items()}
                self._coupling_saved_history = saved
            _copy_history(self.steel_data.history, saved)

    # -- effective masses -----------------------------------------------------------------------------

    def coupling_effective_mass_refresh_flags(self) -> int:
        """Model flags after which the effective masses change: joint frames and axes, body flags
        (prescribed membership), body inertial properties and armature."""
        return int(
            newton.ModelFlags.JOINT_PROPERTIES
            | newton.ModelFlags.JOINT_DOF_PROPERTIES
            | newton.ModelFlags.BODY_PROPERTIES
            | newton.ModelFlags.BODY_INERTIAL_PROPERTIES
            | newton.ModelFlags.JOINT_DOF_INERTIAL_PROPERTIES
        )

    def coupling_eval_effective_mass(self, endpoint_kind, endpoint_index, endpoint_local_pos, out) -> None:
        """Articulated effective masses [kg] of endpoints; see :meth:`coupling_eval_effective_mass_block`."""
        self.coupling_eval_effective_mass_block(endpoint_kind, endpoint_index, endpoint_local_pos, out, None)

    def coupling_eval_effective_mass_block(self, endpoint_kind, endpoint_index, endpoint_local_pos, out_mass,
                                           out_inertia=None) -> None:
        """Articulated effective mass [kg] and inertia [kg·m²] of endpoints (module docstring).

        Evaluated on the host at ``model.joint_q``; call outside graph capture.

        Args:
            endpoint_kind: :class:`CouplingInterface.EndpointKind` of each endpoint.
            endpoint_index: body (or particle) index of each endpoint in this solver's model.
            endpoint_local_pos: body-frame offset of each endpoint from its body's COM [m].
            out_mass: effective masses [kg], written.
            out_inertia: optional body-frame inertia tensors about the COM [kg·m²], written.
        """
        count = int(out_mass.shape[0])
        if count == 0 and (out_inertia is None or out_inertia.shape[0] == 0):
            return
        if self.model.device.is_capturing:
            raise RuntimeError("SolverSteel evaluates coupling effective masses on the host; not during graph capture")
        mass, inertia = self._coupling_effective_masses(endpoint_kind.numpy(), endpoint_index.numpy(),
                                                        endpoint_local_pos.numpy())
        wp.copy(out_mass, wp.array(mass.astype(np.float32), dtype=out_mass.dtype, device=out_mass.device))
        if out_inertia is not None and out_inertia.shape[0]:
            wp.copy(out_inertia, wp.array(inertia.astype(np.float32), dtype=out_inertia.dtype,
                                          device=out_inertia.device))

    def _coupling_effective_masses(self, kind: np.ndarray, index: np.ndarray, local_pos: np.ndarray):
        """Host evaluation behind :meth:`coupling_eval_effective_mass_block`: (mass (n,), inertia (n, 3, 3))."""
        model, plan, tables = self.model, self.steel_model.core.plan, self.steel_model.tables
        n = len(kind)
        mass = np.zeros(n)
        inertia = np.zeros((n, 3, 3))
        nb = int(model.body_count)
        if nb == 0:
            return mass, inertia
        body_mass = model.body_mass.numpy().astype(np.float64)
        body_inv_mass = model.body_inv_mass.numpy().astype(np.float64)
        body_inertia = model.body_inertia.numpy().astype(np.float64)
        body_com = model.body_com.numpy().astype(np.float64)
        tree = _TreeMassMatrix(self.steel_model) if plan.articulation_count else None
        body_kind = int(CouplingInterface.EndpointKind.BODY)
        for e in range(n):
            b = int(index[e])
            if int(kind[e]) != body_kind or b < 0 or b >= nb:
                continue
            m_e = 1.0 / body_inv_mass[b] if body_inv_mass[b] != 0.0 else 0.0
            inertia_scale = max(m_e / body_mass[b], 1.0) if body_mass[b] > 0.0 else 1.0
            a = int(plan.body_articulation_np[b])
            if tree is not None and a >= 0 and tables.body_responds_np[b]:
                Jp, Jw, H, p = tree.point_jacobians(b, body_com[b] + local_pos[e])
                reach = max(1.0, float(np.linalg.norm(p)))
                if np.abs(Jp).max() > _MOTION_TOL * reach:
                    m_e = 3.0 / float(np.trace(Jp @ np.linalg.solve(H, Jp.T)))
                # A body no joint turns (or without rotational inertia) keeps its own inertia.
                inertia_scale = 1.0
                if np.abs(Jw).max() > _MOTION_TOL and np.linalg.det(body_inertia[b]) > 0.0:
                    c_art = float(np.trace(Jw @ np.linalg.solve(H, Jw.T))) / 3.0
                    c_free = float(np.trace(np.linalg.inv(body_inertia[b]))) / 3.0
                    inertia_scale = max(c_free / c_art, 1.0)
            mass[e] = m_e
            inertia[e] = body_inertia[b] * inertia_scale
        return mass, inertia


class _TreeMassMatrix:
    """Tree-only ``H`` with armature, motion subspaces and poses of every articulation at ``model.joint_q``.

    Runs the articulation core's kinematics and CRBA into buffers of its own, so the solver's
    (possibly reused) mass matrix and factor stay untouched.
    """

    def __init__(self, sm):
        model, plan = sm.model, sm.core.plan
        dev = model.device
        data = ArticulationData(plan)
        nb, nd = max(model.body_count, 1), max(model.joint_dof_count, 1)
        body_q = wp.zeros(nb, dtype=wp.transform, device=dev)
        body_qd = wp.zeros(nb, dtype=wp.spatial_vector, device=dev)
        joint_qd = wp.zeros(nd, dtype=float, device=dev)
        # Prescribed DOFs weigh as in the solve, so the subtree they carry responds as it does there.
        extra = np.zeros(nd, dtype=np.float32)
        extra[: model.joint_dof_count] = sm.tables.dof_is_kinematic_np * float(KINEMATIC_ARMATURE)
        dof_diag_extra = wp.array(extra, dtype=float, device=dev)
        eval_articulation_kinematics(model, plan, data, model.joint_q, joint_qd, body_q, body_qd)
        eval_articulation_dynamics(model, plan, data, body_q, None, None, dof_diag_extra, True)
        self.plan = plan
        self.qd_start = model.joint_qd_start.numpy()
        self.H = padded_blocks(plan, data.mass_matrix).astype(np.float64)
        self.dof_S = data.dof_S.numpy().astype(np.float64)
        self.origin = data.articulation_origin.numpy().astype(np.float64)
        self.body_q = body_q.numpy().astype(np.float64)

    def point_jacobians(self, body: int, point_body: np.ndarray):
        """``J_p`` (3, n) of the world velocity of ``point_body`` (body frame [m]), ``J_w`` (3, n) of
        the body's angular velocity and the articulation's ``H`` (n, n), over its DOFs; and the point
        relative to the articulation origin, world frame [m]."""
        plan = self.plan
        a = int(plan.body_articulation_np[body])
        n = int(plan.dof_count_np[a])
        first = int(plan.dof_start_np[a])
        pose = self.body_q[body]
        p = pose[:3] + _quat_rotate(pose[3:7], point_body) - self.origin[a]
        Jp = np.zeros((3, n))
        Jw = np.zeros((3, n))
        j = int(plan.body_joint_np[body])
        while j >= 0:
            for d in range(int(self.qd_start[j]), int(self.qd_start[j + 1])):
                # dof_S is a twist about the articulation origin, linear first: a point at p moves
                # with v + w x p (Featherstone, ch. 2).
                v, w = self.dof_S[d, :3], self.dof_S[d, 3:]
                Jp[:, d - first] = v + np.cross(w, p)
                Jw[:, d - first] = w
            j = int(plan.joint_parent_joint_np[j])
        return Jp, Jw, self.H[a, :n, :n], p


def _quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate ``v`` by the unit quaternion ``q = (x, y, z, w)`` (Warp's order)."""
    u, w = q[:3], q[3]
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def _history_arrays(history) -> dict:
    return {name: a for name, a in vars(history).items() if isinstance(a, wp.array)}


def _copy_history(src, dst) -> None:
    """Copy every array of a ContactHistory (or of its saved dict) into the other."""
    src_arrays = src if isinstance(src, dict) else _history_arrays(src)
    dst_arrays = dst if isinstance(dst, dict) else _history_arrays(dst)
    for name, a in src_arrays.items():
        wp.copy(dst_arrays[name], a)


def _refusal(role: str) -> str:
    return f"SolverSteel cannot be {role}; it can be a coupled entry or a proxy source"
