"""The driver's executor in this process, with scripted test processes instead of real ones.

Each scripted process reports (JUnit XML, as a test file would), fails, hangs, crashes or
exits as its script says, and records what the executor did to it: so reruns, flaky against
consistent failures, fail-fast, keep-going, timeouts, crashes, interrupts and the serial and
parallel rules are checked in milliseconds. The same behaviours with real processes, once
each: driver/test_cli.py.
"""

import dataclasses
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from torch_testing_ext._engine.driver import execute
from torch_testing_ext._engine.driver.execute import MAX_RERUN_TESTS, Executor, ShardSettings
from torch_testing_ext._engine.driver.plan import PlanEntry
from torch_testing_ext._engine.driver.runners import FileKind
from torch_testing_ext._engine.reporting.junit_xml import CaseRecord
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext._engine.runner.recording_result import write_junit_xml


@dataclasses.dataclass
class Script:
    """What one process does: the tests it reports (``Class.test`` -> status), then its exit
    status; ``hang`` keeps it running until it is stopped, ``runs_for`` polls otherwise."""

    results: dict[str, Status] = dataclasses.field(default_factory=dict)
    exit_code: int | None = None  # None: 1 if a test failed, else 0
    hang: bool = False
    ignore_sigterm: bool = False
    runs_for: int = 0
    on_poll: object = None  # called at the first poll (an interrupt, say)


class ScriptedProcess:
    def __init__(self, script, command, log_path):
        self.script, self.command = script, list(command)
        self.started = time.monotonic()
        self.polls, self.signals, self.code, self.ended = 0, [], None, None
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text(f"output of {command[1]}\n")
        self.log_path = log_path

    def file(self):
        """The test file the command runs (``python FILE ...`` or ``python -m pytest FILE::node``)."""
        return next(arg for arg in self.command[1:] if ".py" in arg).split("::")[0]

    def selection(self):
        if self.command[1:3] == ["-m", "pytest"]:
            return [arg.split("::", 1)[1] for arg in self.command if "::" in arg]
        end = self.command.index("--save-xml")
        return [arg for arg in self.command[2:end] if not arg.startswith("-")]

    def _report_path(self):
        if "--save-xml" in self.command:
            return Path(self.command[self.command.index("--save-xml") + 1]) / "TEST-x.xml"
        return Path(next(arg for arg in self.command if arg.startswith("--junitxml="))[len("--junitxml="):])

    def _report(self):
        selection = self.selection()
        pytest_file = self.command[1:3] == ["-m", "pytest"]

        def chosen(test):
            if pytest_file:
                return not selection or test.split(".", 1)[1] in selection
            return not selection or any(test == s or test.startswith(s + ".") for s in selection)

        ran = {test: status for test, status in self.script.results.items() if chosen(test)}
        records = [CaseRecord(test.split(".", 1)[0], test.split(".", 1)[1], status, 0.01, f"{status} here")
                   for test, status in ran.items()]
        write_junit_xml(records, str(self._report_path()), suite_name="x")
        failing = any(s in (Status.FAILED, Status.ERROR) for s in ran.values())
        return self.script.exit_code if self.script.exit_code is not None else int(failing)

    def poll(self):
        self.polls += 1
        if self.polls == 1 and callable(self.script.on_poll):
            self.script.on_poll()
        if self.code is None and not self.script.hang and self.polls > self.script.runs_for:
            self.code, self.ended = self._report(), time.monotonic()
        return self.code

    def terminate(self):
        self.signals.append("TERM")
        if self.code is None and not self.script.ignore_sigterm:
            self.code = -15

    def kill(self):
        self.signals.append("KILL")
        if self.code is None:
            self.code = -9

    def elapsed(self):
        return time.monotonic() - self.started

    def output(self):
        return self.log_path.read_text()


class Scripted:
    """A ``start_process`` for the executor: each file's scripts, one per run, in order."""

    def __init__(self, scripts):
        self.scripts = {name: list(runs) for name, runs in scripts.items()}
        self.processes = []

    def __call__(self, command, cwd, env, log_path):
        file = next(arg for arg in command[1:] if ".py" in arg).split("::")[0]
        name = Path(file).relative_to(self.test_dir).with_suffix("").as_posix()
        runs = self.scripts[name]
        script = runs.pop(0) if len(runs) > 1 else runs[0]
        self.processes.append(ScriptedProcess(script, command, log_path))
        return self.processes[-1]

    def started(self):
        """(file, selection) of every process, in start order."""
        return [(Path(p.file()).stem, tuple(p.selection())) for p in self.processes]


