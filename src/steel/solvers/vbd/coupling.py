"""Two-way body–particle contact: particles touching a body VBD integrates push it back in the same solve.

A particle–shape contact on a dynamic body is one penalty energy of the particle position ``x`` and
the body pose, through the shape point ``p = x_b + R r_b`` (``r_b`` fixed in the body):

    E_c = ke/2 d² + damping + friction,   d = r + margin - n·(x - p)   [m, positive inside]

with the law of :func:`.particles.contacts.contact_force_hessian` (the VBD paper's penalty contact,
Chen et al., "Vertex Block Descent", ACM TOG 43(4) 2024, sec. 3.7, with IPC's smoothed friction, Li et
al., ACM TOG 39(4) 2020, and an absolute normal damper). ``E_c`` depends on ``x - p`` only (the slip
too: the particle's motion relative to the shape point over the step), so its gradient with respect
to ``p`` is minus the one with respect to ``x``, and both share the 3x3 Hessian ``H_c``:

* the vertex step (particle block, :mod:`.particles.solve`) adds ``f_c`` and ``H_c`` with the shape
  point and normal placed at the body's current iterate (:func:`.particles.contacts.contact_frame`);
* the body step (the 6x6 block of AVBD, Giles, Diaz, Yuksel, ACM TOG 44(4) 2025, sec. 3) adds the
  reaction ``-f_c`` at ``p``, i.e. force ``-f_c`` and torque ``r × (-f_c)`` with ``r = p - x_com``,
  and the Gauss-Newton block ``Jᵀ H_c J`` of the point's Jacobian ``J = [I, -[r]×]``:

      H_ll = H_c,   H_lθ = -H_c [r]×,   H_θθ = -[r]× H_c [r]×

  (the normal's turning with the body is left out, as in the body–body rows).

One iteration of the coupled step sweeps the particle colours, then the body colours
(:mod:`.solver`), so each side sees the other's latest iterate; the forces the two sides apply are
equal and opposite at the poses they are evaluated at, and total momentum is kept up to the
Gauss-Seidel lag between the two sweeps. Newton's SolverVBD sweeps the bodies first: with that order
ours reproduces its results (a cloth thrown at a free box: box 0.2293 m/s and total momentum +2.3 %,
both to the printed digits; a cloth on a box on soft ground: the ground load 103.86 N against its
103.77 N, particle depths equal to 1e-9 m). That order was rejected because particles first is closer
to the known answers: momentum +0.9 % and the load 103.22 N for ``(M + m) g`` = 102.91 N.

Per-body lists: :func:`.particles.contacts.prepare_contacts` files each coupled contact its particle
kept in its body's list (``rigid_body_particle_contact_buffer_size`` slots). A body with more contacts
than slots scans every soft-contact record for its own instead, so no reaction is lost (slower); the
records past the capacity are counted (:meth:`BodyParticleCoupling.check_overflow`). Filing uses
atomics: on the CPU the order is the record order; on CUDA it may vary, and with it the float32
rounding of a body's sum.

Contact damping is absolute (``kd`` [N·s/m], not scaled by ``ke`` nor by the ramp). The stiffness
is the mixed ``ke``, or with a linear AVBD beta > 0 the per-contact penalty ``k`` ramped over the
iterations (:func:`.particles.contacts.ramp_contacts`), the same ``k`` on both sides.

Edge and face records of full-surface contacts (:mod:`.particles.contacts`) are the same energy in
their soft point ``x_c = Σ b_i x_i`` instead of ``x``: the body takes ``-f_c`` at ``p`` and the same
blocks, the particles ``b_i f_c`` (weights summing to one), so the pair stays equal and opposite and
the torque balance holds about any point where ``x_c`` and ``p`` meet. A record is filed once in its
body's list, whatever the number of its particles.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton

from .particles.attachments import attachments_on_body, empty_attachments
from .particles.contacts import ContactData, contact_frame, record_force_hessian

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


@wp.struct
class ParticleContactsOnBodies:
    """The step's coupled particle contacts as the body step gathers them."""

    count: wp.array[wp.int32]  # per body: coupled contacts filed this step (may exceed the capacity)
    slots: wp.array2d[wp.int32]  # per body: their record indices, up to the capacity
    contacts: ContactData  # the particle side's records (frame, material)
    record_count: wp.array[wp.int32]  # Contacts.soft_contact_count, (1,)
    particle_q: wp.array[wp.vec3]  # the particles' current iterate [m]
    particle_q_prev: wp.array[wp.vec3]  # positions at the step's start [m]


@wp.func
def _reaction_on_body(pc: ParticleContactsOnBodies, c: int, x_com: wp.vec3, dt: float):
    """Force, torque [N, N·m] and Hessian blocks of record ``c``'s reaction on its body (COM at ``x_com``)."""
    point, normal, disp = contact_frame(pc.contacts, c)
    f, h = record_force_hessian(pc.contacts, c, pc.particle_q, pc.particle_q_prev, dt)
    r = point - x_com
    s = wp.skew(r)
    return -f, wp.cross(r, -f), h, -h * s, -s * h * s


@wp.func
def body_has_particle_terms(pc: ParticleContactsOnBodies, b: int):
    """Whether body ``b`` takes particle contacts or attachments this step (the body step skips the sums if not)."""
    if pc.count[b] > 0:
        return True
    starts = pc.contacts.attach.body_start
    return b + 1 < starts.shape[0] and starts[b + 1] > starts[b]


