"""run_test.py end to end: each test runs the driver in a subprocess on a tiny fixture tree.

The fixture test files speak the driver's protocol on plain unittest
(``fixtures/unittest_protocol.py``: the harness's own JUnit writer, no torch import, so a
test process costs a tenth of a second) and log the arguments they were started with to
``argv.log``, so the tests can check which processes ran and with which command line. The
driver with files that run the real ``run_tests()`` or pytest: driver/test_paths.py.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fixtures.paths import HARNESS, REPO
from fixtures.runs import checkout_env, driver_main

RUN_TEST = REPO / "run_test.py"

_LOG_ARGV = """
import json, os, sys
_name = os.path.relpath(os.path.abspath(__file__), {test_dir!r})[:-3]
with open({log!r}, "a") as _log:
    _log.write(json.dumps({{"file": _name, "argv": sys.argv[1:]}}) + "\\n")
"""

PASSING = """
import unittest
from unittest import TestCase
from fixtures.unittest_protocol import run_tests

class TestA(TestCase):
    def test_one(self):
        pass

    def test_two(self):
        pass

    @unittest.skip("not today")
    def test_skip(self):
        pass

class TestB(TestCase):
    def test_three(self):
        pass

if __name__ == "__main__":
    run_tests()
"""

FLAKY = """
import os
from unittest import TestCase
from fixtures.unittest_protocol import run_tests

MARKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "flaky.marker")

class TestF(TestCase):
    def test_steady(self):
        pass

    def test_flaky(self):
        if not os.path.exists(MARKER):
            open(MARKER, "w").close()
            self.fail("fails the first time only")

if __name__ == "__main__":
    run_tests()
"""

FAILING = """
from unittest import TestCase
from fixtures.unittest_protocol import run_tests

class TestD(TestCase):
    def test_ok(self):
        pass

    def test_bad(self):
        self.assertEqual(1, 2)

if __name__ == "__main__":
    run_tests()
"""

CRASHING = """
import os, signal
from unittest import TestCase
from fixtures.unittest_protocol import run_tests

class TestCrash(TestCase):
    def test_segfault(self):
        os.kill(os.getpid(), signal.SIGSEGV)

if __name__ == "__main__":
    run_tests()
"""

# Starts a child and a grandchild that escapes into its own session, records their pids, hangs.
HANGING = """
import os, subprocess, sys, time
sleeper = [sys.executable, "-c", "import time; time.sleep(300)"]
child = subprocess.Popen(sleeper)
escaper = subprocess.Popen(sleeper, start_new_session=True)
with open({pids!r} + ".tmp", "w") as out:
    out.write(f"{{os.getpid()}} {{child.pid}} {{escaper.pid}}")
os.replace({pids!r} + ".tmp", {pids!r})
time.sleep(300)

from fixtures.unittest_protocol import run_tests

if __name__ == "__main__":
    run_tests()
