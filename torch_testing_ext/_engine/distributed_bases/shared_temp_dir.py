"""``with_temp_dir``: a temporary directory for a test, as ``self.temp_dir``.

When the default process group exists as the test starts, every rank gets the same directory
(upstream's rank 0 makes it and tells the others); without a group each rank gets its own, so
ranks that each save and load their own files never race. Example (a distributed checkpoint
written by all ranks, read back by all; ``with_comms`` makes the group first)::

    @with_comms
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

from ..worlds.rank_facts import rank_process_facts

__all__ = ["with_temp_dir"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])
# How many directories each test has made, per test directory (every rank counts alike).
_made_in_rank: collections.defaultdict[str, itertools.count[int]] = \
    collections.defaultdict(itertools.count)


def _directory_in_rank(test_dir: str, rank: int) -> str:
    """The n-th directory of this rank, inside the test's own: with a default group every rank
    gets the same path (each rank counts its calls alike, so no collective is needed), without
    one a path of its own."""
    made = next(_made_in_rank[test_dir])
    name = f"temp-dir-{made}" if dist.is_initialized() else f"temp-dir-{made}-rank-{rank}"
    path = os.path.join(test_dir, name)
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
    """Decorator: give the test ``self.temp_dir``: one directory shared by every rank of the
    default group when a group exists as the test starts, else one directory per rank.

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
            self.temp_dir = _directory_in_rank(facts.test_dir, facts.rank)
            return func(self, *args, **kwargs)
        self.temp_dir = _directory_agreed_by_group()
        try:
            return func(self, *args, **kwargs)
        finally:
            shutil.rmtree(self.temp_dir, ignore_errors=True)

    return with_directory  # type: ignore[return-value]  # functools.wraps keeps func's signature
