"""Shock propagation after the sweep, for worlds where a heavy body rests on a much lighter one.

Why. Projected Gauss-Seidel moves a heavy body's momentum through a light body beneath it a fraction
per pass that shrinks with their mass ratio: for one light box ``m`` under a heavy ``M`` on the ground,
the two contacts' Delassus block ``[[1/m, -1/m], [-1/m, 1/m + 1/M]]`` has a Gauss-Seidel contraction
``M / (m + M)`` per pass, 0.99 at 1:100, so the default 12 passes leave most of ``M g dt`` unresolved
each step (``contact_warmstart`` is off by default: every step starts from zero impulses) and the pair
sinks until the position bias makes up for it (``sweep/mass_ratio.py`` tabulates it).

What. Guendelman, Bridson and Fedkiw, "Nonconvex rigid bodies with stacking" (SIGGRAPH 2003), section 7:
after the ordinary iterations, one more pass over the contacts from the supports up, each contact
solved with the body beneath it held fixed (infinite mass), so a body is stopped against the velocity
its support already ended with and the next level up sees a finished support. Erleben, "Velocity-based
shock propagation for multibody dynamics animation" (ACM TOG 2007), runs the same pass at the velocity
level, as here; AVBD (Giles et al. 2025) reaches large ratios by another route (a primal block descent
per body with augmented-Lagrangian constraints), which this sweep does not have.
Here the pass runs once after the position sweep (and once after the velocity sweeps, when they run),
visits the world's contact groups in the reverse of the sweep's top-down order, and gives each group
of a body pair (the corners of a face) up to ``SHOCK_INNER`` steps of the sweep's own group update (a
projected Jacobi step and its exact line search, ``sweep/pgs.py``) with the response of the upper side only.
A group whose other side is static or prescribed is solved as the sweep solves it (one side moves).

Where. Only in worlds where, this step, some contact group of two responding bodies has its lower
side at least ``SHOCK_RATIO`` times lighter, in the rows' own one-sided inverse masses ``J_s Y_s``, than
its upper side (heavy on light); elsewhere the kernel returns before touching anything, and a model
whose candidate pairs never reach the ratio in body mass does not launch it at all. So ordinary scenes
(equal boxes, robots on the ground) run bitwise as before. "Up" is against gravity; a group whose
normal is within 60 degrees of horizontal (``|n . up| < SHOCK_VERTICAL``) is left alone: the pass's
levels are the stack's, and a side-by-side pair has none.

What it does to forces. The pass adds its impulses to the rows' accumulated impulses, so ``contact_f`` of
a contact reports the impulse it applied to its upper body: the full weight above it on the top
contacts. The reaction on the frozen lower body is not applied (that is what makes the pass converge in
one visit), so a support under a light body reports only what the ordinary passes moved down to it:
the ground under a light box below a heavy one reads less than the stack's weight. Momentum is not
conserved by the pass (the frozen side takes no reaction); each group step is a descent step of its
one-sided quadratic, so it moves a body no further than its targets ask (the position bias included).
Rejected for that: carrying each group's pass impulse down to its lower body in a second, top-down pass
(each upper body stopped again first). Centred stacks then report exact forces (the ground under 1 kg +
100 kg reads 990.81 of 990.81 N), but an off-centre load turns the light body, the normal rows alone do not
stop the turn, and 1:100 with the top box 9 cm off centre falls off (200 mm at 8 group steps, 12 mm of
drift at 32), a 1 cm staircase of the 20-box stack explodes.

Rejected: more iterations (the contraction needs about ``ratio`` passes, the cost the reference's users
pay); a per-island block solve of the normal rows (the corners of each face make the block singular, and
a world-sized dense solve per step is not the sweep's cost model); mass splitting (Tonge et al. 2012)
targets the Jacobi averaging of parallel solvers, not the Gauss-Seidel contraction of a mass ratio.

Invariant: the pass only adds to a row's impulse through a projected step (``impulse >= 0`` stays), adds
every apply to the world's drift (so the velocity sweeps' gate stays valid), skips dormant rows (their
``J`` is not written: they stayed open through the sweep) and soft rows (regularized or compliant).
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ....articulation.factor import factor_arguments, factor_of
from ..data import ROW_CONTACT, RowBuffers
from .mass_ratio import candidate_ratios
from .order import family_rows, is_unit
from ..rows.common import add_world_drift, ensure_response, row_velocity, side_offset
from ..contacts.dormant import is_dormant
from ....launches import launch

wp.set_module_options({"enable_backward": False})

# Lower side's one-sided inverse mass at least this many times the upper side's, in one group, switches the
# pass on for the world this step, non-dimensional. Measured with the sweep alone (two 0.2 m boxes, dt 1/240 s,
# 3 s): 1:3 sinks 0.155 mm, 1:4 0.255 mm, 1:10 0.951 mm (three equal boxes 0.100 mm), with the pass 0 from 1:4 on
# (tests/solvers/steel/test_mass_ratio.py::test_the_pass_switches_on_at_the_shock_ratio).
# Below 4 the sweep's own sink is that of ordinary stacks, and ordinary scenes stay bitwise the sweep's.
SHOCK_RATIO = 4.0
SHOCK_VERTICAL = wp.constant(0.5)  # |n . up| below this (normal within 60 degrees of horizontal): no level
# Group steps per group visit. A centred load is exact in one (the line search is exact on a face's uniform
# mode); an off-centre one is not. Measured when the pass was written, 3 s: 1:100 with the top box 9 cm off
# centre sinks 200 mm (falls off) at 1 step, 0.051 mm at 4, 0.007 mm at 8, 0.006 mm at 16; the 20-box 1:100
# stack as a 1 cm staircase 1.6 mm at 1, 0.004-0.005 mm from 4 on. At 8 now (tests/solvers/steel/
# test_mass_ratio.py, the off-centre and staircase tests): 0.010 mm, and 0.24 um over 1 s (float32 rounding).
SHOCK_INNER = wp.constant(8)


@wp.func(inline=True)
def _side_weight(rows: RowBuffers, r: int, s: int):
    """``J_s Y_s`` of side ``s`` of row ``r``, its one-sided inverse mass [1/kg]; the response must be formed."""
    o = side_offset(rows, r, s)
    w = float(0.0)
    for k in range(rows.dof_count[r, s]):
        w += rows.J[o + k] * rows.Y[o + k]
    return w


@wp.func(inline=True)
def _two_sided(rows: RowBuffers, r: int):
    """Both sides of row ``r`` respond (two articulations that take impulses)."""
    return (rows.dof_count[r, 0] > 0 and rows.dof_count[r, 1] > 0 and rows.mass_start[r, 0] >= 0
            and rows.mass_start[r, 1] >= 0)


@wp.func(inline=True)
def _apply_side(rows: RowBuffers, world: int, r: int, s: int, impulse: float, joint_qd: wp.array[float]):
    """``qd += Y_s impulse`` on side ``s`` of row ``r`` only (``s`` < 0: both sides), with the world's drift."""
    for side in range(2):
        if s < 0 or side == s:
            o = side_offset(rows, r, side)
            d0 = rows.dof_start[r, side]
            for k in range(rows.dof_count[r, side]):
                joint_qd[d0 + k] = joint_qd[d0 + k] + rows.Y[o + k] * impulse
    add_world_drift(rows, world, wp.abs(impulse) * rows.y_max[r])


