"""Device-side collision refresh over a fixed number of solver substeps.

Contract
--------
:class:`CollisionSubstepScheduler` owns *when* rigid collision detection reruns inside a frame of
``substeps`` solver substeps; it does not own the solver, the contacts buffer, or the collision
call itself (both arrive as user callbacks). Per frame it guarantees:

* ``substep_callback(state_in, state_out, dt)`` runs exactly ``substeps`` times, ping-ponging
  ``states[0] -> states[1] -> states[0] ...``; ``substeps`` is even, so the frame ends in ``states[0]``.
* ``collision_callback(state, collision_dt)`` runs before substep 0 and whenever the travel budget
  ``B = collision_pipeline.speculative_contact_gap_max`` [m] would be exhausted or the previous
  horizon expires (rules below). ``collision_dt`` is the planned horizon [s], capped at the frame end.
* **The reserve.** While ``collision_callback`` runs, the pipeline detects every rigid pair whose
  surfaces (outside their physical margins) are within at least ``B`` of each other, whatever their
  velocities; authored gaps larger than that still win. Outside the callback the pipeline keeps its
  ordinary velocity-adapted behaviour. Contacts detected with the reserve stay valid candidates
  until the pair has closed ``B`` of relative distance, so *velocity changes alone never force a
  refresh* (Newton 1.8.0's scheduler, which has no reserve, refreshes on any change).
* All decisions live in device scalars and branch through :func:`warp.capture_if`, so ``step()``
  runs eagerly (CPU or CUDA) and inside an outer graph capture with the same decisions.

It does not do continuous collision detection: motion is observed after each completed substep,
so an impulse within a substep can still carry a shape through thin geometry.

The schedule (all lengths in metres, ``h = frame_dt / substeps`` [s])
---------------------------------------------------------------------
Before substep ``i`` (``0 <= i < substeps``) and once more after the last one:

1. Speed bound ``v`` [m/s]: the maximum over collidable body shapes of
   ``|v_origin| + |omega| r`` with ``v_origin = v_com + omega x (origin - com)`` and ``r`` the larger
   of the shape's local collision-AABB corner distance and its collision radius; this bounds the
   speed of every point of the shape (``|v_p| <= |v_o| + |omega x (p - o)|``).
2. Pairwise travel per substep ``t = 2 v h`` (two shapes closing head-on).
3. Correction: if ``v`` exceeds the previous evaluation's ``v_prev``, the substep just completed
   was under-estimated; bound it by its larger endpoint speed: ``T += 2 (v - v_prev) h``. The rise
   ``r = max(v - v_prev, 0)`` is kept (substep 0 keeps the previous frame's last one: a change
   between frames is the user's, not an observed rise).
4. Planned travel of the coming substep ``t' = 2 (v + r) h``: a substep's travel follows its *end*
   speed, so the last observed rise is carried one substep ahead (``t' = t`` at constant or falling
   speed). Refresh ("due") when ``i == 0``, or ``i >= deadline``, or ``T + t' > B``. On refresh the
   horizon ``k`` is the largest whole number of substeps with ``k t' <= B`` (at least 1, at most
   ``K = interval cap``), ``deadline = i + k``, ``T = 0``, and the callback gets
   ``min(k, substeps - i) h``. A deadline is only set on refresh: slowing down never extends it.
5. ``T += t`` (observed, not planned); ``interval_overflow`` is set when ``t > B`` or ``T > B``
   (substeps too coarse for the budget, or a rise beyond the one carried ahead), and cleared at
   substep 0 of each frame.

Hand check (the issue's example): ``substeps = 10``, ``B = 0.03``, ``v = 2``, ``h = 1/600``:
``t = 0.00667``, ``k = floor(4.5) = 4`` -> refreshes at substeps 0, 4, 8 (horizons 4, 4, 2).

How the reserve is built (on public API only)
---------------------------------------------
``CollisionPipeline.collide`` admits a pair when its separation is within ``shape_gap[a] +
shape_gap[b]`` (:attr:`newton.Model.shape_gap`, public and writable), whatever the velocities, and
enlarges AABBs by ``shape_margin + shape_gap``. So around the callback, on the device and inside the
same (possibly captured) branch, the scheduler stashes ``model.shape_gap``, raises every entry to
``max(shape_gap, B / 2)`` (any pair then sums to at least ``B``; authored larger gaps are kept;
``shape_margin`` is untouched), runs the callback, and copies the stash back before the next
substep, so the solver and every later ``collide`` see the authored gaps bit for bit.
Rejected alternatives: forcing ``collide(dt=0)`` (needs wrapping the user's call, and loses the
velocity-derived extension for fast pairs); refreshing on any velocity change (Newton 1.8.0's rule:
defeats the optimization for anything under gravity); a per-pair reserve inside the pipeline (not
public in newton 1.8.0).

Branch layout
-------------
``collision_callback`` takes ``collision_dt`` as a host float, so each possible horizon needs its
own recorded call. After the planning kernel writes ``horizon_at_least[j] = (horizon >= j)``, a
binary tree of :func:`warp.capture_if` nodes on those flags selects the call: ``flag[1]`` is "due",
then ``O(log K)`` nested tests pick the horizon. Eagerly that is one flag read when nothing is due
(the common case) and ``1 + ceil(log2 K)`` when a refresh happens; under capture the recorded
graph holds ``min(K, substeps - i)`` callback bodies at substep ``i``, as in any design where the
horizon is a host argument.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Sequence

import warp as wp

import newton

from .launches import launch

__all__ = ["CollisionSubstepScheduler"]

_COLLIDE_SHAPES = wp.constant(int(newton.ShapeFlags.COLLIDE_SHAPES))

# Ratios collision_dt_max / substep_dt within this relative distance of an integer snap to it, so a
# cap of 0.3 s over 0.1 s substeps (0.3 / 0.1 = 2.9999999999999996 in binary) means 3 substeps.
_INTERVAL_SNAP_RTOL = 1.0e-12


# --------------------------------------------------------------------------------------------------
# Motion bound
# --------------------------------------------------------------------------------------------------


@wp.struct
class _ShapeReachModel:
    """The model arrays the motion bound reads, bound once at construction: the launch then passes
    one argument instead of seven every substep, and later edits of the arrays' contents (a rescaled
    shape's radius, say) are still seen."""

    shape_body: wp.array[int]  # owning body, -1 for static shapes
    shape_flags: wp.array[wp.int32]  # ShapeFlags bits
    shape_transform: wp.array[wp.transform]  # shape frame in its body frame
    shape_reach_lower: wp.array[wp.vec3]  # local collision-AABB lower corner [m]
    shape_reach_upper: wp.array[wp.vec3]  # local collision-AABB upper corner [m]
    shape_radius: wp.array[float]  # bounding radius about the shape origin [m]
    body_com: wp.array[wp.vec3]  # COM in the body frame [m]


