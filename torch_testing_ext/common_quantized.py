"""Quantized-operator helpers, named as in ``torch.testing._internal.common_quantized``.

So far ``override_quantized_engine`` (defined in ``_engine/testcase/quantization_case.py``):
the quantized engine switched for a block.
"""

from __future__ import annotations

from ._engine.testcase.quantization_case import override_quantized_engine

__all__ = ["override_quantized_engine"]
