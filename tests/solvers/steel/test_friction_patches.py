"""SolverSteel friction patches (the default) against point friction and the analytic incline."""

import numpy as np
import pytest

import newton
import warp as wp
from steel.solvers import SolverSteel
from steel.solvers.steel.contacts.patches import region_roles

from .scenes import G, single_box, tilted_gravity

DT = 1.0 / 240.0
THETA = np.radians(20.0)


def _incline(solver_class, seconds, **options):
    """A 0.2 m box with mu 0.5 on a 20 degree incline: (x after each step [m], solver, contacts)."""
    model = single_box(z=0.1, mu=0.5, gravity=tilted_gravity(20.0))
    solver = solver_class(model, **options)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    xs = []
    for _ in range(int(round(seconds / DT))):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        xs.append(float(s0.body_q.numpy()[0, 0]))
    return np.array(xs), solver, contacts, model


def test_a_box_on_a_20_degree_incline_does_not_creep_over_10_s_with_patches():
    """Patches (default) hold the box to 2e-9 m over 10 s; point friction is held to its own measured level.

    Tilted gravity on a flat ground; the real ramps (a rotated plane, box, mesh or kinematic support) are
    ``test_ramps.py``'s. Measured creep from 0.25 s to 10 s at dt = 1/240 s, 12 iterations: patches 7.3e-10 m
    (4.9e-8 m before the anchors were kept as material points), point friction (``friction_anchor_beta=0``)
    1.43e-5 m; Newton's SolverSteel on the same scene: patches 2.5e-9 m, point friction 1.2e-5 m. Limits
    2.7x and 2.8x the measured.
    """
    x, solver, _, _ = _incline(SolverSteel, 10.0)
    assert solver.friction_anchor_beta == pytest.approx(0.2)
    assert abs(x[-1] - x[60]) < 2e-9  # [m]
    x_point, _, _, _ = _incline(SolverSteel, 10.0, friction_anchor_beta=0.0)
    assert abs(x_point[-1] - x_point[60]) < 4e-5  # [m]: point friction holds too, only creeps more


def test_a_face_carries_its_friction_at_two_diagonal_anchors_that_balance_the_slope():
    """Of a face's four corner contacts two (a diagonal) carry friction; together m g sin(theta) within 1 %.

    Every corner keeps its normal row: the normals sum to m g cos(theta). The friction bound is the
    face's total normal impulse shared by the two anchors, however it is spread over the corners.
    """
    _, solver, contacts, model = _incline(SolverSteel, 1.0)
    n = int(contacts.rigid_contact_count.numpy()[0])
    assert n == 4
    row_count = solver.steel_data.contact_slots.row_count.numpy()[:n]
    first_row = solver.steel_data.contact_slots.row.numpy()[:n]
    anchors = np.flatnonzero(row_count == 3)
    assert len(anchors) == 2 and (row_count[row_count != 3] == 1).all()
    points = contacts.rigid_contact_point0.numpy()[anchors]
    assert np.linalg.norm(points[0] - points[1]) == pytest.approx(0.2 * np.sqrt(2.0), rel=1e-3)  # a diagonal
    impulse = solver.steel_data.rows.buffers.impulse.numpy()
    direction = solver.steel_data.rows.buffers.dir.numpy()
    weight = float(model.body_mass.numpy()[0]) * G
    normal = impulse[first_row].sum() / DT
    friction = sum(impulse[r + k] * direction[r + k] for r in first_row[anchors] for k in (1, 2)) / DT
    assert normal == pytest.approx(weight * np.cos(THETA), rel=0.01)
    assert np.linalg.norm(friction) == pytest.approx(weight * np.sin(THETA), rel=0.01)


def test_point_friction_gives_every_contact_its_own_friction_pair():
    """``friction_anchor_beta=0`` selects point friction: all four corners carry a friction pair."""
    _, solver, contacts, _ = _incline(SolverSteel, 0.25, friction_anchor_beta=0.0)
    n = int(contacts.rigid_contact_count.numpy()[0])
    assert (solver.steel_data.contact_slots.row_count.numpy()[:n] == 3).all()


def test_newton_steel_patches_hold_the_same_incline():
    """The reference's default (patches) holds the same incline: 2.5e-9 m measured over 10 s, limit 7.5e-9 m."""
    x, _, _, _ = _incline(newton.solvers.SolverSteel, 10.0)
    assert abs(x[-1] - x[60]) < 7.5e-9  # [m]


def test_the_four_towers_stand_for_30_s_on_patches_within_a_tenth_of_a_millimetre():
    """The four dropped box towers on patches (the default): every box within 0.1 mm of its start, horizontally.

    Measured 0.000 mm at 10, 20 and 30 s at dt = 1/240 s (point friction: the same); the reference
    drifts 7-10 mm in the benchmark's shorter run.
    """
    from benchmarks import scenes

    model = scenes.build_tower(1, "cpu").model
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    start = s0.body_q.numpy().copy()
    for _ in range(int(round(30.0 / DT))):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
    drift = np.linalg.norm(s0.body_q.numpy()[:, :2] - start[:, :2], axis=1)
    assert drift.max() < 1e-4  # [m]
    assert s0.body_q.numpy()[:, 2].max() > 1.29  # the top box is still on top


