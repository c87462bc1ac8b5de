"""Replayed kernel launches: a launch's arguments are packed once and the packed launch is replayed
while they stay the same.

Why. ``wp.launch`` converts every argument to its C form on every call. On the CPU that costs as much
as the kernel's own work in a one-world scene (the contact-row kernel takes about a hundred
arguments); replaying recorded launches gives bitwise the same result (timings in benchmarks/README.md's
performance log).

How. :func:`launch` has ``wp.launch``'s signature for the arguments our solvers use. It keys a call by
the kernel, its dimensions, the device and each argument: arrays and structs by identity, numbers and
vectors by value. On a new key it records the launch (``wp.launch(..., record_cmd=True)``, a
``wp.Launch``) and keeps it with strong references to its arguments, so no argument can be freed and
its identity reused by another object while the record lives; then and on every later call with the
same key it replays it. A struct is packed by reference, so a field assigned later (``rows.J = ...``)
reaches the replay. Each kernel keeps its ``CACHE_PER_KERNEL`` most recent keys (input and output
states swap every step, so a kernel typically sees two or four).

Keying and replaying cost host time of their own, which decides small scenes: keyed argument by argument
in Python (``_arg_key``) and replayed through Warp's ``invoke`` (which rebuilds the kernel's argument block
and sets each field on every call), those two were most of a step's Python function calls. So the common
call, which passes only arrays, structs, Python numbers and ``None``, is keyed by the argument tuple itself
with the tuple of argument types (arrays and structs hash by identity, numbers by value; the types keep
``1``, ``1.0`` and ``True`` apart): no per-argument Python code runs. Other calls (vectors, NumPy and
Warp scalars) are keyed argument by argument. And a replay on the CPU calls the kernel's entry point
with an argument block built once at recording; only struct arguments are copied into it again on
each call, so a field assigned after recording still reaches the kernel. Results are bitwise the same.

The direct call uses Warp internals (``Launch.hooks/params/bounds``; warp-lang is pinned in
pyproject.toml). It is used only for a plain ``wp.Launch`` on the CPU with one thread per block and no
adjoint, when those attributes exist; on CUDA, inside a Warp CPU capture (which must see the launch),
or while ``wp.Launch.launch`` is wrapped (counting, profiling: a profiler that wraps it times Warp's
slower replay, not this one) the replay goes through ``Launch.launch()``. Like ``Launch.launch()``, a
record is not meant to be replayed from two threads at once (its argument block is shared).

What falls back to ``wp.launch`` every time: extra keyword arguments (``block_dim``, ``stream``, ...) and
argument types it cannot key. Replays run eagerly and inside CUDA graph or Warp CPU captures alike
(a recorded launch keeps its argument list, which capture needs).

Counting. A replay does not go through ``wp.launch``, so code that counts launches by wrapping it
must also count ``wp.Launch.launch``; :func:`recorded_launches` lists both.
"""

from __future__ import annotations

import contextlib
import ctypes
import numbers
from collections import OrderedDict

import warp as wp
import warp._src.context as _warp_context  # the runtime's active CPU capture; see _direct_call

CACHE_PER_KERNEL = 8  # recorded launches kept per kernel (least recently used dropped first)

_records: dict = {}  # kernel -> OrderedDict[key -> (wp.Launch, arguments, direct call or None)]
_plain_types: dict = {}  # tuple of argument types -> whether the argument tuple is its own key
_REPLAY = wp.Launch.launch  # Warp's replay; a wrapped one (counting, profiling) must see every replay

_BY_VALUE = (float, int, bool, type(None))


def _keys_itself(t) -> bool:
    """Whether an argument of type ``t`` may stand in a key as itself: a Python number or ``None`` (by
    value), or an array or struct class that keeps Python's identity hash and equality."""
    if t in _BY_VALUE:
        return True
    by_identity = t.__hash__ is object.__hash__ and t.__eq__ is object.__eq__
    return by_identity and (issubclass(t, wp.array) or hasattr(t, "_constructors"))  # struct instances


