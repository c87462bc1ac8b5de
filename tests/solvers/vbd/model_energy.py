"""Float64 NumPy energy of a whole particle model, independent of the solver's Warp code.

The per-element energies are the NumPy twins of ``test_elastic`` (written from the formulas: stable
Neo-Hookean membrane, dihedral bending, stable Neo-Hookean tetrahedra, springs, each with its
dissipation potential). This module sums them over Newton's model arrays and adds either

* the implicit-Euler inertia of one step, ``G(x) = sum m/(2 dt²) |x - y|² + E(x) + D(x; x_t)``
  with ``y = x_t + dt v_t + dt² g`` (the objective one solver step minimizes), or
* gravity for the static problem, ``U(x) = E(x) - sum m g·x``.

Derivatives are finite differences taken element by element and batched over elements (an element
has at most 12 coordinates, so a gradient costs 24 batched energy calls): central differences of
the energy with ``h = 1e-6`` for gradients (truncation ~h², roundoff ~1e-16/h, both far below the
float32 the solver runs in) and central differences of those gradients with ``h = 1e-4`` for the
12x12 element Hessians, which only steer the Newton solve. Only ACTIVE particles with mass are
unknowns; the others are fixed where they are. Elements without stiffness or damping (the surface
triangles and edges ``add_soft_grid`` adds for rendering) are left out: their energy is zero.
"""

from __future__ import annotations

import numpy as np

import newton

from .elastic_twins import np_bending_energy, np_spring_energy, np_tet_energy, np_triangle_energy

GRAD_H = 1.0e-6  # [m]
HESS_H = 1.0e-4  # [m]


