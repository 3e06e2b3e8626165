"""Device-type tests, named as in ``torch.testing._internal.common_device_type``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. The definitions live in ``_engine/device_type/``. ``e4m3_type`` and ``E4M3_MAX_POS`` are read
from ``_engine/device_type/float8_types.py`` when first asked for (the choice asks a ROCm device), so
importing this module asks no device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._engine.device_type import float8_types
from ._engine.device_type.capabilities import Capability, requires_capabilities
from ._engine.device_type.device_bases import CPUTestBase, DeviceTypeTestBase
from ._engine.device_type.device_decorators import (
    deviceCountAtLeast,
    dtypes,
    onlyAccelerator,
    onlyCPU,
    onlyCUDA,
    onlyOn,
)
from ._engine.device_type.device_instantiation import instantiate_device_type_tests
from ._engine.skips.device_skips import (
    ops,
    skipCPUIf,
    skipCUDAIf,
    skipIf,
    skipMeta,
    skipMetaIf,
    skipXPUIf,
)

__all__ = [
    "instantiate_device_type_tests",
    "DeviceTypeTestBase",
    "CPUTestBase",
    "dtypes",
    "onlyOn",
    "onlyCPU",
    "onlyCUDA",
    "onlyAccelerator",
    "deviceCountAtLeast",
    "skipIf",
    "skipCPUIf",
    "skipCUDAIf",
    "skipXPUIf",
    "skipMetaIf",
    "skipMeta",
    "ops",
    "Capability",
    "requires_capabilities",
    "e4m3_type",  # noqa: F822  # given by __getattr__ below
    "E4M3_MAX_POS",  # noqa: F822  # given by __getattr__ below
]

# The names this module gives when they are first read (module __getattr__, PEP 562).
_READ_WHEN_ASKED: dict[str, Callable[[], Any]] = {
    "e4m3_type": float8_types.e4m3_type,
    "E4M3_MAX_POS": float8_types.e4m3_max_pos,
}


def __getattr__(name: str) -> Any:
    if name in _READ_WHEN_ASKED:
        return _READ_WHEN_ASKED[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
