"""steel.launches: replayed launches run what ``wp.launch`` would, with the arguments of the call."""

import numpy as np
import pytest
import warp as wp

from steel import launches
from steel.launches import launch, recorded_launches

wp.config.quiet = True


@wp.struct
class Scaled:
    values: wp.array[float]
    factor: float


@wp.kernel
def _axpy(x: wp.array[float], a: float, shift: int, y: wp.array[float]):
    i = wp.tid()
    y[i] = a * x[i] + float(shift)


@wp.kernel
def _scaled_copy(s: Scaled, out: wp.array[float]):
    i = wp.tid()
    out[i] = s.factor * s.values[i]


@wp.kernel
def _offset(x: wp.array[wp.vec3], v: wp.vec3, out: wp.array[wp.vec3]):
    i = wp.tid()
    out[i] = x[i] + v


@pytest.fixture(autouse=True)
def _fresh_records():
    launches.clear()
    yield
    launches.clear()


def _array(values):
    return wp.array(np.asarray(values, dtype=np.float32), dtype=float, device="cpu")


def test_replay_uses_each_calls_numbers_and_arrays():
    x, y, z = _array([1.0, 2.0]), wp.zeros(2, dtype=float, device="cpu"), wp.zeros(2, dtype=float, device="cpu")
    for a, shift, out in ((2.0, 1, y), (2.0, 1, y), (3.0, 1, y), (3.0, 0, z), (2.0, 1, z)):
        launch(_axpy, dim=2, inputs=[x, a, shift], outputs=[out], device="cpu")
        np.testing.assert_array_equal(out.numpy(), (a * x.numpy() + shift).astype(np.float32))
    assert len(launches._records[_axpy]) == 4  # the repeated call replayed its record


def test_numbers_of_other_types_are_keyed_apart():
    x, y = _array([1.0, 2.0]), wp.zeros(2, dtype=float, device="cpu")
    for a in (1.0, 1, True):
        launch(_axpy, dim=2, inputs=[x, a, 0], outputs=[y], device="cpu")
    assert len(launches._records[_axpy]) == 3
    np.testing.assert_array_equal(y.numpy(), x.numpy())


def test_struct_fields_assigned_after_recording_reach_the_replay():
    s, out = Scaled(), wp.zeros(2, dtype=float, device="cpu")
    s.values, s.factor = _array([1.0, 2.0]), 2.0
    launch(_scaled_copy, dim=2, inputs=[s], outputs=[out], device="cpu")
    np.testing.assert_array_equal(out.numpy(), [2.0, 4.0])
    s.values, s.factor = _array([5.0, 7.0]), 3.0  # another array and another number, same struct
    launch(_scaled_copy, dim=2, inputs=[s], outputs=[out], device="cpu")
    np.testing.assert_array_equal(out.numpy(), [15.0, 21.0])
    assert len(launches._records[_scaled_copy]) == 1


def test_vectors_are_keyed_by_value():
    x = wp.array([[1.0, 2.0, 3.0]], dtype=wp.vec3, device="cpu")
    out = wp.zeros(1, dtype=wp.vec3, device="cpu")
    v = wp.vec3(1.0, 1.0, 1.0)
    launch(_offset, dim=1, inputs=[x, v], outputs=[out], device="cpu")
    v[0] = 10.0  # the same vector object changed in place is another key
    launch(_offset, dim=1, inputs=[x, v], outputs=[out], device="cpu")
    np.testing.assert_array_equal(out.numpy(), [[11.0, 3.0, 4.0]])
    launch(_offset, dim=1, inputs=[x, wp.vec3(1.0, 1.0, 1.0)], outputs=[out], device="cpu")
    np.testing.assert_array_equal(out.numpy(), [[2.0, 3.0, 4.0]])
    assert len(launches._records[_offset]) == 2


def test_unkeyable_arguments_fall_back_to_wp_launch():
    x, y = _array([1.0, 2.0]), wp.zeros(2, dtype=float, device="cpu")
    launch(_axpy, dim=2, inputs=[x, np.float32(2.0), 1], outputs=[y], device="cpu")  # NumPy scalar: keyed by value
    np.testing.assert_array_equal(y.numpy(), [3.0, 5.0])
    launch(_axpy, dim=2, inputs=[x, 2.0, 1], outputs=[y], device="cpu", block_dim=1)  # extra keyword: wp.launch
    np.testing.assert_array_equal(y.numpy(), [3.0, 5.0])


def test_recorded_launches_lists_replays():
    x, y = _array([1.0, 2.0]), wp.zeros(2, dtype=float, device="cpu")
    launch(_axpy, dim=2, inputs=[x, 2.0, 0], outputs=[y], device="cpu")  # recorded outside the block
    with recorded_launches() as kernels:
        launch(_axpy, dim=2, inputs=[x, 2.0, 0], outputs=[y], device="cpu")
        launch(_axpy, dim=2, inputs=[x, 4.0, 0], outputs=[y], device="cpu")
    assert kernels == [_axpy, _axpy]
    np.testing.assert_array_equal(y.numpy(), [4.0, 8.0])


def test_replays_inside_a_cpu_capture_are_captured():
    x, y = _array([1.0, 2.0]), wp.zeros(2, dtype=float, device="cpu")
    launch(_axpy, dim=2, inputs=[x, 2.0, 0], outputs=[y], device="cpu")  # recorded before the capture
    y.zero_()
    with wp.ScopedCapture(device="cpu") as capture:
        launch(_axpy, dim=2, inputs=[x, 2.0, 0], outputs=[y], device="cpu")
    y.zero_()
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])


def test_launches_inside_a_tape_are_recorded_on_it_and_differentiate():
    """A recorded (replayable) launch never reaches the tape, so inside ``wp.Tape`` every call is a plain launch:
    the tape holds it and ``y = 3 x`` gives ``dy/dx = 3``. Fails if a replay (or its recording) runs instead."""
    x = wp.array(np.arange(4, dtype=np.float32), dtype=float, requires_grad=True, device="cpu")
    y = wp.zeros(4, dtype=float, requires_grad=True, device="cpu")
    launch(_axpy, dim=4, inputs=[x, 3.0, 0], outputs=[y], device="cpu")  # recorded outside the tape first
    tape = wp.Tape()
    with tape:
        launch(_axpy, dim=4, inputs=[x, 3.0, 0], outputs=[y], device="cpu")
    assert len(tape.launches) == 1
    tape.backward(grads={y: wp.ones(4, dtype=float, device="cpu")})
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 3.0, np.float32))
