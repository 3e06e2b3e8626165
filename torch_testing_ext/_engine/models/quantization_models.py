"""``TestHelperModules`` and module-level models: the small models quantization tests quantize.

Each is the model of the same name in upstream's ``common_quantization.TestHelperModules``:
the same layers under the same attribute names, the same operations in the same order, since
tests count the nodes of the graphs these give. Only the models downstream projects' tests use
are here (the ones listed in ``TestHelperModules.__doc__``).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from functorch.experimental import control_flow  # type: ignore[import-untyped]  # torch ships no stubs for it
from torch import Tensor, nn
from torch.ao.quantization import DeQuantStub, QuantStub, default_embedding_qat_qconfig, get_default_qat_qconfig

__all__ = [
    "TestHelperModules",
    "SingleLayerLinearModel",
    "TwoLayerLinearModel",
    "LinearAddModel",
    "ConvModel",
    "ConvBnReLUModel",
    "FunctionalLinear",
    "ManualEmbeddingBagLinear",
]


def _bn_or_identity(enabled: bool, dim: int) -> nn.Module:
    norms: dict[int, type[nn.Module]] = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}
    return norms[dim](3) if enabled else nn.Identity()


def _relu_or_identity(enabled: bool) -> nn.Module:
    return nn.ReLU() if enabled else nn.Identity()


class _ControlFlow(nn.Module):
    """``map`` over the rows of ``xs`` of a body with nested ``cond`` s (higher-order ops)."""

    def forward(self, xs: Tensor, pred1: Tensor, pred2: Tensor, y: Tensor) -> Tensor:
        def square_twice(t: Tensor) -> Tensor:
            doubled = t + t
            return torch.mm(doubled, doubled)

        def square(t: Tensor) -> Tensor:
            return torch.mm(t, t)

        def inner_true(t: Tensor, p2: Tensor) -> Tensor:
            return t + control_flow.cond(p2, square_twice, square, [t])

        def inner_false(t: Tensor, _p2: Tensor) -> Tensor:
            return t.cos()

        def body(row: Tensor, p1: Tensor, p2: Tensor, t: Tensor) -> Tensor:
            row = row.cos()
            branch = control_flow.cond(p1, inner_true, inner_false, [t, p2])
            return (row + branch).sin()

        return control_flow.map(body, xs, pred1, pred2, torch.mm(y, y))

    def example_inputs(self) -> tuple[Tensor, ...]:
        return (torch.ones(2, 2), torch.tensor([False]), torch.tensor([False]), torch.ones(2, 2))


class _ConvLinearWPermute(nn.Module):
    """conv2d (3 -> 8, 3x3), channels moved last, linear 8 -> 8."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.linear1 = nn.Linear(8, 8)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear1(torch.permute(self.conv(x), (0, 2, 3, 1)))


class _TwoLinearModule(nn.Module):
    """linear 8 -> 16 without bias, then linear 16 -> 8."""

    def __init__(self) -> None:
        super().__init__()
        self.linear1 = nn.Linear(8, 16, bias=False)
        self.linear2 = nn.Linear(16, 8)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))

    def example_inputs(self) -> tuple[Tensor, ...]:
        return (torch.randn(2, 8),)


class _ConvMaxPool2d(nn.Module):
    """conv2d (2 -> 2, 1x1), then a 1x1 max pool."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 1)
        self.pool = nn.MaxPool2d(1, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.pool(self.conv(x))


class _ConvWithBNRelu(nn.Module):
    """conv (3 -> 3 channels, kernel 3, in ``dim`` dimensions), batch norm and relu, each of
    the last two an identity when switched off."""

    def __init__(self, relu: bool, dim: int = 2, bn: bool = True, bias: bool = True, padding: Any = 0) -> None:
        super().__init__()
        convolutions: dict[int, type[nn.Module]] = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}
        self.conv = convolutions[dim](3, 3, 3, bias=bias, padding=padding)
        self.bn = _bn_or_identity(bn, dim)
        self.relu = _relu_or_identity(relu)

    def forward(self, x: Tensor) -> Tensor:
        return self.relu(self.bn(self.conv(x)))


class _ConvTWithBNRelu(nn.Module):
    """transposed conv (3 -> 3 channels, kernel 3, 1 or 2 dimensions), batch norm and relu,
    each of the last two an identity when switched off."""

    def __init__(self, relu: bool, dim: int = 2, bn: bool = True, bias: bool = True) -> None:
        super().__init__()
        transposed: dict[int, type[nn.Module]] = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d}
        self.convt = transposed[dim](3, 3, 3, bias=bias)
        self.bn = _bn_or_identity(bn, dim)
        self.relu = _relu_or_identity(relu)

    def forward(self, x: Tensor) -> Tensor:
        return self.relu(self.bn(self.convt(x)))


class _Conv2dThenConv1d(nn.Module):
    """conv2d (3 -> 3, 3x3), the batch dimension squeezed away, conv1d (3 -> 3, 3)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1d = nn.Conv1d(3, 3, 3)
        self.conv2d = nn.Conv2d(3, 3, 3)

    def forward(self, x: Tensor) -> Tensor:
        return self.conv1d(self.conv2d(x).squeeze(0))

    def example_inputs(self) -> tuple[Tensor, ...]:
        return (torch.randn(1, 3, 5, 5),)


