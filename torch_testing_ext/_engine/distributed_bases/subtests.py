"""``run_subtests``: one test body over every combination of some keyword arguments (also as
a method, for test classes that offer ``self.run_subtests``: :class:`SubtestsMixin`).

Cheaper than one test per combination when starting ranks or a process group dominates::

    def test_wrap(self):
        run_subtests(self, {"use_orig_params": [False, True], "offload": [False, True]},
                     self._check_wrap, torch.nn.Linear(2, 2))
"""

from __future__ import annotations

import itertools
import unittest
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

__all__ = ["run_subtests", "SubtestsMixin"]

__unittest = True


def run_subtests(
    cls_inst: unittest.TestCase,
    subtest_config: dict[str, list[Any]],
    test_fn: Callable[..., Any],
    *test_args: Any,
    **test_kwargs: Any,
) -> None:
    """Call ``test_fn(*test_args, **test_kwargs, **combination)`` for every combination of
    ``subtest_config``'s values, each as a ``subTest`` of ``cls_inst``.

    Dynamo is reset around each call, and after each call every rank waits at a barrier of
    the default group, if there is one. Inside a rank the first failing combination fails the
    rank, and its error carries a note naming the combination (``in subtest scale=3``); in one
    process, unittest reports each failing combination.
    """
    names = list(subtest_config)
    for values in itertools.product(*subtest_config.values()):
        combination = dict(zip(names, values, strict=True))
        with cls_inst.subTest(**combination):
            torch.compiler.reset()
            try:
                test_fn(*test_args, **test_kwargs, **combination)
            except Exception as error:
                if hasattr(error, "add_note"):  # Python 3.11+
                    error.add_note("in subtest " + ", ".join(f"{k}={v!r}" for k, v in combination.items()))
                raise
            torch.compiler.reset()
        if dist.is_initialized():
            dist.barrier()


class SubtestsMixin:
    """Gives a test class ``self.run_subtests(subtest_config, test_fn, *args, **kwargs)``."""

    def run_subtests(self, subtest_config: dict[str, list[Any]], test_fn: Callable[..., Any],
                     *test_args: Any, **test_kwargs: Any) -> None:
        """:func:`run_subtests` with this test as the first argument."""
        run_subtests(self,  # type: ignore[arg-type]  # a mixin of TestCases
                     subtest_config, test_fn, *test_args, **test_kwargs)
