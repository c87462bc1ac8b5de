"""Contact rows: one normal row per rigid contact, two coupled point-friction rows and the angular rows.

Owns the translation of a ``newton.Contacts`` buffer into rows. For each contact between shape 0
and shape 1 (normal ``n`` from 0 to 1):

* Geometry, in Newton's contact convention: the support points ``X_b * point_b`` give the signed
  surface separation ``phi = n . (p1 - p0) - (margin0 + margin1)`` [m] (negative: penetration);
  the impulses act at the effective surface points ``X_b * (point_b + offset_b)``.
* Normal row ``J qd = n . (v1 - v0) >= target`` with impulse ``lambda_n >= 0`` pushing the bodies
  apart. The target (Catto, "Soft Step", GDC 2011; the speculative-contact idea of
  Catto, "Contacts", GDC 2013) is

      phi > 0 :  target = -contact_speculative_scale * phi / dt  (the gap may close, no further)
      phi <= 0:  target = -baumgarte * phi / dt                  (push out a fraction per step)

  bounded above by the smaller ``steel:rigid_body_max_depenetration_velocity`` of the pair's free
  bodies, and for every pair by ``DEPENETRATION_SPEED_MAX``: the push-out target grows as 1/dt, so
  without a dt-free ceiling a 1 mm overlap stepped at dt = 1e-9 s asked for 2e5 m/s and launched
  the body. The ceiling sits far above any push-out at the usual steps (at dt = 1/240 s only an
  overlap deeper than 0.2 m reaches it), so it changes nothing there. Restitution: when the closing speed at the start of the step ``u0 = n . (v1 - v0)``
  satisfies ``-u0 >= restitution_velocity_threshold`` and the contact touches or would reach the
  surface within the step (``phi + dt u0 <= 0``), the target becomes the rebound ``-e u0`` with
  ``e`` the mean of the two shapes' restitution clamped to [0, 1]. Slower contacts keep the
  plain law, so a resting contact never bounces. A penetrating row that does not rebound carries
  ``contact_regularization`` ``g``, which the sweep applies as an implicit contact spring (``sweep/pgs.py``).
* Two friction rows along tangents ``t1 = normalize(perp(n))``, ``t2 = n x t1`` with target 0,
  solved as a pair on the disk ``|lambda_t| <= mu lambda_n``; ``mu`` is the mean of the shapes'
  ``shape_material_mu`` times ``contact_friction_scale``. Contacts with ``mu = 0``, or with
  ``phi > contact_friction_gap_max``, get no friction rows.
* ``contact_compliance``: a contact with a positive ``rigid_contact_stiffness`` replaces the rigid
  target by the spring-damper law's and carries its softness (``contacts/compliance.py``); its
  ``rigid_contact_friction`` weight, when positive, scales ``mu``.
* A ``friction_mode`` other than "fixed_normal" gives the contact's tangent pair the kind
  ``ROW_COUPLED`` (every contact, or only free-body ones under "coulomb_newton";
  ``contacts/friction_modes.py``), which the sweep solves together with the normal row.
* A contact whose reservation did not fit is marked ``-2`` in ``contact_row`` (no row, lost);
  ``-1`` means it got no row on purpose.
* Angular rows of ``steel:condim`` 4/6 on free-body contacts (a spin row, then a rolling pair;
  ``contacts/angular.py``), the patch-torsion row of an articulated contact that hosts its region's
  (``contacts/torsion.py``; ``steel:min_torsional_patch_radius``) and adhesion's pull as the normal row's preload (``contacts/adhesion.py``).
* ``contact_shared_anchor`` / ``contact_friction_shared_anchor`` move a row's points to the witness
  midpoint (``contacts/shared_anchor.py``); a moving mesh surface (``rigid_contact_surface_velocity``)
  enters the friction targets and anchors (``contacts/surface_velocity.py``).
* Friction patches (``friction_anchor_beta > 0``, the default): only the anchors of a contact's
  region, at most two, carry a friction pair (``ROW_PATCH``), bounded in the sweep by their share of
  the region's normal impulse (``contacts/patches.py``); ``friction_anchor_beta = 0`` gives every
  contact its own point-friction pair (``ROW_FRICTION``). An anchor that matches last step's record
  takes the tangential separation of the record's anchor points under the current poses as its
  slip, asks its friction pair for ``-beta slip / dt``, and re-anchors at its current points carrying
  that slip (``contacts/history.py`` keeps the anchors of sticking contacts and releases sliding ones).
  The friction pair of a settled anchor (``SETTLED_AGE``) is regularized by ``ANCHOR_REGULARIZATION``.
* Sides (``contacts/sides.py``): a contact between two links of one articulation gets one side
  holding ``J0 + J1``, so the sweep runs ``J qd``, ``Y = H^-1 J^T`` and every impulse over the
  articulation's DOFs once, with the row's true ``J H^-1 J^T`` (two sides missed the cross term), and
  costs less than two sides (timings in benchmarks/README.md's performance log). The merge changes only a row's
  step size in the sweep, not what it converges to: 300 steps of chain x64, humanoid x16 and ant x64
  stay bitwise the same, and a 1 kg box on a prismatic joint resting on its 16 kg free parent
  keeps its trajectory bitwise over 480 steps, its rows' impulses within 1 ulp, with ``1 / (J Y)`` the
  reduced mass 0.941 kg where two sides gave 0.905
  (``tests/solvers/steel/test_self_contact_side.py::test_top_box_rests_on_the_base_with_its_weight``).

Cost. The normal row and the friction pair act at the contact's own points (unless an anchor is
shared), so their Jacobians are written in one walk up each body's joint path, each DOF's point velocity
formed once for the three rows, and a side whose path descends through the DOF numbering is written in one pass
with no clearing (``contacts/sides.write_contact_jacobians``); the history's search for the
next shape pair first looks where last step's record of the same slot landed (``guess_first_record``), else
gallops up from the last one, and a record's distance takes one square root, none beyond
``MATCH_DISTANCE`` (``contacts/history.py``); a region's members are tested once (``contacts/patches.py``); each
body's world centre of mass is formed once for the closing speed and the sweep key. None of this changes an
entry's arithmetic: 300 steps of tower x1/x16, humanoid x16, ant x64, chain x64 and cartpole x64
stay bitwise the same (timings, and where the rest of chain x64's rebuild goes, in benchmarks/README.md's
performance log). Tried and not kept: clearing a contact's three J ranges in one loop (no change), reusing
one region's farthest pair along its run (within noise).

Dormant contacts (``contacts/dormant.py``). A rigid speculative contact with only translational rows, no
warm-start impulse and no preload, whose closing speed provably stays above its target at the start of the
sweep (a bound from the step's start twists and the free dynamics' velocity change) and whose margin also
outlasts the drift its world's last sweep reached, gets its gate reference and no Jacobian: the rows'
ranges are set, their ``J`` is not written until the sweep needs it (bitwise the same ``J``
then). Without the drift condition humanoid x16's sweep materialized most of them and got slower
(figures in benchmarks/README.md's performance log).

A contact where neither body responds (static, kinematic, or outside every articulation) gets no
row. Bodies outside every articulation enter with their pose and zero velocity. The launch reads
options from ``sm.options``: ``solver.<option>`` goes through ``SolverSteel.__getattr__``, which
cost about half the host side of this launch.
"""

