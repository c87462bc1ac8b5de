"""The row pool's plumbing shared by every row family: reservation, Jacobian helpers, DOF loops, capacities."""
