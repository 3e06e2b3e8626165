"""General test utilities, named as in ``torch.testing._internal.common_utils``.

A test written for PyTorch's harness moves here by rewriting its import. The definitions live
in small modules (``testcase``, ``runner``, ``parametrize``, ``skips``, ``devices``); this
module is their upstream-named face plus the generic flags and skip decorators.
"""

from __future__ import annotations

import os
import unittest
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from . import devices
from .parametrize import instantiate_parametrized_tests, parametrize
from .runner import run_tests
from .skips import skip_if
from .testcase import TestCase

__all__ = [
    "TestCase",
    "run_tests",
    "parametrize",
    "instantiate_parametrized_tests",
    "load_tests",
    "slowTest",
    "skipIfXpu",
    "skipIfRocm",
    "skip_but_pass_in_sandcastle_if",
    "TEST_CUDA",
    "TEST_XPU",
    "TEST_WITH_ROCM",
    "TEST_WITH_SLOW",
    "TEST_WITH_DEV_DBG_ASAN",
    "NO_MULTIPROCESSING_SPAWN",
]

_F = TypeVar("_F", bound=Callable[..., Any])


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "0").lower() in ("1", "true", "yes", "on")


TEST_CUDA: bool = devices.accelerator_type() == "cuda"
TEST_XPU: bool = devices.accelerator_type() == "xpu"
TEST_WITH_ROCM: bool = torch.version.hip is not None
TEST_WITH_SLOW: bool = _env_flag("PYTORCH_TEST_WITH_SLOW")
TEST_WITH_DEV_DBG_ASAN: bool = _env_flag("PYTORCH_TEST_WITH_DEV_DBG_ASAN")
# Every supported platform offers the spawn start method; kept for upstream-style imports.
NO_MULTIPROCESSING_SPAWN: bool = False


def load_tests(
    loader: unittest.TestLoader, standard_tests: unittest.TestSuite, pattern: str | None
) -> unittest.TestSuite:
    """unittest's ``load_tests`` hook: the module's tests, unchanged (sharding is run_test.py's)."""
    return standard_tests


def slowTest(fn: _F) -> _F:
    """Run the test only when ``PYTORCH_TEST_WITH_SLOW=1``."""
    return skip_if(lambda: not _env_flag("PYTORCH_TEST_WITH_SLOW"),
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
