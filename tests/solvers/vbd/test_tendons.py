"""Routed tendons in SolverVBD's rigid AVBD solve (anchors, frictionless pinholes and rollers), against known answers.

Scenes: a 2 kg body hanging 1 m under a world anchor; an Atwood machine, 3 kg and 1 kg bodies 0.92 m and 1.08 m
under two world pinholes 1 m apart, joined by one tendon over them (a run of three spans). Newton's
The same pair over a frictionless world roller, and a movable pulley. ``newton.solvers.SolverVBD`` runs beside
ours where the docstrings give its figures.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD

from .rigid.scenes import run

G = 9.81
GUIDE = newton.TendonGuide
KIND = newton.TendonGuideType
_NO_COLLISION = newton.ModelBuilder.ShapeConfig(density=0.0, has_shape_collision=False)


def _body(b, x, z, m):
    body = b.add_body(xform=wp.transform((x, 0.0, z), wp.quat_identity()), mass=m,
                      inertia=wp.mat33(np.eye(3) * 1e-2))
    b.add_shape_sphere(body, radius=0.05, cfg=_NO_COLLISION)
    return body


def _hanging(compliance, damping=0.0, rest=1.0, m=2.0, tendon=True):
    b = newton.ModelBuilder()
    body = _body(b, 0.0, 0.0, m)  # at z = 0, under an anchor at z = 1: float32 poses fine (see _atwood)
    if tendon:
        b.add_tendon([GUIDE(body=-1, offset=(0.0, 0.0, 1.0)),
                      GUIDE(body=body, compliance=compliance, damping=damping, rest_length=rest)])
    b.color()
    return b.finalize(device="cpu")


def _atwood(m1=3.0, m2=1.0, colour=True, kind=KIND.PINHOLE):
    b = newton.ModelBuilder()
    # Heights about 0 keep float32 positions fine: near z = -1 the rounding of the pose biased even free fall by
    # 0.18 % at dt 1/600, and a hanging body stalled 1e-5 m off its rest (updates under half a unit in the last place).
    left, right = _body(b, -0.5, 0.08, m1), _body(b, 0.5, -0.08, m2)
    b.add_tendon([GUIDE(body=left), GUIDE(body=-1, guide_type=kind, offset=(-0.5, 0.0, 1.0)),
                  GUIDE(body=-1, guide_type=kind, offset=(0.5, 0.0, 1.0)), GUIDE(body=right)])
    if colour:
        b.color()
    return b.finalize(device="cpu")


def _run(model, solver, dt, steps, state=None, record=None):
    """Body COM heights [m] (or ``record(state)``) after each step, and the final state."""
    record = record or (lambda s: s.body_q.numpy()[:, 2].copy())
    state, out = run(model, solver, steps, dt, state=state, record=record)
    return np.array(out), state


def _acceleration(z, dt, skip):
    """Mean acceleration [m/s²] per body from the velocity change after ``skip`` steps (finite differences)."""
    v = np.diff(z, axis=0) / dt
    return (v[-1] - v[skip]) / (dt * (v.shape[0] - 1 - skip))


@pytest.mark.parametrize("dt", [1.0 / 240.0, 1.0 / 600.0])
def test_hanging_mass_stretches_by_weight_times_compliance_for_any_dt(dt):
    """A 2 kg body on a 1e-3 m/N span with damping 20 N·s/m rests m g c = 19.62 mm below the rest length, within
    rtol 4e-5 (measured 1.2e-7 at dt 1/240, 1.3e-5 at 1/600), its run tension m g within rtol 4.5e-5 (measured 3e-6,
    1.5e-5). Newton's SolverVBD rests at the same pose within 1e-6 m (measured 2.6e-8 m, 3.4e-7 m)."""
    model = _hanging(1e-3, damping=20.0)
    solver = SolverVBD(model)
    steps = int(3.0 / dt)
    z, _ = _run(model, solver, dt, steps)
    stretch = -z[-1, 0]
    np.testing.assert_allclose(stretch, 2.0 * G * 1e-3, rtol=4e-5)
    np.testing.assert_allclose(solver.rigid.tendons.tensions()[0], 2.0 * G, rtol=4.5e-5)
    z_ref, _ = _run(model, newton.solvers.SolverVBD(model), dt, steps)
    np.testing.assert_allclose(z[-1, 0], z_ref[-1, 0], atol=1e-6)


