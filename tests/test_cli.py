"""The `steel` command line: runs write their results; bad input is a one-line error that writes nothing;
a run that blows up stops with exit status 1 and says what happened and when.

Each test named after a failure a new user hit pins that failure (the commands are shortened)."""

import json

import newton.examples
import numpy as np
import pytest

from steel import runner, scenes
from steel.cli import EXIT_BAD_INPUT, EXIT_DIVERGED, build_parser, main
from steel.run_record import default_out_dir


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
    assert summary["duration_seconds"] > 0.0 and summary["simulated_seconds"] == pytest.approx(0.02, abs=1e-3)
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
    assert summary["steps_taken"] == 1 and summary["world_steps_per_second"] is None


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
    assert lines[0] == "folder,outcome,simulated_seconds,wall_seconds,command"
    assert sorted(line.split(",")[0] for line in lines[1:]) == [run.name for run in runs]
    assert all(",completed," in line for line in lines[1:])


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
    from steel.catalog import PARTICLE_SCENES, SCENES, VBD_SCENES

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


def test_a_cold_kernel_cache_is_announced(tmp_path, monkeypatch):
    """With no compiled kernels of the solver in Warp's cache, the run says it is compiling (it was silent for minutes)."""
    import warp as wp  # noqa: PLC0415

    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    monkeypatch.setattr(wp.config, "log_level", wp.LOG_WARNING)
    lines = []
    assert runner.announce_first_compile("steel.solvers.steel", lines.append)
    assert "compiling kernels, first run only" in lines[0] and wp.config.log_level == wp.LOG_INFO  # progress on
    (tmp_path / "wp_steel.solvers.steel.pgs_1234567").mkdir()
    monkeypatch.setattr(wp.config, "log_level", wp.LOG_WARNING)
    assert not runner.announce_first_compile("steel.solvers.steel", lines.append) and len(lines) == 1
    assert wp.config.log_level == wp.LOG_WARNING


def test_steel_run_humanoid_keeps_its_joints_inside_their_limits(tmp_path):
    """`steel run humanoid` turns SolverSteel's joint limits on: after the fall no hinge is past its range.

    With the reference default (limits off) the knees ended at 168° against a [-160°, 2°] range."""
    assert main(["run", "humanoid", "--seconds", "2", "--out", str(tmp_path)]) == 0
    summary = _summary(tmp_path)
    assert summary["solver_options"]["enable_joint_limits"] is True
    assert summary["joint_limit_overshoot_m_or_rad"] < 0.05
    assert max(summary["final_root_height_m"]) < 0.5  # it fell and lies on the ground


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
    assert max(summary["final_root_height_m"]) < 0.55  # [m] settled onto its legs, not launched


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
    assert max(summary["final_root_height_m"]) < 0.55  # [m] settled onto its legs, not launched


def test_vbd_options_are_passed_to_and_checked_by_solvervbd(tmp_path, capsys):
    """--option reaches SolverVBD on top of the scene's options; a bad one is its error, exit 2, nothing written."""
    out = tmp_path / "out"
    assert main(["run", "cloth_hang", "--size", "2", "--option", "no_such_option=1", "--out", str(out)]) == 2
    assert "SolverVBD" in capsys.readouterr().err and not out.exists()
    assert main(["run", "cloth_hang", "--size", "2", "--seconds", "0.02", "--option", "iterations=3",
                 "--out", str(out)]) == 0
    assert _summary(out)["solver_options"]["iterations"] == 3


def test_version_and_help_answer_without_importing_newton_or_warp():
    """`steel --version` and `steel run --help` print at once: neither Newton nor Warp is imported for them."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from steel.cli import main\n"
        "for argv in (['--version'], ['run', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('newton' in sys.modules, 'warp' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False False"


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
    sink = max(z0 - z for z0, z in zip(ideal, summary["final_root_height_m"], strict=True))
    assert 0.0 < sink < 0.03  # [m] the seed's revision of the reference: 27.0 mm
    assert summary["max_horizontal_drift_m"] < 1e-3


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
