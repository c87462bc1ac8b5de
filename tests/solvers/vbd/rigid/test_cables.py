"""Cables (``ModelBuilder.add_rod``) in SolverVBD's rigid AVBD stage against known answers and Newton's SolverVBD.

Known answers: a cable hanging from a held top segment stretches by ``Σ W_i / k`` (each joint carries
the weight below it); a horizontal cantilever sags by the discrete small-angle beam sum
``Σ θ_i l_i`` with ``θ_i = M_i / k_b``; with Dahl friction a bent and released cable keeps the residual
bend the Dahl law predicts and its moment–bend loop encloses area (none without Dahl).
"""

from __future__ import annotations

import math
import unittest
import warnings

import numpy as np
import warp as wp

import newton
from steel.solvers.vbd import SolverVBD

G = 9.81  # [m/s²]
DT = 1.0 / 600.0  # [s]
SEG = 0.1  # segment length [m]


def _cable(points, cls=SolverVBD, dahl=None, gravity=-G, **rod_kw):
    """A rod through ``points`` whose first segment is kinematic (held); returns the finalized model.

    ``dahl`` = (ε_max [rad], τ) authors Dahl friction on every cable joint.
    """
    b = newton.ModelBuilder(gravity=(0.0, 0.0, gravity))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if cls is SolverVBD:
            cls.register_custom_attributes(b, dahl_defaults_enabled=False)
        else:
            cls.register_custom_attributes(b)
    bodies, joints = b.add_rod(rod=newton.Rod(points=np.asarray(points, float), radius=0.01), **rod_kw)
    b.body_flags[bodies[0]] = int(newton.BodyFlags.KINEMATIC)
    if dahl is not None:
        eps, tau = b.custom_attributes["vbd:dahl_eps_max"], b.custom_attributes["vbd:dahl_tau"]
        for j in joints:
            eps.values[j] = dahl[0]
            tau.values[j] = dahl[1]
    b.color()
    return b.finalize(device="cpu")


