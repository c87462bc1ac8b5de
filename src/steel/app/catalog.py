"""Names and defaults the command line shows before anything heavy is imported.

``steel --help`` and ``steel --version`` must answer at once; Newton and Warp take seconds to
import, so the scene names, solver names and defaults they print live here, and the modules that
use them (scenes, runners, guard) import them from here.
"""

SCENES = ("tower", "humanoid", "ant", "chain", "cartpole")  # rigid scenes of steel.app.scenes
VBD_SCENES = ("cable_pile",)  # rigid scenes of steel.app.scenes that only SolverVBD steps (cables)
PARTICLE_SCENES = ("cloth", "cloth_hang", "soft_cube", "cloth_boxes")  # particle scenes of steel.app.particle_scenes
SOLVERS = ("steel", "featherstone", "vbd")  # solvers of steel.app.runner (vbd: also the particle scenes)
VIEWERS = ("null", "usd", "gl")

# Time step [s] shared by every rigid scene and backend; 1/600 s is 10 substeps of a 60 Hz frame, small
# enough that the explicit (semi-implicit) reference integrators stay stable with their penalty contacts.
DT = 1.0 / 600.0

DEFAULT_MARGIN = 20.0  # [m] divergence guard: growth of the start bounding box
DEFAULT_MAX_SPEED = 50.0  # [m/s] divergence guard: largest body COM or particle speed

# Thresholds of the summary's checks and measurements (steel.app.run_checks, steel.app.run_metrics), here so --help
# states them.
ENERGY_GAIN_HEIGHT = 0.05  # [m] tolerated energy rise: the work of lifting every body this high
# [m] a shipped scene's own tolerated rise, at time steps up to DT, where every semi-implicit integrator measurably
# gains more than ENERGY_GAIN_HEIGHT. The released chain whips at 1.4 s and 2.3 s; at DT it gains 1.29 J over the
# default 5 s with SolverSteel (0.75 J SolverFeatherstone, none SolverVBD); to 2.6 s Newton's SolverSteel gains
# 1.01 J (0.74 J at its default 32 rows, which drop the self-contacts), MuJoCo's Euler 0.55 J (0.72 J without
# contacts, RK4 none). Ours and Newton's SolverSteel agree within 0.01 J through the first self-contact (+0.56 J
# at 1.4 s) and gain 0.73 and 0.74 J without contacts (0.21 and 0.24 J at DT/4): the integrator's error at DT, not
# our solver's. 0.5 m (1.96 J for the 0.4 kg chain, 1.5x the 1.29 J measured; its full drop from horizontal to
# hanging) keeps a larger gain flagged.
SCENE_ENERGY_GAIN_HEIGHT = {"chain": 0.5}
LEAVE_MARGIN = 2.0  # [m] how far outside the start's bounding box a centre of mass may go before it left
FALLEN_TILT_DEG = 60.0  # [deg] a floating base tilted further than this from its start orientation has fallen

# What each shipped rigid scene is, which picks the measurements a run prints (steel.app.run_metrics); robot files
# are "floating" unless welded (--fixed-base, or a file whose root is not free: "fixed_base").
SCENE_KINDS = {"tower": "stack", "cable_pile": "stack", "humanoid": "floating", "ant": "floating",
               "chain": "fixed_base", "cartpole": "fixed_base"}

# The measurements of a run's summary.json and log lines, by the kinds they apply to ("all", a scene kind of
# SCENE_KINDS, or "particles"); `steel run --help` prints them and the README lists the same names.
METRICS = {
    "simulated_s": ("all", "simulated time the run reached [s]"),
    "wall_total_s": ("all", "wall-clock time of the whole run, loading and kernel compiles included [s]"),
    "wall_stepping_s": ("all", "wall-clock time of the steps after the first (which compiles kernels) [s]"),
    "expectation": ("all", "the scene's promise, whether the run met it, and each contradiction"),
    "checks": ("rigid", "bodies frozen in mid-air (touching nothing, at rest while gravity acts), energy "
               f"gained (kinetic + gravitational, passive scenes, tolerance: lifting every body "
               f"{100 * ENERGY_GAIN_HEIGHT:g} cm; the chain {100 * SCENE_ENERGY_GAIN_HEIGHT['chain']:g} cm at time "
               "steps up to the default: semi-implicit Euler gains 1.3 J when it whips, as Newton's solvers and "
               f"MuJoCo's Euler do), bodies that left the scene ({LEAVE_MARGIN:g} m outside the start's box, "
               "or through the ground)"),
    "final_overlap_m": ("rigid", "deepest overlap of any contact pair at the end [m]"),
    "stack_top_m": ("stack", "highest body origin at the end [m]"),
    "stack_drift_max_m": ("stack", "largest horizontal distance of any body from its start, over the run [m]"),
    "base_height_m": ("floating", "height of each world's base (root body) at the end [m]"),
    "base_tilt_deg": ("floating", "angle of each base's up axis from its start orientation at the end [deg]"),
    "fallen": ("floating", f"per world: the base tilted more than {FALLEN_TILT_DEG:g} deg"),
    "base_travel_max_m": ("floating", "largest horizontal distance of a base from its start [m]"),
    "hinge_travel_max_deg": ("fixed_base", "largest revolute joint travel from the start pose [deg]"),
    "slider_travel_max_m": ("fixed_base", "largest prismatic joint travel from the start pose [m]"),
    "lowest_particle_m": ("particles", "lowest particle at the end [m]"),
    "max_self_intersecting_pairs": ("particles", "most edge-triangle pairs crossing at any frame (cloth overlap)"),
}


def metrics_help() -> str:
    """The METRICS table as ``steel run --help`` prints it."""
    import textwrap

    lines = ["summary.json measurements (by scene kind):"]
    lines += [textwrap.fill(f"{name} ({kind}): {text}", 100, initial_indent="  ", subsequent_indent="      ")
              for name, (kind, text) in METRICS.items()]
    return "\n".join(lines)
