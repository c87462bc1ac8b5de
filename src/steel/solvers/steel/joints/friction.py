"""Dry joint friction rows (``enable_joint_friction``) and their load-proportional bound.

Each PRISMATIC, REVOLUTE, BALL or D6 DOF of an articulation with a positive bound gets one boxed row
(``ROW_BOX``) ``qd_dof = 0`` whose impulse is limited to ``|lambda| <= mu_dof dt`` [N·s or N·m·s],
MuJoCo's ``frictionloss`` solved as a box constraint (Todorov, Erez and Tassa, "MuJoCo: A physics engine
for model-based control", IROS 2012): the DOF sticks while the effort it takes to hold it stays
below ``mu_dof`` and slides against ``mu_dof`` above it, so a DOF of inertia ``I`` driven by an effort
``tau > mu_dof`` accelerates by ``(tau - mu_dof) / I``. A BALL joint's three angular-velocity
coordinates are three independent boxes. The rows take the articulated response, so coupled
inertia, armature, drives, limits and contacts act jointly; they cold-start every step.

The bound per DOF [N or N·m] is

    mu_dof = joint_friction + c (|F| + |T|)

with ``c`` the ``steel:joint_friction_load_coefficient`` (from the seed; PhysX's articulation joint
friction before 5.6) and ``F`` [N], ``T`` [N·m] the force and the torque about the child body's COM
that the joint transmits to its child's subtree under the step's free dynamics: the RNEA backward
pass (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, sec. 5.3) with the accelerations of the
predicted velocity, ``(qd* - qd) / dt``, before any row acts. ``T`` keeps its component about the
joint axis, so a joint's own effort raises its friction; implicit (augmented) drives are part of
the free dynamics, drive rows are not. The sum mixes units as PhysX's does. The load pass costs
two launches per step and runs only when some coefficient is positive at construction: a model
built with every coefficient zero must keep them zero.

Both arrays are read on the device every step, so in-place edits apply on the next step. A DOF
with an invalid value (negative or non-finite, or a nonzero value on another joint type or a joint
outside the articulation trees) builds no row and flags its world in ``constraint_overflow``, which
:meth:`~steel.solvers.SolverSteel.check_constraint_capacity` reports; construction and
``notify_model_changed`` with joint DOF flags raise ``ValueError`` naming the joint and DOF.
"""

from __future__ import annotations

import warnings

import numpy as np
import warp as wp

import newton

from ....articulation import eval_body_parent_f
from ....articulation.checks import joint_name
from ....articulation.kinematics import JOINT_BALL, JOINT_D6, JOINT_PRISMATIC, JOINT_REVOLUTE
from ..data import FAMILY_ARTICULATED, ROW_BOX, RowBuffers
from ..rows.common import JointRowModel, reserve_rows, write_dof_row
from .velocity_limits import input_velocity
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

LOAD_ATTRIBUTE = "joint_friction_load_coefficient"
USD_NAME = "newton:steel:jointFrictionLoadCoefficient"
USD_DEPRECATED_NAME = "newton:steel:joint_friction_load_coefficient"
FRICTION_TYPES = (newton.JointType.PRISMATIC, newton.JointType.REVOLUTE, newton.JointType.BALL, newton.JointType.D6)


def usd_load_coefficient(value, context):
    """USD reader of the load coefficient: the authored current name, else the older one with a warning.

    Registered under the wildcard name, so it is asked for every joint prim: ``None`` (nothing
    authored) leaves the default. ``physxJoint:jointFriction`` is deliberately not read.
    """
    del value
    prim = context["prim"]
    for name in (USD_NAME, USD_DEPRECATED_NAME):
        attr = prim.GetAttribute(name)
        if attr and attr.HasAuthoredValue():
            if name == USD_DEPRECATED_NAME:
                warnings.warn(
                    f"{prim.GetPath()}: {USD_DEPRECATED_NAME} is deprecated; author {USD_NAME} instead",
                    newton.NewtonDeprecationWarning, stacklevel=2,
                )
            return float(attr.Get())
    return None


def register_load_coefficient(builder: newton.ModelBuilder) -> None:
    """Declare ``steel:joint_friction_load_coefficient`` (per joint DOF, default 0) on ``builder``."""
    builder.add_custom_attribute(
        newton.ModelBuilder.CustomAttribute(
            name=LOAD_ATTRIBUTE,
            dtype=wp.float32,
            frequency=newton.Model.AttributeFrequency.JOINT_DOF,
            namespace="steel",
            default=0.0,
            usd_attribute_name="*",
            usd_value_transformer=usd_load_coefficient,
        )
    )


def check_joint_friction_options(opts) -> None:
    """Combinations the joint friction rows do not support raise ``NotImplementedError``."""
    if opts.enable_joint_friction and opts.contact_compliance:
        raise NotImplementedError("SolverSteel enable_joint_friction=True with contact_compliance=True is not "
                                  "supported")


@wp.func
def _valid(value: float):
    return wp.isfinite(value) and value >= 0.0


