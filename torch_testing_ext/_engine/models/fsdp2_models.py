"""The small models ``fully_shard`` tests build: ``MLP``, ``MLPStack`` and ``DoubleLinear``.

Parameter names and shapes are upstream's (tests index them: ``model.in_proj.weight``,
``model[0].out_proj``...); ``device=None`` builds on the default device.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh

from .._torch_private import composable_checkpoint

__all__ = ["MLP", "MLPStack", "DoubleLinear"]

__unittest = True


class MLP(nn.Module):
    """``in_proj`` (dim -> dim * dim_multiplier), ReLU, ``out_proj`` back to dim, ReLU, plus
    an optional ``buffer`` of shape (dim,) (None without ``with_buffer``)."""

    def __init__(self, dim: int, device: torch.device | str | None = None, *, bias: bool = True,
                 with_buffer: bool = False, dim_multiplier: int = 4) -> None:
        super().__init__()
        hidden = dim * dim_multiplier
        self.in_proj = nn.Linear(dim, hidden, device=device, bias=bias)
        self.out_proj = nn.Linear(hidden, dim, device=device, bias=bias)
        self.buffer: torch.Tensor | None
        if with_buffer:
            self.register_buffer("buffer", torch.randn((dim,), device=device))
        else:
            self.buffer = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.out_proj(F.relu(self.in_proj(x))))
        return out if self.buffer is None else out + self.buffer

    def reset_parameters(self) -> None:
        """Re-draw the buffer (the linear layers reset themselves)."""
        if self.buffer is not None:
            nn.init.normal_(self.buffer)


class MLPStack(nn.Sequential):
    """Three ``MLP(mlp_dim)`` (the first and last with multiplier 3, so shards are uneven),
    then a ``LayerNorm`` without bias when ``with_seq_parallel``."""

    def __init__(self, mlp_dim: int, *, with_seq_parallel: bool = False) -> None:
        layers: list[nn.Module] = [MLP(mlp_dim, dim_multiplier=3), MLP(mlp_dim),
                                   MLP(mlp_dim, dim_multiplier=3)]
        if with_seq_parallel:
            layers.append(nn.LayerNorm(mlp_dim, bias=False))
        super().__init__(*layers)
        self.with_seq_parallel = with_seq_parallel

    def parallelize(self, tp_mesh: DeviceMesh, dp_mesh: DeviceMesh,
                    use_activation_checkpointing: bool, **fsdp_kwargs: Any) -> MLPStack:
        """Tensor-parallel over ``tp_mesh`` (column-wise in, row-wise out; sequence-parallel
        norm with ``with_seq_parallel``), then ``fully_shard`` each MLP and the stack over
        ``dp_mesh``, checkpointing each MLP's activations if asked. Returns ``self``."""
        from torch.distributed.fsdp import fully_shard
        from torch.distributed.tensor import Shard
        from torch.distributed.tensor.parallel import (
            ColwiseParallel,
            RowwiseParallel,
            SequenceParallel,
            parallelize_module,
        )

        plan: dict[str, Any] = {}
        for index in range(3):
            # DTensor outputs keep the uneven hidden sizes; only the last layer goes local.
            plan[f"{index}.in_proj"] = ColwiseParallel(use_local_output=False)
            plan[f"{index}.out_proj"] = RowwiseParallel(use_local_output=False)
        plan["2.out_proj"] = (RowwiseParallel(output_layouts=Shard(1)) if self.with_seq_parallel
                              else RowwiseParallel())
        if self.with_seq_parallel:
            plan["3"] = SequenceParallel(sequence_dim=1)
        parallelize_module(self, device_mesh=tp_mesh, parallelize_plan=plan)
        checkpoint = composable_checkpoint()
        for layer in self:
            if isinstance(layer, nn.LayerNorm):
                continue
            if use_activation_checkpointing:
                checkpoint(layer)
            fully_shard(layer, mesh=dp_mesh, **fsdp_kwargs)
        fully_shard(self, mesh=dp_mesh, **fsdp_kwargs)
        return self


class DoubleLinear(nn.Module):
    """``lin1`` and ``lin2`` (dim -> dim) each followed by ReLU: two outputs with
    ``use_second_linear`` (the default), else only ``lin1``'s (``lin2`` goes unused)."""

    def __init__(self, dim: int, use_second_linear: bool = True) -> None:
        super().__init__()
        self.lin1 = nn.Linear(dim, dim)
        self.lin2 = nn.Linear(dim, dim)
        self.relu = nn.ReLU()
        self.use_second_linear = use_second_linear

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | torch.Tensor:
        first = self.relu(self.lin1(x))
        if not self.use_second_linear:
            return first
        return first, self.relu(self.lin2(x))
