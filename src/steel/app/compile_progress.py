"""Say which Warp module is about to be compiled, before it compiles, and about how long it takes.

Warp compiles a module (every kernel of one Python module, or one generic kernel's variant) the first
time one of its kernels launches, and keeps the binary in its kernel cache
(``wp.config.kernel_cache_dir``, ``WARP_CACHE_PATH``). With an empty cache a first ``steel run chain``
compiles 19 modules for minutes on a CPU, SolverSteel's PGS module the longest (timings in
benchmarks/README.md's performance log), and Warp's own log line comes only after each one.
:func:`compile_progress` wraps :meth:`warp.Module.load` (the one place every launch, ``wp.load_module``
and ``ModelBuilder.finalize`` go through) while a run lasts: a module that is neither loaded in this
process nor in the cache is announced as ``compiling NAME (first run; cached afterwards, about N s)``
before Warp compiles it.

Rejected alternatives: loading every module of the package up front (``wp.load_module(...,
recursive=True)``) compiles modules a run never launches (all three solvers, every particle
kernel), minutes of waste; Warp's ``LOG_INFO`` lines print after each compile, not before.

The estimate ``N``: the compile time measured for that module on this project's 2-core CPU
(``MEASURED_S``, the modules of a cold ``steel run chain`` that took 5 s or more; the machine was
shared, so they are on the long side), else ``COMPILE_S_BASE + COMPILE_S_PER_KCHAR * kchars`` of the
Python source of the module's kernels and the functions they call (the median rate of the same
run; the source size alone predicts badly: its rate per 1000 characters varies widely, the PGS
module being the slowest by far). CUDA compiles are not measured; the same figures are shown.
"""

from __future__ import annotations

import contextlib
import os

import warp as wp

# Compile times [s] of a cold `steel run chain --seconds 0.01` on this project's 2-core CPU (Warp 1.19, the
# cores shared with other jobs), the modules that took 5 s or more in the first of two runs; generic kernels by
# their name's prefix. The PGS module's is without the velocity sweeps' kernel (now ``sweep.velocity``, built only
# when ``velocity_iterations > 0``), measured by loading each module alone into an empty cache (the runs' totals
# and the split: benchmarks/README.md's performance log).
# A key names a module exactly, a generic kernel by its name's prefix (``KEY_...``), or one of Newton's modules by its
# last dotted parts (``....KEY``), so no private package path is written here; the longest key that fits wins.
MEASURED_S = {
    "steel.solvers.steel.sweep.pgs": 135.0,
    "steel.solvers.steel.sweep.velocity": 95.0,
    "steel.solvers.steel.contacts.rows": 28.0,
    "sim.articulation": 25.0,
    "narrow_phase_gjk_mpr": 25.0,
    "viewer.kernels": 17.0,
    "steel.solvers.steel.joints.rows": 11.0,
    "steel.solvers.steel.predict": 11.0,
    "steel.articulation.dynamics": 8.0,
    "narrow_phase_primitive": 7.0,
    "steel.articulation.kinematics": 5.0,
}
# Other modules: median compile rate of the same run over the source the module's hash covers.
COMPILE_S_BASE = 1.0  # [s]
COMPILE_S_PER_KCHAR = 0.25  # [s per 1000 characters of kernel and function source]


def _source_chars(module: wp.Module, block_dim) -> int:
    """Characters of Python source of the module's kernels and every function they call (after hashing)."""
    hasher = module.hashers.get(block_dim)
    if hasher is None:
        return 0
    total = 0
    for item in (*hasher.unique_kernels.values(), *hasher.function_hashes.keys()):
        adj = getattr(item, "adj", None)
        total += len(getattr(adj, "source", "") or "")
    return total


def estimate_seconds(module: wp.Module, block_dim=None) -> float:
    """About how long compiling ``module`` takes [s] (see the module docstring)."""
    name = module.name
    fits = [key for key in MEASURED_S if name == key or name.startswith(key + "_") or name.endswith("." + key)]
    if fits:
        # The longest: "steel.solvers.steel.sweep.pgs" must not answer for "steel.solvers.steel.sweep.velocity".
        return MEASURED_S[max(fits, key=len)]
    block_dim = module.options["block_dim"] if block_dim is None else block_dim
    module.get_module_hash(block_dim)  # fills the hasher the source is counted from
    return COMPILE_S_BASE + COMPILE_S_PER_KCHAR * _source_chars(module, block_dim) / 1000.0


def needs_compile(module: wp.Module, device, block_dim=None) -> bool:
    """Whether loading ``module`` on ``device`` compiles it: not loaded in this process and no binary of its
    current hash in Warp's kernel cache (the cache folder ``wp_NAME_HASH`` holds a ``.meta`` file and a
    ``.o`` for the CPU, a ``.cubin`` or ``.ptx`` for CUDA)."""
    device = wp.get_device(device)
    block_dim = module.options["block_dim"] if block_dim is None else block_dim
    if module.execs.get((device.context, block_dim)) is not None:
        return False
    folder = os.path.join(wp.config.kernel_cache_dir or "", module.get_module_identifier(block_dim))
    if not wp.config.cache_kernels or not os.path.isdir(folder):
        return True
    names = os.listdir(folder)
    binary = (".o",) if device.is_cpu else (".cubin", ".ptx")
    return not (any(n.endswith(".meta") for n in names) and any(n.endswith(binary) for n in names))


@contextlib.contextmanager
def compile_progress(log=print):
    """While active, announce each Warp module before it compiles (see the module docstring); ``log`` prints.

    The check never stops a run: if it fails (a Warp internal it reads changed), the module loads unannounced.
    """
    original = wp.Module.load

    def load(self, device, block_dim=None, binary_path=None, *args, **kwargs):
        if binary_path is None:  # a given binary is never compiled
            try:
                cold = needs_compile(self, device, block_dim)
                text = f"about {estimate_seconds(self, block_dim):.0f} s" if cold else ""
            except Exception:  # noqa: BLE001 -- progress text must not break loading
                cold = False
            if cold:
                log(f"[steel] compiling {self.name} (first run; cached afterwards, {text})")
        return original(self, device, block_dim, binary_path, *args, **kwargs)

    wp.Module.load = load
    try:
        yield
    finally:
        wp.Module.load = original
