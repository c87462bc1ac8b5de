"""The projected Gauss-Seidel sweep over the rows: order, tails, velocity sweeps, pre-elimination, shock pass."""
