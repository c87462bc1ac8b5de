"""The sweep's gate on rows that cannot act (sweep/pgs.py, "Gate").

A unilateral row with no impulse whose last full ``J qd`` cleared its target by more than its world's
velocity drift since then can move it is skipped. The gate must never change the iterate: every test
compares against the same solver with the gate switched off (an infinite rounding allowance makes
every bound fail, and stops the sweep skipping the passes that follow one that applied nothing), bitwise. The scene makes speculative rows activate in the middle of a sweep: a box
lands and the box resting 2 mm above it, which the first pass saw at rest relative to it, closes
the gap within the same step; a three-link chain swings into a box and its links pass each other.
"""

import math

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

DT = 1.0 / 240.0  # [s]
HALF = 0.1  # box half extent [m]
GAP = 0.002  # gap of the upper box above the falling one [m]
LINK = 0.15  # chain link length [m]


def _add_chain(robot, pivot, cfg):
    """Three links of ``LINK`` hanging from ``pivot`` [m] on hinges about y; returns the joints."""
    parent = -1
    joints = []
    for _ in range(3):
        link = robot.add_link()
        robot.add_shape_box(link, xform=wp.transform(wp.vec3(0.0, 0.0, -0.5 * LINK), wp.quat_identity()),
                            hx=0.02, hy=0.02, hz=0.5 * LINK, cfg=cfg)
        offset = pivot if parent < 0 else wp.vec3(0.0, 0.0, -LINK)
        joints.append(robot.add_joint_revolute(parent, link, parent_xform=wp.transform(offset, wp.quat_identity()),
                                               axis=(0.0, 1.0, 0.0)))
        parent = link
    robot.add_articulation(joints)
    return joints


def _scene(world_count: int = 2):
    """Per world: two boxes falling 5 cm with 2 mm between them, a box beside them, a swinging chain."""
    robot = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.6)
    z_low = HALF + 0.05
    for x, z in ((0.0, z_low), (0.0, z_low + 2.0 * HALF + GAP), (0.205, HALF)):
        body = robot.add_body(xform=wp.transform(wp.vec3(x, 0.0, z), wp.quat_identity()))
        robot.add_shape_box(body, hx=HALF, hy=HALF, hz=HALF, cfg=cfg)
    # A chain from a pivot at x = 1 m, swung up by 0.8 rad towards -x; it swings into a small box at x = 1.15 m.
    box = robot.add_body(xform=wp.transform(wp.vec3(1.15, 0.0, 0.5 * HALF), wp.quat_identity()))
    robot.add_shape_box(box, hx=0.5 * HALF, hy=0.5 * HALF, hz=0.5 * HALF, cfg=cfg)
    joints = _add_chain(robot, wp.vec3(1.0, 0.0, 0.5), cfg)
    robot.joint_q[robot.joint_q_start[joints[0]]] = 0.8
    scene = newton.ModelBuilder()
    scene.replicate(robot, world_count)
    scene.add_ground_plane(cfg=cfg)
    return scene.finalize(device="cpu")


def _quiet_scene(world_count: int = 2):
    """Per world: a chain hanging at rest with its tip 5 cm above the ground (a speculative row that never
    acts), and a box dropped from 0.3 m, so the world's passes apply nothing until the box nears the ground."""
    robot = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.6)
    body = robot.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.3), wp.quat_identity()))
    robot.add_shape_box(body, hx=HALF, hy=HALF, hz=HALF, cfg=cfg)
    _add_chain(robot, wp.vec3(1.0, 0.0, 3.0 * LINK + 0.05), cfg)
    scene = newton.ModelBuilder()
    scene.replicate(robot, world_count)
    scene.add_ground_plane(cfg=cfg)
    return scene.finalize(device="cpu")


def _solver(model, gate: bool, **options):
    solver = SolverSteel(model, **options)
    if not gate:
        solver.steel_data.rows.buffers.gate_rounding = math.inf  # every gate test fails (data.py)
    return solver


def _run(model, solver, steps: int):
    """``steps`` steps from the model's initial joint coordinates; joint positions and velocities after each."""
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)  # the chain's links where its joint angle puts them
    out = []
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        out.append(np.concatenate([s0.joint_q.numpy(), s0.joint_qd.numpy()]))
    return np.array(out), s0


@pytest.mark.parametrize("options", [{}, {"velocity_iterations": 2}], ids=["position", "velocity_iterations"])
def test_gate_keeps_the_iterate_bitwise(options):
    model = _scene()
    gated, state = _run(model, _solver(model, True, **options), 120)
    plain, _ = _run(model, _solver(model, False, **options), 120)
    assert np.isfinite(gated).all()
    np.testing.assert_array_equal(gated, plain)
    # The scene does what the docstring says: the upper box lands on the lower one (it rests on it at the end),
    # and the chain swung into its box (the box moved).
    body_q = state.body_q.numpy()
    assert abs(body_q[1, 2] - body_q[0, 2] - 2.0 * HALF) < 1e-3  # stacked: the 2 mm gap closed
    assert body_q[3, 0] > 1.15 + 1e-3  # pushed by the chain


@pytest.mark.parametrize("options", [{}, {"contact_friction_position_iterations": 4}, {"velocity_iterations": 2}],
                         ids=["position", "friction_phases", "velocity_iterations"])
def test_skipped_quiet_passes_keep_the_iterate_bitwise(options):
    """Passes after one that applied nothing are skipped (sweep/pgs.py ``_run_passes``); the gate's switch turns that
    off too, so the two runs differ in it, and must agree bitwise, before, during and after the landing."""
    model = _quiet_scene()
    gated, state = _run(model, _solver(model, True, **options), 80)
    plain, _ = _run(model, _solver(model, False, **options), 80)
    assert np.isfinite(gated).all()
    np.testing.assert_array_equal(gated, plain)
    assert abs(state.body_q.numpy()[0, 2] - HALF) < 2e-3  # the box landed


def test_gate_skips_rows_that_cannot_act():
    """The gate skips rows: their reference stays at an earlier drift than the ungated sweep's last full
    ``J qd``, while the velocities and the drift itself agree bitwise."""
    model = _scene()
    gated, plain = _solver(model, True), _solver(model, False)
    _run(model, gated, 40)
    _run(model, plain, 40)
    a, b = gated.steel_data.rows.buffers, plain.steel_data.rows.buffers
    np.testing.assert_array_equal(a.world_drift.numpy(), b.world_drift.numpy())
    assert (a.world_drift.numpy() > 0.0).all()  # the resting boxes' contacts act every pass
    counts = gated.steel_data.rows.world_row_count.numpy()
    ref_gated, ref_plain = a.gate.numpy()[:, 2], b.gate.numpy()[:, 2]
    reserved = np.zeros(ref_gated.shape[0], dtype=bool)
    for world in range(gated.steel_data.rows.world_count):
        base = world * gated.steel_data.rows.world_row_capacity
        reserved[base:base + counts[world, 0]] = True
        start = base + gated.steel_data.rows.articulation_capacity
        reserved[start:start + counts[world, 1]] = True
    referenced = reserved & (ref_plain >= 0.0)
    assert referenced.sum() > 10
    assert (ref_gated[referenced] <= ref_plain[referenced]).all()
    skipped = ref_gated[referenced] < ref_plain[referenced]
    assert skipped.sum() >= 0.25 * referenced.sum(), (skipped.sum(), referenced.sum())
