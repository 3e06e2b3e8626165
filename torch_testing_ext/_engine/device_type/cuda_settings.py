"""CUDA library facts and settings that op tests read: cuDNN's presence, MAGMA's version, and
running with TF32 turned off.

Example::

    @with_tf32_off
    def test_matmul(self, device): ...  # float32 matmuls and convolutions in full precision
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import torch

from ... import devices

__all__ = ["TEST_CUDNN", "magma_version", "tf32_off", "with_tf32_off"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _cudnn_usable() -> bool:
    """Whether CUDA is here and cuDNN (MIOpen on ROCm) accepts a float32 tensor on device 0."""
    if devices.accelerator_type() != "cuda":
        return False
    if torch.version.hip is not None:
        return True
    return bool(torch.backends.cudnn.is_acceptable(torch.tensor(1.0, device="cuda:0")))


# cuDNN can be used (asked when first read: the answer initialises CUDA).
TEST_CUDNN = devices.LazyFlag(_cudnn_usable)


def magma_version() -> tuple[int, ...]:
    """The MAGMA version torch was built with (``(2, 6, 1)``), ``(0, 0)`` without MAGMA."""
    shown = torch.__config__.show()
    for line in shown.splitlines():
        words = line.strip().lstrip("- ").split()
        if len(words) >= 2 and words[0] == "Magma":
            return tuple(int(part) for part in words[1].split("."))
    return (0, 0)


@contextlib.contextmanager
def tf32_off() -> Iterator[None]:
    """Within the block, CUDA float32 matmuls and cuDNN convolutions do not use TF32."""
    matmul_before = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        with torch.backends.cudnn.flags(enabled=None, benchmark=None, deterministic=None, allow_tf32=False):
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = matmul_before


def with_tf32_off(fn: _F) -> _F:
    """Run ``fn`` under :func:`tf32_off`."""

    @functools.wraps(fn)
    def without_tf32(*args: Any, **kwargs: Any) -> Any:
        with tf32_off():
            return fn(*args, **kwargs)

    return without_tf32  # type: ignore[return-value]  # a wrapper with fn's signature