@wp.func(inline=True)
def friction_rows_of_joint(
    m: JointRowModel,
    rows: RowBuffers,
    j: int,
    owner: wp.vec3i,
    dt: float,
    use_load: int,
    joint_child: wp.array[int],
    joint_friction: wp.array[float],
    load_coefficient: wp.array[float],
    body_load_f: wp.array[wp.spatial_vector],
):
    """The friction rows of joint ``j`` (``owner`` from :func:`~..rows.common.joint_row_owner`); ``body_load_f`` is
    the wrench each body receives through its joint under the free dynamics [N, N·m]."""
    art = owner[0]
    jtype = m.joint_type[j]
    eligible = art >= 0 and (jtype == JOINT_PRISMATIC or jtype == JOINT_REVOLUTE or jtype == JOINT_BALL
                             or jtype == JOINT_D6)
    load = float(0.0)
    if eligible and use_load != 0:
        w = body_load_f[joint_child[j]]
        load = wp.length(wp.spatial_top(w)) + wp.length(wp.spatial_bottom(w))
    for dof in range(m.joint_qd_start[j], m.joint_qd_start[j + 1]):
        friction = joint_friction[dof]
        c = float(0.0)
        if use_load != 0:
            c = load_coefficient[dof]
        if not (_valid(friction) and _valid(c)) or (not eligible and (friction != 0.0 or c != 0.0)):
            rows.constraint_overflow[owner[1]] = True  # invalid input: no row, the world is flagged
            if owner[2] >= 0:
                rows.constraint_overflow[owner[2]] = True
            continue
        bound = friction + c * load
        if not eligible or bound <= 0.0 or m.dof_is_kinematic[dof] != 0:
            continue
        r = reserve_rows(rows, owner[1], FAMILY_ARTICULATED, 1, owner[2])
        if r < 0:
            continue
        write_dof_row(rows, r, m.art_dof_start[art], m.art_dof_count[art], m.art_mass_start[art], dof, 1.0, ROW_BOX,
                      0.0, 0.0, bound * dt, 0.0)


@wp.kernel
def _free_accelerations(qd_pred: wp.array[float], qd: wp.array[float], dt: float, qdd_out: wp.array[float]):
    d = wp.tid()
    qdd_out[d] = (qd_pred[d] - qd[d]) / dt


class JointFriction:
    """The friction rows of one solver: the load arrays, host validation and the row launch."""

    def __init__(self, model):
        self.model = model
        self.check()
        dev = model.device
        coefficient = self._coefficients()
        self.use_load = coefficient is not None and bool((coefficient.numpy() > 0.0).any())
        self._zero = wp.zeros(1, dtype=float, device=dev)
        self.qdd_free = wp.zeros(max(model.joint_dof_count, 1), dtype=float, device=dev) if self.use_load else None
        self.body_load_f = wp.zeros(max(model.body_count, 1), dtype=wp.spatial_vector, device=dev)

    def _coefficients(self):
        ns = getattr(self.model, "steel", None)
        return getattr(ns, LOAD_ATTRIBUTE, None) if ns is not None else None

    def check(self) -> None:
        """``ValueError`` naming the first joint DOF with an invalid friction or load coefficient."""
        model = self.model
        if not model.joint_count:
            return
        jtype, jart = model.joint_type.numpy(), model.joint_articulation.numpy()
        qd_start = model.joint_qd_start.numpy()
        coefficient = self._coefficients()
        arrays = [("joint_friction", model.joint_friction.numpy().astype(np.float64))]
        if coefficient is not None:
            if coefficient.shape != (model.joint_dof_count,):
                raise ValueError(f"steel:{LOAD_ATTRIBUTE} must have one value per joint DOF "
                                 f"({model.joint_dof_count}), got shape {coefficient.shape}")
            arrays.append((f"steel:{LOAD_ATTRIBUTE}", coefficient.numpy().astype(np.float64)))
        eligible_types = [int(t) for t in FRICTION_TYPES]
        for j in range(model.joint_count):
            eligible = jart[j] >= 0 and int(jtype[j]) in eligible_types
            for name, values in arrays:
                for d in range(qd_start[j], qd_start[j + 1]):
                    v = values[d]
                    if not np.isfinite(v) or v < 0.0:
                        raise ValueError(f"{name} of {joint_name(model, j)} DOF {d} must be non-negative and "
                                         f"finite, got {v!r}")
                    if v != 0.0 and not eligible:
                        raise ValueError(f"{name} of {joint_name(model, j)} DOF {d} must be 0: joint friction acts "
                                         f"only on PRISMATIC, REVOLUTE, BALL and D6 joints of an articulation, "
                                         f"got {v!r}")

    def prepare(self, sm, sd, state_in, dt: float):
        """``(coefficients, body_load_f)`` for this step's rows: with load coefficients, first the loads under
        the free dynamics (two launches); the rows themselves are built by :mod:`.joint_rows`."""
        model = self.model
        if not self.use_load:
            return self._zero, self.body_load_f
        coefficient = self._coefficients()
        if coefficient is None or coefficient.shape != (model.joint_dof_count,):
            raise ValueError(f"steel:{LOAD_ATTRIBUTE} must stay an array of one value per joint DOF "
                             f"({model.joint_dof_count})")
        launch(_free_accelerations, dim=model.joint_dof_count,
                  inputs=[sd.qd, input_velocity(sm, sd, state_in), float(dt)], outputs=[self.qdd_free],
                  device=model.device)
        eval_body_parent_f(model, sm.core.plan, sm.core.data, state_in.body_q, self.qdd_free, self.body_load_f)
        return coefficient, self.body_load_f
