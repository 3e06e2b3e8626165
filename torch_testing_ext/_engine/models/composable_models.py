"""Small models for the composable APIs' tests (``fully_shard``, ``replicate``, ``checkpoint``),
whose parameter names the tests refer to: units of linear layers, composites of units, and a
nested model whose ``nn.Sequential``-like parts a module wrap policy must tell apart.

Example::

    model = CompositeParamModel(torch.device("cpu"))
    sorted(name for name, _ in model.named_parameters())[:2]   # ['l.bias', 'l.weight']
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["UnitModule", "CompositeModel", "UnitParamModule", "CompositeParamModel", "FakeSequential",
           "NestedSequentialModel"]

WIDTH = 100  # every unit's linear layers are WIDTH x WIDTH


def _linear(device: torch.device | str, fan_in: int = WIDTH, fan_out: int = WIDTH, bias: bool = True) -> nn.Linear:
    return nn.Linear(fan_in, fan_out, bias=bias, device=device)


def _relu_linear_relu(device: torch.device | str) -> nn.Sequential:
    return nn.Sequential(nn.ReLU(), _linear(device), nn.ReLU())


class UnitModule(nn.Module):
    """``l1`` -> ``seq`` (ReLU, linear, ReLU) -> ``l2``."""

    def __init__(self, device: torch.device | str) -> None:
        super().__init__()
        self.l1 = _linear(device)
        self.seq = _relu_linear_relu(device)
        self.l2 = _linear(device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.l2(self.seq(self.l1(x)))


class CompositeModel(nn.Module):
    """``l1`` -> two ``UnitModule`` (``u1``, ``u2``) -> ``l2``."""

    def __init__(self, device: torch.device | str) -> None:
        super().__init__()
        self.l1 = _linear(device)
        self.u1 = UnitModule(device)
        self.u2 = UnitModule(device)
        self.l2 = _linear(device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.l2(self.u2(self.u1(self.l1(x))))


class UnitParamModule(nn.Module):
    """``l`` -> ``seq``, then a matrix product with a bare parameter ``p``."""

    def __init__(self, device: torch.device | str) -> None:
        super().__init__()
        self.l = _linear(device)
        self.seq = _relu_linear_relu(device)
        self.p = nn.Parameter(torch.randn(WIDTH, WIDTH, device=device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mm(self.seq(self.l(x)), self.p)


class CompositeParamModel(nn.Module):
    """``l`` -> ``u1`` -> ``u2``, times a bare parameter ``p``; also a persistent ``buffer``."""

    def __init__(self, device: torch.device | str) -> None:
        super().__init__()
        self.l = _linear(device)
        self.u1 = UnitModule(device)
        self.u2 = UnitModule(device)
        self.p = nn.Parameter(torch.randn(WIDTH, WIDTH, device=device))
        self.register_buffer("buffer", torch.randn(WIDTH, WIDTH, device=device), persistent=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mm(self.u2(self.u1(self.l(x))), self.p)


class FakeSequential(nn.Module):
    """Runs its modules in order like ``nn.Sequential`` without being one (so a wrap policy
    for ``nn.Sequential`` does not match it); the modules are kept in a plain list, so they
    are not its submodules."""

    def __init__(self, *modules: nn.Module) -> None:
        super().__init__()
        self._module_sequence = list(modules)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for module in self._module_sequence:
            x = module(x)
        return x


class NestedSequentialModel(nn.Module):
    """``seq1`` (with ``FakeSequential`` parts nested two deep), ``lin``, ``seq2``: a tree whose
    traversal orders (depth-first, breadth-first) differ, for wrapping-order tests."""

    def __init__(self, device: torch.device | str) -> None:
        super().__init__()
        self.seq1 = nn.Sequential(
            _linear(device, 1, 1),
            FakeSequential(_linear(device, 1, 1), nn.ReLU(), FakeSequential(_linear(device, 1, 1)), nn.ReLU()),
            _linear(device, 1, 2),
        )
        self.lin = _linear(device, 2, 2)
        self.seq2 = nn.Sequential(
            nn.ReLU(),
            _linear(device, 2, 3),
            FakeSequential(_linear(device, 3, 2, bias=False), _linear(device, 2, 4, bias=False)),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.seq2(self.lin(self.seq1(x)))
