"""General test utilities, named as in ``torch.testing._internal.common_utils``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. Definitions live in ``case/`` (TestCase, parametrize), ``run/`` (run_tests) and
``skips/`` (flags and generic skip decorators).
"""

from __future__ import annotations

from .case.parametrize import instantiate_parametrized_tests, parametrize
from .case.test_case import TestCase
from .run.main import load_tests, run_tests
from .skips import platform_skips
from .skips.platform_skips import (
    NO_MULTIPROCESSING_SPAWN,
    TEST_CUDA,
    TEST_WITH_DEV_DBG_ASAN,
    TEST_WITH_ROCM,
    TEST_WITH_SLOW,
    TEST_XPU,
    skip_but_pass_in_sandcastle_if,
    skipIfRocm,
    skipIfXpu,
    slowTest,
)

__all__ = [
    "TestCase",
    "run_tests",
    "parametrize",
    "instantiate_parametrized_tests",
    "load_tests",
]
__all__ += platform_skips.__all__