from __future__ import annotations

import warp as wp

from ..data import (UNBOUNDED, FAMILY_ARTICULATED, FAMILY_FREE_BODY, GAP_OPEN_FRACTION, ROW_CONTACT, ROW_COUPLED, ROW_FRICTION,
                    ROW_PATCH, ROW_TORSION, RowBuffers)
from .adhesion import adhesion_pull
from .angular import angular_coefficients, angular_row, angular_row_count
from ..rows.common import add_point_jacobian, contact_threads, reserve_rows, side_offset
from .compliance import compliant_law
from .sides import (clear_side_jacobians, contact_side, set_side_range, shares_side,
                            write_contact_jacobians)
from .dormant import (DORMANT_NORMAL, DORMANT_PAIR, DormantRecord, contact_spread, dormant_bound, dormant_record,
                      side_norm)
from .data import ContactInput, ContactModel, ContactParams, ContactSlots, current_contact_model
from .friction_modes import coupled_contact
from .history import CarriedRecord, HistoryArrays, find_record, guess_first_record, next_first_record
from .patches import region_roles
from .shared_anchor import row_points
from .surface_velocity import surface_tangent_velocity
from .torsion import torsion_radius
from .warmstart import carried_impulses, predecessor
from ....launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time

IMPACT_SPEED = wp.constant(0.1)  # [m/s] closing speed above which a contact counts as an impact
WARM_NORMAL = wp.constant(0.5)  # share of last step's normal force a settled contact starts from
SETTLED_AGE = wp.constant(8)  # steps a contact must persist before its normal force seeds the next step
# g of a settled anchor's friction pair, non-dimensional: the sweep's regularized step (sweep/tails.py) with the
# anchor's -beta slip / dt target makes the pair an implicit tangential spring-damper (Catto's soft step, GDC
# 2011 "Soft Constraints": g = 1 / (h w (2 zeta + h w)), beta = h w / (2 zeta + h w)); at beta 0.2 that is
# h w = sqrt(beta / g) = 2.58 (a frequency of 0.41 / dt) and zeta = 5.2, whatever dt, with a static deflection of
# g (F / m) dt^2 / beta under a tangential load F on an anchor of effective mass m.
# Why. The anchors of a stack close loops: a box of a pyramid is held at up to four anchors below and four
# above, which ask for slips the rigid bodies cannot all meet at once (float noise, a settling tilt). Rigid
# rows (g = 0) then fight without converging, the slip correction feeds what the sweep leaves into the
# velocities, and the stack rocks (rigid, the 30-level pyramid moved at 3-25 mm/s, dt 1/600). With the
# regularization the problem has one solution and the rows converge to it: a 12-level pyramid's fastest box moves
# at 0.295 mm/s over its second second (1.48 mm/s rigid) and its largest drift is 0.036 mm
# (tests/solvers/steel/test_pyramid_stands.py); the 30-level pyramid's figures, too slow for the suite, are the
# growth benchmark's stand check (benchmarks/README.md, "Friction anchors as soft rows").
# Rejected: g 0.1-0.3 (softer: the pyramid slid 0.29-0.69 mm in 5 s, and the deflection breaks a push at
# 0.95 mu: 0.29 mm at g 0.1, dt 1/240), the soft step at a fixed 30 Hz (its damper alone holds the load
# while the spring builds, so a box at 25 degrees with mu 0.5 saturated its disk and slid at 19 mm/s), and
# regularizing toward last step's impulse instead of zero (no deflection, but the 30-level pyramid rocked at
# 30-80 mm/s: the pull toward zero is what settles the loops). Fresh contacts stay rigid, so a landing or a
# new touch stops at once (regularized from the first step, the 10-level pyramid slid 0.045 mm).
ANCHOR_REGULARIZATION = wp.constant(0.03)
# [m] a sticking contact whose points moved less than this on each body since its anchors were placed keeps them
# (material points); farther (a roll) re-anchors it at its points. A roll within it reads as slip only the
# second-order drop of its material point, d^2 / 2R: 1e-9 m on a 5 cm ball.
ANCHOR_KEEP_DISTANCE = wp.constant(1.0e-5)
# [m/s] ceiling on the speed at which any penetrating contact is pushed out, whatever dt (Box2D
# bounds its push the same way with 3 m/s; a higher ceiling keeps deep overlaps at usual steps as before)
DEPENETRATION_SPEED_MAX = 10.0
_DEPENETRATION_SPEED_MAX = wp.constant(DEPENETRATION_SPEED_MAX)