def _run(model, steps, cls=SolverVBD, torque=None, record=None, **options):
    """Step ``steps`` times; ``torque(i)`` gives a world torque on the last body [N·m]."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = cls(model, **options)
    s0, s1 = model.state(), model.state()
    out = []
    for i in range(steps):
        if torque is not None:
            f = np.zeros((model.body_count, 6), np.float32)
            f[-1, 3:] = torque(i)
            s0.body_f.assign(f)
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
        if record is not None:
            out.append(record(s0))
    return s0, out, solver


def _segment_mass(model) -> float:
    return float(model.body_mass.numpy()[1])


class TestHangingCable(unittest.TestCase):
    N = 10

    def _hanging(self, cls=SolverVBD):
        points = [[0.0, 0.0, 2.0 - SEG * i] for i in range(self.N + 1)]
        model = _cable(points, cls=cls, stretch_stiffness=1.0e3, stretch_damping=2.0, bend_stiffness=0.0)
        state, _, _ = _run(model, 3000, cls=cls)
        q = state.body_q.numpy()
        return model, (q[0, 2] - q[-1, 2]) - SEG * (self.N - 1), q

    def test_hanging_cable_stretches_by_the_weight_over_the_stiffness(self):
        """Joint i carries the N-1-i segments below it: extension Σ W_i / k = 15.72 mm (k = 1e3 N/m) within 1 %
        (measured +0.34 % after 5 s; the stretch damping has not quite settled the slowest mode); no sideways drift."""
        model, ext, q = self._hanging()
        weight = _segment_mass(model) * G
        expected = sum((self.N - 1 - i) * weight / 1.0e3 for i in range(self.N - 1))
        self.assertAlmostEqual(ext / expected, 1.0, delta=0.01)
        self.assertLess(np.abs(q[:, :2]).max(), 1.0e-6)

    def test_hanging_cable_matches_newtons_solver_vbd(self):
        """Same scene in newton.solvers.SolverVBD: the extensions agree within 1 % (measured 0.2 %)."""
        _, ours, _ = self._hanging()
        _, ref, _ = self._hanging(newton.solvers.SolverVBD)
        self.assertAlmostEqual(ours / ref, 1.0, delta=0.01)

    def test_cable_slots_are_soft_by_default_and_can_be_made_hard(self):
        """Stretch and bend start soft (the registered joint_is_hard default does not apply to cables);
        set_joint_constraint_mode(j, True, JointSlot.STRETCH) makes the stretch hard: the extension falls
        below a tenth of the soft one."""
        points = [[0.0, 0.0, 2.0 - SEG * i] for i in range(4)]
        model = _cable(points, stretch_stiffness=1.0e3, stretch_damping=2.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solver = SolverVBD(model)
        self.assertTrue(np.all(solver.rigid.joints.hard.numpy()[1:] == 0))
        soft, _, _ = _run(model, 1200)
        for j in range(1, model.joint_count):
            solver.set_joint_constraint_mode(j, True, SolverVBD.JointSlot.STRETCH)
        s0, s1 = model.state(), model.state()
        for _ in range(1200):
            solver.step(s0, s1, None, None, DT)
            s0, s1 = s1, s0
        ext = [(s.body_q.numpy()[0, 2] - s.body_q.numpy()[-1, 2]) - 2 * SEG for s in (soft, s0)]
        self.assertGreater(ext[0], 1.0e-3)
        self.assertLess(abs(ext[1]), 0.1 * ext[0])

    def test_anisotropic_rod_material_raises(self):
        """A rod whose twist stiffness differs from its bend stiffness has no two-slot cable form: NotImplementedError."""
        points = [[0.0, 0.0, 2.0 - SEG * i] for i in range(3)]
        model = _cable(points, bend_stiffness=1.0, twist_stiffness=2.0)
        with self.assertRaises(NotImplementedError):
            SolverVBD(model)


class TestCantilever(unittest.TestCase):
    N = 6
    KB = 50.0  # bend stiffness per joint [N·m/rad]

    def _sag(self, cls=SolverVBD, **options):
        points = [[SEG * i, 0.0, 1.0] for i in range(self.N + 1)]
        model = _cable(points, cls=cls, stretch_stiffness=1.0e5, bend_stiffness=self.KB, bend_damping=0.5)
        state, _, _ = _run(model, 1200, cls=cls, **options)
        return model, 1.0 - state.body_q.numpy()[-1, 2]

    def test_cantilever_sags_by_the_discrete_beam_sum(self):
        """Joint i (node at (i+1) L) carries M_i = Σ_{j>i} m g ((j + ½) L - (i+1) L), bends θ_i = M_i / k_b, and the
        tip segment's centre sags Σ θ_i ((N - ½) L - (i+1) L) = 6.90 mm; within 2 % (small-angle theory at
        about 0.01 rad plus the stretch slot's own sag; measured +0.7 %, the same at 50 iterations)."""
        model, sag = self._sag()
        w = _segment_mass(model) * G
        expected = 0.0
        for i in range(self.N - 1):
            node = (i + 1) * SEG
            moment = sum(w * ((j + 0.5) * SEG - node) for j in range(i + 1, self.N))
            expected += moment / self.KB * ((self.N - 0.5) * SEG - node)
        self.assertAlmostEqual(sag / expected, 1.0, delta=0.02)

    def test_cantilever_matches_newtons_solver_vbd(self):
        """Same scene in newton.solvers.SolverVBD at 50 iterations: the tip sags agree within 1 % (measured 0.2 %).
        At the default 10 iterations the reference sags 8.50 mm (22 % past the beam sum, unchanged over 6 s; not
        investigated, probably its first iterate at the inertial target, which ours replaces by the adaptive
        start); ours 6.95 mm at both counts."""
        _, ours = self._sag()
        _, ref = self._sag(newton.solvers.SolverVBD, iterations=50)
        self.assertAlmostEqual(ours / ref, 1.0, delta=0.01)


def _dahl_residual(peak_torque, k, eps, tau):
    """Dahl-law prediction for one bend joint loaded monotonically from rest to ``peak_torque`` [N·m] and released.

    Loading: κ + ε s = T/k with s = 1 - exp(-κ/(τ ε)); unloading to T = 0: s = -1 + (s_m + 1) exp(-(κ_m - κ)/(τ ε)).
    Returns (κ_m, κ_residual) [rad], by bisection.
    """
    length = tau * eps

    def solve(f, lo, hi):
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if f(mid) < 0.0 else (lo, mid)
        return 0.5 * (lo + hi)

    k_m = solve(lambda x: x + eps * (1.0 - math.exp(-x / length)) - peak_torque / k, 0.0, peak_torque / k)
    s_m = 1.0 - math.exp(-k_m / length)
    res = solve(lambda x: x + eps * (-1.0 + (s_m + 1.0) * math.exp(-(k_m - x) / length)), -eps, k_m)
    return k_m, res


