"""NumPy views of CPU arrays, made once per array: for the host's per-step reads and resets of small counts.

``wp.array.numpy()`` builds a new NumPy view with its array interface on every call, and ``zero_()`` packs a
value and calls into Warp; SolverSteel reads the contact count and resets its row counts every step, which on
a small scene is a measurable share of the step (figures in benchmarks/README.md's performance log). A view is
valid as long as its array lives; the cache holds the array, so no other array can take its ``id``.
"""

from __future__ import annotations

import warp as wp

_views: dict = {}  # id(array) -> (array, its NumPy view)
_MAX_VIEWS = 64  # solvers come and go (tests, restarts): the cache is cleared rather than grown


def host_view(array: wp.array):
    """A NumPy view of the CPU ``array`` (made on first use, then reused)."""
    entry = _views.get(id(array))
    if entry is None or entry[0] is not array:
        if len(_views) >= _MAX_VIEWS:
            _views.clear()
        entry = _views[id(array)] = (array, array.numpy())
    return entry[1]


def host_writable(array: wp.array) -> bool:
    """The host may read or write ``array`` directly: it lives on the CPU and no capture is recording."""
    device = array.device
    return device.is_cpu and not device.is_capturing
