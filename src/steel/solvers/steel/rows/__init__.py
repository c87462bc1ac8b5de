"""Row families of SolverSteel. Each module builds its rows into the shared pool of
:class:`steel.solvers.steel.data.SteelRows` through :mod:`.common`; the sweep treats them alike."""
