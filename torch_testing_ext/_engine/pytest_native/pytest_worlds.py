"""Where a ``@pytest.mark.world_size`` test runs, seen from the test process.

- Fresh ranks: the rank processes are forked for the test from the preloaded server, each
  runs the test in a pytest session of its own (``rank_session``), and the supervisor's rules
  hold as for ``MultiProcessTestCase``: every rank's outcome counts, the others stop
  ``FAIL_FAST_GRACE`` s after a problem, a rank still running at the timeout is reported with
  its stack and killed, what the ranks left running is named and killed.
- Kept ranks: one world per class (or module) and size, kept while its tests end alike on
  every rank, passed or skipped; each test is sent to the world's sessions; the world closes
  after the scope's last test, after any test it cannot keep, and at the session's end.
- Thread ranks: the test's function called on rank threads of this process, each in the
  default ``threaded`` group, with the fixtures set up once in the test's thread.
- Launched ranks (``torchrun -m pytest``): the test's fixtures and body run here as this
  process's rank (``launched.launched_run``); a test needing more ranks than the launcher
  started skips; every rank reports the verdict of all ranks. A ``KeyboardInterrupt`` the
  test raised is its outcome there, not a stop of the run (Ctrl-C and SIGTERM still stop it).

On an accelerator machine a test that asks for more ranks than there are devices skips before
any rank starts, unless its marker says ``allow_cpu=True`` (then its ranks run on CPU with gloo).
"""

from __future__ import annotations

import contextlib
import os
import unittest
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import pytest

from ... import devices
from ..fresh import fork_server
from ..fresh.fresh_world import FreshWorld, verdict_with_leftovers, world_facts
from ..fresh.supervisor import RanksEnded
from ..kept.kept_world import ClassWorlds
from ..many_worlds.across import WorldEnd, raise_worlds_verdict, run_across_worlds
from ..many_worlds.value_records import RECORDS_DIR_ENV, Recorder, records_file
from ..many_worlds.worlds_spec import WorldsSpec
from ..process_groups import threaded_pg
from ..reporting.status import Status
from ..testcase.tensor_testcase import current_seed
from ..threads.rank_threads import ThreadedRun, ThreadRankFailure, run_rank_threads, thread_verdict
from ..worlds import settings
from ..worlds.outcomes import RankFailure, RankOutcome, Verdict, raise_verdict
from ..worlds.rank_facts import RankFacts, current_rank_facts
from . import rank_session
from .item_state import KEPT_WORLDS, NEXT_KEY, WORLD_KEY, WORLDS_KEY, ThreadRankValue, function_arguments
from .world_size_mark import WorldSizeMark

__all__ = ["run_on_rank_processes", "run_on_rank_threads", "run_item_as_launched_rank", "run_across_worlds_item",
           "close_kept_worlds", "rank_facts_for", "timeout_of"]

__unittest = True

_SESSION_MODULE = rank_session.__name__  # what the fork server preloads for pytest ranks


class _Ranks(Protocol):
    """What choosing and starting ranks reads of a marker (``world_size`` or ``worlds``)."""

    @property
    def timeout(self) -> float | None: ...

    @property
    def ranks(self) -> str: ...

    @property
    def allow_cpu(self) -> bool: ...


def timeout_of(mark: _Ranks) -> float:
    """Seconds for all ranks of one test: ``TORCH_TESTING_EXT_TIMEOUT`` when set (it overrides
    every class's and marker's, as for the test cases), else the marker's, else the default."""
    return settings.timeout_seconds("world_size(timeout=...)", mark.timeout or settings.DEFAULT_TEST_TIMEOUT)


def rank_facts_for(mark: _Ranks, size: int, test_dir: str) -> list[RankFacts]:
    """The facts of ``size`` ranks on this machine's devices; ``pytest.skip`` (before any rank
    starts) when there are too few accelerators and the marker does not allow CPU ranks."""
    accelerator = devices.accelerator_type()
    if accelerator is None or devices.device_count() >= size:
        return world_facts(size, test_dir)
    if not mark.allow_cpu:
        pytest.skip(f"needs {size} {accelerator.upper()} devices, this machine has {devices.device_count()} "
                    f"({'worlds' if isinstance(mark, WorldsSpec) else 'world_size'}(..., allow_cpu=True) runs on CPU "
                    "ranks instead)")
    return [RankFacts(rank, size, "cpu", "gloo", test_dir) for rank in range(size)]


def _raise(item: pytest.Item, verdict: Verdict, outcomes: list[RankOutcome],
           failure: type[RankFailure] = RankFailure) -> None:
    """End ``item`` as its ranks' verdict says (a pass whose ranks called ``pytest.xfail()``
    is that xfail)."""
    if verdict.status is Status.SKIPPED:
        pytest.skip(verdict.message)
    if verdict.status is Status.PASSED:
        reasons = [getattr(o, "xfail_reason", None) for o in outcomes]
        if any(reason is not None for reason in reasons):
            pytest.xfail(next(reason for reason in reasons if reason is not None))
    raise_verdict(verdict, failure)


