"""SolverVBD particle solve: options, coloring, a hanging cloth against newton.solvers.SolverVBD."""

import inspect

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD


def _cloth(color=True, worlds=1):
    b = newton.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(0, 0, 1), rot=wp.quat_identity(), vel=wp.vec3(0, 0, 0), dim_x=4, dim_y=4,
                     cell_x=0.1, cell_y=0.1, mass=0.1, fix_left=True, tri_ke=1e3, tri_ka=1e3, tri_kd=1e-2)
    if color:
        b.color()
    return b.finalize(device="cpu")


def _run(cls, model, steps=20, dt=1 / 60, iterations=10, adaptive_init=None, **kw):
    solver = cls(model, iterations=iterations, **kw)
    if adaptive_init is not None:
        solver.particle_adaptive_init = adaptive_init
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
    return s0.particle_q.numpy()


# The constructor of the API revision this solver implements, as its documentation prints it.
SEED_SIGNATURE = (
    "iterations=10, friction_epsilon=1e-2, integrate_with_external_rigid_solver=False, "
    "particle_enable_self_contact=False, particle_self_contact_radius=0.2, "
    "particle_self_contact_margin=0.2, particle_conservative_bound_relaxation=0.85, "
    "particle_vertex_contact_buffer_size=32, particle_edge_contact_buffer_size=64, "
    "particle_collision_detection_interval=0, particle_edge_parallel_epsilon=1e-5, "
    "particle_enable_tile_solve=True, particle_topological_contact_filter_threshold=2, "
    "particle_rest_shape_contact_exclusion_radius=0.0, "
    "particle_external_vertex_contact_filtering_map=None, "
    "particle_external_edge_contact_filtering_map=None, rigid_avbd_alpha=0.95, "
    "rigid_avbd_joint_alpha=None, rigid_avbd_contact_alpha=None, rigid_avbd_beta=0.0, "
    "rigid_avbd_linear_beta=None, rigid_avbd_angular_beta=None, rigid_avbd_gamma=0.999, "
    "rigid_contact_hard=True, rigid_contact_history=False, rigid_contact_stick_motion_eps=1.0e-4, "
    "rigid_contact_stick_freeze_translation_eps=1.0e-4, "
    "rigid_contact_stick_freeze_angular_eps=1.0e-4, rigid_contact_k_start=1.0e2, "
    "rigid_body_contact_buffer_size=64, rigid_body_particle_contact_buffer_size=256, "
    "rigid_joint_linear_ke=1.0e5, rigid_joint_angular_ke=1.0e5, rigid_joint_linear_k_start=1.0e2, "
    "rigid_joint_angular_k_start=1.0e1, rigid_joint_linear_kd=0.0, rigid_joint_angular_kd=0.0, "
    "deterministic=None"
)


def test_signature_is_the_seed_revision():
    """inspect.signature lists exactly the documented revision's options and defaults, in order."""
    expected = [tuple(p.split("=")) for p in SEED_SIGNATURE.split(", ")]
    params = list(inspect.signature(SolverVBD.__init__).parameters.values())[2:]
    assert [p.name for p in params] == [n for n, _ in expected]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    assert [p.default for p in params] == [eval(v) for _, v in expected]


def test_invalid_options_and_aliases():
    """Bad values raise naming the option; both spellings of one option raise ValueError; the later
    revision's (margin, gap) become the seed's (radius, margin + gap)."""
    model = _cloth()
    with pytest.raises(ValueError, match="iterations"):
        SolverVBD(model, iterations=-1)
    with pytest.raises(TypeError, match="friction_epsilon"):
        SolverVBD(model, friction_epsilon="x")
    # 1.8.0 defines both relaxation spellings: the old one overrides, with its deprecation warning (test_dat.py).
    with pytest.warns(newton.NewtonDeprecationWarning, match="particle_conservative_bound_relaxation"):
        solver = SolverVBD(model, particle_conservative_bound_relaxation=0.5, dat_conservative_bound_relaxation=0.6)
    assert solver.particle_conservative_bound_relaxation == 0.5
    with pytest.raises(ValueError, match="particle_self_contact_gap"):
        SolverVBD(model, particle_self_contact_radius=0.01, particle_self_contact_gap=0.01)
    with pytest.raises(ValueError, match="particle_self_contact_gap"):
        SolverVBD(model, particle_self_contact_gap=-0.01)
    # The later revision's margin is the interaction distance and its gap extra detection reach.
    solver = SolverVBD(model, particle_enable_self_contact=True, particle_self_contact_margin=0.002,
                       particle_self_contact_gap=0.0015)
    assert solver.self_contact is not None
    assert solver.particle_self_contact_radius == 0.002 and solver.particle_self_contact_margin == pytest.approx(0.0035)
    solver = SolverVBD(model, particle_self_contact_gap=0.01)
    assert solver.particle_self_contact_radius == 0.2 and solver.particle_self_contact_margin == pytest.approx(0.21)


