"""One launch for the joint rows built after the contacts: limits, mimics, friction and velocity limits.

Each row model keeps its own module and exposes a ``wp.func`` for one joint (:mod:`.limits`,
:mod:`.mimic`, :mod:`.joint_friction`, :mod:`.velocity_limits`); :func:`build_joint_rows` runs the enabled
ones in a single kernel over the joints, so a model with all of them costs one launch, not four (on the CPU
the step is launch-bound). Drive rows (:mod:`.drives`) launch on their own because they are reserved
before every other row. All of them read the joint tables through one
:class:`~..rows.common.JointRowModel`.
"""

from __future__ import annotations

import warp as wp

from ..data import UNBOUNDED, RowBuffers
from ..rows.common import JointRowModel, joint_row_model, joint_row_owner
from .friction import friction_rows_of_joint
from .limits import limit_rows_of_joint
from .mimic import MimicModel, mimic_rows_of_joint
from .velocity_limits import velocity_limit_rows_of_joint, velocity_limits_fused
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.struct
class JointRowParams:
    """The joint-row launch's switches and options (scalars), one instance per solver (``CachedStruct``)."""

    limits_on: int  # 1: enable_joint_limits
    friction_on: int  # 1: enable_joint_friction
    velocity_on: int  # 1: velocity-limit rows can be created this step
    mimic_on: int  # 1: the model has mimic pairs
    dt: float  # [s] the step
    baumgarte: float  # share of a limit or mimic violation corrected per step (non-dimensional)
    activation_gap: float  # [m or rad] joint_limit_activation_gap, UNBOUNDED for inf
    use_load: int  # 1: joint friction grows with the joint's load (steel:joint_friction_load_coefficient)
    fraction: float  # velocity_limit_activation_fraction, UNBOUNDED for inf (non-dimensional)
    fused: int  # 1: driven DOFs' velocity limits are end-of-iteration clamps (fuse_joint_velocity_limits)


@wp.kernel
def _joint_rows(
    p: JointRowParams,
    # Model:
    m: JointRowModel,
    mimic: MimicModel,
    joint_limit_lower: wp.array[float],
    joint_limit_upper: wp.array[float],
    joint_child: wp.array[int],
    joint_friction: wp.array[float],
    load_coefficient: wp.array[float],
    joint_velocity_limit: wp.array[float],
    joint_target_ke: wp.array[float],
    joint_target_kd: wp.array[float],
    # Data in:
    joint_q: wp.array[float],
    joint_qd: wp.array[float],
    body_load_f: wp.array[wp.spatial_vector],
    # Data out (reserved rows and their accounting):
    rows: RowBuffers,
):
    j = wp.tid()  # one thread per joint
    owner = joint_row_owner(m, rows, j)
    if owner[0] == -2:
        return  # a sleeping island's rows are skipped (sleeping/stages.py)
    if p.limits_on != 0:
        limit_rows_of_joint(m, rows, j, owner, p.dt, p.baumgarte, p.activation_gap, joint_limit_lower,
                            joint_limit_upper, joint_q)
    if p.friction_on != 0:
        friction_rows_of_joint(m, rows, j, owner, p.dt, p.use_load, joint_child, joint_friction, load_coefficient,
                               body_load_f)
    if p.mimic_on != 0:
        mimic_rows_of_joint(m, mimic, rows, j, owner, p.dt, p.baumgarte, joint_q)
    if p.velocity_on != 0:
        velocity_limit_rows_of_joint(m, rows, j, owner, p.fraction, p.fused, joint_velocity_limit, joint_target_ke,
                                     joint_target_kd, joint_qd)


def build_joint_rows(sm, sd, state_in, dt: float) -> None:
    """Joint limits, friction and velocity limits of this step, in one launch (none when all are off)."""
    opts, model = sm.options, sm.model
    limits_on = bool(opts.enable_joint_limits)
    friction = sm.joint_friction
    # fraction = inf never creates velocity-limit rows.
    velocity_on = bool(opts.enable_joint_velocity_limits) and opts.velocity_limit_activation_fraction != float("inf")
    mimic = sm.mimic
    if not model.joint_count or not (limits_on or friction is not None or velocity_on or mimic is not None):
        return
    coefficient, body_load_f = sd.zero_dof, sd.body_contact_f  # placeholders, never read
    use_load = False
    if friction is not None:
        coefficient, body_load_f = friction.prepare(sm, sd, state_in, dt)
        use_load = friction.use_load
    launch(
        _joint_rows,
        dim=model.joint_count,
        inputs=[
            sd.joint_row_params.update((
                int(limits_on), int(friction is not None), int(velocity_on), int(mimic is not None), float(dt),
                float(opts.baumgarte), float(min(opts.joint_limit_activation_gap, UNBOUNDED)), int(use_load),
                float(min(opts.velocity_limit_activation_fraction, UNBOUNDED)), int(velocity_limits_fused(opts)))),
            joint_row_model(sm),
            mimic.struct if mimic is not None else sm.no_mimic,
            model.joint_limit_lower,
            model.joint_limit_upper,
            model.joint_child,
            model.joint_friction,
            coefficient,
            model.joint_velocity_limit,
            model.joint_target_ke,
            model.joint_target_kd,
            state_in.joint_q,
            state_in.joint_qd,
            body_load_f,
        ],
        outputs=[sd.rows.buffers],
        device=model.device,
    )
