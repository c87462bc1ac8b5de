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

    ``dahl`` = (ε_max [rad], τ [rad]) authors Dahl friction on every cable joint.
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


def _run(model, steps, cls=SolverVBD, torque=None, record=None, force=None, record_solver=None, **options):
    """Step ``steps`` times; ``torque(i)`` / ``force(i)`` give a world torque [N·m] / force [N] on the last body.

    Records ``record(state)`` after each step, or ``record_solver(solver)`` when given."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = cls(model, **options)
    s0, s1 = model.state(), model.state()
    out = []
    for i in range(steps):
        if torque is not None or force is not None:
            f = np.zeros((model.body_count, 6), np.float32)
            if torque is not None:
                f[-1, 3:] = torque(i)
            if force is not None:
                f[-1, :3] = force(i)
            s0.body_f.assign(f)
        solver.step(s0, s1, None, None, DT)
        s0, s1 = s1, s0
        if record_solver is not None:
            out.append(record_solver(solver))
        elif record is not None:
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

def _twist_about_x(state) -> float:
    """Rotation of the last body about world x from its rest pose along +x (body +z along the rod) [rad]."""
    x, y, z, w = state.body_q.numpy()[-1, 3:]
    h = math.sqrt(0.5)
    # x and w components of q q0⁻¹, q0 = (0, h, 0, h) the rest orientation (+z turned onto +x)
    return 2.0 * math.atan2(h * (x + z), h * (w + y))


class TestAnisotropicRod(unittest.TestCase):
    """A rod with twist stiffness apart from bend (and shear apart from stretch), as Newton's ``add_rod`` authors it:
    the bend slot resists rotation about the rod with ``twist`` and about the cross axes with ``bend``."""

    N = 4  # segments along +x, the first held: 3 joints
    KB = 20.0  # bend stiffness [N·m/rad]
    KT = 2.0  # twist stiffness [N·m/rad]
    MATERIAL = dict(stretch_stiffness=1.0e5, shear_stiffness=2.0e3, bend_stiffness=KB, twist_stiffness=KT,
                    bend_damping=0.2, twist_damping=0.02)

    def _rod(self, cls=SolverVBD, **kw):
        return _cable([[SEG * i, 0.0, 1.0] for i in range(self.N + 1)], cls=cls, gravity=0.0, **self.MATERIAL, **kw)

    def _twisted(self, torque, cls=SolverVBD, steps=1200, iterations=50):
        """Tip twist under ``torque`` about the rod [rad]."""
        options = {"iterations": iterations}
        model = self._rod(cls)
        state, _, solver = _run(model, steps, cls=cls, torque=lambda i: (torque, 0.0, 0.0), **options)
        return _twist_about_x(state), state, solver

    def _bent(self, load, cls=SolverVBD, **options):
        model = self._rod(cls)
        state, _, _ = _run(model, 1500, cls=cls, force=lambda i: (0.0, 0.0, -load), **options)
        return 1.0 - float(state.body_q.numpy()[-1, 2])

    def _beam_sum(self, load):
        """Joint i at node (i+1) L carries M_i = F ((N - ½) L - (i+1) L) and bends M_i / k_b, and its shear slot gives
        F / k_shear across the rod: the tip segment's centre sags Σ (M_i / k_b) ((N - ½) L - (i+1) L) + (N - 1) F /
        k_shear [m] (stretch stiffness would make the second term 50 times smaller)."""
        arms = [(self.N - 0.5) * SEG - (i + 1) * SEG for i in range(self.N - 1)]
        return sum(load * a / self.KB * a for a in arms) + (self.N - 1) * load / self.MATERIAL["shear_stiffness"]

    def test_torque_twists_each_joint_by_torque_over_twist_stiffness(self):
        """T = 0.1 N·m about the rod: each of the 3 joints twists T / k_t = 0.05 rad, 0.15 rad at the tip (k_b would
        give a tenth). Exact in the discrete model once settled (2 s): measured 2.4e-7 relative on the tip and on
        each joint, float32 rounding; tolerance 7e-7 relative. The twist stays out of bending: the tip's centre
        moves 2.5e-8 m (tolerance 2e-7 m, three float32 steps at 1 m) and the bend stays 5e-7 rad (tolerance 1.5e-6 rad)."""
        twist, state, solver = self._twisted(0.1)
        self.assertAlmostEqual(twist / (3 * 0.1 / self.KT), 1.0, delta=7e-7)
        rest = np.array([(self.N - 0.5) * SEG, 0.0, 1.0])
        self.assertLess(float(np.linalg.norm(state.body_q.numpy()[-1, :3] - rest)), 2.0e-7)
        kappa = solver.joint_kappa_prev.numpy()[1:]
        np.testing.assert_allclose(kappa[:, 2], 0.1 / self.KT, rtol=7e-7)  # twist about the rod [rad]
        self.assertLess(float(np.abs(kappa[:, :2]).max()), 1.5e-6)  # no bend [rad]
        self.assertTrue(np.all(solver.joint_sigma_prev.numpy() == 0.0))  # no Dahl authored

    def test_torque_twist_reaches_equilibrium_at_ten_iterations(self):
        """T / k_t per joint at 10 iterations after 2 s: measured 5e-8 relative (float32), tolerance 4e-7 relative
        (three float32 steps; the stall described next was 20 % off). The tip segment's I/dt² about
        the rod (0.57 N·m/rad) is small beside the twist damping's kd/dt (12 N·m/rad): started every step at the
        inertial target, turned dt² I⁻¹ T = 0.18 rad ahead, ten sweeps left the rod stalled at 1.200 times the
        equilibrium from 2 to 6.7 s (the reference, which starts there, 1.187). The adaptive first iterate scales
        the torque's acceleration by the share the body followed last step, as it does gravity."""
        twist, _, _ = self._twisted(0.1, iterations=10)
        self.assertAlmostEqual(twist / (3 * 0.1 / self.KT), 1.0, delta=4e-7)

    def test_tip_load_bends_by_the_beam_sum_with_bend_stiffness(self):
        """F = 0.2 N across the rod at the tip segment's centre: 0.875 mm of bending with k_b = 20 N·m/rad (k_t would
        give ten times that) plus 0.30 mm of shear with k_shear = 2e3 N/m; within 1 % (small-angle theory at 2.5e-3
        rad; measured +0.39 %)."""
        sag = self._bent(0.2)
        self.assertAlmostEqual(sag / self._beam_sum(0.2), 1.0, delta=0.01)

    def test_twist_and_bend_match_newtons_solver_vbd(self):
        """The same twist and tip-load scenes in newton.solvers.SolverVBD (50 iterations): tip twist and sag agree
        within 1 % (measured 0.2 % and 0.01 %)."""
        twist, _, _ = self._twisted(0.1)
        ref_twist, _, _ = self._twisted(0.1, cls=newton.solvers.SolverVBD)
        self.assertAlmostEqual(twist / ref_twist, 1.0, delta=0.01)
        sag = self._bent(0.2)
        ref_sag = self._bent(0.2, cls=newton.solvers.SolverVBD, iterations=50)
        self.assertAlmostEqual(sag / ref_sag, 1.0, delta=0.01)

    def test_rod_with_unequal_cross_axes_raises(self):
        """Bend about x different from bend about y has no isotropic cross section: ValueError naming the joint."""
        model = self._rod()
        ke = model.joint_target_ke.numpy()
        ke[int(model.joint_qd_start.numpy()[1]) + 3] *= 2.0
        model.joint_target_ke.assign(ke)
        with self.assertRaises(ValueError):
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
        At the default 10 iterations the reference sags 8.50 mm (22 % past the beam sum, unchanged over 6 s: its
        first iterate is the inertial target, test below); ours 6.95 mm at both counts."""
        _, ours = self._sag()
        _, ref = self._sag(newton.solvers.SolverVBD, iterations=50)
        self.assertAlmostEqual(ours / ref, 1.0, delta=0.01)

    def test_inertial_first_iterate_sags_as_newtons_legacy_path(self):
        """Newton's SolverVBD starts a body's step at its inertial target: ours started there too (adaptive_init off)
        sags as its legacy path at the default 10 iterations, within 0.5 % (measured 8.830 against 8.825 mm, its
        default path 8.50 mm), where the adaptive start (our default) stays at 6.95 mm, 0.7 % past the beam sum."""
        model = _cable([[SEG * i, 0.0, 1.0] for i in range(self.N + 1)], stretch_stiffness=1.0e5,
                       bend_stiffness=self.KB, bend_damping=0.5)
        solver = SolverVBD(model)
        solver.rigid.adaptive_init = False
        s0, s1 = model.state(), model.state()
        for _ in range(1200):
            solver.step(s0, s1, None, None, DT)
            s0, s1 = s1, s0
        ours = 1.0 - s0.body_q.numpy()[-1, 2]
        _, ref = self._sag(newton.solvers.SolverVBD, rigid_compliant_alm=False)
        self.assertAlmostEqual(ours / ref, 1.0, delta=0.005)


def _dahl_residual(peak_torque, k, eps, tau):
    """Dahl-law prediction for one bend joint loaded monotonically from rest to ``peak_torque`` [N·m] and released.

    Loading: κ + ε s = T/k with s = 1 - exp(-κ/τ); unloading to T = 0: s = -1 + (s_m + 1) exp(-(κ_m - κ)/τ).
    Returns (κ_m, κ_residual) [rad], by bisection.
    """
    length = tau

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
    length = tau
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

    def _cycle(self, dahl, cls=SolverVBD, record=None):
        """Two segments along x, no gravity; a torque about y on the free one ramps 0 → PEAK over 1 s, holds 0.5 s,
        ramps back to 0 over 1 s and stays off 1 s. Returns per-step (torque, bend about y), or what ``record(solver)``
        returns after each step."""
        model = _cable([[0.0, 0.0, 1.0], [SEG, 0.0, 1.0], [2 * SEG, 0.0, 1.0]], cls=cls, dahl=dahl, gravity=0.0,
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
        if record is not None:
            return np.array(_run(model, steps, cls=cls, torque=torque_at, record_solver=record)[1])
        _, bends, _ = _run(model, steps, torque=torque_at, record=bend)
        return np.array([torque_at(i)[1] for i in range(steps)]), np.array(bends)

    def test_friction_moment_follows_newtons_solver_vbd(self):
        """The bend joint's (κ_y, σ_y) from joint_kappa_prev / joint_sigma_prev through the load-hold-release cycle,
        side by side with newton.solvers.SolverVBD on the same model: σ within 3 % of the cap k ε_max = 0.1 N·m at
        every step (measured 1.1 %) and κ within 3 % of the peak bend 0.199 rad (measured 1.5 %; the residual
        0.0819 rad against 0.0811): the rest is the first iterate (ours adaptive, the reference's inertial) and
        the damping's lag. Regression: with the saturation bend read as τ ε_max (0.005 rad instead of 0.05) the
        friction was ten times stiffer than the reference's at small bends."""

        def record(solver):
            kappa, sigma = solver.joint_kappa_prev.numpy(), solver.joint_sigma_prev.numpy()
            return float(kappa[-1, 1]), float(sigma[-1, 1])

        ours = self._cycle((0.1, 0.05), record=record)
        ref = self._cycle((0.1, 0.05), cls=newton.solvers.SolverVBD, record=record)
        self.assertGreater(np.abs(ref[:, 1]).max(), 0.09)  # the friction saturates: the comparison is not vacuous
        self.assertLess(np.abs(ours[:, 1] - ref[:, 1]).max(), 0.03 * 0.1)
        self.assertLess(np.abs(ours[:, 0] - ref[:, 0]).max(), 0.03 * np.abs(ref[:, 0]).max())

    def test_released_cable_keeps_the_residual_bend_dahl_predicts(self):
        """ε_max = 0.1 rad, τ = 0.05 rad, k = 1 N·m/rad, peak 0.3 N·m: the Dahl law predicts the peak bend 0.2018 rad and
        a residual 0.0820 rad after release; both within 3 % (the damping's lag and the bend's deviation from a
        pure y rotation; measured below 1 %). Without Dahl the cable returns straight (under 1e-3 rad)."""
        peak, residual = _dahl_residual(self.PEAK, self.K, 0.1, 0.05)
        _, bends = self._cycle((0.1, 0.05))
        self.assertAlmostEqual(bends[int(1.5 / DT) - 1] / peak, 1.0, delta=0.03)
        self.assertAlmostEqual(bends[-1] / residual, 1.0, delta=0.03)
        _, plain = self._cycle(None)
        self.assertAlmostEqual(plain[int(1.5 / DT) - 1], self.PEAK / self.K, delta=3e-3)
        self.assertLess(abs(plain[-1]), 1.0e-3)

    def test_moment_bend_loop_has_area_only_with_dahl(self):
        """The area ∫ T dκ between loading and unloading is the Dahl law's 0.0216 J; measured with Dahl within 10 %
        (measured +5.6 %, the bend damping's share), and without Dahl under a fifth of it (damping alone)."""
        expected = _dahl_loop_area(self.PEAK, self.K, 0.1, 0.05)
        areas = []
        for dahl in ((0.1, 0.05), None):
            torque, bends = self._cycle(dahl)
            areas.append(float(np.sum(0.5 * (torque[1:] + torque[:-1]) * np.diff(bends))))
        self.assertAlmostEqual(areas[0] / expected, 1.0, delta=0.1)
        self.assertLess(abs(areas[1]), 0.2 * expected)


    def test_dahl_twist_state_is_exposed_per_joint(self):
        """Dahl on twist (ε_max = 0.1 rad, τ = 0.05 rad) with k_t = 1 N·m/rad (bend 10) on a two-segment rod along x: a torque about the
        rod ramps to 0.3 N·m, holds, and is released. ``joint_kappa_prev`` z is the joint's twist and
        ``joint_sigma_prev`` z its friction moment: while held k_t κ_z + σ_z carries the torque and κ_z is the Dahl
        law's peak twist, and after release the twist keeps the Dahl law's residual (0.0820 rad) while
        k_t κ_z + σ_z returns to zero. Measured at float32 rounding: 1.8e-7, 6e-8 and 1.2e-7 relative and
        4.5e-8 N·m; tolerances 5e-7, 4e-7, 4e-7 relative and 1.5e-7 N·m absolute (a friction moment 2 % off
        is 2e-3 N·m). The bend components stay at zero: κ 5e-9 rad, σ 1.2e-7 N·m measured; tolerances
        1.5e-8 rad and 4e-7 N·m."""
        model = _cable([[0.0, 0.0, 1.0], [SEG, 0.0, 1.0], [2 * SEG, 0.0, 1.0]], dahl=(0.1, 0.05), gravity=0.0,
                       stretch_stiffness=1.0e5, bend_stiffness=10.0, twist_stiffness=self.K, bend_damping=0.2,
                       twist_damping=0.02)

        def torque_at(i):
            t = i * DT
            return (self.PEAK * (min(t, 1.0) - min(max(t - 1.5, 0.0), 1.0)), 0.0, 0.0)

        steps = int(3.5 / DT)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solver = SolverVBD(model)
        s0, s1 = model.state(), model.state()
        moments = {}
        for i in range(steps):
            f = np.zeros((model.body_count, 6), np.float32)
            f[-1, 3:] = torque_at(i)
            s0.body_f.assign(f)
            solver.step(s0, s1, None, None, DT)
            s0, s1 = s1, s0
            if i in (int(1.5 / DT) - 1, steps - 1):
                kappa, sigma = solver.joint_kappa_prev.numpy()[1:].copy(), solver.joint_sigma_prev.numpy()[1:].copy()
                moments[i] = (kappa, sigma)
        peak, residual = _dahl_residual(self.PEAK, self.K, 0.1, 0.05)
        kappa, sigma = moments[int(1.5 / DT) - 1]
        np.testing.assert_allclose(self.K * kappa[:, 2] + sigma[:, 2], self.PEAK, rtol=5e-7)
        np.testing.assert_allclose(kappa[:, 2], peak, rtol=4e-7)
        kappa, sigma = moments[steps - 1]
        np.testing.assert_allclose(kappa[:, 2], residual, rtol=4e-7)
        np.testing.assert_allclose(self.K * kappa[:, 2] + sigma[:, 2], 0.0, rtol=0, atol=1.5e-7)
        self.assertLess(float(np.abs(kappa[:, :2]).max()), 1.5e-8)
        self.assertLess(float(np.abs(sigma[:, :2]).max()), 4e-7)

if __name__ == "__main__":
    unittest.main()
