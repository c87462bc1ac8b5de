"""SolverSteel inside Newton's coupled solvers: effective masses, refused roles, restarts, split chains."""

import numpy as np
import pytest
import warp as wp

import newton
import newton.solvers
from newton.solvers.experimental.coupled import (
    CouplingInterface,
    SolverCoupled,
    SolverCoupledADMM,
    SolverCoupledProxy,
)
from steel.solvers import SolverSteel

from .scenes import G, single_box

DT = 1.0 / 240.0
BODY = int(CouplingInterface.EndpointKind.BODY)
PARTICLE = int(CouplingInterface.EndpointKind.PARTICLE)


# -- scenes -----------------------------------------------------------------------------------------

def _double_pendulum(split: bool):
    """Two 0.5 m links hinged about y, the first at a world pivot at z = 1 m, starting horizontal.

    ``split``: the second link gets a FREE root of its own and the elbow hinge becomes a model joint
    between the two articulations, so two coupled entries can own one link each. Returns the model
    and, when split, (link0, joint0, link1, free joint1, elbow joint).
    """
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    inertia = wp.mat33(np.eye(3) * 1e-3)
    link0 = builder.add_link(mass=1.0, inertia=inertia, com=wp.vec3(0.25, 0.0, 0.0),
                             xform=wp.transform(wp.vec3(0.0, 0.0, 1.0), wp.quat_identity()))
    pivot = wp.transform(wp.vec3(0.0, 0.0, 1.0), wp.quat_identity())
    hinge0 = builder.add_joint_revolute(-1, link0, parent_xform=pivot, axis=(0.0, 1.0, 0.0))
    if split:
        builder.add_articulation([hinge0])
    link1 = builder.add_link(mass=0.5, inertia=inertia, com=wp.vec3(0.25, 0.0, 0.0),
                             xform=wp.transform(wp.vec3(0.5, 0.0, 1.0), wp.quat_identity()))
    if split:
        free1 = builder.add_joint_free(link1)
        builder.add_articulation([free1])
    elbow_frame = wp.transform(wp.vec3(0.5, 0.0, 0.0), wp.quat_identity())
    elbow = builder.add_joint_revolute(link0, link1, parent_xform=elbow_frame, axis=(0.0, 1.0, 0.0))
    if not split:
        builder.add_articulation([hinge0, elbow])
        return builder.finalize(device="cpu"), None
    return builder.finalize(device="cpu"), (link0, hinge0, link1, free1, elbow)


def _chain_3d(armature=0.0):
    """Three links on hinges about y, x and z (armature 0, 1, 2 times ``armature``), bent at joint_q."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    inertia = wp.mat33(np.diag([1e-3, 2e-3, 3e-3]))
    parent, joints = -1, []
    for i, axis in enumerate([(0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)]):
        link = builder.add_link(mass=1.0 + i, inertia=inertia, com=wp.vec3(0.2, 0.05, 0.0))
        offset = wp.vec3(0.0, 0.0, 1.0) if parent < 0 else wp.vec3(0.4, 0.0, 0.0)
        joints.append(builder.add_joint_revolute(parent, link, parent_xform=wp.transform(offset, wp.quat_identity()),
                                                 axis=axis, armature=armature * i))
        parent = link
    builder.add_articulation(joints)
    builder.joint_q[:3] = [0.3, -0.5, 0.7]
    return builder.finalize(device="cpu")


def _mixed_joints():
    """A prismatic-then-hinge arm, a kinematic hinge carrying a dynamic hinge, a welded body and a free body."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    inertia = wp.mat33(np.diag([1e-3, 2e-3, 3e-3]))
    slider = builder.add_link(mass=1.0, inertia=inertia)
    j0 = builder.add_joint_prismatic(-1, slider, axis=(1.0, 0.0, 0.0))
    arm = builder.add_link(mass=1.0, inertia=inertia, com=wp.vec3(0.3, 0.0, 0.0))
    j1 = builder.add_joint_revolute(slider, arm, axis=(0.0, 0.0, 1.0))
    builder.add_articulation([j0, j1])
    driven = builder.add_link(mass=1.0, inertia=inertia, com=wp.vec3(0.2, 0.0, 0.0), is_kinematic=True)
    j2 = builder.add_joint_revolute(-1, driven, axis=(0.0, 1.0, 0.0))
    carried = builder.add_link(mass=1.0, inertia=inertia, com=wp.vec3(0.3, 0.0, 0.0))
    elbow_frame = wp.transform(wp.vec3(0.4, 0.0, 0.0), wp.quat_identity())
    j3 = builder.add_joint_revolute(driven, carried, parent_xform=elbow_frame, axis=(0.0, 1.0, 0.0))
    builder.add_articulation([j2, j3])
    welded = builder.add_link(mass=1.0, inertia=inertia)
    builder.add_articulation([builder.add_joint_fixed(-1, welded)])
    builder.add_body(mass=2.0, inertia=inertia)
    return builder.finalize(device="cpu")


