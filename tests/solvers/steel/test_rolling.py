"""A sphere rolling on the ground: no rolling resistance at condim 3, the classic 5/7 law, and condim 6.

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

condim 6 adds rolling friction, MuJoCo's law: a torque opposing the relative angular velocity about
the contact tangents, bounded by mu_r N with mu_r [m] the shape's rolling coefficient and no radius
factor. Rolling without slipping, (I + m R^2) dw/dt = -mu_r m g, so the ball decelerates at
a = 5 mu_r g / (7 R) (0.7007 m/s^2 for mu_r = 0.01 m, R = 0.1 m), stops at t = v0 / a = 1.427 s
after x = v0^2 / (2 a) = 0.7136 m, and the rolling pair then holds it. Measured: a = 0.7006 m/s^2,
stop at 1.429 s (the first step below 1e-3 m/s), 0.7114 m (semi-implicit Euler lands v0 dt / 2 =
2.1 mm short). MuJoCo 3.17 condim 6 (elliptic cone, friction "1 0.005 0.01"): 0.698 m/s^2 over
the same interval; its soft rolling constraint then creeps to rest at 0.7206 m.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

DT = 1.0 / 240.0
G = 9.81
R = 0.1  # [m]
V0 = 1.0  # [m/s]


MU_T = 0.005  # [m] torsional coefficient of the condim-6 ball
MU_R = 0.01  # [m] rolling coefficient of the condim-6 ball


def _ball(mu=1.0, condim=3):
    builder = newton.ModelBuilder()
    SolverSteel.register_custom_attributes(builder)
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, R), wp.quat_identity()),
                            custom_attributes={"steel:rigid_body_angular_damping": 0.0})
    cfg = newton.ModelBuilder.ShapeConfig(mu=mu, density=1000.0, mu_torsional=MU_T, mu_rolling=MU_R)
    builder.add_shape_sphere(body, radius=R, cfg=cfg, custom_attributes={"steel:condim": condim})
    builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(mu=mu))
    return builder.finalize(device="cpu")


def _roll(model, spin, seconds, **options):
    """Launch at V0 along +x with spin ``spin`` [rad/s] about +y; per step (v, omega R, x) over ``seconds``."""
    solver = SolverSteel(model, **options)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    qd = s0.joint_qd.numpy()
    qd[0] = V0  # free joint: linear then angular velocity
    qd[4] = spin
    s0.joint_qd.assign(qd)
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    trace = []
    for _ in range(round(seconds / DT)):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        qd = s0.joint_qd.numpy()
        trace.append((float(qd[0]), float(qd[4]) * R, float(s0.joint_q.numpy()[0])))
    assert not solver.constraint_overflow.numpy().any()
    return np.array(trace)


def _mujoco(spin, seconds, condim=3, friction="1 0 0"):
    """The same launch in MuJoCo (elliptic cone): per step (v, x)."""
    mujoco = pytest.importorskip("mujoco")
    xml = f"""<mujoco><option timestep="{DT}" cone="elliptic"/>
    <worldbody><geom type="plane" size="5 5 .1" condim="{condim}" friction="{friction}"/>
    <body pos="0 0 {R}"><freejoint/>
    <geom type="sphere" size="{R}" density="1000" condim="{condim}" friction="{friction}"/></body>
    </worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qvel[0] = V0
    d.qvel[4] = spin
    trace = []
    for _ in range(round(seconds / DT)):
        mujoco.mj_step(m, d)
        trace.append((float(d.qvel[0]), float(d.qpos[0])))
    return np.array(trace)


@pytest.mark.parametrize("beta", [None, 0.0])
def test_rolling_sphere_keeps_its_speed(beta, tmp_path, monkeypatch):
    """Rolling without slipping at V0: after 1 s, v and omega R within 1e-3 of V0 (anchors or point friction)."""
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its solver warnings to MUJOCO_LOG.TXT in the working directory
    v, wr, _ = _roll(_ball(), V0 / R, 1.0, friction_anchor_beta=beta)[-1]
    assert v == pytest.approx(V0, abs=1e-3)
    assert wr == pytest.approx(V0, abs=1e-3)
    assert v == pytest.approx(_mujoco(V0 / R, 1.0)[-1, 0], abs=2e-3)


def test_sliding_sphere_ends_rolling_at_five_sevenths(tmp_path, monkeypatch):
    """Launched sliding without spin (mu 0.3: rolling after 2 v0 / (7 mu g) = 0.1 s): v = omega R = 5/7 V0 within 1e-3."""
    monkeypatch.chdir(tmp_path)
    v, wr, _ = _roll(_ball(mu=0.3), 0.0, 0.5)[-1]
    assert v == pytest.approx(5.0 / 7.0 * V0, abs=1e-3)
    assert wr == pytest.approx(v, abs=1e-3)
    assert v == pytest.approx(_mujoco(0.0, 0.5)[-1, 0], abs=2e-3)


def _deceleration(v):
    """Mean deceleration [m/s^2] between 0.25 s and 1.25 s from a per-step speed trace."""
    i, j = round(0.25 / DT) - 1, round(1.25 / DT) - 1
    return (v[i] - v[j]) / ((j - i) * DT)


def test_condim_6_ball_stops_where_rolling_friction_predicts(tmp_path, monkeypatch):
    """condim 6: deceleration within 1 % of 5 mu_r g / (7 R), stop time and distance within 1 % of
    v0 / a and v0^2 / (2 a), held at rest afterwards; deceleration within 2 % of MuJoCo condim 6."""
    monkeypatch.chdir(tmp_path)
    a = 5.0 * MU_R * G / (7.0 * R)
    trace = _roll(_ball(condim=6), V0 / R, 2.0)
    assert _deceleration(trace[:, 0]) == pytest.approx(a, rel=0.01)
    stop = int(np.argmax(trace[:, 0] < 1e-3))
    assert (stop + 1) * DT == pytest.approx(V0 / a, rel=0.01)
    assert trace[stop, 2] == pytest.approx(V0 * V0 / (2.0 * a), rel=0.01)
    assert np.abs(trace[stop:, :2]).max() < 1e-3  # the rolling pair holds it
    mj = _mujoco(V0 / R, 1.5, condim=6, friction=f"1 {MU_T} {MU_R}")
    assert _deceleration(trace[:, 0]) == pytest.approx(_deceleration(mj[:, 0]), rel=0.02)


def test_condim_4_ball_has_no_rolling_resistance():
    """condim 4 adds only the spin row: the same ball keeps rolling at V0."""
    v, wr, _ = _roll(_ball(condim=4), V0 / R, 0.5)[-1]
    assert v == pytest.approx(V0, abs=1e-3)
    assert wr == pytest.approx(V0, abs=1e-3)