def _shape_reach_model(model: newton.Model) -> _ShapeReachModel:
    reach = _ShapeReachModel()
    reach.shape_body = model.shape_body
    reach.shape_flags = model.shape_flags
    reach.shape_transform = model.shape_transform
    reach.shape_reach_lower = model.shape_collision_aabb_lower
    reach.shape_reach_upper = model.shape_collision_aabb_upper
    reach.shape_radius = model.shape_collision_radius
    reach.body_com = model.body_com
    return reach


@wp.kernel(enable_backward=False)
def _accumulate_shape_speed_bound(
    # Model:
    shapes: _ShapeReachModel,
    # Data in:
    body_q_in: wp.array[wp.transform],
    body_qd_in: wp.array[wp.spatial_vector],
    # Data out:
    speed_max_out: wp.array[float],
):
    shape = wp.tid()  # one thread per shape
    body = shapes.shape_body[shape]
    # Static shapes do not move; visual-only shapes never make contacts, so their speed is irrelevant.
    if body < 0 or (shapes.shape_flags[shape] & _COLLIDE_SHAPES) == 0:
        return
    X_wb = body_q_in[body]
    origin = wp.transform_point(X_wb, wp.transform_get_translation(shapes.shape_transform[shape]))
    com = wp.transform_point(X_wb, shapes.body_com[body])
    twist = body_qd_in[body]  # (linear COM velocity [m/s], angular velocity [rad/s]), world frame
    omega = wp.spatial_bottom(twist)
    origin_velocity = wp.spatial_top(twist) + wp.cross(omega, origin - com)
    # Reach of any surface point from the shape origin [m]: the farther local-AABB corner, or the
    # bounding radius where that is larger (planes, meshes with loose AABBs).
    corner = wp.max(wp.abs(shapes.shape_reach_lower[shape]), wp.abs(shapes.shape_reach_upper[shape]))
    reach = wp.max(wp.length(corner), shapes.shape_radius[shape])
    # atomic_max on floats is order-independent, so the result is deterministic.
    wp.atomic_max(speed_max_out, 0, wp.length(origin_velocity) + wp.length(omega) * reach)


