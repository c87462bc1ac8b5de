"""One short, prepared device check: run it when a task is lent a GPU (``device`` tool).

``python -m benchmarks.cuda_check [--device cuda:0] [--worlds 1024,4096]`` checks, on the device:

1. the articulation core against Newton's ``eval_fk`` / ``eval_mass_matrix`` on nv_humanoid
   (relative error; same float32 kernels as the CPU, so ~1e-6 is expected);
2. SolverSteel on the four towers: finite, drift, and a CUDA graph of ``collide + step`` captured
   once and replayed, equal to eager stepping;
3. SolverFeatherstone on nv_humanoid in the air: the device trajectory against the CPU one;
4. the CollisionSubstepScheduler's ``step()`` inside an outer graph capture, equal to eager;
5. throughput [world-steps/s] of SolverSteel and SolverFeatherstone at ``--worlds`` worlds against
   Newton's reference solvers.

It prints one line per check and exits 1 if any check fails. On a machine without CUDA it runs
the same checks on the CPU (graph capture then uses Warp's CPU capture), which is how it is tested.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import warp as wp

import newton
import newton.examples


def _report(name: str, ok: bool, detail: str, failures: list) -> None:
    print(f"[{'ok' if ok else 'FAIL'}] {name}: {detail}", flush=True)
    if not ok:
        failures.append(name)


def check_core(device, failures):
    from steel.articulation import ArticulationCore, padded_blocks

    robot = newton.ModelBuilder()
    robot.add_mjcf(newton.examples.get_asset("nv_humanoid.xml"))
    model = robot.finalize(device=device)
    core = ArticulationCore(model)
    rng = np.random.default_rng(0)
    q = model.joint_q.numpy()
    q[7:] = rng.uniform(-0.5, 0.5, size=q.size - 7)
    ours, ref = model.state(), model.state()
    for s in (ours, ref):
        s.joint_q.assign(q)
        s.joint_qd.assign(rng.normal(size=model.joint_dof_count).astype(np.float32))
    newton.eval_fk(model, ref.joint_q, ref.joint_qd, ref)
    core.step_quantities(ours)
    err_q = np.abs(ours.body_q.numpy() - ref.body_q.numpy()).max()
    H = newton.eval_mass_matrix(model, ref).numpy()
    err_H = np.abs(padded_blocks(core.plan, core.data.mass_matrix) - H).max() / np.abs(H).max()
    _report("core vs eval_fk/eval_mass_matrix", err_q < 1e-4 and err_H < 2e-5,
            f"body_q {err_q:.1e} m, H {err_H:.1e} relative", failures)


def _tower(device, worlds=16):
    from steel.app.scenes import build_tower

    return build_tower(worlds, device).model


def check_steel_graph(device, failures, dt=1.0 / 240.0, steps=120):
    from steel.solvers import SolverSteel

    def run(capture: bool):
        model = _tower(device)
        solver = SolverSteel(model)
        pipeline = newton.CollisionPipeline(model)
        contacts = pipeline.contacts()
        s0, s1 = model.state(), model.state()
        # one eager step first: allocations and module loads happen outside the capture
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, dt)
        s0, s1 = s1, s0
        if not capture:
            for _ in range(steps):
                pipeline.collide(s0, contacts)
                solver.step(s0, s1, None, contacts, dt)
                s0, s1 = s1, s0
            return s0.body_q.numpy()
        with wp.ScopedCapture(device=model.device) as cap:
            for _ in range(2):  # two steps so the graph ends on s0 again
                pipeline.collide(s0, contacts)
                solver.step(s0, s1, None, contacts, dt)
                s0, s1 = s1, s0
        for _ in range(steps // 2):
            wp.capture_launch(cap.graph)
        return s0.body_q.numpy()

    try:
        eager = run(False)
        graph = run(True)
        finite = bool(np.isfinite(eager).all())
        diff = float(np.abs(eager - graph).max())
        _report("SolverSteel towers: eager vs captured graph", finite and diff < 1e-4,
                f"finite={finite}, max |eager - graph| {diff:.1e} m", failures)
    except Exception as exc:  # report, keep checking
        _report("SolverSteel towers: eager vs captured graph", False, f"{type(exc).__name__}: {exc}", failures)


def check_featherstone_cpu_match(device, failures, steps=200):
    from steel.solvers import SolverFeatherstone

    def run(dev):
        robot = newton.ModelBuilder()
        robot.add_mjcf(newton.examples.get_asset("nv_humanoid.xml"), xform=wp.transform((0, 0, 3.0), wp.quat_identity()))
        model = robot.finalize(device=dev)
        solver = SolverFeatherstone(model)
        s0, s1 = model.state(), model.state()
        for _ in range(steps):
            solver.step(s0, s1, None, None, 1.0 / 600.0)
            s0, s1 = s1, s0
        return s0.joint_q.numpy()

    diff = float(np.abs(run(device) - run("cpu")).max())
    _report("SolverFeatherstone humanoid: device vs CPU", diff < 1e-3, f"max |dq| {diff:.1e} (float32 order)", failures)


def check_scheduler_capture(device, failures):
    from steel import CollisionSubstepScheduler
    from steel.solvers import SolverSteel

    def run(capture: bool):
        model = _tower(device, worlds=4)
        solver = SolverSteel(model)
        pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=0.1)
        contacts = pipeline.contacts()
        states = (model.state(), model.state())
        scheduler = CollisionSubstepScheduler(
            pipeline,
            states,
            collision_callback=lambda s, cdt: pipeline.collide(s, contacts, dt=cdt),
            substep_callback=lambda a, b, sdt: solver.step(a, b, None, contacts, sdt),
            frame_dt=1.0 / 60.0,
            substeps=8,
        )
        scheduler.step()
        if capture:
            with wp.ScopedCapture(device=model.device) as cap:
                scheduler.step()
            for _ in range(9):
                wp.capture_launch(cap.graph)
        else:
            for _ in range(9):
                scheduler.step()
        return states[0].body_q.numpy()

    try:
        diff = float(np.abs(run(False) - run(True)).max())
        _report("scheduler step() inside a graph capture", diff < 1e-4, f"max |eager - graph| {diff:.1e} m", failures)
    except Exception as exc:
        _report("scheduler step() inside a graph capture", False, f"{type(exc).__name__}: {exc}", failures)


def check_throughput(device, worlds, failures, steps=60):
    from benchmarks.scenes import build_scene

    rows = []
    cases = (
        ("humanoid", ("SolverFeatherstone", "SolverSteel")),
        ("ant", ("SolverFeatherstone", "SolverSteel")),
        ("tower", ("SolverSteel",)),  # contact-rich free bodies: the per-world sweep's worst case on a GPU
    )
    for scene, pairs in cases:
        for name in pairs:
            for owner in ("newton", "steel"):
                try:
                    model = build_scene(scene, worlds, device).model
                    cls = getattr(newton.solvers if owner == "newton" else __import__("steel.solvers").solvers, name)
                    solver = cls(model)
                    pipeline = newton.CollisionPipeline(model)
                    contacts = pipeline.contacts()
                    s0, s1 = model.state(), model.state()
                    for _ in range(5):
                        pipeline.collide(s0, contacts)
                        solver.step(s0, s1, None, contacts, 1.0 / 600.0)
                        s0, s1 = s1, s0
                    wp.synchronize_device(model.device)
                    t = time.perf_counter()
                    for _ in range(steps):
                        pipeline.collide(s0, contacts)
                        solver.step(s0, s1, None, contacts, 1.0 / 600.0)
                        s0, s1 = s1, s0
                    wp.synchronize_device(model.device)
                    rate = worlds * steps / (time.perf_counter() - t)
                    finite = bool(np.isfinite(s0.joint_q.numpy()).all())
                    rows.append((scene, name, owner, rate, finite))
                    print(f"       {scene:9s} x{worlds} {owner}.{name:19s} {rate:12,.0f} world-steps/s  finite={finite}",
                          flush=True)
                except Exception as exc:
                    print(f"       {scene} {owner}.{name}: {type(exc).__name__}: {exc}", flush=True)
    ours = [f for _, _, owner, _, f in rows if owner == "steel"]
    expected = sum(len(pairs) for _, pairs in cases)
    ok = len(ours) == expected and all(ours)  # every one of ours ran and stayed finite
    _report(f"throughput x{worlds}", ok, f"{len(rows)} runs; ours ran {len(ours)} of {expected}, finite={all(ours)}",
            failures)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="default: cuda:0 when available, else cpu")
    parser.add_argument("--worlds", default="1024,4096",
                        help="comma list of world counts for the throughput check (default 1024,4096)")
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    device = args.device or ("cuda:0" if wp.is_cuda_available() else "cpu")
    print(f"device {device}: {wp.get_device(device).name}", flush=True)
    failures: list = []
    check_core(device, failures)
    check_steel_graph(device, failures)
    check_featherstone_cpu_match(device, failures)
    check_scheduler_capture(device, failures)
    if not args.skip_throughput:
        for worlds in (int(w) for w in args.worlds.split(",") if w.strip()):
            check_throughput(device, worlds, failures)
    print("all checks passed" if not failures else f"failed: {', '.join(failures)}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