@wp.func
def particle_contacts_on_body(pc: ParticleContactsOnBodies, b: int, x_com: wp.vec3, dt: float):
    """Sum of the particle contacts' reactions on body ``b``: force, torque and the 6x6 blocks (ll, lθ, θθ)."""
    f_l = wp.vec3(0.0)
    f_a = wp.vec3(0.0)
    h_ll = wp.mat33(0.0)
    h_la = wp.mat33(0.0)
    h_aa = wp.mat33(0.0)
    n = pc.count[b]
    if n <= pc.slots.shape[1]:
        for k in range(n):
            cf_l, cf_a, ch_ll, ch_la, ch_aa = _reaction_on_body(pc, pc.slots[b, k], x_com, dt)
            f_l += cf_l
            f_a += cf_a
            h_ll += ch_ll
            h_la += ch_la
            h_aa += ch_aa
    else:
        # The list overflowed: every record on this body, in record order.
        for c in range(pc.record_count[0]):
            if pc.contacts.body[c] == b:
                cf_l, cf_a, ch_ll, ch_la, ch_aa = _reaction_on_body(pc, c, x_com, dt)
                f_l += cf_l
                f_a += cf_a
                h_ll += ch_ll
                h_la += ch_la
                h_aa += ch_aa
    # Particle–body attachments on this body (.particles.attachments; none without them).
    af_l, af_a, ah_ll, ah_la, ah_aa = attachments_on_body(pc.contacts.attach, b, x_com, pc.particle_q, dt)
    return f_l + af_l, f_a + af_a, h_ll + ah_ll, h_la + ah_la, h_aa + ah_aa


def coupled_bodies(model, dynamic: np.ndarray) -> np.ndarray:
    """Bodies VBD integrates that have a shape colliding with particles (bool per body)."""
    coupled = np.zeros(int(model.body_count), bool)
    if not model.particle_count or not model.shape_count or not dynamic.any():
        return coupled
    collide = (model.shape_flags.numpy() & int(newton.ShapeFlags.COLLIDE_PARTICLES)) != 0
    body = model.shape_body.numpy()
    on_body = collide & (body >= 0)
    coupled[body[on_body]] = True
    return coupled & dynamic


def no_particle_contacts(body_count: int, device) -> ParticleContactsOnBodies:
    """A struct with no coupled contacts (every body's count 0), for steps without coupling."""
    pc = ParticleContactsOnBodies()
    pc.count = wp.zeros(max(body_count, 1), dtype=wp.int32, device=device)
    pc.slots = wp.zeros((1, 1), dtype=wp.int32, device=device)
    pc.record_count = wp.zeros(1, dtype=wp.int32, device=device)
    pc.particle_q = pc.particle_q_prev = wp.zeros(1, dtype=wp.vec3, device=device)
    cd = ContactData()
    cd.particle_contact_count = pc.count
    cd.particle_contact = pc.slots
    cd.body = pc.record_count
    cd.point = cd.normal = cd.disp = pc.particle_q
    cd.material = wp.zeros(1, dtype=wp.vec4, device=device)
    cd.k = wp.zeros(1, dtype=float, device=device)
    cd.ramp = 0
    cd.barrier = 0
    cd.corners = wp.full(1, wp.vec3i(-1, -1, -1), dtype=wp.vec3i, device=device)
    cd.weights = cd.normal
    cd.body_q = wp.zeros(1, dtype=wp.transform, device=device)
    cd.friction_epsilon = 0.0
    cd.attach = empty_attachments(device)
    pc.contacts = cd
    return pc


class BodyParticleCoupling:
    """Per-body lists of coupled particle contacts and the struct the body step reads (see the module)."""

    def __init__(self, model, coupled: np.ndarray, capacity: int):
        dev = model.device
        nb = max(int(model.body_count), 1)
        self.coupled = wp.array(np.resize(coupled.astype(np.int32), nb), dtype=wp.int32, device=dev)
        self.count = wp.zeros(nb, dtype=wp.int32, device=dev)
        self.slots = wp.zeros((nb, max(int(capacity), 1)), dtype=wp.int32, device=dev)
        self.overflow = wp.zeros(1, dtype=wp.int32, device=dev)
        self.data = no_particle_contacts(nb, dev)

    def begin_step(self) -> None:
        """Empty the per-body lists (the step's ``prepare_contacts`` refills them)."""
        self.count.zero_()

    def lists(self) -> tuple:
        """``(coupled, count, slots, overflow)`` as :func:`.particles.contacts.prepare_contacts` fills them."""
        return self.coupled, self.count, self.slots, self.overflow

    def bind(self, work, state_out, contacts) -> None:
        """Point the body step's struct at this step's records and particle iterate (after ``prepare_contacts``)."""
        pc = self.data
        pc.count = self.count
        pc.slots = self.slots
        pc.contacts = work.contact_data
        pc.particle_q = state_out.particle_q
        pc.particle_q_prev = work.particle_q_prev
        if contacts is not None and contacts.soft_contact_max > 0:
            pc.record_count = contacts.soft_contact_count

    def check_overflow(self) -> int:
        """Coupled contacts filed past a body's list so far (each applied through the scan; reads the device)."""
        return int(self.overflow.numpy()[0])
