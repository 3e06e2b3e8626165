"""``serialTest``: mark a test that must not run beside other tests.

Every test file runs its tests one after another (``run_tests`` and the shard driver never
run two tests of a file at once), so the mark changes nothing here. Under pytest it becomes
``pytest.mark.serial``, which pytest-xdist users can select on (``-m "not serial"``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["serialTest"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])


def serialTest(condition: bool = True) -> Callable[[_F], _F]:
    """Decorator: mark the test as serial when ``condition`` holds (call it: ``@serialTest()``)."""
    if type(condition) is not bool:
        raise TypeError(f"serialTest takes a bool, got {condition!r}: write @serialTest()")

    def mark(fn: _F) -> _F:
        pytest = sys.modules.get("pytest")  # only a pytest run reads the mark
        if condition and pytest is not None:
            return pytest.mark.serial(fn)
        return fn

    return mark
