"""steel:adhesion (MuJoCo's geom adhesion): pull-off, friction budget, attraction in the gap, release.

A 0.2 m cube of 0.8 kg (W = 7.85 N) with adhesion A = 5 N on a plane touches it at 4 contact points,
so it leaves the plane when pulled up with more than 4 A + W = 27.85 N, and slides under a
horizontal push above mu (W + 4 A) (friction bounded by mu times the net normal impulse plus A dt).
Measured at dt = 1/240 s: held at 0.99 (4 A + W) with z unchanged to 1e-6 m, gone at 1.01; contact_f
sums to the net pull F - W. MuJoCo 3.17 on the same MJCF (geom adhesion 5, margin and gap 2 cm: its
soft contact must stretch to pull, and without them loses the contact at the first pull, even at
0.5 (4 A + W)) rests 2 cm up on its margin, is held there at 0.99 and lets go at 1.01 as well. The
same MJCF through Newton's importer (geom adhesion into steel:adhesion, margin into shape_margin)
rests 2 cm up too and pulls off at the same force.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

DT = 1.0 / 240.0
G = 9.81
A = 5.0  # [N] adhesion of the cube
GAP = 0.02  # [m] the cube's contact gap


def _cube(z=0.1, adhesion=A, mu=0.5, ground_adhesion=0.0):
    builder = newton.ModelBuilder()
    SolverSteel.register_custom_attributes(builder)
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, z), wp.quat_identity()))
    cfg = newton.ModelBuilder.ShapeConfig(density=100.0, gap=GAP, mu=mu)
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg, custom_attributes={"steel:adhesion": adhesion})
    builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(mu=mu))
    if ground_adhesion:
        model = builder.finalize(device="cpu")
        values = model.steel.adhesion.numpy()
        values[-1] = ground_adhesion  # the ground plane is the last shape
        model.steel.adhesion.assign(values)
        return model
    return builder.finalize(device="cpu")


class _Run:
    """Steps the cube under a constant applied force; ``step(n)`` returns the cube's position."""

    def __init__(self, model, **options):
        self.model = model
        self.solver = SolverSteel(model, **options)
        self.pipeline = newton.CollisionPipeline(model)
        self.contacts = self.pipeline.contacts()
        self.obs = self.solver.observables({"contact_f"}, contacts=self.contacts)
        self.s0, self.s1 = model.state(), model.state()
        self.force = np.zeros(3)
        self.weight = float(model.body_mass.numpy()[0]) * G

    def step(self, n):
        for _ in range(n):
            self.pipeline.collide(self.s0, self.contacts)
            self.s0.body_f.assign(np.array([[*self.force, 0.0, 0.0, 0.0]], dtype=np.float32))
            self.solver.step(self.s0, self.s1, None, self.contacts, DT, observables=self.obs)
            self.s0, self.s1 = self.s1, self.s0
        return self.s0.body_q.numpy()[0, :3].copy()

    def contact_count(self):
        return int(self.contacts.rigid_contact_count.numpy()[0])

    def net_contact_force(self):
        return self.obs.contact_f.numpy()[:self.contact_count(), :3].sum(axis=0)


# The cube as MJCF, for MuJoCo and for Newton's importer (which reads geom adhesion into steel:adhesion).
MJCF = f"""<mujoco><option timestep="{DT}" cone="elliptic"/>
<worldbody><geom type="plane" size="5 5 .1"/>
<body pos="0 0 0.1"><freejoint/>
<geom type="box" size=".1 .1 .1" density="100" adhesion="{A}" margin="{GAP}" gap="{GAP}"/></body>
</worldbody></mujoco>"""


def _mujoco_height_after_pull(pull, seconds=1.0, settle=0.5):
    """MuJoCo's cube (geom adhesion A) settled, then pulled up with ``pull`` [N]: its final height [m]."""
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_string(MJCF)
    d = mujoco.MjData(m)
    for i in range(round((settle + seconds) / DT)):
        d.xfrc_applied[1, 2] = pull if i * DT >= settle else 0.0
        mujoco.mj_step(m, d)
    return float(d.qpos[2])


