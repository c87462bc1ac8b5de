"""The README's Usage code: nv_humanoid dropped 1.5 m onto the ground with SolverSteel, 2 s on the CPU.

``python examples/usage.py`` ends with every body of the humanoid below 0.5 m: it lies on the
ground (its torso stands at 1.3 m). ``make test`` runs this file (``tests/test_examples.py``) and
checks that the README shows this code, so the two cannot drift apart.
"""

import newton
import newton.examples

import steel

builder = newton.ModelBuilder()
# The file puts the torso at z = 0 beside its own floor plane: lift the robot 1.5 m and drop that
# floor (it would be lifted too, with the legs below it) for a ground plane at z = 0.
humanoid = newton.examples.get_asset("nv_humanoid.xml")
builder.add_mjcf(humanoid, xform=((0, 0, 1.5), (0, 0, 0, 1)), ignore_names=["floor"])
builder.add_ground_plane()
model = builder.finalize(device="cpu")  # or "cuda:0"
# The reference default leaves joint limits off; the knees then fold past their range.
solver = steel.solvers.SolverSteel(model, enable_joint_limits=True)
pipeline = newton.CollisionPipeline(model)
contacts = pipeline.contacts()
s0, s1 = model.state(), model.state()
for _ in range(480):  # 2 s at 1/240 s
    pipeline.collide(s0, contacts)
    solver.step(s0, s1, None, contacts, 1.0 / 240.0)
    s0, s1 = s1, s0
print(f"highest body {s0.body_q.numpy()[:, 2].max():.2f} m")  # about 0.46 m: lying on the ground
