"""steel:condim 4: torsional friction of free-body contacts against the analytic stop time and MuJoCo.

A box spinning on the ground about the vertical with sliding friction off decelerates under the
torque mu_t m g (MuJoCo's torsional friction: a length [m] times the normal load), so it stops at
t = w0 I / (mu_t m g). The default 0.05 1/s angular damping of free bodies makes it stop slightly
early (measured 0.671 s against 0.680 s, -1.3 %); MuJoCo 3.17 on the same MJCF (elliptic cone, soft
contacts) stops at 0.696 s (+2.4 %).
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

G = 9.81
DT = 1.0 / 240.0
MU_T = 0.002  # [m]
W0 = 2.0  # [rad/s]


def _spinning_box(condim=4, mu_torsional=MU_T, angular_damping=None):
    builder = newton.ModelBuilder()
    SolverSteel.register_custom_attributes(builder)
    attributes = None if angular_damping is None else {"steel:rigid_body_angular_damping": angular_damping}
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.1), wp.quat_identity()),
                            custom_attributes=attributes)
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1,
                          cfg=newton.ModelBuilder.ShapeConfig(mu=0.0, mu_torsional=mu_torsional, density=1000.0),
                          custom_attributes={"steel:condim": condim})
    builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(mu=0.0, mu_torsional=0.0))
    return builder.finalize(device="cpu")


def _stop_time(model, max_time, spins=None):
    """Seconds until the spin falls below 1e-3 rad/s (``inf`` if it never does within ``max_time``); the spin
    after each step [rad/s] is appended to ``spins`` when given."""
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    qd = s0.joint_qd.numpy()
    qd[5] = W0  # free joint: linear then angular velocity
    s0.joint_qd.assign(qd)
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    for i in range(int(max_time / DT)):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        if spins is not None:
            spins.append(float(s0.joint_qd.numpy()[5]))
        if abs(float(s0.joint_qd.numpy()[5])) < 1.0e-3:
            return (i + 1) * DT, s0
    return float("inf"), s0


def _analytic(model):
    mass = float(model.body_mass.numpy()[0])
    inertia = float(model.body_inertia.numpy()[0][2, 2])
    return W0 * inertia / (MU_T * mass * G)


def _mujoco_stop_time():
    mujoco = pytest.importorskip("mujoco")
    xml = f"""<mujoco><option timestep="{DT}" cone="elliptic"/>
    <worldbody><geom type="plane" size="5 5 .1" condim="4" friction="0 0 0"/>
    <body pos="0 0 0.1"><freejoint/>
    <geom type="box" size=".1 .1 .1" density="1000" condim="4" friction="0 {MU_T} 0"/></body>
    </worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qvel[5] = W0
    for i in range(int(2.0 / DT)):
        mujoco.mj_step(m, d)
        if abs(d.qvel[5]) < 1.0e-3:
            return (i + 1) * DT
    return float("inf")


def test_spinning_box_stops_at_the_torsional_friction_time(tmp_path, monkeypatch):
    """Stop time within 5 % of w0 I / (mu_t m g) and within 5 % of MuJoCo's condim 4; it stays put."""
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its solver warnings to MUJOCO_LOG.TXT in the working directory
    model = _spinning_box()
    t_analytic = _analytic(model)
    t_stop, state = _stop_time(model, 1.5 * t_analytic)
    assert t_stop == pytest.approx(t_analytic, rel=0.05)
    assert t_stop == pytest.approx(_mujoco_stop_time(), rel=0.05)
    np.testing.assert_allclose(state.body_q.numpy()[0, :3], [0.0, 0.0, 0.1], atol=1e-4)


def test_spin_falls_by_the_torsional_friction_torque_each_step():
    """Without angular damping the spin falls by alpha dt per step, alpha = mu_t m g / I = 2.943 rad/s^2 (120
    steps, 0.5 s): measured within 8e-5 relative of alpha dt n, tolerance 2.5e-4 relative (a torsional
    coefficient 3 % off is 3e-2 off)."""
    model = _spinning_box(angular_damping=0.0)
    spins = []
    _stop_time(model, 0.5, spins)
    alpha = W0 / _analytic(model)  # mu_t m g / I [rad/s^2]
    n = np.arange(1, len(spins) + 1)
    np.testing.assert_allclose(W0 - np.array(spins), alpha * DT * n, rtol=2.5e-4)


def test_condim_3_has_no_torsion():
    """The same box with condim 3 keeps spinning (only the 0.05 1/s angular damping slows it)."""
    model = _spinning_box(condim=3)
    t_stop, state = _stop_time(model, 0.5)
    assert t_stop == float("inf")
    assert float(state.joint_qd.numpy()[5]) == pytest.approx(W0 * (1.0 - 0.05 * DT) ** 120, rel=1e-3)
