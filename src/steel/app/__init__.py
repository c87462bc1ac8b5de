"""The command line and its run tooling: ``steel demo`` and ``steel run`` (:mod:`steel.app.cli`).

The shipped scenes, the runners that step them and write a folder per run, the divergence guard, the
summary's checks and measurements, robot-file loading and the compile-progress lines live here; the
library (``steel.solvers``, ``steel.articulation``, ``steel.collision_schedule``) imports none of them.
This file imports nothing, so ``steel --version`` and ``steel --help`` (which load
:mod:`steel.app.cli` and :mod:`steel.app.catalog` only) answer without Warp and Newton.
"""
