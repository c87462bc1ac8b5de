"""Rigid bodies in SolverVBD: Augmented Vertex Block Descent (per-body 6x6 block descent, AL joints)."""
