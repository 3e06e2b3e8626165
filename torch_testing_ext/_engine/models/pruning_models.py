"""The pruning and sparsity test fixtures of upstream's ``common_pruning``.

Each model is upstream's model of the same name: the same layers under the same attribute names
(a ``Sequential`` named ``seq`` first), built in the same order (so a seeded test gets the same
initial weights) and called in the same order, since pruning tests fuse and count those layers.
``ImplementedSparsifier`` is a sparsifier whose mask update is fixed (the first row of the
first mask zeroed, a step counted); ``MockSparseLinear`` a ``Linear`` of another type for
conversion tests; ``rows_are_subset`` compares rows of two tensors.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.ao.pruning import BaseSparsifier

__all__ = [
    "ImplementedSparsifier",
    "MockSparseLinear",
    "rows_are_subset",
    "SimpleLinear",
    "LinearBias",
    "LinearActivation",
    "LinearActivationFunctional",
    "SimpleConv2d",
    "Conv2dBias",
    "Conv2dActivation",
    "Conv2dPadBias",
    "Conv2dPool",
    "Conv2dPoolFlattenFunctional",
    "Conv2dPoolFlatten",
    "LSTMLinearModel",
    "LSTMLayerNormLinearModel",
]


class ImplementedSparsifier(BaseSparsifier):
    """A sparsifier whose every mask update zeroes the first row of the weight mask of the module
    it is asked about and counts a step in the state of ``linear1.weight``."""

    def __init__(self, **defaults: Any) -> None:
        super().__init__(defaults=defaults)

    def update_mask(self, module: nn.Module, tensor_name: str, **kwargs: Any) -> None:
        module.parametrizations.weight[0].mask[0] = 0  # type: ignore[index, union-attr]  # a parametrized module
        state = self.state["linear1.weight"]
        state["step_count"] = state.get("step_count", 0) + 1


class MockSparseLinear(nn.Linear):
    """A ``Linear`` of its own type, made from a dense one by ``from_dense`` (fresh weights of the
    same shape), for tests of converting sparsified modules."""

    @classmethod
    def from_dense(cls, mod: nn.Linear) -> MockSparseLinear:
        """A new ``MockSparseLinear`` with ``mod``'s feature sizes."""
        return cls(mod.in_features, mod.out_features)


def rows_are_subset(subset_tensor: Tensor, superset_tensor: Tensor) -> bool:
    """Whether every row of ``subset_tensor`` equals a row of ``superset_tensor``, found in the
    same order (the rows that match must appear in ``superset_tensor`` in that order)."""
    position = 0
    for row in subset_tensor:
        while position < len(superset_tensor) and not torch.equal(row, superset_tensor[position]):
            position += 1
        if position == len(superset_tensor):
            return False
    return True


def _linear(i: int, o: int, bias: bool) -> nn.Linear:
    return nn.Linear(i, o, bias=bias)


def _conv(i: int, o: int, bias: bool, **options: Any) -> nn.Conv2d:
    return nn.Conv2d(i, o, 3, 1, bias=bias, **options)


class SimpleLinear(nn.Module):
    """Linear layers without bias: three in ``seq`` (7 -> 5 -> 6 -> 4), then 4 -> 4 -> 10."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = nn.Sequential(_linear(7, 5, False), _linear(5, 6, False), _linear(6, 4, False))
        self.linear1 = _linear(4, 4, False)
        self.linear2 = _linear(4, 10, False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(self.seq(x)))


class LinearBias(nn.Module):
    """Five linear layers in ``seq`` (7 -> 5 -> 6 -> 3 -> 3 -> 10), with bias on the first,
    third and fourth."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = nn.Sequential(_linear(7, 5, True), _linear(5, 6, False), _linear(6, 3, True),
                                 _linear(3, 3, True), _linear(3, 10, False))

    def forward(self, x: Tensor) -> Tensor:
        return self.seq(x)


