"""Contact history: last step's contact forces, found again by shape pair and geometry.

Why: a cold-started Gauss-Seidel sweep of ``iterations = 12`` does not converge a stack's contact
forces within a step; each step ends short of them, so a resting stack sinks deeper and its friction
leaves slip. Measured at dt = 1/240 s, cold meaning ``contact_warmstart=True`` with decay 0: six 0.2 m
cubes resting on the ground sink 1.08 mm cold and 0.54 mm seeded from this history; the four towers
with every box offset by up to 0.5 mm and turned by up to 0.3 degrees (``benchmarks.statics.
perturbed_towers``) slide 0.052 mm from 2 s to 6 s cold and 0.014 mm from 2 s to 10 s seeded
(``tests/solvers/steel/test_warmstart.py``: ``test_zero_decay_carries_nothing``,
``test_the_shape_pair_history_halves_the_resting_sink``,
``test_cold_started_contacts_let_the_perturbed_towers_slide_further``; ``test_friction_patches.py``:
``test_perturbed_towers_settle_without_creep_at_dt_1_240``). Starting each contact from the force
it carried last step (warm starting, Catto, "Iterative Dynamics with Temporal Coherence", GDC
2005) lets the sweep converge over steps. The reference solver carries friction history across
steps keyed "by body pair and geometry, independently of collision contact matching"; this
module does the same for point friction, without needing the pipeline's contact matching.

How: after a step, every contact with rows is recorded under the key ``shape0 * shape_count +
shape1`` with its contact points in the bodies' frames and its force ``(f_n, f_t)`` (normal
magnitude [N] and tangential vector, world frame [N]); the records are sorted by key (stably:
records of one key stay in slot order, which decides ties between equally near records). The
next step's contact-row kernel searches its key (where last step's record of the same slot landed,
:func:`guess_first_record`, else galloping up from the previous shape pair's position,
:func:`next_first_record`) and takes the record whose body-frame
points lie closest to its own (within ``MATCH_DISTANCE``), then seeds its normal impulse with
``f_n dt`` and its friction pair with ``f_t dt`` projected on the new tangents and clamped to
the friction disk. Forces rather than impulses are kept so a change of ``dt`` scales correctly.
A record is used at most by the contacts that find it; unmatched contacts start cold.
Impacts (contacts closing at ``restitution_velocity_threshold`` or faster at the start of the
step) are not recorded: their impulse stops a fall once, and re-applying it to a stack that has
already stopped would launch the top box while the sweep walks the correction up from the ground.
Each record also keeps two anchors, body-frame points whose tangential separation is the slip the
contact has accumulated while sticking. The contact-row kernel reads that slip under the current
poses and re-anchors at the contact's current points carrying it (``contacts/rows.py``): anchors
fixed to the material points where a contact started would read a rolling contact's travel over
both surfaces as slip and brake it (a ball rolling at 1 m/s lost 0.23 m/s in 1 s that way; re-anchored it
keeps its speed within 1e-3 m/s, ``tests/solvers/steel/test_rolling.py::test_rolling_sphere_keeps_its_speed``). A
sticking contact keeps its anchors; one that slides at the Coulomb limit or carries no load
releases them (slip 0).
``reset()`` forgets the history of the selected worlds (after a teleport).

A step far shorter than the one before it. The push-out ``baumgarte depth / dt`` and the anchors'
``-beta slip / dt`` are position corrections whose speed stays in the published velocity, and the
records divide the step's impulse by ``dt``: one step of 1e-6 s in a settled 6-box stack stepped at
1/600 s left the stack 8.4 m/s of push-out speed and records of 6e5 times its weight, which the next
step seeded as impulses (3.6 km/s; now 2.6e-5 m/s, ``tests/solvers/steel/test_robustness.py::
test_a_tiny_step_in_a_settled_stack_does_not_launch_the_next_steps``). :func:`bias_time` is ``dt``
unless ``dt`` fell by more than half since the last step; then such a step keeps the correction
stiffness of the steps before, as a spring would (``baumgarte / bias_time^2``: the speed it adds is
``baumgarte depth dt / bias_time^2``, scaled in ``contacts.py``), and it keeps the records it found
rather than record its own, so the next step starts as if it had not happened. A constant or gradually
changing ``dt`` is used as is (bitwise).

The sort. On the CPU the recording kernel's single thread sorts the live records itself, a natural merge
sort (:func:`sort_records`), where CUDA and CPU graph captures radix-sort the whole capacity. Both are
stable sorts by the same key, so keys and indices come out the same. The pipeline writes each narrow
phase's contacts in runs of ascending keys (few runs for few worlds), and the whole-capacity radix sort
(rejected on the CPU) had a fixed cost per call however few the keys; 300-step states are bitwise equal
either way. Keys in more than ``MERGE_RUNS_MAX`` runs (many worlds interleave their pairs) take a stable LSD
radix sort in the same thread instead (:func:`radix_sort_records`, two passes of at most 11 bits for up to
2,048 shapes), whose cost does not grow with the runs and which gives the same order. Timings in
benchmarks/README.md's performance log.
"""

