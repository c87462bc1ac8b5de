"""What a rigid run's summary flags beyond the divergence guard: bodies frozen in mid-air, energy gained,
bodies that left the scene.

The guard (:mod:`steel.app.guard`) stops runs that blew up. These checks catch quieter failures that a
run can end with while reporting success; :class:`RunWatch` applies them once per frame and
:meth:`RunWatch.report` states each, with the body and the time it was first seen:

* **frozen in mid-air**: a group of jointed bodies (one free box, or a whole floating robot) that
  touches nothing (no contact pair within ``SUPPORT_GAP`` of any of its bodies), is not held by a
  joint to the world, and whose every body moves slower than ``FROZEN_SPEED`` at two consecutive
  frames while gravity acts. Gravity alone changes an unsupported body's velocity by ``g * frame``
  (0.16 m/s per 1/60 s frame), so a body that stays at rest unsupported has been frozen by the
  solver (a sleeping island that lost its support, an integrator that skipped it). Two frames rather
  than one: a body dropped from rest, or at the top of a throw, is at rest for an instant.
* **energy gained**: kinetic plus gravitational energy ``E = sum 1/2 m |v|^2 + 1/2 w.I w - m g.c``
  (``c`` the centre of mass) rising above its start by more than ``ENERGY_GAIN_HEIGHT`` times the
  scene's weight ``sum m |g|``, i.e. more than the work of lifting every body that high. Checked for
  passive scenes only: no joint drive with a stiffness (``joint_target_ke > 0`` stores spring
  energy this sum does not count) and no control. Contacts, joint limits and damping only take
  energy out of a passive scene; a rise is the solver adding it (a push-out of a start overlap, a
  launch, an unstable integrator). A shipped scene whose motion makes every semi-implicit integrator
  gain more at the default step (the whipping chain: :data:`steel.app.catalog.SCENE_ENERGY_GAIN_HEIGHT`)
  is given its own height, and the report says which height and why.
* **left the scene**: a body's centre of mass more than ``LEAVE_MARGIN`` outside the bounding box of
  the start's centres of mass, or more than ``BELOW_GROUND`` under the ground plane (it fell through),
  from some frame to the end of the run. A body that comes back was not lost: the bottom boxes of the
  towers dip 2 to 3 cm under the ground at impact with SolverFeatherstone and SolverVBD; the
  deepest such dip is reported as information.

Rejected alternative for "frozen": a body whose position does not change. A box resting on the
ground does not move either; only the missing support makes rest suspicious.
"""

from __future__ import annotations

import numpy as np

import newton

from .catalog import ENERGY_GAIN_HEIGHT, LEAVE_MARGIN  # noqa: F401  (here so --help states them)

FROZEN_SPEED = 1.0e-3  # [m/s] slower than this counts as at rest (gravity adds 0.16 m/s per 1/60 s frame)
SUPPORT_GAP = 5.0e-3  # [m] a contact pair closer than this supports its bodies
BELOW_GROUND = 0.02  # [m] how far under the ground plane a centre of mass may go before it fell through
START_OVERLAP_HINT = 1.0e-3  # [m] a deeper start overlap is named as a likely source of an energy gain


