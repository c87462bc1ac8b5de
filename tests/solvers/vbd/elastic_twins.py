"""Float64 NumPy twins of the VBD element energies, Warp evaluation kernels and random configurations.

Shared by the element-law tests (``test_elastic.py``) and the whole-model energy (``model_energy.py``);
the tolerances and their reasons are stated in ``test_elastic.py``.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from steel.solvers.vbd.particles import elastic

FORCE_RTOL = 1.0e-4
HESS_RTOL = 2.0e-4
DT = 0.01  # [s]
N_CONFIGS = 48


# ------------------------------------------------------------------------------------------------
# Warp evaluation kernels: one thread per (configuration, vertex)


@wp.kernel
def _eval_springs(
    x: wp.array2d[wp.vec3],
    p: wp.array2d[wp.vec3],
    prm: wp.array[wp.vec3],  # rest length, ke, kd
    dt: float,
    force_out: wp.array2d[wp.vec3],
    hess_out: wp.array2d[wp.mat33],
    energy_out: wp.array[float],
):
    i, v = wp.tid()
    f, h = elastic.spring_force_hessian(v, x[i, 0], x[i, 1], p[i, 0], p[i, 1], prm[i][0], prm[i][1], prm[i][2], dt)
    force_out[i, v] = f
    hess_out[i, v] = h
    if v == 0:
        energy_out[i] = elastic.spring_energy(x[i, 0], x[i, 1], p[i, 0], p[i, 1], prm[i][0], prm[i][1], prm[i][2], dt)


@wp.kernel
def _eval_triangles(
    x: wp.array2d[wp.vec3],
    p: wp.array2d[wp.vec3],
    dm_inv: wp.array[wp.mat22],
    area: wp.array[float],
    prm: wp.array[wp.vec3],  # mu, lambda, kd
    dt: float,
    snh: int,  # 0: StVK, 1: stable Neo-Hookean
    force_out: wp.array2d[wp.vec3],
    hess_out: wp.array2d[wp.mat33],
    exact_out: wp.array2d[wp.mat33],
    energy_out: wp.array[float],
):
    i, v = wp.tid()
    x0, x1, x2, p0, p1, p2 = x[i, 0], x[i, 1], x[i, 2], p[i, 0], p[i, 1], p[i, 2]
    mu, lam, kd = prm[i][0], prm[i][1], prm[i][2]
    if snh == 0:
        f, h = elastic.triangle_force_hessian(v, x0, x1, x2, p0, p1, p2, dm_inv[i], area[i], mu, lam, kd, dt)
        _g, he = elastic._triangle_elastic(v, x0, x1, x2, dm_inv[i], area[i], mu, lam)
        e = elastic.triangle_energy(x0, x1, x2, p0, p1, p2, dm_inv[i], area[i], mu, lam, kd, dt)
    else:
        f, h = elastic.triangle_snh_force_hessian(v, x0, x1, x2, p0, p1, p2, dm_inv[i], area[i], mu, lam, kd, dt)
        _g, he = elastic._triangle_snh_elastic(v, x0, x1, x2, dm_inv[i], area[i], mu, lam)
        e = elastic.triangle_snh_energy(x0, x1, x2, p0, p1, p2, dm_inv[i], area[i], mu, lam, kd, dt)
    force_out[i, v] = f
    hess_out[i, v] = h
    exact_out[i, v] = he
    if v == 0:
        energy_out[i] = e


@wp.kernel
def _eval_bending(
    x: wp.array2d[wp.vec3],
    p: wp.array2d[wp.vec3],
    prm: wp.array2d[float],  # rest angle, rest length, ke, kd
    dt: float,
    force_out: wp.array2d[wp.vec3],
    hess_out: wp.array2d[wp.mat33],
    energy_out: wp.array[float],
    angle_out: wp.array[float],
):
    i, v = wp.tid()
    x0, x1, x2, x3 = x[i, 0], x[i, 1], x[i, 2], x[i, 3]
    p0, p1, p2, p3 = p[i, 0], p[i, 1], p[i, 2], p[i, 3]
    angle, length, ke, kd = prm[i, 0], prm[i, 1], prm[i, 2], prm[i, 3]
    f, h = elastic.bending_force_hessian(v, x0, x1, x2, x3, p0, p1, p2, p3, angle, length, ke, kd, dt)
    force_out[i, v] = f
    hess_out[i, v] = h
    if v == 0:
        energy_out[i] = elastic.bending_energy(x0, x1, x2, x3, p0, p1, p2, p3, angle, length, ke, kd, dt)
        angle_out[i] = elastic.dihedral_angle(x0, x1, x2, x3)


@wp.kernel
def _eval_tets(
    x: wp.array2d[wp.vec3],
    p: wp.array2d[wp.vec3],
    dm_inv: wp.array[wp.mat33],
    prm: wp.array[wp.vec3],  # mu, lambda, kd
    dt: float,
    force_out: wp.array2d[wp.vec3],
    hess_out: wp.array2d[wp.mat33],
    energy_out: wp.array[float],
    volume_out: wp.array[float],
):
    i, v = wp.tid()
    mu, lam, kd = prm[i][0], prm[i][1], prm[i][2]
    vol = elastic.tet_rest_volume(dm_inv[i])
    x0, x1, x2, x3 = x[i, 0], x[i, 1], x[i, 2], x[i, 3]
    p0, p1, p2, p3 = p[i, 0], p[i, 1], p[i, 2], p[i, 3]
    f, h = elastic.tet_force_hessian(v, x0, x1, x2, x3, p0, p1, p2, p3, dm_inv[i], vol, mu, lam, kd, dt)
    force_out[i, v] = f
    hess_out[i, v] = h
    if v == 0:
        energy_out[i] = elastic.tet_energy(x0, x1, x2, x3, p0, p1, p2, p3, dm_inv[i], vol, mu, lam, kd, dt)
        volume_out[i] = vol


@wp.kernel
def _eval_project(h: wp.array[wp.mat33], out: wp.array[wp.mat33]):
    i = wp.tid()
    out[i] = elastic.project_spd(h[i])


def _f32(a):
    return np.ascontiguousarray(a, dtype=np.float32)


def _run(kernel, vertex_count, inputs, outputs):
    """Launch ``kernel`` over (configuration, vertex); ``inputs`` are (array, dtype) or scalars,
    ``outputs`` (dtype, per_vertex) pairs; returns the outputs as NumPy arrays."""
    n = len(inputs[0][0])
    args = [wp.array(_f32(a), dtype=t, device="cpu") if isinstance(a, np.ndarray) else a for a, t in inputs]
    outs = [wp.zeros((n, vertex_count) if per_vertex else n, dtype=t, device="cpu") for t, per_vertex in outputs]
    wp.launch(kernel, dim=(n, vertex_count), inputs=args, outputs=outs, device="cpu")
    return [o.numpy() for o in outs]


BLOCKS = [(wp.vec3, True), (wp.mat33, True)]  # force, hessian per vertex


def run_springs(x, p, prm, dt=DT):
    inputs = [(x, wp.vec3), (p, wp.vec3), (prm, wp.vec3), (dt, None)]
    return _run(_eval_springs, 2, inputs, [*BLOCKS, (float, False)])


def run_triangles(x, p, dm_inv, area, prm, dt=DT, law="stvk"):
    inputs = [(x, wp.vec3), (p, wp.vec3), (dm_inv, wp.mat22), (area, float), (prm, wp.vec3), (dt, None)]
    inputs.append((int(law == "snh"), None))
    return _run(_eval_triangles, 3, inputs, [*BLOCKS, (wp.mat33, True), (float, False)])


def run_bending(x, p, prm, dt=DT):
    inputs = [(x, wp.vec3), (p, wp.vec3), (prm, float), (dt, None)]
    return _run(_eval_bending, 4, inputs, [*BLOCKS, (float, False), (float, False)])


def run_tets(x, p, dm_inv, prm, dt=DT):
    inputs = [(x, wp.vec3), (p, wp.vec3), (dm_inv, wp.mat33), (prm, wp.vec3), (dt, None)]
    return _run(_eval_tets, 4, inputs, [*BLOCKS, (float, False), (float, False)])


# ------------------------------------------------------------------------------------------------
# float64 NumPy twins of the energies (batched over the first axis), written from the formulas


def np_spring_energy(x, p, prm, dt=DT):
    rest, ke, kd = prm[:, 0], prm[:, 1], prm[:, 2]
    l = np.linalg.norm(x[:, 1] - x[:, 0], axis=-1)
    lp = np.linalg.norm(p[:, 1] - p[:, 0], axis=-1)
    return 0.5 * ke * (l - rest) ** 2 + 0.5 * kd / dt * (l - lp) ** 2


def _green_2(x, dm_inv):
    ds = np.stack([x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]], axis=-1)  # (B, 3, 2)
    f = ds @ dm_inv
    return 0.5 * (np.swapaxes(f, 1, 2) @ f - np.eye(2))


def np_triangle_energy(x, p, dm_inv, area, prm, dt=DT, law="stvk"):
    mu, lam, kd = prm[:, 0], prm[:, 1], prm[:, 2]
    e = _green_2(x, dm_inv)
    de = e - _green_2(p, dm_inv)
    damping = 2.0 * kd * area / dt * np.sum(de * de, axis=(1, 2))
    if law == "stvk":
        tr = np.trace(e, axis1=1, axis2=2)
        return area * (mu * np.sum(e * e, axis=(1, 2)) + 0.5 * lam * tr**2) + damping
    # stable Neo-Hookean from C = F^T F = 2E + I: I_C = tr C, J = sqrt(det C), lam' = lam + mu
    c = 2.0 * e + np.eye(2)
    j = np.sqrt(np.linalg.det(c))
    psi = 0.5 * mu * (np.trace(c, axis1=1, axis2=2) - 2.0) - mu * (j - 1.0) + 0.5 * (lam + mu) * (j - 1.0) ** 2
    return area * psi + damping


def np_dihedral(x):
    e = x[:, 3] - x[:, 2]
    n1 = np.cross(x[:, 2] - x[:, 0], x[:, 3] - x[:, 0])
    n2 = np.cross(x[:, 3] - x[:, 1], x[:, 2] - x[:, 1])
    s = np.einsum("bi,bi->b", np.cross(n1, n2), e) / np.linalg.norm(e, axis=-1)
    return np.arctan2(s, np.einsum("bi,bi->b", n1, n2))


def _wrap(a):
    return (a + np.pi) % (2.0 * np.pi) - np.pi


def np_bending_energy(x, p, prm, dt=DT):
    rest_angle, rest_length, ke, kd = prm.T
    th = np_dihedral(x)
    return 0.5 * ke * rest_length * _wrap(th - rest_angle) ** 2 + 0.5 * kd * rest_length / dt * _wrap(
        th - np_dihedral(p)
    ) ** 2


def _tet_f(x, dm_inv):
    ds = np.stack([x[:, 1] - x[:, 0], x[:, 2] - x[:, 0], x[:, 3] - x[:, 0]], axis=-1)
    return ds @ dm_inv


def np_tet_energy(x, p, dm_inv, prm, dt=DT):
    """The paper's form ``mu/2 (I_C - 3) + lam/2 (J - alpha)^2``, ``alpha = 1 + mu/lam``, ``lam = lambda + mu``."""
    mu, kd = prm[:, 0], prm[:, 2]
    lam = prm[:, 1] + mu
    vol = 1.0 / (6.0 * np.abs(np.linalg.det(dm_inv)))
    f = _tet_f(x, dm_inv)
    fp = _tet_f(p, dm_inv)
    ic = np.sum(f * f, axis=(1, 2))
    j = np.linalg.det(f)
    alpha = 1.0 + mu / lam
    de = 0.5 * (np.swapaxes(f, 1, 2) @ f - np.swapaxes(fp, 1, 2) @ fp)
    return vol * (0.5 * mu * (ic - 3.0) + 0.5 * lam * (j - alpha) ** 2) + 2.0 * kd * vol / dt * np.sum(
        de * de, axis=(1, 2)
    )