def test_inextensible_span_holds_its_rest_length():
    """Zero compliance (taken as 1e-8 m/N, a stretch of 2e-7 m under m g): the 2 kg body stays within 1e-6 m of the
    1 m rest length for 2 s (measured 4.1e-7 m), with tension m g within rtol 4e-4 (measured 1.4e-4)."""
    model = _hanging(0.0)
    solver = SolverVBD(model)
    z, _ = _run(model, solver, 1.0 / 240.0, 480)
    assert np.abs(z[:, 0]).max() < 1e-6
    np.testing.assert_allclose(solver.rigid.tendons.tensions()[0], 2.0 * G, rtol=4e-4)


def test_slack_tendon_exerts_no_force():
    """A body 1 m under an anchor on a 1.5 m tendon falls as the same body without a tendon (bitwise; both within
    3e-6 m of z0 - g dt² n(n+1)/2, measured 9.2e-7 m: float32 velocities from positions) until the tendon is taut,
    with zero tension; then the tendon catches it (lowest 0.537 m under the start)."""
    model = _hanging(1e-4, rest=1.5)
    solver = SolverVBD(model)
    dt = 1.0 / 240.0
    n = np.arange(1, 61)
    z, _ = _run(model, solver, dt, 60)  # 0.25 s: 0.31 m of fall, still slack
    free = _hanging(1e-4, tendon=False)
    z_free, _ = _run(free, SolverVBD(free), dt, 60)
    np.testing.assert_array_equal(z, z_free)
    np.testing.assert_allclose(z[:, 0], -G * dt * dt * n * (n + 1) / 2.0, atol=3e-6)
    assert solver.rigid.tendons.tensions()[0] == 0.0
    z, _ = _run(model, solver, dt, 240)
    assert -0.6 < z[:, 0].min() < -0.5  # caught 1.5 m under the anchor, a little lower: an undamped span


@pytest.mark.parametrize("dt", [1.0 / 240.0, 1.0 / 600.0])
def test_atwood_machine_accelerates_at_the_analytic_rate_with_equal_tension(dt):
    """3 kg and 1 kg over two frictionless pinholes: a = (m1 - m2)/(m1 + m2) g = 4.905 m/s² within rtol 7e-4 for each
    body (measured 7e-5 at dt 1/240, 2.4e-4 at 1/600, from 0.05 s to 0.25 s); the tension read from each side's
    motion, m1 (g - a1) and m2 (g + a2), equals 2 m1 m2 g/(m1 + m2) = 14.715 N within rtol 7e-4 on both sides
    (measured 2.4e-4 at most), and so does the solver's run tension averaged over those steps (measured 1e-4; step by
    step it scatters by up to 0.8 %: an inextensible run's tension is k times a float32 length). The material
    passes through the pinholes: the spans' rest lengths still sum to 3 m (1e-5 m) while 0.15 m moved to the heavy
    side. Newton's SolverVBD holds the frictionless pinholes nearly fixed: 0.050 m/s² at dt 1/240 and 0.234 m/s² at
    1/600 (asserted within a factor 3)."""
    model = _atwood()
    solver = SolverVBD(model)
    steps, skip = int(0.25 / dt), int(0.05 / dt)
    out, s0 = _run(model, solver, dt, steps,
                   record=lambda s: (*s.body_q.numpy()[:, 2], solver.rigid.tendons.tensions()[0]))
    z, tension = out[:, :2], out[:, 2]
    a = _acceleration(z, dt, skip)
    a_exact = 2.0 / 4.0 * G
    np.testing.assert_allclose(a, [-a_exact, a_exact], rtol=7e-4)
    exact = 2.0 * 3.0 * 1.0 * G / 4.0
    np.testing.assert_allclose([3.0 * (G + a[0]), 1.0 * (G + a[1])], exact, rtol=7e-4)
    np.testing.assert_allclose(np.mean(tension[skip:]), exact, rtol=7e-4)
    rest = s0.tendon_segment_rest_length.numpy()
    np.testing.assert_allclose(rest.sum(), 3.0, atol=1e-5)
    assert rest[0] > 0.92 + 0.14 and rest[2] < 1.08 - 0.14  # material passed from the light side to the heavy one
    z_ref, _ = _run(model, newton.solvers.SolverVBD(model), dt, steps)
    a_ref = -_acceleration(z_ref, dt, skip)[0]
    measured = 0.050 if dt > 1.0 / 300.0 else 0.234
    assert measured / 3.0 < a_ref < measured * 3.0


