"""The legacy ``State.body_parent_f`` (``Model.request_state_attributes("body_parent_f")``), side by side with
Newton's reference SolverSteel.

Every step writes it into ``state_out``, with or without the ``body_parent_f`` observable: ours never wrote it,
so it kept whatever the caller had put there (a sentinel of 7 stayed 7 where the reference writes zeros, or the
88.29 N that carries a 9 kg kinematic body). The models are the ones reported: a link fixed to the world with no
articulation, a kinematic link or body, both together, with and without ground contact."""

import warnings

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverSteel

SENTINEL = 7.0  # [N, N·m] what the caller left in the arrays; no solver writes it
STEPS = 3  # two states alternate: after 3 steps each has been an output


def _request_legacy_parent_f(builder: newton.ModelBuilder) -> None:
    """The legacy request, deprecated since Newton 1.7 (observables replace it) but still served."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        builder.request_state_attributes("body_parent_f")


def _build(fixed: bool, kinematic: str | None, ground: bool, articulated: bool = False) -> newton.Model:
    """A 0.2 m box (9 kg with its link's 1 kg) fixed to the world and/or a kinematic box; the ground if asked."""
    b = newton.ModelBuilder()
    if ground:
        b.add_ground_plane()
    if fixed:
        pose = wp.transform((0.0, 0.0, 0.5), wp.quat_identity())
        link = b.add_link(xform=pose, mass=1.0)
        b.add_shape_box(link, hx=0.1, hy=0.1, hz=0.1)
        joint = b.add_joint_fixed(-1, link, parent_xform=pose)
        if articulated:
            b.add_articulation([joint])
    if kinematic is not None:
        pose = wp.transform((1.0, 0.0, 0.099 if ground else 1.0), wp.quat_identity())  # resting 1 mm into the ground
        add = b.add_link if kinematic == "link" else b.add_body
        b.add_shape_box(add(xform=pose, mass=1.0, is_kinematic=True), hx=0.1, hy=0.1, hz=0.1)
    _request_legacy_parent_f(b)
    return b.finalize(device="cpu")


def _legacy_after_steps(cls, model, with_observables: bool, **options):
    """Both states' ``body_parent_f`` and the observables after STEPS steps from sentinel-filled arrays."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = cls(model, **options)
    states = [model.state(), model.state()]
    pipe = newton.CollisionPipeline(model)
    contacts = pipe.contacts()
    kinds = ["body_parent_f", "contact_f"]
    obs = solver.observables(kinds, contacts=contacts) if with_observables else None
    for array in [s.body_parent_f for s in states] + ([obs.body_parent_f, obs.contact_f] if obs else []):
        array.fill_(wp.spatial_vector(*[SENTINEL] * 6))
    for _ in range(STEPS):
        pipe.collide(states[0], contacts)
        solver.step(states[0], states[1], None, contacts, 1.0 / 600.0, observables=obs)
        states.reverse()
    out = [s.body_parent_f.numpy() for s in states]
    if obs is not None:
        out += [obs.body_parent_f.numpy(), obs.contact_f.numpy()]
    return out


@pytest.mark.parametrize("with_observables", [False, True], ids=["no_observables", "observables"])
@pytest.mark.parametrize(
    ("fixed", "kinematic", "ground", "articulated"),
    [
        (True, None, False, False),  # a world-root link on a FIXED joint, no articulation
        (False, "link", True, False),  # a kinematic link without a joint, resting on the ground
        (True, "link", True, False),  # both
        (True, "body", True, False),  # beside a kinematic body (FREE joint, its own articulation)
        (True, "body", False, True),  # both articulated, no contacts
    ],
    ids=["fixed_link", "kinematic_link_ground", "fixed_and_kinematic_link", "fixed_and_kinematic_body",
         "both_articulated"],
)
def test_legacy_body_parent_f_is_written_as_the_reference(fixed, kinematic, ground, articulated, with_observables):
    """After each step ``state_out.body_parent_f`` equals the reference's (zeros outside every articulation, the
    carrying load m g = 88.29 N of a 9 kg kinematic body); no sentinel is left in it or in the observables."""
    model = _build(fixed, kinematic, ground, articulated)
    ours = _legacy_after_steps(SolverSteel, model, with_observables)
    ref = _legacy_after_steps(newton.solvers.SolverSteel, model, with_observables)
    for a, r in zip(ours, ref, strict=True):
        assert not np.any(a == SENTINEL)
        np.testing.assert_allclose(a, r, atol=1e-3)  # [N, N·m] float32 sums of ~90 N


def test_legacy_body_parent_f_with_sleeping_keeps_the_last_awake_value_in_either_state():
    """With sleeping, an asleep body's ``body_parent_f`` is its last awake value in whichever state is the output,
    also in steps where every island is asleep and the solve is skipped: sentinels written into both states
    after the box fell asleep are replaced, as on the reference."""
    b = newton.ModelBuilder()
    b.add_ground_plane()
    box = b.add_body(xform=wp.transform((0.0, 0.0, 0.1), wp.quat_identity()), mass=1.0)
    b.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1)
    _request_legacy_parent_f(b)
    model = b.finalize(device="cpu")
    results = []
    for cls in (SolverSteel, newton.solvers.SolverSteel):
        solver = cls(model, enable_sleeping=True)
        states = [model.state(), model.state()]
        pipe = newton.CollisionPipeline(model)
        contacts = pipe.contacts()
        obs = solver.observables(["body_awake"], contacts=contacts)
        for i in range(62):  # asleep after 0.5 s quiet at 1/60 s steps
            if i == 60:
                assert not obs.body_awake.numpy()[0]
                for s in states:
                    s.body_parent_f.fill_(wp.spatial_vector(*[SENTINEL] * 6))
            pipe.collide(states[0], contacts)
            solver.step(states[0], states[1], None, contacts, 1.0 / 60.0, observables=obs)
            states.reverse()
        results.append([s.body_parent_f.numpy() for s in states])
    for a, r in zip(*results, strict=True):
        assert not np.any(a == SENTINEL)
        np.testing.assert_allclose(a, r, atol=1e-3)  # [N, N·m] a FREE root's residual, about 0
