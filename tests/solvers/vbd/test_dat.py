"""SolverVBD rigid–soft Divide-and-Truncate (``rigid_soft_enable_dat``) and the shared DAT relaxation, side by side
with Newton's ``newton.solvers.SolverVBD`` (run, never read).

The scene: a 16 x 16 cloth of 1 m, pinned along two edges at z 0.5 m (particle radius 1 cm), and a sphere
(radius 0.15 m) or a cube (half-extent 0.15 m) of density 1000 kg/m³ thrown down at 8 m/s from 0.1 m
above it, 60 steps of 1/60 s, 10 iterations, an owned pipeline with ``soft_contact_gap`` 1 cm. The
signed distance of every particle centre to the exact shape surface is measured after every step.
"""

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

DT = 1.0 / 60.0
HALF = 0.15  # [m] sphere radius, cube half-extent
GAP = 0.01  # [m] the pipeline's soft_contact_gap


def _drop_model(shape: str, spin: float = 0.0, half: float = HALF, density: float = 1000.0, z: float = 0.75):
    """The cloth and the shape (``half`` [m], ``density`` [kg/m³]) centred at height ``z`` [m], thrown down at 8 m/s."""
    b = newton.ModelBuilder()
    n = 16
    b.add_cloth_grid(pos=wp.vec3(-0.5, -0.5, 0.5), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=n, dim_y=n,
                     cell_x=1.0 / n, cell_y=1.0 / n, mass=0.01, fix_left=True, fix_right=True, tri_ke=1e3, tri_ka=1e3,
                     edge_ke=1e-2, particle_radius=0.01)
    body = b.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, z), wp.quat_identity()))
    cfg = newton.ModelBuilder.ShapeConfig(density=density, ke=1e4, kd=0.0, mu=0.5)
    if shape == "sphere":
        b.add_shape_sphere(body, radius=half, cfg=cfg)
    else:
        b.add_shape_box(body, hx=half, hy=half, hz=half, cfg=cfg)
    b.color()
    model = b.finalize("cpu")
    qd = model.body_qd.numpy()
    qd[0, 2] = -8.0  # [m/s] thrown down
    qd[0, 3:5] = spin, 0.5 * spin  # [rad/s] about x and y
    model.body_qd.assign(qd)
    model.soft_contact_ke = 1e3
    return model


def _signed_distance(shape, x, body_q):
    """Particle centres' signed distance to the shape's surface [m] (negative inside), exact in float64."""
    x = np.asarray(x, dtype=np.float64)
    q = np.asarray(body_q[0], dtype=np.float64)
    qx, qy, qz, qw = q[3:]
    rot = np.array([[1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)],
                    [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)],
                    [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)]])
    local = (x - q[:3]) @ rot
    if shape == "sphere":
        return np.linalg.norm(local, axis=1) - HALF
    d = np.abs(local) - HALF
    return np.linalg.norm(np.maximum(d, 0.0), axis=1) + np.minimum(d.max(axis=1), 0.0)


def _drop(solver_cls, shape: str, dat: bool, steps: int = 60, spin: float = 0.0, **schedule):
    """Per step: the smallest signed distance [m] and the body's displacement [m]."""
    model = _drop_model(shape, spin)
    pipeline = newton.CollisionPipeline(model, soft_contact_gap=GAP, contact_matching="latest")
    solver = solver_cls(model, iterations=10, collision_pipeline=pipeline, rigid_soft_enable_dat=dat, **schedule)
    s0, s1 = model.state(), model.state()
    low, moved = [], []
    for _ in range(steps):
        before = s0.body_q.numpy()[0, :3].copy()
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
        low.append(_signed_distance(shape, s0.particle_q.numpy(), s0.body_q.numpy()).min())
        moved.append(np.linalg.norm(s0.body_q.numpy()[0, :3] - before))
    return np.array(low), np.array(moved)


# Smallest particle-centre distance to the surface over the 60 steps [m], measured (ours, Newton's).
WITH_DAT = {"sphere": (5.24e-3, 4.35e-3), "box": (2.54e-3, 1.50e-3)}


