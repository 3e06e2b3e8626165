"""A model that records the input each of its modules saw, named as in ``common_distributed``
(mixed-precision tests check the dtype FSDP cast each input to).

Example::

    seen: dict[nn.Module, torch.Tensor] = {}
    model = SaveForwardInputsModel(seen, cast_forward_inputs=False)
    model(torch.randn(2, 100))
    seen[model.c1].dtype
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["SaveForwardInputsModule", "SaveForwardInputsModel"]


class SaveForwardInputsModule(nn.Module):
    """A ``Linear(100, 100)`` (as ``self.l``) that stores its input in ``forward_inputs[self]``;
    with ``cast_forward_inputs`` it casts the input to its weight's dtype first."""

    def __init__(self, forward_inputs: dict[nn.Module, torch.Tensor], cast_forward_inputs: bool) -> None:
        super().__init__()
        self.l = nn.Linear(100, 100)
        self.forward_inputs = forward_inputs
        self.cast_forward_inputs = cast_forward_inputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.forward_inputs[self] = x
        if self.cast_forward_inputs:
            x = x.to(self.l.weight.dtype)
        return self.l(x)


class SaveForwardInputsModel(nn.Module):
    """Two :class:`SaveForwardInputsModule` in a row (``c1``, ``c2``) sharing one
    ``forward_inputs`` dict; the model stores its own input there too."""

    def __init__(self, forward_inputs: dict[nn.Module, torch.Tensor], cast_forward_inputs: bool) -> None:
        super().__init__()
        self.c1 = SaveForwardInputsModule(forward_inputs, cast_forward_inputs)
        self.c2 = SaveForwardInputsModule(forward_inputs, cast_forward_inputs)
        self.forward_inputs = forward_inputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.forward_inputs[self] = x
        return self.c2(self.c1(x))