def _effective(solver, kinds, bodies, offsets):
    """``coupling_eval_effective_mass_block`` on host lists: (mass (n,), inertia (n, 3, 3))."""
    n = len(kinds)
    mass = wp.zeros(n, dtype=wp.float32)
    inertia = wp.zeros(n, dtype=wp.mat33)
    solver.coupling_eval_effective_mass_block(wp.array(kinds, dtype=wp.int32), wp.array(bodies, dtype=wp.int32),
                                              wp.array(offsets, dtype=wp.vec3), mass, inertia)
    return mass.numpy().astype(np.float64), inertia.numpy().astype(np.float64)


def _skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def _step(model, solver, steps):
    state_0, state_1 = model.state(), model.state()
    newton.eval_fk(model, model.joint_q, model.joint_qd, state_0)
    for _ in range(steps):
        state_0.clear_forces()
        solver.step(state_0, state_1, None, None, DT)
        state_0, state_1 = state_1, state_0
    return state_0


def _tip_and_angle(state):
    """World position of the second link's far end [m] and the first link's hinge angle [rad]."""
    body_q = state.body_q.numpy().astype(np.float64)
    pose = body_q[1]
    u, w = pose[3:6], pose[6]
    r = np.array([0.5, 0.0, 0.0])
    tip = pose[:3] + r + 2.0 * np.cross(u, np.cross(u, r) + w * r)
    return tip, 2.0 * np.arctan2(body_q[0, 4], body_q[0, 6])


# -- the interface -----------------------------------------------------------------------------------

def test_solver_steel_is_a_coupling_interface_after_solver_base():
    """SolverSteel is a CouplingInterface, with SolverBase first in the MRO as in the reference."""
    mro = SolverSteel.__mro__
    assert issubclass(SolverSteel, CouplingInterface)
    assert mro.index(newton.solvers.SolverBase) < mro.index(CouplingInterface)


def test_effective_mass_refresh_flags_name_what_the_masses_depend_on():
    """Joint frames and axes, body flags, inertias and armature: the reference's set."""
    model = _chain_3d()
    flags = SolverSteel(model).coupling_effective_mass_refresh_flags()
    assert flags == newton.solvers.SolverSteel(model).coupling_effective_mass_refresh_flags()
    for flag in (newton.ModelFlags.BODY_INERTIAL_PROPERTIES, newton.ModelFlags.JOINT_DOF_INERTIAL_PROPERTIES):
        assert flags & int(flag)


# -- effective masses --------------------------------------------------------------------------------

