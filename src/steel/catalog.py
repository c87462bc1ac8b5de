"""Names and defaults the command line shows before anything heavy is imported.

``steel --help`` and ``steel --version`` must answer at once; Newton and Warp take seconds to
import, so the scene names, solver names and defaults they print live here, and the modules that
use them (scenes, runners, guard) import them from here.
"""

SCENES = ("tower", "humanoid", "ant", "chain", "cartpole")  # rigid scenes of steel.scenes
VBD_SCENES = ("cable_pile",)  # rigid scenes of steel.scenes that only SolverVBD steps (cables)
PARTICLE_SCENES = ("cloth", "cloth_hang", "soft_cube", "cloth_boxes")  # particle scenes of steel.particle_scenes
SOLVERS = ("steel", "featherstone", "vbd")  # solvers of steel.runner (vbd: also the particle scenes)
VIEWERS = ("null", "usd", "gl")

# Time step [s] shared by every rigid scene and backend; 1/600 s is 10 substeps of a 60 Hz frame, small
# enough that the explicit (semi-implicit) reference integrators stay stable with their penalty contacts.
DT = 1.0 / 600.0

DEFAULT_MARGIN = 20.0  # [m] divergence guard: growth of the start bounding box
DEFAULT_MAX_SPEED = 50.0  # [m/s] divergence guard: largest body COM or particle speed
