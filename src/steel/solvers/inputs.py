"""Host-side checks of the arrays a caller hands to ``step``: shapes and devices, no device sync.

A :class:`newton.State` or :class:`newton.Control` made by another model has arrays of other
lengths. A kernel launched on them would read or write past the end of a buffer (on the CPU that
corrupts the heap and can abort the process), so every solver checks the arrays it is about to
read before launching anything. Array shapes and devices are host metadata: the checks cost no
device synchronization and are safe inside a CUDA graph capture.

A solver checks the same objects step after step (two states and a control swapped every step), so
a passed check is remembered: a set of arrays that fitted a model is identified by the ids of the
model, the table and the arrays, and forgotten by a weak reference's callback as soon as any of
them is freed (before its id can be reused). An attribute reassigned to another array, a replaced
model or a freed array is thus checked again. A ``wp.array``'s length and device never change, nor
does a finalized model's entity count, so a remembered verdict stays true; other array-likes are
checked every time. Likewise Python float ``dt`` values that passed :func:`check_dt`. Why: re-checking
``dt``, two states and a control every step was a visible part of a small scene's host time (timings in
benchmarks/README.md's performance log).
"""

from __future__ import annotations

import math
import numbers
import operator
import weakref

import numpy as np
import warp as wp

from ..host_views import host_view

# (attribute, model count attribute, what one entry is)
STATE_ARRAYS = (
    ("joint_q", "joint_coord_count", "joint coordinates"),
    ("joint_qd", "joint_dof_count", "joint DOFs"),
    ("body_q", "body_count", "bodies"),
    ("body_qd", "body_count", "bodies"),
    ("body_f", "body_count", "bodies"),
)
CONTROL_ARRAYS = (
    ("joint_f", "joint_dof_count", "joint DOFs"),
    ("joint_target_q", "joint_coord_count", "joint coordinates"),
    ("joint_target_qd", "joint_dof_count", "joint DOFs"),
)
PARTICLE_ARRAYS = (
    ("particle_q", "particle_count", "particles"),
    ("particle_qd", "particle_count", "particles"),
    ("particle_f", "particle_count", "particles"),
)
_STATE_AND_PARTICLE_ARRAYS = STATE_ARRAYS + PARTICLE_ARRAYS

_PASSED_CAPACITY = 64  # remembered passed checks (the oldest dropped first)
# (id(table), id(model), optional, ids of the arrays) -> (table, weak references); see the module docstring
_passed_arrays: dict = {}
_passed_dt: set = set()  # (dt, allow_zero) of Python floats that passed check_dt
_readers: dict = {}  # id(table) -> (table, reader of its attributes as a tuple)


def _reader(table):
    entry = _readers.get(id(table))
    if entry is None or entry[0] is not table:
        if len(_readers) >= _PASSED_CAPACITY:  # tables made anew per call: keep the cache bounded
            _readers.clear()
        attrs = [attr for attr, _, _ in table]
        get = operator.attrgetter(*attrs)
        entry = _readers[id(table)] = (table, get if len(attrs) > 1 else lambda obj: (get(obj),))
    return entry[1]


def _remember(model, arrays, table, key) -> None:
    """Remember that ``arrays`` fitted ``model`` until any of them (or the model) is freed."""
    if not all(a is None or isinstance(a, wp.array) for a in arrays):
        return  # other array-likes (a NumPy array can be resized in place) are checked every time

    def forget(_ref):  # runs while the object is freed, before its id can be reused
        _passed_arrays.pop(key, None)

    try:
        refs = [weakref.ref(model, forget)] + [weakref.ref(a, forget) for a in arrays if a is not None]
    except TypeError:  # a model stand-in without weak references: checked every time
        return
    if len(_passed_arrays) >= _PASSED_CAPACITY:
        _passed_arrays.pop(next(iter(_passed_arrays)))
    _passed_arrays[key] = (table, refs)  # the table itself, so its id stays its own while remembered


def check_arrays(model, obj, name: str, table, *, optional=()) -> None:
    """Raise ``ValueError`` unless each array of ``table`` on ``obj`` has the model's length and device.

    Args:
        model: the :class:`newton.Model` the solver was built for.
        obj: a ``State`` or ``Control`` (or anything with the same attributes).
        name: the argument's name in the caller's signature, used in the message (``"state_in"``).
        table: rows of ``(attribute, model count attribute, what one entry is)``.
        optional: attributes that may be ``None`` (the solver then reads defaults instead).
    """
    if obj is None:
        raise TypeError(f"{name} must be a newton State/Control, got None")
    try:
        arrays = _reader(table)(obj)
    except AttributeError:  # a missing attribute reads as None
        arrays = tuple(getattr(obj, attr, None) for attr, _, _ in table)
    key = (id(table), id(model), optional if type(optional) is tuple else tuple(optional), *map(id, arrays))
    if key in _passed_arrays:
        return
    _check_arrays(model, arrays, name, table, optional)
    _remember(model, arrays, table, key)


