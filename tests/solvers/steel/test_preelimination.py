"""SolverSteel bilateral pre-elimination (sweep/preelimination.py): the four-bar of test_loop_closures, closed by a
REVOLUTE joint, with its closure (and a mimic) rows solved as one regularized block before the sweep."""

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

from .test_loop_closures import DT, _anchor_gap, _four_bar, _rocker_angle
from .test_mimic import _two_hinges

FALLBACK = "pre-elimination is disabled for the whole solver"


def _turn(model, closure, steps, torque=0.01, **options):
    """Turn the crank by ``torque`` [N·m]; return the solver, ``joint_q`` and the anchor gap [m] after each step, and
    the largest deviation [rad] of the rocker from the closed-form crank-rocker relation."""
    solver = SolverSteel(model, **options)
    control = model.control()
    f = np.zeros(model.joint_dof_count, dtype=np.float32)
    f[0] = torque
    control.joint_f.assign(f)
    s0, s1 = model.state(), model.state()
    gaps, qs = [], []
    for _ in range(steps):
        solver.step(s0, s1, control, None, DT)
        s0, s1 = s1, s0
        qs.append(s0.joint_q.numpy().copy())  # numpy() of a CPU array is a view of the state
        gaps.append(_anchor_gap(model, s0, closure))
    qs = np.array(qs)
    error = np.abs(np.angle(np.exp(1j * (qs[:, 2] - [_rocker_angle(theta) for theta in qs[:, 0]])))).max()
    return solver, qs, np.array(gaps), error


def test_four_bar_with_preelimination_keeps_its_anchors_and_the_crank_rocker_relation():
    """4 s of a 0.01 N·m crank torque (about 1.5 turns) with pre-elimination at the default 12 iterations: anchors
    within 0.1 mm (measured 11.8 um max, the Baumgarte drift of the turning links, as without it) and the rocker on
    the closed-form relation within 1 mrad (measured 0.02 mrad)."""
    model, closure = _four_bar()
    solver, qs, gaps, error = _turn(model, closure, 960, enable_bilateral_preelimination=True)
    assert solver.steel_model.preeliminate
    assert qs[-1, 0] > 1.0 + 2.0 * np.pi
    assert gaps.max() < 1e-4, gaps.max()
    assert error < 1e-3, error


def test_preelimination_needs_fewer_iterations():
    """One PGS iteration per step, 1 s of crank torque: the anchor gap peaks at 11.8 um with pre-elimination and
    84 um without (the reference: 11.9 and 86 um); 12 iterations without it reach 11.8 um. Bounds: below 20 um
    with, above 50 um without."""
    model, closure = _four_bar()
    _, _, with_gaps, _ = _turn(model, closure, 240, iterations=1, enable_bilateral_preelimination=True)
    _, _, without_gaps, _ = _turn(model, closure, 240, iterations=1)
    assert with_gaps.max() < 2e-5, with_gaps.max()
    assert without_gaps.max() > 5e-5, without_gaps.max()


def test_a_joint_limit_impulse_does_not_break_an_eliminated_closure():
    """The crank (0.05 N·m) runs into a joint limit at 1.3 rad. The limit row's response is projected onto the
    closure rows' null space, so its impulse stops the whole linkage: with one iteration the gap peaks at 45 um
    with pre-elimination against 874 um without (reference 46 and 2400 um; 930 um with the velocity projected
    but the responses left alone). Bounds: 0.1 mm with, 0.5 mm without."""
    def run(**options):
        model, closure = _four_bar()
        for name, value in (("joint_limit_lower", 0.0), ("joint_limit_upper", 1.3)):
            values = getattr(model, name).numpy()
            values[0] = value
            getattr(model, name).assign(values)
        _, qs, gaps, _ = _turn(model, closure, 240, torque=0.05, iterations=1, enable_joint_limits=True, **options)
        assert abs(qs[-1, 0] - 1.3) < 1e-3  # at the limit
        return gaps.max()

    with_gap, without_gap = run(enable_bilateral_preelimination=True), run()
    assert with_gap < 1e-4, with_gap
    assert without_gap > 5e-4, without_gap


def test_contact_impulses_do_not_break_an_eliminated_closure():
    """The four-bar falls under gravity onto the ground (three spheres), two iterations per step for 2 s: the contact
    rows' responses are projected too, and the gap ends at 1.2 um with pre-elimination against 0.68 mm without (peaks
    0.46 and 2.3 mm, the landing). Bounds: 10 um and 0.1 mm at the end."""
    def run(**options):
        model, closure = _four_bar(ground=True)
        solver = SolverSteel(model, iterations=2, **options)
        pipeline = newton.CollisionPipeline(model)
        contacts = pipeline.contacts()
        s0, s1 = model.state(), model.state()
        for _ in range(480):
            pipeline.collide(s0, contacts)
            solver.step(s0, s1, None, contacts, DT)
            s0, s1 = s1, s0
        assert s0.body_q.numpy()[:, 2].min() > -0.01  # on the ground
        return _anchor_gap(model, s0, closure)

    with_gap, without_gap = run(enable_bilateral_preelimination=True), run()
    assert with_gap < 1e-5, with_gap
    assert without_gap > 1e-4, without_gap


