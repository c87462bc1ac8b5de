"""The steel: rigid-body attributes: USD import, defaults and validation."""

import math
from pathlib import Path

import numpy as np
import pytest

import newton
from steel.solvers import SolverSteel

from .scenes import single_box

ASSET = Path(__file__).parent / "assets" / "damped_body.usda"


def test_usd_physx_rigid_body_attributes_import_with_units_converted():
    """physxRigidBody:* values authored in USD land in the steel: attributes; deg/s become rad/s."""
    pytest.importorskip("pxr", reason="USD import needs usd-core (in the dev extra)")
    builder = newton.ModelBuilder()
    SolverSteel.register_custom_attributes(builder)
    builder.add_usd(str(ASSET))
    model = builder.finalize(device="cpu")
    ns = model.steel
    assert float(ns.rigid_body_angular_damping.numpy()[0]) == pytest.approx(0.3)
    assert float(ns.rigid_body_linear_damping.numpy()[0]) == pytest.approx(0.1)
    assert float(ns.rigid_body_max_linear_velocity.numpy()[0]) == pytest.approx(5.0)
    assert float(ns.rigid_body_max_angular_velocity.numpy()[0]) == pytest.approx(math.pi / 2, rel=1e-6)
    assert float(ns.rigid_body_max_depenetration_velocity.numpy()[0]) == pytest.approx(2.0)
    solver = SolverSteel(model)
    assert float(solver.attributes.angular_damping.numpy()[0]) == pytest.approx(0.3)


def test_unregistered_attributes_take_the_seed_defaults():
    """Without registration every body gets angular damping 0.05 and unbounded velocities."""
    solver = SolverSteel(single_box())
    assert float(solver.attributes.angular_damping.numpy()[0]) == pytest.approx(0.05)
    assert float(solver.attributes.linear_damping.numpy()[0]) == 0.0
    assert np.isinf(solver.attributes.max_linear_velocity.numpy()[0])


@pytest.mark.parametrize("name, value", [("steel:rigid_body_angular_damping", -0.1),
                                         ("steel:rigid_body_linear_damping", float("inf")),
                                         ("steel:rigid_body_max_linear_velocity", float("nan"))])
def test_invalid_attribute_values_raise_at_construction_and_on_notify(name, value):
    """Negative or non-finite damping, or a NaN bound, raises ValueError naming the attribute."""
    attr = name.split(":")[1]
    with pytest.raises(ValueError, match=attr):
        SolverSteel(single_box(attributes={name: value}))
    model = single_box(attributes={name: 0.0})
    solver = SolverSteel(model)
    getattr(model.steel, attr).fill_(value)
    with pytest.raises(ValueError, match=attr):
        solver.notify_model_changed(newton.ModelFlags.BODY_PROPERTIES)


def test_attribute_edited_in_place_takes_effect_next_step_without_notify():
    """A steel: value written into the model's array is read by the next step, as in the reference.

    A box floating without gravity at 1 m/s: with linear damping d the speed after one step is
    exactly (1 - d dt) times the speed before (float32 rounding only).
    """
    model = single_box(z=2.0, gravity=(0.0, 0.0, 0.0), attributes={"steel:rigid_body_linear_damping": 0.0})
    solver = SolverSteel(model)
    s0, s1 = model.state(), model.state()
    s0.joint_qd.assign(np.array([1.0, 0, 0, 0, 0, 0], np.float32))
    dt = 0.01
    solver.step(s0, s1, None, None, dt)
    assert float(s1.joint_qd.numpy()[0]) == pytest.approx(1.0, abs=1e-6)
    model.steel.rigid_body_linear_damping.fill_(2.0)  # no notify_model_changed
    solver.step(s1, s0, None, None, dt)
    assert float(s0.joint_qd.numpy()[0]) == pytest.approx(1.0 - 2.0 * dt, abs=1e-6)
    # Validation of edited values stays at notify_model_changed.
    model.steel.rigid_body_linear_damping.fill_(-1.0)
    with pytest.raises(ValueError, match="rigid_body_linear_damping"):
        solver.notify_model_changed(newton.ModelFlags.BODY_PROPERTIES)
