"""The `steel` command line: runs write their results; bad input is a one-line error that writes nothing;
a run that blows up stops with exit status 1 and says what happened and when.

Each test named after a failure a new user hit pins that failure (the commands are shortened)."""

import json

import newton.examples
import numpy as np
import pytest

from steel.app import runner, scenes
from steel.app.cli import EXIT_BAD_INPUT, EXIT_DIVERGED, build_parser, main
from steel.app.run_record import default_out_dir


def _summary(folder):
    # parse_constant raises on NaN/Infinity: a summary must be valid JSON even after a blow-up
    return json.loads((folder / "summary.json").read_text(), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))


def test_run_writes_summary_final_state_and_plot(tmp_path):
    """`steel run chain` for a few steps writes summary.json, final_state.npz and trajectory.png."""
    assert main(["run", "chain", "--seconds", "0.05", "--worlds", "2", "--out", str(tmp_path)]) == 0
    summary = _summary(tmp_path)
    assert summary["outcome"] == "completed" and summary["finite"] and summary["world_count"] == 2
    assert summary["dt"] == scenes.DT and summary["steps"] == 30  # --dt defaults to the scene's
    assert (tmp_path / "final_state.npz").exists() and (tmp_path / "trajectory.png").exists()


def test_summary_records_command_input_solver_options_duration_and_versions(tmp_path):
    """The summary says how to reproduce the run: command line, input, solver and options, versions."""
    args = ["run", "chain", "--seconds", "0.02", "--option", "iterations=20", "--option", "solve_mode=serial",
            "--out", str(tmp_path)]
    assert main(args) == 0
    summary = _summary(tmp_path)
    assert summary["command"] == "steel " + " ".join(args) and summary["input"] == "chain"
    assert summary["solver"] == "steel"
    assert summary["solver_options"] == {"enable_joint_limits": True, "iterations": 20, "solve_mode": "serial"}
    assert summary["wall_total_s"] > 0.0 and summary["simulated_s"] == pytest.approx(0.02, abs=1e-3)
    assert summary["versions"]["steel"] and summary["versions"]["newton"] == "1.8.0"


def test_run_accepts_a_robot_file(tmp_path):
    """An MJCF path is loaded at its init_qpos and dropped on the shared ground plane."""
    path = newton.examples.get_asset("nv_ant.xml")
    assert main(["run", path, "--solver", "featherstone", "--seconds", "0.02", "--out", str(tmp_path)]) == 0
    summary = _summary(tmp_path)
    assert summary["finite"] and summary["input"].endswith("nv_ant.xml")


def test_unknown_scene_is_a_clear_error(tmp_path, capsys):
    """A scene that is neither shipped nor a file exits with status 2 and says why."""
    assert main(["run", "no_such_scene", "--out", str(tmp_path / "out")]) == EXIT_BAD_INPUT
    assert "neither a shipped scene" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_demo_writes_the_tower_results(tmp_path):
    """`steel demo` (shortened) runs the towers with SolverSteel and writes its results."""
    assert main(["demo", "--seconds", "0.05", "--out", str(tmp_path)]) == 0
    summary = _summary(tmp_path)
    assert summary["scene"] == "tower" and summary["solver"] == "steel" and summary["finite"]


def test_run_particle_scene_with_vbd(tmp_path):
    """`steel run cloth_hang --solver vbd` writes the particle summary, final state and energy plot."""
    args = ["run", "cloth_hang", "--solver", "vbd", "--size", "4", "--seconds", "0.05", "--out", str(tmp_path)]
    assert main(args) == 0
    summary = _summary(tmp_path)
    assert summary["outcome"] == "completed" and summary["particles"] == 25 and summary["steps"] == 30
    assert summary["max_self_intersecting_pairs"] == 0 and summary["lowest_particle_m"] < 2.0
    assert (tmp_path / "final_state.npz").exists() and (tmp_path / "energy_contacts.png").exists()


def test_soft_cube_lands_on_the_ground(tmp_path):
    """`steel run soft_cube` (vbd by default for a particle scene) drops the cube onto the ground plane."""
    assert main(["run", "soft_cube", "--size", "2", "--seconds", "0.5", "--out", str(tmp_path)]) == 0
    summary = _summary(tmp_path)
    assert summary["solver"] == "vbd" and summary["finite"]
    assert -0.01 < summary["lowest_particle_m"] < 0.02  # resting on the plane, within the contact radius


# ---------------------------------------------------------------------------------------------------
# Explosions reported as success
# ---------------------------------------------------------------------------------------------------


def test_a_run_faster_than_the_stated_bound_stops_with_exit_1(tmp_path, capsys):
    """The guard stops a run whose bodies exceed --max-speed: exit 1, summary says what and when."""
    code = main(["run", "chain", "--seconds", "1", "--max-speed", "0.5", "--out", str(tmp_path)])
    assert code == EXIT_DIVERGED
    assert "diverged at t =" in capsys.readouterr().out
    summary = _summary(tmp_path)
    assert summary["outcome"] == "diverged" and summary["divergence"]["reason"] == "too fast"
    assert 0.0 < summary["divergence"]["time_s"] < 1.0 and summary["steps_taken"] < summary["steps"]
    assert summary["guard"]["max_speed_m_per_s"] == 0.5