PASS, FAIL, ERROR, SKIP = Status.PASSED, Status.FAILED, Status.ERROR, Status.SKIPPED


class ExecutorCase(unittest.TestCase):
    def setUp(self):
        super().setUp()
        temp = tempfile.TemporaryDirectory(prefix="driver-execute-")
        self.addCleanup(temp.cleanup)
        self.root = Path(temp.name)
        patched = mock.patch.object(execute, "_POLL_SECONDS", 0.001)
        patched.start()
        self.addCleanup(patched.stop)

    def execute(self, scripts, entries, **settings):
        processes = Scripted(scripts)
        processes.test_dir = self.root / "test"
        finished, reruns = [], []
        work_dir = Path(tempfile.mkdtemp(prefix="work-", dir=self.root))
        run_settings = ShardSettings(self.root / "test", work_dir, **settings)
        executor = Executor(run_settings, on_finished=finished.append,
                            on_rerun=lambda entry, selector, n, attempt: reruns.append((selector, n, attempt.status)),
                            start_process=processes)
        self.executor = executor
        execution = executor.run(entries)
        return execution, processes, finished, reruns


def entry(name, serial=False, selection=()):
    return PlanEntry(name, serial=serial, selection=selection)


class TestReruns(ExecutorCase):
    def test_a_passing_file_runs_once(self):
        run, processes, finished, reruns = self.execute({"test_a": [Script({"A.test_1": PASS, "A.test_2": SKIP})]},
                                                        [entry("test_a")])
        self.assertEqual([r.status for r in run.results], [PASS])
        self.assertEqual(processes.started(), [("test_a", ())])
        self.assertEqual((len(finished), reruns), (1, []))
        self.assertEqual(run.results[0].count(SKIP), 1)

    def test_a_failing_test_is_rerun_alone_twice_then_is_a_consistent_failure(self):
        run, processes, _, reruns = self.execute(
            {"test_a": [Script({"A.test_ok": PASS, "A.test_bad": FAIL})]}, [entry("test_a")])
        result = run.results[0]
        self.assertEqual((result.status, result.consistent, result.flaky), (FAIL, ["A.test_bad"], []))
        self.assertEqual(processes.started(), [("test_a", ()), ("test_a", ("A.test_bad",)),
                                               ("test_a", ("A.test_bad",))])
        self.assertEqual(reruns, [("A.test_bad", 1, FAIL), ("A.test_bad", 2, FAIL)])

    def test_a_test_that_passes_on_a_rerun_is_flaky_and_the_file_passes(self):
        run, processes, _, reruns = self.execute(
            {"test_a": [Script({"A.test_1": PASS, "A.test_2": FAIL}), Script({"A.test_2": PASS})]},
            [entry("test_a")])
        self.assertEqual((run.results[0].status, run.results[0].flaky), (PASS, ["A.test_2"]))
        self.assertEqual(reruns, [("A.test_2", 1, PASS)])
        self.assertEqual(len(processes.processes), 2)

    def test_no_rerun_when_asked(self):
        run, processes, _, _ = self.execute({"test_a": [Script({"A.test_bad": FAIL})]}, [entry("test_a")],
                                            rerun=False)
        self.assertEqual((run.results[0].consistent, len(processes.processes)), (["A.test_bad"], 1))

    def test_at_most_max_rerun_tests_are_rerun(self):
        failing = {f"A.test_{i:02d}": FAIL for i in range(MAX_RERUN_TESTS + 3)}
        run, processes, _, _ = self.execute({"test_a": [Script(failing)]}, [entry("test_a")])
        rerun = {selection for _, selection in processes.started()[1:]}
        self.assertEqual(len(rerun), MAX_RERUN_TESTS)
        self.assertEqual(len(run.results[0].consistent), MAX_RERUN_TESTS + 3)

    def test_a_class_level_error_reruns_its_class(self):
        run, processes, _, _ = self.execute({"test_a": [Script({"A.setUpClass": ERROR})]}, [entry("test_a")])
        self.assertEqual(processes.started()[1:], [("test_a", ("A",)), ("test_a", ("A",))])
        self.assertEqual(run.results[0].consistent, ["A"])

    def test_pytest_files_rerun_by_node_id_and_exit_5_is_nothing_collected(self):
        scripts = {"test_p": [Script({"test_p.test_f[2]": FAIL, "test_p.test_f[1]": PASS})],
                   "test_empty": [Script({}, exit_code=5)]}
        kinds = {"test_p": FileKind.PYTEST, "test_empty": FileKind.PYTEST}
        run, processes, _, _ = self.execute(scripts, [entry("test_p"), entry("test_empty")], kinds=kinds,
                                            keep_going=True)
        self.assertEqual([r.status for r in run.results], [FAIL, PASS])
        self.assertEqual(run.results[0].consistent, ["test_f[2]"])
        self.assertEqual(processes.started()[:3], [("test_p", ()), ("test_p", ("test_f[2]",)),
                                                   ("test_p", ("test_f[2]",))])


