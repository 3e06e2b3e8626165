"""Skips for one device type of a device-type test, named as in ``common_device_type``:
``skipXPUIf(cond, reason)`` skips only the XPU variant, ``skipMeta`` only a ``meta`` one.
Decided in the test process, before any rank starts.

The build-dependent skips (``skipCPUIfNoLapack``, ``skipCUDAIfNoMagma``, ...) ask what this
torch was built with, which asks no device.

Example::

    @skipXPUIf(True, "not on XPU yet")
    def test_x(self, device): ...
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import torch

from .._torch_private import built_with_lapack, built_with_spectral
from ..device_type.device_decorators import _device_type_of
from .skip_checks import skip_when

__all__ = ["skipIf", "skipCPUIf", "skipCUDAIf", "skipXPUIf", "skipMetaIf", "skipMeta", "skipXPU",
           "skipCPUIfNoLapack", "skipCPUIfNoFFT", "skipCPUIfNoMklSparse", "has_cusolver", "has_hipsolver",
           "skipCUDAIfNoMagma", "skipCUDAIfNoCusolver", "skipCUDAIfNoMagmaAndNoCusolver",
           "skipCUDAIfNoMagmaAndNoLinalgsolver", "skipCUDAIfRocm"]

_F = TypeVar("_F", bound=Callable[..., Any])


class skipIf:
    """Skip with ``reason`` when ``dep`` holds, on ``device_type`` only (a type, a collection of
    types, or None for every type). ``dep`` is a bool, or the name of a test attribute that is
    true (a missing attribute counts as true, as upstream)."""

    def __init__(self, dep: bool | str, reason: str,
                 device_type: str | Iterable[str] | None = None) -> None:
        if not isinstance(dep, (bool, str)):
            raise TypeError(f"skipIf takes a bool or a test attribute's name, got {dep!r}")
        self.dep = dep
        self.reason = reason
        self.device_type = device_type

    def _applies_to(self, kind: str) -> bool:
        if self.device_type is None:
            return True
        if isinstance(self.device_type, str):
            return kind == self.device_type
        return kind in tuple(self.device_type)

    def __call__(self, fn: _F) -> _F:
        def check(test: Any) -> str | None:
            if not self._applies_to(_device_type_of(test)):
                return None
            holds = bool(getattr(test, self.dep, True)) if isinstance(self.dep, str) else self.dep
            return self.reason if holds else None

        return skip_when(check)(fn)


class skipCPUIf(skipIf):
    """:class:`skipIf` for the CPU variant only."""

    def __init__(self, dep: bool | str, reason: str) -> None:
        super().__init__(dep, reason, device_type="cpu")


class skipCUDAIf(skipIf):
    """:class:`skipIf` for the CUDA variant only."""

    def __init__(self, dep: bool | str, reason: str) -> None:
        super().__init__(dep, reason, device_type="cuda")


class skipXPUIf(skipIf):
    """:class:`skipIf` for the XPU variant only."""

    def __init__(self, dep: bool | str, reason: str) -> None:
        super().__init__(dep, reason, device_type="xpu")


class skipMetaIf(skipIf):
    """:class:`skipIf` for the ``meta`` variant only."""

    def __init__(self, dep: bool | str, reason: str) -> None:
        super().__init__(dep, reason, device_type="meta")


def skipMeta(fn: _F) -> _F:
    """Skip the ``meta`` variant (this package makes none, so it never skips here)."""
    return skipMetaIf(True, "test doesn't work with meta tensors")(fn)


def skipXPU(fn: _F) -> _F:
    """Skip the XPU variant."""
    return skipXPUIf(True, "test doesn't work on XPU backend")(fn)


def skipCPUIfNoLapack(fn: _F) -> _F:
    """Skip the CPU variant where torch was built without LAPACK."""
    return skipCPUIf(not built_with_lapack(), "PyTorch compiled without Lapack")(fn)


def skipCPUIfNoFFT(fn: _F) -> _F:
    """Skip the CPU variant where torch was built without FFT support."""
    return skipCPUIf(not built_with_spectral(), "PyTorch is built without FFT support")(fn)


def skipCPUIfNoMklSparse(fn: _F) -> _F:
    """Skip the CPU variant without MKL's sparse routines (no MKL, or Windows, where torch does
    not link them)."""
    return skipCPUIf(sys.platform == "win32" or not torch.backends.mkl.is_available(),
                     "PyTorch is built without MKL support")(fn)


def has_cusolver() -> bool:
    """Whether CUDA linear algebra uses cuSOLVER (a CUDA build; ROCm has hipSOLVER)."""
    return torch.version.hip is None


def has_hipsolver() -> bool:
    """Whether CUDA linear algebra uses hipSOLVER (a ROCm build)."""
    return torch.version.hip is not None


def skipCUDAIfNoMagma(fn: _F) -> _F:
    """Skip the CUDA variant where torch was built without MAGMA."""
    return skipCUDAIf(not torch.cuda.has_magma, "no MAGMA library detected")(fn)


def skipCUDAIfNoCusolver(fn: _F) -> _F:
    """Skip the CUDA variant without cuSOLVER or hipSOLVER (never, on today's builds)."""
    return skipCUDAIf(not has_cusolver() and not has_hipsolver(), "cuSOLVER not available")(fn)


def skipCUDAIfNoMagmaAndNoCusolver(fn: _F) -> _F:
    """Skip the CUDA variant with neither cuSOLVER nor MAGMA."""
    return fn if has_cusolver() else skipCUDAIfNoMagma(fn)


def skipCUDAIfNoMagmaAndNoLinalgsolver(fn: _F) -> _F:
    """Skip the CUDA variant with neither cuSOLVER/hipSOLVER nor MAGMA."""
    return fn if has_cusolver() or has_hipsolver() else skipCUDAIfNoMagma(fn)


def skipCUDAIfRocm(func: _F | None = None, *,
                   msg: str = "test doesn't currently work on the ROCm stack") -> Any:
    """Skip the CUDA variant on a ROCm build: ``@skipCUDAIfRocm`` or ``@skipCUDAIfRocm(msg=...)``."""

    def decorate(fn: _F) -> _F:
        return skipCUDAIf(torch.version.hip is not None, f"skipCUDAIfRocm: {msg}")(fn)

    return decorate(func) if func is not None else decorate