def test_a_run_that_goes_nan_stops_and_writes_no_nan(tmp_path, monkeypatch):
    """A solver that produces NaN: the run stops at that frame, exit 1, and summary.json stays valid JSON."""
    make = runner.make_solver

    class PoisonAfter:
        def __init__(self, sim, step):
            self.sim, self.step_count, self.poison_at = sim, 0, step

        def step(self, s0, s1, control, contacts, dt):
            self.sim.step(s0, s1, control, contacts, dt)
            self.step_count += 1
            if self.step_count == self.poison_at:
                q = s1.joint_q.numpy()
                q[0] = np.nan
                s1.joint_q.assign(q)

    monkeypatch.setattr(runner, "make_solver", lambda name, model, options=None: PoisonAfter(make(name, model, options),
                                                                                             15))
    assert main(["run", "chain", "--seconds", "0.1", "--out", str(tmp_path)]) == EXIT_DIVERGED
    summary = _summary(tmp_path)
    assert summary["outcome"] == "diverged" and summary["finite"] is False
    assert summary["divergence"]["reason"] == "not finite" and summary["divergence"]["array"] == "joint_q"
    assert summary["divergence"]["step"] == 20  # the first frame boundary (10 steps per frame) after step 15


def test_a_particle_run_that_leaves_the_box_stops(tmp_path):
    """The guard also watches particle runs: a cloth falling out of a 0.1 m margin box stops, exit 1."""
    args = ["run", "cloth_hang", "--size", "2", "--seconds", "0.5", "--bounds-margin", "0.1", "--out", str(tmp_path)]
    assert main(args) == EXIT_DIVERGED
    assert _summary(tmp_path)["divergence"]["reason"] == "left the bounding box"


