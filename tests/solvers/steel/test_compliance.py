"""SolverSteel ``contact_compliance``: the implicit spring-damper law's static answer, counters and errors.

The collision pipeline writes no stiffness for primitive shapes (only hydroelastic contacts carry
one), so these tests give every contact of a ``per_contact_shape_properties`` buffer the stiffness
and damping after each collision pass. Newton's SolverSteel refuses compliance on the CPU
(``NotImplementedError``, checked below); the law's static answer is the oracle.
"""

import warnings

import numpy as np
import pytest

import newton
from steel.solvers import SolverSteel

from .scenes import G, single_box

DT = 1.0 / 240.0
HALF = 0.1  # [m] half extent of the box (8 kg at the default density)


class _Compliant:
    """A box on the ground stepped with compliant contacts of stiffness ``k`` [N/m] and damping ``c`` [N·s/m]."""

    def __init__(self, k, c, *, z=HALF, restitution=0.0, **options):
        self.model = single_box(z=z, restitution=restitution)
        self.k, self.c = k, c
        self.pipeline = newton.CollisionPipeline(self.model)
        self.contacts = newton.Contacts(self.model.rigid_contact_max, 0, per_contact_shape_properties=True,
                                        device="cpu")
        options.setdefault("friction_anchor_beta", 0.0)
        self.solver = SolverSteel(self.model, contact_compliance=True, **options)
        self.s0, self.s1 = self.model.state(), self.model.state()

    def step(self, steps, observables=None):
        for _ in range(steps):
            self.pipeline.collide(self.s0, self.contacts)
            self.contacts.rigid_contact_stiffness.fill_(self.k)
            self.contacts.rigid_contact_damping.fill_(self.c)
            self.solver.step(self.s0, self.s1, None, self.contacts, DT, observables=observables)
            self.s0, self.s1 = self.s1, self.s0
        return self.s0


@pytest.mark.parametrize(("k", "c"), [(1.0e5, 200.0), (2.0e4, 0.0)])
def test_resting_box_sinks_its_weight_over_the_summed_contact_stiffness(k, c):
    """At rest F = -k phi per contact: an 8 kg box on 4 contacts of k sinks m g / (4 k) (0.196 mm at 1e5 N/m,
    0.981 mm at 2e4 N/m), whatever the damping: measured within 1.1e-5 relative (float32 of the height
    0.1 m against a 0.2 mm depth), tolerance 4e-5 relative; the contact forces sum to m g (measured 1.2e-7
    relative, tolerance 5e-7) and every contact is counted as compliant."""
    scene = _Compliant(k, c)
    state = scene.step(720)  # 3 s: the undamped case rings down through the sweep's own dissipation
    obs = scene.solver.observables({"contact_f"}, contacts=scene.contacts)
    state = scene.step(1, observables=obs)
    n = int(scene.contacts.rigid_contact_count.numpy()[0])
    weight = float(scene.model.body_mass.numpy()[0]) * G
    assert n == 4
    assert float(state.body_q.numpy()[0, 2]) - HALF == pytest.approx(-weight / (n * k), rel=4e-5)
    # abs: the sign follows the side the observable reports the force on
    assert abs(obs.contact_f.numpy()[:n, 2].sum()) == pytest.approx(weight, rel=5e-7)
    assert scene.solver.compliance_contact_count == n
    assert scene.solver.compliance_skipped_contact_count == 0


def _law_trajectory(z0, v0, k, c, mass, steps):
    """Height [m] and vertical velocity [m/s] after each step of a box on contacts of summed stiffness ``k``
    and damping ``c``, by the module's law in float64: ``F = max(0, -k phi_next - c u_next)`` with
    ``phi_next = phi + dt u_next``, the damper dropped while the step starts with the gap open
    (``phi > 0``), gravity in the free velocity (symplectic Euler)."""
    z, v, out = z0, v0, []
    for _ in range(steps):
        phi = z - HALF
        damping = c if phi <= 0.0 else 0.0
        free = v - G * DT
        pushed = (mass * free - DT * k * phi) / (mass + DT * DT * k + DT * damping)
        force = -k * (phi + DT * pushed) - damping * pushed
        v = pushed if force > 0.0 else free
        z += DT * v
        out.append((z, v))
    return np.array(out)