@wp.func(inline=True)
def _usable(rows: RowBuffers, r: int):
    """Row ``r`` is a rigid contact normal row the pass may step (J written, not soft)."""
    return (rows.kind[r] == ROW_CONTACT and not is_dormant(rows, r) and rows.regularization[r] == 0.0
            and rows.compliance[r] == 0.0)


@wp.func(inline=True)
def _upper_side(rows: RowBuffers, r: int, up: wp.vec3):
    """The side of contact row ``r`` that a positive impulse pushes up (side 1 takes ``+n``), or -1 when its
    normal is too near horizontal to say."""
    c = wp.dot(rows.dir[r], up)
    s = int(-1)
    if c >= SHOCK_VERTICAL:
        s = 1
    elif c <= -SHOCK_VERTICAL:
        s = 0
    return s


@wp.kernel
def _shock_pass(
    # Options:
    ratio: float,
    cfm: float,
    up: wp.vec3,
    # Factor of the core, as plain arguments (unit-stride specialization; see pgs._sweep):
    use_tree: int,
    dof_parent: wp.array[int],
    mass_factor: wp.array[float],
    # Data in/out: the rows (impulses added), then the velocities.
    rows: RowBuffers,
    joint_qd: wp.array[float],
):
    world = wp.tid()  # one thread per world
    factor = factor_of(use_tree, dof_parent, mass_factor)
    base = world * rows.world_row_capacity
    # The sweep left the world's units sorted top down in rows.order, groups marked in rows.span.
    unit_count = int(0)
    for family in range(2):
        rows_of = family_rows(rows, world, base, family)
        for i in range(rows_of[1]):
            if is_unit(rows, rows_of[0] + i):
                unit_count += 1
    # Is some group heavy on light this step? Only rows that formed a response took part in the sweep.
    active = int(0)
    u = int(0)
    while u < unit_count and active == 0:
        last = rows.span[base + u]
        r0 = rows.order[base + u]
        top = _upper_side(rows, r0, up)
        if rows.contact[r0] >= 0 and top >= 0 and _two_sided(rows, r0):
            w_up = float(0.0)
            w_low = float(0.0)
            for g in range(u, last + 1):
                r = rows.order[base + g]
                if _usable(rows, r) and rows.inv_mass[r] >= 0.0:
                    w_up += _side_weight(rows, r, top)
                    w_low += _side_weight(rows, r, 1 - top)
            if w_low > 0.0 and w_low >= ratio * w_up:
                active = 1
        u = last + 1
    if active == 0:
        return
    # Bottom up: the reverse of the sweep's order, a group at a time.
    done = int(0)
    while done < unit_count:
        at = unit_count - 1 - done
        first = rows.span[base + at]
        last = at
        done += last - first + 1
        r0 = rows.order[base + first]
        if rows.contact[r0] < 0:
            continue  # an internal row (limit, drive): the pass is about contact levels
        top = _upper_side(rows, r0, up)
        if top < 0:
            continue
        moving = int(-1)  # both sides move: a group with a static or prescribed side
        if _two_sided(rows, r0):
            moving = top
        for inner in range(SHOCK_INNER):
            gain = float(0.0)
            moved = float(0.0)
            any_step = int(0)
            for g in range(first, last + 1):
                r = rows.order[base + g]
                rows.step[r] = 0.0
                if _usable(rows, r):
                    v = row_velocity(rows, r, joint_qd)
                    old = rows.impulse[r]
                    if v < rows.target[r] or old != 0.0:
                        ensure_response(rows, r, cfm, factor)
                        w = 1.0 / rows.inv_mass[r]  # J Y + cfm, both sides
                        if moving >= 0:
                            w = _side_weight(rows, r, moving) + cfm
                        if w > 0.0:
                            new = wp.max(old + (rows.target[r] - v) / w, 0.0)
                            delta = new - old
                            rows.step[r] = delta
                            gain += delta * (rows.target[r] - v)
                            moved += delta * v
                            if delta != 0.0:
                                any_step = 1
            if any_step == 0:
                break
            for g in range(first, last + 1):
                r = rows.order[base + g]
                if rows.step[r] != 0.0:
                    _apply_side(rows, world, r, moving, rows.step[r], joint_qd)
            # Exact line search on the one-sided quadratic, as the sweep's group update (sweep/pgs.py).
            curvature = -moved
            for g in range(first, last + 1):
                r = rows.order[base + g]
                if rows.step[r] != 0.0:
                    curvature += rows.step[r] * row_velocity(rows, r, joint_qd)
            alpha = float(1.0)
            if curvature > 0.0 and gain < curvature:
                alpha = wp.max(gain / curvature, 0.0)
            for g in range(first, last + 1):
                r = rows.order[base + g]
                step = rows.step[r]  # 0 on a row that took none: adds nothing below
                if step != 0.0 and alpha < 1.0:
                    _apply_side(rows, world, r, moving, (alpha - 1.0) * step, joint_qd)
                rows.impulse[r] = rows.impulse[r] + alpha * step


