"""Tests of steel.app: the command line, the runners, the scenes and their tooling."""