def fd_gradient(energy, x, v, h=1.0e-6):
    """Central differences of ``energy(x)`` with respect to vertex ``v``: (B, 3)."""
    g = np.zeros((x.shape[0], 3))
    for a in range(3):
        xp, xm = x.copy(), x.copy()
        xp[:, v, a] += h
        xm[:, v, a] -= h
        g[:, a] = (energy(xp) - energy(xm)) / (2.0 * h)
    return g


def fd_hessian(energy, x, v, h=1.0e-4):
    """4-point second differences of ``energy(x)`` in vertex ``v``: (B, 3, 3)."""
    hess = np.zeros((x.shape[0], 3, 3))
    for a in range(3):
        for b in range(3):
            vals = []
            for sa, sb in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                y = x.copy()
                y[:, v, a] += sa * h
                y[:, v, b] += sb * h
                vals.append(energy(y))
            hess[:, a, b] = (vals[0] - vals[1] - vals[2] + vals[3]) / (4.0 * h * h)
    return hess


def np_project_spd(h):
    d, q = np.linalg.eigh(0.5 * (h + np.swapaxes(h, -1, -2)))
    return q @ (np.maximum(d, 0.0)[..., None] * np.swapaxes(q, -1, -2))


def rel_err(a, ref):
    """Per-element error of blocks ``a`` vs ``ref`` (B, V, ...), relative to the element's largest block."""
    axes = tuple(range(2, a.ndim))
    scale = np.max(np.sqrt(np.sum(ref * ref, axis=axes)), axis=1)
    return np.max(np.sqrt(np.sum((a - ref) ** 2, axis=axes)), axis=1) / scale


