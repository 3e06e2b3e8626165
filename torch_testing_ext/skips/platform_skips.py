"""Platform flags and the generic skip decorators of ``common_utils``.

The flags are computed once, from :mod:`torch_testing_ext.devices` and the environment;
the decorators skip in the test process (see :mod:`.skip_checks`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from .. import devices
from ..run import settings
from .skip_checks import skip_if

__all__ = [
    "TEST_CUDA",
    "TEST_XPU",
    "TEST_WITH_ROCM",
    "TEST_WITH_SLOW",
    "TEST_WITH_DEV_DBG_ASAN",
    "NO_MULTIPROCESSING_SPAWN",
    "slowTest",
    "skipIfXpu",
    "skipIfRocm",
    "skip_but_pass_in_sandcastle_if",
]

_F = TypeVar("_F", bound=Callable[..., Any])


def _read_at_import(setting: settings.EnvSetting) -> bool:
    try:
        return bool(setting.get())
    except settings.SettingError as error:  # one line and exit 2, not an import traceback
        print(f"torch_testing_ext: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None


TEST_CUDA: bool = devices.accelerator_type() == "cuda"
TEST_XPU: bool = devices.accelerator_type() == "xpu"
TEST_WITH_ROCM: bool = torch.version.hip is not None
TEST_WITH_SLOW: bool = _read_at_import(settings.TEST_WITH_SLOW)
TEST_WITH_DEV_DBG_ASAN: bool = _read_at_import(settings.TEST_WITH_DEV_DBG_ASAN)
# Every supported platform offers the spawn start method; kept for upstream-style imports.
NO_MULTIPROCESSING_SPAWN: bool = False


def slowTest(fn: _F) -> _F:
    """Run the test only when ``PYTORCH_TEST_WITH_SLOW=1``."""
    return skip_if(lambda: not settings.TEST_WITH_SLOW.get(),
                   "test is slow; run with PYTORCH_TEST_WITH_SLOW=1 to enable it")(fn)


def skipIfXpu(fn: _F) -> _F:
    """Skip on Intel XPU machines."""
    return skip_if(TEST_XPU, "test doesn't currently work on the XPU stack")(fn)


def skipIfRocm(fn: _F) -> _F:
    """Skip on ROCm builds of PyTorch."""
    return skip_if(TEST_WITH_ROCM, "test doesn't currently work on the ROCm stack")(fn)


def skip_but_pass_in_sandcastle_if(condition: bool, reason: str) -> Callable[[_F], _F]:
    """Skip when ``condition`` holds (Meta's internal CI reports such skips as passes)."""
    return skip_if(condition, reason)