def test_missing_coloring_says_call_color():
    """A model with particles but no coloring raises ValueError naming builder.color()."""
    with pytest.raises(ValueError, match=r"builder\.color\(\)"):
        SolverVBD(_cloth(color=False))


# Same step map as newton's SolverVBD (same energies, Hessian blocks, colour order and Jacobi update
# within a colour, and by default the same first iterate, the inertial target): 20 steps of 10
# iterations agree to 6.6e-7 m, float32 rounding of ~1 m positions (6e-8 m) accumulated over 200 sweeps.
SAME_START_TOL = 1.0e-5  # [m]
# The opt-in adaptive start and Newton's inertial one converge to the same minimizer each step. At 200
# iterations the two 20-step trajectories agree to 4.3e-5 m (at 10 iterations they differ by 0.084 m:
# neither is converged, and on this swinging cloth the inertial start is the closer one, 7.6e-3 m from
# the converged trajectory against 0.078 m: test_on_a_swinging_cloth_the_inertial_start_ends_closer_...).
CONVERGED_TOL = 1.0e-4  # [m]


def _soft_block():
    b = newton.ModelBuilder()
    b.add_soft_grid(pos=wp.vec3(0, 0, 1), rot=wp.quat_identity(), vel=wp.vec3(0, 0, 0), dim_x=3, dim_y=2, dim_z=2,
                    cell_x=0.1, cell_y=0.1, cell_z=0.1, density=1000.0, k_mu=2e4, k_lambda=4e4, k_damp=1.0,
                    fix_left=True)
    b.color()
    return b.finalize(device="cpu")


@pytest.mark.parametrize("scene", ["cloth", "soft_block"])
def test_hanging_body_matches_newton_reference_from_the_same_start(scene):
    """A pinned 5x5 cloth with bending, or a pinned 3x2x2 block of tets, 20 steps of 10 iterations with
    the default options: equal to newton's SolverVBD within 1e-5 m (measured 4.8e-7 m and 7.2e-7 m; both
    start each step at the inertial target); pinned particles stay put."""
    model = _cloth() if scene == "cloth" else _soft_block()
    assert SolverVBD(model).particle_adaptive_init is False
    ours = _run(SolverVBD, model)
    ref = _run(newton.solvers.SolverVBD, model, particle_enable_tile_solve=False)
    pinned = model.particle_inv_mass.numpy() == 0
    assert pinned.any()
    assert np.array_equal(ours[pinned], model.particle_q.numpy()[pinned])
    err = np.abs(ours - ref).max()
    print(f"{scene}: max |ours - newton| from the same start =", err)
    assert err < SAME_START_TOL


def test_hanging_cloth_converged_trajectory_matches_newton_reference():
    """With our adaptive start and 200 iterations per step the 20-step trajectory equals newton's
    SolverVBD (inertial start) within 1e-4 m: the starts differ, the minimizers do not."""
    model = _cloth()
    ours = _run(SolverVBD, model, iterations=200, adaptive_init=True)
    ref = _run(newton.solvers.SolverVBD, model, iterations=200, particle_enable_tile_solve=False)
    err = np.abs(ours - ref).max()
    print("max |ours - newton| at 200 iterations =", err)
    assert err < CONVERGED_TOL


def test_on_a_swinging_cloth_the_inertial_start_ends_closer_to_the_converged_trajectory():
    """particles/predict.py: the pinned 5x5 cloth, 20 steps of 10 iterations, against 200 iterations from the same
    (inertial) start: the inertial start ends 7.6e-3 m from it, the adaptive one 7.8e-2 m (measured 7.65e-3 and
    7.81e-2 m, the largest coordinate difference). rtol 0.2 [m]: the docstring's two digits; the order of the two
    is the claim, a factor of ten apart."""
    model = _cloth()
    converged = _run(SolverVBD, model, iterations=200)
    inertial = np.abs(_run(SolverVBD, model) - converged).max()
    adaptive = np.abs(_run(SolverVBD, model, adaptive_init=True) - converged).max()
    assert inertial == pytest.approx(7.6e-3, rel=0.2)
    assert adaptive == pytest.approx(7.8e-2, rel=0.2)


