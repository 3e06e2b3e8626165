"""``@pytest.mark.world_size``: what the marker says, checked as a test is collected.

::

    @pytest.mark.world_size(2)                         # 2 fresh ranks for the test
    @pytest.mark.world_size([2, 4])                    # one test per size: test_x[2ranks], test_x[4ranks]
    @pytest.mark.world_size(2, timeout=30)             # seconds for all ranks of one test
    @pytest.mark.world_size(2, ranks="kept")           # ranks kept for the class (or module)
    @pytest.mark.world_size(2, allow_cpu=True)         # CPU ranks where there are too few accelerators

``ranks`` is one of :data:`RANK_KINDS`: ``"fresh"`` (processes forked for each test, the
default), ``"kept"`` (processes kept for the tests of the class, or of the module when the
test is not in a class), ``"threads"`` (threads of the test's process). Under a launcher
(``torchrun -m pytest``) every test runs as the launched rank, whatever ``ranks`` says.

A bad argument is a :class:`MarkError`, whose message is one line naming every bad argument;
the plugin makes it an error of the marked test alone (``ranks_function``). A marker is parsed
once in a session (:func:`checked_mark`): the hooks that read it (collection, one test per
size, the test's kind) share that result. Torch-free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pytest

from ..worlds import settings

__all__ = ["WorldSizeMark", "MarkError", "MARK_NAME", "MARK_HELP", "RANK_KINDS", "parse_mark", "checked_mark",
           "parsed_once", "size_id"]

MARK_NAME = "world_size"
MARK_HELP = ("world_size(n | [n, m], *, timeout=None, ranks='fresh', allow_cpu=False): run the test on n "
             "ranks (one test per size); ranks: fresh, kept or threads (torch_testing_ext)")
RANK_KINDS = ("fresh", "kept", "threads")
_KEYWORDS = ("timeout", "ranks", "allow_cpu")


class MarkError(ValueError):
    """A ``world_size`` marker the harness cannot use; the message is one line."""


@dataclasses.dataclass(frozen=True)
class WorldSizeMark:
    """A checked ``world_size`` marker: the sizes (one test each), the timeout in seconds
    (None: ``TORCH_TESTING_EXT_TIMEOUT`` or the default), the kind of ranks, and whether
    too few accelerators fall back to CPU ranks."""

    sizes: tuple[int, ...]
    timeout: float | None = None
    ranks: str = "fresh"
    allow_cpu: bool = False


def _sizes(value: Any) -> tuple[int, ...]:
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise MarkError("world_size([]): expected a positive integer or a list of them")
    wrong = [item for item in values if isinstance(item, bool) or not isinstance(item, int)]
    if wrong:
        raise MarkError(f"world_size={wrong[0]!r}: expected a positive integer")
    sizes = tuple(settings.positive_integer("world_size", item) for item in values)
    if len(set(sizes)) != len(sizes):
        raise MarkError(f"world_size({list(values)!r}): a size is given twice")
    return sizes


def parse_mark(args: Sequence[Any], kwargs: dict[str, Any]) -> WorldSizeMark:
    """The checked marker of ``@pytest.mark.world_size(*args, **kwargs)``; ``MarkError`` if the
    harness cannot use it, one line naming every bad argument (``; `` between them)."""
    problems: list[str] = []

    def checked(check: Any, *values: Any) -> Any:
        try:
            return check(*values)
        except (MarkError, settings.SettingError) as error:
            problems.append(str(error))
            return None

    sizes = None
    if len(args) == 1:
        sizes = checked(_sizes, args[0])
    else:
        problems.append(f"world_size takes one size or a list of sizes, got {len(args)} positional arguments")
    timeout = kwargs.get("timeout")
    if timeout is not None:
        timeout = checked(settings.positive_seconds, "world_size(timeout=...)", timeout)
    ranks = kwargs.get("ranks", "fresh")
    if ranks not in RANK_KINDS:
        problems.append(f"world_size(ranks={ranks!r}): expected one of {', '.join(map(repr, RANK_KINDS))}")
    allow_cpu = kwargs.get("allow_cpu", False)
    if not isinstance(allow_cpu, bool):
        problems.append(f"world_size(allow_cpu={allow_cpu!r}): expected True or False")
    for name in sorted(set(kwargs) - set(_KEYWORDS)):
        problems.append(f"world_size(..., {name}=...): unknown argument; expected one of {', '.join(_KEYWORDS)}")
    if problems or sizes is None:
        raise MarkError("; ".join(problems))
    return WorldSizeMark(sizes, timeout, ranks, allow_cpu)


# Each marker's parse in a session, by the kind of marker and the marker's id (the marker is kept,
# so its id stays its own): the checked marker, or why the harness cannot use it.
_CHECKED = pytest.StashKey[dict[tuple[str, int], tuple[pytest.Mark, Any]]]()

_T = TypeVar("_T")


def parsed_once(config: pytest.Config, mark: pytest.Mark, parse: Callable[[Sequence[Any], dict[str, Any]], _T],
                error: type[ValueError]) -> _T:
    """``parse(mark.args, mark.kwargs)``, once per marker in ``config``'s session; the ``error``
    it raised (one line) raised again each time it is asked."""
    parsed = config.stash.setdefault(_CHECKED, {})
    key = (mark.name, id(mark))
    if key not in parsed:
        try:
            parsed[key] = (mark, parse(mark.args, dict(mark.kwargs)))
        except error as problem:
            parsed[key] = (mark, problem)
    checked = parsed[key][1]
    if isinstance(checked, error):
        raise error(str(checked))
    return checked


def checked_mark(config: pytest.Config, mark: pytest.Mark) -> WorldSizeMark:
    """``mark`` checked by :func:`parse_mark`, once per marker in ``config``'s session;
    ``MarkError`` (one line) if the harness cannot use it."""
    return parsed_once(config, mark, parse_mark, MarkError)


def size_id(size: int) -> str:
    """The id a test gets for one of several sizes: ``test_x[2ranks]``."""
    return f"{size}ranks"
