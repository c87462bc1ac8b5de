"""Inject small physics bugs one at a time and report which tests catch each one.

Each mutation is a one-line text edit applied to a temporary copy of ``src/``; the named tests are
then run against that copy (``PYTHONPATH`` puts it ahead of the editable install) and stop at the
first failure (``-x``). A mutation no test catches is a hole in the suite, or a change that does not
alter behaviour (an equivalent mutant; the ``note`` of such a mutation says why). The repository is
never touched. Each mutation recompiles the Warp modules it edits, so an area takes some minutes.

    python -m benchmarks.mutations --list                 # areas and mutation names
    python -m benchmarks.mutations --area sleeping        # one area
    python -m benchmarks.mutations --area joints limit    # names containing "limit" in that area
    python -m benchmarks.mutations                        # every area
    python -m benchmarks.mutations --area vbd-rigid --exec "python my_scene.py" warm   # run a command
                                                          # under each chosen mutation instead of its tests
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Mutation:
    area: str  # one of AREAS
    name: str
    path: str  # under src/steel
    old: str  # must occur exactly once
    new: str
    tests: tuple[str, ...]  # pytest node ids or files, relative to the repository
    note: str = ""  # for a mutation expected to survive: why it changes no behaviour


AREAS = {
    "core": "articulation core, SolverSteel rows and shared input checks",
    "vbd-particles": "SolverVBD particles: prediction, contacts, self-contact, elasticity, attachments",
    "vbd-rigid": "SolverVBD rigid bodies: AVBD joints, contacts, cables (Dahl), particle and proxy coupling",
    "sleeping": "SolverSteel sleeping: quiet timers, thresholds, islands, wake reasons",
    "joints": "SolverSteel joint models: limits, drives, joint friction, mimic, loop closures, velocity limits",
    "contacts": "SolverSteel contact models: compliance, torsion, rolling, friction modes, patches, adhesion",
}

CORE = (
    Mutation(
        "core", "prismatic motion subspace flipped",
        "articulation/kinematics.py",
        "col = prismatic_column(wp.quat_rotate(rot, joint_axis[qd_start]))",
        "col = prismatic_column(wp.quat_rotate(rot, -joint_axis[qd_start]))",
        ("tests/solvers/test_joint_types_stepped.py", "tests/articulation/test_core_vs_newton.py::"
         "test_every_joint_type_matches_newton_at_random_states"),
    ),
    Mutation(
        "core", "body_parent_f contact wrench sign flipped",
        "articulation/dynamics.py",
        "            fe = body_f_extra[child]\n            f = f - wrench_from_point(",
        "            fe = body_f_extra[child]\n            f = f + wrench_from_point(",
        ("tests/solvers/test_parent_f_under_contact.py",),
    ),
    Mutation(
        "core", "gravity x 1.01",
        "articulation/dynamics.py",
        "base_accel = wp.spatial_vector(-gravity[plan.gravity_index[art]], wp.vec3(0.0))",
        "base_accel = wp.spatial_vector(-1.01 * gravity[plan.gravity_index[art]], wp.vec3(0.0))",
        ("tests/solvers/steel/test_contacts.py::test_resting_box_contact_forces_sum_to_its_weight",
         "tests/solvers/steel/test_dynamics.py::test_small_angle_pendulum_period_matches_two_pi_sqrt_l_over_g",
         "tests/solvers/steel/test_dynamics.py::test_static_pendulum_parent_wrench_is_its_weight",
         "tests/solvers/featherstone/test_analytic.py::test_small_angle_pendulum_period"),
    ),
    Mutation(
        "core", "SolverSteel friction mu x 0.98",
        "solvers/steel/contacts/rows.py",
        "mu = (0.5 * cm_shape_mu[s0] + 0.5 * cm_shape_mu[s1]) * opt.friction_scale",
        "mu = (0.49 * cm_shape_mu[s0] + 0.49 * cm_shape_mu[s1]) * opt.friction_scale",
        ("tests/solvers/steel/test_contacts.py::test_box_on_a_20_degree_incline_sticks_or_slides_per_coulomb",),
    ),
    Mutation(
        "core", "rotational inertia transposed wrong in body_spatial_inertia (tile and loop paths share it)",
        "articulation/dynamics.py",
        "R * joints.body_inertia[body] * wp.transpose(R)), com",
        "wp.transpose(R) * joints.body_inertia[body] * R), com",
        ("tests/solvers/featherstone/test_tiles.py",),
    ),
    Mutation(
        "core", "SolverSteel pair friction is the max of the two shapes, not the mean",
        "solvers/steel/contacts/rows.py",
        "mu = (0.5 * cm_shape_mu[s0] + 0.5 * cm_shape_mu[s1]) * opt.friction_scale",
        "mu = wp.max(cm_shape_mu[s0], cm_shape_mu[s1]) * opt.friction_scale",
        ("tests/solvers/test_mixed_materials.py::test_steel_friction_is_the_mean_of_the_two_shapes_as_in_the_reference",),
    ),
    Mutation(
        "core", "SolverSteel never rebuilds the mass matrix after the first step",
        "solvers/steel/solver.py",
        "refresh = self._refresh_mass_matrix or self._step_count % opts.update_mass_matrix_interval == 0",
        "refresh = self._step_count == 0",
        ("tests/solvers/test_joint_types_stepped.py::test_the_cartpole_steps_like_newtons_featherstone",
         "tests/solvers/test_joint_types_stepped.py::test_a_swinging_double_pendulum_rebuilds_its_mass_matrix",
         "tests/solvers/steel/test_dynamics.py::test_drive_gain_and_dt_edits_take_effect_between_mass_matrix_rebuilds"),
    ),
    Mutation(
        "core", "SolverSteel keeps a stale implicit diagonal between rebuilds",
        "solvers/steel/predict.py",
        "        changed_out[0] = 1",
        "        changed_out[0] = 0",
        ("tests/solvers/steel/test_dynamics.py::test_drive_gain_and_dt_edits_take_effect_between_mass_matrix_rebuilds",),
    ),
    Mutation(
        "core", "dt checked in float64 only",
        "solvers/inputs.py",
        "dt32 = float(np.float32(value))",
        "dt32 = value",
        ("tests/solvers/test_shared_inputs.py",),
    ),
)


P = "solvers/vbd/particles/"
VBD_PARTICLES = (
    Mutation(
        "vbd-particles", "State.particle_f applied with the wrong sign",
        P + "predict.py",
        "y = x + dt * v + dt * dt * (g + particle_f_in[i] * inv_m)",
        "y = x + dt * v + dt * dt * (g - particle_f_in[i] * inv_m)",
        ("tests/solvers/test_external_forces.py",),
    ),
    Mutation(
        "vbd-particles", "self-contact truncation bound doubled",
        P + "self_contact.py",
        "self.half_relaxation = 0.5 * float(opts.particle_conservative_bound_relaxation)",
        "self.half_relaxation = 1.0 * float(opts.particle_conservative_bound_relaxation)",
        ("tests/solvers/vbd/test_self_contact.py::test_thrown_cloth_never_passes_through_the_pinned_one",),
    ),
    Mutation(
        "vbd-particles", "rigid-soft DAT motion budget doubled",
        "solvers/vbd/dat.py",
        "data.budget = data.half_relaxation * self.radius",
        "data.budget = 2.0 * data.half_relaxation * self.radius",
        ("tests/solvers/vbd/test_dat.py::test_motion_budget_per_step",),
    ),
    Mutation(
        "vbd-particles", "kinematic shape rotation ignored for particle contacts",
        P + "contacts.py",
        "disp = dt * (wp.spatial_top(qd) + wp.cross(wp.spatial_bottom(qd), point - com))",
        "disp = dt * wp.spatial_top(qd)",
        ("tests/solvers/vbd/test_shape_contacts.py",),
    ),
    Mutation(
        "vbd-particles", "particle contact damping mixed by the max instead of the mean",
        P + "contacts.py",
        "kd = 0.5 * (soft_kd + shape_kd[shape])",
        "kd = wp.max(soft_kd, shape_kd[shape])",
        ("tests/solvers/vbd/test_particle_contacts.py::test_contact_damping_mixes_by_the_mean",),
    ),
    Mutation(
        "vbd-particles", "particle contact friction mixed by the arithmetic mean instead of the geometric",
        P + "contacts.py",
        "mu = wp.sqrt(wp.max(soft_mu * shape_mu[shape], 0.0))",
        "mu = 0.5 * (soft_mu + shape_mu[shape])",
        ("tests/solvers/vbd/test_particle_contacts.py::test_contact_materials_mix_as_newton_does",),
    ),
    Mutation(
        "vbd-particles", "particle contact stiffness mixed by the max instead of the mean",
        P + "contacts.py",
        "ke = 0.5 * (soft_ke + shape_ke[shape])",
        "ke = wp.max(soft_ke, shape_ke[shape])",
        ("tests/solvers/vbd/test_particle_contacts.py",),
    ),
    Mutation(
        "vbd-particles", "smoothed friction ramp f1(s)/s with the wrong sign of its quadratic term",
        P + "contacts.py",
        "ratio = 2.0 / eps - slip / (eps * eps)",
        "ratio = 2.0 / eps + slip / (eps * eps)",
        ("tests/solvers/vbd/test_particle_contacts.py",),
    ),
    Mutation(
        "vbd-particles", "particle contact damper pushes along the approach instead of resisting it",
        P + "contacts.py",
        "push = f_n - (kd / dt) * wp.dot(normal, rel)",
        "push = f_n + (kd / dt) * wp.dot(normal, rel)",
        ("tests/solvers/vbd/test_particle_contacts.py::test_contact_damping_mixes_by_the_mean",),
    ),
    Mutation(
        "vbd-particles", "full-surface record force given whole to each of its particles (no barycentric share)",
        P + "solve.py",
        "f += b * fc",
        "f += fc",
        ("tests/solvers/vbd/test_full_surface_contacts.py",),
    ),
    Mutation(
        "vbd-particles", "body–particle log barrier option ignored (quadratic penalty kept)",
        P + "contacts.py",
        "if barrier != 0:",
        "if barrier == 2:",
        ("tests/solvers/vbd/test_full_surface_contacts.py",),
    ),
    Mutation(
        "vbd-particles", "adaptive start keeps upward accelerations too",
        P + "predict.py",
        "wp.clamp(a_along, 0.0, g_norm)",
        "wp.clamp(a_along, -g_norm, g_norm)",
        ("tests/solvers/vbd/test_solver_vbd.py", "tests/solvers/vbd/test_particle_contacts.py"),
    ),
    Mutation(
        "vbd-particles", "membrane Lame parameters swapped",
        P + "solve.py",
        "el.tri_materials[t, 0], el.tri_materials[t, 1], el.tri_materials[t, 2], dt)",
        "el.tri_materials[t, 1], el.tri_materials[t, 0], el.tri_materials[t, 2], dt)",
        ("tests/solvers/vbd/test_elastic.py::test_matches_newton_solver_vbd_on_one_free_vertex",),
    ),
    Mutation(
        "vbd-particles", "attachment damping scaled by dt instead of 1/dt",
        P + "attachments.py",
        "kd_dt = ad.damping[j] / dt",
        "kd_dt = ad.damping[j] * dt",
        ("tests/solvers/vbd/test_attachments.py",),
    ),
    Mutation(
        "vbd-particles", "attachment anchor on a kinematic body ignores its spin",
        P + "attachments.py",
        "ad.anchor[j] = start + dt * (wp.spatial_top(qd) + wp.cross(wp.spatial_bottom(qd), start - com))",
        "ad.anchor[j] = start + dt * wp.spatial_top(qd)",
        ("tests/solvers/vbd/test_attachments.py",),
    ),
)

R = "solvers/vbd/rigid/"
VBD_RIGID = (
    Mutation(
        "vbd-rigid", "AVBD joint warm start keeps gamma*lambda instead of alpha*gamma*lambda",
        R + "data.py",
        "jd.lam_keep = p.alpha * p.gamma",
        "jd.lam_keep = p.gamma",
        ("tests/solvers/vbd/rigid/test_joints.py::test_heavy_block_on_hard_chain_at_the_default_ceiling_settles",),
    ),
    Mutation(
        "vbd-rigid", "Dahl friction moment x 1.02",
        R + "joints.py",
        "m[i] = scale * jd.k_axis[j, 1][i] * si",
        "m[i] = 1.02 * scale * jd.k_axis[j, 1][i] * si",
        ("tests/solvers/vbd/rigid/test_cables.py::TestDahlFriction",),
    ),
    Mutation(
        "vbd-rigid", "proxy body feedback drops the linear continuation to the step's end",
        "solvers/vbd/proxy_coupling.py",
        "                f = w * fc - (w * w) * (hc * (particle_q[p] - particle_q_last[p]))\n",
        "                f = w * fc\n",
        ("tests/solvers/vbd/test_proxy_coupling.py",),
    ),
    Mutation(
        "vbd-rigid", "body-body contact friction mixed by the arithmetic mean instead of the geometric",
        R + "contacts.py",
        "cd.mu[i] = wp.sqrt(wp.max(shape_mu[s0] * shape_mu[s1], 0.0))",
        "cd.mu[i] = 0.5 * (shape_mu[s0] + shape_mu[s1])",
        ("tests/solvers/vbd/rigid/test_contacts.py",),
    ),
    Mutation(
        "vbd-rigid", "hard contact warm start keeps the whole multiplier",
        R + "contacts.py",
        "cd.lam[i] = keep_lam * prev.lam[m]",
        "cd.lam[i] = prev.lam[m]",
        ("tests/solvers/vbd/rigid/test_contacts.py", "tests/solvers/vbd/rigid/test_sticking.py"),
    ),
    Mutation(
        "vbd-rigid", "soft contact damper sign flipped",
        R + "contacts.py",
        "f = -cd.ke[i] * c - cd.kd[i] * (c - cd.c0[i]) / dt",
        "f = -cd.ke[i] * c + cd.kd[i] * (c - cd.c0[i]) / dt",
        ("tests/solvers/vbd/rigid/test_contacts.py",),
    ),
    Mutation(
        "vbd-rigid", "hard contact friction disc of radius mu f_n / 2",
        R + "contacts.py",
        "bound = cd.mu[i] * f_n",
        "bound = 0.5 * cd.mu[i] * f_n",
        ("tests/solvers/vbd/rigid/test_contacts.py",),
    ),
    Mutation(
        "vbd-rigid", "joint structural damping scaled by dt instead of 1/dt",
        R + "joints.py",
        "dm = inv_dt * axis_weights(q_jp, jd.kd[j, 0])",
        "dm = dt * axis_weights(q_jp, jd.kd[j, 0])",
        ("tests/solvers/vbd/rigid/test_joints.py",),
    ),
    Mutation(
        "vbd-rigid", "State.body_f torque ignored",
        R + "bodies.py",
        "        torque = wp.spatial_bottom(body_f[b])\n",
        "",
        ("tests/solvers/test_external_forces.py",),
    ),
    Mutation(
        "vbd-rigid", "particle reaction on a coupled body applied at its COM (no torque)",
        "solvers/vbd/coupling.py",
        "    r = point - x_com\n    s = wp.skew(r)",
        "    r = wp.vec3(0.0)\n    s = wp.skew(r)",
        ("tests/solvers/vbd/rigid/test_particle_coupling.py",),
    ),
    Mutation(
        "vbd-rigid", "body particle-contact reaction double",
        "solvers/vbd/coupling.py",
        "    return -f, wp.cross(r, -f), h, -h * s, -s * h * s",
        "    return -2.0 * f, wp.cross(r, -2.0 * f), h, -h * s, -s * h * s",
        ("tests/solvers/vbd/rigid/test_particle_coupling.py",),
    ),
)

S = "solvers/steel/"
SLEEP_TESTS = ("tests/solvers/steel/test_sleeping.py", "tests/solvers/steel/test_sleeping_rules.py")
SLEEPING = (
    Mutation(
        "sleeping", "sleep linear-speed threshold doubled",
        S + "sleeping/stages.py",
        "wp.length(wp.spatial_top(v)) < linear_threshold",
        "wp.length(wp.spatial_top(v)) < 2.0 * linear_threshold",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "sleep angular-speed threshold halved",
        S + "sleeping/stages.py",
        "wp.length(wp.spatial_bottom(v)) < angular_threshold",
        "wp.length(wp.spatial_bottom(v)) < 0.5 * angular_threshold",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "quiet time compared with > instead of >=",
        S + "sleeping/stages.py",
        "sl.island_timer[r] >= quiet_time",
        "sl.island_timer[r] > quiet_time",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "moving kinematic support does not wake a resting body that is contact shape 0",
        S + "sleeping/islands.py",
        "                articulation_wake[a0] = 1\n        if a1 >= 0 and a0 < 0:",
        "                articulation_wake[a0] = 0\n        if a1 >= 0 and a0 < 0:",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "moving kinematic support does not wake a resting body that is contact shape 1",
        S + "sleeping/islands.py",
        "                articulation_wake[a1] = 1\n        if surface_velocity_enabled",
        "                articulation_wake[a1] = 0\n        if surface_velocity_enabled",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "static or kinematic support of a contact shape 0 body not counted",
        S + "sleeping/islands.py",
        "            _raise_support(a0, articulation_supported, changed)\n            if _moving_support(",
        "            if _moving_support(",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "last step's island edges ignored",
        S + "sleeping/islands.py",
        "        if p != i:",
        "        if p < 0:",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "a written joint_qd does not wake",
        S + "sleeping/stages.py",
        "            if not (joint_qd[d] == 0.0):\n                written = 1",
        "            if False:\n                written = 1",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "body_f wake reads only the force, not the torque",
        S + "sleeping/stages.py",
        "            for k in range(6):",
        "            for k in range(3):",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "a changed gravity does not wake",
        S + "sleeping/stages.py",
        "    if gravity[w] == gravity_seen[w]:\n        return 0",
        "    if True:\n        return 0",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "quiet timer advances by 2 dt",
        S + "sleeping/stages.py",
        "t = sl.articulation_timer[a] + wp.float32(dt)",
        "t = sl.articulation_timer[a] + wp.float32(2.0 * dt)",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "row overflow of the world does not keep its islands awake",
        S + "sleeping/stages.py",
        "            or sl.world_overflow[w] or sl.articulation_supported[a] == 0):",
        "            or sl.articulation_supported[a] == 0):",
        SLEEP_TESTS,
    ),
    Mutation(
        "sleeping", "an all-asleep step publishes the input velocity instead of zero",
        S + "sleeping/stages.py",
        "            body_qd_out[i] = wp.spatial_vector()\n        elif copy_others != 0:",
        "            body_qd_out[i] = body_qd[i]\n        elif copy_others != 0:",
        SLEEP_TESTS,
    ),
)

JOINTS = (
    Mutation(
        "joints", "loop closure to a kinematic parent ignores its spin",
        S + "joints/loop_closures.py",
        "v_anchor = wp.spatial_top(v_parent) + wp.cross(wp.spatial_bottom(v_parent), p_p - parent_com)",
        "v_anchor = wp.spatial_top(v_parent)",
        ("tests/solvers/steel/test_loop_closures.py",),
    ),
    Mutation(
        "joints", "FIXED loop closure to a kinematic parent ignores its angular velocity",
        S + "joints/loop_closures.py",
        "            external = w_parent[i - 3]",
        "            external = 0.0",
        ("tests/solvers/steel/test_loop_closures.py",),
    ),
    Mutation(
        "joints", "REVOLUTE loop closure to a kinematic parent ignores its angular velocity",
        S + "joints/loop_closures.py",
        "            external = wp.dot(w_parent, direction)",
        "            external = 0.0",
        ("tests/solvers/steel/test_loop_closures.py",),
    ),
    Mutation(
        "joints", "loop closure pin error with the wrong sign",
        S + "joints/loop_closures.py",
        "            error = p_c[i] - p_p[i]",
        "            error = p_p[i] - p_c[i]",
        ("tests/solvers/steel/test_loop_closures.py",),
    ),
    Mutation(
        "joints", "joint limit arrives at the bound a step late (no speculative target)",
        S + "joints/limits.py",
        "                target = -phi / dt\n",
        "                target = 0.0\n",
        ("tests/solvers/steel/test_dynamics.py", "tests/solvers/steel/test_dormant_rows.py"),
    ),
    Mutation(
        "joints", "joint friction load bound takes the force and not the torque",
        S + "joints/friction.py",
        "load = wp.length(wp.spatial_top(w)) + wp.length(wp.spatial_bottom(w))",
        "load = wp.length(wp.spatial_top(w))",
        ("tests/solvers/steel/test_joint_friction.py",),
    ),
    Mutation(
        "joints", "joint friction load coefficient x 1.02",
        S + "joints/friction.py",
        "bound = friction + c * load",
        "bound = friction + 1.02 * c * load",
        ("tests/solvers/steel/test_joint_friction.py",),
    ),
    Mutation(
        "joints", "mimic row ignores the offset c0",
        S + "joints/mimic.py",
        "error = joint_q[m.joint_q_start[j] + k] - c0 - c1 * joint_q[m.joint_q_start[leader] + k]",
        "error = joint_q[m.joint_q_start[j] + k] - c1 * joint_q[m.joint_q_start[leader] + k]",
        ("tests/solvers/steel/test_mimic.py",),
    ),
    Mutation(
        "joints", "mimic row Jacobian on the leader x 1.001",
        S + "joints/mimic.py",
        "rows.J[(2 * r) * rows.stride + lead_dof - d0] = -c1",
        "rows.J[(2 * r) * rows.stride + lead_dof - d0] = -1.001 * c1",
        ("tests/solvers/steel/test_mimic.py",),
    ),
    Mutation(
        "joints", "drive row gain without the stiffness's dt",
        S + "joints/drives.py",
        "gain = dt * ke + kd  # [N·s/m or N·m·s/rad]",
        "gain = ke + kd",
        ("tests/solvers/steel/test_drive_rows.py",),
    ),
    Mutation(
        "joints", "drive row effort bound x 2",
        S + "joints/drives.py",
        "bound = wp.max(joint_effort_limit[dof], 0.0) * dt",
        "bound = 2.0 * wp.max(joint_effort_limit[dof], 0.0) * dt",
        ("tests/solvers/steel/test_drive_rows.py",),
    ),
    Mutation(
        "joints", "velocity-limit rows gated on > instead of >=",
        S + "joints/velocity_limits.py",
        "if not (wp.abs(joint_qd[dof]) >= fraction * limit):",
        "if not (wp.abs(joint_qd[dof]) > fraction * limit):",
        ("tests/solvers/steel/test_drive_rows.py", "tests/solvers/steel/test_velocity_limits_side_by_side.py"),
    ),
)

CONTACTS = (
    Mutation(
        "contacts", "compliant contact keeps its damper while the gap is open",
        S + "contacts/compliance.py",
        "        c = 0.0  # damping is dropped while the gap is open",
        "        c = damping",
        ("tests/solvers/steel/test_compliance.py",),
    ),
    Mutation(
        "contacts", "compliant contact softness without the dt",
        S + "contacts/compliance.py",
        "return wp.vec2(-stiffness * phi / denominator, 1.0 / (dt * denominator))",
        "return wp.vec2(-stiffness * phi / denominator, 1.0 / denominator)",
        ("tests/solvers/steel/test_compliance.py",),
    ),
    Mutation(
        "contacts", "torsional friction coefficient x 0.97",
        S + "contacts/angular.py",
        "mu_t = wp.max(mu_t, shape_mu_torsional[s])",
        "mu_t = wp.max(mu_t, 0.97 * shape_mu_torsional[s])",
        ("tests/solvers/steel/test_condim.py",),
    ),
    Mutation(
        "contacts", "rolling friction coefficient x 1.03",
        S + "contacts/angular.py",
        "mu_r = wp.max(mu_r, shape_mu_rolling[s])",
        "mu_r = wp.max(mu_r, 1.03 * shape_mu_rolling[s])",
        ("tests/solvers/steel/test_rolling.py",),
    ),
    Mutation(
        "contacts", "patch torsion takes the smaller radius of the pair",
        S + "contacts/torsion.py",
        "return wp.max(shape_radius[s0], shape_radius[s1])",
        "return wp.min(shape_radius[s0], shape_radius[s1])",
        ("tests/solvers/steel/test_torsion.py",),
    ),
    Mutation(
        "contacts", "patch torsion budget x 0.97",
        S + "contacts/rows.py",
        "                torsion_mu = radius * mu",
        "                torsion_mu = 0.97 * radius * mu",
        ("tests/solvers/steel/test_torsion.py",),
    ),
    Mutation(
        "contacts", "adhesion of a pair is the larger of the two shapes', not their sum",
        S + "contacts/adhesion.py",
        "    return shape_adhesion[s0] + shape_adhesion[s1]",
        "    return wp.max(shape_adhesion[s0], shape_adhesion[s1])",
        ("tests/solvers/steel/test_adhesion.py",),
    ),
    Mutation(
        "contacts", "surface velocity keeps its normal part",
        S + "contacts/surface_velocity.py",
        "    return s - wp.dot(s, n) * n",
        "    return s",
        ("tests/solvers/steel/test_surface_velocity.py",),
        note="equivalent: its only readers, the friction targets and anchors, project it on the contact's "
             "tangents; a belt moving at 0.5 m/s along its normal drags the box the same to 1.5e-5 m/s with "
             "and without the mutation (test_the_normal_part_of_a_surface_velocity_is_ignored)",
    ),
    Mutation(
        "contacts", "surface velocity with the wrong sign",
        S + "contacts/surface_velocity.py",
        "    return s - wp.dot(s, n) * n",
        "    return wp.dot(s, n) * n - s",
        ("tests/solvers/steel/test_surface_velocity.py",),
    ),
    Mutation(
        "contacts", "De Saxce bias halved",
        S + "contacts/friction_modes.py",
        "        bias = cone * wp.length(wp.vec2(c[1], c[2]))",
        "        bias = 0.5 * cone * wp.length(wp.vec2(c[1], c[2]))",
        ("tests/solvers/steel/test_friction_modes.py",),
    ),
    Mutation(
        "contacts", "bisection mode's friction disk of radius 0.99 mu lambda_n",
        S + "contacts/friction_modes.py",
        "    t = _disk_minimizer(wtt, g, mu * lam_n)",
        "    t = _disk_minimizer(wtt, g, 0.99 * mu * lam_n)",
        ("tests/solvers/steel/test_friction_modes.py",),
    ),
    Mutation(
        "contacts", "Coulomb-Newton mode sticks up to 1.02 mu",
        S + "contacts/friction_modes.py",
        "if stick[0] >= 0.0 and wp.length(wp.vec2(stick[1], stick[2])) <= mu * stick[0]:",
        "if stick[0] >= 0.0 and wp.length(wp.vec2(stick[1], stick[2])) <= 1.02 * mu * stick[0]:",
        ("tests/solvers/steel/test_friction_modes.py",),
    ),
)

MUTATIONS = CORE + VBD_PARTICLES + VBD_RIGID + SLEEPING + JOINTS + CONTACTS


def apply(mutation: Mutation, workdir: Path) -> Path:
    """A fresh copy of src/ under ``workdir`` with ``mutation`` applied; returns the copy's src/."""
    src = workdir / "src"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
    target = src / "steel" / mutation.path
    text = target.read_text()
    if text.count(mutation.old) != 1:
        raise RuntimeError(f"{mutation.name}: the text to mutate occurs {text.count(mutation.old)} times")
    target.write_text(text.replace(mutation.old, mutation.new))
    return src


