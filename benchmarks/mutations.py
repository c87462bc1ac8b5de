"""Inject small physics bugs one at a time and report which tests catch each one.

Each mutation is a one-line text edit applied to a temporary copy of ``src/``; the named tests are
then run against that copy (``PYTHONPATH`` puts it ahead of the editable install) and their
failures counted. A mutation no test catches is a hole in the suite. The repository is never
touched. Each mutation recompiles the Warp modules it edits, so a full run takes some minutes.

    .venv/bin/python benchmarks/mutations.py            # all mutations
    .venv/bin/python benchmarks/mutations.py gravity    # those whose name contains "gravity"
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Mutation:
    name: str
    path: str  # under src/steel
    old: str  # must occur exactly once
    new: str
    tests: tuple[str, ...]  # pytest node ids or -k filtered files, relative to the repository


MUTATIONS = (
    Mutation(
        "prismatic motion subspace flipped",
        "articulation/kinematics.py",
        "col = prismatic_column(wp.quat_rotate(rot, joint_axis[qd_start]))",
        "col = prismatic_column(wp.quat_rotate(rot, -joint_axis[qd_start]))",
        ("tests/solvers/test_joint_types_stepped.py", "tests/articulation/test_core_vs_newton.py::"
         "test_every_joint_type_matches_newton_at_random_states"),
    ),
    Mutation(
        "body_parent_f contact wrench sign flipped",
        "articulation/dynamics.py",
        "            fe = body_f_extra[child]\n            f = f - wrench_from_point(",
        "            fe = body_f_extra[child]\n            f = f + wrench_from_point(",
        ("tests/solvers/test_parent_f_under_contact.py",),
    ),
    Mutation(
        "gravity x 1.01",
        "articulation/dynamics.py",
        "base_accel = wp.spatial_vector(-gravity[gravity_index[art]], wp.vec3(0.0))",
        "base_accel = wp.spatial_vector(-1.01 * gravity[gravity_index[art]], wp.vec3(0.0))",
        ("tests/solvers/steel/test_contacts.py::test_resting_box_contact_forces_sum_to_its_weight",
         "tests/solvers/steel/test_dynamics.py::test_small_angle_pendulum_period_matches_two_pi_sqrt_l_over_g",
         "tests/solvers/steel/test_dynamics.py::test_static_pendulum_parent_wrench_is_its_weight",
         "tests/solvers/featherstone/test_analytic.py::test_small_angle_pendulum_period"),
    ),
    Mutation(
        "SolverSteel friction mu x 0.98",
        "solvers/steel/rows/contacts.py",
        "mu = 0.5 * (shape_mu[s0] + shape_mu[s1]) * friction_scale",
        "mu = 0.49 * (shape_mu[s0] + shape_mu[s1]) * friction_scale",
        ("tests/solvers/steel/test_contacts.py::test_box_on_a_20_degree_incline_sticks_or_slides_per_coulomb",),
    ),
    Mutation(
        "rotational inertia transposed wrong in body_spatial_inertia (tile and loop paths share it)",
        "articulation/dynamics.py",
        "R * joints.body_inertia[body] * wp.transpose(R)), com",
        "wp.transpose(R) * joints.body_inertia[body] * R), com",
        ("tests/solvers/featherstone/test_tiles.py",),
    ),
    Mutation(
        "SolverSteel pair friction is the max of the two shapes, not the mean",
        "solvers/steel/rows/contacts.py",
        "mu = 0.5 * (shape_mu[s0] + shape_mu[s1]) * friction_scale",
        "mu = wp.max(shape_mu[s0], shape_mu[s1]) * friction_scale",
        ("tests/solvers/test_mixed_materials.py::test_steel_friction_is_the_mean_of_the_two_shapes_as_in_the_reference",),
    ),
    Mutation(
        "SolverSteel never rebuilds the mass matrix after the first step",
        "solvers/steel/solver.py",
        "refresh = self._refresh_mass_matrix or self._step_count % self.options.update_mass_matrix_interval == 0",
        "refresh = self._step_count == 0",
        ("tests/solvers/test_joint_types_stepped.py::test_the_cartpole_steps_like_newtons_featherstone",
         "tests/solvers/test_joint_types_stepped.py::test_a_swinging_double_pendulum_rebuilds_its_mass_matrix",
         "tests/solvers/steel/test_dynamics.py::test_drive_gain_and_dt_edits_take_effect_between_mass_matrix_rebuilds"),
    ),
    Mutation(
        "SolverSteel keeps a stale implicit diagonal between rebuilds",
        "solvers/steel/predict.py",
        "        changed_out[0] = 1",
        "        changed_out[0] = 0",
        ("tests/solvers/steel/test_dynamics.py::test_drive_gain_and_dt_edits_take_effect_between_mass_matrix_rebuilds",),
    ),
    Mutation(
        "dt checked in float64 only",
        "solvers/inputs.py",
        "dt32 = float(np.float32(value))",
        "dt32 = value",
        ("tests/solvers/test_shared_inputs.py",),
    ),
)


def run_mutation(mutation: Mutation, workdir: Path) -> tuple[int, int, list[str]]:
    """Apply ``mutation`` to a fresh copy of src/ and run its tests: (failed, passed, failed ids)."""
    src = workdir / "src"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
    target = src / "steel" / mutation.path
    text = target.read_text()
    if text.count(mutation.old) != 1:
        raise RuntimeError(f"{mutation.name}: the text to mutate occurs {text.count(mutation.old)} times")
    target.write_text(text.replace(mutation.old, mutation.new))
    env = dict(os.environ, PYTHONPATH=str(src) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no", "-rf", *mutation.tests]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True).stdout
    failed_ids = [line.split()[1] for line in out.splitlines() if line.startswith("FAILED")]
    summary = out.strip().splitlines()[-1] if out.strip() else ""
    counts = {w: int(n) for n, w in (p.split()[:2] for p in summary.replace("=", "").split(",") if p.split()[:1]
                                      and p.split()[0].isdigit())}
    return counts.get("failed", 0) + counts.get("error", 0), counts.get("passed", 0), failed_ids


def main(argv: list[str]) -> int:
    chosen = [m for m in MUTATIONS if not argv or any(a.lower() in m.name.lower() for a in argv)]
    survivors = []
    with tempfile.TemporaryDirectory(prefix="steel-mutation-") as tmp:
        for mutation in chosen:
            failed, passed, ids = run_mutation(mutation, Path(tmp))
            verdict = "caught" if failed else "SURVIVED"
            print(f"{verdict:8s} {mutation.name}: {failed} failed, {passed} passed")
            for node in ids:
                print(f"           {node}")
            if not failed:
                survivors.append(mutation.name)
    print(f"{len(chosen) - len(survivors)} of {len(chosen)} mutations caught")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
