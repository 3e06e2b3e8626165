"""What a test across worlds asks for: the world sizes, the tolerances, the kind of ranks.

``@pytest.mark.worlds(1, 2, 4, rtol=, atol=, ranks=, timeout=, allow_cpu=)`` and the unittest
decorator ``across_worlds(...)`` take the same arguments; both are checked here into a
:class:`WorldsSpec`. A bad argument is a :class:`WorldsSpecError` whose message is one line
naming every bad argument. Torch-free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..worlds import settings

__all__ = ["WorldsSpec", "WorldsSpecError", "RANK_KINDS", "WORLDS_MARK_NAME", "parse_worlds"]

WORLDS_MARK_NAME = "worlds"  # pytest's marker: @pytest.mark.worlds(1, 2, 4)
RANK_KINDS = ("fresh", "kept", "threads")
_KEYWORDS = ("rtol", "atol", "ranks", "timeout", "allow_cpu")


class WorldsSpecError(ValueError):
    """Arguments of ``worlds``/``across_worlds`` the harness cannot use; the message is one line."""


WorldsSpecError.__module__ = "torch_testing_ext.many_worlds"  # public there, as tracebacks show it


@dataclasses.dataclass(frozen=True)
class WorldsSpec:
    """A checked request to run one test in several worlds.

    ``sizes``: the worlds' sizes, in the order they run; the first is the reference.
    ``rtol``/``atol``: the tolerances of every comparison (both None: ``torch.testing.assert_close``'s
    defaults for the dtype). ``timeout``: seconds for all ranks of one world (None: the default).
    """

    sizes: tuple[int, ...]
    rtol: float | None = None
    atol: float | None = None
    ranks: str = "fresh"
    timeout: float | None = None
    allow_cpu: bool = False

    @property
    def reference(self) -> int:
        """The size of the reference world (the first)."""
        return self.sizes[0]


def _tolerance(what: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise WorldsSpecError(f"{what}={value!r}: expected a number >= 0")
    return float(value)


def parse_worlds(args: Sequence[Any], kwargs: dict[str, Any], name: str = "worlds") -> WorldsSpec:
    """The checked spec of ``name(*args, **kwargs)``; :class:`WorldsSpecError` (one line, every
    bad argument, ``; `` between them) if the harness cannot use it."""
    problems: list[str] = []

    def checked(check: Any, *values: Any) -> Any:
        try:
            return check(*values)
        except (WorldsSpecError, settings.SettingError) as error:
            problems.append(str(error))
            return None

    sizes: list[int] = []
    if len(args) < 2:
        problems.append(f"{name}() takes two world sizes or more (the first is the reference), got {len(args)}")
    for value in args:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(f"{name}({value!r}): a world size is a positive integer")
        else:
            sizes.append(value)
    if len(set(sizes)) != len(sizes):
        problems.append(f"{name}{tuple(args)!r}: a world size is given twice")
    rtol = kwargs.get("rtol")
    atol = kwargs.get("atol")
    if (rtol is None) != (atol is None):
        problems.append(f"{name}(rtol={rtol!r}, atol={atol!r}): give both rtol and atol, or neither "
                        "(neither: torch.testing.assert_close's defaults for the dtype)")
    rtol = None if rtol is None else checked(_tolerance, f"{name}(rtol=...)", rtol)
    atol = None if atol is None else checked(_tolerance, f"{name}(atol=...)", atol)
    ranks = kwargs.get("ranks", "fresh")
    if ranks not in RANK_KINDS:
        problems.append(f"{name}(ranks={ranks!r}): expected one of {', '.join(map(repr, RANK_KINDS))}")
    timeout = kwargs.get("timeout")
    if timeout is not None:
        timeout = checked(settings.positive_seconds, f"{name}(timeout=...)", timeout)
    allow_cpu = kwargs.get("allow_cpu", False)
    if not isinstance(allow_cpu, bool):
        problems.append(f"{name}(allow_cpu={allow_cpu!r}): expected True or False")
    for unknown in sorted(set(kwargs) - set(_KEYWORDS)):
        problems.append(f"{name}(..., {unknown}=...): unknown argument; expected one of {', '.join(_KEYWORDS)}")
    if problems:
        raise WorldsSpecError("; ".join(problems))
    return WorldsSpec(tuple(sizes), rtol, atol, ranks, timeout, allow_cpu)