def _launch_speed_bound(
    shapes: _ShapeReachModel, shape_count: int, state: newton.State, speed_max: wp.array, device
) -> None:
    """Fold the point-speed bound [m/s] of every collidable body shape of ``state`` into
    ``speed_max[0]`` (which the planner resets to 0 after reading it)."""
    if shape_count == 0:
        return
    launch(
        _accumulate_shape_speed_bound,
        dim=shape_count,
        inputs=[shapes, state.body_q, state.body_qd],
        outputs=[speed_max],
        device=device,
    )


# --------------------------------------------------------------------------------------------------
# Planning (one thread)
# --------------------------------------------------------------------------------------------------


@wp.kernel(enable_backward=False)
def _plan_collision_refresh(
    # Schedule constants:
    substep: int,
    substep_count: int,
    interval_max: int,
    travel_budget: float,
    substep_dt: float,
    # Data in/out (device scalars that persist across substeps and frames):
    speed_max_io: wp.array[float],
    speed_prev_io: wp.array[float],
    speed_rise_io: wp.array[float],
    travel_io: wp.array[float],
    deadline_io: wp.array[int],
    # Data out:
    horizon_at_least_out: wp.array[wp.int32],
    interval_overflow_out: wp.array[wp.int32],
):
    speed = speed_max_io[0]
    speed_max_io[0] = 0.0  # ready for the next evaluation's atomic_max
    speed_prev = speed_prev_io[0]
    speed_prev_io[0] = speed
    travel = travel_io[0]
    rise = speed_rise_io[0]

    if substep == 0:
        # A new frame: substep 0 always refreshes, so a speed change between frames (a reset by the
        # user, say) needs no correction, is no observed rise, and must not count as overflow of the
        # previous frame. The rise observed over the previous frame's last substep still holds.
        interval_overflow_out[0] = 0
    else:
        rise = wp.max(speed - speed_prev, 0.0)
        speed_rise_io[0] = rise
        if rise > 0.0:
            # The completed substep was estimated at 2 v_prev h; bound it by its larger endpoint speed.
            travel += 2.0 * rise * substep_dt
            if travel > travel_budget:
                interval_overflow_out[0] = 1

    if substep < substep_count:
        step_travel = 2.0 * speed * substep_dt
        # A substep's travel follows its end speed, which is only observed afterwards. Planning with
        # the start speed alone lets a steady rise (gravity, a tumbling body's |omega|) carry an
        # interval planned to the edge of the budget over it; the last observed rise is carried one
        # substep ahead instead. It is zero for constant or falling speeds, so those plan as before.
        planned_travel = 2.0 * (speed + rise) * substep_dt
        horizon = int(0)
        if substep == 0 or substep >= deadline_io[0] or travel + planned_travel > travel_budget:
            # Largest whole interval whose travel fits the budget; K when nothing moves.
            interval = interval_max
            while interval > 1 and float(interval) * planned_travel > travel_budget:
                interval -= 1
            deadline_io[0] = substep + interval
            horizon = wp.min(interval, substep_count - substep)
            travel = 0.0
        # The flag counts observed travel only; a prediction that does not come true is no overflow.
        travel += step_travel
        if travel > travel_budget:
            interval_overflow_out[0] = 1
        for j in range(horizon_at_least_out.shape[0]):
            horizon_at_least_out[j] = wp.where(horizon >= j, 1, 0)

    travel_io[0] = travel


# --------------------------------------------------------------------------------------------------
# The reserve
# --------------------------------------------------------------------------------------------------


@wp.kernel(enable_backward=False)
def _raise_shape_gap_to_reserve(
    gap_reserve_half: float,
    # Data in/out:
    shape_gap_io: wp.array[float],
):
    shape = wp.tid()
    # Each shape carries half the reserve so any pair sums to at least the budget; larger authored
    # gaps are kept as they are.
    shape_gap_io[shape] = wp.max(shape_gap_io[shape], gap_reserve_half)


