"""What a ``world_size`` test carries between the plugin's hooks, its item and its worlds.

Kept in one torch-free module that the others import, so that none of them imports another
back: the test's marker and size (``WORLD_KEY``), a test across worlds' spec (``WORLDS_KEY``),
the test pytest runs after it (``NEXT_KEY``), the kept worlds open in a session
(``KEPT_WORLDS``), and the stand-in a rank fixture is in the test's own thread on thread ranks
(:class:`ThreadRankValue`).
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from ..many_worlds.worlds_spec import WorldsSpec
from .world_size_mark import WorldSizeMark

__all__ = ["WORLD_KEY", "WORLDS_KEY", "NEXT_KEY", "KEPT_WORLDS", "ThreadRankValue", "runs_on_threads",
           "function_arguments"]

WORLD_KEY = pytest.StashKey[tuple[WorldSizeMark, int]]()  # the test's marker and its world size
WORLDS_KEY = pytest.StashKey[WorldsSpec]()  # a test across worlds: its checked worlds marker
NEXT_KEY = pytest.StashKey[Any]()  # the item pytest runs after this one (None: the last)
KEPT_WORLDS = pytest.StashKey[dict[Any, Any]]()  # the kept worlds open in a session, by scope and size


class ThreadRankValue:
    """What a rank fixture is in the test's own thread on thread ranks: each rank thread
    calls the test with its own value instead."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name} of each rank thread>"


def runs_on_threads(node: Any) -> bool:
    """Whether ``node`` is a test that runs on rank threads of the test's process."""
    stash = getattr(node, "stash", None)
    if stash is None:
        return False
    marked = stash.get(WORLD_KEY, None)
    spec = stash.get(WORLDS_KEY, None)
    return (marked is not None and marked[0].ranks == "threads") or (spec is not None and spec.ranks == "threads")


def function_arguments(item: pytest.Function) -> list[str]:
    """The names of the arguments ``item``'s function takes from fixtures."""
    return [name for name in inspect.signature(item.obj).parameters if name in item.funcargs]
