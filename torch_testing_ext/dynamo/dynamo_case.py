"""``DynamoTestCase``: a TestCase that gives each test a clean Dynamo.

For the whole class it sets the Dynamo config that tests expect (errors are raised, not
suppressed; no compilation-metrics logging); around every test it resets Dynamo, clears its
counters and restores grad mode if the test changed it.
"""

from __future__ import annotations

import contextlib
from typing import ClassVar

import torch

from .._torch_private import clear_dynamo_counters, patch_dynamo_config
from ..case.test_case import TestCase

__all__ = ["DynamoTestCase", "reset_dynamo"]

__unittest = True


def reset_dynamo() -> None:
    """Forget every compiled frame and clear Dynamo's counters."""
    torch.compiler.reset()
    clear_dynamo_counters()


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
