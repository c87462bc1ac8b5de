"""Which :class:`newton.Model` features SolverVBD runs, and the refusal of those it does not.

Contract: a model feature the solve does not run is refused with ``NotImplementedError`` naming it,
at construction and again on :meth:`SolverVBD.notify_model_changed`, before anything changes; none is
dropped silently. A silently dropped feature gives a plausible but wrong motion (a particle attached
to a body that moves 1 m stays where it was), which no error or test of the solve itself reveals.

The audit, feature by feature (Newton 1.8.0's ``Model``):

=====================================================  =========================================================
particles, springs, triangles, bending edges, tets     run (:mod:`.particles`)
particle–shape soft contacts, self-contact             run (:mod:`.particles.contacts`, ``.self_contact``)
bodies, body–body contacts, body–particle contacts     run (:mod:`.rigid`, :mod:`.coupling`)
BALL, FIXED, REVOLUTE, PRISMATIC, D6, ROD, FREE        run; loop joints too (maximal coordinates need no tree)
``joint_enabled``, drives, limits, ``control.joint_f`` run on REVOLUTE, PRISMATIC and single-angle D6 DOFs
DISTANCE joints                                        refused (:class:`.rigid.layout.JointLayout`)
drives or limits on BALL / multi-angle D6 DOFs         refused (``JointLayout``; again on ``JOINT_DOF_PROPERTIES``)
joint-owned mimics (``set_joint_mimic``)               run on PRISMATIC, REVOLUTE, D6 DOFs (:mod:`.rigid.mimic`);
                                                       on a multi-angle D6 axis refused there
deprecated sparse mimic constraints                    refused (``JointLayout``; 1.8.0 documents them unsupported)
``joint_friction`` > 0                                 refused here (a dissipative force the solve does not have)
``joint_armature``, ``joint_effort_limit``,            not run; a ``NewtonWarning`` names them when set
``joint_velocity_limit``                               (Newton 1.8.0's SolverVBD documents them as unsupported)
particle–body attachments, soft and hard              run (:mod:`.particles.attachments`)
attachments with an external rigid solver             refused, ``ValueError`` (``check_attachments``)
tendons: anchors, frictionless pinholes and rollers    run (:mod:`.rigid.tendons`)
tendon guide friction (``mu > 0``)                     refused (:func:`.rigid.tendons.check_tendon_features`),
                                                       as are rollers at a route's end or beside a roller
tendons with an external rigid solver                  refused here
muscles                                                refused here (``add_muscle``)
MuJoCo equality constraints left unconverted           refused here (``convert_mjc_equality_constraints=False``)
=====================================================  =========================================================

The joint refusals live with the joint layout because they need it; they run only when VBD
integrates bodies (with ``integrate_with_external_rigid_solver=True`` the joints belong to the other
solver). The refusals here run in every configuration: a muscle acts through forces on bodies that VBD
would have to supply, so even the external-rigid-solver case would drop it; so does a tendon when another
solver moves the bodies (refused then by :func:`check_tendons_external`).

Joint armature and effort and velocity limits are reduced-coordinate properties that the maximal-
coordinate solve has no place for. Refusing them would refuse every URDF robot (the importer writes
the file's effort and velocity limits; Newton's basic_urdf example sets armature 0.01 and runs on
SolverVBD), so a model that sets them (armature > 0, a limit below the builder's 1e6) gets one
``NewtonWarning`` naming each, at construction: not silent, and not refused. Joint friction changes
the motion (a joint that should stick would slide on), so it is refused.

MuJoCo equalities: the MJCF importer converts welds and connects into loop joints (FIXED / BALL,
``joint_articulation == -1``) and joint equalities into mimic constraints, and keeps every
equality's metadata in ``model.mujoco.equality_constraint_*`` for SolverMuJoCo either way. Only those
it did not convert are missing from the joints VBD reads. There is no per-equality "converted" flag,
so the check counts: fewer loop joints plus mimics than equalities means some were not converted.
Rejected: refusing any ``equality_constraint_count > 0``, which would refuse the converted (and run)
welds of every MJCF with an ``<equality>`` block.
"""