@wp.func
def _tangent(n: wp.vec3):
    """A unit vector perpendicular to the unit vector ``n`` (branch picks the better-conditioned axis)."""
    if wp.abs(n[0]) < 0.57735:
        return wp.normalize(wp.cross(n, wp.vec3(1.0, 0.0, 0.0)))
    return wp.normalize(wp.cross(n, wp.vec3(0.0, 1.0, 0.0)))


@wp.func
def _body_pose(body: int, body_q: wp.array[wp.transform]):
    if body < 0:
        return wp.transform_identity()
    return body_q[body]


@wp.func
def _body_com(body: int, pose: wp.transform, body_com: wp.array[wp.vec3]):
    """World centre of mass of ``body`` at ``pose`` [m] (the origin for the world, ``body`` -1)."""
    if body < 0:
        return wp.vec3(0.0)
    return wp.transform_point(pose, body_com[body])


@wp.func
def _point_velocity(body: int, point: wp.vec3, com: wp.vec3, body_qd: wp.array[wp.spatial_vector],
                    body_articulation: wp.array[int]):
    """World velocity of a body point from Newton's COM twist (``com``: :func:`_body_com`); zero for static
    or unarticulated bodies."""
    if body < 0:
        return wp.vec3(0.0)
    if body_articulation[body] < 0:
        return wp.vec3(0.0)
    tw = body_qd[body]
    return wp.spatial_top(tw) + wp.cross(wp.spatial_bottom(tw), point - com)


