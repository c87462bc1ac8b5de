"""Runnable examples: ``python -m steel.examples NAME``."""

EXAMPLES = {
    "cloth_drape": "steel.examples.cloth_drape:run_cloth_drape",
    "adaptive_collision": "steel.examples.adaptive_collision:run_adaptive_collision",
    "free_fall": "steel.examples.free_fall:run_free_fall",
    "featherstone_humanoid": "steel.examples.featherstone_humanoid:run_featherstone_humanoid",
}
