"""Joint rows: limits, drives, joint friction, mimics, loop closures and velocity limits, in one launch."""
