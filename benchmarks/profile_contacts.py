"""Where SolverSteel's step goes on a settled contact scene: time per stage and kernel, and the rows that act.

Usage (from the repository root)::

    python -m benchmarks.profile_contacts --scene tower --worlds 16 --dt 1/240
    python -m benchmarks.profile_contacts --scene humanoid --worlds 16 --dt 1/600 --steps 100 --json prof.json

The scene is built, settled (:mod:`benchmarks.settle`: its settle time untimed, the start checked and
printed), then stepped with Newton's collide-then-step loop for ``--steps`` plain steps, timing each
``collide`` and ``solver.step`` call (the real cost per step), and ``--steps`` profiled steps, timing every
kernel (next paragraph) and reading the contact rows after each step; plain and profiled steps alternate in
blocks of 10, so a shared machine's load hits both alike, and every time is the 10th percentile over the
steps (:data:`STEP_QUANTILE`): a settled scene's steps do the same work, and on a shared machine other jobs
slow many of them, some by several times, but never speed one up (so a median can move between runs by
more than the work does; ``benchmarks/README.md``'s profile section has an example).

Stages. The step recipe (``SolverSteel._advance``) launches one fused kernel per stage: ``_free_dynamics``
(input kinematics, bias forces, mass matrix, factor and predicted velocity; ``predict.py``),
``_contact_rows`` (``contacts/rows.py``), the joint rows where a scene has any (``joints/``), ``_sweep``
(the projected Gauss-Seidel passes, ``sweep/pgs.py``; the shock pass and velocity sweeps when on),
``_record_contacts`` (the contact history, ``contacts/history.py``) and ``_finish_articulations``
(integrate and publish, ``finish.py``). A kernel's stage is read off its module; the kernel is the finest
grain measurable from outside (the sweep's ordering, response formation and passes share one kernel).
Host time: the plain step's wall time less the kernels' sum (argument checks, the row-count reset, the
replayed launches' calls, copies).

Kernel timing. On CUDA, Warp's activity timing (``wp.timing_begin(cuda_filter=wp.TIMING_KERNEL)``; the
device is synchronized per call). Warp 1.19 records only CUDA activity, so on the CPU each loaded kernel's
native entry point (its ``KernelHooks.forward``) is wrapped with a clock for the profiled steps and restored
afterwards, and ``wp.Launch.launch`` is wrapped so that ``steel.launches`` replays through Warp's own call
(which reads the wrapped entry point) rather than its direct call (which holds the entry point it recorded).
The kernel times are therefore the kernels' own; what the wrapping adds (Warp's argument packing per
replay) shows only in the profiled wall time, which is printed next to the plain one. These are Warp
internals (``warp._src.context.user_modules``, ``Module.execs``, ``ModuleExec.kernel_hooks``; warp-lang
is pinned): where they are missing the script says so and stops.

Contact statistics, per step (read-only, from ``solver.steel_data.rows.buffers`` after each step): the
pipeline's rigid contacts and those touching (within ``settle.TOUCH_GAP``), the rows reserved
(``world_row_count``) by kind, the rows that act (net impulse ``impulse + preload`` nonzero at the end of
the step's solve), the dormant contact rows (built without a Jacobian, ``inv_mass`` -2/-3) and the sweep's
cost per acting row. The rows the sweep's gate skipped in a pass are not recorded anywhere readable
without editing the solver, so passes per row are not reported.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict

import numpy as np
import warp as wp

import steel.solvers
from steel.launches import recorded_launches
from steel.solvers.steel import data as row_data

from . import scenes as sc
from . import settle
from .measure import SolverRun
from .run import parse_dts

COLLISION = "collision (Newton pipeline)"
# Stage of a SolverSteel kernel by the module it lives in (the first matching prefix wins), in recipe order.
STAGE_OF_MODULE = (
    ("steel.solvers.steel.predict", "free dynamics"),
    ("steel.solvers.steel.kinematics_carry", "free dynamics"),
    ("steel.articulation", "free dynamics"),
    ("steel.solvers.steel.joints.velocity_limits", "free dynamics"),
    ("steel.solvers.steel.joints.drives", "drive rows"),
    ("steel.solvers.steel.contacts.history", "contact history"),
    ("steel.solvers.steel.contacts", "contact rows"),
    ("steel.solvers.steel.joints", "joint rows"),
    ("steel.solvers.steel.sweep", "sweep (PGS)"),
    ("steel.solvers.steel.observables", "observables"),
    ("steel.solvers.steel.finish", "finish"),
    ("steel.solvers.steel.sleeping", "sleeping"),
)
PROFILE_BLOCK = 10  # steps per block of plain, then profiled, steps
STEP_QUANTILE = 0.1  # the quantile over steps every time is read at (see the module docstring)
STAGE_ORDER = (COLLISION, "free dynamics", "drive rows", "contact rows", "joint rows", "sweep (PGS)", "observables",
               "contact history", "finish", "sleeping")
ROW_KIND_NAMES = {int(getattr(row_data, name)): name[4:].lower() for name in dir(row_data) if name.startswith("ROW_")}


def stage_of(context: str, module: str) -> str:
    """The stage a kernel of ``module`` launched inside ``context`` (``"collide"`` or ``"step"``) belongs to."""
    if context == "collide":
        return COLLISION
    for prefix, stage in STAGE_OF_MODULE:
        if module.startswith(prefix):
            return stage
    return f"other ({module})"


class KernelClock:
    """Per-kernel native time and launches while active, keyed ``(context, module, kernel key)``.

    Set :attr:`context` before each phase. See the module docstring for how (CPU: wrapped entry points;
    CUDA: Warp's activity timing, collected by :meth:`cuda_phase`).
    """

    def __init__(self, device):
        self.device = wp.get_device(device)
        self._context = "step"
        self.seconds: dict[tuple, float] = defaultdict(float)
        self.launches: dict[tuple, int] = defaultdict(int)
        self._module_of: dict[str, str] = {}
        self._saved_hooks: list = []
        self._listing = None  # steel.launches.recorded_launches(), entered
        self._launched: list = []  # the kernels it lists, in launch order
        self._counted = 0  # how many of them are attributed to a context

    @property
    def context(self) -> str:
        return self._context

    @context.setter
    def context(self, value: str) -> None:
        self._count_launched()  # launches so far belong to the context that was current
        self._context = value

    def __enter__(self) -> KernelClock:
        # Lists every launch, direct or replayed; its wrapper on wp.Launch.launch also makes steel.launches
        # replay through Warp's call, which reads the wrapped entry points (see the module docstring).
        self._listing = recorded_launches()
        self._launched = self._listing.__enter__()
        if self.device.is_cpu:
            try:
                self._wrap_cpu_entry_points()
            except Exception:
                self.__exit__()
                raise
        return self

    def __exit__(self, *exc) -> None:
        for hooks, forward in self._saved_hooks:
            hooks.forward = forward
        self._saved_hooks.clear()
        if self._listing is not None:
            self._count_launched()
            self._listing.__exit__(None, None, None)
            self._listing = None

    def _count_launched(self) -> None:
        for kernel in self._launched[self._counted:]:
            module = kernel.module.name
            self._module_of.setdefault(kernel.key, module)
            self.launches[(self._context, module, kernel.key)] += 1
        self._counted = len(self._launched)

    def _wrap_cpu_entry_points(self) -> None:
        import warp._src.context as warp_context  # noqa: PLC0415 - internals, see the module docstring

        try:
            modules = list(warp_context.user_modules.values())
            found = [(m.name, ex) for m in modules for ex in m.execs.values()
                     if ex is not None and ex.device is not None and ex.device.is_cpu]
            hooks_of = [(name, mangled, hooks) for name, ex in found for mangled, hooks in ex.kernel_hooks.items()]
        except AttributeError as exc:
            raise RuntimeError(f"per-kernel CPU timing needs Warp internals this Warp lacks ({exc})") from None
        for module, mangled, hooks in hooks_of:
            forward = getattr(hooks, "forward", None)
            if forward is None:
                continue
            self._saved_hooks.append((hooks, forward))
            hooks.forward = self._clocked(module, mangled.rsplit("_", 1)[0], forward)

    def _clocked(self, module: str, key: str, forward):
        seconds = self.seconds

        def call(*args):
            t0 = time.perf_counter()
            out = forward(*args)
            seconds[(self._context, module, key)] += time.perf_counter() - t0
            return out

        return call

    def cuda_phase(self, context: str, fn) -> None:
        """Run ``fn`` under Warp's CUDA kernel activity timing and add its kernels' times under ``context``."""
        self.context = context
        wp.timing_begin(cuda_filter=wp.TIMING_KERNEL)
        try:
            fn()
        finally:
            results = wp.timing_end()
        self._count_launched()  # the kernel keys' modules, for the timing results' names
        for r in results:
            name = r.name.removeprefix("forward kernel ")
            key = name.rsplit("_", 1)[0]
            self.seconds[(context, self._module_of.get(key, "?"), key)] += r.elapsed * 1e-3  # elapsed is in ms


def row_statistics(solver) -> dict:
    """Rows of the last step, read-only from ``solver.steel_data.rows``: reserved, acting and dormant, by kind."""
    rows = solver.steel_data.rows
    b = rows.buffers
    counts = rows.world_row_count.numpy()
    idx = []
    for w in range(rows.world_count):
        for family, base, cap in ((0, 0, rows.articulation_capacity),
                                  (1, rows.articulation_capacity, rows.free_body_capacity)):
            n = min(int(counts[w, family]), cap)
            start = w * rows.world_row_capacity + base
            idx.append(np.arange(start, start + n))
    idx = np.concatenate(idx) if idx else np.zeros(0, dtype=np.int64)
    kind = b.kind.numpy()[idx]
    net = b.impulse.numpy()[idx] + b.preload.numpy()[idx]
    inv_mass = b.inv_mass.numpy()[idx]
    acting = net != 0.0
    out = {"rows": int(idx.size), "acting": int(acting.sum()),
           "dormant": int(((inv_mass <= -2.0) & (inv_mass >= -3.0)).sum()),
           "dropped_total": int(rows.world_rows_dropped.numpy().sum()), "by_kind": {}}
    for k in np.unique(kind):
        sel = kind == k
        out["by_kind"][ROW_KIND_NAMES.get(int(k), str(int(k)))] = {"rows": int(sel.sum()),
                                                                   "acting": int((acting & sel).sum())}
    return out


def profile(scene_name: str, worlds: int, dt: float, steps: int, device: str = "cpu",
            settle_s: float | None = None) -> dict:
    """Settle ``scene_name`` x ``worlds`` at ``dt`` [s] with ``steel.solvers.SolverSteel``, then time ``steps``
    plain and ``steps`` profiled steps; returns every figure (see :func:`report` for the layout)."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps!r}")
    run = SolverRun(steel.solvers.SolverSteel, scene_name, worlds, device, dt)
    t0 = time.perf_counter()
    n_settle = (int(round(settle_s / dt)) if settle_s is not None else settle.settle_steps(scene_name, dt))
    run.advance(max(n_settle, 2))  # at least two steps: every kernel compiled and every launch recorded
    settle_wall = time.perf_counter() - t0
    start = run.start_check() if scene_name in settle.SETTLE_S else {}

    # Plain and profiled steps alternate in blocks, so both see the same machine load; every time is the
    # STEP_QUANTILE over steps (see the module docstring).
    plain = {"collide": [], "step": []}  # wall time of each plain call [s] (CPU launches are synchronous)
    profiled = {"collide": [], "step": []}
    per_step: list[dict] = []  # kernel seconds of each profiled step, keyed as KernelClock.seconds
    launches: dict[tuple, int] = defaultdict(int)
    contacts, touching, row_stats = [], [], []
    done = 0
    while done < steps:
        block = min(PROFILE_BLOCK, steps - done)
        for _ in range(block):
            for name, fn in (("collide", run.collide), ("step", run.step)):
                t = time.perf_counter()
                fn()
                wp.synchronize_device(device)
                plain[name].append(time.perf_counter() - t)
        with KernelClock(device) as clock:
            for _ in range(block):
                before = dict(clock.seconds)
                for name, fn in (("collide", run.collide), ("step", run.step)):
                    t = time.perf_counter()
                    if clock.device.is_cuda:
                        clock.cuda_phase(name, fn)
                    else:
                        clock.context = name
                        fn()
                    wp.synchronize_device(device)
                    profiled[name].append(time.perf_counter() - t)
                    if name == "collide":  # outside every clock: rows and contacts read between the calls
                        contacts.append(int(run.contacts.rigid_contact_count.numpy()[0]))
                        touching.append(int(settle.touching_per_world(
                            run.scene.model, run.states[0].body_q.numpy(), run.contacts).sum()))
                per_step.append({k: v - before.get(k, 0.0) for k, v in clock.seconds.items()})
                row_stats.append(row_statistics(run.solver))
        for key, n in clock.launches.items():
            launches[key] += n
        done += block

    kernels = []
    for key in sorted({k for d in per_step for k in d} | set(launches)):
        context, module, kernel = key
        timed = any(key in d for d in per_step)
        kernels.append({"stage": stage_of(context, module), "kernel": kernel, "module": module,
                        "launches_per_step": launches.get(key, 0) / steps,
                        "ms_per_step": 1e3 * float(np.quantile([d.get(key, 0.0) for d in per_step], STEP_QUANTILE)),
                        "timed": timed})
    kinds = sorted({k for s in row_stats for k in s["by_kind"]})
    rows = {
        "rows": float(np.mean([s["rows"] for s in row_stats])),
        "acting": float(np.mean([s["acting"] for s in row_stats])),
        "dormant": float(np.mean([s["dormant"] for s in row_stats])),
        "dropped_total": row_stats[-1]["dropped_total"],
        "by_kind": {k: {f: float(np.mean([s["by_kind"].get(k, {}).get(f, 0) for s in row_stats]))
                        for f in ("rows", "acting")} for k in kinds},
    }
    return {
        "scene": scene_name, "worlds": worlds, "dt": dt, "steps": steps, "device": str(device),
        "iterations": int(run.solver.options.iterations), "settle_steps": n_settle, "settle_wall_s": settle_wall,
        "start": start,
        "plain_ms_per_step": {k: 1e3 * float(np.quantile(v, STEP_QUANTILE)) for k, v in plain.items()},
        "profiled_ms_per_step": {k: 1e3 * float(np.quantile(v, STEP_QUANTILE)) for k, v in profiled.items()},
        "kernels": kernels,
        "contacts_per_step": float(np.mean(contacts)), "touching_per_step": float(np.mean(touching)),
        "row_stats": rows,
        "notes": list(run.notes),
    }