def contact_gaps(model: newton.Model, state: newton.State, contacts: newton.Contacts):
    """``(shape0, shape1, gap)`` of every listed rigid contact pair, the signed gap [m] at ``state``.

    Gap of a pair: ``d = n . (p_B - p_A) - m_A - m_B`` between the surface points of the contact's
    body-local points moved to ``state``'s poses (``m`` the contact margins) -- the gap every
    solver's contact rows start from; negative is overlap."""
    count = int(contacts.rigid_contact_count.numpy()[0])
    empty = np.zeros(0, dtype=np.int64)
    if count == 0:
        return empty, empty, np.zeros(0)
    body_q = state.body_q.numpy()
    shape_body = model.shape_body.numpy()

    def world_points(shape, point):
        body = shape_body[shape]
        out = point.copy()
        moving = body >= 0
        q = body_q[body[moving]]
        pos, rot = q[:, :3], q[:, 3:7]  # quaternion (x, y, z, w)
        v = point[moving]
        t = 2.0 * np.cross(rot[:, :3], v)
        out[moving] = pos + v + rot[:, 3:4] * t + np.cross(rot[:, :3], t)
        return out

    shape0 = contacts.rigid_contact_shape0.numpy()[:count]
    shape1 = contacts.rigid_contact_shape1.numpy()[:count]
    n = contacts.rigid_contact_normal.numpy()[:count]
    pa = world_points(shape0, contacts.rigid_contact_point0.numpy()[:count])
    pb = world_points(shape1, contacts.rigid_contact_point1.numpy()[:count])
    gap = np.einsum("ij,ij->i", n, pb - pa)
    gap -= contacts.rigid_contact_margin0.numpy()[:count] + contacts.rigid_contact_margin1.numpy()[:count]
    return shape0, shape1, gap