def test_free_body_effective_mass_is_its_mass_and_inertia_and_off_com_points_are_lighter():
    """At the COM of a free body: its mass [kg] and inertia [kg·m²]; at r: 3 / (3/m + tr(S(r)^T I^-1 S(r)))."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    inertia = np.diag([0.02, 0.03, 0.05])
    builder.add_body(mass=2.0, inertia=wp.mat33(inertia),
                     xform=wp.transform(wp.vec3(0.0, 0.0, 1.0), wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 0.3)))
    solver = SolverSteel(builder.finalize(device="cpu"))
    r = np.array([0.1, -0.05, 0.2])
    mass, out_inertia = _effective(solver, [BODY, BODY, PARTICLE, BODY], [0, 0, 0, 5],
                                   [[0.0, 0.0, 0.0], r, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    expected_off_com = 3.0 / (3.0 / 2.0 + np.trace(_skew(r).T @ np.linalg.inv(inertia) @ _skew(r)))
    # float32 outputs: 1e-6 relative.
    np.testing.assert_allclose(mass[:2], [2.0, expected_off_com], rtol=1e-6)
    np.testing.assert_allclose(out_inertia[0], inertia, rtol=1e-6)
    np.testing.assert_allclose(out_inertia[1], inertia, rtol=1e-6)
    # Particles (Steel owns none) and bodies out of range weigh nothing.
    assert mass[2] == 0.0 and mass[3] == 0.0
    assert not out_inertia[2:].any()


def test_hinge_chain_effective_mass_matches_newtons_jacobian_and_mass_matrix():
    """m = 3 / tr(J_p H^-1 J_p^T) and the inertia scale tr(I^-1) / tr(J_w H^-1 J_w^T), from Newton's
    eval_jacobian and eval_mass_matrix (armature included) at model.joint_q."""
    model = _chain_3d(armature=0.01)
    state = model.state()
    newton.eval_fk(model, model.joint_q, model.joint_qd, state)
    J = newton.eval_jacobian(model, state).numpy()[0].astype(np.float64)
    H = newton.eval_mass_matrix(model, state).numpy()[0].astype(np.float64)
    body_q = state.body_q.numpy().astype(np.float64)
    body_inertia = model.body_inertia.numpy().astype(np.float64)
    offset = np.array([0.1, -0.05, 0.2])
    bodies = [0, 1, 2, 0, 1, 2]
    offsets = [np.zeros(3)] * 3 + [offset] * 3
    solver = SolverSteel(model)
    mass, inertia = _effective(solver, [BODY] * 6, bodies, offsets)
    for e, (b, r) in enumerate(zip(bodies, offsets)):
        u, w = body_q[b, 3:6], body_q[b, 6]
        r_world = r + 2.0 * np.cross(u, np.cross(u, r) + w * r)
        Jv, Jw = J[6 * b : 6 * b + 3], J[6 * b + 3 : 6 * b + 6]
        Jp = Jv - _skew(r_world) @ Jw  # v_p = v_com + w x r
        expected_mass = 3.0 / np.trace(Jp @ np.linalg.solve(H, Jp.T))
        scale = max(np.trace(np.linalg.inv(body_inertia[b])) / np.trace(Jw @ np.linalg.solve(H, Jw.T)), 1.0)
        # Two float32 evaluations of H and J, solved in float64: 1e-4 relative.
        np.testing.assert_allclose(mass[e], expected_mass, rtol=1e-4)
        np.testing.assert_allclose(inertia[e], body_inertia[b] * scale, rtol=1e-4, atol=1e-9)
    scalar = wp.zeros(6, dtype=wp.float32)
    solver.coupling_eval_effective_mass(wp.array([BODY] * 6, dtype=wp.int32), wp.array(bodies, dtype=wp.int32),
                                        wp.array(offsets, dtype=wp.vec3), scalar)
    np.testing.assert_array_equal(scalar.numpy(), mass.astype(np.float32))


@pytest.mark.parametrize("scene", ["chain_3d", "mixed_joints"])
def test_effective_mass_matches_the_reference_solver(scene):
    """Same masses and inertias as newton.solvers.SolverSteel: hinge chains, a prismatic arm, a DOF
    prescribed by a kinematic body (its large armature), a welded and a free body, particles."""
    model = _chain_3d(armature=0.01) if scene == "chain_3d" else _mixed_joints()
    nb = model.body_count
    kinds = [BODY] * (2 * nb) + [PARTICLE]
    bodies = list(range(nb)) * 2 + [0]
    offsets = [[0.0, 0.0, 0.0]] * nb + [[0.1, -0.05, 0.2]] * nb + [[0.0, 0.0, 0.0]]
    mass, inertia = _effective(SolverSteel(model), kinds, bodies, offsets)
    ref_mass, ref_inertia = _effective(newton.solvers.SolverSteel(model), kinds, bodies, offsets)
    # Both evaluate float32 mass matrices: 1e-5 relative (measured 1.2e-6).
    np.testing.assert_allclose(mass, ref_mass, rtol=1e-5)
    np.testing.assert_allclose(inertia, ref_inertia, rtol=1e-5, atol=1e-9)


# -- refused roles -----------------------------------------------------------------------------------

def test_proxy_destination_and_particle_hooks_raise():
    """Steel refuses to receive proxy bodies or particles: each destination hook raises NotImplementedError."""
    model = single_box()
    solver = SolverSteel(model)
    state = model.state()
    calls = [
        lambda: solver.coupling_prepare_proxy_contacts(state, None),
        lambda: solver.coupling_rewind_proxy_body(None, state, None, None, DT),
        lambda: solver.coupling_harvest_proxy_wrenches(None, None, body_qd_before=None, state=state, state_out=state,
                                                       contacts=None, dt=DT),
        lambda: solver.coupling_rewind_proxy_particle(None, state, None, None, DT),
        lambda: solver.coupling_harvest_proxy_particle_forces(None, None, particle_qd_before=None, state=state,
                                                              state_out=state, contacts=None, dt=DT),
    ]
    for call in calls:
        with pytest.raises(NotImplementedError, match="proxy"):
            call()


def test_a_proxy_coupler_with_steel_as_destination_raises_on_its_first_step():
    """Receiving another entry's bodies as proxies is refused when the coupler first prepares them."""
    model, (link0, hinge0, link1, free1, _) = _double_pendulum(split=True)
    coupler = SolverCoupledProxy(model, entries=[
        SolverCoupled.Entry(name="xpbd", solver=newton.solvers.SolverXPBD, bodies=[link0], joints=[hinge0]),
        SolverCoupled.Entry(name="steel", solver=SolverSteel, bodies=[link1], joints=[free1]),
    ], coupling=SolverCoupledProxy.Config(
        proxies=[SolverCoupledProxy.Proxy(source="xpbd", destination="steel", bodies=[link0])], iterations=1))
    with pytest.raises(NotImplementedError, match="proxy coupling destination"):
        _step(model, coupler, 1)


