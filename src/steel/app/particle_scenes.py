"""The shipped particle scenes for SolverVBD: a hanging cloth, a cloth draped over a sphere, a soft cube,
a cloth over free boxes.

Each builder returns a :class:`ParticleScene`: the finalized, coloured Newton model, the time step
and the solver options every VBD solver gets for it (ours and Newton's alike, so benchmarks compare
like with like). The cloth's side ``n`` (quads per side) sets the size: ``(n + 1)²`` particles.

* ``cloth_hang``: an ``n x n`` cloth of side 1.6 m, released horizontal at 2 m with one edge pinned,
  swinging down under gravity; no contacts. The material is the one Newton's VBD hanging-cloth example uses.
* ``cloth``: the same cloth, horizontal, dropped 0.2 m onto a sphere (radius 0.4 m) resting on the
  ground; it drapes and folds onto itself, so it runs with self-contact (contact distance 5 mm,
  detection reach 10 mm).
* ``soft_cube``: a 0.5 m tetrahedral cube (``n`` cells per side, rubber-like, E ≈ 1 MPa,
  ν = 0.3) dropped 0.1 m onto the ground.
* ``cloth_boxes``: the same cloth dropped 0.2 m over four free 0.4 m boxes (32 kg each) standing on
  the ground: particles and bodies push each other in the same solve (two-way coupling).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import warp as wp

import newton

from .catalog import PARTICLE_SCENES  # noqa: E402
CLOTH_SIDE = 1.6  # [m]
SPHERE_RADIUS = 0.4  # [m]
DROP_HEIGHT = 0.2  # [m] of the draped cloth above the sphere's top
AREAL_DENSITY = 10.0  # [kg/m²], that of Newton's hanging-cloth example (0.1 kg per 0.1 m cell)
FRAME_DT = 1.0 / 60.0  # [s]
SUBSTEPS = 10  # steps per frame
ITERATIONS = 10  # VBD sweeps per step


@dataclass
class ParticleScene:
    """A particle model and how to step it.

    Attributes:
        name: scene name (one of :data:`PARTICLE_SCENES`).
        model: the finalized, coloured model.
        dt: time step [s].
        solver_options: keyword options for the VBD solver (both ours and Newton's).
        contacts: whether the scene needs particle–shape contacts from ``newton.CollisionPipeline``.
    """

    name: str
    model: newton.Model
    dt: float = FRAME_DT / SUBSTEPS
    solver_options: dict = field(default_factory=dict)
    contacts: bool = False

    @property
    def tri_indices(self) -> np.ndarray:
        """Triangle indices ``(T, 3)`` (empty for a model without triangles)."""
        if self.model.tri_count == 0:
            return np.zeros((0, 3), dtype=np.int64)
        return self.model.tri_indices.numpy().reshape(-1, 3)


def _cloth(builder: newton.ModelBuilder, n: int, pos, rot, fix_left: bool, radius: float) -> None:
    cell = CLOTH_SIDE / n
    builder.add_cloth_grid(
        pos=pos, rot=rot, vel=wp.vec3(0.0, 0.0, 0.0), dim_x=n, dim_y=n, cell_x=cell, cell_y=cell,
        mass=AREAL_DENSITY * cell * cell,  # [kg] per particle
        fix_left=fix_left, tri_ke=1.0e3, tri_ka=1.0e3, tri_kd=1.0e-1, edge_ke=1.0e1, edge_kd=0.0,
        particle_radius=radius,
    )


def build_cloth_hang(n: int = 32, device=None) -> ParticleScene:
    """An ``n x n`` cloth pinned along one edge, hanging (no contacts)."""
    b = newton.ModelBuilder()
    _cloth(b, n, wp.vec3(0.0, 0.0, 2.0), wp.quat_identity(), True, 0.01)
    b.color(include_bending=True)
    return ParticleScene("cloth_hang", b.finalize(device=device), solver_options={"iterations": ITERATIONS})


def build_cloth_drape(n: int = 32, device=None, self_contact: bool = True) -> ParticleScene:
    """An ``n x n`` cloth dropped over a sphere on the ground, with self-contact."""
    b = newton.ModelBuilder()
    b.add_ground_plane()
    b.add_shape_sphere(-1, xform=wp.transform(wp.vec3(0.0, 0.0, SPHERE_RADIUS), wp.quat_identity()),
                       radius=SPHERE_RADIUS)
    half = 0.5 * CLOTH_SIDE
    _cloth(b, n, wp.vec3(-half, -half, 2.0 * SPHERE_RADIUS + DROP_HEIGHT), wp.quat_identity(), False, 0.005)
    opts = {"iterations": ITERATIONS}
    if self_contact:
        opts.update(particle_enable_self_contact=True, particle_self_contact_radius=0.005,
                    particle_self_contact_margin=0.01)
    return _cloth_contact_scene("cloth", b, device, opts)


def _cloth_contact_scene(name: str, b: newton.ModelBuilder, device, opts: dict) -> ParticleScene:
    """Colour and finalize a cloth-with-contacts scene; particle contacts ke 1e4 N/m, kd 1e-2 N·s/m, mu 0.5."""
    b.color(include_bending=True)
    model = b.finalize(device=device)
    model.soft_contact_ke = 1.0e4
    model.soft_contact_kd = 1.0e-2
    model.soft_contact_mu = 0.5
    return ParticleScene(name, model, solver_options=opts, contacts=True)


def build_soft_cube(n: int = 4, device=None) -> ParticleScene:
    """A 0.5 m tetrahedral cube of ``n`` cells per side dropped 0.1 m onto the ground."""
    b = newton.ModelBuilder()
    b.add_ground_plane()
    young, poisson = 1.0e6, 0.3  # [Pa], rubber-like
    mu = young / (2.0 * (1.0 + poisson))
    lam = young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson))
    cell = 0.5 / n
    b.add_soft_grid(pos=wp.vec3(-0.25, -0.25, 0.1), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0),
                    dim_x=n, dim_y=n, dim_z=n, cell_x=cell, cell_y=cell, cell_z=cell, density=1.0e3,
                    k_mu=mu, k_lambda=lam, k_damp=1.0e-4, particle_radius=0.01)
    b.color()
    model = b.finalize(device=device)
    model.soft_contact_ke = 1.0e5
    model.soft_contact_kd = 1.0e-3
    model.soft_contact_mu = 0.5
    return ParticleScene("soft_cube", model, solver_options={"iterations": ITERATIONS}, contacts=True)


BOX_HALF = 0.2  # [m] half edge of the cloth_boxes boxes
BOX_DENSITY = 500.0  # [kg/m³]: 32 kg per box


def build_cloth_boxes(n: int = 32, device=None) -> ParticleScene:
    """An ``n x n`` cloth dropped over four free boxes on the ground (two-way body–particle contact)."""
    b = newton.ModelBuilder()
    stiff = newton.ModelBuilder.ShapeConfig(ke=1.0e5, mu=0.5)  # ground and boxes: mm-scale rest depth
    b.add_ground_plane(cfg=stiff)
    box = newton.ModelBuilder.ShapeConfig(ke=1.0e5, mu=0.5, density=BOX_DENSITY)
    for x, y in ((-0.4, -0.4), (0.4, -0.4), (-0.4, 0.4), (0.4, 0.4)):
        body = b.add_body(xform=wp.transform(wp.vec3(x, y, BOX_HALF), wp.quat_identity()))
        b.add_shape_box(body, hx=BOX_HALF, hy=BOX_HALF, hz=BOX_HALF, cfg=box)
    half = 0.5 * CLOTH_SIDE
    _cloth(b, n, wp.vec3(-half, -half, 2.0 * BOX_HALF + DROP_HEIGHT), wp.quat_identity(), False, 0.01)
    return _cloth_contact_scene("cloth_boxes", b, device, {"iterations": ITERATIONS})


def build_particle_scene(name: str, size: int | None = None, device=None) -> ParticleScene:
    """Scene ``name`` (see :data:`PARTICLE_SCENES`) with ``size`` quads (cloth) or cells (cube) per side."""
    if name == "cloth":
        return build_cloth_drape(size or 32, device)
    if name == "cloth_hang":
        return build_cloth_hang(size or 32, device)
    if name == "soft_cube":
        return build_soft_cube(size or 4, device)
    if name == "cloth_boxes":
        return build_cloth_boxes(size or 32, device)
    raise KeyError(f"unknown particle scene {name!r}; choose from {', '.join(PARTICLE_SCENES)}")