def shock_enabled(model, body_responds: np.ndarray, body_articulation: np.ndarray) -> bool:
    """Some candidate contact pair of two responding bodies of different articulations differs in body mass by
    ``SHOCK_RATIO`` or more (a self-contact's rows have one side: the pass never acts on them)."""
    ratio, b0, b1 = candidate_ratios(model, body_responds)
    apart = body_articulation[b0] != body_articulation[b1]
    return bool((ratio[apart] >= SHOCK_RATIO).any())


def shock_up(model) -> wp.vec3 | None:
    """The pass's up, against the model's gravity (world 0's, as the sweep key's); None without gravity."""
    gravity = np.asarray(model.gravity.numpy(), dtype=np.float64).reshape(-1, 3)[0]
    norm = float(np.linalg.norm(gravity))
    return None if norm == 0.0 else wp.vec3(*(-gravity / norm))


def shock_setup(model, tables, plan) -> wp.vec3 | None:
    """The pass's up when the model may need it (:func:`shock_enabled`), else None: the pass is not launched."""
    if not shock_enabled(model, tables.body_responds_np.astype(bool), plan.body_articulation_np):
        return None
    return shock_up(model)


def shock_pass(sm, sd, joint_qd: wp.array) -> None:
    """Run the bottom-up pass on ``joint_qd`` in place, after a sweep left its order (see the module docstring)."""
    rows = sd.rows
    if sm.shock_up is None or rows.world_count == 0:
        return
    launch(
        _shock_pass,
        dim=rows.world_count,
        inputs=[float(SHOCK_RATIO), float(sm.options.cfm), sm.shock_up,
                *factor_arguments(sm.core.plan, sm.core.data)],
        outputs=[rows.buffers, joint_qd],
        device=sm.model.device,
    )
