"""Tests of steel.solvers."""