@wp.kernel
def _contact_rows(
    dt: float,
    opt: ContactParams,
    cm: ContactModel,
    ci: ContactInput,
    hist: HistoryArrays,
    same_buffer: int,  # 1: ci is the buffer the history last recorded (contacts/warmstart.py)
    # Sleeping (sleeping/stages.py): asleep articulations; mode 0 off, 1 carry their history, 2 also skip their rows:
    articulation_asleep: wp.array[wp.int32],
    sleep_mode: int,
    # Data in:
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    articulation_origin: wp.array[wp.vec3],
    dof_S: wp.array[wp.spatial_vector],
    threads: int,
    # Dormant rows (contacts/dormant.py): on this step, their relative allowance, per-joint path sums, spreads:
    dormant_enabled: int,
    dormant_allowance: float,
    path_sums: wp.array[wp.vec2],
    spread: wp.array[wp.vec2],
    # Data out (reserved rows and their accounting, per contact slot, per row):
    rows: RowBuffers,
    slots: ContactSlots,
    dormant_record_out: wp.array[DormantRecord],
):
    # The groups' arrays, unpacked once: Warp copies an array header (about 80 bytes) out of a struct argument at
    # each field access, inside the loop below once per contact and use (the scalar options are read in place).
    ci_count = ci.count
    ci_damping = ci.damping
    ci_friction_weight = ci.friction_weight
    ci_margin0 = ci.margin0
    ci_margin1 = ci.margin1
    ci_match_generation = ci.match_generation
    ci_match_index = ci.match_index
    ci_normal = ci.normal
    ci_offset0 = ci.offset0
    ci_offset1 = ci.offset1
    ci_point0 = ci.point0
    ci_point1 = ci.point1
    ci_shape0 = ci.shape0
    ci_shape1 = ci.shape1
    ci_stiffness = ci.stiffness
    ci_surface_velocity = ci.surface_velocity
    cm_art_dof_count = cm.art_dof_count
    cm_art_dof_start = cm.art_dof_start
    cm_art_mass_start = cm.art_mass_start
    cm_body_articulation = cm.body_articulation
    cm_body_com = cm.body_com
    cm_body_is_free = cm.body_is_free
    cm_body_is_global = cm.body_is_global
    cm_body_joint = cm.body_joint
    cm_body_max_depenetration = cm.body_max_depenetration
    cm_body_responds = cm.body_responds
    cm_body_row_world = cm.body_row_world
    cm_gravity = cm.gravity
    cm_joint_parent_joint = cm.joint_parent_joint
    cm_joint_qd_start = cm.joint_qd_start
    cm_shape_adhesion = cm.shape_adhesion
    cm_shape_body = cm.shape_body
    cm_shape_condim = cm.shape_condim
    cm_shape_mu = cm.shape_mu
    cm_shape_mu_rolling = cm.shape_mu_rolling
    cm_shape_mu_torsional = cm.shape_mu_torsional
    cm_shape_restitution = cm.shape_restitution
    cm_shape_torsion_radius = cm.shape_torsion_radius
    hist_age = hist.age
    hist_anchor0 = hist.anchor0
    hist_anchor1 = hist.anchor1
    hist_carried = hist.carried
    hist_count = hist.count
    hist_force_n = hist.force_n
    hist_force_t = hist.force_t
    hist_index = hist.index
    hist_key = hist.key
    hist_point0 = hist.point0
    hist_point1 = hist.point1
    hist_position = hist.position
    hist_solved_generation = hist.solved_generation
    slots_age = slots.age
    slots_anchor0 = slots.anchor0
    slots_anchor1 = slots.anchor1
    slots_impact = slots.impact
    slots_release1 = slots.release1
    slots_row = slots.row
    slots_row_count = slots.row_count
    slots_world = slots.world
    # One thread per slot on CUDA; on the CPU one thread walks every slot in order (contact_threads).
    # The history's first record of the last shape pair looked up: a pair's contacts lie side by side.
    searched_key = int(-1)
    key_start = int(0)
    up = -wp.normalize(cm_gravity[0])  # the sweep key's height axis (below)
    for c in range(wp.tid(), wp.min(ci_count[0], ci_normal.shape[0]), threads):
        slots_row[c] = -1
        slots_row_count[c] = 0
        carry = CarriedRecord()  # inactive unless this contact carries a record (contacts/history.py)
        hist_carried[c] = carry
        s0 = ci_shape0[c]
        s1 = ci_shape1[c]
        if s0 < 0 or s1 < 0 or s0 >= cm.shape_count or s1 >= cm.shape_count:  # none, or not a shape (inputs.py)
            continue
        pair_key = s0 * cm.shape_count + s1  # the history's key (contacts/history.py)
        b0 = cm_shape_body[s0]
        b1 = cm_shape_body[s1]
        moves0 = b0 >= 0 and cm_body_responds[b0] != 0
        moves1 = b1 >= 0 and cm_body_responds[b1] != 0
        if not moves0 and not moves1:
            continue
        world = int(0)
        if moves1:
            world = cm_body_row_world[b1]
        else:
            world = cm_body_row_world[b0]
        # Rows of a moving global body (solved with world 0) also flag the global entry when lost.
        global_entry = int(-1)
        if (moves0 and cm_body_is_global[b0] != 0) or (moves1 and cm_body_is_global[b1] != 0):
            global_entry = rows.constraint_overflow.shape[0] - 1
        if moves0 and moves1 and cm_body_row_world[b0] != cm_body_row_world[b1]:
            # A moving global body touching a moving body of another world would couple two worlds'
            # sweeps: no capacity can solve it, so the contact is dropped, counted and flagged.
            # Each side flags its own entry: the global entry for the global body, the world's otherwise.
            for side in range(2):
                b = b0
                if side == 1:
                    b = b1
                entry = cm_body_row_world[b]
                if cm_body_is_global[b] != 0:
                    entry = rows.constraint_overflow.shape[0] - 1
                else:
                    wp.atomic_add(rows.world_rows_dropped, entry, FAMILY_ARTICULATED, 1)
                rows.constraint_overflow[entry] = True
            continue
        # A contact of an asleep island (which touches nothing awake: it would have woken) keeps its
        # history record unchanged (contacts/history.py) and, when its rows are skipped, gets none.
        asleep = int(0)
        if sleep_mode != 0 and ((moves0 and articulation_asleep[cm_body_articulation[b0]] != 0)
                                or (moves1 and articulation_asleep[cm_body_articulation[b1]] != 0)):
            asleep = 1
        # Last step's record of this contact: carried by an asleep one, the warm start's seeds otherwise.
        found = int(-1)
        if opt.warm_start != 0 or asleep != 0:
            if pair_key != searched_key:
                guess = guess_first_record(c, pair_key, hist_count[0], hist_key, hist_position)
                if guess >= 0:
                    key_start = guess
                else:
                    key_start = next_first_record(pair_key, searched_key, key_start, hist_count[0], hist_key)
                searched_key = pair_key
            found = find_record(key_start, pair_key, ci_point0[c], ci_point1[c], hist_count[0],
                                hist_key, hist_index, hist_point0, hist_point1)
        if asleep != 0:
            if found >= 0:
                carry.active = 1
                carry.point0 = hist_point0[found]
                carry.point1 = hist_point1[found]
                carry.force_n = hist_force_n[found]
                carry.force_t = hist_force_t[found]
                slots_anchor0[c] = hist_anchor0[found]
                slots_anchor1[c] = hist_anchor1[found]
                slots_age[c] = hist_age[found]
                slots_world[c] = world
                hist_carried[c] = carry
            if sleep_mode == 2:
                continue

        X0 = _body_pose(b0, body_q)
        X1 = _body_pose(b1, body_q)
        n = ci_normal[c]
        phi = wp.dot(n, wp.transform_point(X1, ci_point1[c]) - wp.transform_point(X0, ci_point0[c]))
        phi -= ci_margin0[c] + ci_margin1[c]
        if opt.gap_gate >= 0.0 and phi > opt.gap_gate:
            continue
        a0 = wp.transform_point(X0, ci_point0[c] + ci_offset0[c])
        a1 = wp.transform_point(X1, ci_point1[c] + ci_offset1[c])

        mu = (0.5 * cm_shape_mu[s0] + 0.5 * cm_shape_mu[s1]) * opt.friction_scale  # halves first: no overflow to inf
        stiffness = float(0.0)  # contact_compliance (contacts/compliance.py): positive for a compliant contact
        if opt.compliance_enabled != 0:
            stiffness = ci_stiffness[c]
            if stiffness > 0.0 and ci_friction_weight[c] > 0.0:
                mu *= ci_friction_weight[c]
            if wp.isinf(stiffness):
                stiffness = 0.0  # infinitely stiff: the rigid law (contacts/compliance.py)
        friction = mu > 0.0 and phi <= opt.friction_gap_max
        friction_kind = ROW_FRICTION
        # The contact's role in its region (contacts/patches.py): a patch anchor, and the torsion row's host.
        roles = wp.vec3i(1, 1, c)
        if (opt.anchor_beta > 0.0 and friction) or opt.patch_torsion_enabled != 0:
            roles = region_roles(c, ci_count[0], cm_shape_body, ci_shape0, ci_shape1, ci_normal,
                                 ci_point1, body_q)
        if opt.anchor_beta > 0.0:
            # Friction patches: only a region's anchors carry the friction pair.
            friction_kind = ROW_PATCH
            if friction:
                friction = roles[0] != 0
        count = 1
        if friction:
            count = 3
        family = FAMILY_FREE_BODY
        if (moves0 and cm_body_is_free[b0] == 0) or (moves1 and cm_body_is_free[b1] == 0):
            family = FAMILY_ARTICULATED
        if friction and coupled_contact(opt.friction_mode, int(family == FAMILY_FREE_BODY)):
            friction_kind = ROW_COUPLED  # solved with its normal row (contacts/friction_modes.py)
        # Spin and rolling rows (steel:condim 4/6, contacts/angular.py), on free-body contacts only. They need
        # no sliding friction: they follow the normal row directly when mu is zero.
        mu_angular = wp.vec2(0.0)
        if opt.torsion_enabled != 0 and family == FAMILY_FREE_BODY and phi <= opt.friction_gap_max:
            mu_angular = angular_coefficients(s0, s1, cm_shape_condim, cm_shape_mu_torsional, cm_shape_mu_rolling)
        first_angular = count
        count += angular_row_count(mu_angular)
        # Patch torsion (contacts/torsion.py): the first contact of each region of an articulated body whose
        # shapes carry a radius ends with one torsion row, bounded by r (mu N - sliding) in the sweep.
        torsion_mu = float(0.0)
        if opt.patch_torsion_enabled != 0 and family == FAMILY_ARTICULATED and mu > 0.0 and phi <= opt.friction_gap_max:
            radius = torsion_radius(s0, s1, cm_shape_torsion_radius)
            if radius > 0.0 and roles[1] != 0:
                torsion_mu = radius * mu
                count += 1
        r = reserve_rows(rows, world, family, count, global_entry)
        if r < 0:
            slots_row[c] = -2  # lost to the capacity (not excluded on purpose: contacts/compliance.py counts it)
            continue
        slots_row[c] = r
        slots_row_count[c] = count
        slots_world[c] = world

        # Normal row target.
        target = float(0.0)
        if phi > 0.0:
            target = -opt.speculative_scale * phi / dt
        else:
            target = -opt.baumgarte * phi / dt
            max_push = _DEPENETRATION_SPEED_MAX
            if moves0 and cm_body_is_free[b0] != 0:
                max_push = wp.min(max_push, cm_body_max_depenetration[b0])
            if moves1 and cm_body_is_free[b1] != 0:
                max_push = wp.min(max_push, cm_body_max_depenetration[b1])
            target = wp.min(target, max_push)
        # Closing speed at the start of the step, at the normal row's points (rows/opt.shared_anchor.py):
        # decides rebounds, and marks impacts, whose impulse is a one-off and must not seed the next step
        # (see contacts/history.py).
        pn0, pn1 = row_points(0, ROW_CONTACT, a0, a1, opt.shared_anchor, opt.friction_shared_anchor)
        # The centres of mass serve the closing speed and the sweep key below (formed once each).
        com0 = _body_com(b0, X0, cm_body_com)
        com1 = _body_com(b1, X1, cm_body_com)
        u0 = wp.dot(n, _point_velocity(b1, pn1, com1, body_qd, cm_body_articulation)
                    - _point_velocity(b0, pn0, com0, body_qd, cm_body_articulation))
        reaches = phi + dt * u0 <= 0.0
        slots_impact[c] = int(-u0 >= wp.min(opt.restitution_threshold, IMPACT_SPEED) and reaches)
        # Velocity-only sweeps (velocity_iterations): no position bias. A positive gap keeps its
        # allowance while its linearized end-of-step gap stays open (the sweep tests gap_speed).
        velocity_target = float(0.0)
        gap_speed = float(-UNBOUNDED)
        if phi > 0.0:
            velocity_target = target
            gap_speed = -(1.0 - GAP_OPEN_FRACTION) * phi / dt
        # contact_regularization acts on penetrating rows only: speculative rows and rebounds stay rigid.
        row_regularization = float(0.0)
        if phi <= 0.0:
            row_regularization = opt.regularization
        softness = float(0.0)
        if stiffness > 0.0:
            # The spring-damper law replaces the rigid one; a compliant contact never rebounds (a positive
            # restitution is rejected at step, contacts/compliance.py).
            law = compliant_law(phi, stiffness, ci_damping[c], dt)
            target = law[0]
            softness = law[1]
            velocity_target = 0.0
            gap_speed = -UNBOUNDED
        elif opt.restitution_enabled != 0 and -u0 >= opt.restitution_threshold and reaches:
            e = wp.clamp(0.5 * (cm_shape_restitution[s0] + cm_shape_restitution[s1]), 0.0, 1.0)
            if e > 0.0:
                row_regularization = 0.0
                target = -e * u0
                velocity_target = target  # an impact keeps its rebound target
                gap_speed = -UNBOUNDED

        # Sweep key: the mean height of the two bodies (a static side counts at its contact point).
        # Every contact of one body pair gets the same key, so the sweep finds them side by side and
        # solves them as one group (see sweep/pgs.py).
        h0 = wp.dot(a0, up)
        if b0 >= 0:
            h0 = wp.dot(com0, up)
        h1 = wp.dot(a1, up)
        if b1 >= 0:
            h1 = wp.dot(com1, up)
        key = 0.5 * (h0 + h1)
        t1 = _tangent(n)
        t2 = wp.cross(n, t1)
        # A moving surface (contacts/surface_velocity.py): friction drives (v1 - v0)_t toward -s_t.
        surface_t = surface_tangent_velocity(c, ci.surface_velocity_enabled, ci_surface_velocity, n)
        # The sides' DOF ranges; a self-contact's rows get one side holding J0 + J1 (contacts/sides.py).
        side0 = contact_side(b0, cm_body_articulation, cm_body_responds, cm_art_dof_start, cm_art_dof_count,
                             cm_art_mass_start)
        side1 = contact_side(b1, cm_body_articulation, cm_body_responds, cm_art_dof_start, cm_art_dof_count,
                             cm_art_mass_start)
        side_of_1 = int(1)  # the side body 1's Jacobian goes to
        range1 = side1
        if shares_side(side0, side1):
            side_of_1 = 0
            range1 = wp.vec4i(0, 0, -1, -1)
        # The normal row and the friction pair act at the contact's own points unless an anchor is shared
        # (rows/opt.shared_anchor.py): their Jacobians are then written together, after the loop
        # (contacts/sides.write_contact_jacobians: every entry sums as a row-by-row walk would).
        translational = int(0)
        if opt.shared_anchor == 0 and opt.friction_shared_anchor == 0:
            translational = wp.min(first_angular, 3)
        for k in range(count):
            row = r + k
            d = n
            kind = ROW_CONTACT
            row_mu = mu
            angular = int(0)
            if torsion_mu > 0.0 and k == count - 1:
                kind = ROW_TORSION
                row_mu = torsion_mu
                angular = 1
            elif k >= first_angular:
                kind, d, row_mu = angular_row(k - first_angular, mu_angular, n, t1, t2)
                angular = 1
            elif k == 1:
                d = t1
                kind = friction_kind
            elif k == 2:
                d = t2
                kind = friction_kind
            # Sides: body 0's Jacobian, then body 1's on its own side or added to side 0 (contacts/sides.py).
            # The translational rows' Jacobians are written at the end, unless the contact is dormant.
            set_side_range(rows, row, 0, side0)
            set_side_range(rows, row, 1, range1)
            if k >= translational:
                clear_side_jacobians(rows, row)
                p0, p1 = row_points(k, kind, a0, a1, opt.shared_anchor, opt.friction_shared_anchor)
                if side0[3] >= 0:
                    add_point_jacobian(rows, side_offset(rows, row, 0), b0, p0 - articulation_origin[side0[3]], d,
                                       -1.0, angular, side0[0], cm_body_joint, cm_joint_parent_joint,
                                       cm_joint_qd_start, dof_S)
                if side1[3] >= 0:
                    add_point_jacobian(rows, side_offset(rows, row, side_of_1), b1,
                                       p1 - articulation_origin[side1[3]], d, 1.0, angular, side1[0], cm_body_joint,
                                       cm_joint_parent_joint, cm_joint_qd_start, dof_S)
            rows.kind[row] = kind
            rows.inv_mass[row] = -1.0  # response not formed yet (see sweep/pgs.py)
            surface_target = float(0.0)
            if angular == 0 and k > 0:
                surface_target = -wp.dot(surface_t, d)
            rows.target[row] = surface_target
            rows.velocity_target[row] = surface_target  # friction: no anchor correction in the velocity sweeps
            rows.gap_speed[row] = -UNBOUNDED
            rows.preload[row] = 0.0
            rows.regularization[row] = 0.0
            rows.compliance[row] = 0.0
            rows.mu[row] = row_mu
            rows.impulse[row] = 0.0
            rows.contact[row] = c
            rows.region[row] = roles[2]
            rows.dir[row] = d
            if angular != 0:
                rows.dir[row] = wp.vec3(0.0)  # a torque: no share in contact_f or the friction history
            rows.key[row] = key
            rows.body[row, 0] = b0
            rows.body[row, 1] = b1
        rows.target[r] = target
        rows.regularization[r] = row_regularization
        rows.compliance[r] = softness
        rows.velocity_target[r] = velocity_target
        rows.gap_speed[r] = gap_speed
        rows.preload[r] = -adhesion_pull(s0, s1, opt.adhesion_enabled, cm_shape_adhesion) * dt  # contacts/adhesion.py

        # Friction history: warm start and anchors (see contacts/history.py).
        anchor0 = ci_point0[c] + ci_offset0[c]
        anchor1 = ci_point1[c] + ci_offset1[c]
        # Ahead by the surface's displacement over this step, so a contact riding a moving surface reads
        # no slip next step (contacts/surface_velocity.py).
        surface_shift = surface_t * dt
        if ci.surface_velocity_enabled != 0:
            anchor1 += wp.quat_rotate_inv(wp.transform_get_rotation(X1), surface_shift)
        slots_release1[c] = anchor1  # where the history re-anchors a released (sliding) contact
        rec = int(-1)
        if opt.warm_start != 0:
            rec = found
        age = int(0)
        if rec >= 0:
            age = hist_age[rec] + 1
            if age >= SETTLED_AGE:
                rows.impulse[r] = WARM_NORMAL * hist_force_n[rec] * dt
        if asleep == 0:
            slots_age[c] = age
        if friction and opt.anchor_beta > 0.0 and age >= SETTLED_AGE:
            rows.regularization[r + 1] = ANCHOR_REGULARIZATION  # see ANCHOR_REGULARIZATION; fresh: rigid
            rows.regularization[r + 2] = ANCHOR_REGULARIZATION
        if rec >= 0 and friction:
            ft = hist_force_t[rec] * dt
            rows.impulse[r + 1] = wp.dot(ft, t1)  # clamped to the disk by the sweep's first pass
            rows.impulse[r + 2] = wp.dot(ft, t2)
            if opt.anchor_beta > 0.0:
                # The anchors are last step's contact points (material points of each body) offset by
                # the slip carried so far; their separation under the current poses is that slip plus
                # what the contact slid during the last step. Only its tangential part is slip.
                sep = wp.transform_point(X1, hist_anchor1[rec]) - wp.transform_point(X0, hist_anchor0[rec])
                slip = sep - wp.dot(sep, n) * n
                rows.target[r + 1] += -opt.anchor_beta * wp.dot(slip, t1) / dt
                rows.target[r + 2] += -opt.anchor_beta * wp.dot(slip, t2) / dt
                # A contact whose point on body 0 still lies where its anchor was placed, and whose anchor on
                # body 1 would be re-placed where it is (both within ANCHOR_KEEP_DISTANCE), keeps them as they
                # are: material points, whose separation is read afresh from the poses each step, so float32
                # rounding never accumulates. Body 1's test compares the re-placed anchor, not this step's
                # point: a held slip (a regularized anchor's deflection, tens of um under load at dt 1/240)
                # separates the point from the anchor by the slip itself, and comparing the point re-placed the
                # anchors every step (the ramps at dt 1/240 crept 2e-7 to 3e-5 m from 1 s to 4 s).
                # Re-placing them every step carried each step's rounding of the world-frame slip into the
                # next, and in the one direction no rigid motion corrects, the distance between a patch's two
                # anchors, that sum only grew: a box resting on a 20-degree plane shape stretched its anchor
                # pair by ~0.005 um per step, the sweep built an internal friction force against the stretch
                # until one anchor's disk saturated, and the box crept (0.5 um over 9 s; with the conjugate
                # round trip below, 7 um/s). A tilted cm_gravity hid it: identity quaternions, exact rounding.
                # Rejected: projecting the stretch out of each patch's anchor pair, which leaves it between the
                # regions of one body pair (a box bridging two supports).
                offset1 = a0 - a1 + slip + wp.dot(a1 - a0, n) * n  # = slip - (a1 - a0) tangential [m]
                placed1 = ci_point1[c] + ci_offset1[c] + wp.quat_rotate_inv(
                    wp.transform_get_rotation(X1), offset1 + surface_shift)
                keep = ci.surface_velocity_enabled == 0 \
                    and wp.length(anchor0 - hist_anchor0[rec]) <= ANCHOR_KEEP_DISTANCE \
                    and wp.length(placed1 - hist_anchor1[rec]) <= ANCHOR_KEEP_DISTANCE
                if keep:
                    anchor0 = hist_anchor0[rec]
                    anchor1 = hist_anchor1[rec]
                else:
                    # Re-anchor at this step's contact points, carrying the slip: a rolling contact moves
                    # over both surfaces without slipping, and anchors left on the material points it
                    # rolled away from would read that motion as slip and brake the roll.
                    # anchor0 stays this step's point on body 0; anchor1 is placed so that its separation
                    # from it is the slip, plus the points' current separation along the normal.
                    # Only the small offset from this step's point on body 1 is rotated into its frame, never
                    # the point itself: a float32 quaternion is unit only to ~1e-7, and mapping the whole world
                    # point back (transform_inverse, the conjugate) and forward next step scaled the anchor's
                    # lever about the centre of mass by |q|^4 each step.
                    anchor1 = placed1
        if opt.contact_warmstart != 0:
            # The matched predecessor's impulses replace the shape-pair history's seeds; unmatched: cold.
            prev = predecessor(c, same_buffer, ci_match_generation, hist_solved_generation, hist_count, ci_match_index)
            carried = wp.vec3(0.0)
            if prev >= 0:
                carried = carried_impulses(prev, dt, opt.warmstart_decay, mu, t1, t2, hist_force_n, hist_force_t)
            rows.impulse[r] = carried[0]
            if friction:
                rows.impulse[r + 1] = carried[1]
                rows.impulse[r + 2] = carried[2]
        if asleep == 0:
            slots_anchor0[c] = anchor0
            slots_anchor1[c] = anchor1
        if translational > 0:
            # The rows' impulses are known now: a contact that provably cannot act at the start of the sweep
            # keeps only the gate reference and what its walk needs (contacts/dormant.py).
            arm0 = wp.vec3(0.0)
            if side0[3] >= 0:
                arm0 = a0 - articulation_origin[side0[3]]
            arm1 = wp.vec3(0.0)
            if side1[3] >= 0:
                arm1 = a1 - articulation_origin[side1[3]]
            dormant = int(0)
            if dormant_enabled != 0 and phi > 0.0 and stiffness == 0.0 and translational == count:
                dormant = int(rows.preload[r] == 0.0)
                for k in range(count):
                    if rows.impulse[r + k] != 0.0:
                        dormant = 0
            if dormant != 0:
                norm = side_norm(b0, int(side0[3] >= 0), arm0, cm_body_joint, path_sums)
                norm += side_norm(b1, int(side1[3] >= 0), arm1, cm_body_joint, path_sums)
                bound = dormant_bound(u0, norm, contact_spread(side0[3], side1[3], spread), dormant_allowance)
                # Only a row whose margin outlasts the drift its world's last sweep reached: a row the sweep would
                # materialize anyway costs more there than its build saved (any choice keeps the bound valid).
                if bound[0] - bound[1] * rows.world_drift[world] > target:
                    rows.gate[r] = wp.vec3(bound[0], bound[1], 0.0)  # drift 0: the world's at the sweep's start
                    rows.inv_mass[r] = DORMANT_NORMAL
                    if count == 3:
                        rows.inv_mass[r] = DORMANT_PAIR
                    dormant_record_out[r] = dormant_record(arm0, arm1, side0, side1, side_of_1)
                else:
                    dormant = 0
            if dormant == 0:
                walked = dormant_record(arm0, arm1, side0, side1, side_of_1)  # the sides as a dormant walk reads them
                write_contact_jacobians(rows, r, translational, b0, int(walked.start0), arm0, b1, int(walked.start1),
                                        side_of_1, arm1, n, t1, t2, cm_body_joint, cm_joint_parent_joint,
                                        cm_joint_qd_start, dof_S)