@pytest.mark.parametrize("shape", ["sphere", "box"])
@pytest.mark.parametrize("solver_cls", [SolverVBD, newton.solvers.SolverVBD], ids=["steel", "newton"])
def test_fast_drop_never_crosses_the_shape_surface(shape, solver_cls):
    """With DAT no particle centre ever crosses the surface: the smallest distance over 60 steps is 5.24 mm
    (sphere) and 2.54 mm (cube) here, 4.35 mm and 1.50 mm on Newton's. Without DAT the shape passes through the
    cloth in the first step on both: at 8 m/s it covers the 100 mm to the cloth within the step, and no
    contact was detected at its start (out of the pipeline's reach), leaving particles 33.3 mm inside."""
    low, _ = _drop(solver_cls, shape, dat=True)
    measured = WITH_DAT[shape][0 if solver_cls is SolverVBD else 1]
    assert low.min() >= 0.0
    assert measured / 3.0 <= low.min() <= 3.0 * measured
    low, _ = _drop(solver_cls, shape, dat=False, steps=1)
    assert low[0] == pytest.approx(-0.0333, rel=0.05)


@pytest.mark.parametrize("solver_cls", [SolverVBD, newton.solvers.SolverVBD], ids=["steel", "newton"])
def test_spinning_box_never_crosses_the_surface(solver_cls):
    """The cube thrown spinning at 60 rad/s about x and 30 rad/s about y: its corners sweep curved paths, which the
    chord bound here certifies whole (smallest distance 2.13 mm; Newton's sampling and bisection 0.15 mm). Without
    DAT its particles end 56.2 mm inside after the first step (Newton's 61.1 mm)."""
    low, _ = _drop(solver_cls, "box", dat=True, spin=60.0)
    measured = 2.13e-3 if solver_cls is SolverVBD else 1.5e-4
    assert low.min() >= 0.0
    assert measured / 3.0 <= low.min() <= 3.0 * measured
    low, _ = _drop(solver_cls, "box", dat=False, spin=60.0, steps=1)
    assert low[0] == pytest.approx(-0.0562 if solver_cls is SolverVBD else -0.0611, rel=0.05)


@pytest.mark.parametrize("solver_cls", [SolverVBD, newton.solvers.SolverVBD], ids=["steel", "newton"])
def test_motion_budget_per_step(solver_cls):
    """A body in free flight moves at most two budgets per step, b = 0.5 x 0.85 x (1 cm gap + 1 cm particle
    radius + 0 margin) = 8.5 mm per detection, before and after initialization (AUTO resolves to
    PRE_POST_INIT with DAT): 17.0 mm per step here and on Newton's, for 133 mm of free fall."""
    _, moved = _drop(solver_cls, "sphere", dat=True, steps=5)
    np.testing.assert_allclose(moved, 0.017, rtol=1e-3)


@pytest.mark.parametrize(("kind", "every", "per_step"), [("PRE_INIT", None, 0.0085), ("ITERATIONS", 3, 0.034)])
@pytest.mark.parametrize("solver_cls", [SolverVBD, newton.solvers.SolverVBD], ids=["steel", "newton"])
def test_schedules_set_the_budget_and_stay_outside(solver_cls, kind, every, per_step):
    """One budget per RIGID detection: PRE_INIT (one a step) lets the falling sphere move 8.5 mm per step,
    ITERATIONS every 3 of 10 iterations (four a step) 34.0 mm, here and on Newton's; neither lets a particle
    cross (smallest distances over 60 steps 6.64 / 4.74 mm here, 5.28 / 4.24 mm on Newton's)."""
    slot, frequency = SolverVBD.CollisionSlot, SolverVBD.CollisionFrequencyType
    schedule = {"collision_frequency_type": {slot.RIGID: getattr(frequency, kind)}}
    if every is not None:
        schedule["collision_frequency"] = {slot.RIGID: every}
    low, moved = _drop(solver_cls, "sphere", dat=True, **schedule)
    np.testing.assert_allclose(moved[:3], per_step, rtol=1e-3)
    measured = {(True, "PRE_INIT"): 6.64e-3, (True, "ITERATIONS"): 4.74e-3, (False, "PRE_INIT"): 5.28e-3,
                (False, "ITERATIONS"): 4.24e-3}[solver_cls is SolverVBD, kind]
    assert low.min() >= 0.0
    assert measured / 3.0 <= low.min() <= 3.0 * measured


