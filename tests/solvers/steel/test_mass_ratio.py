"""Heavy-on-light stacks: the bottom-up shock pass holds them (sweep/shock.py); construction warns beyond the ratio the
sweep alone holds (sweep/mass_ratio.py)."""

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel
from steel.solvers.steel.sweep.mass_ratio import MASS_RATIO_PER_ITERATION

from .scenes import run


def box_stack(masses, offset=0.0):
    """0.2 m boxes of ``masses`` [kg] stacked on the ground, the first at the bottom, each ``offset`` [m] along x
    from the one below."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    for k, mass in enumerate(masses):
        body = builder.add_body(xform=wp.transform(wp.vec3(offset * k, 0.0, 0.1 + 0.2 * k), wp.quat_identity()))
        builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=newton.ModelBuilder.ShapeConfig(density=mass / 0.008))
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


def two_box_stack(ratio: float):
    """A 0.2 m box on the ground under a box ``ratio`` times heavier."""
    return box_stack((8.0, 8.0 * ratio))


def sink_and_hop(masses, shock=True, steps=240, offset=0.0):
    """Largest sink and rise of any box below/above its start over ``steps`` steps at dt 1/240 s [m]."""
    model = box_stack(masses, offset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", newton.NewtonWarning)
        solver = SolverSteel(model)
    if not shock:
        solver.steel_model.shock_up = None  # the pass off: the sweep alone
    z0 = model.body_q.numpy()[:, 2].copy()
    low, high = [0.0], [0.0]

    def record(state):
        z = state.body_q.numpy()[:, 2]
        assert np.isfinite(z).all()
        low[0] = max(low[0], float((z0 - z).max()))
        high[0] = max(high[0], float((z - z0).max()))

    run(model, solver, steps, 1.0 / 240.0, record=record)
    return low[0], high[0]


def test_a_light_box_under_a_heavier_one_beyond_the_held_ratio_warns():
    """Ratio 100 at the default 12 iterations (holds about 24) warns, naming the ratio."""
    with pytest.warns(newton.NewtonWarning, match="mass ratio 100"):
        SolverSteel(two_box_stack(100.0))


def test_the_same_stack_with_enough_iterations_does_not_warn():
    """Ratio 90 at 50 iterations (holds about 100) and ratio 10 at 12 build silently."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", newton.NewtonWarning)
        SolverSteel(two_box_stack(90.0), iterations=int(np.ceil(100.0 / MASS_RATIO_PER_ITERATION)))
        SolverSteel(two_box_stack(10.0))


@pytest.mark.parametrize("masses", [(1.0, 10.0), (1.0, 100.0), (0.1, 100.0), (1.0, 1000.0, 1.0, 1000.0, 1.0)],
                         ids=["1:10", "1:100", "1:1000", "alternating 1/1000"])
def test_heavy_on_light_stacks_hold_at_the_default_iterations(masses):
    """Sink and hop over 1 s at dt 1/240 s, default options: measured 0 (the resting heights bit-exact) on every
    stack; limit 1 um, a few float32 steps at z 0.9 m. The sweep alone: 0.95 mm, 19.5 mm, 200 mm with a 30 mm hop,
    400 mm (the next test)."""
    sink, hop = sink_and_hop(masses)
    assert sink < 1e-6
    assert hop < 1e-6


def test_the_pass_is_what_holds_them():
    """The same 1:100 stack with the pass off sinks 19.5 mm (measured; limit > 6 mm), and 1:10 0.95 mm (> 0.3)."""
    assert sink_and_hop((1.0, 100.0), shock=False)[0] > 6e-3
    assert sink_and_hop((1.0, 10.0), shock=False)[0] > 3e-4


def test_a_twenty_box_stack_of_alternating_one_to_a_hundred_stands():
    """The AVBD paper's stress stack (1, 100, 1, 100, ... kg): measured sink 0 over 1 s; limit 1 um. The sweep
    alone collapses it (1.4 m)."""
    sink, hop = sink_and_hop((1.0, 100.0) * 10)
    assert sink < 1e-6
    assert hop < 1e-6


def test_a_heavy_box_off_centre_on_a_light_one_holds():
    """1:100, the top box 9 cm off centre on its 10 cm half-width support, 3 s: sink measured 7 um, hop 0; limit 20 um.
    One group step per visit instead of the pass's eight lets it fall off (200 mm)."""
    sink, hop = sink_and_hop((1.0, 100.0), steps=720, offset=0.09)
    assert sink < 2e-5
    assert hop < 2e-5


def test_the_top_contact_reports_the_full_weight_above_it():
    """contact_f of the heavy box's contacts after 1 s of 1:100: measured 980.9995 N of 981.0 (rel 5e-7); limit rel
    2e-6. The pass does not carry the reaction down (sweep/shock.py): the ground under the light box reads 125 N of
    991 N, which this test does not pin."""
    model = box_stack((1.0, 100.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", newton.NewtonWarning)
        solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    observables = solver.observables({"contact_f"}, contacts=contacts)
    s0, s1 = model.state(), model.state()
    for _ in range(240):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, 1.0 / 240.0, observables=observables)
        s0, s1 = s1, s0
    n = int(contacts.rigid_contact_count.numpy()[0])
    shape0 = contacts.rigid_contact_shape0.numpy()[:n]
    shape1 = contacts.rigid_contact_shape1.numpy()[:n]
    between = (shape0 != 2) & (shape1 != 2)  # shape 2 is the ground
    weight = float(model.body_mass.numpy()[1]) * 9.81
    assert abs(float(observables.contact_f.numpy()[:n, 2][between].sum())) == pytest.approx(weight, rel=2e-6)


def test_ordinary_scenes_never_launch_the_pass():
    """Equal boxes and a 1:3 pair stay below SHOCK_RATIO: the solver holds no up and the step is the sweep's alone;
    a 1:4 pair switches it on."""
    for masses, on in (((1.0, 1.0, 1.0), False), ((1.0, 3.0), False), ((1.0, 4.0), True), ((4.0, 1.0), True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", newton.NewtonWarning)
            assert (SolverSteel(box_stack(masses)).steel_model.shock_up is not None) == on


@pytest.mark.parametrize("name", ["tower", "humanoid", "chain", "cartpole", "ant"])
def test_the_anchor_scenes_never_launch_the_pass(name):
    """No candidate pair of two articulations reaches 1:4 in the benchmark scenes, so their steps are the sweep's
    alone: joint_q/joint_qd after 200 steps measured bitwise equal to the code before the pass."""
    from steel.app.scenes import build_scene

    assert SolverSteel(build_scene(name, 1, "cpu").model).steel_model.shock_up is None


def test_changed_masses_switch_the_pass_on_at_notify():
    """Two equal boxes build without the pass; making the top one 100x heavier and notifying
    BODY_INERTIAL_PROPERTIES switches it on."""
    model = box_stack((1.0, 1.0))
    solver = SolverSteel(model)
    assert solver.steel_model.shock_up is None
    model.body_mass.assign(np.array([1.0, 100.0], dtype=np.float32))
    model.body_inv_mass.assign(np.array([1.0, 0.01], dtype=np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", newton.NewtonWarning)
        solver.notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
    assert solver.steel_model.shock_up is not None
