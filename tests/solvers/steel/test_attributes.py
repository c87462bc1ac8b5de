"""The steel: rigid-body attributes: USD import, defaults and validation."""

import math
from pathlib import Path

import numpy as np
import pytest
import warp as wp

import newton
import newton.solvers
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
    assert float(solver.steel_model.attributes.angular_damping.numpy()[0]) == pytest.approx(0.3)


def test_unregistered_attributes_take_the_seed_defaults():
    """Without registration every body gets angular damping 0.05 and unbounded velocities."""
    solver = SolverSteel(single_box())
    assert float(solver.steel_model.attributes.angular_damping.numpy()[0]) == pytest.approx(0.05)
    assert float(solver.steel_model.attributes.linear_damping.numpy()[0]) == 0.0
    assert np.isinf(solver.steel_model.attributes.max_linear_velocity.numpy()[0])


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


def _spinning_box(attributes):
    """single_box floating without gravity at 3 m/s along x and 4 rad/s about z; returns model, solver, states."""
    model = single_box(z=2.0, gravity=(0.0, 0.0, 0.0), attributes=attributes)
    solver = SolverSteel(model)
    s0, s1 = model.state(), model.state()
    s0.joint_qd.assign(np.array([3.0, 0, 0, 0, 0, 4.0], np.float32))
    return model, solver, s0, s1


# attribute, value written into a new array, the expected (v_x [m/s], w_z [rad/s]) after one step of 0.01 s
_REPLACEMENTS = [
    ("rigid_body_angular_damping", 0.0, (3.0, 4.0)),  # no damping: the spin holds
    ("rigid_body_linear_damping", 2.0, (3.0 * (1.0 - 2.0 * 0.01), 4.0)),  # v *= 1 - d dt
    ("rigid_body_max_linear_velocity", 1.0, (1.0, 4.0)),  # |v| clamped
    ("rigid_body_max_angular_velocity", 1.0, (3.0, 1.0)),  # |w| clamped
]


@pytest.mark.parametrize("name, value, expected", _REPLACEMENTS)
def test_a_replaced_attribute_array_is_read_at_the_next_step_without_notify(name, value, expected):
    """model.steel.<name> = a new array is read by the next step, as the reference does (its notify is not needed).

    Before, the solver kept reading the array it had bound at construction until notify_model_changed: the
    replaced angular damping of 0 still damped the spin by 0.05 dt per step. Other damping is 0 here, so each
    expected value is exact up to float32 rounding (atol 1e-5, the velocities are of order 1)."""
    attributes = {f"steel:{n}": 0.0 for n in ("rigid_body_angular_damping", "rigid_body_linear_damping")}
    attributes[f"steel:{name}"] = 1.0 if name.endswith("damping") else math.inf  # [1/s] or [m/s, rad/s] until replaced
    model, solver, s0, s1 = _spinning_box(attributes)
    solver.step(s0, s1, None, None, 0.01)
    setattr(model.steel, name, wp.full(model.body_count, value, dtype=wp.float32, device=model.device))
    s1.joint_qd.assign(np.array([3.0, 0, 0, 0, 0, 4.0], np.float32))
    solver.step(s1, s0, None, None, 0.01)
    qd = s0.joint_qd.numpy()
    np.testing.assert_allclose((qd[0], qd[5]), expected, atol=1e-5)
    # and it stays the live array: an in-place edit of the new array is read too
    getattr(model.steel, name).fill_(RIGID_DEFAULTS[name])
    solver.step(s0, s1, None, None, 0.01)
    np.testing.assert_allclose(s1.joint_qd.numpy()[[0, 5]], (qd[0], qd[5]), atol=1e-5)


RIGID_DEFAULTS = {"rigid_body_angular_damping": 0.0, "rigid_body_linear_damping": 0.0,
                  "rigid_body_max_linear_velocity": math.inf, "rigid_body_max_angular_velocity": math.inf}


def test_a_replaced_angular_damping_matches_the_reference_step_for_step():
    """The brief's case side by side with newton.solvers.SolverSteel: 10 steps at the default angular damping 0.05,
    then model.steel.rigid_body_angular_damping replaced by zeros, 10 more. Both hold the spin at 3.98004 rad/s
    after the replacement (ours before the fix: 3.96018, still damped). rtol 3e-6: float32 rounding (measured
    1.1e-6 at the last step; the damping of one step is 5e-4)."""
    spins = {}
    for cls in (SolverSteel, newton.solvers.SolverSteel):
        builder = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
        cls.register_custom_attributes(builder)
        body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 1.0), wp.quat_identity()))
        builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
        model = builder.finalize(device="cpu")
        solver = cls(model)
        s0, s1 = model.state(), model.state()
        s0.joint_qd.assign(np.array([3.0, 0, 0, 0, 0, 4.0], np.float32))
        spin = []
        for i in range(20):
            if i == 10:
                model.steel.rigid_body_angular_damping = wp.zeros(1, dtype=wp.float32, device="cpu")
            solver.step(s0, s1, None, None, 0.01)
            s0, s1 = s1, s0
            spin.append(float(s0.joint_qd.numpy()[5]))
        spins[cls.__module__] = spin
    ours, reference = spins.values()
    np.testing.assert_allclose(ours, reference, rtol=3e-6)
    np.testing.assert_allclose(ours[10:], 3.98004, rtol=3e-6)  # held after the replacement


def test_a_replaced_attribute_array_is_checked_when_first_read():
    """A replacement of another length or dtype raises ValueError naming it (the kernel would read past it); one with
    a negative damping raises as at construction; a valid one is the array the contact rows read."""
    model, solver, s0, s1 = _spinning_box({"steel:rigid_body_angular_damping": 0.0})
    model.steel.rigid_body_linear_damping = wp.zeros(3, dtype=wp.float32, device="cpu")
    with pytest.raises(ValueError, match=r"model.steel.rigid_body_linear_damping was replaced by .* shape \(3,\)"):
        solver.step(s0, s1, None, None, 0.01)
    model.steel.rigid_body_linear_damping = wp.zeros(1, dtype=wp.float64, device="cpu")
    with pytest.raises(ValueError, match="must be a float32 wp.array of 1 values"):
        solver.step(s0, s1, None, None, 0.01)
    model.steel.rigid_body_linear_damping = wp.full(1, -1.0, dtype=wp.float32, device="cpu")
    with pytest.raises(ValueError, match=r"steel:rigid_body_linear_damping of body 0 .* must be non-negative"):
        solver.step(s0, s1, None, None, 0.01)
    model.steel.rigid_body_linear_damping = wp.zeros(1, dtype=wp.float32, device="cpu")
    new = model.steel.rigid_body_max_depenetration_velocity = wp.full(1, 0.5, dtype=wp.float32, device="cpu")
    solver.step(s0, s1, None, None, 0.01)
    assert solver.steel_model.attributes.max_depenetration_velocity is new