"""


class FixtureTree:
    """A temporary ``<root>/test/...`` tree of fixture test files."""

    def __init__(self, files):
        self._temp = tempfile.TemporaryDirectory(prefix="driver-cli-")
        self.root = Path(self._temp.name)
        self.test_dir = self.root / "test"
        self.argv_log = self.root / "argv.log"
        self.pids = self.root / "hang.pids"
        for name, body in files.items():
            path = self.test_dir / f"{name}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            header = _LOG_ARGV.format(test_dir=str(self.test_dir), log=str(self.argv_log))
            body = body.format(pids=str(self.pids)) if body is HANGING else body
            path.write_text(header + textwrap.dedent(body))

    def cleanup(self):
        self._temp.cleanup()

    def command(self, *args):
        return [sys.executable, str(RUN_TEST), "--test-dir", str(self.test_dir), *args]

    def env(self):
        return checkout_env(HARNESS)

    def run(self, *args, timeout=120):
        return subprocess.run(self.command(*args), cwd=self.root, env=self.env(), capture_output=True,
                              text=True, timeout=timeout)

    def started(self):
        """(file, argv) of every test process started so far, in start order."""
        if not self.argv_log.exists():
            return []
        return [(r["file"], r["argv"]) for r in map(json.loads, self.argv_log.read_text().splitlines())]

    def write_times(self, document, name=".test-times.json"):
        path = self.root / name
        path.write_text(document if isinstance(document, str) else json.dumps(document))
        return path


def report_cases(report):
    root = ET.parse(report).getroot()
    return {f"{c.get('classname')}.{c.get('name')}": c for c in root.iter("testcase")}


def assert_gone(test, pids, within=5.0):
    deadline = time.monotonic() + within
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _exists(pid)]
        time.sleep(0.05)
    test.assertEqual(alive, [], "processes left behind")


def _exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class TestBadInput(unittest.TestCase):
    """Every bad input: exit 2, one line on stderr, no traceback, nothing run (the driver's
    ``main`` in this process, and one bad input as a process)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tree = FixtureTree({"harness/test_pass": PASSING, "distributed/test_fail": FAILING})

    @classmethod
    def tearDownClass(cls):
        cls.tree.cleanup()
        super().tearDownClass()

    def test_bad_inputs(self):
        cases = {
            ("--shard", "0", "2"): "between 1 and M",
            ("--shard", "3", "2"): "between 1 and M",
            ("--shard", "1", "0"): "at least 1",
            ("--shard", "x"): "--shard",
            ("--shard", "x", "2"): "'x'",
            ("--shard", "1", "2", "3"): "3: no such file or directory",  # a PATH, not passed through
            ("-i", "harness/test_nope"): "harness/test_nope",
            ("-i", "harness/test_pass.py"): "harness/test_pass.py",
            ("-j", "0"): "positive",
            ("-j", "-3"): "positive",
            ("-j", "two"): "positive",
            ("--timeout", "0"): "positive",
            ("--timeout", "-1"): "positive",
            ("--timeout", "nan"): "positive",
            ("--distributed-tests", "--exclude-distributed-tests"): "not allowed",
            ("--test-dir", "/nonexistent/tests"): "not found",
            ("--update-times", "/nonexistent/reports"): "no such directory",
        }
        for args, expected in cases.items():
            with self.subTest(args=args):
                status, out, err = driver_main(["--test-dir", str(self.tree.test_dir), "--dry-run", *args],
                                               self.tree.root)
                self.assertEqual(status, 2, out + err)
                lines = err.splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertTrue(lines[0].startswith("run_test: error: "), lines[0])
                self.assertIn(expected, lines[0])
                self.assertEqual(out, "")
        self.assertEqual(self.tree.started(), [])

    def test_a_bad_input_as_a_process_is_one_line_exit_2_and_no_traceback(self):
        result = self.tree.run("--dry-run", "--shard", "3", "2")
        self.assertEqual((result.returncode, result.stdout), (2, ""), result.stderr)
        self.assertEqual(result.stderr.splitlines(), ["run_test: error: --shard 3 2: N must be between 1 and M=2"])

    def test_update_times_without_reports(self):
        empty = self.tree.root / "empty-reports"
        empty.mkdir(exist_ok=True)
        result = self.tree.run("--update-times", str(empty))
        self.assertEqual(result.returncode, 2)
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)


