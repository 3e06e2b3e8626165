"""The skip decorators of ``common_quantization``: quantized engines, oneDNN bf16, Dynamo and
Inductor support, torchvision.

Each takes a test method or a test class. On a class the condition is asked once, when the
class is decorated, and unittest skips each of its tests; on a method it is asked when the test
runs, in the test process. The reasons are upstream's words.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from .._torch_private import dynamo_supported, inductor_supported, mkldnn_bf16_supported
from .platform_skips import lazy_skip_if

__all__ = [
    "skipIfNoFBGEMM",
    "skipIfNoQNNPACK",
    "skipIfNoONEDNN",
    "skipIfNoONEDNNBF16",
    "skipIfNoX86",
    "skipIfNoDynamoSupport",
    "skipIfNoInductorSupport",
    "skip_if_no_torchvision",
    "HAS_TORCHVISION",
    "supported_quantized_engines",
]

_T = TypeVar("_T")

# torchvision can be imported here (found, not imported: importing it costs a second).
HAS_TORCHVISION: bool = importlib.util.find_spec("torchvision") is not None


def supported_quantized_engines() -> list[str]:
    """The quantized engines this torch build offers (``"x86"``, ``"qnnpack"``...)."""
    return list(torch.backends.quantized.supported_engines)


def _without_engine(engine: str) -> Callable[[], bool]:
    """A condition: this torch build has no quantized engine ``engine``."""
    return lambda: engine not in supported_quantized_engines()


def _skip(condition: Callable[[], bool], reason: str) -> Callable[[_T], _T]:
    return lazy_skip_if(condition, reason)


def skipIfNoFBGEMM(target: _T) -> _T:
    """Skip without the FBGEMM quantized engine (x86 CPUs with AVX2 or newer)."""
    return _skip(_without_engine("fbgemm"), "Quantized operations require FBGEMM. FBGEMM is only optimized "
                 "for CPUs with instruction set support AVX2 or newer.")(target)


def skipIfNoQNNPACK(target: _T) -> _T:
    """Skip without the QNNPACK quantized engine."""
    return _skip(_without_engine("qnnpack"), "Quantized operations require QNNPACK.")(target)


def skipIfNoONEDNN(target: _T) -> _T:
    """Skip without the oneDNN quantized engine."""
    return _skip(_without_engine("onednn"), "Quantized operations require ONEDNN.")(target)


def skipIfNoONEDNNBF16(target: _T) -> _T:
    """Skip unless oneDNN computes bfloat16 on this CPU."""
    return _skip(lambda: not mkldnn_bf16_supported(), "Quantized operations require BF16 support.")(target)


def skipIfNoX86(target: _T) -> _T:
    """Skip without the x86 quantized engine."""
    return _skip(_without_engine("x86"), "Quantized operations require X86.")(target)


def skipIfNoDynamoSupport(target: _T) -> _T:
    """Skip where Dynamo does not run (platform, Python version)."""
    return _skip(lambda: not dynamo_supported(), "dynamo doesn't support.")(target)


def skipIfNoInductorSupport(target: _T) -> _T:
    """Skip where Inductor does not run (platform, Python version)."""
    return _skip(lambda: not inductor_supported(), "inductor doesn't support.")(target)


def skip_if_no_torchvision(target: Any) -> Any:
    """Skip a test method when torchvision is not installed."""
    return _skip(lambda: not HAS_TORCHVISION, "no torchvision")(target)
