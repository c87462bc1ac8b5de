"""Bitwise behaviour fingerprints of the shipped scenes, for refactors that must not change a result.

Each case steps a scene (two worlds: ``steel.app.scenes``'s shipped ones, a pyramid, a ramp) with one of our solvers at its default options and
the scene's ``dt``, Newton's ``CollisionPipeline`` colliding every step, for ``--steps`` steps (default 300),
and hashes the final state's bytes (SHA-256 of ``joint_q``, ``joint_qd``, ``body_q``, ``body_qd``,
``particle_q``, ``particle_qd`` in that order). Record the hashes before a change and check them after it, on the same machine:

    python -m benchmarks.behaviour_hashes --write /tmp/before.json
    python -m benchmarks.behaviour_hashes --check /tmp/before.json

The hashes are a same-machine check, not a stored answer: Warp builds its CPU kernels for the host, so another
CPU, compiler or Warp version may round differently (that is why no test compares them with a stored file).
``--check`` prints each case's verdict and exits 1 when any case differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np
import warp as wp

import newton
from steel.app import scenes
from steel.solvers import SolverFeatherstone, SolverSteel, SolverVBD

WORLDS = 2
RAMP_DT = 1.0 / 240.0  # [s] the ramp's step (the statics tests' dt)


def _shipped(name: str, color: bool = False):
    """A builder of ``steel.app.scenes``'s scene ``name``: ``device -> (model, dt, solver options)``."""
    def build(device: str):
        scene = scenes.build_scene(name, WORLDS, device, color=color)
        return scene.model, scene.dt, {}
    return build


def _pyramid(device: str):
    """The growth benchmark's 8-level box pyramid (36 boxes): friction anchors loaded by a stack."""
    from benchmarks import scenes as bench_scenes  # noqa: PLC0415 - benchmarks' own scene module

    scene = bench_scenes.build_pyramid(8, WORLDS, device)
    return scene.model, scene.dt, {}


def _ramp(device: str):
    """A box on a plane shape tilted 20 degrees (mu 0.5): an anchor holding a tangential load."""
    from benchmarks import statics  # noqa: PLC0415

    return statics.ramp(20.0, 0.5, device=device).model, RAMP_DT, {}


def _cloth_boxes(device: str):
    """The shipped cloth over free boxes at 8 quads a side (one world): particle elements, particle-shape contacts
    and AVBD bodies in one SolverVBD step, with the scene's solver options."""
    from steel.app.particle_scenes import build_particle_scene  # noqa: PLC0415

    scene = build_particle_scene("cloth_boxes", 8, device)
    return scene.model, scene.dt, dict(scene.solver_options)


# (case name, solver class, builder): the scenes the redesign must keep bitwise. The shipped five are the
# redesign's list; the pyramid and the ramp load the friction anchors, which the shipped scenes leave at zero
# tangential impulse for their first 300 steps (a change to the anchors' rows kept them bitwise).
CASES = (
    ("steel/chain", SolverSteel, _shipped("chain")),
    ("steel/cartpole", SolverSteel, _shipped("cartpole")),
    ("steel/tower", SolverSteel, _shipped("tower")),
    ("steel/humanoid", SolverSteel, _shipped("humanoid")),
    ("steel/ant", SolverSteel, _shipped("ant")),
    ("steel/pyramid8", SolverSteel, _pyramid),
    ("steel/ramp20", SolverSteel, _ramp),
    ("featherstone/chain", SolverFeatherstone, _shipped("chain")),
    ("featherstone/cartpole", SolverFeatherstone, _shipped("cartpole")),
    ("featherstone/humanoid", SolverFeatherstone, _shipped("humanoid")),
    ("vbd/tower", SolverVBD, _shipped("tower", color=True)),
    ("vbd/cloth_boxes", SolverVBD, _cloth_boxes),
)


def state_hash(state) -> str:
    """SHA-256 hex digest of the state's ``joint_q``, ``joint_qd``, ``body_q``, ``body_qd``, ``particle_q``,
    ``particle_qd`` bytes (absent: skipped)."""
    digest = hashlib.sha256()
    for name in ("joint_q", "joint_qd", "body_q", "body_qd", "particle_q", "particle_qd"):
        array = getattr(state, name, None)
        if array is not None:
            digest.update(name.encode())
            digest.update(np.ascontiguousarray(array.numpy()).tobytes())
    return digest.hexdigest()


def run_case(solver_cls, build, steps: int, device: str) -> str:
    """Hash of the state after ``steps`` steps of the scene ``build`` makes, with ``solver_cls`` at its defaults."""
    model, dt, options = build(device)
    solver = solver_cls(model, **options)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1, control = model.state(), model.state(), model.control()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    for _ in range(steps):
        pipeline.collide(s0, contacts)
        s0.clear_forces()
        solver.step(s0, s1, control, contacts, dt)
        s0, s1 = s1, s0
    return state_hash(s0)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.behaviour_hashes", description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--write", metavar="FILE", help="write the hashes to FILE (JSON)")
    mode.add_argument("--check", metavar="FILE", help="compare with the hashes in FILE; exit 1 on any difference")
    p.add_argument("--steps", type=int, default=300, help="steps per case (default 300)")
    p.add_argument("--cases", default=None, help="comma-separated case names (default: all)")
    p.add_argument("--device", default="cpu", help="Warp device (default cpu)")
    args = p.parse_args(argv)
    if args.steps < 1:
        raise ValueError(f"--steps must be >= 1, got {args.steps}")
    names = [c[0] for c in CASES]
    if args.cases is not None:
        chosen = [c.strip() for c in args.cases.split(",") if c.strip()]
        unknown = [c for c in chosen if c not in names]
        if unknown or not chosen:
            raise ValueError(f"--cases: unknown {', '.join(map(repr, unknown)) or 'empty list'}; choose from "
                             f"{', '.join(names)}")
        args.cases = chosen
    else:
        args.cases = names
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    wp.config.quiet = True
    expected = None
    if args.check:
        with open(args.check) as f:
            expected = json.load(f)
        if expected.get("steps") != args.steps:
            raise ValueError(f"--check {args.check}: recorded with --steps {expected.get('steps')}, "
                             f"not {args.steps}")
    result = {"steps": args.steps, "worlds": WORLDS, "hashes": {}}
    differs = 0
    for name, solver_cls, build in CASES:
        if name not in args.cases:
            continue
        t0 = time.perf_counter()
        digest = run_case(solver_cls, build, args.steps, args.device)
        result["hashes"][name] = digest
        verdict = ""
        if expected is not None:
            want = expected["hashes"].get(name)
            verdict = "  (not recorded)" if want is None else ("  same" if want == digest else "  DIFFERS")
            differs += want is not None and want != digest
        print(f"{name:24s} {digest[:16]}  {time.perf_counter() - t0:6.1f} s{verdict}", flush=True)
    if args.write:
        with open(args.write, "w") as f:
            json.dump(result, f, indent=1)
        print(f"wrote {args.write}")
    if expected is not None:
        print(f"{differs} of {len(result['hashes'])} cases differ")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
