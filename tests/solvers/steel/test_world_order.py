"""Why identical worlds in one model drift apart under SolverSteel: contact order, not physics.

Measured on the CPU with the pinned Newton: the CollisionPipeline's narrow phase walks the broad
phase's candidate pairs in a grid-stride loop over a fixed thread count, 256 on the CPU (256 blocks
of one thread). Warp runs the CPU threads one after another, so thread ``t`` writes the contacts of
pairs ``t``, ``t + 256``, ``t + 512``, ... before thread ``t + 1`` starts. Worlds are laid out one
after another in the pair list; the world whose pairs straddle a multiple of 256 gets the contacts
of its pairs after the boundary written first and those before it last, a rotation of the order
every other world gets. The contacts themselves are bitwise the same. SolverSteel's rows follow the
buffer, and projected Gauss-Seidel is order dependent (each visit changes the impulses the next one
sees), so that world rounds differently.

The scene here makes that boundary fall inside one world on the first step: a rigid tripod (one
body, three spheres) resting on the ground has exactly three candidate pairs (sphere-ground; shapes
of one body are not paired), so 86 worlds give 258 pairs and world 85 owns pairs 255 | 256, 257.
With 85 worlds (255 pairs) every world gets the same order. The same thing happens in the humanoid
scene (16 worlds, 624 pairs at step 167: worlds 6 and 13 straddle 256 and 512; in world 13 the
ground contacts of shape 27 (a foot) come first, and it leaves world 0 bitwise at step 167; in world
6 only self-contacts move ahead of the ground contacts, whose own order holds, and it stays equal).
On CUDA the thread count is larger and the order depends on scheduling, so these tests pin the CPU.

Every comparison is bitwise (``np.array_equal`` on float32): the claim is that identical input in
identical order gives identical output, so no tolerance would be the right one.
"""

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

DT = 1.0 / 600.0  # [s] the scenes' time step
PAIRS_PER_WORLD = 3  # sphere-ground candidate pairs of one tripod
NARROW_PHASE_THREADS_CPU = 256  # the pipeline's grid-stride thread count on the CPU (measured)
STRADDLING = NARROW_PHASE_THREADS_CPU // PAIRS_PER_WORLD  # world 85 owns pairs 255, 256, 257
WORLDS = STRADDLING + 1  # 258 pairs: the boundary falls inside the last world
STEPS = 20  # world 85 already differs after step 1 (largest body_q entry 1.9e-6 apart)
# Sphere centres in the body frame [m] and radii [m]: uneven, so the three contacts carry different loads.
FEET = ((0.2, 0.0, 0.05), (-0.1, 0.17, 0.045), (-0.1, -0.15, 0.05))


def _tripods(world_count):
    """``world_count`` copies of a slightly tilted rigid tripod, its feet on a shared ground plane."""
    robot = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(mu=0.5)
    tilt = wp.quat_from_axis_angle(wp.normalize(wp.vec3(1.0, 0.3, 0.0)), 0.05)
    body = robot.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.05), tilt))
    for x, y, r in FEET:
        robot.add_shape_sphere(body, xform=wp.transform(wp.vec3(x, y, 0.0), wp.quat_identity()), radius=r, cfg=cfg)
    scene = newton.ModelBuilder()
    scene.replicate(robot, world_count)
    scene.add_ground_plane(cfg=cfg)
    return scene.finalize(device="cpu")


def _local(model, contacts):
    """Per buffer slot: world, world-local shape 0 and shape 1 (-1 for the shared ground)."""
    n = int(contacts.rigid_contact_count.numpy()[0])
    world_of = model.shape_world.numpy()
    first = {w: int(np.argmax(world_of == w)) for w in np.unique(world_of[world_of >= 0])}

    def local(shapes):
        return np.array([-1 if world_of[s] < 0 else s - first[world_of[s]] for s in shapes], dtype=np.int64)

    s0, s1 = contacts.rigid_contact_shape0.numpy()[:n], contacts.rigid_contact_shape1.numpy()[:n]
    return np.maximum(world_of[s0], world_of[s1]), local(s0), local(s1)


def _contact_lists(model, contacts):
    """Per world, its contacts in buffer order: (local shape 0, local shape 1, point0, point1, normal)."""
    world, l0, l1 = _local(model, contacts)
    n = len(world)
    p0, p1 = contacts.rigid_contact_point0.numpy()[:n], contacts.rigid_contact_point1.numpy()[:n]
    normal = contacts.rigid_contact_normal.numpy()[:n]
    return [[(int(l0[i]), int(l1[i]), *p0[i].tolist(), *p1[i].tolist(), *normal[i].tolist())
             for i in np.flatnonzero(world == w)] for w in range(model.world_count)]


def _canonical_order(model, contacts):
    """Reorder the contact buffer in place, stably by (world, local shape 0, local shape 1).

    Contacts of one pair keep their relative order (one thread writes a pair's points, in the same
    order in every world). Every per-contact array of the buffer moves together."""
    world, l0, l1 = _local(model, contacts)
    n = len(world)
    order = np.lexsort((np.arange(n), l1, l0, world))
    for name, array in vars(contacts).items():
        per_contact = isinstance(array, wp.array) and array.shape[0] == contacts.rigid_contact_max
        if name.startswith("rigid_contact_") and per_contact:
            values = array.numpy()
            values[:n] = values[:n][order]
            array.assign(values)
    return order


