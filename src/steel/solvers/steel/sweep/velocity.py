"""The velocity-only sweeps (``velocity_iterations``): the passes of ``sweep/pgs.py`` on the rows' velocity targets.

After the position solve the step keeps its velocity for the positions, then runs
``velocity_iterations`` more passes from the same impulses with every row's ``velocity_target`` instead of its ``target``: penetrating
contacts and crossed limits ask for 0 instead of ``baumgarte * depth / dt``, friction rows for 0
(no anchor correction), an impact keeps its rebound, and a positive gap keeps its allowance
``-scale * phi / dt`` only while its linearized end-of-step gap stays open under the position-solve
velocity (``J qd > gap_speed``, tested once before the passes), else it is arrested (0). The pass
direction keeps alternating from where the position solve stopped. Its output is the published
velocity; the impulses it ends with are the step's contact forces.

Why a module of its own. Warp builds every kernel of a module when the first of them launches, and this
kernel inlines the whole pass (``_run_passes``, the group and tail updates) a second time: in ``sweep/pgs.py`` it
doubled the sweep module's build, the longest of a cold first run, for an option that is off by default
(``velocity_iterations=0``). Here it is built only by a solver that runs it. Measured in
``benchmarks/README.md``'s performance log.
"""

from __future__ import annotations

import warp as wp

from ....articulation.factor import factor_of
from ..data import ROW_DRIVE, ROW_FROZEN, UNBOUNDED_AT_LEAST, RowBuffers
from .pgs import SCHEDULE_INDEX, _factor_inputs, _reset_gate, _run_passes, _warm_start
from .order import family_rows as _family_rows
from .order import is_unit as _is_unit
from .order import order_units as _order_units
from .tails import world_ends as _world_ends
from ..rows.common import row_velocity as _row_velocity
from ..contacts.dormant import DormantWalk
from ..contacts.friction_modes import MODE_INDEX
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.kernel
def _velocity_sweep(
    # Options:
    iterations: int,
    velocity_iterations: int,
    freeze_drives: int,
    schedule: int,
    friction_mode: int,
    relaxation: float,
    cfm: float,
    # Factor of the core, as plain arguments (unit-stride specialization; see pgs._sweep):
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    walk: DormantWalk,
    # Data in/out: the rows (targets replaced, impulses refined), then the velocities.
    rows: RowBuffers,
    joint_qd: wp.array[float],
):
    world = wp.tid()  # one thread per world
    factor = factor_of(use_tree, dof_parent, mass_factor)
    base = world * rows.world_row_capacity
    ends = _world_ends(rows, world, base)
    unit_count = int(0)
    if iterations == 0:
        # No position sweep ran: order and warm-start here.
        unit_count = _order_units(rows, world, base)
        _reset_gate(rows, world, base, unit_count)
        _warm_start(rows, ends, base, unit_count, 1, cfm, factor, joint_qd)
    # Replace every target by its velocity target. A positive gap whose linearized end-of-step gap
    # closes under the position-solve velocity (J qd <= -phi / dt) is arrested (target 0).
    for family in range(2):
        rows_of = _family_rows(rows, world, base, family)
        for i in range(rows_of[1]):
            r = rows_of[0] + i
            target = rows.velocity_target[r]
            if freeze_drives != 0 and rows.kind[r] == ROW_DRIVE:
                rows.kind[r] = ROW_FROZEN  # velocity_drive_mode="freeze": keeps the position solve's impulse
            if _is_unit(rows, r):
                if iterations != 0:
                    unit_count += 1
                if rows.gap_speed[r] > -UNBOUNDED_AT_LEAST and _row_velocity(rows, r, joint_qd) <= rows.gap_speed[r]:
                    target = 0.0
            rows.target[r] = target
            rows.regularization[r] = 0.0  # the velocity sweeps stay rigid
    _run_passes(rows, ends, base, unit_count, iterations, velocity_iterations, schedule, 0, friction_mode, relaxation,
                cfm, factor, joint_qd, walk)


def velocity_sweep(sm, sd, joint_qd: wp.array) -> None:
    """Run ``velocity_iterations`` PGS iterations on the velocity targets (no position bias), after :func:`sweep`.

    Continues from the position solve's impulses and velocities in ``joint_qd`` (in place).
    """
    rows = sd.rows
    if sm.options.velocity_iterations == 0 or rows.world_count == 0:
        return
    launch(
        _velocity_sweep,
        dim=rows.world_count,
        inputs=[int(sm.options.iterations), int(sm.options.velocity_iterations),
                int(sm.options.velocity_drive_mode == "freeze"), SCHEDULE_INDEX[sm.options.row_schedule],
                MODE_INDEX[sm.options.friction_mode], *_factor_inputs(sm), sd.dormant.walk(sm)],
        outputs=[rows.buffers, joint_qd],
        device=sm.model.device,
    )
