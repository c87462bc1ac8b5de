"""The fused per-articulation stages of SolverSteel's step (predict.py ``_free_dynamics``, finish.py
``_finish_articulations``) against the separate launches they replace: the same bits, fewer launches."""

import numpy as np
import pytest
import warp as wp

import newton
import steel.solvers.steel.solver as solver_module
from steel.launches import recorded_launches
from steel.solvers import SolverSteel

from ...fixtures import every_joint_type, random_joint_state
from .scenes import G, single_box

DT = 1.0 / 240.0


def _separate_stages(monkeypatch):
    monkeypatch.setattr(solver_module, "free_dynamics_fuses", lambda *args: False)
    monkeypatch.setattr(solver_module, "finish_fuses", lambda *args: False)


def _driven_tree():
    """Every joint type in one tree, with drives, damping and springs on every DOF, at a random state."""
    model = every_joint_type()
    n = model.joint_dof_count
    rng = np.random.default_rng(3)
    model.joint_target_ke.assign(rng.uniform(0.0, 50.0, n).astype(np.float32))
    model.joint_target_kd.assign(rng.uniform(0.0, 5.0, n).astype(np.float32))
    model.joint_damping.assign(rng.uniform(0.0, 0.5, n).astype(np.float32))
    model.joint_stiffness.assign(rng.uniform(0.0, 2.0, n).astype(np.float32))
    q, qd = random_joint_state(model, rng)
    model.joint_q.assign(q)
    model.joint_qd.assign(qd)
    return model


def _pendulum_and_loose_body():
    """A hinged link and a link on no joint: the loose body keeps its pose through the pass-through copies."""
    b = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    link = b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-2), com=wp.vec3(0.0, 0.0, -0.5))
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0.0, 1.0, 0.0))])
    b.add_link(mass=1.0, inertia=wp.mat33(np.eye(3) * 1e-2),
               xform=wp.transform(wp.vec3(1.0, 0.0, 0.0), wp.quat_identity()))
    b.joint_q[0] = 0.7
    return b.finalize(device="cpu")


def _trajectory(model, options, steps, *, in_place=False, contacts=False):
    """joint_q, joint_qd, body_q and body_qd after ``steps`` steps, with joint_f and body_f applied."""
    solver = SolverSteel(model, **options)
    pipeline = newton.CollisionPipeline(model) if contacts else None
    buffer = pipeline.contacts() if contacts else None
    control = model.control()
    rng = np.random.default_rng(7)
    control.joint_f.assign(rng.normal(scale=0.5, size=model.joint_dof_count).astype(np.float32))
    if control.joint_target_q is not None:
        control.joint_target_q.assign(rng.uniform(-0.3, 0.3, control.joint_target_q.shape).astype(np.float32))
    s0 = model.state()
    s1 = s0 if in_place else model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    for _ in range(steps):
        if pipeline is not None:
            pipeline.collide(s0, buffer)
        s0.clear_forces()
        s0.body_f.fill_(wp.spatial_vector(0.1, -0.2, 0.0, 0.0, 0.01, 0.0))
        solver.step(s0, s1, control, buffer, DT)
        s0, s1 = s1, s0
    return [getattr(s0, f).numpy() for f in ("joint_q", "joint_qd", "body_q", "body_qd")]


CASES = {
    "every joint type, drives and springs": (_driven_tree, {}, {}),
    "in place": (_driven_tree, {}, {"in_place": True}),
    "drive rows and velocity-limit prescale": (_driven_tree, {"drive_mode": "rows",
                                                             "enable_joint_velocity_limits": True}, {}),
    "a body outside every articulation": (_pendulum_and_loose_body, {}, {}),
    "sleeping, kinematics run before the fused stage": (lambda: single_box(z=0.1, world_count=2),
                                                        {"enable_sleeping": True}, {"contacts": True}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fused_stages_are_bitwise_the_separate_launches(case, monkeypatch):
    build, options, kwargs = CASES[case]
    steps = 160 if options.get("enable_sleeping") else 40  # the boxes sleep at step 121
    fused = _trajectory(build(), options, steps, **kwargs)
    _separate_stages(monkeypatch)
    separate = _trajectory(build(), options, steps, **kwargs)
    for a, b in zip(fused, separate):
        assert np.isfinite(a).all()
        assert a.tobytes() == b.tobytes()


def test_plain_step_is_five_launches_and_no_copy(monkeypatch):
    """Input kinematics, joint forces, RNEA/CRBA, factor and prediction are one launch, finish, integration and
    output kinematics another; with every body articulated and no sleeping the pass-through copies go too
    (before: 11 launches and 4 copies per step)."""
    model = single_box(world_count=2)
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    control = model.control()
    for _ in range(2):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, control, contacts, DT)
        s0, s1 = s1, s0
    copies = []
    copy = wp.copy
    monkeypatch.setattr(wp, "copy", lambda *args, **kwargs: copies.append(1) or copy(*args, **kwargs))
    pipeline.collide(s0, contacts)
    with recorded_launches() as kernels:
        solver.step(s0, s1, control, contacts, DT)
    assert [k.key for k in kernels] == ["_free_dynamics", "_contact_rows", "_sweep", "_record_contacts",
                                        "_finish_articulations"]
    assert not copies


def test_stale_mass_matrix_keeps_the_separate_stages():
    """``update_mass_matrix_interval > 1`` reuses ``H`` between rebuilds: those steps launch the stages apart."""
    model = single_box()
    solver = SolverSteel(model, update_mass_matrix_interval=2)
    s0, s1 = model.state(), model.state()
    keys = []
    for _ in range(2):
        with recorded_launches() as kernels:
            solver.step(s0, s1, None, None, DT)
        keys.append([k.key for k in kernels])
        s0, s1 = s1, s0
    assert "_free_dynamics" in keys[0] and "_free_dynamics" not in keys[1]
    assert "_bias_and_mass_matrix" in keys[1] and "_predict_velocity" in keys[1]
