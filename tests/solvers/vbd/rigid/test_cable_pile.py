"""The shipped cable pile (``steel run cable_pile``): crossed layers of wavy cables dropped on the ground.

Known answer: a settled pile of ``L`` layers of cables of radius ``r`` lies between the ground and
``L`` diameters: the lowest segment centre at ``r`` (no cable sinks into the ground) and the highest
under ``(2 L - 1) r`` plus the waviness the crossing layers leave; once landed it lies still.
Measured (2 layers of 2 cables): landed at 0.3 s, the top layer draped over the bottom one by 1.4 s,
centres between 12.0 and 36.6 mm at 1.5 s (``r`` = 12 mm).
"""

from __future__ import annotations

import numpy as np
import pytest

import newton
from steel.app import scenes
from steel.app.cli import EXIT_BAD_INPUT, main
from steel.app.runner import run_scene
from steel.solvers.vbd import SolverVBD

LAYERS, LANES = 2, 2


@pytest.fixture(scope="module")
def settled_pile():
    sc = scenes.build_cable_pile(1, "cpu", layers=LAYERS, lanes=LANES)
    solver = SolverVBD(sc.model, rigid_contact_history=True)
    pipeline = newton.CollisionPipeline(sc.model, contact_matching="latest")
    contacts = pipeline.contacts()
    s0, s1 = sc.model.state(), sc.model.state()
    before = None
    for i in range(900):  # 1.5 s: the lowest layer lands at about 0.3 s; the top one has draped by 1.4 s
        if i == 840:
            before = s0.body_q.numpy().copy()
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, None, contacts, sc.dt)
        s0, s1 = s1, s0
    return sc, s0, solver, before


def test_the_pile_settles_on_the_ground_within_its_layers(settled_pile):
    sc, state, solver, before = settled_pile
    q = state.body_q.numpy()
    assert sc.model.body_count == LAYERS * LANES * scenes.CABLE_SEGMENTS
    assert np.isfinite(q).all()
    r = scenes.CABLE_RADIUS
    # Contacts are penalty springs (ke 1e5 N/m on 2.3 g segments): a few tenths of a mm of overlap at rest.
    assert q[:, 2].min() > r - 1.0e-3
    # The second layer rests on the first: its centres near 3 r; waviness lifts a crossing by at most ~r.
    assert q[:, 2].max() < (2 * LAYERS - 1) * r + r
    assert q[:, 2].max() > 2.0 * r  # the top layer lies on the bottom one, not beside it on the ground
    # Still: over the last 0.1 s no segment moves 2 mm (it fell at ~2.4 m/s).
    assert np.linalg.norm(q[:, :3] - before[:, :3], axis=1).max() < 2.0e-3
    assert int(solver.check_rigid_contact_overflow()) == 0


def test_steel_run_cable_pile_uses_vbd_and_refuses_other_solvers(tmp_path, capsys):
    with pytest.raises(ValueError, match="SolverVBD only"):
        run_scene("cable_pile", "steel", 1, 0.01, out_dir=tmp_path / "never")
    assert main(["run", "cable_pile", "--solver", "featherstone", "--out", str(tmp_path / "no")]) == EXIT_BAD_INPUT
    assert "SolverVBD only" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()
