"""Construction-time warning for contact pairs whose mass ratio the row sweep cannot hold.

Projected Gauss-Seidel passes impulse between two touching bodies a fraction per sweep that shrinks
with their mass ratio, so a light body under a heavy one needs more sweeps the larger the ratio.
Measured with the sweep alone (two 0.2 m boxes stacked on the ground, 8 kg under the heavier one, dt = 1/240 s,
2 s), the stack sinks by
(``tests/solvers/steel/test_mass_ratio.py::test_the_sweep_alone_sinks_as_the_mass_ratio_table_says``)

    iterations   ratio 10    30        50        100       300
    4            4.7 mm      17.5 mm   31.4 mm   77.9 mm   200 mm, falls through
    12           0.95 mm     4.5 mm    8.6 mm    19.5 mm   77.2 mm, hops
    50           0.072 mm    0.57 mm   1.15 mm   2.6 mm    13.2 mm

so the sweep holds to about 1-3 % of the box while the ratio stays under ``MASS_RATIO_PER_ITERATION``
times ``iterations``, and beyond that sinks and hops. A load carried along gravity no longer depends
on it: the bottom-up shock pass (``sweep/shock.py``) holds such stacks at any measured ratio (1:10 to 1:10^6,
the 20-box 1:100 stack; ``test_heavy_on_light_stacks_hold_at_the_default_iterations``). What still fails is a
load carried sideways, through contacts whose normal is within 60 degrees of horizontal, which the pass leaves
alone: a light box pushed into a wall by a heavy one on a frictionless ground (one body weight of push, 1 s)
lets the heavy box move 0.93 mm at 1:10 and push it through at 1:100
(``test_a_load_carried_sideways_is_left_to_the_sweep``). Which pairs will carry what is not known at
construction, so the warning fires on the ratio and says "may".

The pairs are Newton's candidate shape pairs (``model.shape_contact_pairs``) between two dynamic bodies.
The warning changes nothing in the solve.
"""

from __future__ import annotations

import warnings

import numpy as np

import newton

MASS_RATIO_PER_ITERATION = 2.0  # heaviest/lightest body mass a contact pair holds per PGS sweep, non-dimensional


def candidate_ratios(model: newton.Model, body_responds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Heavier over lighter body mass of each candidate contact pair of two dynamic, responding bodies.

    Returns ``(ratio, b0, b1)`` (pair,), empty when there is none. ``body_responds`` (body,) is false for
    prescribed bodies and bodies outside every articulation, which take any load.
    """
    empty = np.zeros(0), np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    pairs = getattr(model, "shape_contact_pairs", None)
    if pairs is None or int(getattr(model, "shape_contact_pair_count", 0) or 0) == 0 or model.body_count == 0:
        return empty
    pairs = pairs.numpy()[: int(model.shape_contact_pair_count)]
    shape_body = model.shape_body.numpy()
    body_mass = model.body_mass.numpy()
    body_inv_mass = model.body_inv_mass.numpy()
    b0, b1 = shape_body[pairs[:, 0]], shape_body[pairs[:, 1]]
    # Static (-1), massless (inverse mass 0) and non-responding bodies take any load: only dynamic pairs.
    dynamic = (b0 >= 0) & (b1 >= 0) & (b0 != b1)
    b0, b1 = b0[dynamic], b1[dynamic]
    dynamic = (body_inv_mass[b0] > 0.0) & (body_inv_mass[b1] > 0.0) & body_responds[b0] & body_responds[b1]
    b0, b1 = b0[dynamic], b1[dynamic]
    if len(b0) == 0:
        return empty
    m0, m1 = body_mass[b0], body_mass[b1]
    return np.maximum(m0, m1) / np.minimum(m0, m1), b0, b1


def warn_mass_ratio(model: newton.Model, iterations: int, body_responds: np.ndarray) -> None:
    """Warn once if a candidate contact pair of dynamic bodies exceeds the ratio ``iterations`` can hold.

    ``body_responds`` (body,) is false for prescribed bodies and bodies outside every articulation,
    which take any load.
    """
    ratio, b0, b1 = candidate_ratios(model, body_responds)
    if len(ratio) == 0:
        return
    limit = MASS_RATIO_PER_ITERATION * max(int(iterations), 1)
    worst = int(np.argmax(ratio))
    if ratio[worst] <= limit:
        return
    warnings.warn(
        f"SolverSteel: bodies {int(b0[worst])} and {int(b1[worst])} may touch with mass ratio "
        f"{ratio[worst]:.3g}, beyond the about {limit:.3g} that iterations={int(iterations)} holds "
        f"({MASS_RATIO_PER_ITERATION:g} per iteration); stacks along gravity hold (a bottom-up shock pass), but "
        "a light body loaded sideways (pushed, wedged) may give way. Raise iterations or bring the masses closer.",
        newton.NewtonWarning, stacklevel=4,  # the caller of SolverSteel(): warn <- SteelModel <- __init__ <- caller
    )