def stages(result: dict) -> list[dict]:
    """Kernels summed per stage in recipe order, plus the step's host time; shares of the plain collide + step."""
    total = sum(result["plain_ms_per_step"].values())
    by_stage: dict[str, dict] = {}
    for k in result["kernels"]:
        s = by_stage.setdefault(k["stage"], {"stage": k["stage"], "kernels": 0, "launches_per_step": 0.0,
                                             "ms_per_step": 0.0})
        s["kernels"] += 1
        s["launches_per_step"] += k["launches_per_step"]
        s["ms_per_step"] += k["ms_per_step"]
    order = {name: i for i, name in enumerate(STAGE_ORDER)}
    out = sorted(by_stage.values(), key=lambda s: (order.get(s["stage"], len(order)), s["stage"]))
    outside = (("collide", "collision outside kernels (host, fills)"), ("step", "step outside kernels (host, copies)"))
    for context, label in outside:
        in_kernels = sum(k["ms_per_step"] for k in result["kernels"]
                         if (k["stage"] == COLLISION) == (context == "collide"))
        out.append({"stage": label, "kernels": 0, "launches_per_step": 0.0,
                    "ms_per_step": result["plain_ms_per_step"][context] - in_kernels})
    for s in out:
        s["share"] = s["ms_per_step"] / total if total > 0 else float("nan")
    return out