class TestStopping(ExecutorCase):
    def test_fail_fast_leaves_the_rest_unstarted_and_keep_going_runs_it(self):
        scripts = {"test_a": [Script({"A.test_bad": FAIL})], "test_b": [Script({"B.test_ok": PASS})]}
        run, processes, _, _ = self.execute(scripts, [entry("test_a"), entry("test_b")], rerun=False)
        self.assertEqual(([r.entry.name for r in run.results], [e.name for e in run.not_started]),
                         (["test_a"], ["test_b"]))
        run, processes, _, _ = self.execute(scripts, [entry("test_a"), entry("test_b")], rerun=False,
                                            keep_going=True)
        self.assertEqual([(r.entry.name, r.status) for r in run.results], [("test_a", FAIL), ("test_b", PASS)])

    def test_a_crash_without_a_failed_test_is_died_and_not_rerun(self):
        run, processes, _, reruns = self.execute({"test_a": [Script({"A.test_1": PASS}, exit_code=-11)]},
                                                 [entry("test_a")])
        self.assertEqual((run.results[0].status, reruns, len(processes.processes)), (Status.DIED, [], 1))

    def test_a_process_past_its_timeout_gets_sigterm_then_sigkill(self):
        with mock.patch.object(execute, "TERMINATE_GRACE", 0.05):
            run, processes, _, _ = self.execute({"test_a": [Script(hang=True, ignore_sigterm=True)]},
                                                [entry("test_a")], timeout=0.05)
        self.assertEqual(run.results[0].status, Status.TIMED_OUT)
        self.assertEqual(processes.processes[0].signals[:2], ["TERM", "KILL"])

    def test_an_interrupt_stops_what_runs_and_reports_what_ran(self):
        def interrupt():
            self.executor.request_stop(2)

        scripts = {"test_a": [Script({"A.test_1": PASS})],
                   "test_b": [Script(hang=True, on_poll=interrupt)],
                   "test_c": [Script({"C.test_1": PASS})]}
        run, processes, _, _ = self.execute(scripts, [entry("test_a"), entry("test_b"), entry("test_c")])
        self.assertEqual(run.interrupted_by, 2)
        self.assertEqual([(r.entry.name, r.status) for r in run.results],
                         [("test_a", PASS), ("test_b", Status.INTERRUPTED)])
        self.assertEqual([e.name for e in run.not_started], ["test_c"])
        self.assertIn("TERM", processes.processes[1].signals)


class TestScheduling(ExecutorCase):
    def test_parallel_entries_share_the_jobs_and_a_serial_one_runs_alone(self):
        scripts = {name: [Script({"T.test": PASS}, runs_for=20)] for name in ("test_p1", "test_p2", "test_s")}
        entries = [entry("test_p1"), entry("test_p2"), entry("test_s", serial=True)]
        run, processes, _, _ = self.execute(scripts, entries, jobs=2)
        p1, p2, s = processes.processes
        self.assertLess(p2.started, p1.ended)  # p2 started while p1 ran
        self.assertGreaterEqual(s.started, max(p1.ended, p2.ended))  # the serial one alone
        self.assertEqual([r.status for r in run.results], [PASS, PASS, PASS])

    def test_one_job_runs_one_process_at_a_time(self):
        scripts = {name: [Script({"T.test": PASS}, runs_for=5)] for name in ("test_p1", "test_p2")}
        run, processes, _, _ = self.execute(scripts, [entry("test_p1"), entry("test_p2")], jobs=1)
        p1, p2 = processes.processes
        self.assertGreaterEqual(p2.started, p1.ended)
