"""What a rank process runs for pytest tests: a pytest session of its own, as this rank.

A rank of a ``@pytest.mark.world_size`` test is forked from the preloaded server (pytest and
its plugins loaded there, see ``fresh.server_preload``) and runs a pytest session over
the test's file, with the test process's plugin options. In it the test is an ordinary pytest
test: its fixtures and parametrization, assertion rewriting, ``pytest.skip``, marks. Only the
test (or, on kept ranks, the tests) the test process asks for run; the session's own output
goes to the rank's log, and the rank reports one :class:`PytestRankOutcome` per test:

- fresh ranks (:func:`run_pytest_rank`): one test, then the supervisor's release and exit;
- kept ranks (:func:`serve_pytest_rank`): the world's default group made once, then each
  :class:`KeptTest` received is run and answered (what it left behind fails it, as for
  ``MultiProcContinuousTest``), until ``None``.

A rank's outcome is its test's phases taken together (``phase_record``): it passes only when
the test's body returned (or skipped) and its protocol ran to its teardown; leaving setup,
call or teardown by ``sys.exit()``, ``KeyboardInterrupt`` or ``pytest.exit()`` (which pytest
would let through, ``left_the_test``) is an error that says how and where. The session's
terminal writes to a file of its own, so a test that closes stdout or stderr still reports
its own failure (``rank_streams``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
import traceback
from collections.abc import Generator, Iterator
from multiprocessing.connection import Connection
from typing import IO, Any

import pytest

from ..reporting.status import Status
from ..worlds.outcomes import RankOutcome
from ..worlds.rank_facts import RankFacts
from .left_the_test import carried, unwrapped
from .phase_record import PhaseRecord, PytestRankOutcome
from .rank_streams import SessionTerminal, reopen_closed_streams

__all__ = ["warm_session", "in_file", "PytestRankTask", "PytestWorldTask", "KeptTest", "PytestRankOutcome",
           "RankSession", "run_pytest_rank", "serve_pytest_rank", "session_options", "rank_environment"]

__unittest = True


@dataclasses.dataclass(frozen=True)
class PytestRankTask:
    """One test for fresh ranks: the session's options, the test's file and node id."""

    options: tuple[str, ...]
    path: str
    nodeid: str
    seed: int
    environ: dict[str, str]


@dataclasses.dataclass(frozen=True)
class PytestWorldTask:
    """The tests of one kept world: the session's options and the file they are in."""

    options: tuple[str, ...]
    path: str
    environ: dict[str, str]


@dataclasses.dataclass(frozen=True)
class KeptTest:
    """One test for a kept world, and the next one it will run (None: the world's last so
    far, so the test's class and module fixtures are torn down after it); ``records_dir``:
    where its ``compare`` calls write, for a test across worlds."""

    nodeid: str
    next_nodeid: str | None
    seed: int
    records_dir: str = ""


_AUTOLOAD_FLAG = pytest.version_tuple >= (8, 4)  # --disable-plugin-autoload


