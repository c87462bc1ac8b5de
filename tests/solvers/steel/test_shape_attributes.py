"""The steel: shape attributes (condim, min_torsional_patch_radius, adhesion): registration,
import names and validation. condim 4 and 6 (test_condim.py, test_rolling.py) and adhesion
(test_adhesion.py) are built; the PhysX patch torsion a positive torsional patch radius switches on is
not, so enabling it must raise NotImplementedError instead of running without it."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel


def _box(**shape_attributes):
    """A free box on a ground plane with the steel: attributes registered; ``shape_attributes`` set on the box."""
    builder = newton.ModelBuilder()
    SolverSteel.register_custom_attributes(builder)
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.1), wp.quat_identity()))
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1,
                          custom_attributes={f"steel:{k}": v for k, v in shape_attributes.items()})
    builder.add_ground_plane()
    return builder.finalize(device="cpu")


def test_shape_attributes_register_with_seed_defaults_and_names():
    """condim 3 (USD newton:steel:condim, not read from MJCF), torsional radius 0, adhesion 0 (MJCF adhesion)."""
    builder = newton.ModelBuilder()
    SolverSteel.register_custom_attributes(builder)
    attrs = builder.custom_attributes
    assert attrs["steel:condim"].default == 3
    assert attrs["steel:condim"].usd_attribute_name == "newton:steel:condim"
    assert attrs["steel:condim"].mjcf_attribute_name != "condim"
    assert attrs["steel:min_torsional_patch_radius"].usd_attribute_name == "physxCollision:minTorsionalPatchRadius"
    assert attrs["steel:adhesion"].usd_attribute_name == "newton:steel:adhesion"
    assert attrs["steel:adhesion"].mjcf_attribute_name == "adhesion"
    model = _box()
    np.testing.assert_array_equal(model.steel.condim.numpy(), [3, 3])
    assert not model.steel.adhesion.numpy().any()
    SolverSteel(model)  # the defaults build


@pytest.mark.parametrize("name, value", [("condim", 1), ("condim", 5), ("adhesion", -1.0),
                                         ("adhesion", float("inf")), ("min_torsional_patch_radius", float("nan")),
                                         ("min_torsional_patch_radius", -0.01)])
def test_invalid_shape_attribute_raises_value_error_at_construction_and_notify(name, value):
    with pytest.raises(ValueError, match=name):
        SolverSteel(_box(**{name: value}))
    model = _box()
    solver = SolverSteel(model)
    getattr(model.steel, name).fill_(value)
    with pytest.raises(ValueError, match=name):
        solver.notify_model_changed(newton.ModelFlags.SHAPE_PROPERTIES)


def test_negative_coefficient_enabled_by_condim_raises_value_error():
    """condim 4 enables shape_material_mu_torsional; a negative value is a ValueError (before the NIE)."""
    model = _box(condim=4)
    model.shape_material_mu_torsional.fill_(-0.1)
    with pytest.raises(ValueError, match="shape_material_mu_torsional"):
        SolverSteel(model)
    model = _box()
    model.shape_material_mu_rolling.fill_(-0.1)  # condim 3: not enabled, ignored
    SolverSteel(model)


def test_solver_built_without_torsion_ignores_a_later_condim_4():
    """condim 4 written after a condim-3 construction is valid and ignored: no spin rows are reserved."""
    model = _box()
    solver = SolverSteel(model)
    model.steel.condim.fill_(4)
    solver.notify_model_changed(newton.ModelFlags.SHAPE_PROPERTIES)
    assert not solver.steel_model.shape_attributes.torsion_enabled


@pytest.mark.parametrize("condim, rows", [(3, 3), (4, 4), (6, 6)])
def test_free_body_rows_per_contact_follow_the_construction_condim(condim, rows):
    """3 rows per free-body contact, 4 with a condim-4 shape (spin), 6 with a condim-6 shape (spin, rolling pair)."""
    model = _box(condim=condim)
    solver = SolverSteel(model)
    assert solver.steel_model.shape_attributes.free_rows_per_contact == rows
    contacts_per_world = newton.CollisionPipeline(model).contacts().rigid_contact_max
    assert solver.free_body_constraint_max == rows * contacts_per_world


def test_solver_built_without_adhesion_ignores_a_later_value():
    """Adhesion written after a construction without any is valid and ignored (rebuild to gain it)."""
    model = _box()
    solver = SolverSteel(model)
    model.steel.adhesion.fill_(2.0)
    solver.notify_model_changed(newton.ModelFlags.SHAPE_PROPERTIES)
    assert not solver.steel_model.shape_attributes.adhesion_enabled
    assert solver.steel_model.shape_attributes.adhesion is not model.steel.adhesion