def _context(options: list[str]) -> Any:
    warm_up = fork_server.WarmUp(_SESSION_MODULE, rank_session.warm_session.__name__, tuple(options))
    return fork_server.forkserver_context(_SESSION_MODULE, warm_up=warm_up)


def _run_processes(item: pytest.Function, mark: _Ranks, size: int, records_dir: str = "") -> RanksEnded:
    """Run ``item`` on ``size`` fresh or kept rank processes (their ``compare`` calls writing to
    ``records_dir``, for a test across worlds); how they ended."""
    timeout = timeout_of(mark)
    options = rank_session.session_options(item.config)
    if mark.ranks == "kept":
        return _run_kept(item, mark, size, timeout, options, records_dir,
                         look_for_leftovers=settings.LEFTOVER_PROCESSES.get() == "fail")
    environ = dict(os.environ, **{RECORDS_DIR_ENV: records_dir}) if records_dir else dict(os.environ)
    with FreshWorld(item.name[:60]) as world:  # its directory goes with it, also on a skip
        facts = rank_facts_for(mark, size, world.test_dir)
        task = rank_session.PytestRankTask(tuple(options), str(item.path), item.nodeid, current_seed(),
                                           rank_session.rank_environment(environ))
        return world.run_task(task, facts, timeout, _context(options), target=rank_session.run_pytest_rank)


def run_on_rank_processes(item: pytest.Function, mark: WorldSizeMark, size: int) -> None:
    """Run ``item`` on ``size`` fresh or kept rank processes and raise their verdict."""
    ended = _run_processes(item, mark, size)
    _raise(item, verdict_with_leftovers(ended, settings.LEFTOVER_PROCESSES.get(), item.nodeid), ended.outcomes)


def _scope(item: pytest.Item) -> str:
    """The node a kept world serves: the test's class, else its module."""
    parent = item.parent
    return parent.nodeid if parent is not None else item.nodeid


def _world_key(item: pytest.Item, size: int) -> tuple[str, int] | None:
    """Which kept world ``item`` runs on in a world of ``size`` ranks (None: not on kept ranks):
    its scope, and the size for a test across worlds (each of its sizes has a world of its
    own) or 0 (a ``world_size`` test's world takes the size of the test it runs)."""
    marked = item.stash.get(WORLD_KEY, None)
    if marked is not None and marked[0].ranks == "kept" and marked[1] == size:
        return _scope(item), 0
    spec = item.stash.get(WORLDS_KEY, None)
    if spec is not None and spec.ranks == "kept" and size in spec.sizes:
        return _scope(item), size
    return None


def _next_in_world(item: pytest.Item, size: int) -> str | None:
    """The node id of the next test if it runs on the same kept world, else None."""
    nextitem = item.stash.get(NEXT_KEY, None)
    if nextitem is None or _world_key(nextitem, size) != _world_key(item, size):
        return None
    return nextitem.nodeid


class _ScopeWorlds(ClassWorlds):
    """The kept worlds of one class (or module) of pytest tests: each rank runs a pytest
    session over the test file (``rank_session.serve_pytest_rank``)."""

    target = staticmethod(rank_session.serve_pytest_rank)

    def __init__(self, item: pytest.Function, mark: _Ranks, options: list[str]) -> None:
        self._path = str(item.path)
        self._mark = mark
        self._options = tuple(options)
        self._open(_scope(item)[-60:])

    def _world_task(self) -> object:
        return rank_session.PytestWorldTask(self._options, self._path, rank_session.rank_environment(dict(os.environ)))

    def _world_facts(self, world_size: int, world_dir: str) -> list[RankFacts]:
        return rank_facts_for(self._mark, world_size, world_dir)


def _run_kept(item: pytest.Function, mark: _Ranks, size: int, timeout: float, options: list[str],
              records_dir: str, look_for_leftovers: bool) -> RanksEnded:
    """Run ``item`` on its scope's kept world; the world closes after the scope's last test."""
    worlds: dict[tuple[str, int], _ScopeWorlds] = item.config.stash.setdefault(KEPT_WORLDS, {})
    key = _world_key(item, size)
    assert key is not None, "a test on kept ranks has a kept world"
    scope_worlds = worlds.get(key) or worlds.setdefault(key, _ScopeWorlds(item, mark, options))
    next_nodeid = _next_in_world(item, size)
    test = rank_session.KeptTest(item.nodeid, next_nodeid, current_seed(), records_dir)
    try:
        ended = scope_worlds.run_task(test, size, timeout, _context(options), look_for_leftovers,
                                      last=next_nodeid is None)
    except BaseException:  # a skip before any rank, Ctrl-C: run_task closed the scope's worlds
        worlds.pop(key, None)
        raise
    if next_nodeid is None:
        worlds.pop(key).close()
    return ended


def close_kept_worlds(config: pytest.Config) -> None:
    """Close every kept world still open (a run that stopped early, ``-x``)."""
    worlds = config.stash.get(KEPT_WORLDS, {})
    while worlds:
        _key, world = worlds.popitem()
        world.close()


