"""A test marked ``@pytest.mark.world_size`` as the test process sees it.

After collection each such test becomes one of these kinds of pytest ``Function`` (its id,
markers, parametrization and location stay what pytest made):

- :class:`RanksFunction` (fresh and kept ranks): its fixtures are set up in the ranks, not
  here, so ``setup`` does nothing; ``runtest`` runs the test on its ranks and raises their
  verdict (``RankFailure`` naming the ranks, a skip, or nothing);
- :class:`ThreadRanksFunction` (thread ranks): its fixtures are set up here, in the test's
  thread, and ``runtest`` calls the test once per rank thread;
- :class:`LaunchedRanksFunction` (under ``torchrun -m pytest``, whatever ``ranks`` says):
  fixtures and body run here, as this launched rank, and the verdict is that of all ranks;
  its fixtures' teardown comes after the verdict, and leaving it by ``sys.exit()``,
  ``pytest.exit()`` or ``KeyboardInterrupt`` is an error of the test on this rank
  (:func:`launched_teardown`);
- :class:`WorldsFunction` and :class:`ThreadWorldsFunction` (``@pytest.mark.worlds``): the
  test runs in each of its worlds, on fresh or kept rank processes or on rank threads, and
  its verdict is theirs and their values' agreement (``pytest_worlds.run_across_worlds_item``);
  under a launcher it skips, saying why (the launcher's ranks are one world);
- :class:`BadMarkFunction` (a marker the harness cannot use, ``world_size(0)``, ``worlds(2)``,
  or both markers on one test): an error of that test alone, one line naming every bad
  argument; the file's other tests run.

pytest's own plugins see an ordinary test: ``skip``/``skipif`` marks are decided here before
any rank starts, ``xfail`` applies to the verdict of all ranks, ``-k``/``-m`` select as usual.
Torch-free; the ranks' machinery is imported when a test runs (``pytest_worlds``).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ..launched.launcher_env import launched_rank
from ..many_worlds.worlds_spec import WORLDS_MARK_NAME, WorldsSpec, WorldsSpecError, parse_worlds
from ..reporting.status import Status
from ..worlds.interrupts import InterruptListener
from ..worlds.outcomes import RankError, left_the_test_with, outcome_of
from ..worlds.rank_facts import current_rank_facts
from .item_state import WORLD_KEY, WORLDS_KEY
from .world_size_mark import MARK_NAME, MarkError, WorldSizeMark, checked_mark, parsed_once

__all__ = ["RanksFunction", "ThreadRanksFunction", "LaunchedRanksFunction", "WorldsFunction", "ThreadWorldsFunction",
           "LaunchedWorldsFunction", "BadMarkFunction", "closest_mark", "usable_mark", "worlds_spec", "is_ranks_item",
           "make_ranks_items", "launched_teardown", "WORLDS_MARK_HELP"]

WORLDS_MARK_HELP = ("worlds(n, m, ..., *, rtol=None, atol=None, ranks='fresh', timeout=None, allow_cpu=False): run "
                    "the test in a world of each size and compare the values it records with compare(name, value); "
                    "the first size is the reference (torch_testing_ext)")

__unittest = True

_PYTEST_OUTCOMES = (pytest.skip.Exception, pytest.fail.Exception)  # pytest's to report, as it does


class RanksFunction(pytest.Function):
    """A test whose fixtures and body run in its rank processes."""

    def setup(self) -> None:
        """Nothing here: the ranks set up the test's fixtures."""

    def runtest(self) -> None:
        from .pytest_worlds import run_on_rank_processes

        run_on_rank_processes(self, *self.stash[WORLD_KEY])


class ThreadRanksFunction(pytest.Function):
    """A test whose fixtures are set up in the test's thread and whose body runs on rank
    threads of this process."""

    def runtest(self) -> None:
        from .pytest_worlds import run_on_rank_threads

        run_on_rank_threads(self, *self.stash[WORLD_KEY])


class LaunchedRanksFunction(pytest.Function):
    """A test run under a launcher (``torchrun -m pytest``): this process is one of its ranks.
    Its fixtures are set up and its body runs as this rank, and every rank reports the verdict
    of all ranks."""

    def setup(self) -> None:
        """Nothing yet: the fixtures are set up as this rank, when the test runs."""

    def runtest(self) -> None:
        from .pytest_worlds import run_item_as_launched_rank

        run_item_as_launched_rank(self, *self.stash[WORLD_KEY])


class WorldsFunction(pytest.Function):
    """A test across worlds whose fixtures and body run in the rank processes of each world."""

    def setup(self) -> None:
        """Nothing here: each world's ranks set up the test's fixtures."""

    def runtest(self) -> None:
        from .pytest_worlds import run_across_worlds_item

        run_across_worlds_item(self, self.stash[WORLDS_KEY])


class ThreadWorldsFunction(pytest.Function):
    """A test across worlds whose fixtures are set up in the test's thread and whose body runs
    on the rank threads of each world."""

    def runtest(self) -> None:
        from .pytest_worlds import run_across_worlds_item

        run_across_worlds_item(self, self.stash[WORLDS_KEY])


