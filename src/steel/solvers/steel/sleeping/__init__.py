"""Sleeping (``enable_sleeping``): islands, quiet timers and wake events, their device state, model changes."""
