"""Host-side checks of the arrays a caller hands to ``step``: shapes and devices, no device sync.

A :class:`newton.State` or :class:`newton.Control` made by another model has arrays of other
lengths. A kernel launched on them would read or write past the end of a buffer (on the CPU that
corrupts the heap and can abort the process), so every solver checks the arrays it is about to
read before launching anything. Array shapes and devices are host metadata: the checks cost no
device synchronization and are safe inside a CUDA graph capture.
"""

from __future__ import annotations

# (attribute, model count attribute, what one entry is)
STATE_ARRAYS = (
    ("joint_q", "joint_coord_count", "joint coordinates"),
    ("joint_qd", "joint_dof_count", "joint DOFs"),
    ("body_q", "body_count", "bodies"),
    ("body_qd", "body_count", "bodies"),
    ("body_f", "body_count", "bodies"),
)
CONTROL_ARRAYS = (
    ("joint_f", "joint_dof_count", "joint DOFs"),
    ("joint_target_q", "joint_coord_count", "joint coordinates"),
    ("joint_target_qd", "joint_dof_count", "joint DOFs"),
)
PARTICLE_ARRAYS = (
    ("particle_q", "particle_count", "particles"),
    ("particle_qd", "particle_count", "particles"),
    ("particle_f", "particle_count", "particles"),
)


def check_arrays(model, obj, name: str, table, *, optional=()) -> None:
    """Raise ``ValueError`` unless each array of ``table`` on ``obj`` has the model's length and device.

    Args:
        model: the :class:`newton.Model` the solver was built for.
        obj: a ``State`` or ``Control`` (or anything with the same attributes).
        name: the argument's name in the caller's signature, used in the message (``"state_in"``).
        table: rows of ``(attribute, model count attribute, what one entry is)``.
        optional: attributes that may be ``None`` (the solver then reads defaults instead).
    """
    if obj is None:
        raise TypeError(f"{name} must be a newton State/Control, got None")
    for attr, count_attr, what in table:
        expected = int(getattr(model, count_attr, 0) or 0)
        arr = getattr(obj, attr, None)
        if arr is None:
            if expected == 0 or attr in optional:
                continue
            raise ValueError(f"{name}.{attr} is None, but the model has {expected} {what}")
        length = int(arr.shape[0]) if arr.ndim else 0
        if length != expected:
            raise ValueError(
                f"{name}.{attr} has {length} entries but the model has {expected} {what}; "
                f"was {name} created by another model?"
            )
        if expected and str(arr.device) != str(model.device):
            raise ValueError(f"{name}.{attr} is on device {arr.device}, the model on {model.device}")


def check_state(model, state, name: str, *, particles: bool = False) -> None:
    """Check a ``State``'s body and joint arrays (and particle arrays when ``particles``)."""
    check_arrays(model, state, name, STATE_ARRAYS + (PARTICLE_ARRAYS if particles else ()))


def check_control(model, control, name: str = "control") -> None:
    """Check a ``Control``'s joint arrays; ``None`` is allowed (the solver uses the model's defaults)."""
    if control is not None:
        check_arrays(model, control, name, CONTROL_ARRAYS, optional=("joint_target_q", "joint_target_qd"))

