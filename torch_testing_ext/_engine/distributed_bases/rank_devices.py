"""Which devices the ranks of a multi-GPU style test use."""

from __future__ import annotations

from ... import devices

__all__ = ["requires_ddp_rank", "init_multigpu_helper", "DDP_RANK_DEVICES"]

__unittest = True

# Device types on which DDP is given its rank's device (device_ids=[rank]); the machine's
# accelerator, whatever it is, counts as well.
DDP_RANK_DEVICES = ("cuda", "xpu")


def requires_ddp_rank(device: str) -> bool:
    """Whether DDP on ``device`` (a type such as ``"cuda"``, or ``"cuda:1"``) needs
    ``device_ids=[rank]``: true on accelerators, false on CPU."""
    kind = device.split(":")[0]
    return kind in DDP_RANK_DEVICES or kind == devices.accelerator_type()


def init_multigpu_helper(world_size: int, backend: str) -> dict[int, list[int]]:
    """The accelerator indices each rank owns: one each while there are enough, else
    ``count // world_size`` each (none at all on a CPU-only machine). ``backend`` is unused."""
    count = devices.device_count()
    per_rank = 1 if world_size <= count else count // world_size
    return {rank: list(range(rank * per_rank, (rank + 1) * per_rank)) for rank in range(world_size)}
