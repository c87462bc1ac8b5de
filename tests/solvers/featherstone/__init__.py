"""Tests of steel.solvers.SolverFeatherstone."""