from __future__ import annotations

import warnings

import numpy as np

import newton

from .rigid.tendons import check_tendon_features


def _count(model, name: str) -> int:
    return int(getattr(model, name, 0) or 0)


def _refuse(what: str, count: int, how: str) -> None:
    raise NotImplementedError(f"SolverVBD does not implement {what}: the model has {count} ({how}); remove them "
                              "or use a solver that supports them")


def _unconverted_equalities(model) -> int:
    """MuJoCo equality constraints the MJCF importer did not turn into loop joints or mimics (see the module)."""
    ns = getattr(model, "mujoco", None)
    total = _count(ns, "equality_constraint_count") if ns is not None else 0
    if total == 0:
        return 0
    converted = _count(model, "constraint_mimic_count")
    if model.joint_count:
        free = int(newton.JointType.FREE)
        loop = (model.joint_articulation.numpy() < 0) & (model.joint_type.numpy() != free)
        converted += int(loop.sum())
        mimic = getattr(model, "joint_mimic_joint", None)
        if mimic is not None:
            converted += int((mimic.numpy() >= 0).sum())
    return max(total - converted, 0)


def check_model_features(model) -> None:
    """Raise ``NotImplementedError`` naming the first model feature SolverVBD does not run (see the module).

    Host-side and read-only: counts, and for MuJoCo equalities two small joint arrays.
    """
    check_tendon_features(model)  # rollers, pinhole friction, guide flags (.rigid.tendons)
    n = _count(model, "muscle_count")
    if n:
        _refuse("muscles", n, "ModelBuilder.add_muscle")
    n = _unconverted_equalities(model)
    if n:
        _refuse("MuJoCo equality constraints", n, "model.mujoco.equality_constraint_* not converted to loop joints "
                "or mimics, e.g. add_mjcf(..., convert_mjc_equality_constraints=False)")


_UNRUN_JOINT_PROPERTIES = (  # (model array, the value that means "not set", what it is)
    ("joint_armature", 0.0, "armature"),
    ("joint_effort_limit", 1e6, "effort limits"),
    ("joint_velocity_limit", 1e6, "velocity limits"),
)


def check_tendons_external(model, external_bodies: bool) -> None:
    """Refuse tendons when another solver integrates the bodies (their forces would be dropped)."""
    n = _count(model, "tendon_count")
    if n and external_bodies:
        _refuse("routed tendons with integrate_with_external_rigid_solver=True", n, "ModelBuilder.add_tendon")


def check_joint_properties(model) -> None:
    """Refuse ``joint_friction`` > 0; warn once per call naming set armature and effort/velocity limits."""
    if not model.joint_dof_count:
        return
    friction = model.joint_friction.numpy()
    bad = np.flatnonzero(friction > 0.0)
    if bad.size:
        _refuse("joint friction", int(bad.size), f"DOFs with model.joint_friction > 0, e.g. DOF {int(bad[0])}: "
                f"{float(friction[bad[0]])!r}")
    named = []
    for name, unset, what in _UNRUN_JOINT_PROPERTIES:
        values = getattr(model, name).numpy()
        n = int((values > unset).sum() if name == "joint_armature" else (values < unset).sum())
        if n:
            named.append(f"{what} ({name}, {n} DOFs)")
    if named:
        warnings.warn("SolverVBD does not run joint " + ", ".join(named) + "; they are ignored (maximal-coordinate "
                      "solve)", newton.NewtonWarning, stacklevel=3)


def check_joint_features(model) -> None:
    """Re-run the joint layout's refusals (DISTANCE, multi-angle drives/limits, sparse mimic constraints) without
    keeping it."""
    from .rigid.layout import JointLayout  # numpy only; the rigid stage imports it at construction anyway

    if model.joint_count:
        JointLayout(model)


__all__ = ["check_joint_features", "check_joint_properties", "check_model_features", "check_tendons_external"]
