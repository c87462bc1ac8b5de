"""Side-by-side benchmarks: Steel's solvers and articulation core against Newton's references and MuJoCo C.

Run ``python -m benchmarks.run --help`` from the repository root; see ``benchmarks/README.md``.
"""