def min_eig(h):
    return np.linalg.eigvalsh(0.5 * (h + np.swapaxes(h, -1, -2)).astype(np.float64)).min()


def report(name, value):
    print(f"\n{name}: {value:.2e}")


# ------------------------------------------------------------------------------------------------
# Random configurations


def random_rotation(rng, n):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=1,
    )


def rigidly_moved(rng, x):
    """``x`` rotated by a random finite rotation about a random centre and translated: (B, V, 3)."""
    n = x.shape[0]
    r = random_rotation(rng, n)
    centre = rng.uniform(-1.0, 1.0, size=(n, 1, 3))
    return np.einsum("bij,bvj->bvi", r, x - centre) + centre + rng.uniform(-0.5, 0.5, size=(n, 1, 3))


def triangle_rest(rng, n):
    """Rest triangles in 3D with their ``Dm^-1`` in a 2D frame and area, as Newton builds them."""
    out_x, out_dm, out_a = [], [], []
    while len(out_x) < n:
        x = rng.uniform(-1.0, 1.0, size=(3, 3))
        e1, e2 = x[1] - x[0], x[2] - x[0]
        nrm = np.cross(e1, e2)
        area = 0.5 * np.linalg.norm(nrm)
        if area < 0.2 * max(e1 @ e1, e2 @ e2, (e2 - e1) @ (e2 - e1)) or area < 0.05:
            continue  # slivers make FD tolerances meaningless
        u = e1 / np.linalg.norm(e1)
        w = np.cross(nrm / np.linalg.norm(nrm), u)
        dm = np.array([[e1 @ u, e2 @ u], [e1 @ w, e2 @ w]])
        out_x.append(x)
        out_dm.append(np.linalg.inv(dm))
        out_a.append(area)
    return np.array(out_x), np.array(out_dm), np.array(out_a)