def rank_environment(environ: dict[str, str]) -> dict[str, str]:
    """The environment of a rank's session: the test process's; before pytest 8.4 (no
    ``--disable-plugin-autoload``) without pytest's entry-point scan, whose plugins
    :func:`session_options` names (a scan costs tens of milliseconds per rank and test)."""
    # The test process's PYTEST_ADDOPTS are in its options already (session_options).
    environ = {name: value for name, value in environ.items() if name != "PYTEST_ADDOPTS"}
    return environ if _AUTOLOAD_FLAG else {**environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def session_options(config: pytest.Config) -> list[str]:
    """The options a rank's session takes from the test process's: its root directory and
    configuration file, plugins (those loaded by entry point and each ``-p``), ini overrides
    (``-o``), warning filters, import mode and traceback style; not the configuration's
    ``addopts`` (report files, ``-n``: the test process's business); the rank writes no report
    files and captures nothing (its output is its log)."""
    options = ["--rootdir", str(config.rootpath), "-s", "-qq", "--no-header", "--no-summary", "-p", "no:cacheprovider",
               "-p", "no:unraisableexception", "--color=no", f"--tb={config.option.tbstyle}", "-o", "addopts="]
    if config.inipath is not None:
        options += ["-c", str(config.inipath)]
    # The plugins the test process loaded by entry point, named: the rank's session skips
    # the entry-point scan (see rank_environment for pytest before 8.4).
    if _AUTOLOAD_FLAG:
        options.append("--disable-plugin-autoload")
    for plugin, _dist in config.pluginmanager.list_plugin_distinfo():
        name = getattr(plugin, "__name__", "")
        if name and not name.startswith("xdist"):  # no worker of pytest-xdist in a rank
            options += ["-p", name]
    args = list(config.invocation_params.args)
    for index, arg in enumerate(args):
        for flag in ("-p", "-o", "-W", "--import-mode", "--confcutdir"):
            if arg == flag and index + 1 < len(args):
                options += [flag, args[index + 1]]
            elif arg.startswith(flag) and arg != flag and not (flag == "-p" and arg.startswith("--")):
                options.append(arg)
    return options


def in_file(nodeid: str) -> str:
    """A test's name in its file (``TestX::test_y[2ranks]``): what a rank's session, which
    collects that one file, knows it by. Its node id's path part may differ from the test
    process's (a file outside the root directory, collected through ``--pyargs``)."""
    return nodeid.partition("::")[2] or nodeid


class RankSession:
    """The plugin of a rank's session: selects the tests asked for and records how each ended
    (:class:`PhaseRecord`); after each test, the streams it closed are the log's again."""

    def __init__(self, rank: int, nodeids: set[str] | None, log: IO[str] | None = None) -> None:
        self.rank = rank
        self.nodeids = nodeids  # None: keep every test (a kept world picks them later)
        self.log = log
        self.items: dict[str, pytest.Item] = {}
        self.record = PhaseRecord(rank)
        self._collect_errors: list[str] = []
        self._faults: list[Any] | None = None  # armed while a test's calls are recorded

    # -- collection ------------------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if self.nodeids is not None:
            wanted = {in_file(nodeid) for nodeid in self.nodeids}
            items[:] = [item for item in items if in_file(item.nodeid) in wanted]
        self.items = {in_file(item.nodeid): item for item in items}

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._collect_errors.append(report.longreprtext)

    # -- one test --------------------------------------------------------------------------

    def begin(self) -> None:
        self.record = PhaseRecord(self.rank)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
        """Record the test's collective calls, its fixtures' included; then reopen what it closed."""
        from ..ledger.rank_ledger import begin_test
        from ..worlds.rank_facts import current_rank_facts

        facts = current_rank_facts()
        if facts is not None:
            self._faults = begin_test(facts, getattr(item, "function", None), getattr(item, "cls", None))
        try:
            return (yield)
        finally:
            # pytest leaves its variable set when a teardown raises: not the test's doing.
            os.environ.pop("PYTEST_CURRENT_TEST", None)
            if self.log is not None:
                reopen_closed_streams(self.log)

    # pytest lets KeyboardInterrupt and Exit through each phase: carried, they are reported.
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, Any]:
        return (yield from carried())

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        return (yield from carried())

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
        return (yield from carried())

    def finish(self, outcome: PytestRankOutcome) -> PytestRankOutcome:
        """``outcome`` with the test's ledger (and failed if a fault of this rank never fired)."""
        from ..ledger.rank_ledger import end_test

        if self._faults is None:
            return outcome
        faults, self._faults = self._faults, None
        return end_test(outcome, faults)  # type: ignore[return-value]  # keeps the outcome's class

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        call.excinfo = unwrapped(call.excinfo)  # the report shows what the test raised
        report = yield  # before the xfail handling, whose wrapper is outside this one
        self.record.add(call, report)
        return report

    def outcome(self, ran: bool, exit_status: int | None = None) -> PytestRankOutcome:
        """How the test that just ran ended on this rank (``ran``: the session ran it;
        ``exit_status``: what ``pytest.main`` returned, on fresh ranks)."""
        if not ran:
            detail = "\n".join(self._collect_errors) or "the test was not collected in the rank's session"
            return PytestRankOutcome(self.rank, Status.ERROR, detail)
        return self.record.outcome(exit_status)

    def broken(self, error: BaseException) -> PytestRankOutcome:
        """The outcome when the rank's session itself raised ``error``: the test's own problem
        if it had one (the breakage after it is noted), else the breakage."""
        return self.record.broken(error)


def _become(facts: RankFacts, environ: dict[str, str], lifeline: Connection) -> Any:
    from ..fresh.rank_process import become_rank

    log = become_rank(facts, environ, lifeline)
    os.environ.pop("PYTEST_CURRENT_TEST", None)  # the test process's; this rank's session sets its own
    return log


def _basetemp(facts: RankFacts) -> list[str]:
    return ["--basetemp", os.path.join(facts.test_dir, f"tmp-rank{facts.rank}")]


def _test_argument(task: PytestRankTask) -> str:
    """The test's file and its name in it (``file.py::Class::test_x[2ranks]``), so that the
    rank's session collects that test only, not the whole file."""
    _, _, name = task.nodeid.partition("::")
    return f"{task.path}::{name}" if name else task.path