def _check_arrays(model, arrays, name: str, table, optional) -> None:
    for (attr, count_attr, what), arr in zip(table, arrays):
        expected = int(getattr(model, count_attr, 0) or 0)
        if arr is None:
            if expected == 0 or attr in optional:
                continue
            raise ValueError(f"{name}.{attr} is None, but the model has {expected} {what}")
        length = int(arr.shape[0]) if arr.ndim else 0
        if length != expected:
            raise ValueError(
                f"{name}.{attr} has {length} entries but the model has {expected} {what}; "
                f"was {name} created by another model?"
            )
        if expected and str(arr.device) != str(model.device):
            raise ValueError(f"{name}.{attr} is on device {arr.device}, the model on {model.device}")


def check_state(model, state, name: str, *, particles: bool = False) -> None:
    """Check a ``State``'s body and joint arrays (and particle arrays when ``particles``)."""
    check_arrays(model, state, name, _STATE_AND_PARTICLE_ARRAYS if particles else STATE_ARRAYS)


def check_control(model, control, name: str = "control") -> None:
    """Check a ``Control``'s joint arrays; ``None`` is allowed (the solver uses the model's defaults)."""
    if control is not None:
        check_arrays(model, control, name, CONTROL_ARRAYS, optional=("joint_target_q", "joint_target_qd"))


# The per-slot arrays of a Contacts buffer every solver reading rigid contacts indexes up to its capacity.
CONTACT_ARRAYS = ("rigid_contact_shape0", "rigid_contact_shape1", "rigid_contact_point0", "rigid_contact_point1",
                  "rigid_contact_offset0", "rigid_contact_offset1", "rigid_contact_margin0", "rigid_contact_margin1",
                  "rigid_contact_normal")

_CONTACT_ATTRS = ("rigid_contact_count", *CONTACT_ARRAYS)
_contact_reader = operator.attrgetter(*_CONTACT_ATTRS)


def _live_slots(model, name: str, kind: str, attrs, arrays, capacity: int) -> int:
    """Check ``{kind}_count`` (``arrays[0]``) and the per-slot arrays ``attrs`` (``arrays[1:]``), then return
    the live slot count where the host can read it (CPU, outside a capture), else 0.

    ``ValueError`` naming the field unless the count is an array of one entry or more, each slot array
    at least ``{kind}_max`` = ``capacity`` long, all on the model's device. Passed lengths are remembered.
    """
    count = arrays[0]
    key = (kind, id(model), capacity, *map(id, arrays))
    if key not in _passed_arrays:
        _check_slot_arrays(model, name, kind, attrs, arrays, capacity)
        _remember(model, arrays, attrs, key)
    device = count.device
    if not capacity or not device.is_cpu or device.is_capturing:
        return 0
    return max(0, min(int(host_view(count)[0]), capacity))


def _check_slot_arrays(model, name: str, kind: str, attrs, arrays, capacity: int) -> None:
    count = arrays[0]
    if count is None or count.ndim != 1 or count.shape[0] < 1:
        raise ValueError(f"{name}.{kind}_count must be an array of one entry, got {count!r}")
    for attr, arr in zip(attrs, arrays[1:]):
        length = None if arr is None else int(arr.shape[0])
        if length is None or length < capacity:
            raise ValueError(f"{name}.{attr} has {length} entries, fewer than {name}.{kind}_max={capacity}")
    for attr, arr in zip((f"{kind}_count", *attrs), arrays):
        if str(arr.device) != str(model.device):
            raise ValueError(f"{name}.{attr} is on device {arr.device}, the model on {model.device}")


# Contacts objects already warned of a full buffer, per kind: once per cause, as the solvers' own overflow warnings.
_warned_full: dict[str, weakref.WeakSet] = {"rigid_contact": weakref.WeakSet(), "soft_contact": weakref.WeakSet()}