# A 9x9 cloth lying flat on the ground rests with every particle at r - m g / ke (ke the mean of the
# particle and ground values, as Newton mixes them): 5.6e-5 m deep here.
RESTING_DEPTH_TOL = 1.0e-6  # [m]; the adaptive start at 2 iterations, measured < 1e-7 m (float32 of 1e-2 m)
RESTING_EXCESS_MIN = 1.0e-3  # [m]; the inertial start at 2 iterations sinks 3.6 mm deeper (measured)


def test_adaptive_start_keeps_a_resting_cloth_at_its_contact_depth_with_two_iterations():
    """A cloth lying on the ground, 2 iterations per step: the opt-in adaptive start (the paper's sec.
    3.6) rests it at the static depth r - m g / ke; the default inertial start, as Newton's, leaves it
    over 1 mm deeper (each step starts dt² g into the ground and 2 sweeps do not climb back). The
    measured case for the opt-in; a setter that did nothing would fail it."""
    b = newton.ModelBuilder()
    b.add_ground_plane()
    b.add_cloth_grid(pos=wp.vec3(-0.4, -0.4, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0, 0, 0), dim_x=8,
                     dim_y=8, cell_x=0.1, cell_y=0.1, mass=0.01, tri_ke=1e3, tri_ka=1e3, tri_kd=1e-2,
                     particle_radius=0.01)
    b.color()
    model = b.finalize(device="cpu")
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    ke = 0.5 * (model.soft_contact_ke + float(model.shape_material_ke.numpy()[0]))  # [N/m]
    rest = 0.01 - 0.01 * float(np.linalg.norm(model.gravity.numpy()[0])) / ke  # [m]

    def rest_height(adaptive):
        solver = SolverVBD(model, iterations=2)
        solver.particle_adaptive_init = adaptive
        s0, s1 = model.state(), model.state()
        for _ in range(120):
            pipeline.collide(s0, contacts)
            solver.step(s0, s1, None, contacts, 1 / 60)
            s0, s1 = s1, s0
        return float(s0.particle_q.numpy()[:, 2].mean())

    adaptive, inertial = rest_height(True), rest_height(False)
    print(f"mean height [m]: static {rest:.7f}, adaptive {adaptive:.7f}, inertial {inertial:.7f}")
    assert abs(adaptive - rest) < RESTING_DEPTH_TOL
    assert rest - inertial > RESTING_EXCESS_MIN
    with pytest.raises(TypeError, match="particle_adaptive_init"):
        SolverVBD(model).particle_adaptive_init = 1


def test_every_accepted_option_is_documented_in_help():
    """help(SolverVBD) documents every option the constructor accepts: seed options, aliases, later-revision extras."""
    import dataclasses
    import pydoc

    from steel.solvers.vbd import options

    from tests.solvers.test_option_tables import args_entries

    accepted = ([f.name for f in dataclasses.fields(options.VBDOptions)] + list(options.ALIASES)
                + [options.LATER_GAP] + list(options.EXTRAS))
    documented = args_entries(SolverVBD.__init__.__doc__)  # the Args: entries, written from the option table
    assert [name for name in accepted if name not in documented] == []
    assert "rigid_compliant_alm" in pydoc.render_doc(SolverVBD, renderer=pydoc.plaintext)


def test_the_formulation_switch_follows_the_decision_table():
    """``rigid_compliant_alm``: True selects 1.8.0's compliant ALM (built, no warning); False selects the seed's
    AVBD with 1.8.0's DeprecationWarning; omitted, the seed's AVBD with no warning; None or a non-bool -> TypeError."""
    import warnings

    model = _cloth()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert SolverVBD(model, rigid_compliant_alm=True).compliant is not None
        assert SolverVBD(model).compliant is None
    with pytest.warns(DeprecationWarning, match="rigid_compliant_alm=False"):
        assert SolverVBD(model, rigid_compliant_alm=False).compliant is None
    for bad in (None, 1, "yes"):
        with pytest.raises(TypeError, match="rigid_compliant_alm"):
            SolverVBD(model, rigid_compliant_alm=bad)
