"""The benchmarks' settled start (benchmarks/settle.py), the --dt list of benchmarks/run.py and the contact
profile (benchmarks/profile_contacts.py), on small cases: seconds each on the CPU."""

import json

import numpy as np
import pytest
import warp as wp

import newton
import steel.solvers
from benchmarks import profile_contacts, run, settle
from benchmarks.measure import MujocoRun, SolverRun

DT = 1.0 / 240.0  # [s] the coarser of the two benchmark time steps: the fewest settle steps


def _box_on_ground(lift: float) -> tuple[newton.Model, newton.State, newton.Contacts]:
    """One 0.2 m cube whose bottom face is ``lift`` [m] above a ground plane, and its contacts."""
    robot = newton.ModelBuilder()
    body = robot.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.1 + lift), wp.quat_identity()))
    robot.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b = newton.ModelBuilder()
    b.replicate(robot, 1)  # world 0, as the benchmark scenes are built
    b.add_ground_plane()
    model = b.finalize(device="cpu")
    state = model.state()
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    pipeline.collide(state, contacts)
    return model, state, contacts


def test_touching_counts_the_corners_of_a_resting_box_and_not_a_hovering_one():
    model, state, contacts = _box_on_ground(0.0)
    assert settle.touching_per_world(model, state.body_q.numpy(), contacts).tolist() == [4]
    # 5 mm up: the pipeline still reports the four corners (inside the 0.1 m gap), none carries load.
    model, state, contacts = _box_on_ground(5.0e-3)
    assert int(contacts.rigid_contact_count.numpy()[0]) == 4
    assert settle.touching_per_world(model, state.body_q.numpy(), contacts).tolist() == [0]


def test_verdict_names_each_reason_a_start_is_not_settled():
    ok, why = settle.verdict("humanoid", True, 0.01, np.array([12]), np.array([0.17]), 13)
    assert ok and why == []
    ok, why = settle.verdict("humanoid", True, 2.0, np.array([0]), np.array([1.3]), 13)
    assert not ok and len(why) == 3 and "moving" in why[0] and "contacts" in why[1] and "not lying" in why[2]
    ok, why = settle.verdict("ant", True, 0.0, np.array([4]), np.array([0.25]), 9)
    assert not ok and why == ["torso at 0.25 m (not standing)"]
    # The tower needs a loaded contact per box: 23 contacts for 24 boxes leave one box unsupported.
    assert not settle.verdict("tower", True, 0.0, np.array([23]), np.array([0.1]), 24)[0]
    assert settle.verdict("tower", False, 0.0, np.array([96]), np.array([0.1]), 24) == (False, ["NaN"])


def test_settle_steps_use_the_same_simulated_time_at_every_dt():
    assert settle.settle_steps("humanoid", 1.0 / 240.0) == round(settle.SETTLE_S["humanoid"] * 240)
    assert settle.settle_steps("humanoid", 1.0 / 600.0) == round(settle.SETTLE_S["humanoid"] * 600)
    assert settle.settle_steps("chain", 1.0 / 600.0) == 0  # no contact load, no settle time
    with pytest.raises(ValueError, match="dt"):
        settle.settle_steps("tower", 0.0)


def test_settled_humanoid_lies_on_the_ground_in_contact():
    run_ = SolverRun(steel.solvers.SolverSteel, "humanoid", 1, "cpu", DT)
    run_.advance(2)
    dropped = run_.start_check()
    # Just released from 1.5 m: the check must fail (it can fail), torso high, nothing touching.
    assert not dropped["settled"] and dropped["torso_z_max_m"] > 1.4 and dropped["contacts_min_per_world"] == 0
    run_.advance(settle.settle_steps("humanoid", DT) - 2)
    start = run_.start_check()
    assert start["settled"], start["text"]
    assert start["torso_z_max_m"] < settle.HUMANOID_LYING_Z
    assert start["contacts_min_per_world"] > 0 and start["speed_max_mps"] < settle.SPEED_MAX
    assert abs(start["t_s"] - settle.SETTLE_S["humanoid"]) < DT


def test_settled_mujoco_humanoid_lies_on_the_ground_in_contact():
    run_ = MujocoRun("humanoid", 1, DT)
    run_.advance(settle.settle_steps("humanoid", DT))
    m = run_.window(5, check_start=True)
    assert m.start["settled"], m.start["text"]
    assert m.start["torso_z_max_m"] < settle.HUMANOID_LYING_Z and m.start["contacts_min_per_world"] > 0


