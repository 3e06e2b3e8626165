"""``DummyProcessGroup``: a stand-in for a process group where only its rank and size matter
(a wrapping policy, a grad scaler that all-reduces "inf found" flags), with no peers at all.

Example::

    pg = DummyProcessGroup(rank=0, size=2)
    work = pg.allreduce([torch.zeros(1)])
    assert work.get_future().wait() == 1
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["DummyProcessGroup", "DummyWork"]

__unittest = True


class DummyWork:
    """What ``DummyProcessGroup.allreduce`` returns: a finished work whose future holds 1."""

    def wait(self, *args: Any, **kwargs: Any) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def get_future(self) -> torch.futures.Future[Any]:
        """A fresh future, already completed with 1 (upstream's value)."""
        future: torch.futures.Future[Any] = torch.futures.Future()
        future.set_result(1)
        return future


class DummyProcessGroup:
    """A group of ``size`` ranks seen from ``rank``; ``allreduce`` leaves its tensors unchanged
    and returns a :class:`DummyWork`."""

    def __init__(self, rank: int, size: int) -> None:
        self._rank = rank
        self._size = size

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def allreduce(self, *args: Any, **kwargs: Any) -> DummyWork:
        return DummyWork()
