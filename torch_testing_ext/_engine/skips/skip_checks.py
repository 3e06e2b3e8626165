"""Skip decorators whose condition the test process can decide before any rank starts.

A decorator made by :func:`skip_when` wraps a test method (or every test method of a class):
calling the method raises ``unittest.SkipTest`` when the condition holds. It also records the
check on the method, so the multi-process harness can run every check in the parent with
:func:`pending_skip` and skip without starting a single process.

Example::

    needs_four = skip_when(lambda test: "needs 4 ranks" if test.world_size < 4 else None)
"""

from __future__ import annotations

import functools
import inspect
import unittest
from collections.abc import Callable
from typing import Any, TypeVar

from .._torch_private import test_method_name

__all__ = ["SkipCheck", "skip_when", "skip_if", "static_skip_if", "pending_skip", "skip_or_check_settings"]

__unittest = True

# A check receives the TestCase instance and returns a skip reason, or None to run the test.
SkipCheck = Callable[[Any], "str | None"]
_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")
_CHECKS_ATTR = "__tte_skip_checks__"


def _decorate_function(fn: Callable[..., Any], check: SkipCheck) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        reason = check(self)
        if reason:
            raise unittest.SkipTest(reason)
        return fn(self, *args, **kwargs)

    setattr(wrapper, _CHECKS_ATTR, (check, *getattr(fn, _CHECKS_ATTR, ())))
    return wrapper


def skip_when(check: SkipCheck) -> Callable[[_F], _F]:
    """Decorator: skip a test (or each test of a class) when ``check(test)`` returns a reason."""

    def decorate(target: _F) -> _F:
        if inspect.isclass(target):
            for name in dir(target):
                method = getattr(target, name)
                if name.startswith("test") and callable(method):
                    setattr(target, name, _decorate_function(method, check))
            return target
        return _decorate_function(target, check)  # type: ignore[return-value]  # a wrapper with fn's signature

    return decorate


def skip_if(condition: bool | Callable[[], bool], reason: str) -> Callable[[_F], _F]:
    """Decorator: skip with ``reason`` when ``condition`` (a bool or a no-argument callable) holds."""

    def check(_test: Any) -> str | None:
        holds = condition() if callable(condition) else condition
        return reason if holds else None

    return skip_when(check)


def static_skip_if(condition: bool, reason: str) -> Callable[[_F], _F]:
    """Upstream's ``unittest.skipIf``: skip with ``reason`` when ``condition`` holds, a skip
    unittest (and :func:`pending_skip`) see before any check decided when the test runs,
    whichever decorator is outermost, so the test skips for the reason upstream's does."""

    def decorate(target: _F) -> _F:
        decorated = skip_if(condition, reason)(target)
        if condition:
            decorated.__unittest_skip__ = True  # type: ignore[attr-defined]  # unittest's own marks
            decorated.__unittest_skip_why__ = reason  # type: ignore[attr-defined]
        return decorated

    return decorate


def pending_skip(test: unittest.TestCase) -> str | None:
    """The reason the current test of ``test`` would skip, evaluated without running it."""
    method = getattr(test, test_method_name(test))
    if getattr(method, "__unittest_skip__", False):  # a static skip comes first, as in unittest
        return str(getattr(method, "__unittest_skip_why__", ""))
    for check in getattr(method, _CHECKS_ATTR, ()):
        reason = check(test)
        if reason:
            return reason
    return None


def skip_or_check_settings(test: unittest.TestCase, check_settings: Callable[[], _T]) -> _T:
    """Raise ``unittest.SkipTest`` if the current test of ``test`` skips; else return
    ``check_settings()``.

    Skips come first: a test that skips runs nothing, so the settings it would have run with
    do not matter (upstream classes often set ``world_size`` from the GPU count, 0 on CPU, on
    tests that skip without GPUs). A skip check that trips over a bad setting gets that
    setting's own error.
    """
    try:
        reason = pending_skip(test)
    except Exception:
        check_settings()
        raise
    if reason:
        raise unittest.SkipTest(reason)
    return check_settings()
