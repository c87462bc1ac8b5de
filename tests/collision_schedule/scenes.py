"""Scenes and drivers shared by the scheduler tests: small rigid models on the CPU, scripted
velocities, and the three collision loops compared (the scheduler, Newton's, collide every substep)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import warp as wp

import newton

FRAME_DT = 1.0 / 60.0  # [s]
BUDGET = 0.03  # speculative_contact_gap_max, the travel budget and the reserve [m]


def sphere_model(
    *, radius: float = 0.1, height: float = 1.0, gap: float = 0.0, collide: bool = True, ground: bool = False
) -> newton.Model:
    """One free sphere of ``radius`` [m] at ``height`` [m], authored ``gap`` [m], no gravity; optionally
    visual-only (``collide=False``) and over a ground plane (gap ``gap`` too)."""
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    cfg = newton.ModelBuilder.ShapeConfig(gap=gap, has_shape_collision=collide, has_particle_collision=False)
    body = builder.add_body(xform=wp.transform((0.0, 0.0, height), wp.quat_identity()))
    builder.add_shape_sphere(body, radius=radius, cfg=cfg)
    if ground:
        builder.add_ground_plane(cfg=newton.ModelBuilder.ShapeConfig(gap=gap))
    return builder.finalize(device="cpu")


@dataclass
class ScriptedRun:
    """Log of one scheduled run whose substep callback copies poses and sets scripted velocities."""

    calls: list[tuple[int, float]] = field(default_factory=list)  # (global substep, horizon [substeps])
    substep_inputs: list[int] = field(default_factory=list)  # index into states of each substep's input
    overflow: list[int] = field(default_factory=list)  # interval_overflow after each frame


def run_scripted(
    scheduler_cls,
    velocity,
    *,
    substeps: int = 10,
    frames: int = 2,
    collision_dt_max: float | None = None,
    model: newton.Model | None = None,
) -> ScriptedRun:
    """Drive ``scheduler_cls`` on a one-body model whose body twist before global substep ``n`` is
    ``velocity(n)`` (a 6-vector: linear [m/s], angular [rad/s]). Poses do not move, so the schedule
    depends on the scripted speeds alone."""
    model = model or sphere_model()
    pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=BUDGET)
    contacts = pipeline.contacts()
    states = (model.state(), model.state())
    substep_dt = FRAME_DT / substeps
    log = ScriptedRun()
    count = [0]

    def twist(n: int) -> np.ndarray:
        return np.asarray(velocity(n), dtype=np.float32).reshape(1, 6)

    def collide(state, collision_dt):
        log.calls.append((count[0], round(collision_dt / substep_dt, 9)))
        pipeline.collide(state, contacts, dt=collision_dt)

    def substep(state_in, state_out, dt):
        assert dt == substep_dt
        log.substep_inputs.append(0 if state_in is states[0] else 1)
        wp.copy(state_out.body_q, state_in.body_q)
        count[0] += 1
        state_out.body_qd.assign(twist(count[0]))

    states[0].body_qd.assign(twist(0))
    scheduler = scheduler_cls(
        pipeline,
        states,
        collision_callback=collide,
        substep_callback=substep,
        frame_dt=FRAME_DT,
        substeps=substeps,
        collision_dt_max=collision_dt_max,
    )
    for _ in range(frames):
        scheduler.step()
        log.overflow.append(int(scheduler.interval_overflow.numpy()[0]))
    return log


def stack_model(box_count: int = 3, half: float = 0.1) -> newton.Model:
    """``box_count`` boxes of half-extent ``half`` [m] resting on each other on a ground plane, under
    gravity, with zero authored gap (contacts come from the speculative machinery only)."""
    builder = newton.ModelBuilder()
    cfg = newton.ModelBuilder.ShapeConfig(gap=0.0, mu=0.8)
    for i in range(box_count):
        body = builder.add_body(xform=wp.transform((0.0, 0.0, half + 2.0 * half * i), wp.quat_identity()))
        builder.add_shape_box(body, hx=half, hy=half, hz=half, cfg=cfg)
    builder.add_ground_plane(cfg=cfg)
    return builder.finalize(device="cpu")


def run_loop(
    model: newton.Model,
    solver,
    *,
    mode: str,
    scheduler_cls=None,
    substeps: int = 8,
    frames: int = 20,
    overflow: list[int] | None = None,
):
    """Run ``frames`` frames of ``solver`` on ``model`` with one collision strategy and return
    ``(collision calls per frame, final body_q)``. ``mode`` is "every" (collide before every substep,
    velocity-adapted over one substep) or "scheduled" (``scheduler_cls``, whose ``interval_overflow``
    is appended to ``overflow`` after every frame when a list is given)."""
    pipeline = newton.CollisionPipeline(model, speculative_contact_gap_max=BUDGET)
    contacts = pipeline.contacts()
    states = (model.state(), model.state())
    control = model.control()
    substep_dt = FRAME_DT / substeps
    calls = [0]

    def collide(state, collision_dt):
        calls[0] += 1
        pipeline.collide(state, contacts, dt=collision_dt)

    def substep(state_in, state_out, dt):
        state_in.clear_forces()
        solver.step(state_in, state_out, control, contacts, dt)

    if mode == "every":
        for _ in range(frames):
            for i in range(substeps):
                state_in, state_out = states[i % 2], states[1 - i % 2]
                collide(state_in, substep_dt)
                substep(state_in, state_out, substep_dt)
    else:
        scheduler = scheduler_cls(
            pipeline, states, collision_callback=collide, substep_callback=substep, frame_dt=FRAME_DT, substeps=substeps
        )
        for _ in range(frames):
            scheduler.step()
            if overflow is not None:
                overflow.append(int(scheduler.interval_overflow.numpy()[0]))
    return calls[0] / frames, states[0].body_q.numpy()
