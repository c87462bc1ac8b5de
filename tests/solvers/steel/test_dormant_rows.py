"""Dormant speculative contact rows (contacts/dormant.py): no Jacobian until the sweep's gate says the row might act.

Dormancy must never change the iterate: every test compares against the same solver with it switched off
(``solver.steel_data.dormant.enabled``), bitwise. The benchmark scenes cover self-contacts of one articulation (chain,
humanoid, ant), free bodies (tower) and no contacts that stay open (cartpole); a stack thrown at the ground
makes a contact that its build left dormant close within the step, so the sweep must materialize it.
"""

import numpy as np
import pytest
import warp as wp

import newton
from benchmarks.scenes import build_scene
from steel.solvers import SolverSteel
from steel.solvers.steel import solver as solver_module

HALF = 0.1  # box half extent [m]


def _run(model, dt: float, enabled: bool, steps: int, qd=None, sweep_counts=None):
    """``steps`` steps; joint_q and joint_qd after each, and the solver. ``sweep_counts`` collects, per step,
    the dormant normal rows before and after the sweep."""
    solver = SolverSteel(model)
    solver.steel_data.dormant.enabled = enabled
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    if qd is not None:
        s0.joint_qd.assign(np.asarray(qd, dtype=np.float32))
    out = []
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, dt)
        s0, s1 = s1, s0
        out.append(np.concatenate([s0.joint_q.numpy(), s0.joint_qd.numpy()]))
    return np.array(out), solver, s0


def _dormant(sd) -> int:
    """Rows marked dormant in ``sd`` (a solver's ``SteelData``)."""
    return int((sd.rows.buffers.inv_mass.numpy() < -1.5).sum())


@pytest.fixture
def count_sweeps(monkeypatch):
    """Record ``(dormant before, dormant after)`` around every position sweep."""
    counts = []
    real = solver_module.sweep

    def counting(sm, sd, joint_qd):
        before = _dormant(sd)
        real(sm, sd, joint_qd)
        counts.append((before, _dormant(sd)))

    monkeypatch.setattr(solver_module, "sweep", counting)
    return counts


@pytest.mark.parametrize("name, worlds", [("chain", 4), ("humanoid", 2), ("cartpole", 4), ("tower", 1), ("ant", 4)])
def test_dormant_rows_keep_the_iterate_bitwise(name, worlds):
    scene = build_scene(name, worlds, "cpu")
    on, _, _ = _run(scene.model, scene.dt, True, 300)
    off, _, _ = _run(scene.model, scene.dt, False, 300)
    assert np.isfinite(on).all()
    np.testing.assert_array_equal(on, off)


def test_most_chain_contacts_are_dormant(count_sweeps):
    """The chain's self-contacts are speculative and never act: most of them are built dormant and stay so."""
    scene = build_scene("chain", 4, "cpu")
    _, solver, _ = _run(scene.model, scene.dt, True, 3)
    rows = solver.steel_data.rows.buffers
    kind, counts = rows.kind.numpy(), solver.steel_data.rows.world_row_count.numpy()
    normal = 0
    for world in range(solver.steel_data.rows.world_count):
        base = world * solver.steel_data.rows.world_row_capacity
        normal += int((kind[base:base + counts[world, 0]] == 0).sum())
        start = base + solver.steel_data.rows.articulation_capacity
        normal += int((kind[start:start + counts[world, 1]] == 0).sum())
    before, after = count_sweeps[-1]
    assert normal > 0 and before > 0.8 * normal
    assert after == before  # none acts, none is materialized
    # Switched off, no row is ever dormant.
    count_sweeps.clear()
    _run(scene.model, scene.dt, False, 3)
    assert all(b == 0 for b, _ in count_sweeps)


def _thrown_stack():
    """A box 3 cm above the ground with a second box 2.5 cm above it, both thrown down at 5 m/s."""
    builder = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.6)
    low = HALF + 0.03
    for z in (low, low + 2.0 * HALF + 0.025):
        body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, z), wp.quat_identity()))
        builder.add_shape_box(body, hx=HALF, hy=HALF, hz=HALF, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    model = builder.finalize(device="cpu")
    qd = np.zeros(model.joint_dof_count, dtype=np.float32)
    qd[2] = qd[8] = -5.0  # [m/s] the free joints' linear z velocity
    return model, qd


def test_a_dormant_contact_that_closes_is_materialized_bitwise(count_sweeps):
    """The upper box's contact with the lower one is built dormant (both fall together), but the lower box stops
    on the ground within the step, so the gap closes: the sweep materializes the row and it acts."""
    model, qd = _thrown_stack()
    dt = 1.0 / 60.0
    on, _, state = _run(model, dt, True, 60, qd=qd)
    first = count_sweeps[0]
    off, _, _ = _run(model, dt, False, 60, qd=qd)
    assert np.isfinite(on).all()
    np.testing.assert_array_equal(on, off)
    assert first[0] > 0 and first[1] < first[0]  # dormant at build, materialized in the sweep
    body_q = state.body_q.numpy()
    assert body_q[0, 2] > HALF - 0.01  # the lower box did not pass the ground
    assert body_q[1, 2] - body_q[0, 2] > 2.0 * HALF - 0.01  # nor the upper box the lower one


def _resting_box():
    """A box at rest 1 mm above the ground: gravity closes the gap within a 1/60 s step."""
    builder = newton.ModelBuilder()
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, HALF + 0.001), wp.quat_identity()))
    builder.add_shape_box(body, hx=HALF, hy=HALF, hz=HALF)
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


def _level_pendulum():
    """A 0.5 m bar hinged at one end, level and at rest, 3 mm above the ground: gravity swings its tip down
    through the gap within a 1/60 s step. The bar's reference point is its centre, so without the bound's
    angular term (the arm to the tip) the tip's predicted speed is underestimated by half and the row would
    be left dormant."""
    builder = newton.ModelBuilder()
    link = builder.add_link()
    builder.add_shape_box(link, xform=wp.transform(wp.vec3(0.25, 0.0, 0.0), wp.quat_identity()), hx=0.25, hy=0.02,
                          hz=0.02)
    joint = builder.add_joint_revolute(-1, link, parent_xform=wp.transform(wp.vec3(0.0, 0.0, 0.023),
                                                                            wp.quat_identity()),
                                       axis=(0.0, 1.0, 0.0))
    builder.add_articulation([joint])
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


@pytest.mark.parametrize("scene", [_resting_box, _level_pendulum], ids=["box", "pendulum"])
def test_a_gap_that_gravity_closes_is_not_dormant(scene):
    """The bound carries the predicted velocity's change: a contact at rest whose gap the free dynamics close
    within the step must act from the sweep's first pass (with the change left out of the bound, it stays
    dormant and the body falls into the ground)."""
    model = scene()
    dt = 1.0 / 60.0
    on, _, state = _run(model, dt, True, 30)
    off, _, _ = _run(model, dt, False, 30)
    np.testing.assert_array_equal(on, off)
    assert state.body_q.numpy()[0, 2] > 0.0
