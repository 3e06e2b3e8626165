"""General test utilities, named as in ``torch.testing._internal.common_utils``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. Definitions live in ``testcase/`` (TestCase, parametrize, temporary paths),
``file_runner/`` (run_tests), ``skips/`` (flags and generic skip decorators) and ``process_groups/``
(free ports).
"""

from __future__ import annotations

from .file_runner.main import load_tests, run_tests
from .process_groups.ports import (
    ADDRESS_IN_USE,
    CONNECT_TIMEOUT,
    find_free_port,
    retry_on_connect_failures,
)
from .skips.platform_skips import (
    IS_FBCODE,
    IS_MACOS,
    IS_SANDCASTLE,
    IS_WINDOWS,
    NO_MULTIPROCESSING_SPAWN,
    TEST_CUDA,
    TEST_HPU,
    TEST_WITH_DEV_DBG_ASAN,
    TEST_WITH_ROCM,
    TEST_WITH_SLOW,
    TEST_WITH_TORCHDYNAMO,
    TEST_XPU,
    skip_but_pass_in_sandcastle,
    skip_but_pass_in_sandcastle_if,
    skipIfHpu,
    skipIfRocm,
    skipIfTorchDynamo,
    skipIfXpu,
    slowTest,
    xfailIfTorchDynamo,
)
from .testcase.parametrize import decorateIf, instantiate_parametrized_tests, parametrize, subtest
from .testcase.serial_mark import serialTest
from .testcase.temp_paths import TemporaryDirectoryName, TemporaryFileName
from .testcase.tensor_testcase import TestCase

__all__ = [
    "TestCase",
    "run_tests",
    "parametrize",
    "subtest",
    "decorateIf",
    "instantiate_parametrized_tests",
    "load_tests",
    "serialTest",
    "TemporaryFileName",
    "TemporaryDirectoryName",
    "find_free_port",
    "retry_on_connect_failures",
    "ADDRESS_IN_USE",
    "CONNECT_TIMEOUT",
    # skips/platform_skips.py's names, listed here so that linters and type checkers see them re-exported
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
