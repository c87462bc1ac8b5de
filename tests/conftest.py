"""Test configuration: quiet Warp, CPU always, CUDA too where present."""

import pytest
import warp as wp

wp.config.log_level = wp.LOG_WARNING  # no per-module load lines
wp.init()

DEVICES = ["cpu"] + (["cuda:0"] if wp.is_cuda_available() else [])


@pytest.fixture(params=DEVICES)
def device(request):
    """Every device this machine has: the CPU always, CUDA where present."""
    return request.param