class _TwoConvs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 3, 3)
        self.conv2 = nn.Conv2d(3, 3, 3)


class _Conv2dWithCat(_TwoConvs):
    """Two conv2d (3 -> 3, 3x3), one per input, concatenated along channels."""

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        return torch.cat([self.conv1(x), self.conv2(y)], dim=1)


class _Conv2dWithTwoCat(_TwoConvs):
    """The two convolutions concatenated along channels, and the sum of the other two inputs
    before them along the batch."""

    def forward(self, x1: Tensor, x2: Tensor, x3: Tensor, x4: Tensor) -> Tensor:
        convolved = torch.cat([self.conv1(x1), self.conv2(x2)], dim=1)
        added = x3 + x4
        return torch.cat([added, convolved])


class _ThreeAdd(nn.Module):
    """(x1 + x2) + (x3 + x4), three adds."""

    def forward(self, x1: Tensor, x2: Tensor, x3: Tensor, x4: Tensor) -> Tensor:
        left = x1 + x2
        right = x3 + x4
        return left + right


class _EmbeddingModule(nn.Module):
    """An embedding of 10 rows of 12."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(num_embeddings=10, embedding_dim=12)

    def forward(self, indices: Tensor) -> Tensor:
        return self.emb(indices)


class _EmbeddingConvLinearModule(nn.Module):
    """Embedding (10 rows of 8) laid out as an image, conv2d (8 -> 16, 1x3), back, linear 16 -> 8."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(num_embeddings=10, embedding_dim=8)
        self.conv = nn.Conv2d(8, 16, (1, 3))
        self.linear = nn.Linear(16, 8)

    def forward(self, indices: Tensor) -> Tensor:
        image = torch.permute(torch.unsqueeze(self.emb(indices), dim=0), (0, 3, 1, 2))
        features = torch.squeeze(torch.permute(self.conv(image), (0, 2, 3, 1)), dim=0)
        return self.linear(features)


class _ConvBnReLU2dAndLinearReLU(nn.Module):
    """conv2d + batch norm + relu, channels moved last, linear 3 -> 8 without bias (its
    ``relu`` is built and never called)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv_bn_relu = _ConvWithBNRelu(relu=True)
        self.linear = nn.Linear(3, 8, bias=False)
        self.relu = nn.ReLU()

    def forward(self, x: Tensor) -> Tensor:
        return self.linear(torch.permute(self.conv_bn_relu(x), (0, 2, 3, 1)))


class _GroupwiseConv2d(nn.Module):
    """conv2d 4 -> 4 channels, 3x3, in two groups."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, groups=2)

    def forward(self, x: Tensor) -> Tensor:
        return self.conv(x)

    def example_inputs(self) -> tuple[Tensor, ...]:
        return (torch.randn(2, 4, 10, 10),)


_MODELS: dict[str, type[nn.Module]] = {
    "ControlFlow": _ControlFlow,
    "ConvLinearWPermute": _ConvLinearWPermute,
    "TwoLinearModule": _TwoLinearModule,
    "ConvMaxPool2d": _ConvMaxPool2d,
    "ConvWithBNRelu": _ConvWithBNRelu,
    "ConvTWithBNRelu": _ConvTWithBNRelu,
    "Conv2dThenConv1d": _Conv2dThenConv1d,
    "Conv2dWithCat": _Conv2dWithCat,
    "Conv2dWithTwoCat": _Conv2dWithTwoCat,
    "ThreeAdd": _ThreeAdd,
    "EmbeddingModule": _EmbeddingModule,
    "EmbeddingConvLinearModule": _EmbeddingConvLinearModule,
    "ConvBnReLU2dAndLinearReLU": _ConvBnReLU2dAndLinearReLU,
    "GroupwiseConv2d": _GroupwiseConv2d,
}
for _name, _model in _MODELS.items():
    _model.__name__, _model.__qualname__ = _name, f"TestHelperModules.{_name}"