class TestPlanning(unittest.TestCase):
    """Selection, sharding and times files, seen through --dry-run (no test file runs)."""

    NAMES = ["distributed/_composable/test_c", "distributed/test_a", "distributed/test_b",
             "harness/test_d", "harness/test_e", "test_f", "test_g"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tree = FixtureTree({name: PASSING for name in cls.NAMES})
        (cls.tree.test_dir / "harness" / "helper.py").write_text("raise SystemExit(3)\n")

    @classmethod
    def tearDownClass(cls):
        cls.tree.cleanup()
        super().tearDownClass()

    def planned(self, *args):
        result = self.tree.run("--dry-run", *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        names = []
        for line in result.stdout.splitlines():
            if line.startswith("  ") and ("serial" in line or "parallel" in line):
                names.append(line.split()[2])
        return names, result

    def test_selection(self):
        all_names, result = self.planned()
        self.assertEqual(sorted(all_names), self.NAMES)
        self.assertEqual(result.stderr, "")  # one shard: the times only order the files
        sharded = self.tree.run("--dry-run", "--shard", "1", "2")
        self.assertEqual(sharded.stderr.count("\n"), 1)
        self.assertIn("no times file", sharded.stderr)
        self.assertEqual(sorted(self.planned("-i", "test_g", "harness/test_d")[0]),
                         ["harness/test_d", "test_g"])
        self.assertEqual(sorted(self.planned("-x", "distributed/", "test_")[0]),
                         ["harness/test_d", "harness/test_e"])
        self.assertEqual(sorted(self.planned("--distributed-tests")[0]), self.NAMES[:3])
        self.assertEqual(sorted(self.planned("--exclude-distributed-tests")[0]), self.NAMES[3:])
        self.assertEqual(self.tree.started(), [])

    def test_serial_and_parallel(self):
        _, result = self.planned("-j", "3")
        kinds = {line.split()[2]: line.split()[0] for line in result.stdout.splitlines()
                 if line.startswith("  ")}
        self.assertEqual({n for n, k in kinds.items() if k == "serial"}, set(self.NAMES[:3]))

    def test_shards_cover_everything_once(self):
        for count in (1, 2, 3, 5):
            seen = []
            for index in range(1, count + 1):
                names, _ = self.planned("--shard", str(index), str(count))
                seen += names
            self.assertEqual(sorted(seen), self.NAMES)

    def test_recorded_times_balance_and_totals(self):
        times = {name: 10.0 for name in self.NAMES}
        times["test_f"] = 100.0
        path = self.tree.write_times({"version": 1, "files": times}, "balanced.json")
        names, result = self.planned("--shard", "1", "2", "--times-file", str(path))
        self.assertEqual(names, ["test_f"])
        self.assertEqual(result.stderr, "")
        self.assertIn("estimated 1m40s", result.stdout)
        self.assertIn("other shards: 2: 1m00s (6 entries)", result.stdout)

    def test_corrupt_times_file_warns_once_and_plans_round_robin(self):
        path = self.tree.write_times('{"files": {"test_f": "soon"', "corrupt.json")
        names, result = self.planned("--shard", "2", "3", "--times-file", str(path))
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn("warning", lines[0])
        self.assertIn("corrupt.json", lines[0])
        self.assertIn("round-robin", lines[0])
        self.assertEqual(sorted(names), self.NAMES[1::3])
        self.assertNotIn("Traceback", result.stderr)


class TestRunning(unittest.TestCase):
    """Real runs: flaky, consistent failures, fail-fast, pass-through, reports, times update."""

    def setUp(self):
        super().setUp()
        self.tree = FixtureTree({
            "harness/test_pass": PASSING,
            "harness/test_flaky": FLAKY,
            "harness/test_zfail": FAILING,
            "distributed/test_fail": FAILING,
            "harness/test_crash": CRASHING,
        })

    def tearDown(self):
        self.tree.cleanup()
        super().tearDown()

    def test_flaky_test_is_reported_and_passes(self):
        result = self.tree.run("-i", "harness/test_pass", "harness/test_flaky", "-j", "2")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("rerun 1 of TestF.test_flaky: passed", result.stdout)
        self.assertIn("PASSED (1 flaky) harness/test_flaky", result.stdout)
        self.assertRegex(result.stdout, r"flaky\s+1\n")
        self.assertRegex(result.stdout, r"tests failed\s+0\n")
        self.assertIn(f"python {os.path.join('test', 'harness', 'test_flaky.py')} TestF.test_flaky",
                      result.stdout)
        started = self.tree.started()
        self.assertEqual(sorted(f for f, _ in started), ["harness/test_flaky", "harness/test_flaky",
                                                         "harness/test_pass"])
        rerun_argv = [argv for f, argv in started if f == "harness/test_flaky"][1]
        self.assertEqual(rerun_argv[:1], ["TestF.test_flaky"])
        self.assertEqual(rerun_argv[1], "--save-xml")

        reports = self.tree.root / "test-reports"
        flaky = report_cases(reports / "harness" / "test_flaky.xml")["TestF.test_flaky"]
        self.assertIsNone(flaky.find("failure"))
        self.assertIsNotNone(flaky.find("flakyFailure"))
        passing = report_cases(reports / "harness" / "test_pass.xml")
        self.assertEqual(sorted(passing), ["TestA.test_one", "TestA.test_skip", "TestA.test_two",
                                           "TestB.test_three"])
        self.assertIsNotNone(passing["TestA.test_skip"].find("skipped"))

        update = self.tree.run("--update-times")
        self.assertEqual(update.returncode, 0, update.stderr)
        recorded = json.loads((self.tree.root / ".test-times.json").read_text())
        self.assertEqual(sorted(recorded["files"]), ["harness/test_flaky", "harness/test_pass"])
        self.assertEqual(sorted(recorded["classes"]["harness/test_pass"]), ["TestA", "TestB"])
        # A file's time is its process's (start-up included), more than its tests' sum.
        self.assertGreater(recorded["files"]["harness/test_pass"],
                           sum(recorded["classes"]["harness/test_pass"].values()))

    def test_consistent_failure_after_two_reruns(self):
        result = self.tree.run("-i", "harness/test_pass", "distributed/test_fail")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("rerun 1 of TestD.test_bad: failed", result.stdout)
        self.assertIn("rerun 2 of TestD.test_bad: failed", result.stdout)
        self.assertNotIn("rerun 3", result.stdout)
        self.assertRegex(result.stdout, r"tests failed\s+1\n")
        self.assertIn("AssertionError", result.stdout)  # the failing file's output is shown
        command = f"python {os.path.join('test', 'distributed', 'test_fail.py')} TestD.test_bad"
        self.assertIn(command, result.stdout.split("Failures")[1])
        # harness/test_pass comes first (parallel before serial), then the failure stops the run.
        files = [f for f, _ in self.tree.started()]
        self.assertEqual(files, ["harness/test_pass"] + ["distributed/test_fail"] * 3)
        report = report_cases(self.tree.root / "test-reports" / "distributed" / "test_fail.xml")
        self.assertIsNotNone(report["TestD.test_bad"].find("failure"))
        self.assertEqual(len(report["TestD.test_bad"].findall("rerunFailure")), 2)

    def test_crash_fails_the_run_without_reruns(self):
        result = self.tree.run("-i", "harness/test_crash")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("CRASHED (killed by SIGSEGV) harness/test_crash", result.stdout)
        self.assertIn("killed by SIGSEGV without a failed test", result.stdout.split("Failures")[1])
        self.assertNotIn("rerun", result.stdout)
        self.assertRegex(result.stdout, r"timed out / crashed\s+1 file\n")
        report = report_cases(self.tree.root / "test-reports" / "harness" / "test_crash.xml")
        self.assertEqual(list(report), ["harness.test_crash.crash"])
        self.assertIsNotNone(report["harness.test_crash.crash"].find("error"))

    def test_fail_fast_then_keep_going(self):
        args = ("-i", "harness/test_zfail", "distributed/test_fail", "--no-rerun")
        result = self.tree.run(*args)
        self.assertEqual(result.returncode, 1)
        self.assertIn("not run              1 file (stopped after the first failure", result.stdout)
        self.assertEqual([f for f, _ in self.tree.started()], ["harness/test_zfail"])

        self.tree.argv_log.unlink()
        result = self.tree.run(*args, "--keep-going", "-k", "bad", "-k", "one", "--seed", "7")
        self.assertEqual(result.returncode, 1)
        self.assertNotIn("rerun", result.stdout)
        self.assertIn("FAILED      harness/test_zfail  0 passed, 1 failed, 0 skipped", result.stdout)
        started = self.tree.started()
        self.assertEqual([f for f, _ in started], ["harness/test_zfail", "distributed/test_fail"])
        for _, argv in started:
            self.assertEqual(argv[:6], ["-k", "bad", "-k", "one", "--seed", "7"])

    def test_split_file_runs_each_class_once_across_shards(self):
        times = self.tree.write_times({
            "version": 1,
            "files": {"harness/test_pass": 500.0, "harness/test_flaky": 10.0},
            "classes": {"harness/test_pass": {"TestA": 240.0, "TestB": 230.0}},
        })
        shard_args = [("--shard", str(i), "2", "-i", "harness/test_pass", "--times-file", str(times),
                       "--save-xml", f"reports-{i}") for i in (1, 2)]
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda args: self.tree.run(*args), shard_args))
        for result in results:
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("harness/test_pass [TestA]", results[0].stdout)
        self.assertIn("harness/test_pass [TestB]", results[1].stdout)
        seen = []
        for i in (1, 2):
            seen += report_cases(self.tree.root / f"reports-{i}" / "harness" / "test_pass.xml")
        self.assertEqual(sorted(seen), ["TestA.test_one", "TestA.test_skip", "TestA.test_two",
                                        "TestB.test_three"])
        runs = [argv for _, argv in self.tree.started() if "--list" not in argv]
        self.assertEqual(sorted(argv[0] for argv in runs), ["TestA", "TestB"])

    def test_long_class_split_by_test_runs_each_test_once_across_shards(self):
        times = self.tree.write_times({
            "version": 1,
            "files": {"harness/test_pass": 500.0},
            "classes": {"harness/test_pass": {"TestA": 450.0, "TestB": 5.0}},
            "tests": {"harness/test_pass": {"TestA.test_one": 200.0, "TestA.test_two": 200.0,
                                            "TestA.test_skip": 50.0, "TestB.test_three": 5.0}},
        })
        seen, selections = [], []
        for i in (1, 2):
            result = self.tree.run("--shard", str(i), "2", "-i", "harness/test_pass",
                                   "--times-file", str(times), "--save-xml", f"reports-{i}")
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            seen += report_cases(self.tree.root / f"reports-{i}" / "harness" / "test_pass.xml")
        self.assertEqual(sorted(seen), ["TestA.test_one", "TestA.test_skip", "TestA.test_two",
                                        "TestB.test_three"])
        runs = [argv for _, argv in self.tree.started() if "--list" not in argv]
        for argv in runs:
            selections.append(tuple(argv[:argv.index("--save-xml")]))
        # TestA (450 s) is longer than half of the file: its tests are shared out one by one.
        self.assertEqual(sorted(selections), [("TestA.test_one", "TestA.test_skip"),
                                              ("TestA.test_two", "TestB")])


