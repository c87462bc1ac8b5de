"""``struct_of``: a Warp struct filled from the objects that hold its arrays, field by field by name.

The solvers pass argument groups to their kernels as Warp structs whose fields mostly carry the names of the
model's, plan's or solver's own arrays (``JointModel``, ``PlanArrays``, ``HistoryArrays``, ...). Filling them
by name keeps one list of fields, the struct's declaration, instead of a second list of assignments beside it
that a new field could miss. Invariant: every field is set, or construction raises naming the field.
"""

from __future__ import annotations


def struct_of(struct_type, *sources, **fields):
    """A new ``struct_type`` instance: each field is ``fields[name]`` when given, else the attribute of that name
    of the first of ``sources`` that has it.

    Raises:
        ValueError: a field that neither ``fields`` nor any source provides, or a keyword that is not a field.
    """
    names = struct_type.vars
    unknown = set(fields) - set(names)
    if unknown:
        raise ValueError(f"{struct_type.__name__} has no field(s) {sorted(unknown)}")
    instance = struct_type()
    for name in names:
        if name in fields:
            value = fields[name]
        else:
            for source in sources:
                if hasattr(source, name):
                    value = getattr(source, name)
                    break
            else:
                raise ValueError(f"{struct_type.__name__}.{name}: no value given and no source has it")
        setattr(instance, name, value)
    return instance


def require_contiguous(owner: str, **arrays) -> None:
    """``ValueError`` naming the first array of ``arrays`` that is not contiguous.

    The native C++ snippets of the articulation core and the sweep (``articulation/factor.py``,
    ``articulation/dynamics.py``, ``solvers/steel/rows/dof_loops.py``) index an array's ``.data`` pointer
    directly, which reads a strided view's elements from the wrong addresses; Warp's own indexing honours the
    strides. The arrays they read are checked once, where they are allocated or first bound.
    """
    for name, array in arrays.items():
        if array is not None and not array.is_contiguous:
            raise ValueError(f"{owner}: {name} must be a contiguous array (strides {array.strides}); pass a copy")


class CachedStruct:
    """One instance of a Warp struct, whose fields are assigned only when their values change.

    Assigning a struct field from Python costs about a microsecond; comparing one tuple of the values costs less
    than assigning them all each step, and keeping one instance lets launches replay (``steel.launches``).
    Scalars compare by value; arrays by identity (a tuple compares elements with ``is`` first, and ``wp.array``
    keeps ``object.__eq__``), so a struct over arrays that may be replaced is refilled when one is.
    Invariant: after :meth:`update` the instance holds ``values``, given in the struct's declaration order.
    """

    def __init__(self, struct_type):
        self.value = struct_type()
        self._names = tuple(struct_type.vars)
        self._type_name = struct_type.__name__
        self._values = None

    def update(self, values: tuple):
        """The instance, holding ``values`` (one per field, in declaration order)."""
        if values != self._values:
            if len(values) != len(self._names):
                raise ValueError(f"{self._type_name}: {len(values)} values for {len(self._names)} fields")
            for name, value in zip(self._names, values):
                setattr(self.value, name, value)
            self._values = values
        return self.value