class TestHelperModules:
    """Upstream's models, as attributes: ``TestHelperModules.ConvWithBNRelu(relu=True)``.

    Here: ControlFlow, ConvLinearWPermute, TwoLinearModule, ConvMaxPool2d, ConvWithBNRelu,
    ConvTWithBNRelu, Conv2dThenConv1d, Conv2dWithCat, Conv2dWithTwoCat, ThreeAdd,
    EmbeddingModule, EmbeddingConvLinearModule, ConvBnReLU2dAndLinearReLU, GroupwiseConv2d.
    """

    __test__ = False  # not a test class, for pytest

    ControlFlow = _ControlFlow
    ConvLinearWPermute = _ConvLinearWPermute
    TwoLinearModule = _TwoLinearModule
    ConvMaxPool2d = _ConvMaxPool2d
    ConvWithBNRelu = _ConvWithBNRelu
    ConvTWithBNRelu = _ConvTWithBNRelu
    Conv2dThenConv1d = _Conv2dThenConv1d
    Conv2dWithCat = _Conv2dWithCat
    Conv2dWithTwoCat = _Conv2dWithTwoCat
    ThreeAdd = _ThreeAdd
    EmbeddingModule = _EmbeddingModule
    EmbeddingConvLinearModule = _EmbeddingConvLinearModule
    ConvBnReLU2dAndLinearReLU = _ConvBnReLU2dAndLinearReLU
    GroupwiseConv2d = _GroupwiseConv2d


# -- upstream's module-level models (eager-mode quantization tests); each takes a (1, 5) or
# (1, 3, 5, 5) input, as its get_example_inputs gives.

class SingleLayerLinearModel(nn.Module):
    """One linear layer 5 -> 5 (``fc1``)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(5, 5).to(dtype=torch.float)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc1(x)

    def get_example_inputs(self) -> tuple[Any, ...]:
        return (torch.rand(1, 5),)


class TwoLayerLinearModel(nn.Module):
    """Linear 5 -> 8 (``fc1``), linear 8 -> 5 (``fc2``)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(5, 8).to(dtype=torch.float)
        self.fc2 = nn.Linear(8, 5).to(dtype=torch.float)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(self.fc1(x))

    def get_example_inputs(self) -> tuple[Any, ...]:
        return (torch.rand(1, 5),)


class LinearAddModel(TwoLayerLinearModel):
    """As ``TwoLayerLinearModel``, with 5 added between the layers (``torch.add``)."""

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(torch.add(self.fc1(x), 5))


class ConvModel(nn.Module):
    """A 3x3 convolution 3 -> 5 channels without bias."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 5, 3, bias=False).to(dtype=torch.float)

    def forward(self, x: Tensor) -> Tensor:
        return self.conv(x)

    def get_example_inputs(self) -> tuple[Any, ...]:
        return (torch.rand(1, 3, 5, 5),)


class ConvBnReLUModel(ConvModel):
    """``ConvModel``'s convolution, a batch norm over its 5 channels and an in-place relu."""

    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(5).to(dtype=torch.float)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: Tensor) -> Tensor:
        return self.relu(self.bn(self.conv(x)))


class FunctionalLinear(nn.Module):
    """``F.linear`` with a random 5x5 weight and a zero bias held as plain tensor attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.rand((5, 5))
        self.bias = torch.zeros(5)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def get_example_inputs(self) -> tuple[Any, ...]:
        return (torch.rand(1, 5),)


class ManualEmbeddingBagLinear(nn.Module):
    """A summing embedding bag (10 rows of 12, with the embedding QAT qconfig), quantized, a
    linear 12 -> 1, dequantized; the model's qconfig is QNNPACK's default QAT one."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.EmbeddingBag(num_embeddings=10, embedding_dim=12, mode="sum")
        self.emb.qconfig = default_embedding_qat_qconfig  # type: ignore[assignment]  # eager quantization reads it
        self.quant = QuantStub()
        self.dequant = DeQuantStub()
        self.linear = nn.Linear(12, 1).to(dtype=torch.float)
        self.qconfig = get_default_qat_qconfig("qnnpack")

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        bagged = self.emb(input, offsets, per_sample_weights)
        return self.dequant(self.linear(self.quant(bagged)))
