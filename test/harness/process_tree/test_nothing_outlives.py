"""Self-tests: nothing a test process starts outlives it, zombies included.

What a test's ranks leave running is found, named and killed after the test: checked in this
process (``TestLeftoversInProcess``: ``fixtures/lingering.py``'s ranks are forked from this
process's fork server, as in any test file), which also sees the helpers' pids gone.

What only a whole test process shows is one subprocess test per way it ends: it exits after
its tests passed and failed (and its ranks left helpers), or on Ctrl-C, SIGTERM or ``kill -9``.
Each runs ``fixtures/lingering.py`` with a fresh marker in its environment
(``process_tree.marked_run``), watches ``/proc`` for every process that carries it (the test
process, the fork server, multiprocessing's resource tracker, the ranks and what they start),
and checks that 1 s after the test process ended none of them is left, not even as a zombie.
Only ``kill -9`` of the test process leaves orphans (the server and the resource tracker, which
exit at once); for that test this process makes itself a child subreaper, as init would be,
and reaps them. In every other test nothing may become an orphan at all: init on this machine
is slow to reap, so an orphan's zombie would be seen.
"""

import glob
import os
import re
import signal
import tempfile
import time
import warnings
from pathlib import Path
from unittest import mock

from torch_testing_ext._engine.driver.file_reports import read_outcomes
from torch_testing_ext._engine.fresh.leftovers import LeftoverProcessWarning
from torch_testing_ext._engine.process_tree.linux_prctl import become_subreaper
from torch_testing_ext._engine.process_tree.marked_run import MarkedRun, watch_all
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext.common_utils import TestCase

from fixtures import lingering
from fixtures.paths import FIXTURES
from fixtures.process_checks import below_the_server, wait_until
from fixtures.procfs import alive
from fixtures.runs import assert_outcomes, run_case

FIXTURE = str(FIXTURES / "lingering.py")
# Settings a caller's environment may hold; each test here sets what it needs.
SETTINGS = ("TORCH_TESTING_EXT_TIMEOUT", "TORCH_TESTING_EXT_LEFTOVER_PROCESSES")
HELPER = re.compile(r"pid (\d+) \(started by rank (\d)\): ")




class TestLeftoversInProcess(TestCase):
    def run_escape(self, **env):
        """Run ``Lingering.test_escape`` here (its ranks start a child, a helper in a session of
        its own and a double-forked daemon); its result, the LeftoverProcessWarnings' messages
        and the helpers' pids by rank as the first of them or the report names them."""
        environ = {k: v for k, v in os.environ.items() if k not in SETTINGS}
        with mock.patch.dict(os.environ, {**environ, **env}, clear=True), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = run_case(lingering.Lingering, "test_escape")
        warned = [str(w.message) for w in caught if issubclass(w.category, LeftoverProcessWarning)]
        report = "\n".join(text for _, text in result.errors + result.failures)
        helpers = [(int(pid), int(rank)) for pid, rank in HELPER.findall(warned[0] if warned else report)]
        return result, warned, report, helpers

    def assertHelpersGone(self, helpers):
        self.assertEqual(sorted(rank for _, rank in helpers), [0, 1, 1], helpers)
        pids = [pid for pid, _ in helpers]
        self.assertTrue(wait_until(lambda: not any(map(alive, pids))), f"helpers left running: {pids}")
        self.assertTrue(wait_until(lambda: not below_the_server()), f"left running: {below_the_server()}")

    def test_escaped_helpers_are_named_killed_and_warned_about(self):
        result, warned, _, helpers = self.run_escape()
        assert_outcomes(self, result, passed=1)
        self.assertEqual(len(warned), 1, warned)
        self.assertTrue(warned[0].startswith("fixtures.lingering.Lingering.test_escape: the test's ranks "
                                             "left 3 processes running; killed:"), warned[0])
        self.assertEqual(warned[0].count("(started by rank 1): "), 2, warned[0])
        self.assertEqual(warned[0].count("(started by rank 0): "), 1, warned[0])
        self.assertIn("time.sleep(600)", warned[0])
        self.assertHelpersGone(helpers)

    def test_escaped_helpers_fail_the_test_when_asked(self):
        result, warned, report, helpers = self.run_escape(TORCH_TESTING_EXT_LEFTOVER_PROCESSES="fail")
        assert_outcomes(self, result, errors=1)
        self.assertIn("RankError: the test's ranks left 3 processes running; killed:", report)
        self.assertEqual(warned, [])
        self.assertHelpersGone(helpers)