def test_include_mimics_false_keeps_the_mimic_rows_iterative():
    """Two more links mimic the crank, q = 0.1 + q_crank, in the four-bar's articulation; one iteration per step
    for 1 s. Eliminating the mimics too (default), the relations hold within 0.48 urad; with include_mimics=False
    the closure is still eliminated (gap 9.0 um both ways, 55 um without pre-elimination) but the two mimic rows,
    coupled through the crank, are solved by the sweep: 143 urad (609 urad without pre-elimination). The
    reference: 0.48, 148 and 638 urad. Bounds: 10 urad, above 50 urad, 20 um."""
    def run(**options):
        model, closure = _four_bar(follower=(0.1, 1.0), followers=2)
        _, qs, gaps, _ = _turn(model, closure, 240, iterations=1, **options)
        return gaps.max(), np.abs(qs[:, 3:5] - 0.1 - qs[:, :1]).max()

    gap_all, mimic_all = run(enable_bilateral_preelimination=True)
    gap_connect, mimic_connect = run(enable_bilateral_preelimination=True,
                                     bilateral_preelimination_include_mimics=False)
    gap_off, mimic_off = run()
    assert mimic_all < 1e-5, mimic_all
    assert mimic_connect > 5e-5, mimic_connect
    assert mimic_off > mimic_connect, (mimic_off, mimic_connect)
    assert gap_all < 2e-5 and gap_connect < 2e-5 and gap_off > 5e-5, (gap_all, gap_connect, gap_off)


def test_mimic_rows_count_toward_the_block_only_when_included():
    """The four-bar's closure (5 rows) and four crank mimics (4 rows) are 9 > 8: the default falls back with a
    hint; include_mimics=False eliminates the 5 connect rows."""
    model, _ = _four_bar(follower=(0.1, 1.0), followers=4)
    with pytest.warns(UserWarning, match="owns 9 bilateral rows.*include_mimics=False"):
        assert not SolverSteel(model, enable_bilateral_preelimination=True).steel_model.preeliminate
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert SolverSteel(model, enable_bilateral_preelimination=True,
                           bilateral_preelimination_include_mimics=False).steel_model.preeliminate


def _chain(closures):
    """Two links hinged about z, the first at the origin; ``closures``: (parent, kind) loop joints at the second
    link's origin (0.3, 0, 0), parent -1 the world, 0 the first link."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    inertia = wp.mat33(np.eye(3) * 1e-3)
    l0 = b.add_link(mass=1.0, inertia=inertia)
    l1 = b.add_link(mass=1.0, inertia=inertia, xform=wp.transform(wp.vec3(0.3, 0.0, 0.0), wp.quat_identity()))
    j0 = b.add_joint_revolute(-1, l0, axis=(0, 0, 1))
    j1 = b.add_joint_revolute(l0, l1, axis=(0, 0, 1), parent_xform=wp.transform(wp.vec3(0.3, 0.0, 0.0)))
    b.add_articulation([j0, j1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # parallel joints between the same bodies
        for parent, kind in closures:
            add = b.add_joint_ball if kind == "ball" else b.add_joint_fixed
            add(parent, l1, parent_xform=wp.transform(wp.vec3(0.3, 0.0, 0.0)))
    return b.finalize(device="cpu")


@pytest.mark.filterwarnings("ignore:.*runs the serial sweep")
@pytest.mark.parametrize("case, match", [
    ("velocity_iterations", "does not support velocity_iterations > 0"),
    ("world parent", "kinematic or world parent"),
    ("nine rows", "owns 9 bilateral rows, more than the pre-elimination capacity of 8"),
    ("propagation", "articulated_contact_response='propagation'"),
])
def test_fallbacks_warn_and_run_the_plain_sweep(case, match):
    """Each fallback warns at construction, and the steps are then bitwise those of the plain sweep."""
    options = {}
    if case == "velocity_iterations":
        model, options = _four_bar()[0], {"velocity_iterations": 1}
    elif case == "world parent":
        model = _chain([(-1, "ball")])
    elif case == "nine rows":
        model = _chain([(0, "fixed"), (0, "ball")])  # 6 + 3 rows in one articulation
    else:
        model, options = _two_hinges(), {"articulated_contact_response": "propagation"}
    with pytest.warns(UserWarning, match=FALLBACK):
        solver = SolverSteel(model, enable_bilateral_preelimination=True, **options)
    assert not solver.steel_model.preeliminate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the propagation response's serial fallback warns too
        plain = SolverSteel(model, **options)
    control = model.control()
    control.joint_f.assign(np.full(model.joint_dof_count, 0.05, dtype=np.float32))
    out = []
    for s in (solver, plain):
        s0, s1 = model.state(), model.state()
        for _ in range(5):
            s.step(s0, s1, control, None, DT)
            s0, s1 = s1, s0
        out.append(s0.joint_qd.numpy())
    np.testing.assert_array_equal(out[0], out[1])


def test_a_fixed_closure_fits_the_block():
    """A FIXED closure takes 6 of the 8 rows: eliminated, without a warning (6 + 3 fall back, above)."""
    model = _chain([(0, "fixed")])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert SolverSteel(model, enable_bilateral_preelimination=True).steel_model.preeliminate


def test_joint_friction_with_preelimination_raises_not_implemented():
    model, _ = _four_bar()
    with pytest.raises(NotImplementedError, match="enable_bilateral_preelimination.*enable_joint_friction"):
        SolverSteel(model, enable_bilateral_preelimination=True, enable_joint_friction=True)


def test_body_parent_f_warns_once_that_it_leaves_out_closure_reactions():
    model, _ = _four_bar()
    solver = SolverSteel(model, enable_bilateral_preelimination=True)
    observables = solver.observables({"body_parent_f"})
    s0, s1 = model.state(), model.state()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            solver.step(s0, s1, None, None, DT, observables=observables)
            s0, s1 = s1, s0
    messages = [str(w.message) for w in caught if "body_parent_f" in str(w.message)]
    assert len(messages) == 1, messages
    assert "pre-eliminated loop-closure reactions" in messages[0]
