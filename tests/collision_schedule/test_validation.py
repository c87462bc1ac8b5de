"""Every construction error of the seed, raised before anything is allocated, naming the argument."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton
import steel

from .scenes import BUDGET, FRAME_DT, sphere_model


@pytest.fixture(scope="module")
def scene():
    """A valid pipeline and two states, plus a model with particles and one without bodies."""
    model = sphere_model()
    pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=BUDGET)
    return model, pipeline, (model.state(), model.state())


def build(scene, *, pipeline=None, states=None, **overrides):
    model, default_pipeline, default_states = scene
    kwargs = dict(
        collision_callback=lambda state, dt: None,
        substep_callback=lambda state_in, state_out, dt: None,
        frame_dt=FRAME_DT,
        substeps=10,
    )
    kwargs.update(overrides)
    return steel.CollisionSubstepScheduler(
        default_pipeline if pipeline is None else pipeline, default_states if states is None else states, **kwargs
    )


def test_valid_arguments_construct(scene):
    """The baseline used below constructs; numpy integers and lists are accepted."""
    assert build(scene, substeps=np.int64(10), states=list(scene[2])).substeps == 10


def test_pipeline_type(scene):
    """A non-CollisionPipeline is a TypeError naming collision_pipeline."""
    with pytest.raises(TypeError, match="collision_pipeline"):
        build(scene, pipeline=object())


@pytest.mark.parametrize("gap_max, match", [(None, "speculative contacts enabled"), (0.0, "must be positive")])
def test_speculative_contacts_required(scene, gap_max, match):
    """Disabled speculative contacts, or a zero gap (no budget, no reserve), are ValueErrors."""
    pipeline = newton.CollisionPipeline(scene[0], speculative_contact_gap_max=gap_max)
    with pytest.raises(ValueError, match=match):
        build(scene, pipeline=pipeline)


def test_particles_rejected():
    """A model with particles is a ValueError (rigid contacts only)."""
    builder = newton.ModelBuilder()
    body = builder.add_body()
    builder.add_shape_sphere(body, radius=0.1)
    builder.add_particle((0.0, 0.0, 1.0), (0.0, 0.0, 0.0), 1.0)
    model = builder.finalize(device="cpu")
    pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=BUDGET)
    with pytest.raises(ValueError, match="particles"):
        steel.CollisionSubstepScheduler(
            pipeline,
            (model.state(), model.state()),
            collision_callback=lambda s, d: None,
            substep_callback=lambda a, b, d: None,
            frame_dt=FRAME_DT,
            substeps=10,
        )


def test_states_rejected(scene):
    """Wrong count, the same State twice, aliased arrays, missing or short arrays: ValueErrors naming states."""
    model, _, (s0, s1) = scene
    with pytest.raises(ValueError, match="states must be a sequence"):
        build(scene, states=s0)
    with pytest.raises(ValueError, match="exactly two entries, got 3"):
        build(scene, states=(s0, s1, s0))
    with pytest.raises(ValueError, match="distinct"):
        build(scene, states=(s0, s0))
    aliased = model.state()
    aliased.body_q = s0.body_q
    with pytest.raises(ValueError, match="body_q are the same array"):
        build(scene, states=(s0, aliased))
    missing = model.state()
    missing.body_qd = None
    with pytest.raises(ValueError, match=r"states\[1\].*body_qd"):
        build(scene, states=(s0, missing))
    short = model.state()
    short.body_q = wp.zeros(0, dtype=wp.transform, device="cpu")
    with pytest.raises(ValueError, match=r"states\[1\]\.body_q has 0 entries"):
        build(scene, states=(s0, short))


@pytest.mark.parametrize("name", ["collision_callback", "substep_callback"])
def test_callbacks_must_be_callable(scene, name):
    """A non-callable callback is a TypeError naming it."""
    with pytest.raises(TypeError, match=name):
        build(scene, **{name: 3})


@pytest.mark.parametrize("value", [0.0, -FRAME_DT, float("nan"), float("inf")])
def test_frame_dt_range(scene, value):
    """frame_dt must be positive and finite: ValueError naming it and the value."""
    with pytest.raises(ValueError, match=f"frame_dt must be a positive finite number, got {value!r}"):
        build(scene, frame_dt=value)


@pytest.mark.parametrize("value", ["0.01", True, None])
def test_frame_dt_type(scene, value):
    """A non-real frame_dt is a TypeError naming it."""
    with pytest.raises(TypeError, match="frame_dt must be a real number"):
        build(scene, frame_dt=value)


@pytest.mark.parametrize("value", [True, 10.0, "10", None])
def test_substeps_type(scene, value):
    """Bools, floats and other non-integers are TypeErrors naming substeps."""
    with pytest.raises(TypeError, match="substeps must be an integer"):
        build(scene, substeps=value)


@pytest.mark.parametrize("value", [0, -2, 3])
def test_substeps_range(scene, value):
    """substeps must be positive and even (so every frame ends in states[0])."""
    with pytest.raises(ValueError, match=f"substeps must be a positive even integer, got {value}"):
        build(scene, substeps=value)


@pytest.mark.parametrize(
    "value, match",
    [
        (0.0, "positive finite number or None"),
        (-1.0, "positive finite number or None"),
        (float("inf"), "positive finite number or None"),
        (FRAME_DT / 20, "at least one substep"),
    ],
)
def test_collision_dt_max_range(scene, value, match):
    """collision_dt_max must be finite, positive and at least one substep."""
    with pytest.raises(ValueError, match=f"collision_dt_max must be .*{match}"):
        build(scene, collision_dt_max=value)


def test_collision_dt_max_type(scene):
    """A non-real collision_dt_max is a TypeError naming it."""
    with pytest.raises(TypeError, match="collision_dt_max must be a real number"):
        build(scene, collision_dt_max="1")


def test_failed_construction_changes_nothing(scene):
    """A rejected configuration leaves the model's gaps as authored (validation precedes any change)."""
    model = scene[0]
    authored = model.shape_gap.numpy().copy()
    with pytest.raises(ValueError):
        build(scene, substeps=3)
    np.testing.assert_array_equal(model.shape_gap.numpy(), authored)


def test_construction_is_linear_in_substeps(scene):
    """1,000 and 2,000 substeps with collision_dt_max=None construct fast and in memory linear in substeps.

    The horizon selection for a substep may span the whole frame (K = substeps); a selection tree
    prebuilt per substep made construction O(substeps²): 6 s and 323 MB at 1,000 substeps, 31 s and
    1.3 GB at 2,000. Memory is the deterministic check (the peak Python allocation per substep must
    not grow with substeps); the time bound is generous for a loaded CI core.
    """
    import time
    import tracemalloc

    per_substep = {}
    for substeps in (1000, 2000):
        tracemalloc.start()
        scheduler = build(scene, substeps=substeps)
        per_substep[substeps] = tracemalloc.get_traced_memory()[1] / substeps  # [bytes]
        tracemalloc.stop()
        assert scheduler.collision_interval_max == substeps
        del scheduler
    assert per_substep[2000] < 1.3 * per_substep[1000], per_substep  # quadratic growth doubles it
    start = time.perf_counter()
    build(scene, substeps=2000)
    assert time.perf_counter() - start < 3.0