def _arg_key(a):
    """Hashable key of one argument, or ``False`` when it cannot be keyed safely."""
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


def _direct_call(cmd, args):
    """``(entry point, bounds ref, argument block, its ref, struct fields to refresh)`` replaying ``cmd``
    without Warp's per-call packing, or ``None`` where only ``cmd.launch()`` is safe."""
    try:
        if type(cmd) is not wp.Launch or not cmd.device.is_cpu or cmd.adjoint or cmd.block_dim != 1:
            return None
        forward, params, labels = cmd.hooks.forward, cmd.params, [a.label for a in cmd.kernel.adj.args]
        if forward is None or len(params) != len(labels) + 1 or len(args) != len(labels):
            return None
        fields = [(label, type(p)) for label, p in zip(labels, params[1:])]
        block = type("ArgumentBlock", (ctypes.Structure,), {"_fields_": fields})()
        for label, p in zip(labels, params[1:]):
            setattr(block, label, p)
        # A struct argument was packed as its live C struct (assigned fields change it in place): copy it
        # on every call. Arrays, numbers and vectors were packed into objects no caller changes.
        refresh = tuple((label, p) for label, p, a in zip(labels, params[1:], args) if hasattr(a, "_ctype"))
        return forward, ctypes.byref(params[0]), block, ctypes.byref(block), refresh
    except (AttributeError, TypeError, ValueError):  # another Warp version's internals
        return None


def launch(kernel, dim, inputs=(), outputs=(), device=None, **kwargs) -> None:
    """``wp.launch(kernel, dim, inputs, outputs, device)``, replaying a recorded launch when possible.

    Inside a ``wp.Tape`` every call is a plain ``wp.launch``: Warp returns a recorded command before it writes the
    launch to the tape, so a replayed step would record nothing and its gradients would read zero.
    """
    if kwargs or _warp_context.runtime.tape is not None:
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=outputs, device=device, **kwargs)
        return
    args = (*inputs, *outputs)
    types = tuple(map(type, args))
    plain = _plain_types.get(types)
    if plain is None:
        plain = _plain_types[types] = all(map(_keys_itself, types))
    if plain:
        keys = (types, args)
    else:
        keys = tuple(_arg_key(a) for a in args)
        if False in keys:
            wp.launch(kernel, dim=dim, inputs=inputs, outputs=outputs, device=device)
            return
    dev = device if type(device) is wp.Device else wp.get_device(device)
    key = (tuple(dim) if isinstance(dim, (list, tuple)) else dim, dev.alias, keys)
    records = _records.get(kernel)
    if records is None:
        records = _records[kernel] = OrderedDict()
    record = records.get(key)
    if record is None:
        cmd = wp.launch(kernel, dim=dim, inputs=list(inputs), outputs=list(outputs), device=dev, record_cmd=True)
        if cmd is None:  # nothing to launch (an empty dimension)
            return
        record = (cmd, args, _direct_call(cmd, args))
        records[key] = record
        if len(records) > CACHE_PER_KERNEL:
            records.popitem(last=False)
    else:
        records.move_to_end(key)
    call = record[2]
    if call is None or _warp_context.runtime._apic_capture is not None or wp.Launch.launch is not _REPLAY:
        record[0].launch()
        return
    forward, bounds, block, block_ref, refresh = call
    for label, struct in refresh:
        setattr(block, label, struct)
    forward(bounds, block_ref)


def serial_threads(count: int, device) -> int:
    """Threads of a launch over ``count`` independent items whose thread ``t`` handles items ``t, t + threads,
    ...``: one per item on CUDA, a single one walking them in order on the CPU.

    A CPU launch runs its threads one after another and copies the kernel's whole argument block into
    each thread's frame (``_free_dynamics`` passes over fifty arguments, kilobytes), so a thread per item pays
    that copy per item before any work. One thread pays it once and does the same work per item, so the
    result is bitwise the same.
    """
    dev = device if type(device) is wp.Device else wp.get_device(device)
    return 1 if dev.is_cpu else count


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