def test_tendon_rows_are_the_same_under_compliant_alm():
    """rigid_compliant_alm=True changes joints and contacts only: the Atwood pair moves bitwise as with the default."""
    model = _atwood()
    default, _ = _run(model, SolverVBD(model), 1.0 / 240.0, 60)
    compliant, _ = _run(model, SolverVBD(model, rigid_compliant_alm=True), 1.0 / 240.0, 60)
    np.testing.assert_array_equal(compliant, default)


def test_reset_restores_tendon_material_and_reruns_bitwise():
    """After 60 Atwood steps, reset puts the bodies back, the spans' rest lengths to their initial 0.92, 1 and
    1.08 m and the tension to zero; the rerun repeats the first run bitwise."""
    model = _atwood()
    solver = SolverVBD(model)
    dt = 1.0 / 240.0
    first, state = _run(model, solver, dt, 60)
    initial = np.array([0.92, 1.0, 1.08])
    assert not np.allclose(state.tendon_segment_rest_length.numpy(), initial, atol=1e-3)
    solver.reset(state)
    np.testing.assert_allclose(state.tendon_segment_rest_length.numpy(), initial, atol=1e-6)
    assert solver.rigid.tendons.tensions()[0] == 0.0
    again, _ = _run(model, solver, dt, 60, state)
    np.testing.assert_array_equal(again, first)


def test_reset_of_one_world_restores_only_its_tendons():
    """Two replicated Atwood pairs: reset with a mask selecting world 1 restores its spans' rest lengths and zeroes its
    tension; world 0 keeps its moved material and tension."""
    source = newton.ModelBuilder()
    left, right = _body(source, -0.5, 0.08, 3.0), _body(source, 0.5, -0.08, 1.0)
    source.add_tendon([GUIDE(body=left), GUIDE(body=-1, guide_type=KIND.PINHOLE, offset=(-0.5, 0.0, 1.0)),
                       GUIDE(body=-1, guide_type=KIND.PINHOLE, offset=(0.5, 0.0, 1.0)), GUIDE(body=right)])
    b = newton.ModelBuilder()
    b.replicate(source, 2)
    b.color()
    model = b.finalize(device="cpu")
    solver = SolverVBD(model)
    _, state = _run(model, solver, 1.0 / 240.0, 30)
    moved = state.tendon_segment_rest_length.numpy().copy()
    tension = solver.rigid.tendons.tensions()
    solver.reset(state, world_mask=wp.array([False, True, False], dtype=wp.bool, device="cpu"))
    rest = state.tendon_segment_rest_length.numpy()
    np.testing.assert_array_equal(rest[:3], moved[:3])
    np.testing.assert_allclose(rest[3:], [0.92, 1.0, 1.08], atol=1e-6)
    assert not np.allclose(moved[3:], [0.92, 1.0, 1.08], atol=1e-3)
    np.testing.assert_array_equal(solver.rigid.tendons.tensions(), [tension[0], 0.0])


def test_state_rest_length_reels_the_tendon_in():
    """Shortening the State's rest length (the material it carries) lifts an inextensible hanging body to it:
    0.8 m within 7e-7 m (measured 2.4e-7) after 2 s with damping 50 N·s/m."""
    model = _hanging(0.0, damping=50.0)
    solver = SolverVBD(model)
    _, s0 = _run(model, solver, 1.0 / 240.0, 10)
    s0.tendon_segment_rest_length.assign(np.array([0.8], np.float32))
    z, _ = _run(model, solver, 1.0 / 240.0, 480, s0)
    np.testing.assert_allclose(1.0 - z[-1, 0], 0.8, atol=7e-7)


def test_tendon_properties_notify_refreshes_compliance():
    """Compliance edited in the model acts after notify_model_changed(TENDON_PROPERTIES): 1e-3 -> 2e-3 m/N doubles
    the static stretch (rtol 2.5e-5, measured 7.6e-6)."""
    model = _hanging(1e-3, damping=20.0)
    solver = SolverVBD(model)
    z1, s0 = _run(model, solver, 1.0 / 240.0, 600)
    model.tendon_segment_compliance.assign(np.array([2e-3], np.float32))
    solver.notify_model_changed(newton.ModelFlags.TENDON_PROPERTIES)
    z2, _ = _run(model, solver, 1.0 / 240.0, 720, s0)
    np.testing.assert_allclose(-z2[-1, 0], 2.0 * (-z1[-1, 0]), rtol=2.5e-5)