class TestStopping(unittest.TestCase):
    """Timeouts and signals: every process the test file started is gone afterwards."""

    def setUp(self):
        super().setUp()
        self.tree = FixtureTree({"harness/test_hang": HANGING})

    def tearDown(self):
        if self.tree.pids.exists():  # never leave the fixture's sleepers behind, whatever failed
            for pid in map(int, self.tree.pids.read_text().split()):
                if _exists(pid):
                    os.kill(pid, signal.SIGKILL)
        self.tree.cleanup()
        super().tearDown()

    def pids(self):
        return [int(pid) for pid in self.tree.pids.read_text().split()]

    def test_timeout_kills_the_whole_tree(self):
        result = self.tree.run("--timeout", "1.5")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("TIMEOUT", result.stdout)
        self.assertIn("timed out after", result.stdout)
        self.assertEqual(len(self.pids()), 3)
        assert_gone(self, self.pids())
        report = report_cases(self.tree.root / "test-reports" / "harness" / "test_hang.xml")
        self.assertEqual(list(report), ["harness.test_hang.timeout"])

    def _interrupt(self, signum, expected_status):
        driver = subprocess.Popen(self.tree.command(), cwd=self.tree.root, env=self.tree.env(),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while not self.tree.pids.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertTrue(self.tree.pids.exists(), "the fixture never started")
            driver.send_signal(signum)
            stdout, stderr = driver.communicate(timeout=30)
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.communicate()
        self.assertEqual(driver.returncode, expected_status, stdout + stderr)
        self.assertIn("run_test summary", stdout)
        self.assertRegex(stdout, r"interrupted\s+1 file\n")
        self.assertNotIn("Traceback", stderr)
        assert_gone(self, self.pids())

    def test_ctrl_c_exits_130_and_leaves_nothing(self):
        self._interrupt(signal.SIGINT, 130)

    def test_sigterm_exits_143_and_leaves_nothing(self):
        self._interrupt(signal.SIGTERM, 143)