class LaunchedWorldsFunction(pytest.Function):
    """A test across worlds under a launcher: skipped, since the launcher's ranks are one world."""

    def setup(self) -> None:
        pytest.skip("@pytest.mark.worlds runs the test in worlds of its own; under a launcher (torchrun) this "
                    "process is one rank of one world: run it without the launcher")

    def runtest(self) -> None:
        """Never reached: ``setup`` skips."""


def launched_teardown() -> Generator[None, Any, Any]:
    """The body of a ``wrapper=True`` hook around a launched test's teardown (its fixtures'
    teardown, after the ranks' verdict): leaving it by ``sys.exit()``, ``pytest.exit()``, the
    test's own ``KeyboardInterrupt`` or another ``BaseException`` is an error of the test that
    names this rank, what it did and where, not a stop of the run (Ctrl-C and SIGTERM are)."""
    launched = launched_rank()
    with InterruptListener() as listener:
        try:
            return (yield)
        except BaseException as error:
            if launched is None or left_the_test_with(error) is None or isinstance(error, _PYTEST_OUTCOMES) \
                    or (isinstance(error, KeyboardInterrupt) and listener.is_a_stop(error)):
                raise
            outcome = outcome_of(launched.rank, error)
            if outcome.status is not Status.ERROR:  # one of upstream's skip exit codes
                raise
            raise RankError(outcome.detail) from None


def is_ranks_item(node: Any) -> bool:
    """Whether ``node`` is a test that runs on ranks (processes, threads or launched)."""
    return isinstance(node, (RanksFunction, ThreadRanksFunction, LaunchedRanksFunction, WorldsFunction,
                             ThreadWorldsFunction))


def closest_mark(collector: pytest.Collector, obj: object, name: str = MARK_NAME) -> pytest.Mark | None:
    """The mark ``name`` (``world_size`` unless said) nearest to ``obj`` (a test function of
    ``collector``): its own, else its class's or module's."""
    own = [mark for mark in getattr(obj, "pytestmark", []) if getattr(mark, "name", None) == name]
    return own[0] if own else collector.get_closest_marker(name)


def usable_mark(config: pytest.Config, mark: pytest.Mark) -> WorldSizeMark | None:
    """``mark`` checked (parsed once in the session); None if the harness cannot use it (its
    test errors, see :class:`BadMarkFunction`)."""
    try:
        return checked_mark(config, mark)
    except MarkError:
        return None


class BadMarkFunction(pytest.Function):
    """A test whose ``world_size`` marker the harness cannot use: an error of this test alone,
    at its setup (no fixture is set up, no rank starts), one line naming every bad argument.
    The file's other tests are collected and run."""

    def setup(self) -> None:
        pytest.fail(self.stash[_MARK_ERROR], pytrace=False)

    def runtest(self) -> None:
        """Never reached: ``setup`` fails."""


_MARK_ERROR = pytest.StashKey[str]()  # why a BadMarkFunction's marker cannot be used


def worlds_spec(config: pytest.Config, mark: pytest.Mark) -> WorldsSpec:
    """``@pytest.mark.worlds(...)`` checked, once per marker in ``config``'s session;
    ``WorldsSpecError`` (one line) if the harness cannot use it."""
    return parsed_once(config, mark, parse_worlds, WorldsSpecError)


def _bad_mark(item: pytest.Item, why: str) -> None:
    item.stash[_MARK_ERROR] = why
    item.__class__ = BadMarkFunction


def _make_worlds_item(item: pytest.Item, mark: pytest.Mark, launched: bool) -> None:
    if item.get_closest_marker(MARK_NAME) is not None:
        _bad_mark(item, "a test takes @pytest.mark.worlds(...) or @pytest.mark.world_size(...), not both: worlds "
                        "gives each of its worlds its size")
        return
    try:
        spec = worlds_spec(item.config, mark)
    except WorldsSpecError as error:
        _bad_mark(item, str(error))
        return
    item.stash[WORLDS_KEY] = spec
    if launched:
        item.__class__ = LaunchedWorldsFunction
    else:
        item.__class__ = ThreadWorldsFunction if spec.ranks == "threads" else WorldsFunction


def make_ranks_items(items: list[pytest.Item]) -> None:
    """Turn each marked test function of ``items`` into the kind its marker asks for, with
    its marker and world size in its stash. Inside a rank process tests stay as they are: they
    already run as a rank; under a launcher each runs as this process's rank."""
    if current_rank_facts() is not None:
        return
    launched = launched_rank() is not None
    for item in items:
        if type(item) is not pytest.Function:
            continue
        worlds = item.get_closest_marker(WORLDS_MARK_NAME)
        if worlds is not None:
            _make_worlds_item(item, worlds, launched)
            continue
        mark = item.get_closest_marker(MARK_NAME)
        if mark is None:
            continue
        try:
            checked = checked_mark(item.config, mark)
        except MarkError as error:
            _bad_mark(item, str(error))
            continue
        callspec = getattr(item, "callspec", None)
        size = callspec.params["world_size"] if callspec and "world_size" in callspec.params \
            else checked.sizes[0]
        item.stash[WORLD_KEY] = (checked, size)
        if launched:
            item.__class__ = LaunchedRanksFunction
        else:
            item.__class__ = ThreadRanksFunction if checked.ranks == "threads" else RanksFunction


