"""Every Warp module of the package compiles for CUDA, checked on a machine without a GPU.

The kernels are written for both devices, but CI and the tests run them on the CPU only, and some code
is device-specific: native C++ loops (``rows/dof_loops.py``), ``wp.capture_if`` branches, per-slot
threads on CUDA against one walking thread on the CPU. Warp's NVRTC (shipped with warp-lang) compiles a
module to PTX without a driver, so a CUDA-only compile error shows here rather than on the first GPU
run. The PTX goes to a folder under Warp's kernel cache, so a rerun with the cache warm is quick
(about 60 s cold on the 2-core CI machine, most of it the sweep module).
"""

from __future__ import annotations

import importlib
import os
import pkgutil

import pytest
import warp as wp

import steel

ARCH = 90  # sm_90 (Hopper): a current data-centre target; any NVRTC-supported arch would do


def _nvrtc_archs() -> set[int]:
    wp.init()
    from warp._src import context  # the runtime's NVRTC arch list (warp-lang is pinned)

    return set(getattr(context.runtime, "nvrtc_supported_archs", ()) or ())


def _steel_kernel_modules() -> list:
    for info in pkgutil.walk_packages(steel.__path__, "steel."):
        if ".examples" in info.name or info.name.endswith("__main__"):
            continue
        importlib.import_module(info.name)
    names = sorted(name for name in list(importlib.sys.modules) if name == "steel" or name.startswith("steel."))
    return [module for module in (wp.get_module(name) for name in names) if module.kernels]


@pytest.mark.skipif(ARCH not in _nvrtc_archs(), reason="Warp's NVRTC cannot compile for sm_90 here")
def test_every_kernel_module_compiles_for_cuda():
    modules = _steel_kernel_modules()
    assert len(modules) >= 30  # the solvers' stages, rows, core, scheduler: an import failure would shrink it
    out_dir = os.path.join(wp.config.kernel_cache_dir, "steel_cuda_compile_check")
    failures = []
    for module in modules:
        try:
            files = wp.compile_aot_module(module, arch=ARCH, module_dir=out_dir, use_ptx=True)
        except Exception as error:  # noqa: BLE001 - every module's error is collected and reported
            failures.append(f"{module.name}: {error}")
            continue
        assert files and all(str(f).endswith(".ptx") for f in files), module.name
    assert not failures, "\n".join(failures)