def test_a_coupled_entry_owning_particles_is_refused():
    """An entry view with particles cannot be simulated by Steel; the coupler's construction raises."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    body = builder.add_body(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-3))
    builder.add_particle((1.0, 0.0, 0.0), (0.0, 0.0, 0.0), mass=0.1)
    model = builder.finalize(device="cpu")
    with pytest.raises(NotImplementedError, match="particles"):
        SolverCoupled(model, entries=[SolverCoupled.Entry(name="steel", solver=SolverSteel, bodies=[body],
                                                          joints=[0], particles=[0])])


# -- restarts ----------------------------------------------------------------------------------------

def test_restarts_require_update_mass_matrix_interval_one():
    """A coupler that may restart a step is refused unless the mass matrix is refreshed every step."""
    model = _chain_3d()
    SolverSteel(model, update_mass_matrix_interval=2).coupling_notify_iteration_restarts(False)
    SolverSteel(model).coupling_notify_iteration_restarts(True)
    with pytest.raises(NotImplementedError, match="update_mass_matrix_interval"):
        SolverSteel(model, update_mass_matrix_interval=2).coupling_notify_iteration_restarts(True)
    split, (link0, hinge0, link1, free1, elbow) = _double_pendulum(split=True)

    def coupler(iterations):
        return SolverCoupledProxy(split, entries=[
            SolverCoupled.Entry(name="steel", solver=lambda v: SolverSteel(v, update_mass_matrix_interval=2),
                                bodies=[link0], joints=[hinge0]),
            SolverCoupled.Entry(name="xpbd", solver=newton.solvers.SolverXPBD, bodies=[link1], joints=[free1, elbow]),
        ], coupling=SolverCoupledProxy.Config(
            proxies=[SolverCoupledProxy.Proxy(source="steel", destination="xpbd", bodies=[link0])],
            iterations=iterations))

    coupler(1)  # one pass never restarts
    with pytest.raises(NotImplementedError, match="update_mass_matrix_interval"):
        coupler(2)


def test_a_restarted_step_repeats_the_first_try_of_a_sliding_box_bitwise():
    """The friction history a step reads is saved on the new step's input notice and restored on a
    restart, so the retry equals the first try; without the restore the retry starts warm from
    the first try's forces and differs."""
    model = single_box(mu=0.5)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()

    def sliding_box(solver):
        state = model.state()
        qd = state.joint_qd.numpy()
        qd[0] = 1.0  # sliding along x at 1 m/s
        state.joint_qd.assign(qd)
        scratch = model.state()
        for _ in range(5):  # build a friction history
            pipeline.collide(state, contacts)
            solver.step(state, scratch, None, contacts, DT)
            state, scratch = scratch, state
        pipeline.collide(state, contacts)
        return state

    def try_step(solver, state, **notice):
        if notice:
            solver.coupling_notify_input_state_update(state, newton.StateFlags.BODY_Q | newton.StateFlags.JOINT_Q,
                                                      dt=DT, **notice)
        out = model.state()
        solver.step(state, out, None, contacts, DT)
        return np.concatenate([out.joint_q.numpy(), out.joint_qd.numpy()])

    solver = SolverSteel(model)
    solver.coupling_notify_iteration_restarts(True)
    state = sliding_box(solver)
    first = try_step(solver, state, iteration_restart=False)
    again = try_step(solver, state, iteration_restart=True)
    np.testing.assert_array_equal(again, first)

    plain = SolverSteel(model)
    state = sliding_box(plain)
    first = try_step(plain, state)
    assert not np.array_equal(try_step(plain, state), first)


