"""Decorators for device-type tests: which dtypes a test takes, and which device types it
runs on. The ``only*`` decorators and ``deviceCountAtLeast`` skip in the test process (see
:mod:`torch_testing_ext._engine.skips.skip_checks`), so a multi-process test starts no rank for them.

Example::

    class TestFoo(TestCase):
        @dtypes(torch.float32, torch.float64)
        def test_add(self, device, dtype): ...

        @onlyCUDA
        def test_streams(self, device): ...

        @deviceCountAtLeast(2)
        def test_copy(self, devices): ...
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch

from ... import devices
from .._torch_private import privateuse1_backend_name
from ..skips.skip_checks import skip_when

__all__ = ["dtypes", "onlyOn", "onlyCPU", "onlyCUDA", "onlyAccelerator", "deviceCountAtLeast",
           "onlyNativeDeviceTypes", "disablecuDNN"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])


def _device_type_of(test: Any) -> str:
    """The device type a test runs on: its ``device_type`` (attribute, property or method),
    else the machine's (``devices.device_type()``)."""
    kind = getattr(test, "device_type", None)
    if callable(kind):
        kind = kind()
    return kind or devices.device_type()


class dtypes:
    """Run the test once per dtype (``@dtypes(torch.float32, torch.int64)``) or per tuple of
    dtypes (``@dtypes((torch.int8, torch.float32), ...)``, passed as ``dtypes``); with
    ``device_type="cuda"`` only for that device type, overriding the general list."""

    def __init__(self, *args: Any, device_type: str = "all") -> None:
        tuples = bool(args) and isinstance(args[0], (list, tuple))
        for arg in args:
            members = arg if tuples else (arg,)
            if tuples != isinstance(arg, (list, tuple)) or \
                    not all(isinstance(dtype, torch.dtype) for dtype in members):
                raise TypeError(f"dtypes takes dtypes, or tuples of dtypes for every variant; got {arg!r}")
        self.args = args
        self.device_type = device_type

    def __call__(self, fn: _F) -> _F:
        chosen = getattr(fn, "dtypes", {})
        if self.device_type in chosen:
            raise ValueError(f"{fn.__name__}: dtypes given twice for {self.device_type}")
        chosen[self.device_type] = self.args
        fn.dtypes = chosen  # type: ignore[attr-defined]  # upstream's mark
        return fn


def onlyOn(device_type: str | Sequence[str]) -> Callable[[_F], _F]:
    """Skip unless the test's device type is ``device_type`` (or one of them)."""
    allowed = (device_type,) if isinstance(device_type, str) else tuple(device_type)
    shown = "/".join(allowed)
    return skip_when(lambda test: None if _device_type_of(test) in allowed else
                     f"Only runs on {shown}, not on {_device_type_of(test)}")


def onlyCPU(fn: _F) -> _F:
    """Run only the CPU variant."""
    return onlyOn("cpu")(fn)


def onlyCUDA(fn: _F) -> _F:
    """Run only the CUDA variant."""
    return onlyOn("cuda")(fn)


def onlyAccelerator(fn: _F) -> _F:
    """Run only on accelerator variants (any accelerator; never CPU or meta)."""
    return skip_when(lambda test: "onlyAccelerator: doesn't run on CPU or meta devices"
                     if _device_type_of(test) in ("cpu", "meta") else None)(fn)


def deviceCountAtLeast(num_required_devices: int) -> Callable[[_F], _F]:
    """Give the test every device of its type as ``devices``; skip with fewer than
    ``num_required_devices`` (the CPU counts as one device)."""

    def check(test: Any) -> str | None:
        kind = _device_type_of(test)
        count = devices.devices_of_type(kind)
        if count >= num_required_devices:
            return None
        return f"fewer than {num_required_devices} devices detected ({kind}: {count})"

    def decorate(fn: _F) -> _F:
        if hasattr(fn, "num_required_devices"):
            raise ValueError(f"{fn.__name__}: deviceCountAtLeast given twice")
        fn.num_required_devices = num_required_devices  # type: ignore[attr-defined]  # upstream's mark
        return skip_when(check)(fn)

    return decorate


def _native_device_types() -> tuple[str, ...]:
    """The device types torch implements itself, with this torch's PrivateUse1 backend."""
    return ("cpu", "cuda", "xpu", "meta", "mps", "mtia", privateuse1_backend_name())


def onlyNativeDeviceTypes(fn: _F) -> _F:
    """Run only on device types torch implements itself (not XLA, lazy or an out-of-tree type
    other than the PrivateUse1 backend)."""
    return skip_when(lambda test: None if _device_type_of(test) in _native_device_types() else
                     f"onlyNativeDeviceTypes: doesn't run on {_device_type_of(test)}")(fn)


def disablecuDNN(fn: _F) -> _F:
    """Run the CUDA variant with cuDNN turned off (where cuDNN is there); others as they are."""

    @functools.wraps(fn)
    def without_cudnn(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _device_type_of(self) == "cuda" and torch.backends.cudnn.is_available():
            with torch.backends.cudnn.flags(enabled=False):
                return fn(self, *args, **kwargs)
        return fn(self, *args, **kwargs)

    return without_cudnn  # type: ignore[return-value]  # a wrapper with fn's signature