@wp.kernel
def _anchor_roles(shape_body: wp.array[int], shape0: wp.array[wp.int32], shape1: wp.array[wp.int32],
                  normal: wp.array[wp.vec3], point1: wp.array[wp.vec3], body_q: wp.array[wp.transform],
                  anchor_out: wp.array[wp.int32]):
    c = wp.tid()
    anchor_out[c] = region_roles(c, shape0.shape[0], shape_body, shape0, shape1, normal, point1, body_q)[0]


def _anchor_points(corners: np.ndarray) -> set:
    """The corners ``region_roles`` makes anchors when a face's contacts come in this order (rounded [mm])."""
    n = len(corners)
    roles = wp.zeros(n, dtype=wp.int32)
    wp.launch(_anchor_roles, dim=n, inputs=[
        wp.array([-1, 0], dtype=int), wp.zeros(n, dtype=wp.int32), wp.ones(n, dtype=wp.int32),
        wp.array(np.tile([0.0, 0.0, 1.0], (n, 1)), dtype=wp.vec3), wp.array(corners, dtype=wp.vec3),
        wp.array([wp.transform_identity()], dtype=wp.transform), roles])
    return {tuple(np.round(p * 1e3).astype(int)) for p in corners[roles.numpy() != 0]}


@pytest.mark.parametrize("half", [(0.1, 0.1), (0.0475, 0.1)])
def test_a_face_keeps_its_anchor_diagonal_whatever_order_its_corners_come_in(half):
    """The two anchors of a rectangular face are the same diagonal for every order of its four corners.

    The pipeline does not keep a manifold's order from step to step; with the lower indices breaking the
    tie between the equally long diagonals, a rotated order swapped them, the new anchors met records of
    non-anchors and lost their carried slip: a 20-level box pyramid crept 3.3 mm in 2 s (0.2 mm with the
    diagonal picked by geometry), the 30-level one 18 mm in 10 s.
    """
    hx, hy = half
    corners = np.array([[-hx, -hy, -0.1], [hx, -hy, -0.1], [hx, hy, -0.1], [-hx, hy, -0.1]])
    picks = {frozenset(_anchor_points(np.roll(corners[::step], shift, axis=0)))
             for step in (1, -1) for shift in range(4)}
    assert len(picks) == 1
    (pick,) = picks
    assert len(pick) == 2
    a, b = (np.array(p) for p in pick)
    assert np.linalg.norm(a - b) == pytest.approx(2e3 * np.hypot(hx, hy), abs=1.5)  # a diagonal [mm]


def _tower_drift(model, dt, marks):
    """Largest horizontal displacement [m] of any box between the first and each later mark [s]."""
    from benchmarks import statics

    poses = {0.0: model.body_q.numpy()[:, :2].copy()}
    steps = {int(round(t / dt)): t for t in marks if t > 0.0}

    def after(k, state):
        if k in steps:
            poses[steps[k]] = state.body_q.numpy()[:, :2].copy()

    statics.simulate(model, SolverSteel(model), dt, max(steps), after=after)
    first = poses[marks[0]]
    return [float(np.linalg.norm(poses[t] - first, axis=1).max()) for t in marks[1:]]


@pytest.mark.parametrize("rate", [120, 240, 600])
def test_the_four_towers_hold_at_every_time_step(rate):
    """The shipped four towers at dt 1/120, 1/240 and 1/600: no box moves horizontally from its start by 1e-6 m
    at 2 s or 10 s (measured 0.0 m at every step size: the boxes are aligned, so nothing rounds sideways)."""
    from benchmarks import scenes

    drift = _tower_drift(scenes.build_tower(1, "cpu").model, 1.0 / rate, [0.0, 2.0, 10.0])
    assert max(drift) < 1e-6  # [m]


def test_perturbed_towers_land_within_a_millimetre_and_a_half():
    """sweep/pgs.py, "Why groups": the perturbed towers (seed 1) at dt 1/240, the largest horizontal displacement of a
    box from its start at 3 s, nearly all of it while landing: measured 1.43 mm (1.37 mm at 1 s). rtol 0.5 [m]: a
    landing figure of one seed (seeds 2-4: 0.67, 0.53, 0.38 mm), asserted as the docstring states it; the
    per-corner sweep the contact groups replaced left 4.2-8.9 mm."""
    from benchmarks import statics

    drift = _tower_drift(statics.perturbed_towers(), 1.0 / 240.0, [0.0, 3.0])
    assert drift[0] == pytest.approx(1.43e-3, rel=0.5)


def test_perturbed_towers_settle_without_creep_at_dt_1_240():
    """Each box offset by up to 0.5 mm and turned by up to 0.3 degrees (``benchmarks.statics.perturbed_towers``):
    drift from 2 s to 10 s at dt 1/240 measured 1.38e-5 m, limit 4e-5 m (2.9x); before the anchors were kept
    as material points 4.6e-4 m; Newton's reference 7.9e-4 m."""
    from benchmarks import statics

    drift = _tower_drift(statics.perturbed_towers(), 1.0 / 240.0, [2.0, 10.0])
    assert drift[0] < 4e-5  # [m]
