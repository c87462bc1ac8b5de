"""Particles, cloth and soft bodies of SolverFeatherstone, stepped by Newton's public SolverSemiImplicit.

The seed says this solver "uses the routines from SolverSemiImplicit to simulate particles, cloth,
and soft bodies". They are reached through the public class only: a private
:class:`newton.solvers.SolverSemiImplicit` on the same model steps ``state_in`` into a scratch state
(springs, triangle membranes, bending edges, tetrahedra, particle-particle and triangle contact,
particle-shape contact, then its particle integrator), and this module copies the scratch's
``particle_q``/``particle_qd`` into ``state_out``. Forces accumulate into ``state_in.particle_f``
as in SolverSemiImplicit. Its rigid-body work on the scratch (maximal-coordinate bodies, joints as
penalty springs) is discarded: the cost of a particle scene is one SolverSemiImplicit step on top.

Two-way coupling. SolverSemiImplicit keeps the reactions of particle-shape contacts on the bodies to
itself, so this module evaluates them with its own kernel, before the articulation dynamics (the
articulated bodies feel cloth and soft bodies in the same step): for each soft contact of particle
``i`` (position ``x``, velocity ``v``, radius ``r``) with a shape on body ``b`` (contact point
``p = X_b p_0``, normal ``n`` from the shape to the particle), with ``ke``, ``kd``, ``kf``, ``mu``
the averages of ``Model.soft_contact_*`` and the shape's material:

* penetration ``c = n . (x - p) - r`` [m]; nothing unless ``c < 0``;
* relative velocity ``u = v - v_b(p)``, normal part ``u_n``, tangential ``u_t``;
* force on the particle ``f = n (-ke c - kd min(u_n, 0)) - u_t min(kf, mu (-ke c) / |u_t|)``
  (spring, damper only while approaching, ``kf``-regularized Coulomb friction bounded by the
  spring force);
* the body receives ``-f`` at ``p`` (a world wrench about its COM in ``body_f_work``).

That is the penalty law SolverSemiImplicit applies to the particle side (checked through its public
``step``: same normal force, damping and friction bound on single contacts; the tests compare the
particle on a box at rest with it), so the exchange is equal and opposite.
"""

from __future__ import annotations

import warp as wp

import newton
from ...launches import launch
from .data import ContactBodies, KernelArgs, SoftContacts

PARTICLE_ACTIVE = wp.constant(int(newton.ParticleFlags.ACTIVE))


@wp.kernel
def _soft_contact_reactions(
    # Model:
    bodies: ContactBodies,
    particle_radius: wp.array[float],
    particle_flags: wp.array[wp.int32],
    soft_ke: float,
    soft_kd: float,
    soft_kf: float,
    soft_mu: float,
    # Contacts:
    contacts: SoftContacts,
    # Data in:
    particle_q: wp.array[wp.vec3],
    particle_qd: wp.array[wp.vec3],
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    # Data out:
    body_f_out: wp.array[wp.spatial_vector],
):
    k = wp.tid()  # one thread per soft-contact slot
    if k >= contacts.count[0]:
        return
    shape = contacts.shape[k]
    i = contacts.particle[k]
    if shape < 0 or i < 0 or shape >= bodies.shape_body.shape[0] or i >= particle_q.shape[0]:
        return  # nothing, or a buffer filled for another model
    body = bodies.shape_body[shape]
    if body < 0 or bodies.body_kinematic[body] != 0:
        return  # static shapes and kinematic bodies take no reaction
    art = bodies.body_articulation[body]
    if art >= 0 and bodies.articulation_invalid[art] != 0:
        return  # non-finite articulation (see .forces)
    if (particle_flags[i] & PARTICLE_ACTIVE) == 0:
        return
    X = body_q[body]
    p = wp.transform_point(X, contacts.body_pos[k])
    n = contacts.normal[k]
    c = wp.dot(n, particle_q[i] - p) - particle_radius[i]
    if c >= 0.0:
        return
    ke = 0.5 * (soft_ke + bodies.shape_ke[shape])
    kd = 0.5 * (soft_kd + bodies.shape_kd[shape])
    kf = 0.5 * (soft_kf + bodies.shape_kf[shape])
    mu = 0.5 * (soft_mu + bodies.shape_mu[shape])
    r = p - wp.transform_point(X, bodies.body_com[body])
    tw = body_qd[body]
    u = particle_qd[i] - (wp.spatial_top(tw) + wp.cross(wp.spatial_bottom(tw), r))
    un = wp.dot(n, u)
    ut = u - n * un
    spring = -ke * c
    f = n * (spring - kd * wp.min(un, 0.0))
    speed = wp.length(ut)
    if speed > 0.0:
        f -= ut * wp.min(kf, mu * spring / speed)
    if not wp.isfinite(wp.length_sq(f)):
        return
    wp.atomic_sub(body_f_out, body, wp.spatial_vector(f, wp.cross(r, f)))


class ParticleStepper:
    """The particle stage of one :class:`~steel.solvers.featherstone.solver.SolverFeatherstone`.

    Args:
        model: the solver's model (nothing is allocated when it has no particles).
        deterministic: passed to the private SolverSemiImplicit (its atomic-emitting kernels).
    """

    def __init__(self, model: newton.Model, deterministic):
        self.model = model
        self.oracle = None
        self.scratch = None
        if model.particle_count:
            self.oracle = newton.solvers.SolverSemiImplicit(model, deterministic=deterministic)

    def eval_body_reactions(self, state_in: newton.State, contacts, args: KernelArgs, work) -> None:
        """Add the reactions of every active particle-shape contact to ``work.body_f_work`` [N, N·m]; one launch.

        ``args`` holds the solver's structs. Contacts with bodies of an articulation flagged invalid
        (non-finite input, see :mod:`.forces`) give no reaction."""
        m = self.model
        if self.oracle is None or contacts is None or m.body_count == 0 or not contacts.soft_contact_max:
            return
        launch(
            _soft_contact_reactions,
            dim=contacts.soft_contact_max,
            inputs=[
                args.bodies,
                m.particle_radius,
                m.particle_flags,
                float(m.soft_contact_ke),
                float(m.soft_contact_kd),
                float(m.soft_contact_kf),
                float(m.soft_contact_mu),
                args.soft_contacts(contacts),
                state_in.particle_q,
                state_in.particle_qd,
                state_in.body_q,
                state_in.body_qd,
            ],
            outputs=[work.body_f_work],
            device=m.device,
        )

    def step(self, state_in: newton.State, control, contacts, dt: float) -> None:
        """SolverSemiImplicit's step of ``state_in`` into the scratch state (run before the articulated
        outputs are written, so in-place stepping reads the input poses)."""
        if self.oracle is None:
            return
        if self.scratch is None:
            self.scratch = self.model.state()
        self.oracle.step(state_in, self.scratch, control, contacts, dt)

    def publish(self, state_out: newton.State) -> None:
        """Copy the stepped particles into ``state_out``."""
        if self.oracle is None:
            return
        wp.copy(state_out.particle_q, self.scratch.particle_q)
        wp.copy(state_out.particle_qd, self.scratch.particle_qd)