def _rotate(quat: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v`` (N, 3) by unit quaternions ``quat`` (N, 4) stored (x, y, z, w)."""
    t = 2.0 * np.cross(quat[:, :3], v)
    return v + quat[:, 3:4] * t + np.cross(quat[:, :3], t)


def body_groups(model: newton.Model) -> tuple[np.ndarray, np.ndarray]:
    """``(group of each body, held flag of each group)``: bodies joined by joints form a group; a group is held
    when one of its joints ties it to the world with anything but a FREE joint, or one of its bodies is
    kinematic (zero inverse mass)."""
    n = model.body_count
    root = np.arange(n)

    def find(i):
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    parent, child = model.joint_parent.numpy(), model.joint_child.numpy()
    jtype = model.joint_type.numpy()
    for p, c in zip(parent, child, strict=True):
        if p >= 0 and c >= 0:
            root[find(p)] = find(c)
    group = np.array([find(i) for i in range(n)], dtype=np.int64)
    held = np.zeros(n, dtype=bool)
    for p, c, t in zip(parent, child, jtype, strict=True):
        if p < 0 and c >= 0 and int(t) != int(newton.JointType.FREE):
            held[group[c]] = True
    held[group[model.body_inv_mass.numpy() == 0.0]] = True
    return group, held


def ground_height(model: newton.Model) -> float | None:
    """Height [m] of the static ground plane whose normal is +z (``add_ground_plane``), or None without one."""
    kinds, bodies = model.shape_type.numpy(), model.shape_body.numpy()
    xforms = model.shape_transform.numpy()
    for s in np.flatnonzero((kinds == int(newton.GeoType.PLANE)) & (bodies < 0)):
        normal = _rotate(xforms[s:s + 1, 3:7].astype(np.float64), np.array([[0.0, 0.0, 1.0]]))[0]
        if normal[2] > 0.999:
            return float(xforms[s, 2])
    return None


class RunWatch:
    """Applies the module's three checks to a rigid run, one :meth:`observe` per frame; see the module docstring.

    Args:
        model: the run's model.
        state: its start state (poses and velocities after forward kinematics).
        passive: no control drives it (the runner passes none); joint drives with stiffness still make the
            energy check not applicable.
        gain_height: the energy tolerance as the height [m] every body may be lifted (default
            ``ENERGY_GAIN_HEIGHT``); ``gain_reason`` says why when it differs.
    """

    def __init__(self, model: newton.Model, state: newton.State, passive: bool = True,
                 gain_height: float = ENERGY_GAIN_HEIGHT, gain_reason: str = ""):
        if not np.isfinite(gain_height) or gain_height < 0.0:
            raise ValueError(f"gain_height must be a finite height >= 0 [m], got {gain_height!r}")
        self.gain_height, self.gain_reason = float(gain_height), gain_reason
        self.model = model
        self.mass = model.body_mass.numpy().astype(np.float64)
        self.inertia = model.body_inertia.numpy().astype(np.float64).reshape(-1, 3, 3)
        self.com_local = model.body_com.numpy().astype(np.float64)
        self.gravity = np.asarray(model.gravity.numpy(), dtype=np.float64).reshape(-1, 3)[0]
        self.group, self.held = body_groups(model)
        self.ground = ground_height(model)
        target_ke = getattr(model, "joint_target_ke", None)
        drives = target_ke is not None and target_ke.shape[0] > 0 and bool((target_ke.numpy() > 0.0).any())
        self.passive = passive and not drives
        self.energy_tolerance = self.gain_height * float(self.mass.sum()) * float(np.linalg.norm(self.gravity))
        com = self.com(state)
        self.box_lo, self.box_hi = com.min(axis=0) - LEAVE_MARGIN, com.max(axis=0) + LEAVE_MARGIN
        self.energy_start = self.energy(state)
        self.energy_gain, self.energy_gain_time = 0.0, 0.0
        self.at_rest_unsupported = np.zeros(model.body_count, dtype=bool)  # at the previous frame
        self.frozen: dict[int, float] = {}  # body -> first time [s]
        self.start_overlap = 0.0  # [m] deepest contact overlap of the start pose, set by the runner (a hint)
        self.left: dict[int, dict] = {}  # body -> where and since when, while it stays out
        self.deepest_under_ground = 0.0  # [m] deepest centre of mass under the ground plane seen at a frame

    def com(self, state: newton.State) -> np.ndarray:
        """World centres of mass [m], (body, 3)."""
        q = state.body_q.numpy().astype(np.float64)
        return q[:, :3] + _rotate(q[:, 3:7], self.com_local)

    def energy(self, state: newton.State) -> float:
        """Kinetic plus gravitational energy [J] of the bodies (potential zero at the origin)."""
        q = state.body_q.numpy().astype(np.float64)
        qd = state.body_qd.numpy().astype(np.float64)
        v, w = qd[:, :3], qd[:, 3:6]  # COM velocity and angular velocity, world frame
        w_body = _rotate(q[:, 3:7] * np.array([-1.0, -1.0, -1.0, 1.0]), w)  # into the body frame
        kinetic = 0.5 * (self.mass * (v**2).sum(axis=1)).sum()
        kinetic += 0.5 * np.einsum("bi,bij,bj->", w_body, self.inertia, w_body)
        return float(kinetic - (self.mass * (self.com(state) @ self.gravity)).sum())

    def observe(self, state: newton.State, contacts: newton.Contacts | None, time: float) -> None:
        """Check one frame at simulated ``time`` [s]; ``contacts`` are the pairs the last step solved."""
        if self.model.body_count == 0:
            return
        com = self.com(state)
        speed = np.linalg.norm(state.body_qd.numpy()[:, :3].astype(np.float64), axis=1)
        touching = np.zeros(self.model.body_count, dtype=bool)
        if contacts is not None:
            shape0, shape1, gap = contact_gaps(self.model, state, contacts)
            shape_body = self.model.shape_body.numpy()
            for shapes in (shape0, shape1):
                bodies = shape_body[shapes[gap < SUPPORT_GAP]]
                touching[bodies[bodies >= 0]] = True
        group_touching = np.zeros(self.model.body_count, dtype=bool)
        group_touching[self.group[touching]] = True
        group_fast = np.zeros(self.model.body_count, dtype=bool)
        group_fast[self.group[speed >= FROZEN_SPEED]] = True
        g = self.group
        at_rest = ~group_touching[g] & ~self.held[g] & ~group_fast[g] & bool(np.linalg.norm(self.gravity) > 0.0)
        for body in np.flatnonzero(at_rest & self.at_rest_unsupported):
            self.frozen.setdefault(int(body), time)
        self.at_rest_unsupported = at_rest

        # A body counts as gone while it stays out: one that dips under the ground at an impact and comes back
        # (the towers' bottom boxes, 2 to 3 cm with SolverFeatherstone and SolverVBD) is not; its depth is kept as information.
        why = np.where(((com < self.box_lo) | (com > self.box_hi)).any(axis=1), "outside the scene bounds", "")
        if self.ground is not None:
            depth = self.ground - com[:, 2]
            self.deepest_under_ground = max(self.deepest_under_ground, float(depth.max()))
            why = np.where((why == "") & (depth > BELOW_GROUND), "under the ground", why)
        for body in [b for b in self.left if not why[b]]:  # back in the scene
            del self.left[body]
        for body in np.flatnonzero(why != ""):
            if int(body) not in self.left:
                self.left[int(body)] = {"body": int(body), "time_s": time, "why": str(why[body]),
                                        "com_m": [round(float(x), 3) for x in com[body]]}
        if self.passive:
            gain = self.energy(state) - self.energy_start
            if gain > self.energy_gain:
                self.energy_gain, self.energy_gain_time = gain, time

    def report(self) -> dict:
        """The summary's ``checks`` entry: each check's finding and its thresholds."""
        frozen = sorted(self.frozen.items(), key=lambda kv: (kv[1], kv[0]))
        return {
            "frozen_in_midair": {"bodies": [b for b, _ in frozen], "first_time_s": frozen[0][1] if frozen else None,
                                 "speed_below_m_per_s": FROZEN_SPEED, "support_gap_m": SUPPORT_GAP},
            "energy_gain": {"checked": self.passive, "start_J": self.energy_start,
                            "max_gain_J": self.energy_gain if self.passive else None,
                            "at_time_s": self.energy_gain_time if self.passive else None,
                            "tolerance_J": self.energy_tolerance, "tolerance_height_m": self.gain_height,
                            "tolerance_reason": self.gain_reason,
                            "gained": bool(self.passive and self.energy_gain > self.energy_tolerance),
                            "start_overlap_m": self.start_overlap},
            "left_scene": {"bodies": sorted(self.left), "first": min(self.left.values(), key=lambda d: d["time_s"])
                           if self.left else None, "margin_m": LEAVE_MARGIN, "below_ground_m": BELOW_GROUND,
                           "deepest_com_under_ground_m": self.deepest_under_ground if self.ground is not None else None},
        }


def contradictions(report: dict) -> list[str]:
    """One sentence per check of ``report`` (:meth:`RunWatch.report`) that found something, for warnings."""
    found = []
    frozen = report["frozen_in_midair"]
    if frozen["bodies"]:
        found.append(f"{len(frozen['bodies'])} body(ies) frozen in mid-air (body {frozen['bodies'][0]} from "
                     f"t = {frozen['first_time_s']:.3f} s: touching nothing, slower than "
                     f"{frozen['speed_below_m_per_s']:g} m/s while gravity acts)")
    energy = report["energy_gain"]
    if energy["gained"]:
        found.append(f"energy gained: {energy['max_gain_J']:.3g} J above its start at t = {energy['at_time_s']:.3f} s "
                     f"in a passive scene (tolerance {energy['tolerance_J']:.3g} J: lifting every body "
                     f"{100 * energy['tolerance_height_m']:.0f} cm)")
        if energy["start_overlap_m"] > START_OVERLAP_HINT:
            found[-1] += (f"; the start pose overlapped by {1000 * energy['start_overlap_m']:.0f} mm, and pushing it "
                          "out adds energy")
    left = report["left_scene"]
    if left["bodies"]:
        first = left["first"]
        found.append(f"{len(left['bodies'])} body(ies) left the scene (body {first['body']} {first['why']} at "
                     f"t = {first['time_s']:.3f} s, centre of mass at {first['com_m']} m)")
    return found