from __future__ import annotations

import warp as wp

from ..data import ROW_PATCH, UNBOUNDED, RowBuffers
from ..rows.common import contact_slots, contact_threads, host_counted
from .data import ContactInput, ContactSlots
from ....launches import launch
from ....structs import struct_of

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

GUESS_WALK = wp.constant(8)  # records guess_first_record walks back at most
MATCH_DISTANCE = wp.constant(0.02)  # [m] largest drift of a contact point between steps to match it
NO_KEY = wp.constant(2147483647)
RADIX_DIGIT_BITS = 11  # widest digit of the single thread's radix sort: 2048 counters
MERGE_RUNS_MAX = wp.constant(16)  # ascending runs up to which the merge sort is the cheaper (4 passes)


BIAS_TIME_FALL = 0.5  # the most bias_time may fall per step, as a factor


def bias_time(dt: float, previous: float | None) -> float:
    """The time scale [s] of a step's position corrections (module docstring): ``dt``, but no shorter than
    ``BIAS_TIME_FALL`` times the previous step's (``None``: none yet). A step with ``dt`` below it records nothing."""
    if previous is None:
        return dt
    return max(dt, previous * BIAS_TIME_FALL)


@wp.struct
class CarriedRecord:
    """A record carried unchanged through a step (sleeping), written per contact slot by the contact-row
    kernel: one array of these rather than one per field, as the two kernels run over every slot."""

    point0: wp.vec3
    point1: wp.vec3
    force_n: float
    force_t: wp.vec3
    active: wp.int32  # 1: the slot carries this record; the anchors and age are in the per-contact arrays


@wp.struct
class HistoryArrays:
    """The history's device arrays as one struct: what the contact-row kernel reads and the recording kernel
    writes. Comments: meaning [units] (shape); ``record`` is a sorted position, ``slot`` a contact slot."""

    count: wp.array[wp.int32]  # records  (1,)
    key: wp.array[wp.int32]  # sorted shape-pair keys s0 * shape_count + s1, NO_KEY past the count; second half:
    #                          the sorts' scratch  (2 record,)
    index: wp.array[wp.int32]  # the slot each sorted record came from; second half: scratch  (2 record,)
    point0: wp.array[wp.vec3]  # contact point on body 0, body frame [m]  (slot,)
    point1: wp.array[wp.vec3]  # contact point on body 1, body frame [m]  (slot,)
    force_n: wp.array[float]  # normal force [N]  (slot,)
    force_t: wp.array[wp.vec3]  # tangential force, world frame [N]  (slot,)
    anchor0: wp.array[wp.vec3]  # friction anchor on body 0, body frame [m]  (slot,)
    anchor1: wp.array[wp.vec3]  # friction anchor on body 1, body frame [m]  (slot,)
    world: wp.array[wp.int32]  # world of the record (reset forgets by world)  (slot,)
    age: wp.array[wp.int32]  # steps the contact has persisted  (slot,)
    position: wp.array[wp.int32]  # sorted position of each slot's record (guess_first_record)  (slot,)
    sort_counts: wp.array[wp.int32]  # the CPU radix sort's digit counters  (2^RADIX_DIGIT_BITS,)
    solved_generation: wp.array[wp.int32]  # match generation of the solved set (contacts/warmstart.py)  (1,)
    carried: wp.array[CarriedRecord]  # records carried unchanged through this step (sleeping)  (slot,)