def sweep_cost(result: dict) -> dict:
    """The sweep's time per acting row and per built row [us per step], and per acting row and pass [ns]."""
    ms = sum(k["ms_per_step"] for k in result["kernels"] if k["stage"] == "sweep (PGS)")
    acting, built = result["row_stats"]["acting"], result["row_stats"]["rows"]
    iters = max(result["iterations"], 1)
    return {"sweep_ms_per_step": ms,
            "us_per_acting_row": 1e3 * ms / acting if acting else None,
            "us_per_built_row": 1e3 * ms / built if built else None,
            "ns_per_acting_row_pass": 1e6 * ms / (acting * iters) if acting else None}


def report(result: dict) -> str:
    """A readable report of :func:`profile`'s result."""
    r = result
    plain, prof = r["plain_ms_per_step"], r["profiled_ms_per_step"]
    lines = [
        f"SolverSteel profile: {r['scene']} x{r['worlds']}, dt {r['dt']:.6g} s, {r['steps']} steps, "
        f"device {r['device']}, {r['iterations']} iterations",
        f"settled start ({r['settle_steps']} untimed steps, {r['settle_wall_s']:.1f} s wall): "
        f"{r['start'].get('text', 'not a contact scene')}",
        f"per step [ms, 10th percentile over steps]: plain collide {plain['collide']:.3f} + step {plain['step']:.3f} = "
        f"{plain['collide'] + plain['step']:.3f}; profiled collide {prof['collide']:.3f} + step {prof['step']:.3f} "
        "(the wrapping's own cost is the difference)",
        "",
        f"{'stage':<40} {'kernels':>7} {'launches':>9} {'ms/step':>9} {'share':>7}",
    ]
    for s in stages(r):
        lines.append(f"{s['stage']:<40} {s['kernels']:>7} {s['launches_per_step']:>9.2f} {s['ms_per_step']:>9.3f} "
                     f"{100 * s['share']:>6.1f}%")
    total = sum(plain.values())
    lines += ["", f"{'kernel':<58} {'stage':<28} {'launches':>9} {'ms/step':>9} {'share':>7}"]
    for k in sorted(r["kernels"], key=lambda k: -k["ms_per_step"]):
        name = k["kernel"] if len(k["kernel"]) <= 58 else k["kernel"][:55] + "..."
        ms = f"{k['ms_per_step']:9.3f}" if k["timed"] else f"{'untimed':>9}"
        lines.append(f"{name:<58} {k['stage'][:28]:<28} {k['launches_per_step']:>9.2f} {ms} "
                     f"{100 * k['ms_per_step'] / total if total else 0:>6.1f}%")
    rs = r["row_stats"]
    lines += ["", f"contacts per step: {r['contacts_per_step']:.1f} from the pipeline, {r['touching_per_step']:.1f} "
              f"touching; rows built {rs['rows']:.1f}, acting {rs['acting']:.1f} "
              f"({100 * rs['acting'] / rs['rows'] if rs['rows'] else 0:.0f}%), "
              f"dormant contact rows {rs['dormant']:.1f}, rows dropped since the start {rs['dropped_total']}"]
    lines.append(f"{'row kind':<14} {'built':>9} {'acting':>9}")
    for kind, v in rs["by_kind"].items():
        lines.append(f"{kind:<14} {v['rows']:>9.1f} {v['acting']:>9.1f}")
    sw = sweep_cost(r)

    def us(v, unit):
        return "—" if v is None else f"{v:.3f} {unit}"

    lines += ["", f"sweep: {sw['sweep_ms_per_step']:.3f} ms/step = {us(sw['us_per_acting_row'], 'us')} per acting row, "
              f"{us(sw['us_per_built_row'], 'us')} per built row, {us(sw['ns_per_acting_row_pass'], 'ns')} per acting "
              f"row and pass ({r['iterations']} passes)"]
    if r["notes"]:
        lines += ["", "notes: " + "; ".join(r["notes"][:3])]
    return "\n".join(lines)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.profile_contacts", description=__doc__.split("\n\n")[0])
    p.add_argument("--scene", default="tower", choices=sc.SCENES, help="scene (default tower)")
    p.add_argument("--worlds", type=int, default=16, help="worlds (default 16)")
    p.add_argument("--dt", default="1/240", help="one time step [s], a fraction or decimal (default 1/240)")
    p.add_argument("--steps", type=int, default=100, help="plain and profiled steps each (default 100)")
    p.add_argument("--settle-s", type=float, default=None,
                   help=f"simulated settle time [s] (default the scene's, {settle.SETTLE_S}; 0 elsewhere)")
    p.add_argument("--device", default="cpu", help="Warp device (default cpu)")
    p.add_argument("--json", default=None, help="write the result as JSON to this file")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    dts = parse_dts(args.dt)
    if len(dts) != 1:
        raise SystemExit(f"--dt takes one time step, got {args.dt!r}")
    if args.worlds < 1:
        raise SystemExit(f"--worlds must be >= 1, got {args.worlds}")
    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    result = profile(args.scene, args.worlds, dts[0][1], args.steps, args.device, args.settle_s)
    result["dt_label"] = dts[0][0]
    print(report(result))
    if args.json:
        result["stages"] = stages(result)
        result["sweep_cost"] = sweep_cost(result)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