def _launch_reserve(model: newton.Model, gap_reserve: float, shape_gap_authored: wp.array) -> None:
    """Stash ``model.shape_gap`` into ``shape_gap_authored`` and raise it to ``gap_reserve / 2`` [m]."""
    wp.copy(shape_gap_authored, model.shape_gap)
    launch(
        _raise_shape_gap_to_reserve,
        dim=model.shape_count,
        inputs=[0.5 * gap_reserve],
        outputs=[model.shape_gap],
        device=model.device,
    )


# --------------------------------------------------------------------------------------------------
# Validation (host, before anything is allocated)
# --------------------------------------------------------------------------------------------------


def _real(name: str, value) -> float:
    """``value`` as a float, or ``TypeError`` naming ``name`` when it is not a real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return float(value)


def _validate_states(model: newton.Model, states) -> tuple[newton.State, newton.State]:
    if isinstance(states, (str, bytes)) or not isinstance(states, Sequence):
        raise ValueError(f"states must be a sequence of two newton.State buffers, got {states!r}")
    if len(states) != 2:
        raise ValueError(f"states must contain exactly two entries, got {len(states)}")
    if states[0] is states[1]:
        raise ValueError("states must be two distinct ping-pong buffers, got the same State twice")
    for i, state in enumerate(states):
        for attr in ("body_q", "body_qd"):
            array = getattr(state, attr, None)
            if not isinstance(array, wp.array):
                raise ValueError(f"states[{i}] must be a rigid-body State with a {attr} array, got {attr}={array!r}")
            if array.device != model.device:
                raise ValueError(f"states[{i}].{attr} is on {array.device}, but the model is on {model.device}")
            if array.shape[0] < model.body_count:
                raise ValueError(
                    f"states[{i}].{attr} has {array.shape[0]} entries, fewer than model.body_count={model.body_count}"
                )
    # Distinct State objects sharing arrays would make the substep read and write the same buffer.
    for attr in ("body_q", "body_qd"):
        if getattr(states[0], attr).ptr == getattr(states[1], attr).ptr:
            raise ValueError(f"states[0].{attr} and states[1].{attr} are the same array; ping-pong needs two")
    return states[0], states[1]


def _interval_cap(collision_dt_max, substep_dt: float, substeps: int) -> int:
    """Largest refresh interval [substeps] allowed by ``collision_dt_max`` [s], capped at one frame."""
    if collision_dt_max is None:
        return substeps
    value = _real("collision_dt_max", collision_dt_max)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"collision_dt_max must be a positive finite number or None, got {collision_dt_max!r}")
    ratio = value / substep_dt
    nearest = round(ratio)
    interval = nearest if abs(ratio - nearest) <= _INTERVAL_SNAP_RTOL * max(1.0, ratio) else math.floor(ratio)
    if interval < 1:
        raise ValueError(
            f"collision_dt_max must be at least one substep (frame_dt / substeps = {substep_dt!r} s), "
            f"got {collision_dt_max!r}"
        )
    return min(interval, substeps)


# --------------------------------------------------------------------------------------------------
# The scheduler
# --------------------------------------------------------------------------------------------------


class CollisionSubstepScheduler:
    """Schedule collision refreshes over a fixed number of solver substeps, with a speculative reserve.

    Every frame runs ``substep_callback`` exactly ``substeps`` times and ``collision_callback`` before
    substep 0 and thereafter only when the accumulated pairwise relative-travel estimate would
    exhaust the budget ``collision_pipeline.speculative_contact_gap_max`` [m] or the previous
    horizon expires. During ``collision_callback`` the pipeline detects every rigid pair within at
    least that budget of each other, independently of velocity (authored gaps and physical margins
    preserved), so velocity changes alone never force a refresh; only the travel budget, observed
    speed increases and the horizon do. The reserve can increase contact counts. It is applied
    through ``model.shape_gap`` for the duration of the callback (restored before the next
    substep), so any ``collide`` on this model inside the callback sees it; a solver must not be
    stepped inside the callback. ``model.shape_gap`` edits made *inside* the callback are undone
    when it returns (the gaps stashed before it are copied back); edit gaps between frames. See the module docstring for the exact rules.

    Selection stays on the device through :func:`warp.capture_if`: :meth:`step` works eagerly and
    inside an outer graph capture (CUDA conditional nodes need CUDA 12.4+), recording the whole fixed
    schedule inline. Callbacks must be capture-safe and preallocate their storage before the first
    call. Not continuous collision detection: abrupt motion within one substep can still tunnel
    through thin geometry; use enough substeps for the expected accelerations and impulses.

    Args:
        collision_pipeline: Speculative :class:`newton.CollisionPipeline` whose model and
            ``speculative_contact_gap_max`` [m] (the travel budget and the reserve) drive the schedule.
        states: Two distinct :class:`newton.State` buffers used as input/output ping-pong.
        collision_callback: ``callback(state, collision_dt)``, which should run
            ``collision_pipeline.collide(state, contacts, dt=collision_dt)``; ``collision_dt`` [s] is
            the planned horizon, capped at the frame end (faster observed travel may end it early).
        substep_callback: ``callback(state_in, state_out, dt)`` with ``dt = frame_dt / substeps`` [s].
        frame_dt: Frame duration [s], positive and finite.
        substeps: Solver substeps per frame, a positive even ``int``.
        collision_dt_max: Longest time between refreshes [s], rounded down to whole substeps and
            capped at one frame; need not divide the frame. ``None`` (default): limited only by the
            travel estimate (and the frame).

    Raises:
        TypeError: ``collision_pipeline`` is not a ``CollisionPipeline``, a callback is not callable,
            ``substeps`` is not an integer (or is a bool), or a numeric argument is not a real number.
        ValueError: speculative contacts are disabled or their gap is 0, the model has particles,
            ``states`` are not two distinct compatible rigid-body buffers, ``substeps`` is not
            positive and even, or a numeric value is out of range.

    Attributes:
        interval_overflow: Device ``int32`` scalar (shape ``(1,)``), 1 when a substep's or the
            accumulated relative travel exceeded the budget during the last frame, else 0.
    """

    def __init__(
        self,
        collision_pipeline: newton.CollisionPipeline,
        states: Sequence[newton.State],
        *,
        collision_callback: Callable[[newton.State, float], None],
        substep_callback: Callable[[newton.State, newton.State, float], None],
        frame_dt: float,
        substeps: int,
        collision_dt_max: float | None = None,
    ):
        """Validate every argument (see the class docstring: units, defaults), then allocate the schedule."""
        # --- validation: everything is checked before anything is allocated or changed ---
        if not isinstance(collision_pipeline, newton.CollisionPipeline):
            raise TypeError(
                f"collision_pipeline must be a newton.CollisionPipeline, got {type(collision_pipeline).__name__}"
            )
        gap_max = collision_pipeline.speculative_contact_gap_max
        if gap_max is None:
            raise ValueError(
                "collision_pipeline must have speculative contacts enabled "
                "(speculative_contact_gap_max=None disables them)"
            )
        model = collision_pipeline.model
        if model.particle_count > 0:
            raise ValueError(
                f"collision_pipeline.model has {model.particle_count} particles; the scheduler handles rigid contacts only"
            )
        state_a, state_b = _validate_states(model, states)
        for name, callback in (("collision_callback", collision_callback), ("substep_callback", substep_callback)):
            if not callable(callback):
                raise TypeError(f"{name} must be callable, got {callback!r}")
        frame_dt_value = _real("frame_dt", frame_dt)
        if not math.isfinite(frame_dt_value) or frame_dt_value <= 0.0:
            raise ValueError(f"frame_dt must be a positive finite number, got {frame_dt!r}")
        if isinstance(substeps, bool):
            raise TypeError(f"substeps must be an integer, got the bool {substeps!r}")
        try:
            substep_count = operator.index(substeps)
        except TypeError:
            raise TypeError(f"substeps must be an integer, got {substeps!r}") from None
        if substep_count <= 0 or substep_count % 2 != 0:
            raise ValueError(f"substeps must be a positive even integer, got {substeps!r}")
        gap_max = float(gap_max)
        if not gap_max > 0.0:
            raise ValueError(
                "collision_pipeline.speculative_contact_gap_max must be positive (it is the travel budget "
                f"and the reserve), got {gap_max!r}"
            )
        substep_dt = frame_dt_value / substep_count
        interval_max = _interval_cap(collision_dt_max, substep_dt, substep_count)

        # --- configuration ---
        self._pipeline = collision_pipeline
        self._model = model
        self._states = (state_a, state_b)
        self._collision_callback = collision_callback
        self._substep_callback = substep_callback
        self._frame_dt = frame_dt_value
        self._substeps = substep_count
        self._substep_dt = substep_dt
        self._interval_max = interval_max
        self._gap_reserve = gap_max

        # --- device scalars (all storage allocated here, so step() is capture-safe) ---
        device = model.device
        self.interval_overflow = wp.zeros(1, dtype=wp.int32, device=device)
        self._speed_max = wp.zeros(1, dtype=float, device=device)  # [m/s], this evaluation
        self._speed_prev = wp.zeros(1, dtype=float, device=device)  # [m/s], previous evaluation
        self._speed_rise = wp.zeros(1, dtype=float, device=device)  # [m/s], rise over the last substep
        self._travel = wp.zeros(1, dtype=float, device=device)  # [m], since the last refresh
        self._deadline = wp.zeros(1, dtype=int, device=device)  # [substep index]
        # horizon_at_least[j] = 1 when this substep refreshes with a horizon of at least j substeps;
        # entry 1 is "due". One-element views are the capture_if conditions.
        self._horizon_at_least = wp.zeros(interval_max + 1, dtype=wp.int32, device=device)
        self._horizon_flags = [self._horizon_at_least[j : j + 1] for j in range(interval_max + 1)]
        self._shape_gap_authored = wp.zeros(model.shape_count, dtype=float, device=device)  # [m]
        self._shape_reach = _shape_reach_model(model)
        # One prebuilt branch per substep, so step() does no Python tree building per frame.
        self._refresh_branches = [self._build_refresh_branch(i) for i in range(substep_count)]

    # ---- read-only configuration ----

    @property
    def substeps(self) -> int:
        """Solver substeps per frame."""
        return self._substeps

    @property
    def substep_dt(self) -> float:
        """Substep duration ``frame_dt / substeps`` [s]."""
        return self._substep_dt

    @property
    def collision_interval_max(self) -> int:
        """Longest refresh interval [substeps] after rounding ``collision_dt_max`` and the frame cap."""
        return self._interval_max

    # ---- the frame ----

    def step(self) -> None:
        """Run (or record, under an active graph capture) one frame of ``substeps`` substeps."""
        for i in range(self._substeps):
            state_in = self._states[i % 2]
            state_out = self._states[1 - i % 2]
            self._plan(state_in, i)
            wp.capture_if(self._horizon_flags[1], on_true=self._refresh_branches[i])
            self._substep_callback(state_in, state_out, self._substep_dt)
        # After the last substep: observe the final speed for overflow reporting only.
        self._plan(self._states[0], self._substeps)

    def _plan(self, state: newton.State, substep: int) -> None:
        """Evaluate the motion bound of ``state`` and decide substep ``substep`` on the device."""
        _launch_speed_bound(self._shape_reach, self._model.shape_count, state, self._speed_max, self._model.device)
        launch(
            _plan_collision_refresh,
            dim=1,
            inputs=[
                substep,
                self._substeps,
                self._interval_max,
                self._gap_reserve,
                self._substep_dt,
                self._speed_max,
                self._speed_prev,
                self._speed_rise,
                self._travel,
                self._deadline,
            ],
            outputs=[self._horizon_at_least, self.interval_overflow],
            device=self._model.device,
        )

    def _build_refresh_branch(self, substep: int) -> Callable[[], None]:
        """The body run when substep ``substep`` refreshes: reserve, horizon selection, restore."""
        state = self._states[substep % 2]
        horizons = min(self._interval_max, self._substeps - substep)  # horizon 1..horizons [substeps]

        def call(horizon: int) -> Callable[[], None]:
            return lambda: self._collision_callback(state, horizon * self._substep_dt)

        def select(lo: int, hi: int) -> Callable[[], None]:
            # Binary search on "horizon >= mid": O(log K) flag reads eagerly, K bodies when recorded.
            # Each level builds its two halves only when it runs: prebuilding the whole tree for
            # every substep made construction O(substeps * K), quadratic when K = substeps.
            if lo == hi:
                return call(lo)
            mid = (lo + hi + 1) // 2
            return lambda: wp.capture_if(
                self._horizon_flags[mid], on_true=select(mid, hi), on_false=select(lo, mid - 1)
            )

        choose = select(1, horizons)
        model = self._model

        def refresh() -> None:
            if model.shape_count > 0:
                _launch_reserve(model, self._gap_reserve, self._shape_gap_authored)
            try:
                choose()
            finally:
                # The substep solver (and any collide() outside the callback) sees the authored gaps.
                if model.shape_count > 0:
                    wp.copy(model.shape_gap, self._shape_gap_authored)

        return refresh
