"""Adhesion (``steel:adhesion``; MuJoCo's geom adhesion): a pull on each contact's normal row.

A contact pulls with ``A`` [N], the sum of its two shapes' ``steel:adhesion``, whenever it has a
row, that is while it lies within the pair's gap. The pull enters as the normal row's preload
``-A dt`` [N·s]: the sweep applies it once before iterating, and the row's own impulse
``lambda_n >= 0`` is solved in the unchanged contact cone (``sweep/pgs.py``). So:

* the net normal impulse ``lambda_n - A dt`` can reach ``-A dt``; resting penetration is unchanged
  (the row still targets the same depth);
* friction stays bounded by ``mu lambda_n = mu (net + A dt)``; within an open gap ``lambda_n`` is
  zero until the pull would close the gap within the step, so the pair attracts without friction;
* a body pulled away separates only when the pull exceeds the sum over its contact points of
  ``A`` plus the other loads: pull-off grows with the number of contact points.

Phases, as the other row modules: the per-contact pull (:func:`adhesion_pull`, read from the
model's array every step, so writing zero releases and writing the value engages again), written
as the preload of the normal row by ``contacts.py``; the sweep applies it; the observables report
the net force ``(lambda_n + preload) / dt``.
"""

from __future__ import annotations

import warp as wp


@wp.func
def adhesion_pull(s0: int, s1: int, enabled: int, shape_adhesion: wp.array[float]):
    """Pull [N] of a contact between shapes ``s0`` and ``s1``: the sum of their adhesion (0 when disabled)."""
    if enabled == 0:
        return 0.0
    return shape_adhesion[s0] + shape_adhesion[s1]


def check_adhesion_options(options, *, torsion: bool = False) -> None:
    """Raise ``NotImplementedError`` for the options the attribute's documentation excludes with adhesion.

    Sleeping, contact compliance and contact regularization > 0 each change the normal row the pull
    is solved against, and the seed leaves those combinations undefined; so does contact torsion
    (``torsion``: some shape has a positive ``steel:min_torsional_patch_radius``), whose budget
    would have to decide between the net and the preloaded normal impulse.
    """
    chosen = []
    if torsion:
        chosen.append("contact torsion (a positive steel:min_torsional_patch_radius)")
    if options.enable_sleeping:
        chosen.append("enable_sleeping=True")
    if options.contact_compliance:
        chosen.append("contact_compliance=True")
    if options.contact_regularization > 0.0:
        chosen.append(f"contact_regularization={options.contact_regularization!r}")
    if chosen:
        raise NotImplementedError(f"SolverSteel: steel:adhesion cannot be combined with {', '.join(chosen)}")
