"""``DynamoTestCase``: a TestCase that gives each test a clean Dynamo.

For the whole class it sets the Dynamo config that tests expect (errors are raised, not
suppressed; no compilation-metrics logging); around every test it resets Dynamo, clears its
counters and restores grad mode if the test changed it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import ClassVar

import torch

from ... import devices
from .._torch_private import clear_dynamo_counters, patch_dynamo_config
from ..runner.main import run_tests as _run_tests
from ..testcase.tensor_testcase import TestCase

__all__ = ["DynamoTestCase", "DynamoResetInRanks", "reset_dynamo", "run_tests_if_available"]

__unittest = True


def reset_dynamo() -> None:
    """Forget every compiled frame and clear Dynamo's counters."""
    torch.compiler.reset()
    clear_dynamo_counters()


class DynamoResetInRanks:
    """Mixin for a rank-process test case: Dynamo is reset in each rank before and after
    each test (compiled frames and counters of one test never reach the next)."""

    def setUpRank(self) -> None:
        super().setUpRank()  # type: ignore[misc]  # a mixin: the rank test case after it has the hook
        reset_dynamo()

    def tearDownRank(self) -> None:
        reset_dynamo()
        super().tearDownRank()  # type: ignore[misc]  # a mixin: the rank test case after it has the hook


class DynamoTestCase(TestCase):
    """TestCase for code that compiles with ``torch.compile``; Dynamo is reset around each test.

    Subclasses may add config for the whole class in ``setUpClass`` with
    ``cls._dynamo_config.enter_context(...)``.
    """

    _dynamo_config: ClassVar[contextlib.ExitStack]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls._dynamo_config = contextlib.ExitStack()
        cls._dynamo_config.enter_context(patch_dynamo_config(
            raise_on_ctx_manager_usage=True, suppress_errors=False, log_compilation_metrics=False,
        ))

    @classmethod
    def tearDownClass(cls) -> None:
        cls._dynamo_config.close()
        super().tearDownClass()

    def setUp(self) -> None:
        self._grad_enabled_before = torch.is_grad_enabled()
        super().setUp()
        reset_dynamo()

    def tearDown(self) -> None:
        reset_dynamo()
        super().tearDown()
        torch.set_grad_enabled(self._grad_enabled_before)


def _missing(need: str) -> bool:
    if need == "cuda":
        return devices.accelerator_type() != "cuda"
    try:
        importlib.import_module(need)
    except ImportError:
        return True
    return False


def run_tests_if_available(needs: str | Sequence[str] = ()) -> None:
    """``run_tests()``, unless something the file needs is missing: ``"cuda"`` (a CUDA device)
    or the name of a module that must import. Then it says which, and exits 0 having run
    nothing, as upstream's ``torch._dynamo.test_case.run_tests(needs=...)`` does."""
    wanted = (needs,) if isinstance(needs, str) else tuple(needs)
    missing = [need for need in wanted if _missing(need)]
    if missing:
        prog = os.path.basename(sys.argv[0]) or "test"
        print(f"{prog}: skipped: needs {', '.join(missing)}", file=sys.stderr)
        sys.exit(0)
    _run_tests()