def _dahl_loop_area(peak_torque, k, eps, tau):
    """∫ T dκ [J] along the predicted loading curve minus the unloading one (:func:`_dahl_residual`'s cycle)."""
    length = tau * eps
    k_m, res = _dahl_residual(peak_torque, k, eps, tau)
    s_m = 1.0 - math.exp(-k_m / length)
    x = np.linspace(0.0, k_m, 20001)
    load = np.trapezoid(k * x + k * eps * (1.0 - np.exp(-x / length)), x)
    x = np.linspace(res, k_m, 20001)
    unload = np.trapezoid(k * x + k * eps * (-1.0 + (s_m + 1.0) * np.exp(-(k_m - x) / length)), x)
    return float(load - unload)


class TestDahlFriction(unittest.TestCase):
    K = 1.0  # bend stiffness [N·m/rad]
    PEAK = 0.3  # [N·m]

    def _cycle(self, dahl):
        """Two segments along x, no gravity; a torque about y on the free one ramps 0 → PEAK over 1 s, holds 0.5 s,
        ramps back to 0 over 1 s and stays off 1 s. Returns per-step (torque, bend about y)."""
        model = _cable([[0.0, 0.0, 1.0], [SEG, 0.0, 1.0], [2 * SEG, 0.0, 1.0]], dahl=dahl, gravity=0.0,
                       stretch_stiffness=1.0e5, bend_stiffness=self.K, bend_damping=0.02)

        def torque_at(i):
            t = i * DT
            ramp = min(t, 1.0) - min(max(t - 1.5, 0.0), 1.0)
            return (0.0, self.PEAK * ramp, 0.0)

        def bend(state):
            x, y, z, w = state.body_q.numpy()[-1, 3:]
            q0 = np.array([0.0, math.sqrt(0.5), 0.0, math.sqrt(0.5)])  # rest orientation: +z along +x
            # relative rotation q q0⁻¹ about world y
            rel_y = w * -q0[1] + y * q0[3] - (x * q0[2] - z * q0[0])
            rel_w = w * q0[3] + y * q0[1]
            return 2.0 * math.atan2(rel_y, rel_w)

        steps = int(3.5 / DT)
        _, bends, _ = _run(model, steps, torque=torque_at, record=bend)
        return np.array([torque_at(i)[1] for i in range(steps)]), np.array(bends)

    def test_released_cable_keeps_the_residual_bend_dahl_predicts(self):
        """ε_max = 0.1 rad, τ = 0.5, k = 1 N·m/rad, peak 0.3 N·m: the Dahl law predicts the peak bend 0.2018 rad and
        a residual 0.0820 rad after release; both within 3 % (the damping's lag and the bend's deviation from a
        pure y rotation; measured below 1 %). Without Dahl the cable returns straight (under 1e-3 rad)."""
        peak, residual = _dahl_residual(self.PEAK, self.K, 0.1, 0.5)
        _, bends = self._cycle((0.1, 0.5))
        self.assertAlmostEqual(bends[int(1.5 / DT) - 1] / peak, 1.0, delta=0.03)
        self.assertAlmostEqual(bends[-1] / residual, 1.0, delta=0.03)
        _, plain = self._cycle(None)
        self.assertAlmostEqual(plain[int(1.5 / DT) - 1], self.PEAK / self.K, delta=3e-3)
        self.assertLess(abs(plain[-1]), 1.0e-3)

    def test_moment_bend_loop_has_area_only_with_dahl(self):
        """The area ∫ T dκ between loading and unloading is the Dahl law's 0.0216 J; measured with Dahl within 10 %
        (measured +5.6 %, the bend damping's share), and without Dahl under a fifth of it (damping alone)."""
        expected = _dahl_loop_area(self.PEAK, self.K, 0.1, 0.5)
        areas = []
        for dahl in ((0.1, 0.5), None):
            torque, bends = self._cycle(dahl)
            areas.append(float(np.sum(0.5 * (torque[1:] + torque[:-1]) * np.diff(bends))))
        self.assertAlmostEqual(areas[0] / expected, 1.0, delta=0.1)
        self.assertLess(abs(areas[1]), 0.2 * expected)


if __name__ == "__main__":
    unittest.main()