def _thread_value(name: str) -> Any:
    import torch.distributed as dist

    facts = current_rank_facts()
    assert facts is not None, "a rank thread has its facts"
    if name == "compare":
        return Recorder(records_file(os.environ[RECORDS_DIR_ENV], facts.rank))
    values = {"rank": facts.rank, "world_size": facts.world_size, "device": facts.device,
              "backend": threaded_pg.THREADED_BACKEND}
    return dist.group.WORLD if name == "process_group" else values[name]


def _run_threads(item: pytest.Function, mark: _Ranks, size: int) -> ThreadedRun:
    """Call ``item``'s function on ``size`` rank threads; how they ended."""
    arguments = {name: item.funcargs[name] for name in function_arguments(item)}

    def body(rank: int) -> None:
        kwargs = {name: _thread_value(value.name) if isinstance(value, ThreadRankValue) else value
                  for name, value in arguments.items()}
        _as_unittest_skip(lambda: item.obj(**kwargs))

    return run_rank_threads(body, size, timeout_of(mark), item.nodeid, getattr(item, "function", None),
                            getattr(item, "cls", None))


def run_on_rank_threads(item: pytest.Function, mark: WorldSizeMark, size: int) -> None:
    """Call ``item``'s function on ``size`` rank threads and raise their verdict."""
    run = _run_threads(item, mark, size)
    _raise(item, thread_verdict(run), run.outcomes, ThreadRankFailure)


class _LaunchedTestName:
    """What the launched run needs of a test: its id (keys in the launcher's store)."""

    def __init__(self, item: pytest.Item) -> None:
        self.nodeid = item.nodeid
        self.function = getattr(item, "function", None)  # its injected faults and lockstep wish
        self.cls = getattr(item, "cls", None)

    def id(self) -> str:
        return self.nodeid


def _as_unittest_skip(body: Callable[[], None]) -> None:
    try:
        body()
    except pytest.skip.Exception as skip:
        raise unittest.SkipTest(str(skip.msg)) from None


def run_item_as_launched_rank(item: pytest.Function, mark: WorldSizeMark, size: int) -> None:
    """Set up ``item``'s fixtures and run it as this launched rank; raise the verdict of all
    its ranks."""
    from ..launched import launched_run
    from ..launched.launcher_env import launched_rank, too_few_ranks_reason

    launched = launched_rank()
    assert launched is not None, "a launched test runs in a process a launcher started"
    reason = too_few_ranks_reason(item.name, size, launched)
    if reason:
        pytest.skip(reason)
    timeout = timeout_of(mark)

    def body() -> None:  # (a KeyboardInterrupt it raises is its outcome, a Ctrl-C a stop: the launched run tells)
        pytest.Function.setup(item)
        pytest.Function.runtest(item)

    # The launched run reads the test's id, and its function and class (faults, lockstep).
    verdict = launched_run.run_as_launched_rank(_LaunchedTestName(item),  # type: ignore[arg-type]
                                                lambda: _as_unittest_skip(body), timeout, size, launched)
    _raise(item, verdict, [])


@contextlib.contextmanager
def _records_go_to(records_dir: str) -> Iterator[None]:
    """Thread ranks' ``compare`` calls write to ``records_dir`` (they are of this process)."""
    saved = os.environ.get(RECORDS_DIR_ENV)
    os.environ[RECORDS_DIR_ENV] = records_dir
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(RECORDS_DIR_ENV, None)
        else:
            os.environ[RECORDS_DIR_ENV] = saved


def _xfail_reason(outcomes: list[RankOutcome]) -> str | None:
    reasons = [reason for o in outcomes for reason in [getattr(o, "xfail_reason", None)] if reason is not None]
    return reasons[0] if reasons else None


def run_across_worlds_item(item: pytest.Function, spec: WorldsSpec) -> None:
    """Run ``item`` in each world of ``spec`` (fresh, kept or thread ranks) and end it as
    their one verdict says (``many_worlds.across``)."""
    policy = settings.LEFTOVER_PROCESSES.get()

    def run_world(size: int, records_dir: str) -> WorldEnd:
        try:
            if spec.ranks == "threads":
                with _records_go_to(records_dir):
                    run = _run_threads(item, spec, size)
                return thread_verdict(run), None
            ended = _run_processes(item, spec, size, records_dir)
        except pytest.skip.Exception as skip:  # too few accelerators for this world
            return Verdict(Status.SKIPPED, str(skip.msg)), None
        return verdict_with_leftovers(ended, policy, f"{item.nodeid} (world {size})"), _xfail_reason(ended.outcomes)

    result = run_across_worlds(spec, run_world, fork_server.run_directory(), item.name)
    if result.verdict.status is Status.SKIPPED:
        pytest.skip(result.verdict.message)
    if result.verdict.status is Status.PASSED and result.xfail_reason is not None:
        pytest.xfail(result.xfail_reason)
    raise_worlds_verdict(result)