def test_tendon_properties_notify_rebuilds_the_route():
    """The Atwood pair tied to two world anchors hangs still (1e-6 m over 0.1 s); its guides turned into pinholes
    in the model, notify_model_changed(TENDON_PROPERTIES) joins the spans into one run and the pair accelerates
    (the heavy side 2 cm down in the next 0.1 s, free of the pinholes' 4.905 m/s²: 2.45 cm)."""
    model = _atwood(kind=KIND.ANCHOR)
    solver = SolverVBD(model)
    z, state = _run(model, solver, 1.0 / 240.0, 24)
    assert np.abs(z - z[0]).max() < 1e-6
    model.tendon_guide_type.assign(np.array([KIND.ANCHOR, KIND.PINHOLE, KIND.PINHOLE, KIND.ANCHOR], np.int32))
    solver.notify_model_changed(newton.ModelFlags.TENDON_PROPERTIES)
    z, _ = _run(model, solver, 1.0 / 240.0, 24, state)
    assert z[-1, 0] < 0.08 - 0.02 and z[-1, 1] > -0.08 + 0.02


def test_colouring_must_separate_span_endpoints():
    """Bodies coloured before add_tendon share a colour across a span: ValueError naming builder.color()."""
    b = newton.ModelBuilder()
    left, right = _body(b, -0.5, -1.0, 1.0), _body(b, 0.5, -1.0, 1.0)
    b.color()
    b.add_tendon([GUIDE(body=left), GUIDE(body=right)])
    with pytest.raises(ValueError, match="color"):
        SolverVBD(b.finalize(device="cpu"))


def test_colouring_must_separate_a_dynamic_rollers_bypass_ends():
    """A dynamic world roller between two bodies coloured alike (color() before add_tendon): its bypass span would
    join them, so ValueError, as the reference's."""
    b = newton.ModelBuilder()
    left, right = _body(b, -0.5, -1.0, 1.0), _body(b, 0.5, -1.0, 1.0)
    b.color()
    b.add_tendon([GUIDE(body=left), GUIDE(body=-1, guide_type=KIND.ROLLER, radius=0.1, axis=(0.0, 1.0, 0.0),
                                          dynamic=True), GUIDE(body=right)])
    with pytest.raises(ValueError, match="color"):
        SolverVBD(b.finalize(device="cpu"))


def test_run_partners_never_share_a_parallel_pass():
    """Newton's colouring puts the Atwood bodies (no span between them) in one colour; the solve splits it."""
    model = _atwood()
    colours = [set(g.numpy().tolist()) for g in model.body_color_groups]
    assert any({0, 1} <= c for c in colours)
    solver = SolverVBD(model)
    assert all(not {0, 1} <= set(g.numpy().tolist()) for g in solver.rigid.groups)


@pytest.mark.parametrize("guide, what", [
    (GUIDE(body=-1, guide_type=KIND.ROLLER, radius=0.5, axis=(0.0, 1.0, 0.0), mu=0.3), "friction at tendon ROLLER"),
    (GUIDE(body=-1, guide_type=KIND.PINHOLE, mu=0.3), "friction at tendon PINHOLE"),
])
def test_unbuilt_tendon_guides_are_refused(guide, what):
    """Roller friction (capstans, rolling, motorized pulleys) and pinhole friction raise NotImplementedError naming
    them."""
    b = newton.ModelBuilder()
    left, right = _body(b, -0.5, -1.0, 1.0), _body(b, 0.5, -1.0, 1.0)
    b.add_tendon([GUIDE(body=left), guide, GUIDE(body=right)])
    b.color()
    with pytest.raises(NotImplementedError, match=what):
        SolverVBD(b.finalize(device="cpu"))