def _warn_if_full(contacts, name: str, kind: str, live: int, capacity: int) -> None:
    """Warn once per ``contacts`` when its ``{kind}_count`` reached ``{kind}_max``: Newton's collision pipeline
    stops writing at the capacity and clamps the count, dropping what it found beyond it without a word (the six
    boxes of a tower under a pipeline sized for eight contacts keep 8 of their 24 and fall through the ground), so
    a full buffer is the only trace. A buffer exactly filled is possible, hence "may have"."""
    if live < capacity or capacity <= 0:
        return
    try:
        if contacts in _warned_full[kind]:
            return
        _warned_full[kind].add(contacts)
    except TypeError:  # an object without weak references: warn every time rather than never
        pass
    import warnings  # noqa: PLC0415 - only on this rare path

    warnings.warn(f"{name}.{kind}_count reached {name}.{kind}_max = {capacity}: the collision pipeline may have "
                  f"dropped {kind.replace('_', ' ')}s beyond it without a word; build the CollisionPipeline with a "
                  f"larger {kind}_max", UserWarning, stacklevel=4)


def warn_full_contact_buffers(contacts, name: str = "contacts") -> None:
    """:func:`_warn_if_full` for a solver that reads ``contacts`` without :func:`check_contacts` (it skips
    out-of-range records instead of refusing them): the counts are read where the host can (CPU, outside a
    capture)."""
    if contacts is None:
        return
    for kind in ("rigid_contact", "soft_contact"):
        count, capacity = getattr(contacts, f"{kind}_count", None), int(getattr(contacts, f"{kind}_max", 0) or 0)
        if count is None or not capacity or not count.device.is_cpu or count.device.is_capturing:
            continue
        _warn_if_full(contacts, name, kind, int(host_view(count)[0]), capacity)


def check_contacts(model, contacts, name: str = "contacts") -> None:
    """Raise ``ValueError`` naming the field unless ``contacts`` fits ``model`` (a ``Contacts`` filled by hand
    or by a pipeline of another model): a count array of one entry, each array of :data:`CONTACT_ARRAYS`
    at least ``rigid_contact_max`` long on the model's device, and, where the count lies in host memory
    (CPU, outside a capture), the live slots' shape ids below ``model.shape_count`` (a shape id of 1e6
    crashed the reference and read past ours), and a count that reached the capacity warned of once
    (:func:`_warn_if_full`). Lengths are remembered as for :func:`check_arrays`; the shape ids are read
    every step (two reductions over the live slots).
    """
    capacity = int(contacts.rigid_contact_max)
    try:
        arrays = _contact_reader(contacts)
    except AttributeError:  # a missing attribute reads as None
        arrays = tuple(getattr(contacts, attr, None) for attr in _CONTACT_ATTRS)
    live = _live_slots(model, name, "rigid_contact", CONTACT_ARRAYS, arrays, capacity)
    _warn_if_full(contacts, name, "rigid_contact", live, capacity)
    if live and max(host_view(arrays[1])[:live].max(), host_view(arrays[2])[:live].max()) >= model.shape_count:
        for attr, arr in zip(CONTACT_ARRAYS[:2], arrays[1:3]):
            ids = host_view(arr)[:live]
            if int(ids.max()) >= model.shape_count:
                slot = int(np.argmax(ids >= model.shape_count))
                raise ValueError(f"{name}.{attr}[{slot}] = {int(ids[slot])} is not a shape of the model "
                                 f"({model.shape_count} shapes)")


# The per-slot arrays of a Contacts buffer a solver reading particle–shape contacts indexes up to soft_contact_max.
SOFT_CONTACT_ARRAYS = ("soft_contact_indices", "soft_contact_barycentric", "soft_contact_shape",
                       "soft_contact_body_pos", "soft_contact_normal")


def check_soft_contacts(model, contacts, name: str = "contacts") -> None:
    """Raise ``ValueError`` naming the field unless the particle–shape records of ``contacts`` fit ``model``.

    A ``Contacts`` filled by another model's pipeline (a larger cloth) names particles this model does
    not have; a kernel indexing ``particle_q`` with them reads and writes past the buffer (SIGSEGV on
    the CPU). Checked before any kernel reads them: ``soft_contact_count`` an array of at least one
    entry, each array of :data:`SOFT_CONTACT_ARRAYS` at least ``soft_contact_max`` long, all on the
    model's device; and where the count lies in host memory (CPU, outside a capture) the live
    records' particle ids in ``[-1, particle_count)`` (-1 pads edge and point records) and shape ids
    in ``[0, shape_count)``. On CUDA only the lengths and devices are checked: reading the ids would
    synchronize every step (as for :func:`check_contacts`). Lengths are remembered as for
    :func:`check_arrays`; the ids are read every step (reductions over the live records).
    """
    capacity = int(getattr(contacts, "soft_contact_max", 0) or 0)
    if capacity == 0:
        return
    arrays = tuple(getattr(contacts, attr, None) for attr in ("soft_contact_count", *SOFT_CONTACT_ARRAYS))
    live = _live_slots(model, name, "soft_contact", SOFT_CONTACT_ARRAYS, arrays, capacity)
    _warn_if_full(contacts, name, "soft_contact", live, capacity)
    if not live:
        return
    corners = host_view(arrays[1])[:live]
    shapes = host_view(arrays[3])[:live]
    bad = (corners >= model.particle_count) | (corners < -1)
    if bad.any():
        slot, corner = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name}.soft_contact_indices[{slot}] = {tuple(int(v) for v in corners[slot])} names "
                         f"particle {int(corners[slot, corner])}, not a particle of the model "
                         f"({model.particle_count} particles); was {name} filled by another model's pipeline?")
    bad = (shapes >= model.shape_count) | (shapes < 0)
    if bad.any():
        slot = int(np.argmax(bad))
        raise ValueError(f"{name}.soft_contact_shape[{slot}] = {int(shapes[slot])} is not a shape of the model "
                         f"({model.shape_count} shapes)")