def _env(src: Path) -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(ROOT), os.environ.get("PYTHONPATH", "")]))


def run_mutation(mutation: Mutation, workdir: Path) -> tuple[int, int, list[str]]:
    """Apply ``mutation`` to a fresh copy of src/ and run its tests up to the first failure:
    (failed, passed, failed ids)."""
    src = apply(mutation, workdir)
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--tb=no", "-rf", *mutation.tests]
    out = subprocess.run(cmd, cwd=ROOT, env=_env(src), capture_output=True, text=True).stdout
    failed_ids = [line.split()[1] for line in out.splitlines() if line.startswith("FAILED")]
    summary = out.strip().splitlines()[-1] if out.strip() else ""
    counts = {w: int(n) for n, w in (p.split()[:2] for p in summary.replace("=", "").split(",") if p.split()[:1]
                                      and p.split()[0].isdigit())}
    return counts.get("failed", 0) + counts.get("error", 0), counts.get("passed", 0), failed_ids


def check_all() -> None:
    """Every mutation's text occurs exactly once and every test file it names exists (no tests run)."""
    for m in MUTATIONS:
        text = (ROOT / "src" / "steel" / m.path).read_text()
        if text.count(m.old) != 1:
            raise RuntimeError(f"{m.area}: {m.name}: the text to mutate occurs {text.count(m.old)} times")
        for t in m.tests:
            if not (ROOT / t.split("::")[0]).exists():
                raise RuntimeError(f"{m.area}: {m.name}: no test file {t}")
        if m.area not in AREAS:
            raise RuntimeError(f"{m.name}: unknown area {m.area}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--area", choices=sorted(AREAS), action="append",
                        help="only this area (repeatable); default every area")
    parser.add_argument("--list", action="store_true", help="list areas and mutations, run nothing")
    parser.add_argument("--exec", dest="command", help="run this shell command under each chosen mutation "
                        "(the mutated src/ first on PYTHONPATH) instead of its tests")
    parser.add_argument("names", nargs="*", help="only mutations whose name contains one of these")
    args = parser.parse_args(argv)
    check_all()
    chosen = [m for m in MUTATIONS if (not args.area or m.area in args.area)
              and (not args.names or any(a.lower() in m.name.lower() for a in args.names))]
    if args.list:
        for area, what in AREAS.items():
            names = [m.name for m in MUTATIONS if m.area == area]
            print(f"{area} ({len(names)}): {what}")
            for name in names:
                print(f"    {name}")
        return 0
    results = {}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="steel-mutation-") as tmp:
        for mutation in chosen:
            t0 = time.perf_counter()
            if args.command:
                src = apply(mutation, Path(tmp))
                print(f"== {mutation.area}: {mutation.name}", flush=True)
                subprocess.run(args.command, shell=True, cwd=ROOT, env=_env(src))
                continue
            failed, passed, ids = run_mutation(mutation, Path(tmp))
            verdict = "caught" if failed else "SURVIVED"
            print(f"{verdict:8s} [{mutation.area}] {mutation.name}: {failed} failed, {passed} passed "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
            for node in ids:
                print(f"           {node}")
            if not failed and mutation.note:
                print(f"           note: {mutation.note}")
            results.setdefault(mutation.area, []).append(bool(failed))
    if args.command:
        return 0
    print(f"\n{'area':15s} caught / total")
    for area, caught in results.items():
        print(f"{area:15s} {sum(caught):3d} / {len(caught):3d}  ({100.0 * sum(caught) / len(caught):.0f} %)")
    total = sum(len(c) for c in results.values())
    print(f"{'all':15s} {sum(sum(c) for c in results.values()):3d} / {total:3d}  "
          f"in {time.perf_counter() - start:.0f} s")
    return 0 if all(all(c) for c in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
