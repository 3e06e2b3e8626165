"""Subtest reports that pytest-xdist can carry from a worker: plain values only.

pytest reports a ``subTest(dtype=torch.float32)`` with its arguments as they are, and a worker
of pytest-xdist then fails to send the report (``DumpError: can't serialize <class
'torch.dtype'>``): the test errors instead of passing or failing. Tests written for PyTorch pass
dtypes, devices, sizes and classes to ``subTest`` all the time, so before a report is sent,
each argument that is not a plain value is replaced by its ``repr`` (what the report shows).
"""

from __future__ import annotations

from typing import Any

__all__ = ["plain_subtest_arguments"]

_PLAIN = (str, int, float, bool, type(None))


def _is_plain(value: object) -> bool:
    if type(value) in _PLAIN:  # (a subclass, an enum member of int, is not plain)
        return True
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return all(map(_is_plain, value))
    if isinstance(value, dict) and type(value) is dict:
        return all(isinstance(key, str) and _is_plain(item) for key, item in value.items())
    return False


def _shown(value: object) -> object:
    if _is_plain(value):
        return value
    try:
        return repr(value)
    except Exception:  # a repr that raises: what pytest's own saferepr would say
        return f"<{type(value).__name__} object>"


def plain_subtest_arguments(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """``data``, a report made ready to send, with its subtest arguments as plain values."""
    if not data or data.get("_report_type") != "SubTestReport":
        return data
    for key in ("_subtest.context", "context"):  # (pytest's name for it; pytest-subtests' before)
        context = data.get(key)
        if isinstance(context, dict) and isinstance(context.get("kwargs"), dict):
            context["kwargs"] = {name: _shown(value) for name, value in context["kwargs"].items()}
    return data
