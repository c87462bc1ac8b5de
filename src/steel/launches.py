"""Replayed kernel launches: a launch's arguments are packed once and the packed launch is replayed
while they stay the same.

Why. ``wp.launch`` converts every argument to its C form on every call. On the CPU that costs 40-400 µs
for our kernels (the contact-row kernel takes 88 arguments), as much as the kernel's own work in a
one-world scene: measured on the four-tower scene in one world, replaying recorded launches took the
SolverSteel step from 3.36 to 2.17 ms, bitwise the same result (humanoid x16: 5.53 to 5.10 ms).

How. :func:`launch` has ``wp.launch``'s signature for the arguments our solvers use. It keys a call by
the kernel, its dimensions, the device and each argument: arrays and structs by identity, numbers and
vectors by value. On a new key it records the launch (``wp.launch(..., record_cmd=True)``, a
``wp.Launch``) and keeps it with strong references to its arguments, so no argument can be freed and
its identity reused by another object while the record lives; then and on every later call with the
same key it replays it (``Launch.launch()``). A struct is packed by reference, so a field assigned later
(``rows.J = ...``) reaches the replay. Each kernel keeps its ``CACHE_PER_KERNEL`` most recent keys
(input and output states swap every step, so a kernel typically sees two or four).

What falls back to ``wp.launch`` every time: extra keyword arguments (``block_dim``, ``stream``, ...) and
argument types it cannot key. Replays run eagerly and inside CUDA graph or Warp CPU captures alike
(a recorded launch keeps its argument list, which capture needs).

Counting. A replay does not go through ``wp.launch``, so code that counts launches by wrapping it
must also count ``wp.Launch.launch``; :func:`recorded_launches` lists both.
"""

from __future__ import annotations

import contextlib
import numbers
from collections import OrderedDict

import warp as wp

CACHE_PER_KERNEL = 8  # recorded launches kept per kernel (least recently used dropped first)

_records: dict = {}  # kernel -> OrderedDict[key -> (wp.Launch, arguments)]


def _arg_key(a):
    """Hashable key of one argument, or ``None`` when it cannot be keyed safely."""
    if a is None:
        return None, None
    if isinstance(a, wp.array) or hasattr(a, "_ctype"):  # arrays and struct instances: by identity
        return "id", id(a)
    if isinstance(a, (bool, numbers.Number)):
        return type(a), a
    value = getattr(a, "value", None)  # Warp scalar types (wp.float32(...), wp.int32(...))
    if value is not None and isinstance(value, numbers.Number):
        return type(a), value
    if isinstance(a, (tuple, list)) or getattr(a, "_wp_generic_type_str_", None) is not None:
        try:  # Warp vectors, quaternions, transforms and sequences of numbers by value (matrices fall back)
            values = tuple(a)
        except TypeError:
            return False
        if all(isinstance(v, numbers.Number) for v in values):
            return type(a), values
    return False


def launch(kernel, dim, inputs=(), outputs=(), device=None, **kwargs) -> None:
    """``wp.launch(kernel, dim, inputs, outputs, device)``, replaying a recorded launch when possible."""
    if kwargs:
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=outputs, device=device, **kwargs)
        return
    args = (*inputs, *outputs)
    keys = tuple(_arg_key(a) for a in args)
    if False in keys:
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=outputs, device=device)
        return
    dev = wp.get_device(device)
    key = (tuple(dim) if isinstance(dim, (list, tuple)) else dim, dev.alias, keys)
    records = _records.setdefault(kernel, OrderedDict())
    record = records.get(key)
    if record is None:
        cmd = wp.launch(kernel, dim=dim, inputs=list(inputs), outputs=list(outputs), device=dev, record_cmd=True)
        if cmd is None:  # nothing to launch (an empty dimension)
            return
        record = (cmd, args)
        records[key] = record
        if len(records) > CACHE_PER_KERNEL:
            records.popitem(last=False)
    else:
        records.move_to_end(key)
    record[0].launch()


def clear() -> None:
    """Drop every recorded launch (and the references they hold to their arguments)."""
    _records.clear()


@contextlib.contextmanager
def recorded_launches():
    """Record the kernels launched inside the block, direct (``wp.launch``) and replayed (``wp.Launch.launch``).

    Yields the list the kernels are appended to, in launch order. A ``wp.launch(..., record_cmd=True)``
    only records a launch (the replay that follows is what runs), so it is not listed.
    """
    launched = []
    plain, replay = wp.launch, wp.Launch.launch

    def listed(kernel, *a, **k):
        if not k.get("record_cmd"):
            launched.append(kernel)
        return plain(kernel, *a, **k)

    def listed_replay(self, *a, **k):
        launched.append(self.kernel)
        return replay(self, *a, **k)

    wp.launch, wp.Launch.launch = listed, listed_replay
    try:
        yield launched
    finally:
        wp.launch, wp.Launch.launch = plain, replay
