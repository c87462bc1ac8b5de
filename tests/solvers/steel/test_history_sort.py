"""The contact history's sort (contacts/history.py): on the CPU the recording kernel sorts the live records itself
(a merge sort for keys in few ascending runs, its own radix sort beyond) instead of Warp's radix sort. All must
give the stable order by shape-pair key, since ties between equally near records go to the first in that order;
these tests pin it down."""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel
from steel.solvers.steel.contacts.history import (NO_KEY, first_record, guess_first_record, radix_sort_records,
                                             sort_live_records, sort_records)

KEY_BITS = 17  # the test keys lie below 100000 < 2^17


@wp.kernel
def _sort(which: int, n: int, key: wp.array[wp.int32], index: wp.array[wp.int32], counts: wp.array[wp.int32]):
    if which == 0:
        sort_records(n, key.shape[0] // 2, key, index)
    elif which == 1:
        radix_sort_records(n, key.shape[0] // 2, KEY_BITS, key, index, counts)
    else:
        sort_live_records(n, key.shape[0] // 2, KEY_BITS, key, index, counts)


@pytest.mark.parametrize("which", [0, 1, 2], ids=["merge", "radix", "live"])
@pytest.mark.parametrize("layout", ["random_ties", "random_wide", "sorted", "runs", "descending", "no_key_tail"])
def test_sort_records_is_the_stable_sort(layout, which):
    rng = np.random.default_rng(7)
    for _ in range(40):
        capacity = int(rng.integers(1, 200))
        n = int(rng.integers(0, capacity + 1))
        keys = rng.integers(0, 4 if layout == "random_ties" else 100000, size=n).astype(np.int32)
        if layout == "sorted":
            keys.sort()
        elif layout == "runs":  # ascending runs, as the collision pipeline's narrow phases write them
            keys = np.concatenate([np.sort(part) for part in np.array_split(keys, int(rng.integers(1, 6)))])
        elif layout == "descending":
            keys = np.sort(keys)[::-1].copy()
        elif layout == "no_key_tail":
            keys[rng.random(n) < 0.3] = NO_KEY
        key = np.full(2 * capacity, -5, dtype=np.int32)  # the scratch half starts with junk
        key[:n] = keys
        index = np.arange(2 * capacity, dtype=np.int32)
        key_wp = wp.array(key, dtype=wp.int32, device="cpu")
        index_wp = wp.array(index, dtype=wp.int32, device="cpu")
        counts = wp.full(2048, 123, dtype=wp.int32, device="cpu")  # junk: each pass must clear its counters
        wp.launch(_sort, dim=1, inputs=[which, n, key_wp, index_wp, counts], device="cpu")
        order = np.argsort(keys, kind="stable")
        np.testing.assert_array_equal(key_wp.numpy()[:n], keys[order])
        np.testing.assert_array_equal(index_wp.numpy()[:n], order)


def test_recorded_history_is_sorted_stably_by_shape_pair():
    """After steps of two worlds of boxes piled on a ground, the history holds every recorded slot once, keys
    ascending, slots ascending within a key, each key that of its slot's shape pair."""
    builder = newton.ModelBuilder()
    for world in range(2):
        builder.begin_world()
        for i in range(4):
            body = builder.add_body(xform=wp.transform(wp.vec3(0.05 * i, 0.0, 0.1 + 0.21 * i), wp.quat_identity()))
            builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
        builder.end_world()
    builder.add_ground_plane()
    model = builder.finalize(device="cpu")
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1, control = model.state(), model.state(), model.control()
    for _ in range(60):
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, control, contacts, 1.0 / 240.0)
        s0, s1 = s1, s0
    hist = solver.steel_data.history
    n = int(hist.count.numpy()[0])
    assert n > 8
    key, index = hist.key.numpy()[:n], hist.index.numpy()[:n]
    np.testing.assert_array_equal(np.sort(index), np.arange(n))
    assert np.all(np.diff(key.astype(np.int64)) >= 0)
    same = np.diff(key) == 0
    assert np.all(np.diff(index)[same] > 0)
    shape0 = contacts.rigid_contact_shape0.numpy()[index]
    shape1 = contacts.rigid_contact_shape1.numpy()[index]
    recorded = key != NO_KEY
    assert recorded.sum() > 8
    np.testing.assert_array_equal(key[recorded], (shape0 * model.shape_count + shape1)[recorded])


@wp.kernel
def _guess(keys: wp.array[wp.int32], count: int, sorted_key: wp.array[wp.int32], position: wp.array[wp.int32],
           guess_out: wp.array[wp.int32], first_out: wp.array[wp.int32]):
    slot = wp.tid()
    guess_out[slot] = guess_first_record(slot, keys[slot], count, sorted_key, position)
    first_out[slot] = first_record(keys[slot], count, sorted_key)


def test_guessed_first_record_is_the_searched_one():
    """A guess from last step's positions, right, stale or garbage, either finds the key's first record (as the
    binary search does) or gives up (-1); it never returns another position."""
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(30):
        count = int(rng.integers(1, 120))
        sorted_key = np.sort(rng.integers(0, 40, size=count)).astype(np.int32)
        slots = 150
        keys = rng.integers(0, 45, size=slots).astype(np.int32)  # some keys absent from the history
        position = rng.integers(-5, count + 5, size=slots).astype(np.int32)  # garbage, out of range included
        right = rng.random(slots) < 0.5
        for s in np.flatnonzero(right):  # a right guess: any position of its key, not only the first
            where = np.flatnonzero(sorted_key == keys[s])
            if len(where):
                position[s] = rng.choice(where)
        out = [wp.zeros(slots, dtype=wp.int32, device="cpu") for _ in range(2)]
        wp.launch(_guess, dim=slots, inputs=[wp.array(keys, device="cpu"), count, wp.array(sorted_key, device="cpu"),
                                             wp.array(position, device="cpu")], outputs=out, device="cpu")
        guess, first = out[0].numpy(), out[1].numpy()
        found = guess >= 0
        np.testing.assert_array_equal(guess[found], first[found])
        assert np.all(sorted_key[first[found]] == keys[found])
        hits += int(found.sum())
    assert hits > 500
