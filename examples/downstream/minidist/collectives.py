"""Gradient averaging, a global mean, and row sharding over a device mesh."""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Shard, distribute_tensor

__all__ = ["average_gradients", "chunk_sizes", "global_mean", "shard_rows"]


def chunk_sizes(total: int, parts: int) -> list[int]:
    """Sizes of ``parts`` near-equal chunks of ``total`` items, the larger ones first."""
    if parts < 1:
        raise ValueError(f"parts must be at least 1, got {parts}")
    base, extra = divmod(total, parts)
    return [base + (i < extra) for i in range(parts)]


def average_gradients(module: torch.nn.Module, group: dist.ProcessGroup | None = None) -> None:
    """Replace each parameter's gradient by its mean over the ranks of ``group``."""
    world_size = dist.get_world_size(group)
    for parameter in module.parameters():
        if parameter.grad is not None:
            dist.all_reduce(parameter.grad, group=group)
            parameter.grad.div_(world_size)


def global_mean(tensor: torch.Tensor, group: dist.ProcessGroup | None = None) -> torch.Tensor:
    """The mean of every element of ``tensor`` on every rank of ``group``."""
    total = torch.stack([tensor.sum(), torch.tensor(float(tensor.numel()), device=tensor.device)])
    dist.all_reduce(total, group=group)
    return total[0] / total[1]


def shard_rows(tensor: torch.Tensor, mesh: DeviceMesh) -> DTensor:
    """``tensor`` split by rows over a 1-D ``mesh``."""
    return distribute_tensor(tensor, mesh, [Shard(0)])
