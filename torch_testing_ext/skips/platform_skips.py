"""Platform flags and the generic skip decorators of ``common_utils``.

The flags are computed once, from :mod:`torch_testing_ext.devices` and the environment;
the decorators skip in the test process (see :mod:`.skip_checks`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from .. import devices
from .skip_checks import skip_if

__all__ = [
    "env_flag",
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


def env_flag(name: str) -> bool:
    """True when the environment variable ``name`` is set to 1, true, yes or on."""
    return os.environ.get(name, "0").lower() in ("1", "true", "yes", "on")


TEST_CUDA: bool = devices.accelerator_type() == "cuda"
TEST_XPU: bool = devices.accelerator_type() == "xpu"
TEST_WITH_ROCM: bool = torch.version.hip is not None
TEST_WITH_SLOW: bool = env_flag("PYTORCH_TEST_WITH_SLOW")
TEST_WITH_DEV_DBG_ASAN: bool = env_flag("PYTORCH_TEST_WITH_DEV_DBG_ASAN")
# Every supported platform offers the spawn start method; kept for upstream-style imports.
NO_MULTIPROCESSING_SPAWN: bool = False


def slowTest(fn: _F) -> _F:
    """Run the test only when ``PYTORCH_TEST_WITH_SLOW=1``."""
    return skip_if(lambda: not env_flag("PYTORCH_TEST_WITH_SLOW"),
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