def build_contact_rows(sm, sd, contacts, state_body_q, state_body_qd, dt: float, dormant_bounds: bool) -> None:
    """Launch :func:`_contact_rows` over the contact slots (:func:`~..rows.common.contact_threads` threads).
    ``dormant_bounds``: this step's fused free dynamics wrote what dormant rows are bounded by (``dormant.py``)."""
    opts = sm.options
    core = sm.core
    threads = contact_threads(contacts)
    bias = (dt / sd.bias_dt) ** 2  # 1.0 but in a step far shorter than the one before (history.bias_time)
    # The options come from sm.options, not solver.<option>: SolverSteel.__getattr__ costs per read.
    params = sd.contact_params.update(opts, sm.shape_attributes, sd.warm_start_contacts, bias)
    inputs = sd.contact_input.update(contacts, opts.contact_compliance, opts.contact_warmstart)
    sleep = sd.sleep
    launch(
        _contact_rows,
        dim=threads,
        inputs=[
            float(dt),
            params,
            current_contact_model(sm),
            inputs,
            sd.history.arrays,
            int(contacts is sd.history.solved_contacts),
            core.plan.joints.articulation_skip if sleep is None else sleep.articulation_asleep,  # none: never read
            0 if sleep is None else (2 if sleep.skip_constraints else 1),
            state_body_q,
            state_body_qd,
            core.data.articulation_origin,
            core.data.dof_S,
            threads,
            int(sd.dormant.active(sm, sd, dormant_bounds)),
            float(sd.dormant.allowance(sd)),
            sd.dormant.path_sums,
            sd.dormant.spread,
        ],
        outputs=[sd.rows.buffers, sd.contact_slots, sd.dormant.record],
        device=sm.model.device,
    )