class LinearActivation(nn.Module):
    """Linear layers with activation modules between them: ``seq`` (7 -> 5, relu, 5 -> 6, tanh,
    6 -> 4), then 4 -> 3, relu (``act1``), 3 -> 10, tanh (``act2``)."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = nn.Sequential(_linear(7, 5, True), nn.ReLU(), _linear(5, 6, False), nn.Tanh(),
                                 _linear(6, 4, True))
        self.linear1 = _linear(4, 3, True)
        self.act1 = nn.ReLU()
        self.linear2 = _linear(3, 10, False)
        self.act2 = nn.Tanh()

    def forward(self, x: Tensor) -> Tensor:
        x = self.act1(self.linear1(self.seq(x)))
        return self.act2(self.linear2(x))


class LinearActivationFunctional(nn.Module):
    """``seq`` (7 -> 5, relu, 5 -> 6, relu, 6 -> 4), then 4 -> 3 -> 8 -> 10 with functional relus
    after each (its ``act1`` module is built and never called)."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = nn.Sequential(_linear(7, 5, True), nn.ReLU(), _linear(5, 6, False), nn.ReLU(),
                                 _linear(6, 4, True))
        self.linear1 = _linear(4, 3, True)
        self.linear2 = _linear(3, 8, False)
        self.linear3 = _linear(8, 10, False)
        self.act1 = nn.ReLU()

    def forward(self, x: Tensor) -> Tensor:
        x = self.seq(x)
        for layer in (self.linear1, self.linear2, self.linear3):
            x = F.relu(layer(x))
        return x


class SimpleConv2d(nn.Module):
    """3x3 convolutions without bias: ``seq`` (1 -> 32 -> 64), then 64 -> 48 -> 52."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = nn.Sequential(_conv(1, 32, False), _conv(32, 64, False))
        self.conv2d1 = _conv(64, 48, False)
        self.conv2d2 = _conv(48, 52, False)

    def forward(self, x: Tensor) -> Tensor:
        return self.conv2d2(self.conv2d1(self.seq(x)))


class Conv2dBias(nn.Module):
    """3x3 convolutions: ``seq`` (1 -> 32 -> 32 with bias, -> 64 without), then 64 -> 48 with
    bias, 48 -> 52 without."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = nn.Sequential(_conv(1, 32, True), _conv(32, 32, True), _conv(32, 64, False))
        self.conv2d1 = _conv(64, 48, True)
        self.conv2d2 = _conv(48, 52, False)

    def forward(self, x: Tensor) -> Tensor:
        return self.conv2d2(self.conv2d1(self.seq(x)))


class Conv2dActivation(nn.Module):
    """``seq`` (1 -> 32, relu, 32 -> 64, tanh, 64 -> 64 without bias, relu), then 64 -> 48
    without bias, functional relu, 48 -> 52, functional hardtanh."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = nn.Sequential(_conv(1, 32, True), nn.ReLU(), _conv(32, 64, True), nn.Tanh(),
                                 _conv(64, 64, False), nn.ReLU())
        self.conv2d1 = _conv(64, 48, False)
        self.conv2d2 = _conv(48, 52, True)

    def forward(self, x: Tensor) -> Tensor:
        x = F.relu(self.conv2d1(self.seq(x)))
        return F.hardtanh(self.conv2d2(x))


class Conv2dPadBias(nn.Module):
    """3x3 convolutions, most with padding 1 and bias, with activation modules between them:
    ``seq`` of five (1 -> 32 -> 32 -> 32 -> 32 -> 64), then 64 -> 48 (relu) -> 52 (tanh)."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = nn.Sequential(
            _conv(1, 32, True, padding=1), nn.ReLU(),
            _conv(32, 32, False), nn.ReLU(),
            _conv(32, 32, True, padding=1), nn.ReLU(),
            _conv(32, 32, True, padding=1), nn.ReLU(),
            _conv(32, 64, True), nn.Tanh(),
        )
        self.conv2d1 = _conv(64, 48, True, padding=1)
        self.act1 = nn.ReLU()
        self.conv2d2 = _conv(48, 52, True, padding=1)
        self.act2 = nn.Tanh()

    def forward(self, x: Tensor) -> Tensor:
        x = self.act1(self.conv2d1(self.seq(x)))
        return self.act2(self.conv2d2(x))