@pytest.mark.parametrize("solver_cls", [SolverVBD, newton.solvers.SolverVBD], ids=["steel", "newton"])
def test_both_dats_on_the_drop(solver_cls):
    """Self-contact DAT on too (margin 1 cm + gap 5 mm, the default equivalent schedules): the sphere still
    never reaches a particle centre (smallest distance 5.30 mm here, 4.46 mm on Newton's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        low, _ = _drop(solver_cls, "sphere", dat=True, particle_enable_self_contact=True,
                       particle_self_contact_margin=0.01, particle_self_contact_gap=0.005)
    measured = 5.30e-3 if solver_cls is SolverVBD else 4.46e-3
    assert low.min() >= 0.0
    assert measured / 3.0 <= low.min() <= 3.0 * measured


def _sheets():
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    for z in (0.5, 0.504):  # 4 mm apart, inside the 1 cm interaction distance
        b.add_cloth_grid(pos=wp.vec3(0.0, 0.0, z), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=4, dim_y=4,
                         cell_x=0.05, cell_y=0.05, mass=0.01, particle_radius=0.005)
    b.color()
    return b.finalize("cpu")


def _separate(solver_cls, dat: bool, steps: int = 30):
    model = _sheets()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = solver_cls(model, iterations=10, particle_enable_self_contact=True, particle_self_contact_margin=0.01,
                            particle_self_contact_gap=0.005, rigid_soft_enable_dat=dat,
                            collision_pipeline=newton.CollisionPipeline(model, soft_contact_gap=GAP))
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
    z = s0.particle_q.numpy()[:, 2]
    half = model.particle_count // 2
    return z[half:].mean() - z[:half].mean()


@pytest.mark.parametrize("solver_cls", [SolverVBD, newton.solvers.SolverVBD], ids=["steel", "newton"])
def test_touching_self_contact_pairs_separate(solver_cls):
    """Two sheets 4 mm apart, within the 1 cm self-contact distance, push apart under both DATs: 0.106 m apart
    after 30 steps here (0.237 m on Newton's, whose self-contact separates faster), and rigid–soft DAT, with
    no shape near, changes nothing (the same number without it, on both)."""
    gap = _separate(solver_cls, dat=True)
    assert gap == pytest.approx(0.106 if solver_cls is SolverVBD else 0.237, rel=0.2)
    assert _separate(solver_cls, dat=False) == pytest.approx(gap, rel=1e-6)


def _cloth():
    b = newton.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.0, 1.0), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=2, dim_y=2,
                     cell_x=0.1, cell_y=0.1, mass=0.1)
    b.color()
    return b.finalize("cpu")


@pytest.mark.parametrize("solver_cls", [SolverVBD, newton.solvers.SolverVBD], ids=["steel", "newton"])
def test_relaxation_is_validated_and_the_old_spelling_warns(solver_cls):
    """``dat_conservative_bound_relaxation`` lies in (0, 1) (ValueError naming it); the seed's spelling beside it
    overrides it with a NewtonDeprecationWarning, as on Newton's; alone it is the seed's API and does not warn here."""
    model = _cloth()
    for bad in (0.0, 1.0, -0.5, float("nan")):
        with pytest.raises(ValueError, match="conservative_bound_relaxation"):
            solver_cls(model, dat_conservative_bound_relaxation=bad)
    with pytest.raises(ValueError, match="conservative_bound_relaxation"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solver_cls(model, particle_conservative_bound_relaxation=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solver_cls(model, dat_conservative_bound_relaxation=0.5)  # the new spelling alone never warns
        if solver_cls is SolverVBD:
            solver_cls(model, particle_conservative_bound_relaxation=0.5)  # nor the seed's alone (its API; 1.8.0 warns)
    with pytest.warns(newton.NewtonDeprecationWarning, match="particle_conservative_bound_relaxation is deprecated"):
        solver = solver_cls(model, particle_conservative_bound_relaxation=0.6, dat_conservative_bound_relaxation=0.5)
    value = (solver.particle_conservative_bound_relaxation if solver_cls is SolverVBD
             else solver.dat_conservative_bound_relaxation)
    assert value == 0.6


def test_relaxation_scales_the_budget():
    """The budget is 0.5 x relaxation x query radius: 0.5 halves the free-flight step to 10.0 mm."""
    model = _drop_model("sphere")
    solver = SolverVBD(model, iterations=10, collision_pipeline=newton.CollisionPipeline(model, soft_contact_gap=GAP),
                       rigid_soft_enable_dat=True, dat_conservative_bound_relaxation=0.5)
    s0, s1 = model.state(), model.state()
    solver.step(s0, s1, None, None, DT)
    assert np.linalg.norm(s1.body_q.numpy()[0, :3] - s0.body_q.numpy()[0, :3]) == pytest.approx(0.010, rel=1e-3)


def test_refusals():
    """What DAT cannot run raises, naming the option: interval arithmetic (not built), no owned pipeline, an
    external rigid solver, a zero query radius, a NONE rigid schedule, schedules unlike self-contact's,
    and mesh shapes colliding with particles (full-surface contacts run: test_dat_full_surface.py)."""
    model = _drop_model("sphere")
    pipe = newton.CollisionPipeline(model, soft_contact_gap=GAP)
    with pytest.raises(NotImplementedError, match="rigid_soft_dat_use_interval_arithmetic"):
        SolverVBD(model, collision_pipeline=pipe, rigid_soft_enable_dat=True,
                  rigid_soft_dat_use_interval_arithmetic=True)
    with pytest.raises(ValueError, match="collision_pipeline"):
        SolverVBD(model, rigid_soft_enable_dat=True)
    with pytest.raises(ValueError, match="integrate_with_external_rigid_solver"):
        SolverVBD(model, collision_pipeline=pipe, rigid_soft_enable_dat=True, integrate_with_external_rigid_solver=True)
    thin = _drop_model("sphere")
    thin.particle_radius.zero_()
    with pytest.raises(ValueError, match="query radius"):
        SolverVBD(thin, collision_pipeline=newton.CollisionPipeline(thin, soft_contact_gap=0.0),
                  rigid_soft_enable_dat=True)
    slot, kind = SolverVBD.CollisionSlot, SolverVBD.CollisionFrequencyType
    solver = SolverVBD(model, collision_pipeline=pipe, rigid_soft_enable_dat=True,
                       collision_frequency_type={slot.RIGID: kind.NONE})
    s0, s1 = model.state(), model.state()
    with pytest.raises(ValueError, match="RIGID"):
        solver.step(s0, s1, None, None, DT)
    solver = SolverVBD(model, collision_pipeline=pipe, rigid_soft_enable_dat=True, particle_enable_self_contact=True,
                       particle_self_contact_margin=0.01, particle_self_contact_gap=0.005,
                       collision_frequency_type={slot.RIGID: kind.PRE_INIT})
    with pytest.raises(ValueError, match="equivalent"):
        solver.step(s0, s1, None, None, DT)
    b = newton.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.0, 1.0), rot=wp.quat_identity(), vel=wp.vec3(0.0), dim_x=2, dim_y=2,
                     cell_x=0.1, cell_y=0.1, mass=0.1, particle_radius=0.01)
    mesh = newton.Mesh(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float32), np.array([0, 1, 2]))
    b.add_shape_mesh(-1, mesh=mesh)
    b.color()
    meshed = b.finalize("cpu")
    with pytest.raises(NotImplementedError, match="MESH"):
        SolverVBD(meshed, collision_pipeline=newton.CollisionPipeline(meshed), rigid_soft_enable_dat=True)