@pytest.mark.parametrize("fraction, held", [(0.99, True), (1.01, False)])
def test_pull_off_force_is_contact_points_times_adhesion_plus_weight(fraction, held, tmp_path, monkeypatch):
    """Pulled up with fraction x (n A + W): held below 1, gone above, as MuJoCo's geom adhesion."""
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its solver warnings to MUJOCO_LOG.TXT in the working directory
    run = _Run(_cube())
    run.step(1)
    n = run.contact_count()
    assert n == 4
    pull = fraction * (n * A + run.weight)
    run.force[2] = pull
    z = run.step(240)[2]
    mj = _mujoco_height_after_pull(pull)
    if held:
        assert z == pytest.approx(0.1, abs=1e-4)
        # contact_f is the force on the plane: the cube pulls it up with the net F - W.
        np.testing.assert_allclose(run.net_contact_force(), [0.0, 0.0, pull - run.weight], atol=0.02 * pull)
        assert mj < 0.1 + 2.0 * GAP  # MuJoCo's cube rests on its 2 cm margin
    else:
        assert z > 0.5
        assert mj > 0.5


@pytest.mark.parametrize("fraction, held", [(0.99, True), (1.01, False)])
def test_a_pair_pulls_with_the_sum_of_its_shapes_adhesion(fraction, held):
    """Adhesion split between the cube (3 N) and the ground (2 N): a contact pulls with their sum, 5 N, so
    the cube is held at 0.99 (4 A + W) and gone at 1.01 (4 A + W), as with 5 N on the cube alone."""
    run = _Run(_cube(adhesion=3.0, ground_adhesion=2.0))
    run.step(1)
    assert run.contact_count() == 4
    run.force[2] = fraction * (4 * A + run.weight)
    z = run.step(240)[2]
    assert (z == pytest.approx(0.1, abs=1e-4)) if held else z > 0.5


@pytest.mark.parametrize("fraction, held", [(0.99, True), (1.01, False)])
def test_imported_mjcf_adhesion_pulls_off_as_in_mujoco(fraction, held):
    """The same MJCF through Newton's importer: steel:adhesion = A, and the pull-off is n A + W again.

    Its margin (shape_margin 2 cm) makes the cube rest 2 cm up, as in MuJoCo.
    """
    builder = newton.ModelBuilder()
    SolverSteel.register_custom_attributes(builder)
    builder.add_mjcf(MJCF)
    model = builder.finalize(device="cpu")
    assert sorted(model.steel.adhesion.numpy().tolist()) == [0.0, A]
    run = _Run(model)
    z_rest = run.step(60)[2]
    assert z_rest == pytest.approx(0.1 + GAP, abs=1e-3)
    run.force[2] = fraction * (run.contact_count() * A + run.weight)
    z = run.step(240)[2]
    if held:
        assert z == pytest.approx(z_rest, abs=1e-4)
    else:
        assert z > 0.5


@pytest.mark.parametrize("fraction, slides", [(0.95, False), (1.05, True)])
def test_friction_budget_includes_the_pull(fraction, slides):
    """Pushed sideways with fraction x mu (W + n A): it sticks below 1 and slides above."""
    run = _Run(_cube(mu=0.5))
    run.step(1)
    run.force[0] = fraction * 0.5 * (run.weight + run.contact_count() * A)
    x = run.step(240)[0]
    if slides:
        assert x > 0.05
    else:
        assert abs(x) < 1e-4


@pytest.mark.parametrize("adhesion", [A, 0.0])
def test_within_the_gap_bodies_attract(adhesion):
    """A weightless cube (pushed up with W) 1 cm above the plane, inside its 2 cm gap: pulled onto it with adhesion."""
    run = _Run(_cube(z=0.11, adhesion=adhesion))
    run.force[2] = run.weight
    z = run.step(120)[2]
    if adhesion > 0.0:
        assert z == pytest.approx(0.1, abs=1e-4)
    else:
        assert z == pytest.approx(0.11, abs=1e-4)


def test_writing_zero_releases_and_the_value_engages_again():
    """Pulled with W + 2 A: held; adhesion set to 0: it rises; set back within the gap: pulled down and held again."""
    model = _cube()
    run = _Run(model)
    run.force[2] = run.weight + 2.0 * A
    assert run.step(60)[2] == pytest.approx(0.1, abs=1e-4)
    model.steel.adhesion.fill_(0.0)
    z = run.step(3)[2]
    assert 0.1001 < z < 0.1 + GAP  # released, still within the gap
    model.steel.adhesion.fill_(A)
    assert run.step(60)[2] == pytest.approx(0.1, abs=1e-4)


@pytest.mark.parametrize("option", [{"enable_sleeping": True}, {"contact_compliance": True},
                                    {"contact_regularization": 0.1}])
def test_adhesion_refuses_the_options_the_seed_excludes(option):
    with pytest.raises(NotImplementedError):
        SolverSteel(_cube(), **option)
