"""``steel.structs.struct_of`` fills every field of a Warp struct by name, or refuses naming the field."""

import types

import pytest
import warp as wp

from steel.structs import struct_of


@wp.struct
class _Pair:
    a: wp.array[float]
    b: int


def test_fields_come_from_keywords_then_the_first_source_that_has_them():
    first = types.SimpleNamespace(a=wp.zeros(2, dtype=float, device="cpu"))
    second = types.SimpleNamespace(a=wp.zeros(3, dtype=float, device="cpu"), b=7)
    s = struct_of(_Pair, first, second)
    assert s.a.shape == (2,) and s.b == 7
    assert struct_of(_Pair, first, second, b=3).b == 3


def test_a_missing_or_unknown_field_is_refused_by_name():
    with pytest.raises(ValueError, match=r"_Pair\.b"):
        struct_of(_Pair, types.SimpleNamespace(a=wp.zeros(1, dtype=float, device="cpu")))
    with pytest.raises(ValueError, match="'c'"):
        struct_of(_Pair, a=wp.zeros(1, dtype=float, device="cpu"), b=1, c=2)


def test_a_strided_view_is_refused_where_native_code_would_read_it():
    """Native snippets index ``.data`` directly: a strided array would be read from the wrong addresses."""
    from steel.structs import require_contiguous

    dense = wp.zeros((4, 2), dtype=float, device="cpu")
    require_contiguous("test", dense=dense, absent=None)
    with pytest.raises(ValueError, match="test: column must be a contiguous array"):
        require_contiguous("test", column=dense[:, 0])


@wp.struct
class _Switches:
    on: int
    gain: float


def test_a_cached_struct_is_one_instance_refilled_only_when_its_values_change():
    """The same instance each call (launches replay it), holding the last values; a wrong count is refused."""
    from steel.structs import CachedStruct

    cached = CachedStruct(_Switches)
    first = cached.update((1, 0.5))
    assert cached.update((1, 0.5)) is first and (first.on, first.gain) == (1, 0.5)
    assert cached.update((0, 2.0)) is first and (first.on, first.gain) == (0, 2.0)
    with pytest.raises(ValueError, match="_Switches: 1 values for 2 fields"):
        cached.update((1,))


def test_cached_struct_refills_when_an_array_is_replaced_and_only_then():
    """Arrays compare by identity: the same array assigns nothing, a replacement (even equal-valued) is taken."""
    from steel.structs import CachedStruct

    cache = CachedStruct(_Pair)
    a = wp.zeros(2, dtype=float, device="cpu")
    first = cache.update((a, 1))
    assert first.a.ptr == a.ptr and first.b == 1
    assert cache._values[0] is a
    cache.update((a, 1))  # unchanged: nothing assigned
    assert cache._values[0] is a
    b = wp.zeros(2, dtype=float, device="cpu")
    assert cache.update((b, 1)).a.ptr == b.ptr


MAX_KERNEL_PARAMETERS = 20  # the redesign's bound: a longer list becomes a struct of its recurring group


def test_no_kernel_or_function_of_the_library_takes_more_than_twenty_parameters():
    """Every ``wp.kernel``/``wp.func`` of the library (not the CLI's ``steel.app`` or the examples) takes at most
    20 parameters: groups that recur are Warp structs (``JointModel``, ``PlanArrays``, ``CoreBuffers``, ...)."""
    import importlib
    import inspect
    import pkgutil

    import steel

    found, over = 0, []
    for info in pkgutil.walk_packages(steel.__path__, "steel."):
        if info.name.startswith(("steel.app", "steel.examples")):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            fn = getattr(obj, "func", None)
            if not isinstance(obj, (wp.Kernel, wp.Function)) or fn is None or fn.__module__ != module.__name__:
                continue
            found += 1
            count = len(inspect.signature(fn).parameters)
            if count > MAX_KERNEL_PARAMETERS:
                over.append(f"{info.name}.{name}: {count}")
    assert found > 200, found  # the walk reached the solvers' kernels
    assert not over, over