# -- coupled split chains ----------------------------------------------------------------------------

STEPS = 48  # 0.2 s: the tip falls about 0.15 m and swings 0.4 m inwards


def _proxy_coupler(model, ids, source):
    link0, hinge0, link1, free1, elbow = ids
    return SolverCoupledProxy(model, entries=[
        SolverCoupled.Entry(name="steel", solver=source, bodies=[link0], joints=[hinge0]),
        SolverCoupled.Entry(name="xpbd", solver=lambda v: newton.solvers.SolverXPBD(v, iterations=20),
                            bodies=[link1], joints=[free1, elbow]),
    ], coupling=SolverCoupledProxy.Config(
        proxies=[SolverCoupledProxy.Proxy(source="steel", destination="xpbd", bodies=[link0])], iterations=4))


def _admm_coupler(model, ids, source):
    link0, hinge0, link1, free1, _ = ids
    return SolverCoupledADMM(model, entries=[
        SolverCoupled.Entry(name="steel", solver=source, bodies=[link0], joints=[hinge0]),
        SolverCoupled.Entry(name="other", solver=newton.solvers.SolverSteel, bodies=[link1], joints=[free1]),
    ], coupling=SolverCoupledADMM.Config(iterations=8, joint_proximal_bodies=False))


# Split against unsplit [m, rad]: the coupling approximates the elbow. Proxy: one-step-lagged
# feedback through a proxy of link 0 with its effective mass, the elbow in XPBD (measured 4.4e-3 m,
# 0.013 rad, unchanged from 4 to 16 passes). ADMM: a penalty attachment solved by 8 iterations
# (measured 1.05e-2 m, 0.011 rad; 5.8e-3 m with 16).
@pytest.mark.parametrize("make, tip_tol, angle_tol", [(_proxy_coupler, 1e-2, 0.03), (_admm_coupler, 2e-2, 0.03)],
                         ids=["proxy_source", "admm_entry"])
def test_split_double_pendulum_matches_the_reference_solver_and_the_unsplit_chain(make, tip_tol, angle_tol):
    """With Steel as the coupled entry (proxy source; ADMM entry) owning the first link, the split
    double pendulum follows the same scene with newton.solvers.SolverSteel in that role, and stays
    near the unsplit chain solved by one SolverSteel."""
    model, ids = _double_pendulum(split=True)
    tip, angle = _tip_and_angle(_step(model, make(model, ids, SolverSteel), STEPS))
    model, ids = _double_pendulum(split=True)
    ref_tip, ref_angle = _tip_and_angle(_step(model, make(model, ids, newton.solvers.SolverSteel), STEPS))
    unsplit = _double_pendulum(split=False)[0]
    whole_tip, whole_angle = _tip_and_angle(_step(unsplit, SolverSteel(unsplit), STEPS))
    # Same coupler, two float32 implementations of one method: 1e-4 m and rad (measured 3e-6).
    np.testing.assert_allclose(tip, ref_tip, atol=1e-4)
    assert abs(angle - ref_angle) < 1e-4
    np.testing.assert_allclose(tip, whole_tip, atol=tip_tol)
    assert abs(angle - whole_angle) < angle_tol
    assert whole_tip[2] < 0.9  # it did fall: the comparison is not between two resting chains