def tet_rest(rng, n):
    out_x, out_dm = [], []
    while len(out_x) < n:
        x = rng.uniform(-1.0, 1.0, size=(4, 3))
        dm = np.stack([x[1] - x[0], x[2] - x[0], x[3] - x[0]], axis=-1)
        edges = [np.linalg.norm(x[i] - x[j]) for i in range(4) for j in range(i)]
        if np.linalg.det(dm) / 6.0 < 0.05 * max(edges) ** 3:
            continue  # negative (flip it by skipping) or sliver
        out_x.append(x)
        out_dm.append(np.linalg.inv(dm))
    return np.array(out_x), np.array(out_dm)


def deformed(rng, rest, amplitude):
    """Rest shape rigidly moved and then perturbed per vertex by up to ``amplitude`` [m]."""
    return rigidly_moved(rng, rest) + rng.uniform(-amplitude, amplitude, size=rest.shape)


def hinge_configs(rng, n):
    """Two-triangle hinges (o0, o1, v0, v1) with well-shaped wings and folds away from +-pi."""
    out = []
    while len(out) < n:
        x = rng.uniform(-1.0, 1.0, size=(4, 3))
        e = x[3] - x[2]
        n1 = np.cross(x[2] - x[0], x[3] - x[0])
        n2 = np.cross(x[3] - x[1], x[2] - x[1])
        el = np.linalg.norm(e)
        if el < 0.5 or np.linalg.norm(n1) < 0.4 * el or np.linalg.norm(n2) < 0.4 * el:
            continue
        if abs(np_dihedral(x[None])[0]) > 2.5:
            continue
        out.append(x)
    return np.array(out)