class ContactHistory:
    """Sorted records of last step's contact forces (see the module docstring)."""

    def __init__(self, capacity: int, device):
        n = max(capacity, 1)
        self.capacity = n
        # Twice the sorted length: the second half is the sorts' scratch (radix and merge sort alike).
        self.key = wp.full(2 * n, NO_KEY, dtype=wp.int32, device=device)
        self.index = wp.zeros(2 * n, dtype=wp.int32, device=device)
        self.point0 = wp.zeros(n, dtype=wp.vec3, device=device)
        self.point1 = wp.zeros(n, dtype=wp.vec3, device=device)
        self.force_n = wp.zeros(n, dtype=float, device=device)
        self.force_t = wp.zeros(n, dtype=wp.vec3, device=device)
        self.anchor0 = wp.zeros(n, dtype=wp.vec3, device=device)
        self.anchor1 = wp.zeros(n, dtype=wp.vec3, device=device)
        self.world = wp.zeros(n, dtype=wp.int32, device=device)
        self.age = wp.zeros(n, dtype=wp.int32, device=device)
        self.count = wp.zeros(1, dtype=wp.int32, device=device)
        # Sorted position of each slot's record (CPU live path): where the next step first looks for the same
        # slot's shape pair (guess_first_record). Any value is safe: a guess is checked against the keys.
        self.position = wp.zeros(n, dtype=wp.int32, device=device)
        self.sort_counts = wp.zeros(1 << RADIX_DIGIT_BITS, dtype=wp.int32, device=device)  # the CPU radix sort's digit counters
        self._count_view = None  # (count, its NumPy view) on the CPU; see count_view
        # Warm start by contact identity (contacts/warmstart.py): the records are also read by slot.
        self.solved_generation = wp.full(1, -1, dtype=wp.int32, device=device)  # match generation of the solved set
        self.solved_contacts = None  # the Contacts buffer last solved (host reference)
        self.no_match = wp.full(1, -1, dtype=wp.int32, device=device)  # placeholder when warm start is off
        # Records carried unchanged through a step, per contact slot of that step: the contacts of
        # asleep articulations (sleeping/stages.py) keep the record they had when they fell asleep, whether
        # their rows are skipped or solved, so a woken island resumes from the same history either way.
        self.carried = wp.zeros(n, dtype=CarriedRecord, device=device)
        self.arrays = struct_of(HistoryArrays, self)  # as the kernels take them (never rebound: clear() fills in place)

    def count_view(self):
        """A NumPy view of ``count`` (CPU only, outside captures), made once per ``count`` array."""
        view = self._count_view
        if view is None or view[0] is not self.count:
            view = self._count_view = (self.count, self.count.numpy())
        return view[1]

    def clear(self) -> None:
        self.count.zero_()
        self.key.fill_(NO_KEY)
        self.solved_generation.fill_(-1)


@wp.func
def first_record(key: int, count: int, sorted_key: wp.array[wp.int32]):
    """First position of the sorted records whose key is ``>= key`` (``count`` when none).

    Branch-free binary search: the next half is picked by a select, not a jump, so the CPU does not
    mispredict half of its steps.
    """
    if count <= 0:
        return 0
    base = int(0)
    n = count
    while n > 1:
        half = n // 2
        base = wp.where(sorted_key[base + half] < key, base + half, base)
        n -= half
    if sorted_key[base] < key:
        base += 1
    return base


@wp.func
def next_first_record(key: int, previous_key: int, previous_start: int, count: int, sorted_key: wp.array[wp.int32]):
    """:func:`first_record` of ``key``, given that of ``previous_key`` (-1: none) for a caller that walks keys
    mostly upwards (the pipeline writes contacts in runs of ascending shape pairs).

    Above the previous key, the search gallops up from the previous position (steps 1, 2, 4, ...) and
    bisects the last step, so the next pair a few records on costs a few reads, not a search of the whole
    history; any other key is searched from scratch. Both find the same first position.
    """
    if previous_key < 0 or key < previous_key:
        return first_record(key, count, sorted_key)
    lo = previous_start  # every record before lo has a key below previous_key, so below key
    step = int(1)
    while lo < count and sorted_key[lo] < key:
        hi = lo + step
        if hi >= count or sorted_key[hi] >= key:
            # The first position lies in (lo, min(hi, count)]: bisect it as first_record does.
            base = lo + 1
            n = wp.min(hi, count) - base
            while n > 0:
                half = n // 2
                if sorted_key[base + half] < key:
                    base = base + half + 1
                    n = n - half - 1
                else:
                    n = half
            return base
        lo = hi + 1
        step *= 2
    return lo


