"""SolverVBD with a solver-owned collision pipeline (the later revision's mode, used by Newton's examples)."""

import numpy as np
import pytest
import warp as wp

import newton
from newton.solvers import SolverBase
from steel.solvers import SolverVBD

Slot = SolverBase.CollisionSlot
Frequency = SolverBase.CollisionFrequencyType


def _cloth_on_ground():
    b = newton.ModelBuilder()
    b.add_ground_plane()
    b.add_cloth_grid(pos=wp.vec3(-0.15, -0.15, 0.02), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, -1.0), dim_x=3,
                     dim_y=3, cell_x=0.1, cell_y=0.1, mass=0.1, tri_ke=1e3, tri_ka=1e3, tri_kd=1e-2,
                     particle_radius=0.01)
    b.color()
    return b.finalize(device="cpu")


def _run(model, steps=15, owned=False, **kw):
    pipeline = newton.CollisionPipeline(model)
    solver = SolverVBD(model, iterations=5, collision_pipeline=pipeline if owned else None, **kw)
    contacts = None if owned else pipeline.contacts()
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        if not owned:
            pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, 1.0 / 600.0)
        s0, s1 = s1, s0
    return solver, s0.particle_q.numpy()


def test_owned_pipeline_equals_collide_then_step():
    """Detecting on state_in inside step (PRE_INIT, the AUTO default) is the user's collide-then-step loop, bitwise."""
    model = _cloth_on_ground()
    solver, owned = _run(model, owned=True)
    _, external = _run(model)
    assert solver.contacts is not None and solver.supports_collision_pipeline
    assert np.array_equal(owned, external)
    assert owned[:, 2].min() > 0.0  # the ground held the falling cloth


def test_owned_pipeline_errors():
    """Contacts passed while owning a pipeline, a pipeline of another model, a non-pipeline, NONE with self-contact."""
    model = _cloth_on_ground()
    pipeline = newton.CollisionPipeline(model)
    solver = SolverVBD(model, collision_pipeline=pipeline)
    s0, s1 = model.state(), model.state()
    with pytest.raises(ValueError, match="contacts"):
        solver.step(s0, s1, None, pipeline.contacts(), 1e-3)
    with pytest.raises(ValueError, match="same model"):
        SolverVBD(_cloth_on_ground(), collision_pipeline=pipeline)
    with pytest.raises(TypeError, match="collision_pipeline"):
        SolverVBD(model, collision_pipeline="pipeline")
    solver = SolverVBD(model, particle_enable_self_contact=True)
    with pytest.raises(ValueError, match="SOFT_SELF_CONTACT"):
        solver.set_collision_frequency(collision_frequency_type={Slot.SOFT_SELF_CONTACT: Frequency.NONE})
    assert solver.collision_frequency_type[Slot.SOFT_SELF_CONTACT] == Frequency.AUTO  # unchanged
    solver.set_collision_frequency(collision_frequency_type={Slot.SOFT_SELF_CONTACT: Frequency.ITERATIONS},
                                   collision_frequency={Slot.SOFT_SELF_CONTACT: 3})
    assert solver.self_contact.interval == 3


def test_rigid_slot_none_uses_the_buffer_as_filled():
    """RIGID at NONE: the solver does not detect; contacts the user collides into solver.contacts act."""
    model = _cloth_on_ground()
    pipeline = newton.CollisionPipeline(model)
    solver = SolverVBD(model, iterations=5, collision_pipeline=pipeline,
                       collision_frequency_type={Slot.RIGID: Frequency.NONE})
    s0, s1 = model.state(), model.state()
    for _ in range(15):
        solver.step(s0, s1, None, None, 1.0 / 600.0)
        s0, s1 = s1, s0
    fell_through = s0.particle_q.numpy()[:, 2].min()
    assert fell_through < 0.0  # nothing detected, nothing held it
    _, external = _run(model)
    s0, s1 = model.state(), model.state()
    solver = SolverVBD(model, iterations=5, collision_pipeline=pipeline,
                       collision_frequency_type={Slot.RIGID: Frequency.NONE})
    for _ in range(15):
        pipeline.collide(s0, solver.contacts)
        solver.step(s0, s1, None, None, 1.0 / 600.0)
        s0, s1 = s1, s0
    assert np.array_equal(s0.particle_q.numpy(), external)
