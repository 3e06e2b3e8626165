"""Quantization test helpers, named as in ``torch.testing._internal.common_quantization``.

The part of upstream's module that downstream projects' tests use (torchao's PT2E quantization
tests): ``QuantizationTestCase`` (its sample data and graph-node checks), ``NodeSpec``,
``TestHelperModules`` and the module-level models (those the tests use), the quantized-engine, Dynamo, Inductor and
torchvision skips, and ``override_quantized_engine`` (from ``common_quantized``: torch's own file,
as upstream's module imports it). Definitions live in ``_engine/testcase/quantization_case.py``,
``_engine/models/quantization_models.py`` and ``_engine/skips/quantization_skips.py``.
"""

from __future__ import annotations

from ._engine.models.quantization_models import (
    ConvBnReLUModel,
    ConvModel,
    FunctionalLinear,
    LinearAddModel,
    ManualEmbeddingBagLinear,
    SingleLayerLinearModel,
    TestHelperModules,
    TwoLayerLinearModel,
)
from ._engine.skips.quantization_skips import (
    HAS_TORCHVISION,
    skip_if_no_torchvision,
    skipIfNoDynamoSupport,
    skipIfNoFBGEMM,
    skipIfNoInductorSupport,
    skipIfNoONEDNN,
    skipIfNoONEDNNBF16,
    skipIfNoQNNPACK,
    skipIfNoX86,
)
from ._engine.testcase.quantization_case import NodeSpec, QuantizationTestCase
from .common_quantized import override_quantized_engine  # type: ignore[attr-defined]  # torch's own file, loaded at import

__all__ = [
    "QuantizationTestCase",
    "NodeSpec",
    "TestHelperModules",
    "SingleLayerLinearModel",
    "TwoLayerLinearModel",
    "LinearAddModel",
    "ConvModel",
    "ConvBnReLUModel",
    "FunctionalLinear",
    "ManualEmbeddingBagLinear",
    "override_quantized_engine",
    "skipIfNoFBGEMM",
    "skipIfNoQNNPACK",
    "skipIfNoONEDNN",
    "skipIfNoONEDNNBF16",
    "skipIfNoX86",
    "skipIfNoDynamoSupport",
    "skipIfNoInductorSupport",
    "skip_if_no_torchvision",
    "HAS_TORCHVISION",
]
