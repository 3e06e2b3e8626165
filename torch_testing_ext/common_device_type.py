"""Device-type tests, named as in ``torch.testing._internal.common_device_type``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. The definitions live in ``_engine/device_type/`` (``ops`` in ``op_tests.py``, the tolerance
decorators in ``tolerances.py``) and ``_engine/skips/device_skips.py``. ``e4m3_type``, ``e5m2_type``
and their ``*_MAX_POS`` are read from ``_engine/device_type/float8_types.py`` when first asked for
(the choice asks a ROCm device), so importing this module asks no device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._engine.device_type import float8_types
from ._engine.device_type.capabilities import Capability, requires_capabilities
from ._engine.device_type.device_bases import CPUTestBase, DeviceTypeTestBase
from ._engine.device_type.device_decorators import (
    deviceCountAtLeast,
    disablecuDNN,
    dtypes,
    onlyAccelerator,
    onlyCPU,
    onlyCUDA,
    onlyNativeDeviceTypes,
    onlyOn,
)
from ._engine.device_type.device_instantiation import instantiate_device_type_tests
from ._engine.device_type.op_tests import OpDTypes, ops
from ._engine.device_type.tolerances import precisionOverride, tol, toleranceOverride
from ._engine.skips.device_skips import (
    has_cusolver,
    has_hipsolver,
    skipCPUIf,
    skipCPUIfNoFFT,
    skipCPUIfNoLapack,
    skipCPUIfNoMklSparse,
    skipCUDAIf,
    skipCUDAIfNoCusolver,
    skipCUDAIfNoMagma,
    skipCUDAIfNoMagmaAndNoCusolver,
    skipCUDAIfNoMagmaAndNoLinalgsolver,
    skipCUDAIfRocm,
    skipIf,
    skipMeta,
    skipMetaIf,
    skipXPU,
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
    "OpDTypes",
    "tol",
    "toleranceOverride",
    "precisionOverride",
    "onlyNativeDeviceTypes",
    "disablecuDNN",
    "skipXPU",
    "skipCPUIfNoLapack",
    "skipCPUIfNoFFT",
    "skipCPUIfNoMklSparse",
    "has_cusolver",
    "has_hipsolver",
    "skipCUDAIfNoMagma",
    "skipCUDAIfNoCusolver",
    "skipCUDAIfNoMagmaAndNoCusolver",
    "skipCUDAIfNoMagmaAndNoLinalgsolver",
    "skipCUDAIfRocm",
    "Capability",
    "requires_capabilities",
    "e4m3_type",  # noqa: F822  # given by __getattr__ below
    "E4M3_MAX_POS",  # noqa: F822  # given by __getattr__ below
    "e5m2_type",  # noqa: F822  # given by __getattr__ below
    "E5M2_MAX_POS",  # noqa: F822  # given by __getattr__ below
]

# The names this module gives when they are first read (module __getattr__, PEP 562).
_READ_WHEN_ASKED: dict[str, Callable[[], Any]] = {
    "e4m3_type": float8_types.e4m3_type,
    "E4M3_MAX_POS": float8_types.e4m3_max_pos,
    "e5m2_type": float8_types.e5m2_type,
    "E5M2_MAX_POS": float8_types.e5m2_max_pos,
}


def __getattr__(name: str) -> Any:
    if name in _READ_WHEN_ASKED:
        return _READ_WHEN_ASKED[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
