"""Device-type tests, named as in ``torch.testing._internal.common_device_type``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. The definitions live in ``device_type/``.
"""

from __future__ import annotations

from .device_type.device_bases import CPUTestBase, DeviceTypeTestBase
from .device_type.device_decorators import (
    deviceCountAtLeast,
    dtypes,
    onlyAccelerator,
    onlyCPU,
    onlyCUDA,
    onlyOn,
)
from .device_type.device_instantiation import instantiate_device_type_tests
from .device_type.device_skips import (
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
]