@wp.func
def guess_first_record(slot: int, key: int, count: int, sorted_key: wp.array[wp.int32],
                       position: wp.array[wp.int32]):
    """:func:`first_record` of ``key`` found from where last step's record of the same contact slot landed
    (``position``), or -1 when that record's key differs (the pipeline keeps a scene's contact order from
    step to step, so it mostly does not).

    Any position holding ``key`` lies in its run of equal keys; walking back to the run's start gives the
    first record, the position a search finds. Runs longer than ``GUESS_WALK`` records are left to the search.
    """
    if slot >= position.shape[0]:
        return -1
    p = position[slot]
    if p < 0 or p >= count:
        return -1
    if sorted_key[p] != key:
        return -1
    for _ in range(GUESS_WALK):
        if p == 0:
            return p
        if sorted_key[p - 1] != key:
            return p
        p -= 1
    return -1


@wp.func
def find_record(
    start: int,
    key: int,
    point0: wp.vec3,
    point1: wp.vec3,
    count: int,
    sorted_key: wp.array[wp.int32],
    sorted_index: wp.array[wp.int32],
    record_point0: wp.array[wp.vec3],
    record_point1: wp.array[wp.vec3],
):
    """Index of the record of ``key`` whose body-frame points are nearest, or -1; ``start`` is
    :func:`first_record` of ``key`` (contacts of one shape pair share it)."""
    best = int(-1)
    best_d = float(MATCH_DISTANCE)
    # Squared distances at or above this cannot give d < best_d: sqrt is monotone, and the first bound
    # sits a relative 1e-3 above MATCH_DISTANCE^2, far beyond rounding. Records farther away skip the root.
    best_sq = float(MATCH_DISTANCE * MATCH_DISTANCE * 1.001)
    i = start
    while i < count and sorted_key[i] == key:
        rec = sorted_index[i]
        # max(|a|, |b|) as sqrt(max(|a|^2, |b|^2)): a length is sqrt(length_sq), and a correctly rounded sqrt
        # is monotone, so this is bitwise the same distance with one square root instead of two.
        d_sq = wp.max(wp.length_sq(record_point0[rec] - point0), wp.length_sq(record_point1[rec] - point1))
        if d_sq < best_sq:
            d = wp.sqrt(d_sq)
            if d < best_d:
                best_d = d
                best_sq = d_sq
                best = rec
        i += 1
    return best


@wp.func
def run_end(i: int, n: int, base: int, key: wp.array[wp.int32]):
    """End of the ascending run of ``key[base:base + n]`` that starts at ``i`` (``i < n``)."""
    m = i + 1
    while m < n:
        if key[base + m] < key[base + m - 1]:
            return m
        m += 1
    return n


@wp.func
def _settle(n: int, src: int, key: wp.array[wp.int32], index: wp.array[wp.int32]):
    """Move a sort's result to the front of ``key`` and ``index`` when its last pass wrote the scratch half."""
    if src != 0:
        for c in range(n):
            key[c] = key[src + c]
            index[c] = index[src + c]


@wp.func
def sort_records(n: int, scratch: int, key: wp.array[wp.int32], index: wp.array[wp.int32]):
    """Stable sort of ``key[:n]`` with ``index[:n]`` riding along, using ``[scratch, scratch + n)`` of both.

    Natural bottom-up merge sort: each pass merges neighbouring ascending runs (a tie takes the left run's
    entry, so it is stable), so keys that arrive sorted cost one scan and a few runs a few passes.
    """
    src = int(0)
    dst = scratch
    runs = int(2)
    while runs > 1:
        runs = int(0)
        i = int(0)
        while i < n:
            m = run_end(i, n, src, key)
            if i == 0 and m == n:
                break  # one run: sorted where it is
            e = m
            if m < n:
                e = run_end(m, n, src, key)
            a = i
            b = m
            o = i
            while a < m and b < e:
                if key[src + b] < key[src + a]:
                    key[dst + o] = key[src + b]
                    index[dst + o] = index[src + b]
                    b += 1
                else:
                    key[dst + o] = key[src + a]
                    index[dst + o] = index[src + a]
                    a += 1
                o += 1
            while a < m:
                key[dst + o] = key[src + a]
                index[dst + o] = index[src + a]
                a += 1
                o += 1
            while b < e:
                key[dst + o] = key[src + b]
                index[dst + o] = index[src + b]
                b += 1
                o += 1
            runs += 1
            i = e
        if runs > 0:
            t = src
            src = dst
            dst = t
    _settle(n, src, key, index)


