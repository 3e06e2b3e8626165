"""Skips for one device type of a device-type test, named as in ``common_device_type``:
``skipXPUIf(cond, reason)`` skips only the XPU variant, ``skipMeta`` only a ``meta`` one.
Decided in the test process, before any rank starts.

``ops`` (run a test once per OpInfo) needs upstream's operator database
(``common_methods_invocations.op_db``), which this package does not provide: a test decorated
with it imports, and skips saying so.

Example::

    @skipXPUIf(True, "not on XPU yet")
    def test_x(self, device): ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ..device_type.device_decorators import _device_type_of
from .skip_checks import skip_when

__all__ = ["skipIf", "skipCPUIf", "skipCUDAIf", "skipXPUIf", "skipMetaIf", "skipMeta", "ops",
           "OPS_UNAVAILABLE"]

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


OPS_UNAVAILABLE = ("ops: OpInfo-driven tests need upstream's operator database "
                   "(common_methods_invocations.op_db), which torch_testing_ext does not provide")


class ops:
    """Upstream's per-OpInfo parametrization, accepted so that a file using it imports: the
    decorated test skips with :data:`OPS_UNAVAILABLE`. The arguments are kept as given."""

    def __init__(self, op_list: Iterable[Any], *, dtypes: Any = None,
                 allowed_dtypes: Iterable[Any] | None = None, skip_if_dynamo: bool = True) -> None:
        self.op_list = list(op_list)
        self.opinfo_dtypes = dtypes
        self.allowed_dtypes = None if allowed_dtypes is None else set(allowed_dtypes)
        self.skip_if_dynamo = skip_if_dynamo

    def __call__(self, fn: _F) -> _F:
        return skip_when(lambda _test: OPS_UNAVAILABLE)(fn)
