"""Run a shard's entries: each in its own process, with timeouts, reruns and fail-fast.

::

    executor = Executor(settings, on_finished=print_progress)
    run = executor.run(shard.entries)      # signal handlers may call executor.request_stop()

``start_process`` makes each process (``processes.FileProcess`` by default; the self-tests
script processes that report, fail, hang or crash without starting any).

Non-``distributed/`` entries run up to ``settings.jobs`` at a time; a ``distributed/`` entry
runs alone. A test that failed is rerun alone in a fresh process, up to ``MAX_RERUNS`` times,
until it passes (flaky) or not (consistent failure). A process past its timeout gets SIGTERM,
then SIGKILL for its whole tree ``TERMINATE_GRACE`` seconds later. After the first entry that
did not pass, no new entry starts unless ``keep_going``.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..reporting.status import Status
from .discover import source_path
from .file_reports import JUnitError, read_outcomes
from .plan import PlanEntry
from .processes import FileProcess, RunningTestFile, StartProcess, kill_orphans
from .results import Attempt, CaseOutcome, EntryResult
from .runners import NORMAL_EXIT, FileKind, TestArgs, pytest_node, run_command

__all__ = [
    "DEFAULT_FILE_TIMEOUT",
    "MAX_RERUNS",
    "MAX_RERUN_TESTS",
    "Execution",
    "Executor",
    "ShardSettings",
    "entry_timeout",
    "file_command",
]

MAX_RERUNS = 2
MAX_RERUN_TESTS = 10  # beyond this many failures in one process, the rest are not rerun
DEFAULT_FILE_TIMEOUT = 30 * 60.0  # for an entry without a recorded time
TIMEOUT_FACTOR = 5.0
MIN_TIMEOUT = 120.0
TERMINATE_GRACE = 3.0
_POLL_SECONDS = 0.05


@dataclasses.dataclass
class ShardSettings:
    """How to run the test processes of a shard. ``kinds`` says how each file runs (a file
    not in it is a ``run_tests()`` script); ``test_args`` is what every file is given."""

    test_dir: Path
    work_dir: Path
    test_args: TestArgs = TestArgs()
    jobs: int = 1
    timeout: float | None = None
    rerun: bool = True
    keep_going: bool = False
    python: str = sys.executable
    kinds: Mapping[str, FileKind] = dataclasses.field(default_factory=dict)

    def kind(self, name: str) -> FileKind:
        """How the test file ``name`` runs."""
        return self.kinds.get(name, FileKind.SCRIPT)


@dataclasses.dataclass
class Execution:
    """What a run did: results of finished entries, entries never started, why it stopped."""

    results: list[EntryResult]
    not_started: list[PlanEntry]
    interrupted_by: int | None = None


def entry_timeout(entry: PlanEntry, override: float | None) -> float:
    """``override``, else several times the estimate, else ``DEFAULT_FILE_TIMEOUT``."""
    if override is not None:
        return override
    if entry.known:
        return max(MIN_TIMEOUT, TIMEOUT_FACTOR * entry.seconds)
    return DEFAULT_FILE_TIMEOUT


def file_command(settings: ShardSettings, name: str, selection: Sequence[str], report_dir: Path) -> list[str]:
    """``python test/<name>.py [selection] [args] --save-xml DIR``, or under pytest
    ``python -m pytest test/<name>.py[::selection] [args] --junitxml=DIR/...``."""
    return run_command(settings.python, source_path(settings.test_dir, name), settings.kind(name),
                        selection, settings.test_args, report_dir)


@dataclasses.dataclass
class _EntryState:
    entry: PlanEntry
    result: EntryResult | None = None
    pending_reruns: int = 0
    completed: bool = False


@dataclasses.dataclass
class _Job:
    state: _EntryState
    selection: tuple[str, ...]
    rerun_of: str | None = None

    @property
    def serial(self) -> bool:
        return self.state.entry.serial


@dataclasses.dataclass
class _Running:
    job: _Job
    process: RunningTestFile
    report_dir: Path
    deadline: float
    terminating_since: float | None = None
    timed_out: bool = False


class Executor:
    """Runs entries; reports each finished entry, each entry whose failed tests are about to be
    rerun, and each rerun through callbacks."""

    def __init__(
        self,
        settings: ShardSettings,
        on_finished: Callable[[EntryResult], None] | None = None,
        on_rerun: Callable[[PlanEntry, str, int, Attempt], None] | None = None,
        start_process: StartProcess = FileProcess,
        on_reruns_queued: Callable[[EntryResult, list[str]], None] | None = None,
    ) -> None:
        self.settings = settings
        self._start_process = start_process
        self._on_finished = on_finished or (lambda result: None)
        self._on_rerun = on_rerun or (lambda entry, selector, number, attempt: None)
        self._on_reruns_queued = on_reruns_queued or (lambda result, selectors: None)
        self._stop_signal: int | None = None
        self._queue: collections.deque[_Job] = collections.deque()
        self._running: list[_Running] = []
        self._results: list[EntryResult] = []
        self._stop_new = False
        self._sequence = 0

    def request_stop(self, signum: int) -> None:
        """Stop everything as soon as possible (safe to call from a signal handler)."""
        self._stop_signal = signum

    def run(self, entries: Sequence[PlanEntry]) -> Execution:
        """Run ``entries`` in order (as far as serial/parallel rules allow); see the module doc."""
        self._queue.extend(_Job(_EntryState(entry), entry.selection) for entry in entries)
        try:
            while self._has_work():
                if self._stop_signal is not None:
                    self._stop_all()
                    break
                self._start_ready()
                self._check_running()
                if self._has_work():
                    time.sleep(_POLL_SECONDS)
        finally:
            for running in self._running:
                running.process.kill()
            kill_orphans()
        not_started = [job.state.entry for job in self._queue if job.rerun_of is None]
        return Execution(self._results, not_started, self._stop_signal)

    def _has_work(self) -> bool:
        # After fail-fast, the entries left in the queue will not start: only reruns count.
        return bool(self._running) or any(
            job.rerun_of is not None or not self._stop_new for job in self._queue)

    # Starting ----------------------------------------------------------------------------

    def _start_ready(self) -> None:
        while self._queue:
            job = self._queue[0]
            if job.rerun_of is None and self._stop_new:
                return  # fail-fast: leave the remaining entries in the queue, unstarted
            # A serial job starts only when nothing runs, and nothing starts beside it.
            if self._running and (job.serial or len(self._running) >= self.settings.jobs
                                  or any(r.job.serial for r in self._running)):
                return
            self._queue.popleft()
            self._start(job)

    def _start(self, job: _Job) -> None:
        self._sequence += 1
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", job.state.entry.name + "." + ".".join(job.selection))
        job_dir = self.settings.work_dir / f"{self._sequence:04d}-{slug[:80]}"
        report_dir = job_dir / "reports"
        report_dir.mkdir(parents=True)
        command = file_command(self.settings, job.state.entry.name, job.selection, report_dir)
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")  # the output of a killed process is not lost
        process = self._start_process(command, self.settings.test_dir.parent, env, job_dir / "output.log")
        deadline = process.started + entry_timeout(job.state.entry, self.settings.timeout)
        self._running.append(_Running(job, process, report_dir, deadline))

    # Watching ----------------------------------------------------------------------------

    def _check_running(self) -> None:
        now = time.monotonic()
        for running in list(self._running):
            exited = running.process.poll() is not None
            if not exited and running.terminating_since is None and now > running.deadline:
                running.timed_out = True
                running.terminating_since = now
                running.process.terminate()
                continue
            grace_over = (running.terminating_since is not None
                          and now - running.terminating_since > TERMINATE_GRACE)
            if exited or grace_over:
                running.process.kill()  # also whatever it left behind
                self._running.remove(running)
                self._finish(running, self._attempt(running, interrupted=False))
        if not self._running:
            kill_orphans()

    def _stop_all(self) -> None:
        # A process that already exited on its own finished normally: report it as it is.
        for running in [r for r in self._running if r.process.poll() is not None]:
            running.process.kill()
            self._running.remove(running)
            self._finish(running, self._attempt(running, interrupted=False), stopping=True)
        for running in self._running:
            running.process.terminate()
        deadline = time.monotonic() + TERMINATE_GRACE
        while time.monotonic() < deadline and any(r.process.poll() is None for r in self._running):
            time.sleep(_POLL_SECONDS)
        for running in self._running:
            running.process.kill()
        stopped, self._running = self._running, []
        for running in stopped:
            self._finish(running, self._attempt(running, interrupted=True), stopping=True)
        # Entries whose reruns were still waiting: report them with the reruns they got.
        for job in list(self._queue):
            if job.state.result is not None:
                self._complete(job.state)

    def _outcomes(self, running: _Running) -> tuple[list[CaseOutcome], str]:
        """The test outcomes a process reported, and notes on reports that could not be read."""
        name = running.job.state.entry.name
        source = source_path(self.settings.test_dir, name)
        outcomes: list[CaseOutcome] = []
        notes = ""
        for path in sorted(running.report_dir.rglob("*.xml")):
            try:
                outcomes.extend(read_outcomes(path))
            except JUnitError as error:
                notes += f"\n[run_test] unreadable report {error}"
        if self.settings.kind(name) is FileKind.PYTEST:
            outcomes = [dataclasses.replace(o, node=pytest_node(o.classname, o.name, source))
                        for o in outcomes]
        return outcomes, notes

    def _attempt(self, running: _Running, interrupted: bool) -> Attempt:
        process = running.process
        exit_code = process.poll()
        outcomes, notes = self._outcomes(running)
        if interrupted:
            status = Status.INTERRUPTED
        elif running.timed_out:
            status = Status.TIMED_OUT
        elif any(o.failing for o in outcomes):
            status = Status.FAILED
        elif exit_code in NORMAL_EXIT[self.settings.kind(running.job.state.entry.name)]:
            status = Status.PASSED
        else:
            status = Status.DIED
        return Attempt(status, exit_code, process.elapsed(), outcomes, process.output() + notes)

    # Finishing ---------------------------------------------------------------------------

    def _finish(self, running: _Running, attempt: Attempt, stopping: bool = False) -> None:
        job, state = running.job, running.job.state
        if job.rerun_of is None:
            state.result = EntryResult(state.entry, attempt)
            if attempt.status == Status.FAILED and self.settings.rerun and not stopping:
                selectors = attempt.failing_selectors()[:MAX_RERUN_TESTS]
                for selector in selectors:
                    state.result.reruns[selector] = []
                state.pending_reruns = len(selectors)
                # Reruns go first, in report order, so that the entry's verdict comes soon.
                self._queue.extendleft(_Job(state, state.entry.selection_for(s), s)
                                       for s in reversed(selectors))
                self._on_reruns_queued(state.result, selectors)
        else:
            assert state.result is not None
            runs = state.result.reruns[job.rerun_of]
            runs.append(attempt)
            self._on_rerun(state.entry, job.rerun_of, len(runs), attempt)
            if not attempt.passed(job.rerun_of) and len(runs) < MAX_RERUNS and not stopping:
                self._queue.appendleft(_Job(state, job.selection, job.rerun_of))
            else:
                state.pending_reruns -= 1
        if state.pending_reruns == 0 or stopping:
            self._complete(state)

    def _complete(self, state: _EntryState) -> None:
        assert state.result is not None
        if state.completed:
            return
        state.completed = True
        self._queue = collections.deque(j for j in self._queue if j.state is not state)
        self._results.append(state.result)
        if state.result.status != Status.PASSED and not self.settings.keep_going:
            self._stop_new = True
        self._on_finished(state.result)