# Warp's scalar types are not registered with ``numbers``; a caller who keeps a step size as
# ``wp.float32`` (as Warp's own examples do) must not be told it is "not a number".
_WARP_FLOATS = (wp.float16, wp.float32, wp.float64)
_WARP_INTS = (wp.int8, wp.uint8, wp.int16, wp.uint16, wp.int32, wp.uint32, wp.int64, wp.uint64)


def as_python_scalar(value):
    """``value`` as a Python ``float``/``int``/``bool`` when it is a NumPy or Warp scalar, else unchanged.

    Lets every solver accept ``np.float32(1e-3)`` or ``wp.float32(1e-3)`` wherever it accepts
    ``1e-3``, and leaves other objects (strings, arrays, ``None``) for the caller's own type check.
    """
    kind = type(value)
    if kind is wp.bool:
        return bool(value.value)
    if kind in _WARP_FLOATS:
        return float(value.value)
    if kind in _WARP_INTS:
        return int(value.value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def check_bool(name: str, value) -> bool:
    """``value`` as a Python ``bool``: the one check every solver's switches take.

    Accepts ``True``/``False``, NumPy's ``np.bool_`` (and a 0-d bool array) and Warp's ``wp.bool``; refuses
    everything else, integers included (``1`` is not a switch), with a ``TypeError`` naming ``name``.
    """
    flag = as_python_scalar(value)
    if isinstance(flag, np.ndarray) and flag.ndim == 0 and flag.dtype == np.bool_:
        flag = bool(flag)
    if not isinstance(flag, bool):
        raise TypeError(f"{name} must be a bool, got {value!r}")
    return flag


def check_dt(dt, *, allow_zero: bool = False) -> float:
    """Return ``dt`` [s] as a float after checking it, before the caller changes anything.

    ``TypeError`` unless ``dt`` is a real number (Python, NumPy or Warp scalar; not a bool).
    ``ValueError`` unless it is finite and positive (or zero with ``allow_zero``) *as the float32
    the kernels receive*: ``1e-300`` is positive in float64 but 0 in float32 and ``1e300`` is inf,
    and either would turn the step (and the contact history carried to later steps) into NaN.
    """
    if type(dt) is float and (dt, allow_zero) in _passed_dt:
        return dt  # itself, not the remembered equal value: -0.0 stays -0.0
    value = as_python_scalar(dt)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"dt must be a real number of seconds, got {dt!r}")
    value = float(value)
    with np.errstate(over="ignore", under="ignore"):
        dt32 = float(np.float32(value))
    lowest = "non-negative" if allow_zero else "positive"
    if not (math.isfinite(dt32) and (dt32 > 0.0 or (allow_zero and value == 0.0))):
        raise ValueError(f"dt must be a {lowest} finite number of seconds in float32, got {dt!r}")
    if type(dt) is float and len(_passed_dt) < _PASSED_CAPACITY:
        _passed_dt.add((dt, allow_zero))
    return value


def check_model_type(model, solver: str) -> None:
    """``TypeError`` unless ``model`` is a finalized model (else the first attribute read fails obscurely).

    A :class:`newton.Model` or anything that stands in for one the way Newton's coupled solvers'
    read-through model views do: it makes states (``state()``) and has a ``device``. A builder, a
    state or ``None`` has neither.
    """
    import newton  # here, so the array checks above stay importable without newton

    if isinstance(model, newton.Model):
        return
    if not (callable(getattr(model, "state", None)) and hasattr(model, "device") and hasattr(model, "body_count")):
        raise TypeError(f"{solver} needs a finalized newton.Model, got {type(model).__name__}")
