"""Platform flags and the generic skip decorators of ``common_utils``.

The flags are computed once, from :mod:`torch_testing_ext.devices` and the environment;
the decorators skip in the test process (see :mod:`.skip_checks`).

Three upstream flags are constant here: this harness never runs inside Meta's build
(``IS_FBCODE``) or CI (``IS_SANDCASTLE``), and has no mode that runs every test under Dynamo
(``TEST_WITH_TORCHDYNAMO``), so the decorators keyed on them never fire, and the
"pass in Sandcastle" skips are plain skips.
"""

from __future__ import annotations

import sys
import unittest
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from .. import devices
from ..ranks import settings
from ..ranks.skip_checks import skip_if

__all__ = [
    "TEST_CUDA",
    "TEST_XPU",
    "TEST_HPU",
    "IS_WINDOWS",
    "IS_MACOS",
    "IS_FBCODE",
    "IS_SANDCASTLE",
    "TEST_WITH_TORCHDYNAMO",
    "TEST_WITH_ROCM",
    "TEST_WITH_SLOW",
    "TEST_WITH_DEV_DBG_ASAN",
    "NO_MULTIPROCESSING_SPAWN",
    "slowTest",
    "skipIfXpu",
    "skipIfRocm",
    "skipIfHpu",
    "skipIfTorchDynamo",
    "xfailIfTorchDynamo",
    "skip_but_pass_in_sandcastle",
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
TEST_HPU: bool = devices.accelerator_type() == "hpu"
IS_WINDOWS: bool = sys.platform == "win32"
IS_MACOS: bool = sys.platform == "darwin"
IS_FBCODE: bool = False
IS_SANDCASTLE: bool = False
TEST_WITH_TORCHDYNAMO: bool = False
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


def skipIfHpu(fn: _F) -> _F:
    """Skip on Intel Gaudi (HPU) machines."""
    return skip_if(TEST_HPU, "test doesn't currently work with HPU")(fn)


def skipIfTorchDynamo(msg: str = "test doesn't currently work with dynamo") -> Callable[[_F], _F]:
    """Skip with ``msg`` when the tests run under Dynamo (``TEST_WITH_TORCHDYNAMO``; never here)."""
    if not isinstance(msg, str):
        raise TypeError(f"skipIfTorchDynamo takes a message, got {msg!r}: write @skipIfTorchDynamo()")
    # Read when the test runs, so that a self-test can switch the flag on.
    return skip_if(lambda: TEST_WITH_TORCHDYNAMO, msg)


def xfailIfTorchDynamo(fn: _F) -> _F:
    """Expect ``fn`` to fail when the tests run under Dynamo (``TEST_WITH_TORCHDYNAMO``; never here)."""
    return unittest.expectedFailure(fn) if TEST_WITH_TORCHDYNAMO else fn


def skip_but_pass_in_sandcastle(reason: str) -> Callable[[_F], _F]:
    """Always skip with ``reason`` (Meta's internal CI reports such skips as passes)."""
    return skip_if(True, reason)


def skip_but_pass_in_sandcastle_if(condition: bool, reason: str) -> Callable[[_F], _F]:
    """Skip when ``condition`` holds (Meta's internal CI reports such skips as passes)."""
    return skip_if(condition, reason)