def _run(world_count, *, canonical=False, deterministic=False):
    """body_q and body_qd after every step, shape (steps, worlds, 7 or 6), and the first step's contact lists."""
    model = _tripods(world_count)
    solver = SolverSteel(model)
    pipeline = newton.CollisionPipeline(model, contact_matching="disabled", deterministic=deterministic)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    q, qd, first_lists = [], [], None
    for _ in range(STEPS):
        pipeline.collide(s0, contacts)
        if canonical:
            _canonical_order(model, contacts)
        if first_lists is None:
            first_lists = _contact_lists(model, contacts)
        solver.step(s0, s1, None, contacts, DT)
        s0, s1 = s1, s0
        q.append(s0.body_q.numpy().reshape(world_count, 7))
        qd.append(s0.body_qd.numpy().reshape(world_count, 6))
    return np.array(q), np.array(qd), first_lists


def _pairs(contact_list):
    return [(a, b) for a, b, *_ in contact_list]


def test_pipeline_rotates_the_contact_order_of_the_world_straddling_its_thread_count():
    model = _tripods(WORLDS)
    pipeline = newton.CollisionPipeline(model, contact_matching="disabled")
    contacts = pipeline.contacts()
    state = model.state()
    newton.eval_fk(model, state.joint_q, state.joint_qd, state)
    pipeline.collide(state, contacts)
    assert int(pipeline.broad_phase_pair_count.numpy()[0]) == WORLDS * PAIRS_PER_WORLD
    lists = _contact_lists(model, contacts)
    in_order = [(-1, 0), (-1, 1), (-1, 2)]  # the ground is shape 0 of every pair
    assert _pairs(lists[0]) == in_order
    assert [w for w in range(WORLDS) if _pairs(lists[w]) != in_order] == [STRADDLING]
    # Pair 255 (foot 0) is written last, by thread 255; pairs 256 and 257 (feet 1, 2) by threads 0 and 1.
    assert _pairs(lists[STRADDLING]) == [(-1, 1), (-1, 2), (-1, 0)]
    # Same contacts, bit for bit: only the order differs.
    assert lists[STRADDLING] != lists[0]
    assert sorted(lists[STRADDLING]) == sorted(lists[0])
    # One world fewer: 255 pairs, one per thread, every world in pair order.
    model = _tripods(WORLDS - 1)
    pipeline = newton.CollisionPipeline(model, contact_matching="disabled")
    contacts = pipeline.contacts()
    state = model.state()
    newton.eval_fk(model, state.joint_q, state.joint_qd, state)
    pipeline.collide(state, contacts)
    lists = _contact_lists(model, contacts)
    assert all(_pairs(lists[w]) == in_order for w in range(WORLDS - 1))


@pytest.fixture(scope="module")
def plain():
    return _run(WORLDS)


def test_the_rotated_world_leaves_the_others_bitwise(plain):
    q, qd, lists = plain
    assert _pairs(lists[STRADDLING]) != _pairs(lists[0])
    others = [w for w in range(WORLDS) if w != STRADDLING]
    assert np.array_equal(q[:, others], np.broadcast_to(q[:, :1], q[:, others].shape))
    assert np.array_equal(qd[:, others], np.broadcast_to(qd[:, :1], qd[:, others].shape))
    # The straddling world differs from the first step on (measured: largest body_q entry 1.9e-6 apart).
    assert not np.array_equal(q[0, STRADDLING], q[0, 0])


def test_a_canonical_contact_order_makes_every_world_bitwise_equal(plain):
    q, qd, lists = _run(WORLDS, canonical=True)
    assert all(_pairs(lists[w]) == _pairs(lists[0]) for w in range(WORLDS))
    assert np.array_equal(q, np.broadcast_to(q[:, :1], q.shape))
    assert np.array_equal(qd, np.broadcast_to(qd[:, :1], qd.shape))
    # The sort only reorders: world 0 was already in canonical order and steps exactly as without it.
    q_plain, qd_plain, _ = plain
    assert np.array_equal(q[:, 0], q_plain[:, 0]) and np.array_equal(qd[:, 0], qd_plain[:, 0])


def test_newtons_deterministic_pipeline_also_makes_every_world_bitwise_equal():
    """``CollisionPipeline(deterministic=True)`` sorts contacts by shape pair and sub-key after the narrow
    phase; shape indices of one world are offset alike, so every world comes out in the same order."""
    q, qd, lists = _run(WORLDS, deterministic=True)
    assert all(_pairs(lists[w]) == _pairs(lists[0]) for w in range(WORLDS))
    assert np.array_equal(q, np.broadcast_to(q[:, :1], q.shape))
    assert np.array_equal(qd, np.broadcast_to(qd[:, :1], qd.shape))