@pytest.mark.parametrize("route, what", [
    ("end", "tendon ROLLER guides at a route's end"),
    ("pair", "spans between two tendon ROLLER guides"),
])
def test_unbuilt_roller_placements_are_refused(route, what):
    """A roller ending a route, or two rollers in a row (tangents on both ends of a span), raise NotImplementedError."""
    b = newton.ModelBuilder()
    left, right = _body(b, -0.5, -1.0, 1.0), _body(b, 0.5, -1.0, 1.0)
    roller = {"guide_type": KIND.ROLLER, "radius": 0.1, "axis": (0.0, 1.0, 0.0)}
    if route == "end":
        b.add_tendon([GUIDE(body=left), GUIDE(body=right, **roller)])
    else:
        b.add_tendon([GUIDE(body=left), GUIDE(body=-1, offset=(-0.5, 0.0, 0.0), **roller),
                      GUIDE(body=-1, offset=(0.5, 0.0, 0.0), **roller), GUIDE(body=right)])
    b.color()
    with pytest.raises(NotImplementedError, match=what):
        SolverVBD(b.finalize(device="cpu"))


def _past_dynamic_roller(x_roller, x_body):
    """A 2 kg body hung at (x_body, 0, 0) from a world anchor 1 m up, past a dynamic world roller (radius 0.1 m,
    centre (x_roller, 0, 0.5), axis y) winding on its -x side; two spans of 5e-4 m/N and 40 N·s/m (in series the
    hanging tendon's 1e-3 m/N and 20 N·s/m)."""
    b = newton.ModelBuilder()
    body = _body(b, x_body, 0.0, 2.0)
    b.add_tendon([GUIDE(body=-1, offset=(0.0, 0.0, 1.0)),
                  GUIDE(body=-1, guide_type=KIND.ROLLER, radius=0.1, axis=(0.0, 1.0, 0.0), orientation=-1,
                        offset=(x_roller, 0.0, 0.5), dynamic=True, compliance=5e-4, damping=40.0),
                  GUIDE(body=body, compliance=5e-4, damping=40.0)])
    b.color()
    return b.finalize(device="cpu")


def test_dynamic_roller_is_bypassed_while_the_cable_misses_it():
    """The vertical cable passes 0.2 m from the roller's winding side: the roller is disengaged (guide inactive) and
    the body hangs as on the straight tendon, within 4e-7 m (measured 1.1e-7)."""
    model = _past_dynamic_roller(0.3, 0.0)
    z, state = _run(model, SolverVBD(model), 1.0 / 240.0, 480)
    straight = _hanging(1e-3, damping=20.0)
    z_straight, _ = _run(straight, SolverVBD(straight), 1.0 / 240.0, 480)
    np.testing.assert_allclose(z, z_straight, atol=4e-7)
    assert state.tendon_guide_active.numpy().tolist() == [True, False, True]


def test_dynamic_roller_engages_when_the_cable_presses_on_it():
    """The roller straddles the straight line: the cable wraps its -x side (guide active) and the body, started under
    the roller's leftmost point, hangs there (x within 1e-5 m of -0.05, measured 0; bypassed, the slanted cable
    would swing it toward 0) with tension m g (rtol 1e-5, measured 3e-6)."""
    model = _past_dynamic_roller(0.05, -0.05)
    solver = SolverVBD(model)
    _, state = _run(model, solver, 1.0 / 240.0, 480)
    assert state.tendon_guide_active.numpy().tolist() == [True, True, True]
    np.testing.assert_allclose(state.body_q.numpy()[0, 0], -0.05, atol=1e-5)
    np.testing.assert_allclose(solver.rigid.tendons.tensions()[0], 2.0 * G, rtol=1e-5)


def test_guide_flags_other_than_dynamic_are_refused():
    """A guide flag bit this solver does not know (set in the model after building) raises NotImplementedError."""
    model = _hanging(1e-3)
    model.tendon_guide_flags.assign(np.array([0, 2], np.int32))
    with pytest.raises(NotImplementedError, match="tendon guide flags other than DYNAMIC"):
        SolverVBD(model)


def test_tendons_with_an_external_rigid_solver_are_refused():
    """Another solver moving the bodies would drop the tendon's forces: NotImplementedError naming it."""
    with pytest.raises(NotImplementedError, match="routed tendons with integrate_with_external_rigid_solver"):
        SolverVBD(_hanging(1e-3), integrate_with_external_rigid_solver=True)


