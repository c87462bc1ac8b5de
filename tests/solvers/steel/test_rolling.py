"""A sphere rolling on the ground: no rolling resistance at condim 3, and the classic 5/7 law.

A solid sphere (I = 2/5 m R^2) rolling without slipping has a contact point at rest, so Coulomb
friction does no work and its speed stays v0. Launched sliding at v0 with no spin, friction mu m g
decelerates it and spins it up until v = omega R, which happens at v = 5/7 v0 whatever mu is
(angular momentum about the contact point is conserved). The body's default 0.05 1/s angular
damping is set to 0 here so that these are the whole answers.

Measured at dt = 1/240 s with the default friction anchors: rolling keeps 1.000 m/s to 3e-4 over
1 s (a rolling contact re-anchors each step; anchors left on the material points it rolled away
from braked it to 0.77 m/s in 1 s), and the sliding launch ends at 0.7142 m/s (5/7 = 0.7143).
MuJoCo 3.17 on the same MJCF (condim 3, elliptic cone) settles at 0.9995 and 0.7136 m/s; its soft
contact sinks the ball 0.37 mm and takes that much off at landing.
"""

import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

DT = 1.0 / 240.0
R = 0.1  # [m]
V0 = 1.0  # [m/s]


def _ball(mu=1.0):
    builder = newton.ModelBuilder()
    SolverSteel.register_custom_attributes(builder)
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, R), wp.quat_identity()),
                            custom_attributes={"steel:rigid_body_angular_damping": 0.0})
    builder.add_shape_sphere(body, radius=R, cfg=newton.ModelBuilder.ShapeConfig(mu=mu, density=1000.0))
    builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(mu=mu))
    return builder.finalize(device="cpu")


def _roll(model, spin, seconds, **options):
    """Launch at V0 along +x with spin ``spin`` [rad/s] about +y; return (v, omega R) after ``seconds``."""
    solver = SolverSteel(model, **options)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    qd = s0.joint_qd.numpy()
    qd[0] = V0  # free joint: linear then angular velocity
    qd[4] = spin
    s0.joint_qd.assign(qd)
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    for _ in range(round(seconds / DT)):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
    qd = s0.joint_qd.numpy()
    return float(qd[0]), float(qd[4]) * R


def _mujoco(spin, seconds):
    mujoco = pytest.importorskip("mujoco")
    xml = f"""<mujoco><option timestep="{DT}" cone="elliptic"/>
    <worldbody><geom type="plane" size="5 5 .1" condim="3" friction="1 0 0"/>
    <body pos="0 0 {R}"><freejoint/>
    <geom type="sphere" size="{R}" density="1000" condim="3" friction="1 0 0"/></body>
    </worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qvel[0] = V0
    d.qvel[4] = spin
    for _ in range(round(seconds / DT)):
        mujoco.mj_step(m, d)
    return float(d.qvel[0])


@pytest.mark.parametrize("beta", [None, 0.0])
def test_rolling_sphere_keeps_its_speed(beta, tmp_path, monkeypatch):
    """Rolling without slipping at V0: after 1 s, v and omega R within 1e-3 of V0 (anchors or point friction)."""
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its solver warnings to MUJOCO_LOG.TXT in the working directory
    v, wr = _roll(_ball(), V0 / R, 1.0, friction_anchor_beta=beta)
    assert v == pytest.approx(V0, abs=1e-3)
    assert wr == pytest.approx(V0, abs=1e-3)
    assert v == pytest.approx(_mujoco(V0 / R, 1.0), abs=2e-3)


def test_sliding_sphere_ends_rolling_at_five_sevenths(tmp_path, monkeypatch):
    """Launched sliding without spin (mu 0.3: rolling after 2 v0 / (7 mu g) = 0.1 s): v = omega R = 5/7 V0 within 1e-3."""
    monkeypatch.chdir(tmp_path)
    v, wr = _roll(_ball(mu=0.3), 0.0, 0.5)
    assert v == pytest.approx(5.0 / 7.0 * V0, abs=1e-3)
    assert wr == pytest.approx(v, abs=1e-3)
    assert v == pytest.approx(_mujoco(0.0, 0.5), abs=2e-3)