@wp.func
def radix_sort_records(n: int, scratch: int, bits: int, key: wp.array[wp.int32], index: wp.array[wp.int32],
                       counts: wp.array[wp.int32]):
    """Stable LSD radix sort of ``key[:n]`` (``index`` riding along) by the low ``bits`` bits of each key, using
    ``[scratch, scratch + n)`` of both and ``counts`` (``2^RADIX_DIGIT_BITS`` entries) as digit counters.

    Each pass scatters in slot order, so equal digits keep their order and the whole sort is stable: the
    order :func:`sort_records` gives when ``bits`` covers every key that differs (keys below ``2^bits``,
    ``NO_KEY``'s low bits all ones, as for the CUDA radix sort in ``record_contacts``).
    """
    passes = wp.max((bits + RADIX_DIGIT_BITS - 1) // RADIX_DIGIT_BITS, 1)
    width = (bits + passes - 1) // passes
    buckets = 1 << width
    mask = buckets - 1
    src = int(0)
    dst = scratch
    for p in range(passes):
        shift = p * width
        for b in range(buckets):
            counts[b] = 0
        for i in range(n):
            d = (key[src + i] >> shift) & mask
            counts[d] = counts[d] + 1
        total = int(0)
        for b in range(buckets):
            c = counts[b]
            counts[b] = total
            total += c
        for i in range(n):
            k = key[src + i]
            d = (k >> shift) & mask
            o = counts[d]
            counts[d] = o + 1
            key[dst + o] = k
            index[dst + o] = index[src + i]
        t = src
        src = dst
        dst = t
    _settle(n, src, key, index)


@wp.func
def sort_live_records(n: int, scratch: int, bits: int, key: wp.array[wp.int32], index: wp.array[wp.int32],
                      counts: wp.array[wp.int32]):
    """The single thread's stable sort of the recorded slots: :func:`sort_records` for keys that arrive in at
    most ``MERGE_RUNS_MAX`` ascending runs, :func:`radix_sort_records` beyond (both give the same order)."""
    runs = int(1)
    for i in range(1, n):
        if key[i] < key[i - 1]:
            runs += 1
    if runs <= MERGE_RUNS_MAX or bits > 2 * RADIX_DIGIT_BITS:
        sort_records(n, scratch, key, index)
    else:
        radix_sort_records(n, scratch, bits, key, index, counts)


@wp.kernel
def _record_contacts(
    dt: float,
    shape_count: int,
    ci: ContactInput,
    slots: ContactSlots,
    rows: RowBuffers,
    live_only: int,
    threads: int,
    sort_here: int,
    key_bits: int,
    hist: HistoryArrays,  # out: the records, sorted
):
    # One thread per slot on CUDA, one walking the slot_end in order on the CPU (contact_threads). Every
    # slot is written when the whole capacity is sorted (CUDA, CPU captures), else the live ones.
    slot_end = ci.shape0.shape[0]
    if live_only != 0:
        slot_end = wp.min(ci.count[0], slot_end)
    for c in range(wp.tid(), slot_end, threads):
        hist.index[c] = c
        r = int(-1)
        if c < ci.count[0]:
            r = slots.row[c]
            carry = hist.carried[c]
            if carry.active != 0:
                # A contact of an asleep articulation: its record as found this step (contacts.py), unchanged.
                hist.key[c] = ci.shape0[c] * shape_count + ci.shape1[c]
                hist.point0[c] = carry.point0
                hist.point1[c] = carry.point1
                hist.force_n[c] = carry.force_n
                hist.force_t[c] = carry.force_t
                hist.anchor0[c] = slots.anchor0[c]
                hist.anchor1[c] = slots.anchor1[c]
                hist.world[c] = slots.world[c]
                hist.age[c] = slots.age[c]
                continue
        if r < 0 or slots.impact[c] != 0:
            hist.key[c] = NO_KEY
            # Read by slot for the warm start by contact identity: nothing hist.carried (an impact's
            # impulse must not repeat its rebound).
            hist.force_n[c] = 0.0
            hist.force_t[c] = wp.vec3(0.0)
            continue
        hist.key[c] = ci.shape0[c] * shape_count + ci.shape1[c]
        hist.point0[c] = ci.point0[c]
        hist.point1[c] = ci.point1[c]
        hist.force_n[c] = rows.impulse[r] / dt
        ft = wp.vec3(0.0)
        for k in range(r + 1, r + slots.row_count[c]):
            ft += rows.dir[k] * (rows.impulse[k] / dt)
        hist.force_t[c] = ft
        hist.world[c] = slots.world[c]
        hist.age[c] = slots.age[c]
        # A sticking contact keeps its anchors; one that slides at the Coulomb limit or carries no
        # load releases them to where it is now.
        # The disk is the one the sweep last projected on: a patch anchor's share of its region's load.
        bound = rows.mu[r] * rows.impulse[r]
        if slots.row_count[c] >= 3 and rows.kind[r + 1] == ROW_PATCH:
            bound = rows.bound[r + 1]
        sticking = bound > 0.0 and wp.length(ft) * dt < 0.999 * bound
        if sticking:
            hist.anchor0[c] = slots.anchor0[c]
            hist.anchor1[c] = slots.anchor1[c]
        else:
            hist.anchor0[c] = ci.point0[c] + ci.offset0[c]
            hist.anchor1[c] = slots.release1[c]  # its current point, ahead by a moving surface's step (contacts.py)
    if sort_here != 0:
        # The CPU's single thread has recorded every live slot: sort them here rather than pay a radix
        # sort's fixed cost for keys that mostly arrive in ascending runs.
        sort_live_records(slot_end, hist.key.shape[0] // 2, key_bits, hist.key, hist.index, hist.sort_counts)
        # Where each slot's record landed, for the next step's lookup (guess_first_record).
        for i in range(slot_end):
            hist.position[hist.index[i]] = i


def record_contacts(sm, sd, contacts, dt: float) -> None:
    """Replace the history by this step's solved contacts, sorted by shape-pair key."""
    hist, model = sd.history, sm.model
    n = contact_slots(contacts)
    live_only = host_counted(contacts)  # record and sort only the live slots
    if n > 0:
        threads = contact_threads(contacts)
        sort_here = live_only and threads == 1
        # Keys lie below shape_count², and NO_KEY's low bits are all ones: the sorts need only these bits.
        key_bits = min(max((model.shape_count * model.shape_count).bit_length(), 1), 31)
        launch(
            _record_contacts,
            dim=threads,
            inputs=[float(dt), int(model.shape_count),
                    sd.contact_input.update(contacts, sm.options.contact_compliance,
                                                sm.options.contact_warmstart),
                    sd.contact_slots, sd.rows.buffers, int(live_only), threads, int(sort_here), key_bits],
            outputs=[hist.arrays],
            device=model.device,
        )
        # On the CPU's live path the kernel has sorted the records (sort_live_records). Over the capacity
        # unused slots carry NO_KEY and sort last, so it can be sorted blindly; sorting only the key bits
        # gives the same order in fewer passes.
        if not sort_here:
            wp.utils.radix_sort_pairs(hist.key, hist.index, n, end_bit=key_bits)
    if live_only:
        # The recorded slots (the pipeline's count can exceed its capacity), written through a NumPy view
        # of the CPU count made once: ``fill_`` packs a value and calls into Warp each step (cost: performance log).
        hist.count_view()[0] = n
    else:
        wp.copy(hist.count, contacts.rigid_contact_count)
    if sm.options.contact_warmstart:
        wp.copy(hist.solved_generation, contacts.rigid_contact_match_generation)
        hist.solved_contacts = contacts


@wp.kernel
def _forget_worlds(mask: wp.array[wp.bool], count: wp.array[wp.int32], world: wp.array[wp.int32],
                   point0: wp.array[wp.vec3], force_n: wp.array[float], force_t: wp.array[wp.vec3]):
    c = wp.tid()
    if c < count[0]:
        if mask[world[c]]:
            # The record keeps its key (the sort order stays valid) but can no longer match, and
            # carries nothing to a warm start by contact identity.
            point0[c] = wp.vec3(UNBOUNDED)  # no contact point lies there
            force_n[c] = 0.0
            force_t[c] = wp.vec3(0.0)


def forget_worlds(sm, sd, mask) -> None:
    """Drop the records of the worlds selected by ``mask`` (length world_count + 1)."""
    hist = sd.history
    wp.launch(_forget_worlds, dim=hist.capacity,
              inputs=[mask, hist.count, hist.world, hist.point0, hist.force_n, hist.force_t],
              device=sm.model.device)