class TestNothingOutlivesTheTestProcess(TestCase):
    """The runs that end on their own, on Ctrl-C and on SIGTERM go at once (each with its own
    marker and TMPDIR), without a subreaper: an orphan of any of them would be seen."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.reports = tempfile.TemporaryDirectory(prefix="tte-selftest-xml-")  # outside the runs' TMPDIRs
        cls.addClassCleanup(cls.reports.cleanup)
        cls.runs = {}
        for name, args in (("exits", ["Lingering.test_pass", "Lingering.test_fail", "Lingering.test_escape",
                                      "--save-xml", cls.reports.name]),
                           ("ctrl_c", ["Lingering.test_hang"]), ("sigterm", ["Lingering.test_hang"])):
            cls.runs[name] = MarkedRun(FIXTURE, *args)
            cls.addClassCleanup(cls.runs[name].close)
        stops = {cls.runs["ctrl_c"]: signal.SIGINT, cls.runs["sigterm"]: signal.SIGTERM}
        ranks_seen = {}

        def stop_mid_test():
            # Stop each once both its ranks run (test process, server, tracker and two ranks
            # seen), half a second later.
            for run, sig in list(stops.items()):
                if len(run.seen) >= 5:
                    ranks_seen.setdefault(run, time.monotonic())
                if run in ranks_seen and time.monotonic() > ranks_seen[run] + 0.5:
                    run.process.send_signal(sig)
                    del stops[run]

        ended = watch_all(list(cls.runs.values()), timeout=120, after_scan=stop_mid_test)
        cls.results = dict(zip(cls.runs, ended, strict=True))

    def ended(self, name):
        """How run ``name`` ended: its exit status and output; checked to have left nothing."""
        run, (code, output, left) = self.runs[name], self.results[name]
        self.assertEqual(left, [], output)
        self.assertEqual(os.listdir(run.tmpdir), [], "the run left temporary files")
        return code, output

    def test_passes_failures_and_escaped_helpers_leave_nothing(self):
        code, output = self.ended("exits")
        statuses = {f"{o.class_name}.{o.name}": o.status
                    for xml in sorted(Path(self.reports.name).glob("*.xml")) for o in read_outcomes(xml)}
        self.assertEqual(code, 1, output)
        self.assertEqual(statuses, {"Lingering.test_pass": Status.PASSED, "Lingering.test_fail": Status.FAILED,
                                    "Lingering.test_escape": Status.PASSED}, output)
        self.assertGreaterEqual(len(self.runs["exits"].seen), 5, "test process, server, tracker and 2 ranks")
        # The warning reaches the file's output.
        self.assertIn("LeftoverProcessWarning", output)
        self.assertIn("the test's ranks left 3 processes running; killed:", output)

    def test_ctrl_c_leaves_nothing(self):
        code, output = self.ended("ctrl_c")
        self.assertEqual(code, 130, output)
        self.assertIn(": interrupted (Ctrl-C)\n", output)

    def test_sigterm_leaves_nothing(self):
        code, output = self.ended("sigterm")
        self.assertEqual(code, 143, output)
        self.assertIn(": interrupted (received signal SIGTERM)\n", output)


class TestKill9(TestCase):
    def test_kill_9_of_the_test_process_leaves_nothing(self):
        # With a TMPDIR too long for a socket path in it: the server's socket directory is then
        # in /tmp, named after the test process; the server removes it (and the run directory
        # in TMPDIR) once the test process died.
        if not become_subreaper():
            self.skipTest("needs Linux prctl(PR_SET_CHILD_SUBREAPER) to reap orphans like init")
        self.addCleanup(become_subreaper, False)
        run = MarkedRun(FIXTURE, "Lingering.test_hang", tmpdir_length=100)
        self.addCleanup(run.close)
        # Kill it once both ranks run (test process, server, tracker and two ranks seen).
        run.watch_until(lambda: len(run.seen) >= 5)
        time.sleep(0.5)
        run.process.send_signal(signal.SIGKILL)
        code, output = run.finish()
        self.assertEqual(code, -signal.SIGKILL)
        self.assertEqual(run.left_after_bound(), [])
        self.assertEqual(os.listdir(run.tmpdir), [], "the run left temporary files")
        self.assertEqual(glob.glob(f"/tmp/torch_testing_ext-{run.process.pid}-*"), [])