class ModelEnergy:
    """Energy, gradient and Hessian [J, N, N/m] of a model's particles as a function of positions.

    Args:
        model: a finalized :class:`newton.Model` (its element arrays are read once).
        dt: step [s] for the damping potentials and the inertia; ``None``: static, no damping.
        state: with ``dt``, the state at the start of the step (``x_t``, ``v_t``).
    """

    def __init__(self, model, dt: float | None = None, state=None):
        self.dt = dt
        self.q0 = model.particle_q.numpy().astype(np.float64)
        self.mass = model.particle_mass.numpy().astype(np.float64)
        flags = model.particle_flags.numpy()
        self.free = ((flags & int(newton.ParticleFlags.ACTIVE)) != 0) & (self.mass > 0.0)
        self.gravity = model.gravity.numpy()[0].astype(np.float64)
        self.families = []
        if model.tri_count and np.any(model.tri_materials.numpy()[:, :3] != 0.0):
            tri = model.tri_indices.numpy()
            mat = model.tri_materials.numpy().astype(np.float64)[:, :3]
            dm, area = model.tri_poses.numpy().astype(np.float64), model.tri_areas.numpy().astype(np.float64)
            self.families.append((tri, lambda x, p, s: np_triangle_energy(x, p, dm[s], area[s], mat[s], self._dt, "snh")))
        if model.edge_count:
            edge = model.edge_indices.numpy()
            keep = (edge[:, 0] >= 0) & (edge[:, 1] >= 0) & np.any(model.edge_bending_properties.numpy() != 0.0, axis=1)
            prm = np.column_stack([model.edge_rest_angle.numpy(), model.edge_rest_length.numpy(),
                                   model.edge_bending_properties.numpy()]).astype(np.float64)[keep]
            if keep.any():
                self.families.append((edge[keep], lambda x, p, s: np_bending_energy(x, p, prm[s], self._dt)))
        if model.tet_count:
            tet = model.tet_indices.numpy()
            dm, mat = model.tet_poses.numpy().astype(np.float64), model.tet_materials.numpy().astype(np.float64)
            self.families.append((tet, lambda x, p, s: np_tet_energy(x, p, dm[s], mat[s], self._dt)))
        if model.spring_count:
            spring = model.spring_indices.numpy().reshape(-1, 2)
            prm = np.column_stack([model.spring_rest_length.numpy(), model.spring_stiffness.numpy(),
                                   model.spring_damping.numpy()]).astype(np.float64)
            self.families.append((spring, lambda x, p, s: np_spring_energy(x, p, prm[s], self._dt)))
        if dt is None:
            self.prev = self.q0
            self.target = None
        else:
            self.prev = state.particle_q.numpy().astype(np.float64)
            v = state.particle_qd.numpy().astype(np.float64)
            self.target = self.prev + dt * v + dt * dt * self.gravity

    @property
    def _dt(self):
        # The twins switch damping off for dt <= 0 only through kd/dt; a huge dt makes it vanish.
        return self.dt if self.dt is not None else 1.0e30

    # -- totals -------------------------------------------------------------------------------------

    def energy(self, x: np.ndarray) -> float:
        """``G(x)`` with ``dt``, else ``U(x)`` [J]; ``x`` (particle, 3) [m]."""
        total = 0.0
        for idx, fn in self.families:
            total += float(np.sum(fn(x[idx], self.prev[idx], slice(None))))
        m = self.mass[self.free]
        if self.target is None:
            total -= float(np.sum(m * (x[self.free] @ self.gravity)))
        else:
            d = x[self.free] - self.target[self.free]
            total += float(np.sum(0.5 * m / self.dt**2 * np.sum(d * d, axis=1)))
        return total

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """``dG/dx`` (or ``dU/dx``) [N], (particle, 3), zero on fixed particles."""
        g = np.zeros_like(x)
        for idx, fn in self.families:
            xe, pe = x[idx], self.prev[idx]
            k = idx.shape[1]
            for v in range(k):
                for a in range(3):
                    xp, xm = xe.copy(), xe.copy()
                    xp[:, v, a] += GRAD_H
                    xm[:, v, a] -= GRAD_H
                    np.add.at(g[:, a], idx[:, v], (fn(xp, pe, slice(None)) - fn(xm, pe, slice(None))) / (2 * GRAD_H))
        m = self.mass[:, None]
        g += -m * self.gravity if self.target is None else m / self.dt**2 * (x - self.target)
        g[~self.free] = 0.0
        return g

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """Dense ``d²G/dx²`` over the free coordinates [N/m], (3 n_free, 3 n_free)."""
        slot = -np.ones(len(x), dtype=int)
        slot[self.free] = np.arange(int(self.free.sum()))
        n = 3 * int(self.free.sum())
        hess = np.zeros((n, n))
        for idx, fn in self.families:
            k = idx.shape[1]
            xe, pe = x[idx], self.prev[idx]
            blocks = np.zeros((len(idx), 3 * k, 3 * k))
            for v in range(k):
                for a in range(3):
                    xp, xm = xe.copy(), xe.copy()
                    xp[:, v, a] += HESS_H
                    xm[:, v, a] -= HESS_H
                    blocks[:, :, 3 * v + a] = (self._element_gradient(fn, xp, pe, k)
                                               - self._element_gradient(fn, xm, pe, k)) / (2 * HESS_H)
            rows = (3 * slot[idx][:, :, None] + np.arange(3)).reshape(len(idx), 3 * k)
            valid = (slot[idx][:, :, None] >= 0).repeat(3, axis=2).reshape(len(idx), 3 * k)
            for e in range(len(idx)):
                r = rows[e][valid[e]]
                hess[np.ix_(r, r)] += 0.5 * (blocks[e] + blocks[e].T)[np.ix_(valid[e], valid[e])]
        if self.target is not None:
            hess += np.diag(np.repeat(self.mass[self.free], 3)) / self.dt**2
        return hess

    @staticmethod
    def _element_gradient(fn, xe, pe, k):
        out = np.zeros((len(xe), 3 * k))
        for v in range(k):
            for a in range(3):
                xp, xm = xe.copy(), xe.copy()
                xp[:, v, a] += GRAD_H
                xm[:, v, a] -= GRAD_H
                out[:, 3 * v + a] = (fn(xp, pe, slice(None)) - fn(xm, pe, slice(None))) / (2 * GRAD_H)
        return out

    # -- Newton ---------------------------------------------------------------------------------------

    def minimize(self, x0: np.ndarray, tol: float = 1.0e-8, max_iter: int = 50) -> np.ndarray:
        """A minimizer of the energy near ``x0`` by Newton's method with backtracking [m].

        Stops when the largest gradient entry is below ``tol`` [N]; raises if it does not get there.
        """
        x = x0.astype(np.float64).copy()
        for _ in range(max_iter):
            g = self.gradient(x)
            if np.abs(g).max() < tol:
                return x
            h = self.hessian(x)
            w, q = np.linalg.eigh(h)
            step = -(q @ ((q.T @ g[self.free].ravel()) / np.maximum(np.abs(w), 1.0e-9 * np.abs(w).max())))
            e0, t = self.energy(x), 1.0
            while t > 1.0e-8:
                trial = x.copy()
                trial[self.free] += t * step.reshape(-1, 3)
                if self.energy(trial) <= e0:
                    break
                t *= 0.5
            x = trial
        raise AssertionError(f"Newton did not converge: max |gradient| = {np.abs(self.gradient(x)).max():.3e} N")
