"""Runnable examples in Newton's conventions: ``python -m steel.examples NAME [--viewer ...] [--test]``.

One per solver: each takes Newton's example flags (see :mod:`steel.examples.common`) and has a
``--test`` mode that CI runs. ``python -m steel.examples`` lists them with one line each.
"""

# name -> module; each module has a main(argv) -> exit status and a docstring whose first line describes it.
EXAMPLES = {
    "steel_humanoid": "steel.examples.steel_humanoid",
    "featherstone_humanoid": "steel.examples.featherstone_humanoid",
    "cloth_drape": "steel.examples.cloth_drape",
    "adaptive_collision": "steel.examples.adaptive_collision",
    "free_fall": "steel.examples.free_fall",
    "avbd_stacks": "steel.examples.avbd_stacks",
    "towers_sleeping": "steel.examples.towers_sleeping",
    "steel_sleeping": "steel.examples.steel_sleeping",
    "steel_determinism_arms": "steel.examples.steel_determinism_arms",
}