def _over_roller(orientation=1):
    """The Atwood pair under a frictionless world roller (radius 0.5 m, centre 1 m up, axis y) instead of pinholes."""
    b = newton.ModelBuilder()
    left, right = _body(b, -0.5, 0.08, 3.0), _body(b, 0.5, -0.08, 1.0)
    b.add_tendon([GUIDE(body=left), GUIDE(body=-1, guide_type=KIND.ROLLER, radius=0.5, axis=(0.0, 1.0, 0.0),
                                          offset=(0.0, 0.0, 1.0), orientation=orientation), GUIDE(body=right)])
    b.color()
    return b.finalize(device="cpu")


def test_atwood_machine_over_a_frictionless_roller():
    """Over the top of a frictionless world roller (orientation +1 about +y): the tangent points on the roller after
    the first step are the reference's (within 1e-6 m, measured 1.2e-7); a = 4.905 m/s² within rtol 7e-4 (measured
    1.0e-4) with the tension 14.715 N (mean, rtol 7e-4, measured 9.4e-5); the spans' material sums to 2 m (1e-5 m)
    with pi/2 m lying on the roller. Newton's SolverVBD accelerates at 0.061 m/s² (asserted within a factor 3)."""
    model = _over_roller()
    dt = 1.0 / 240.0
    solver = SolverVBD(model)
    steps, skip = int(0.25 / dt), int(0.05 / dt)
    reference = newton.solvers.SolverVBD(model)  # its tangent points (world) after one step
    reference.step(model.state(), model.state(), None, None, dt)
    _, state = _run(model, solver, dt, 1)  # ours in the roller's frame: the world's
    np.testing.assert_allclose(state.tendon_segment_attachment_r_local.numpy()[0],
                               reference.tendon_segment_attachment_r.numpy()[0], atol=1e-6)
    np.testing.assert_allclose(state.tendon_segment_attachment_l_local.numpy()[1],
                               reference.tendon_segment_attachment_l.numpy()[1], atol=1e-6)
    solver = SolverVBD(model)
    out, s0 = _run(model, solver, dt, steps,
                   record=lambda s: (*s.body_q.numpy()[:, 2], solver.rigid.tendons.tensions()[0]))
    a = _acceleration(out[:, :2], dt, skip)
    np.testing.assert_allclose(a, [-G / 2.0, G / 2.0], rtol=7e-4)
    np.testing.assert_allclose(np.mean(out[skip:, 2]), 1.5 * G, rtol=7e-4)
    np.testing.assert_allclose(s0.tendon_segment_rest_length.numpy().sum(), 2.0, atol=1e-5)
    z_ref, _ = _run(model, newton.solvers.SolverVBD(model), dt, steps)
    a_ref = -_acceleration(z_ref, dt, skip)[0]
    assert 0.061 / 3.0 < a_ref < 0.061 * 3.0


def test_movable_pulley_halves_the_load():
    """A 2 kg pulley (radius 0.3 m) hanging in a loop of cable from two world anchors 0.8 m apart (orientation -1:
    under it), spans 1e-4 m/N with damping 20 N·s/m: at rest each strand carries m g / (2 cos a), a the strand's
    angle from vertical, within rtol 3e-4 (measured 9.1e-5), and the pulley sits centred (1e-6 m)."""
    b = newton.ModelBuilder()
    pulley = _body(b, 0.0, 0.0, 2.0)
    b.add_tendon([GUIDE(body=-1, offset=(-0.4, 0.0, 1.0)),
                  GUIDE(body=pulley, guide_type=KIND.ROLLER, radius=0.3, axis=(0.0, 1.0, 0.0), orientation=-1,
                        compliance=1e-4, damping=20.0),
                  GUIDE(body=-1, offset=(0.4, 0.0, 1.0), compliance=1e-4, damping=20.0)])
    b.color()
    model = b.finalize(device="cpu")
    solver = SolverVBD(model)
    _, state = _run(model, solver, 1.0 / 240.0, 720)
    pose = state.body_q.numpy()[0]
    tangent = state.tendon_segment_attachment_r_local.numpy()[0] + pose[:3]  # no rotation: the pulley is frictionless
    strand = np.array([-0.4, 0.0, 1.0]) - tangent
    cos_a = strand[2] / np.linalg.norm(strand)
    np.testing.assert_allclose(solver.rigid.tendons.tensions()[0], 2.0 * G / (2.0 * cos_a), rtol=3e-4)
    assert abs(pose[0]) < 1e-6
