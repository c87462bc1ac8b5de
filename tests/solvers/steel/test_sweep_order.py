"""The sweep's unit order (sweep/pgs.py ``_order_units``): top down by key, ties by body pair, then by row.

The sweep visits row units (normal and limit rows) by descending key (the pair's mean body height,
so a stack's weight travels down in one pass), ties broken by the body pair (so a pair's contacts
sit side by side and form one group), and rows that tie on all three stay in reservation order.
The order decides the iterate (Gauss-Seidel is order dependent), so it is checked exactly against
Python's stable sort on the same rows, and every group must be one body pair's contacts.
"""

import numpy as np
import warp as wp

import newton
from steel.solvers import SolverSteel
from steel.solvers.steel.data import ROW_COUPLED, ROW_FRICTION, ROW_PATCH, ROW_ROLLING, ROW_SPIN, ROW_TORSION

from .scenes import run

DT = 1.0 / 600.0  # [s]
HALF = 0.1  # box half extent [m]
TAIL_KINDS = (int(ROW_FRICTION), int(ROW_ROLLING), int(ROW_PATCH), int(ROW_COUPLED), int(ROW_SPIN),
              int(ROW_TORSION))


def _stacks(world_count: int):
    """Three stacks of 5, 6 and 7 boxes, jittered in x, y and yaw so contact counts and heights differ."""
    rng = np.random.default_rng(7)
    robot = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.7)
    for s, height in enumerate((5, 6, 7)):
        for level in range(height):
            dx, dy = rng.uniform(-0.01, 0.01, 2)
            yaw = rng.uniform(-0.05, 0.05)
            pos = wp.vec3(0.5 * s + dx, dy, HALF + 2.0 * HALF * level + 1e-3 * level)
            body = robot.add_body(xform=wp.transform(pos, wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), yaw)))
            robot.add_shape_box(body, hx=HALF, hy=HALF, hz=HALF, cfg=cfg)
    scene = newton.ModelBuilder()
    scene.replicate(robot, world_count)
    scene.add_ground_plane(cfg=cfg)
    return scene.finalize(device="cpu")


def test_units_sorted_top_down_stable_and_grouped():
    model = _stacks(world_count=2)
    solver = SolverSteel(model)
    run(model, solver, 30, DT)
    rows = solver.steel_data.rows
    b = rows.buffers
    kind, key, body = b.kind.numpy(), b.key.numpy(), b.body.numpy()
    order, span = b.order.numpy(), b.span.numpy()
    counts = rows.world_row_count.numpy()
    for world in range(rows.world_count):
        base = world * rows.world_row_capacity
        candidates = list(range(base, base + counts[world, 0]))
        start = base + rows.articulation_capacity
        candidates += list(range(start, start + counts[world, 1]))
        units = [r for r in candidates if kind[r] not in TAIL_KINDS]
        assert len(units) > 40  # enough to take several merge passes, with an odd tail
        expected = sorted(units, key=lambda r: (-float(key[r]), int(body[r, 1]), int(body[r, 0])))  # stable
        got = order[base:base + len(units)].tolist()
        assert got == expected
        # Groups: maximal runs of one body pair; span links each run's ends.
        u = 0
        while u < len(units):
            last = u
            pair = tuple(body[got[u]])
            while last + 1 < len(units) and tuple(body[got[last + 1]]) == pair:
                last += 1
            assert span[base + u] == last and span[base + last] == u
            u = last + 1