# ---------------------------------------------------------------------------------------------------
# Bad input: one line naming the file, exit 2, nothing written
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("broken.xml", "<mujoco><worldbody><body>", "broken.xml:1:25: malformed"),
        ("empty.xml", "", "empty.xml: the file is empty"),
        ("nobody.xml", "<mujoco><worldbody/></mujoco>", "nobody.xml: the MJCF file defines no bodies"),
        ("nolinks.urdf", '<robot name="r"></robot>', "nolinks.urdf: the URDF file defines no links"),
        ("broken.urdf", '<robot name="r"><link name="a">', "broken.urdf:1:"),
    ],
)
def test_an_unreadable_robot_file_is_one_line_naming_it(tmp_path, capsys, name, text, message):
    """Malformed, empty or body-less robot files: a one-line error with the file (and line), exit 2, no folder."""
    path = tmp_path / name
    path.write_text(text)
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seconds", "0.0001"], "shorter than one time step"),
        (["--seconds", "-1"], "must be a positive finite number"),
        (["--worlds", "0"], "must be a positive integer"),
        (["--option", "no_such_option=1"], "SolverSteel has no option 'no_such_option'"),
        (["--option", "iterations=-1"], "iterations must be >= 0"),
        (["--option", "double_buffer=True"], "not implemented yet"),
        (["--option", "iterations"], "expected NAME=VALUE"),
        (["--keyframe", "home"], "apply to robot files"),
    ],
)
def test_bad_run_arguments_exit_2_and_write_nothing(tmp_path, capsys, args, message):
    """Bad arguments and solver options (checked by the solver itself) are clear errors before any step."""
    out = tmp_path / "out"
    assert main(["run", "chain", *args, "--out", str(out)]) == EXIT_BAD_INPUT
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_a_run_of_one_step_says_its_speed_was_not_measured(tmp_path, capsys):
    """The first step compiles kernels and is never timed: one step reports no speed instead of nan or 1e9."""
    out = tmp_path / "out"
    assert main(["run", "chain", "--seconds", "0.001", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "speed not measured" in printed
    assert "nan" not in printed and "1000000000" not in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps_taken"] == 1 and summary["world_steps_per_s"] is None


def test_version_and_defaults_in_help(capsys):
    """`steel --version` prints the version; every `steel run` option's help states its default."""
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("steel 0.1")
    run = next(a for a in build_parser()._subparsers._group_actions[0].choices.values() if a.prog.endswith("run"))
    for action in run._actions:
        if action.option_strings and action.dest not in ("help", "fixed_base"):
            assert "default" in action.help, action.dest


# ---------------------------------------------------------------------------------------------------
# Results overwriting each other; robot-file setup
# ---------------------------------------------------------------------------------------------------


def test_output_folders_are_unique_per_input_and_solver():
    """`cartpole`, `cartpole.urdf` and `cartpole.usda` (and each solver) get folders of their own."""
    urdf, usda = newton.examples.get_asset("cartpole.urdf"), newton.examples.get_asset("cartpole.usda")
    folders = {default_out_dir(s, scenes.SCENES, solver) for s in ("cartpole", urdf, usda) for solver in
               ("steel", "featherstone")}
    assert len(folders) == 6
    assert default_out_dir("cartpole", scenes.SCENES, "steel").as_posix() == "results/run/cartpole/steel"
    assert default_out_dir("a/robot.xml", (), "steel") != default_out_dir("b/robot.xml", (), "steel")


def test_runs_without_out_never_overwrite_each_other_and_are_listed(tmp_path, monkeypatch):
    """`steel run chain` then `steel run chain --option iterations=20`: two folders of their own under
    results/run/chain/steel/, each with its own summary, and both listed in that folder's runs.csv (before, the
    second summary replaced the first)."""
    monkeypatch.chdir(tmp_path)
    first = ["run", "chain", "--seconds", "0.02"]
    second = [*first, "--option", "iterations=20"]
    assert main(first) == 0 and main(second) == 0
    parent = tmp_path / default_out_dir("chain", scenes.SCENES, "steel")
    runs = sorted(p for p in parent.iterdir() if p.is_dir())
    assert len(runs) == 2
    commands = sorted(_summary(run)["command"] for run in runs)
    assert commands == sorted(["steel " + " ".join(first), "steel " + " ".join(second)])
    lines = (parent / "runs.csv").read_text().splitlines()
    assert lines[0] == "folder,outcome,expectation_met,simulated_s,wall_total_s,command"
    assert sorted(line.split(",")[0] for line in lines[1:]) == [run.name for run in runs]
    assert all(",completed,True," in line for line in lines[1:])


def test_an_out_folder_that_holds_a_run_is_refused_without_force(tmp_path, capsys):
    """A second run into the same --out exits 2 before anything is written and leaves the first summary as it was;
    --force overwrites it."""
    out = tmp_path / "out"
    assert main(["run", "chain", "--seconds", "0.02", "--out", str(out)]) == 0
    before = (out / "summary.json").read_text()
    again = ["run", "chain", "--seconds", "0.03", "--out", str(out)]
    assert main(again) == EXIT_BAD_INPUT
    assert "already holds a run" in capsys.readouterr().err
    assert (out / "summary.json").read_text() == before
    assert main([*again, "--force"]) == 0
    assert _summary(out)["steps"] == 18


def test_a_misspelled_option_names_it_alone_with_the_nearest_spellings(tmp_path, capsys):
    """`--option iteratons=3` is one line naming the option and suggesting `iterations` (before, the whole options
    dict and Python's "unexpected keyword argument")."""
    out = tmp_path / "out"
    assert main(["run", "chain", "--option", "iteratons=3", "--out", str(out)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "SolverSteel has no option 'iteratons'; did you mean 'iterations'" in err
    assert "enable_joint_limits" not in err and not out.exists()


def test_a_device_warp_cannot_open_lists_the_devices_it_can(tmp_path, capsys):
    """`--device cuda:7` (no such device here) is one line listing the devices Warp has (before: "Invalid device
    identifier" alone), exit 2, nothing written."""
    out = tmp_path / "out"
    assert main(["run", "chain", "--device", "cuda:7", "--out", str(out)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "--device 'cuda:7' is not available here (devices: cpu" in err
    assert not out.exists()


def test_scene_lists_in_errors_and_help_come_from_the_catalog(tmp_path, capsys):
    """The unknown-scene and --size errors list every scene of their kind (the --size error once omitted
    cloth_boxes, the unknown-scene error every particle scene); --fixed-base's help agrees with the README."""
    from steel.app.catalog import PARTICLE_SCENES, SCENES, VBD_SCENES

    assert main(["run", "no_such_scene", "--out", str(tmp_path / "a")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert all(name in err for name in SCENES + VBD_SCENES + PARTICLE_SCENES)
    assert main(["run", "chain", "--size", "4", "--out", str(tmp_path / "b")]) == EXIT_BAD_INPUT
    assert f"({', '.join(PARTICLE_SCENES)})" in capsys.readouterr().err
    run = next(a for a in build_parser()._subparsers._group_actions[0].choices.values() if a.prog.endswith("run"))
    fixed = next(a for a in run._actions if a.dest == "fixed_base")
    assert "as the file says" in fixed.help


def test_a_tower_run_says_whether_the_towers_ended_stacked(tmp_path, capsys):
    """The summary states the scene's promise and whether the run kept it. Stopped at 0.05 s the towers (dropped
    from up to 1.5 m) are still in the air: the promise is broken and a warning says which box; after 1.5 s with
    SolverSteel they stand (every box within 5 mm of its stacked height). Before, both runs exited 0 with no word."""
    assert main(["run", "tower", "--seconds", "0.05", "--out", str(tmp_path / "early")]) == 0
    assert "the outcome contradicts the scene: not every box ends stacked on its tower" in capsys.readouterr().out
    early = _summary(tmp_path / "early")
    assert early["expectation"]["met"] is False and early["expectation"]["height_error_m"] > 1.0  # [m] still up
    assert main(["run", "tower", "--seconds", "1.5", "--out", str(tmp_path / "landed")]) == 0
    assert "contradicts" not in capsys.readouterr().out
    landed = _summary(tmp_path / "landed")
    assert landed["expectation"]["met"] is True
    assert landed["final_overlap_m"] < 1e-3  # [m] resting contacts, not boxes inside each other


def test_an_mjcf_file_starts_at_its_init_qpos_like_the_shipped_scene():
    """`steel run nv_ant.xml` starts where `steel run ant` does (the file's init_qpos, MuJoCo order converted)."""
    model = runner.build_model(newton.examples.get_asset("nv_ant.xml"), 1)
    assert np.allclose(model.joint_q.numpy(), scenes.build_ant(1, None).model.joint_q.numpy())
    as_written = runner.build_model(newton.examples.get_asset("nv_ant.xml"), 1, keyframe="none")
    assert not np.allclose(as_written.joint_q.numpy(), model.joint_q.numpy())


def test_keyframes_by_name_and_index_and_start_height(tmp_path):
    """--keyframe picks a <key> by name or index (quaternion reordered); --start-height lifts the robot."""
    path = tmp_path / "ball.xml"
    path.write_text(
        '<mujoco><worldbody><body name="b" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>'
        '</worldbody><keyframe><key name="low" qpos="0 0 0.5 1 0 0 0"/>'
        '<key name="tilted" qpos="1 2 3 0 1 0 0"/></keyframe></mujoco>')
    q = runner.build_model(str(path), 1, keyframe="low").joint_q.numpy()
    assert np.allclose(q, [0, 0, 0.5, 0, 0, 0, 1])
    q = runner.build_model(str(path), 1, keyframe="1", start_height=2.0).joint_q.numpy()
    assert np.allclose(q, [1, 2, 5, 1, 0, 0, 0])
    assert runner.build_model(str(path), 1).joint_q.numpy()[2] == pytest.approx(1.0)  # no init_qpos: as written
    with pytest.raises(ValueError, match="no keyframe 'high'; the file has"):
        runner.build_model(str(path), 1, keyframe="high")


def test_fixed_base_welds_a_urdf_root_and_a_urdf_floats_otherwise():
    """A URDF floats by default (the format cannot say); --fixed-base welds its root to the world."""
    path = newton.examples.get_asset("cartpole.urdf")
    floating = runner.build_model(path, 1)
    fixed = runner.build_model(path, 1, fixed_base=True)
    assert int(floating.joint_type.numpy()[0]) == int(newton.JointType.FREE)
    assert int(fixed.joint_type.numpy()[0]) != int(newton.JointType.FREE)


def test_each_module_is_announced_before_it_compiles(tmp_path, monkeypatch):
    """With an empty kernel cache a module is announced, with its estimate, before Warp compiles it (the cache then
    holds no binary of it yet); loaded or cached, it is not announced again. Before, a first run was silent for
    minutes and Warp's own line came after each compile."""
    import warp as wp  # noqa: PLC0415

    from steel.app.compile_progress import compile_progress

    @wp.kernel(module="unique")
    def add_one(a: wp.array(dtype=float)):
        a[wp.tid()] += 1.0

    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    seen = []

    def log(line):
        binaries = [p.name for p in tmp_path.rglob("*.o")]
        seen.append((line, binaries))

    a = wp.zeros(4, dtype=float, device="cpu")
    with compile_progress(log):
        wp.launch(add_one, dim=4, inputs=[a], device="cpu")
        wp.launch(add_one, dim=4, inputs=[a], device="cpu")
    assert len(seen) == 1
    line, binaries = seen[0]
    assert line.startswith(f"[steel] compiling {add_one.module.name} (first run; cached afterwards, about ")
    assert line.endswith(" s)") and binaries == []  # announced before the binary existed
    assert list(tmp_path.rglob("*.o")) and a.numpy().tolist() == [2.0] * 4
    add_one.module.unload()  # out of this process: loading again reads the cache, nothing is announced
    with compile_progress(log):
        wp.launch(add_one, dim=4, inputs=[a], device="cpu")
    assert len(seen) == 1 and a.numpy().tolist() == [3.0] * 4
    assert "compile_progress" not in wp.Module.load.__qualname__  # Warp's own load again after the context


def test_a_first_run_with_an_empty_kernel_cache_prints_the_compile_line(tmp_path):
    """`steel run chain` with WARP_CACHE_PATH pointing at an empty folder prints "compiling <module> (first run;
    cached afterwards, about N s)" before its first compile, seconds after it starts (the process is stopped
    there: a full cold run compiles for minutes)."""
    import os
    import re
    import subprocess
    import sys
    import time

    env = {**os.environ, "WARP_CACHE_PATH": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "steel.app.cli", "run", "chain", "--seconds", "0.01", "--out",
                             str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)
    start, lines = time.monotonic(), []
    try:
        for line in proc.stdout:
            lines.append(line)
            if "compiling" in line or time.monotonic() - start > 120.0:
                break
    finally:
        proc.kill()
        proc.wait()
    assert re.search(r"^\[steel\] compiling \S+ \(first run; cached afterwards, about \d+ s\)$", lines[-1].strip()), lines


def test_steel_run_humanoid_keeps_its_joints_inside_their_limits(tmp_path):
    """`steel run humanoid` turns SolverSteel's joint limits on: after the fall no hinge is past its range.

    With the reference default (limits off) the knees ended at 168° against a [-160°, 2°] range."""
    assert main(["run", "humanoid", "--seconds", "2", "--out", str(tmp_path)]) == 0
    summary = _summary(tmp_path)
    assert summary["solver_options"]["enable_joint_limits"] is True
    assert summary["joint_limit_overshoot_m_or_rad"] < 0.05
    assert max(summary["base_height_m"]) < 0.5  # it fell and lies on the ground
    assert summary["kind"] == "floating" and summary["fallen"] == [True]


def test_a_robot_file_that_starts_inside_the_ground_is_placed_on_it(tmp_path, capsys):
    """quadruped.urdf starts with its body 0.5 m below the ground plane. By default the run lifts it by the
    measured overlap (0.5 m), says so, starts without overlap and stays near that height (no launch out of the
    ground; before, it flew); the summary records the lift."""
    path = newton.examples.get_asset("quadruped.urdf")
    assert main(["run", path, "--seconds", "0.1", "--out", str(tmp_path / "placed")]) == 0
    assert "placed on it (lifted 0.5" in capsys.readouterr().out
    summary = _summary(tmp_path / "placed")
    assert summary["robot_file"]["placed_on_ground_lift_m"] == pytest.approx(0.5, abs=0.005)  # [m]
    assert summary["start_overlap_m"] < 1e-3
    assert max(summary["base_height_m"]) < 0.55  # [m] settled onto its legs, not launched


def test_a_robot_file_kept_at_its_pose_is_told_how_far_to_lift_it(tmp_path, capsys):
    """With --keep-pose, quadruped.urdf starts 0.5 m inside the ground: the run measures the overlap of the
    start pose, prints the --start-height that clears it, and with that height starts without overlap and
    stays near its start height (no launch out of the ground)."""
    path = newton.examples.get_asset("quadruped.urdf")
    assert main(["run", path, "--seconds", "0.05", "--keep-pose", "--out", str(tmp_path / "file")]) == 0
    assert "--start-height 0.50" in capsys.readouterr().out
    assert _summary(tmp_path / "file")["start_overlap_m"] == pytest.approx(0.5, abs=0.005)  # [m] the file's pose
    assert main(["run", path, "--seconds", "0.1", "--start-height", "0.5", "--out", str(tmp_path / "lifted")]) == 0
    assert "--start-height" not in capsys.readouterr().out
    summary = _summary(tmp_path / "lifted")
    assert summary["start_overlap_m"] < 1e-3
    assert max(summary["base_height_m"]) < 0.55  # [m] settled onto its legs, not launched


@pytest.mark.parametrize("solver", ["steel", "featherstone", "vbd"])
def test_steel_run_ant_starts_on_the_ground_and_meets_its_expectation(tmp_path, capsys, solver):
    """The shipped ant's declared pose (init_qpos, torso at 0.55 m) reaches 16 mm into the ground; pushed out, it
    gained 1.7 J (SolverSteel; 0.88 J SolverFeatherstone) and `steel run ant`, the first run a user tries, ended
    "expectation NOT met". Now it is lifted by the measured overlap (16 mm), starts without overlap, gains no
    energy and keeps standing (measured over the default 5 s: at most 2.1e-6 J gained with SolverSteel, float32
    rounding of its 4.4 J, none with SolverFeatherstone or SolverVBD; upright, torso at 0.566 m, 0.372 m with
    SolverFeatherstone, whose legs sag)."""
    assert main(["run", "ant", "--solver", solver, "--seconds", "0.2", "--out", str(tmp_path)]) == 0
    assert "placed on it (lifted 0.016" in capsys.readouterr().out
    summary = _summary(tmp_path)
    assert summary["placed_on_ground_lift_m"] == pytest.approx(0.016, abs=0.002)  # [m] the declared pose's overlap
    assert summary["start_overlap_m"] < 1e-3  # [m]
    assert summary["checks"]["energy_gain"]["max_gain_J"] < 6e-6  # [J] measured 2.1e-6 (SolverSteel), else 0
    assert summary["expectation"]["met"] is True and summary["fallen"] == [False]


def test_vbd_options_are_passed_to_and_checked_by_solvervbd(tmp_path, capsys):
    """--option reaches SolverVBD on top of the scene's options; a bad one is its error, exit 2, nothing written."""
    out = tmp_path / "out"
    assert main(["run", "cloth_hang", "--size", "2", "--option", "no_such_option=1", "--out", str(out)]) == 2
    assert "SolverVBD" in capsys.readouterr().err and not out.exists()
    assert main(["run", "cloth_hang", "--size", "2", "--seconds", "0.02", "--option", "iterations=3",
                 "--out", str(out)]) == 0
    assert _summary(out)["solver_options"]["iterations"] == 3


def test_version_and_help_answer_without_importing_newton_or_warp():
    """`steel --version`, `steel --help` and `steel run --help` print at once: none imports Newton or Warp, each run
    in a fresh interpreter; only `run --help` imports the option tables, and only while printing."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from steel.app.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(*(name in sys.modules for name in ('steel.solvers.option_table', 'newton', 'warp')))\n"
    )
    for argv, tables in ((["--version"], False), (["--help"], False), (["run", "--help"], True)):
        out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True).stdout
        assert out.strip().splitlines()[-1] == f"{tables} False False", argv


def test_run_help_lists_every_solvers_options_with_their_defaults(capsys):
    """`steel run --help` ends with each solver's options, written from its table: name, default, then the rest."""
    from steel.solvers.option_table import option_table

    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # the lines are wrapped to the terminal
    for solver in ("steel", "vbd", "featherstone"):
        assert f"--solver {solver} options (--option NAME=VALUE):" in text
        section = text.split(f"--solver {solver} options", 1)[1].split("--solver ", 1)[0]
        missing = [row.name for row in option_table(solver) if f" {row.name} (default {row.default!r}" not in section]
        assert missing == [], (solver, missing)


def test_steel_run_tower_with_vbd_stands_and_records_the_solver(tmp_path):
    """`steel run tower --solver vbd`: the four towers land and stand on SolverVBD's hard contacts with history.

    Sink = largest distance of a box below its ideal stacked height (0.1 + 0.2 i m). Measured on this
    scene after 3 s, history on: ours 27.2 mm, the seed's revision of Newton's SolverVBD (sticking
    contacts and the deadzone snap on by default, as ours) 27.0 mm; with sticking off ours 21.2 mm,
    Newton 1.8.0's legacy path (``rigid_compliant_alm=False``, no sticking) 22.6 mm, its default path
    184 mm; no box moved sideways in any of them."""
    assert main(["run", "tower", "--solver", "vbd", "--seconds", "3", "--out", str(tmp_path)]) == 0
    summary = _summary(tmp_path)
    assert summary["solver"] == "vbd" and summary["solver_class"] == "steel.solvers.SolverVBD"
    assert summary["solver_options"] == {"rigid_contact_history": True}
    assert summary["outcome"] == "completed" and summary["finite"] and summary["contact_overflow"] == 0
    ideal = [scenes.BOX_HALF * (1 + 2 * i) for n in scenes.TOWER_HEIGHTS for i in range(n)]
    sink = max(z0 - z for z0, z in zip(ideal, summary["body_height_m"], strict=True))
    assert 0.0 < sink < 0.03  # [m] the seed's revision of the reference: 27.0 mm
    assert summary["stack_drift_max_m"] < 1e-3


def test_vbd_on_a_scene_with_unsupported_joints_names_the_joint_and_writes_nothing(tmp_path, capsys):
    """nv_humanoid's two-axis D6 joints carry limits, which SolverVBD does not build: exit 2, the joint named."""
    out = tmp_path / "out"
    assert main(["run", "humanoid", "--solver", "vbd", "--out", str(out)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "SolverVBD cannot step this model" in err and "abdomen_z_abdomen_y" in err and "D6" in err
    assert not out.exists()


def test_vbd_steps_the_ant_and_the_chain_and_refuses_size(tmp_path, capsys):
    """The ant (revolute joints with limits) and the revolute chain run under SolverVBD; --size is for particles."""
    for scene in ("ant", "chain"):
        assert main(["run", scene, "--solver", "vbd", "--seconds", "0.05", "--out", str(tmp_path / scene)]) == 0
        assert _summary(tmp_path / scene)["finite"]
    assert main(["run", "tower", "--solver", "vbd", "--size", "4", "--out", str(tmp_path / "x")]) == EXIT_BAD_INPUT
    assert "--size applies to particle scenes" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------
# What the summary says: frozen bodies, energy gained, bodies that left; metrics named for the scene kind
# ---------------------------------------------------------------------------------------------------


def _box_file(tmp_path, z=1.0):
    """A robot file of one free 0.2 m box (about 8 kg) with its centre ``z`` [m] above the ground plane."""
    path = tmp_path / "box.xml"
    path.write_text(f'<mujoco><worldbody><body name="box" pos="0 0 {z}"><freejoint/>'
                    '<geom type="box" size="0.1 0.1 0.1"/></body></worldbody></mujoco>')
    return str(path)


def _tamper(monkeypatch, after_step):
    """Every solver step is followed by ``after_step(s_in, s_out, step)``: a solver that misbehaves that way."""
    make = runner.make_solver

    class Tampered:
        def __init__(self, sim):
            self.sim, self.count = sim, 0

        def step(self, s0, s1, control, contacts, dt):
            self.sim.step(s0, s1, control, contacts, dt)
            self.count += 1
            after_step(s0, s1, self.count)

    monkeypatch.setattr(runner, "make_solver", lambda name, model, options=None: Tampered(make(name, model, options)))


def _set(array, index, value):
    """Set entry ``index`` of the first body's (or the one free joint's) coordinates in a state array."""
    a = array.numpy()
    a.reshape(-1)[index] = value
    array.assign(a)


def test_a_box_frozen_in_midair_is_flagged_and_a_falling_one_is_not(tmp_path, monkeypatch, capsys):
    """A solver that leaves a box hanging 1 m up at rest (each step returns its input state) ran "completed" with
    no word. Now the summary lists it as frozen in mid-air (touching nothing, at rest while gravity acts), a
    warning says so and the expectation is not met. The same box falling freely, or the towers resting on the
    ground (test_a_tower_run_says_whether_the_towers_ended_stacked), is not flagged."""
    path = _box_file(tmp_path)
    assert main(["run", path, "--seconds", "0.1", "--out", str(tmp_path / "falls")]) == 0
    falls = _summary(tmp_path / "falls")
    assert falls["checks"]["frozen_in_midair"]["bodies"] == [] and falls["expectation"]["met"] is True
    capsys.readouterr()

    def freeze(s0, s1, step):
        for name in ("joint_q", "joint_qd", "body_q", "body_qd"):
            getattr(s1, name).assign(getattr(s0, name))

    _tamper(monkeypatch, freeze)
    assert main(["run", path, "--seconds", "0.1", "--out", str(tmp_path / "frozen")]) == 0
    assert "warning: 1 body(ies) frozen in mid-air (body 0" in capsys.readouterr().out
    frozen = _summary(tmp_path / "frozen")
    assert frozen["checks"]["frozen_in_midair"]["bodies"] == [0]
    assert frozen["checks"]["frozen_in_midair"]["first_time_s"] == pytest.approx(2 / 60)  # [s] second frame
    assert frozen["expectation"]["met"] is False and "frozen in mid-air" in frozen["expectation"]["contradictions"][0]


def test_energy_gained_in_a_passive_scene_is_flagged(tmp_path, monkeypatch, capsys):
    """A solver that kicks a falling box upward at 5 m/s at step 30 (0.05 s) adds about 100 J to an 8 kg box; the
    tolerance is the work of lifting it 5 cm (3.9 J). The summary flags the gain, the warning states it.
    nv_ant.xml kept at its declared pose (--keep-pose), 16 mm inside the ground, gains 1.7 J being pushed out:
    flagged, overlap named."""
    path = _box_file(tmp_path)
    assert not _summary_of_run(path, tmp_path / "plain")["checks"]["energy_gain"]["gained"]
    # The README's example: nv_ant.xml at its init_qpos starts 16 mm inside the ground; pushing it out gains 1.7 J
    # (measured with SolverSteel). `steel run ant` and `steel run nv_ant.xml` place it on the ground instead.
    ant = _summary_of_run(newton.examples.get_asset("nv_ant.xml"), tmp_path / "ant", "--keep-pose")
    assert ant["start_overlap_m"] == pytest.approx(0.016, abs=0.002)  # [m]
    assert ant["checks"]["energy_gain"]["max_gain_J"] == pytest.approx(1.7, rel=0.5)  # [J]
    assert "the start pose overlapped by 16 mm" in ant["expectation"]["contradictions"][0]
    capsys.readouterr()

    def kick(s0, s1, step):
        if step == 30:
            _set(s1.joint_qd, 2, 5.0)  # FREE joint: COM velocity first, world frame [m/s]
            _set(s1.body_qd, 2, 5.0)

    _tamper(monkeypatch, kick)
    assert main(["run", path, "--seconds", "0.2", "--out", str(tmp_path / "kicked")]) == 0
    assert "warning: energy gained:" in capsys.readouterr().out
    energy = _summary(tmp_path / "kicked")["checks"]["energy_gain"]
    assert energy["checked"] and energy["gained"]
    assert energy["tolerance_J"] == pytest.approx(0.05 * 9.81 * 8.0, rel=0.01)  # [J] 8 kg lifted 5 cm
    assert energy["max_gain_J"] == pytest.approx(0.5 * 8.0 * (5.0**2 - 0.49**2), rel=0.1)  # [J] v from -0.49 to 5
    assert _summary(tmp_path / "kicked")["expectation"]["met"] is False


def test_the_chain_whip_gain_is_within_its_stated_integrator_tolerance(tmp_path):
    """The released 10-link chain (0.4 kg, 3.9 J of potential energy above z = 0) gains 1.29 J above its start when
    it whips at 2.3 s with SolverSteel at 1/600 s: `steel run chain` ended "expectation NOT met". Newton's
    SolverSteel gains the same (identical to 0.01 J through the first self-contact, 1.01 J at most), as do its
    semi-implicit peers (MuJoCo Euler 0.55 J, 1.02 J without contacts): the integrator's error at that step. The
    chain's own tolerance (1.96 J, lifting every body 50 cm, 1.5x the measured gain) says so in the summary; a
    larger step than the default keeps the 5 cm tolerance; `--dt 0.000416667` gains 0.137 J."""
    coarse = _summary_of_run("chain", tmp_path / "coarse", "--seconds", "2.4")
    energy = coarse["checks"]["energy_gain"]
    assert energy["max_gain_J"] == pytest.approx(1.29, rel=0.5)  # [J] measured 1.289
    assert energy["tolerance_J"] == pytest.approx(0.5 * 0.4 * 9.81, rel=0.01)  # [J] 0.4 kg lifted 50 cm
    assert not energy["gained"] and "semi-implicit Euler" in energy["tolerance_reason"] and coarse["expectation"]["met"]
    fine = _summary_of_run("chain", tmp_path / "fine", "--seconds", "2.4", "--dt", "0.000416667")
    # [J] measured 0.137 (0.067 at dt exactly 1/2400: the whip is chaotic, the peak moves with the 7th digit of dt)
    assert fine["checks"]["energy_gain"]["max_gain_J"] == pytest.approx(0.137, rel=0.6)
    assert fine["expectation"]["met"]
    larger = _summary_of_run("chain", tmp_path / "larger", "--seconds", "0.05", "--dt", "0.002")
    assert larger["checks"]["energy_gain"]["tolerance_J"] == pytest.approx(0.05 * 0.4 * 9.81, rel=0.01)  # [J] 5 cm
    assert larger["checks"]["energy_gain"]["tolerance_reason"] == ""
    from steel.app.run_checks import RunWatch

    model = scenes.build_chain(1, "cpu").model
    with pytest.raises(ValueError, match="gain_height"):
        RunWatch(model, model.state(), gain_height=-0.1)


def _summary_of_run(path, out, *extra):
    """Run ``path`` (0.2 s unless ``extra`` sets --seconds) into ``out``; its summary."""
    seconds = [] if "--seconds" in extra else ["--seconds", "0.2"]
    assert main(["run", path, *seconds, *extra, "--out", str(out)]) == 0
    return _summary(out)


def test_bodies_that_leave_the_scene_are_flagged(tmp_path, monkeypatch, capsys):
    """A box thrown sideways at 40 m/s (below the guard's 50 m/s, inside its 20 m box) ends 6 m away, and a box
    moved 1 m under the ground plane fell through it: both runs "completed" unflagged before. Now each is listed
    as having left the scene (more than 2 m outside the start's box; under the ground), with a warning."""
    path = _box_file(tmp_path)

    def throw(s0, s1, step):
        if step == 30:
            _set(s1.joint_qd, 0, 40.0)
            _set(s1.body_qd, 0, 40.0)

    _tamper(monkeypatch, throw)
    thrown = _summary_of_run(path, tmp_path / "thrown")
    assert "warning: 1 body(ies) left the scene (body 0 outside the scene bounds" in capsys.readouterr().out
    assert thrown["checks"]["left_scene"]["bodies"] == [0] and thrown["expectation"]["met"] is False

    def sink(s0, s1, step):
        if step >= 30:
            _set(s1.joint_q, 2, -1.0)
            _set(s1.body_q, 2, -1.0)

    _tamper(monkeypatch, sink)
    sunk = _summary_of_run(path, tmp_path / "sunk")
    assert "left the scene (body 0 under the ground" in capsys.readouterr().out
    assert sunk["checks"]["left_scene"]["first"]["why"] == "under the ground"
    assert sunk["checks"]["left_scene"]["first"]["time_s"] == pytest.approx(0.05)  # [s] the frame of step 30


def test_metrics_are_named_for_the_scene_kind_and_defined_in_help_and_readme(tmp_path, capsys):
    """A welded chain printed "highest root 0.000 m, max drift 0.00 mm" on every line; now a fixed-base scene
    reports hinge travel and speed, no drift; the towers report stack drift and overlap. Every measurement name
    is defined in `steel run --help` and the README; the times are simulated_s, wall_total_s, wall_stepping_s."""
    from pathlib import Path

    from steel.app.catalog import METRICS

    assert main(["run", "chain", "--seconds", "0.1", "--out", str(tmp_path / "chain")]) == 0
    out = capsys.readouterr().out
    assert "hinge travel" in out and "drift" not in out and "highest root" not in out
    chain = _summary(tmp_path / "chain")
    assert chain["kind"] == "fixed_base" and chain["hinge_travel_max_deg"] > 10.0  # [deg] released horizontal
    assert "stack_drift_max_m" not in chain and "base_height_m" not in chain
    assert chain["simulated_s"] == pytest.approx(0.1) and chain["wall_total_s"] > chain["wall_stepping_s"] > 0.0
    assert "duration_seconds" not in chain and "wall_seconds" not in chain
    assert main(["run", "tower", "--seconds", "0.05", "--out", str(tmp_path / "tower")]) == 0
    assert "stack drift" in capsys.readouterr().out
    assert _summary(tmp_path / "tower")["kind"] == "stack"
    assert main(["run", "--help"]) == 0
    help_text = capsys.readouterr().out
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for name in METRICS:
        assert name in help_text and f"`{name}`" in readme, name


def test_old_summaries_and_run_lists_stay_readable(tmp_path):
    """A version-1 summary (duration_seconds, wall_seconds, simulated_seconds) reads with the new names, and a
    runs.csv begun by the old version keeps its own columns when a new run is appended to it."""
    from steel.app.run_record import read_summary, record_run

    (tmp_path / "summary.json").write_text(json.dumps({"outcome": "completed", "duration_seconds": 3.0,
                                                       "wall_seconds": 2.0, "simulated_seconds": 1.0}))
    old = read_summary(tmp_path / "summary.json")
    assert (old["wall_total_s"], old["wall_stepping_s"], old["simulated_s"]) == (3.0, 2.0, 1.0)
    index = tmp_path / "runs.csv"
    index.write_text("folder,outcome,simulated_seconds,wall_seconds,command\nold,completed,1.0,2.0,steel run x\n")
    record_run(index, tmp_path / "new", {"outcome": "completed", "simulated_s": 5.0, "wall_stepping_s": 4.0,
                                         "wall_total_s": 9.0, "command": "steel run y"})
    assert index.read_text().splitlines()[-1] == "new,completed,5.0,4.0,steel run y"


def test_a_full_contact_buffer_is_flagged_in_the_run_summary(tmp_path, monkeypatch, capsys):
    """Newton's pipeline drops the contacts beyond its rigid_contact_max without a word (the count stops at it).
    A run whose pipeline is sized for 8 contacts (the tower needs ~100) names the frames with a full buffer in a
    warning and in the summary; the same run with the runner's own pipeline has none."""
    assert main(["run", "tower", "--seconds", "0.05", "--out", str(tmp_path / "roomy")]) == 0
    assert _summary(tmp_path / "roomy")["contact_buffer_full_frames"] == 0
    capsys.readouterr()
    real = newton.CollisionPipeline

    def small(model, **kwargs):
        return real(model, **kwargs, rigid_contact_max=8)

    monkeypatch.setattr(runner.newton, "CollisionPipeline", small)
    assert main(["run", "tower", "--seconds", "0.05", "--out", str(tmp_path / "small")]) == 0
    assert "contact buffer was full (8 contacts) on 3 frame(s)" in capsys.readouterr().out
    assert _summary(tmp_path / "small")["contact_buffer_full_frames"] == 3


def test_compile_estimates_pick_the_longest_fitting_key():
    """The sweep module's key is a prefix of the velocity sweeps' module name: each gets its own measured time
    (the velocity module read the sweep's 135 s before), a generic kernel matches by prefix, and Newton's modules
    by their last dotted parts, so no private package path is written in the table."""
    import types  # noqa: PLC0415

    from steel.app.compile_progress import MEASURED_S, estimate_seconds  # noqa: PLC0415

    def est(name):
        return estimate_seconds(types.SimpleNamespace(name=name))

    assert est("steel.solvers.steel.sweep.pgs") == MEASURED_S["steel.solvers.steel.sweep.pgs"]
    assert est("steel.solvers.steel.sweep.velocity") == MEASURED_S["steel.solvers.steel.sweep.velocity"]
    assert est("narrow_phase_gjk_mpr_True_False_write") == MEASURED_S["narrow_phase_gjk_mpr"]
    assert est("newton._src.sim.articulation") == MEASURED_S["sim.articulation"]
    assert not any(key.startswith("newton.") for key in MEASURED_S)
