"""``with_temp_dir``: a temporary directory that every rank of a test shares, as ``self.temp_dir``.

Example (a distributed checkpoint written by all ranks, read back by all)::

    @with_temp_dir
    def test_save_load(self):
        dcp.save(state_dict, checkpoint_id=self.temp_dir)
"""

from __future__ import annotations

import collections
import functools
import itertools
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any, TypeVar

import torch.distributed as dist

from ..ranks.rank_facts import rank_process_facts

__all__ = ["with_temp_dir"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])
# How many directories each test has made, per test directory (every rank counts alike).
_made_in_rank: collections.defaultdict[str, itertools.count[int]] = \
    collections.defaultdict(itertools.count)


def _directory_in_rank(test_dir: str) -> str:
    """The n-th directory of this rank: every rank of the test gets the same path, no collective."""
    path = os.path.join(test_dir, f"temp-dir-{next(_made_in_rank[test_dir])}")
    os.makedirs(path, exist_ok=True)
    return path


def _directory_agreed_by_group() -> str:
    """A new directory made by rank 0 of the default group and sent to the others (or, without
    a group, a new directory)."""
    if not dist.is_initialized():
        return tempfile.mkdtemp()
    chosen = [tempfile.mkdtemp() if dist.get_rank() == 0 else ""]
    dist.broadcast_object_list(chosen)
    return chosen[0]


def with_temp_dir(func: _F | None = None) -> _F:
    """Decorator: give the test ``self.temp_dir``, the same directory on every rank.

    In a rank of a ``MultiProcessTestCase`` it lies in the test's own directory, which the
    harness removes after the test; elsewhere rank 0 of the default group (if any) makes it
    and each rank removes it after the test.
    """
    if func is None:
        raise TypeError("with_temp_dir decorates a test method: write @with_temp_dir")

    @functools.wraps(func)
    def with_directory(self: Any, *args: Any, **kwargs: Any) -> Any:
        facts = rank_process_facts()
        if facts is not None:
            self.temp_dir = _directory_in_rank(facts.test_dir)
            return func(self, *args, **kwargs)
        self.temp_dir = _directory_agreed_by_group()
        try:
            return func(self, *args, **kwargs)
        finally:
            shutil.rmtree(self.temp_dir, ignore_errors=True)

    return with_directory  # type: ignore[return-value]