def _pooled_seq(channels: tuple[int, int, int]) -> nn.Sequential:
    """conv, max pool, relu, conv, tanh, average pool (3x3 convolutions with padding, 2x2 pools
    with stride 2 and padding 1)."""
    first, second, third = channels
    return nn.Sequential(
        nn.Conv2d(first, second, kernel_size=3, padding=1, bias=True),
        nn.MaxPool2d(kernel_size=2, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(second, third, kernel_size=3, padding=1, bias=True),
        nn.Tanh(),
        nn.AvgPool2d(kernel_size=2, stride=2, padding=1),
    )


def _padded(i: int, o: int) -> nn.Conv2d:
    return nn.Conv2d(i, o, kernel_size=3, padding=1, bias=True)


class Conv2dPool(nn.Module):
    """Convolutions with pools and activations between them: ``seq`` (1 -> 32 -> 64), then
    64 -> 48, max pool, relu, 48 -> 52, functional average pool and relu, 52 -> 52."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = _pooled_seq((1, 32, 64))
        self.conv2d1 = _padded(64, 48)
        self.maxpool = nn.MaxPool2d(kernel_size=2, stride=2, padding=1)
        self.af1 = nn.ReLU()
        self.conv2d2 = _padded(48, 52)
        self.conv2d3 = _padded(52, 52)

    def forward(self, x: Tensor) -> Tensor:
        x = self.af1(self.maxpool(self.conv2d1(self.seq(x))))
        x = F.relu(F.avg_pool2d(self.conv2d2(x), kernel_size=2, stride=2, padding=1))
        return self.conv2d3(x)


class Conv2dPoolFlattenFunctional(nn.Module):
    """``seq`` (1 -> 3 -> 5), 5 -> 7, functional max pool, relu, 7 -> 11, adaptive average pool
    to 1x1, ``torch.flatten``, linear 11 -> 13."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = _pooled_seq((1, 3, 5))
        self.conv2d1 = _padded(5, 7)
        self.af1 = nn.ReLU()
        self.conv2d2 = _padded(7, 11)
        self.avg_pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(11, 13, bias=True)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv2d1(self.seq(x))
        x = self.af1(F.max_pool2d(x, kernel_size=2, stride=2, padding=1))
        x = self.avg_pool(self.conv2d2(x))
        return self.fc(torch.flatten(x, 1))


class Conv2dPoolFlatten(nn.Module):
    """As ``Conv2dPoolFlattenFunctional``, with an adaptive average pool to 2x2, an
    ``nn.Flatten`` module and a linear 44 -> 13."""

    def __init__(self) -> None:
        super().__init__()
        self.seq = _pooled_seq((1, 3, 5))
        self.conv2d1 = _padded(5, 7)
        self.af1 = nn.ReLU()
        self.conv2d2 = _padded(7, 11)
        self.avg_pool = nn.AdaptiveAvgPool2d((2, 2))
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(44, 13, bias=True)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv2d1(self.seq(x))
        x = self.af1(F.max_pool2d(x, kernel_size=2, stride=2, padding=1))
        x = self.avg_pool(self.conv2d2(x))
        return self.fc(self.flatten(x))


class LSTMLinearModel(nn.Module):
    """An LSTM and a linear on its outputs; returns the linear's result and the LSTM's output."""

    def __init__(self, input_dim: int, hidden_dim: int, output_dim: int, num_layers: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(input_dim, hidden_dim, num_layers)
        self.linear = nn.Linear(hidden_dim, output_dim)

    def forward(self, input: Tensor) -> tuple[Tensor, Tensor]:
        output, _ = self.lstm(input)
        return self.linear(output), output


class LSTMLayerNormLinearModel(nn.Module):
    """An LSTM, a layer norm and a linear; returns the linear's result and the LSTM's state."""

    def __init__(self, input_dim: int, hidden_dim: int, output_dim: int, num_layers: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(input_dim, hidden_dim, num_layers)
        self.norm = nn.LayerNorm(hidden_dim)
        self.linear = nn.Linear(hidden_dim, output_dim)

    def forward(self, x: Tensor) -> tuple[Tensor, Any]:
        output, state = self.lstm(x)
        return self.linear(self.norm(output)), state
