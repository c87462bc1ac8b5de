"""SolverVBD.reset helpers: the world-mask check and the body-field copy of the seed revision."""

from __future__ import annotations

import warp as wp

import newton

from ...launches import launch

wp.set_module_options({"enable_backward": False})  # no gradients here: adjoint code would only add compile time


def check_world_mask(model, world_mask) -> None:
    """Raise TypeError/ValueError unless ``world_mask`` is None or a 1-D wp.bool array of length W or W+1."""
    if world_mask is None:
        return
    if not isinstance(world_mask, wp.array) or world_mask.dtype != wp.bool or world_mask.ndim != 1:
        raise TypeError(f"world_mask must be a 1-D wp.array of wp.bool or None, got {world_mask!r}")
    if str(world_mask.device) != str(model.device):
        raise ValueError(f"world_mask is on {world_mask.device}, the solver on {model.device}")
    w = int(model.world_count)
    if world_mask.shape[0] not in (w, w + 1):
        raise ValueError(f"world_mask must have world_count ({w}) or world_count + 1 entries, got {world_mask.shape[0]}")


@wp.kernel
def _reset_bodies(
    body_world: wp.array[wp.int32],
    mask: wp.array[wp.bool],
    use_mask: int,
    copy_q: int,
    copy_qd: int,
    model_q: wp.array[wp.transform],
    model_qd: wp.array[wp.spatial_vector],
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
):
    b = wp.tid()  # one thread per body
    if use_mask != 0:
        w = body_world[b]
        if w < 0:
            w = mask.shape[0] - 1
            if w < 0 or mask.shape[0] == 0:
                return
        if w >= mask.shape[0] or not mask[w]:
            return
        if body_world[b] < 0 and mask.shape[0] == 0:
            return
    if copy_q != 0:
        body_q[b] = model_q[b]
    if copy_qd != 0:
        body_qd[b] = model_qd[b]


def reset_bodies(model, state, world_mask, flags: int) -> None:
    """Copy ``model.body_q``/``body_qd`` into ``state`` for bodies of the selected worlds."""
    if not model.body_count:
        return
    copy_q = int(bool(flags & int(newton.StateFlags.BODY_Q)) and state.body_q is not None)
    copy_qd = int(bool(flags & int(newton.StateFlags.BODY_QD)) and state.body_qd is not None)
    if not (copy_q or copy_qd):
        return
    mask = world_mask
    # A mask of world_count entries selects local worlds only: globals (-1) are left alone.
    if mask is not None and mask.shape[0] == int(model.world_count):
        padded = wp.zeros(mask.shape[0] + 1, dtype=wp.bool, device=model.device)
        wp.copy(padded, mask, count=mask.shape[0])
        mask = padded
    launch(
        _reset_bodies, dim=model.body_count,
        inputs=[model.body_world, mask if mask is not None else wp.zeros(1, dtype=wp.bool, device=model.device),
                int(mask is not None), copy_q, copy_qd, model.body_q, model.body_qd],
        outputs=[state.body_q if copy_q else model.body_q, state.body_qd if copy_qd else model.body_qd],
        device=model.device,
    )