def run_pytest_rank(task: PytestRankTask, facts: RankFacts, result: Connection, lifeline: Connection) -> None:
    """Entry point of a fresh rank: run the test ``task`` names in a session of its own, as
    the rank ``facts`` describes; report its outcome, wait for the release, exit."""
    from ..fresh.rank_process import report_and_exit
    from ..testcase.tensor_testcase import seed_everything

    log = _become(facts, task.environ, lifeline)
    session = RankSession(facts.rank, {task.nodeid}, log)
    seed_everything(task.seed)
    try:
        with SessionTerminal(log) as terminal:
            status = pytest.main([*task.options, *_basetemp(facts), _test_argument(task)],
                                 plugins=[session, terminal.configuring()])
        outcome = session.finish(session.outcome(bool(session.items), int(status)))
    except BaseException as error:  # the session itself broke: the rank says how
        outcome = session.broken(error)
    reopen_closed_streams(log)
    report_and_exit(outcome, result, log)


class _KeptSession(RankSession):
    """A kept rank's session: makes the world's group, then runs the tests it is sent."""

    def __init__(self, facts: RankFacts, connection: Connection, log: IO[str]) -> None:
        super().__init__(facts.rank, None, log)
        self.facts = facts
        self.connection = connection

    def _make_group(self, config: pytest.Config) -> PytestRankOutcome | None:
        import torch.distributed as dist

        from .rank_fixtures import KEPT_GROUP

        try:
            dist.init_process_group(self.facts.backend, init_method=f"file://{self.facts.file_name}",
                                    rank=self.facts.rank, world_size=self.facts.world_size)
        except BaseException:  # every test of the world says why
            return PytestRankOutcome(self.rank, Status.ERROR,
                                     f"making the world's process group failed:\n{traceback.format_exc()}")
        config.stash[KEPT_GROUP] = dist.group.WORLD
        return None

    def _run(self, item: pytest.Item, test: KeptTest) -> tuple[RankOutcome, bool]:
        """Run ``item`` with pytest's protocol: its outcome, and whether the session can go on
        (not after the protocol itself raised)."""
        from ..many_worlds.value_records import RECORDS_DIR_ENV
        from ..testcase.tensor_testcase import seed_everything

        self.begin()
        seed_everything(test.seed)
        nextitem = self.items.get(in_file(test.next_nodeid)) if test.next_nodeid else None
        if test.records_dir:
            os.environ[RECORDS_DIR_ENV] = test.records_dir
        try:
            item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        except BaseException as error:  # the protocol broke off: this world serves no more tests
            return self.finish(self.broken(error)), False
        finally:
            os.environ.pop(RECORDS_DIR_ENV, None)
        return self.finish(self.outcome(True)), True

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        from ..kept.kept_rank import checked_for_leaks
        from ..kept.leak_check import RankState

        refusal = self._make_group(session.config)
        before = RankState.take(self.facts.device)
        going_on = True
        while going_on:
            try:
                test = self.connection.recv()
            except (EOFError, OSError):
                break
            if test is None:
                break
            item = self.items.get(in_file(test.nodeid))
            outcome: RankOutcome
            if refusal is not None or item is None:
                outcome = refusal or self.outcome(False)
            else:
                outcome, going_on = self._run(item, test)
                outcome = checked_for_leaks(outcome, before)
            self.connection.send(outcome)
        return True


def serve_pytest_rank(world: PytestWorldTask, facts: RankFacts, connection: Connection,
                      lifeline: Connection) -> None:
    """Entry point of a kept rank: a session over the world's file that runs each
    :class:`KeptTest` received on ``connection`` and answers its outcome, until ``None``."""
    from ..fresh.rank_process import leave_rank_process

    log = _become(facts, world.environ, lifeline)
    session = _KeptSession(facts, connection, log)
    try:
        with SessionTerminal(log) as terminal:
            pytest.main([*world.options, *_basetemp(facts), world.path], plugins=[session, terminal.configuring()])
    except BaseException:  # the test process sees the rank end without an outcome; the log says why
        reopen_closed_streams(log)
        traceback.print_exc()
    leave_rank_process(connection, log)


@contextlib.contextmanager
def _output_discarded() -> Iterator[None]:
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def warm_session(*options: str) -> None:
    """The fork server's warm-up for pytest ranks: a session with the test process's plugin
    options over an empty directory, its output discarded, so that pytest's plugins, and what
    they import late (a plugin's terminal summary may import a whole library), are loaded once
    in the server instead of in every rank."""
    with tempfile.TemporaryDirectory(prefix="torch_testing_ext-warm-") as empty, _output_discarded():
        pytest.main([*options, "-q", "-p", "no:cacheprovider", empty])