def test_parse_dts_reads_fractions_and_decimals_and_names_the_option():
    assert run.parse_dts("1/240, 0.002") == [("1/240", 1.0 / 240.0), ("0.002", 0.002)]
    for bad in ("1/0", "fast", "-1/600", ""):
        with pytest.raises(ValueError, match="--dt"):
            run.parse_dts(bad)


def test_runner_times_the_settled_ant_at_each_dt_and_reuses_the_settled_scene(monkeypatch):
    started = []
    start_run = run._start_run

    def counted(cand, scene, worlds, dt, args):
        started.append((cand.label, scene, dt))
        return start_run(cand, scene, worlds, dt, args)

    monkeypatch.setattr(run, "_start_run", counted)
    args = run.parse_args(["--scenes", "ant", "--worlds", "1", "--dt", "1/240,1/600", "--steps", "3", "--repeats", "2",
                           "--count-steps", "1", "--solvers", "steel.solvers:SolverSteel", "--no-mujoco",
                           "--no-core", "--no-scheduler", "--no-vbd", "--no-contact-models"])
    args.device = "cpu"
    entries = run.run(args)
    # Ours and its reference at two time steps: each scene settled once, its second repeat timed on it.
    assert len(started) == 4 and len(set(started)) == 4
    ours = [e for e in entries if e.solver == "steel.SolverSteel"]
    assert [e.dt for e in ours] == ["1/240", "1/600"]
    for e in ours:
        assert e.error is None and e.start["settled"], e.start.get("text")
        assert e.start["t_s"] >= settle.SETTLE_S["ant"] - 1e-9
    assert "| ant | 1 | 1/240 | steel.SolverSteel |" in run.markdown(entries, {
        "device": "cpu", "cpu": "x", "cpu_count": 2, "warp": "w", "newton": "n", "mujoco": "m", "python": "p",
        "date": "d", "total_s": 1.0, "steps": 3, "warmup": 10, "repeats": 2, "settle": settle.SETTLE_S,
        "command": "c"})


def test_profile_runs_on_one_tower_and_reads_the_rows(tmp_path):
    out = tmp_path / "prof.json"
    assert profile_contacts.main(["--scene", "tower", "--worlds", "1", "--dt", "1/240", "--steps", "3",
                                  "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["start"]["settled"], res["start"]["text"]
    kernels = {k["kernel"]: k for k in res["kernels"]}
    # Every stage of the step is one launch per step, each timed.
    for name in ("_free_dynamics", "_contact_rows", "_sweep", "_record_contacts", "_finish_articulations"):
        assert kernels[name]["launches_per_step"] == 1.0 and kernels[name]["timed"] and kernels[name]["ms_per_step"] > 0
    stages = {s["stage"] for s in res["stages"]}
    assert {profile_contacts.COLLISION, "free dynamics", "contact rows", "sweep (PGS)", "finish"} <= stages
    rows = res["row_stats"]
    # 24 resting boxes: 4 loaded corners each act; speculative rows (contacts inside the gap) do not.
    assert rows["by_kind"]["contact"]["acting"] == 96.0
    assert 0 < rows["acting"] <= rows["rows"] and rows["dropped_total"] == 0
    assert res["touching_per_step"] == 96.0 and res["contacts_per_step"] >= res["touching_per_step"]
    assert res["sweep_cost"]["us_per_acting_row"] > 0


@pytest.mark.parametrize("scene, falling_s, resting_s", [("tower", 0.5, 0.75), ("ant", 0.0, 0.5)])
def test_ours_comes_to_rest_within_the_settle_time(scene, falling_s, resting_s):
    """The settle times' margin (settle.py's docstring): ours at 1/240 s is settled at ``resting_s`` [s], well inside
    settle.SETTLE_S; the towers are not yet at ``falling_s`` [s] (the highest box falls until 0.55 s)."""
    run_ = SolverRun(steel.solvers.SolverSteel, scene, 1, "cpu", DT)
    run_.advance(round(falling_s / DT))
    if scene == "tower":
        assert not run_.start_check()["settled"]  # boxes still falling: the check can fail here
    run_.advance(round((resting_s - falling_s) / DT))
    start = run_.start_check()
    assert start["settled"], start["text"]
    assert resting_s < settle.SETTLE_S[scene]
