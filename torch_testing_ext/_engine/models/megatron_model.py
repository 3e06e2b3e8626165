"""``SimpleMegatronLM``: two linear layers with a GELU between them, the module the sharding
plan tests shard (``fc1``'s output columns, ``fc2``'s input rows), with getters that read a
sharded weight's local part.

Example::

    model = SimpleMegatronLM([[17, 12], [12, 29]], rank=self.rank)   # on this rank's device
    shard_module(model, plan)
    w1, w2 = model.get_weights()                                      # the local shards
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from ... import devices
from .._torch_private import sharded_tensor_api

__all__ = ["SimpleMegatronLM"]


def _linear(size: Sequence[Any], dtype: torch.dtype) -> nn.Linear:
    """``nn.Linear(*size, dtype=dtype)``: in and out features (and bias) as given."""
    bias = size[2] if len(size) > 2 else True
    return nn.Linear(size[0], size[1], bias=bias, dtype=dtype)


def _local(weight: Any) -> Any:
    return weight.local_tensor() if isinstance(weight, sharded_tensor_api().ShardedTensor) else weight


class SimpleMegatronLM(nn.Module):
    """``fc2(gelu(fc1(x)))`` with ``fc1 = Linear(*linear_size[0])`` and ``fc2 =
    Linear(*linear_size[1])`` in ``dtype``. With ``rank`` the layers move to that rank's
    device: the accelerator's device ``rank`` (upstream: ``cuda:<rank>``), or the CPU on a
    machine without one."""

    def __init__(self, linear_size: Sequence[Sequence[Any]], rank: int | None = None,
                 dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.fc1 = _linear(linear_size[0], dtype)
        self.gelu = nn.GELU()
        self.fc2 = _linear(linear_size[1], dtype)
        if rank is not None:
            self.fc1.to(devices.rank_device(rank))
            self.fc2.to(devices.rank_device(rank))

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.gelu(self.fc1(inp)))

    def get_weights(self) -> tuple[Any, Any]:
        """Both layers' weights; a sharded one as this rank's local tensor."""
        return _local(self.fc1.weight), _local(self.fc2.weight)

    def get_biases(self) -> tuple[Any, Any]:
        return self.fc1.bias, self.fc2.bias

    def get_weight_grads(self) -> tuple[Any, Any]:
        return self.fc1.weight.grad, self.fc2.weight.grad

    def get_bias_grads(self) -> tuple[Any, Any]:
        return self.fc1.bias.grad, self.fc2.bias.grad