@pytest.mark.parametrize(("k", "c"), [(1.0e5, 200.0), (2.0e4, 0.0)])
def test_falling_box_follows_the_compliant_law_through_touchdown_and_rebound(k, c):
    """A box 1 cm above the ground thrown down at 0.5 m/s: over 60 steps (falling with its four contacts' gaps
    open, touching down, rebounding) its height and speed follow the law integrated in float64
    (:func:`_law_trajectory`, four contacts of k and c in parallel). In particular it is not braked before
    touching: the damper only acts once the gap has closed.

    Measured: 2.9e-8 m and 1.9e-6 m/s at most from the law (float32); tolerances 1e-7 m and 6e-6 m/s absolute.
    A damper kept while the gap is open brakes the fall before touching (0.12 m/s off with c = 200 N·s/m).
    """
    scene = _Compliant(k, c, z=HALF + 0.01)
    qd = scene.s0.joint_qd.numpy()
    qd[2] = -0.5  # the FREE joint's linear z [m/s]
    scene.s0.joint_qd.assign(qd)
    ours = []
    for _ in range(60):
        state = scene.step(1)
        ours.append((float(state.body_q.numpy()[0, 2]), float(state.body_qd.numpy()[0, 2])))
    ours = np.array(ours)
    law = _law_trajectory(HALF + 0.01, -0.5, 4 * k, 4 * c, float(scene.model.body_mass.numpy()[0]), 60)
    assert ours[:, 1].max() > 0.1  # it rebounded: the comparison covers touchdown and lift-off
    np.testing.assert_allclose(ours[:, 0], law[:, 0], rtol=0, atol=1e-7)
    np.testing.assert_allclose(ours[:, 1], law[:, 1], rtol=0, atol=6e-6)


def test_contacts_beyond_the_gap_gate_count_as_skipped():
    """A box 5 mm above the ground with contact_gap_gate = 1 mm: its speculative contacts get no rows on
    purpose, so they are skipped, not compliant; once it lands they are compliant."""
    scene = _Compliant(1.0e5, 100.0, z=HALF + 0.005, contact_gap_gate=0.001)
    scene.step(1)
    n = int(scene.contacts.rigid_contact_count.numpy()[0])
    assert n == 4
    assert scene.solver.compliance_skipped_contact_count == n
    assert scene.solver.compliance_contact_count == 0
    scene.step(240)
    assert scene.solver.compliance_contact_count == 4
    assert scene.solver.compliance_skipped_contact_count == 0


def test_counters_read_zero_without_compliance():
    solver = SolverSteel(single_box())
    assert solver.compliance_contact_count == 0
    assert solver.compliance_skipped_contact_count == 0


@pytest.mark.parametrize("options", [
    {"friction_anchor_beta": 0.2},
    {"iterations": 0},
    {"contact_warmstart": True},
    {"velocity_iterations": 2},
    {"contact_regularization": 0.5},
    {"friction_mode": "bisection"},
    {"contact_friction_position_iterations": 4},
])
def test_compliance_rejects_the_options_it_cannot_be_combined_with(options):
    with pytest.raises(ValueError, match="contact_compliance"):
        SolverSteel(single_box(), contact_compliance=True, **options)


def test_omitted_anchor_beta_selects_point_friction_with_a_warning():
    with pytest.warns(newton.NewtonWarning, match="point friction"):
        solver = SolverSteel(single_box(), contact_compliance=True)
    assert solver.friction_anchor_beta == 0.0


def test_contacts_without_material_arrays_raise_at_step():
    model = single_box()
    solver = SolverSteel(model, contact_compliance=True, friction_anchor_beta=0.0)
    contacts = newton.CollisionPipeline(model).contacts()  # no per-contact stiffness
    with pytest.raises(ValueError, match="contact_compliance.*rigid_contact_stiffness"):
        solver.step(model.state(), model.state(), None, contacts, DT)


def test_positive_restitution_on_a_compliant_contact_raises_unless_restitution_is_off():
    scene = _Compliant(1.0e5, 0.0, restitution=0.5)
    with pytest.raises(ValueError, match="restitution"):
        scene.step(1)
    scene = _Compliant(1.0e5, 0.0, restitution=0.5, enable_restitution=False)
    scene.step(1)
    assert scene.solver.compliance_contact_count == 4


def test_compliant_contact_lost_to_capacity_raises_even_with_warnings_off():
    """Three rows per contact: a capacity of 6 keeps two of the four contacts and loses two."""
    scene = _Compliant(1.0e5, 0.0, free_body_constraint_max=6, warn_constraint_overflow=False)
    with pytest.raises(RuntimeError, match="capacity"):
        scene.step(1)


def test_reference_refuses_compliance_on_the_cpu():
    """Newton's SolverSteel builds compliance for CUDA only; ours is the CPU path."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NotImplementedError):
            newton.solvers.SolverSteel(single_box(), contact_compliance=True, friction_anchor_beta=0.0)


def test_zero_stiffness_contacts_stay_rigid():
    """k = 0 on every contact: the rigid law holds the box at rest height (sink under 0.01 mm), none compliant."""
    scene = _Compliant(0.0, 0.0)
    state = scene.step(240)
    assert abs(float(state.body_q.numpy()[0, 2]) - HALF) < 1e-5  # [m]
    assert scene.solver.compliance_contact_count == 0
    assert np.isfinite(state.body_q.numpy()).all()
