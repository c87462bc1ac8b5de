"""The `steel` command line: run and demo write their results; bad input is a clear error."""

import json

import newton.examples

from steel.cli import main


def test_run_writes_summary_final_state_and_plot(tmp_path):
    """`steel run chain` for a few steps writes summary.json, final_state.npz and trajectory.png."""
    assert main(["run", "chain", "--seconds", "0.05", "--worlds", "2", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["finite"] and summary["world_count"] == 2 and summary["steps"] == 12
    assert (tmp_path / "final_state.npz").exists() and (tmp_path / "trajectory.png").exists()


def test_run_accepts_a_robot_file(tmp_path):
    """An MJCF path is loaded, lifted and dropped on the shared ground plane."""
    path = newton.examples.get_asset("nv_ant.xml")
    assert main(["run", path, "--solver", "featherstone", "--seconds", "0.05", "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "summary.json").read_text())["finite"]


def test_unknown_scene_is_a_clear_error(tmp_path, capsys):
    """A scene that is neither shipped nor a file exits with status 2 and says why."""
    assert main(["run", "no_such_scene", "--out", str(tmp_path)]) == 2
    assert "neither a shipped scene" in capsys.readouterr().err


def test_demo_writes_the_tower_results(tmp_path):
    """`steel demo` (shortened) runs the towers with SolverSteel and writes its results."""
    assert main(["demo", "--seconds", "0.1", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["scene"] == "tower" and summary["solver"] == "steel" and summary["finite"]


def test_run_particle_scene_with_vbd(tmp_path):
    """`steel run cloth_hang --solver vbd` writes the particle summary, final state and energy plot."""
    assert main(["run", "cloth_hang", "--solver", "vbd", "--size", "4", "--seconds", "0.05", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["finite"] and summary["particles"] == 25 and summary["steps"] == 30
    assert summary["max_self_intersecting_pairs"] == 0 and summary["lowest_particle_m"] < 2.0
    assert (tmp_path / "final_state.npz").exists() and (tmp_path / "energy_contacts.png").exists()


def test_soft_cube_lands_on_the_ground(tmp_path):
    """`steel run soft_cube` (vbd by default for a particle scene) drops the cube onto the ground plane."""
    assert main(["run", "soft_cube", "--size", "2", "--seconds", "0.5", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["solver"] == "vbd" and summary["finite"]
    assert -0.01 < summary["lowest_particle_m"] < 0.02  # resting on the plane, within the contact radius
