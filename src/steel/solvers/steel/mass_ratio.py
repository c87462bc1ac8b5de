"""Construction-time warning for contact pairs whose mass ratio the row sweep cannot hold.

Projected Gauss-Seidel passes impulse between two touching bodies a fraction per sweep that shrinks
with their mass ratio, so a light body under a heavy one needs more sweeps the larger the ratio.
Measured with the default solver (two 0.2 m boxes stacked on the ground, dt = 1/240 s, 2 s), the
light lower box sinks by

    iterations   ratio 10    30        50       100      300
    4            3 mm        17 mm     -        78 mm    falls through
    12           0.6 mm      3 mm      9 mm     20 mm    77 mm, hops
    50           0           0.3 mm    -        1.5 mm   13 mm

so the stack holds to about 1-3 % of the box while the ratio stays under ``MASS_RATIO_PER_ITERATION``
times ``iterations``, and beyond that sinks and hops. The pairs are Newton's candidate shape pairs
(``model.shape_contact_pairs``) between two dynamic bodies; which of them will actually stack is not
known at construction, so the warning says "may". It changes nothing in the solve.
"""

from __future__ import annotations

import warnings

import numpy as np

import newton

MASS_RATIO_PER_ITERATION = 2.0  # heaviest/lightest body mass a contact pair holds per PGS sweep, non-dimensional


def warn_mass_ratio(model: newton.Model, iterations: int, body_responds: np.ndarray) -> None:
    """Warn once if a candidate contact pair of dynamic bodies exceeds the ratio ``iterations`` can hold.

    ``body_responds`` (body,) is false for prescribed bodies and bodies outside every articulation,
    which take any load.
    """
    pairs = getattr(model, "shape_contact_pairs", None)
    if pairs is None or int(getattr(model, "shape_contact_pair_count", 0) or 0) == 0 or model.body_count == 0:
        return
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
        return
    m0, m1 = body_mass[b0], body_mass[b1]
    ratio = np.maximum(m0, m1) / np.minimum(m0, m1)
    limit = MASS_RATIO_PER_ITERATION * max(int(iterations), 1)
    worst = int(np.argmax(ratio))
    if ratio[worst] <= limit:
        return
    warnings.warn(
        f"SolverSteel: bodies {int(b0[worst])} and {int(b1[worst])} may touch with mass ratio "
        f"{ratio[worst]:.3g}, beyond the about {limit:.3g} that iterations={int(iterations)} holds "
        f"({MASS_RATIO_PER_ITERATION:g} per iteration); a light body under a heavy one may sink and hop. "
        "Raise iterations or bring the masses closer.",
        newton.NewtonWarning, stacklevel=3,
    )
