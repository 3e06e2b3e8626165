"""Self-tests: nothing a test process starts outlives it, zombies included.

Each test runs a test of ``fixtures/lingering.py`` in a subprocess whose environment carries
a fresh marker, watches ``/proc`` for every process that carries it (the test process, the
fork server, multiprocessing's resource tracker, the ranks and what they start), and checks
that 1 s after the test process ended none of them is left, not even as a zombie. Only
``kill -9`` of the test process leaves orphans (the server and the resource tracker, which
exit at once); for that test this process makes itself a child subreaper, as init would be,
and reaps them. In every other test nothing may become an orphan at all: init on this machine
is slow to reap, so an orphan's zombie would be seen.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid

from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.process_tree.linux_prctl import become_subreaper
from torch_testing_ext.process_tree.proc_table import environment_value, process_table

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "lingering.py")
MARKER_ENV = "TTE_SELFTEST_MARKER"
EXIT_BOUND = 1.0  # seconds after the test process's exit by which nothing may be left


class MarkedRun:
    """The fixture run as a subprocess, and every process seen carrying its marker."""

    def __init__(self, test_id, **env):
        self.marker = uuid.uuid4().hex
        self.tmp = tempfile.TemporaryDirectory(prefix="tte-selftest-")
        self.inductor_cache = tempfile.TemporaryDirectory(prefix="tte-selftest-inductor-")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TESTING_EXT_")}
        # Inductor keeps its cache in TMPDIR; it is torch's, not ours, so keep it elsewhere.
        self.env.update({MARKER_ENV: self.marker, "TMPDIR": self.tmp.name,
                         "TORCHINDUCTOR_CACHE_DIR": self.inductor_cache.name, **env})
        self.process = subprocess.Popen([sys.executable, FIXTURE, test_id], env=self.env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.seen = {self.process.pid}

    def scan(self):
        for pid, info in process_table().items():
            if pid not in self.seen and not info.gone and environment_value(pid, MARKER_ENV) == self.marker:
                self.seen.add(pid)

    def watch_until(self, predicate, timeout=120):
        """Scan until ``predicate()`` holds (or the test process exits)."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and not predicate() and time.monotonic() < deadline:
            self.scan()
            time.sleep(0.02)

    def finish(self, timeout=120):
        """Watch until the test process exits; return its status and output."""
        self.watch_until(lambda: False, timeout)
        output = self.process.communicate(timeout=10)[0].decode(errors="replace")
        self.exited_at = time.monotonic()
        return self.process.returncode, output

    def left(self):
        """Processes of the run still in the process table, zombies included (after reaping
        our own zombie children, as init would)."""
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        table = process_table()
        marked = {pid for pid, info in table.items()
                  if not info.gone and environment_value(pid, MARKER_ENV) == self.marker}
        return sorted((self.seen & set(table)) | marked)

    def left_after_bound(self):
        """What is still there ``EXIT_BOUND`` s after the exit (polling until then)."""
        while self.left() and time.monotonic() < self.exited_at + EXIT_BOUND:
            time.sleep(0.02)
        return [(pid, process_table().get(pid)) for pid in self.left()]

    def close(self):
        self.tmp.cleanup()
        self.inductor_cache.cleanup()


class TestNothingOutlivesTheTestProcess(TestCase):
    def run_marked(self, test_id, **env):
        run = MarkedRun(test_id, **env)
        self.addCleanup(run.close)
        return run

    def assertNothingLeft(self, run):
        self.assertEqual(run.left_after_bound(), [])
        self.assertEqual(os.listdir(run.tmp.name), [], "the run left temporary files")

    def test_pass_leaves_no_server_tracker_or_zombie_rank(self):
        run = self.run_marked("Lingering.test_pass")
        code, output = run.finish()
        self.assertEqual(code, 0, output)
        self.assertGreaterEqual(len(run.seen), 5, "test process, server, tracker and 2 ranks")
        self.assertNothingLeft(run)

    def test_failure_leaves_nothing(self):
        run = self.run_marked("Lingering.test_fail")
        code, output = run.finish()
        self.assertEqual(code, 1, output)
        self.assertNothingLeft(run)

    def test_escaped_helpers_are_named_killed_and_warned_about(self):
        run = self.run_marked("Lingering.test_escape")
        code, output = run.finish()
        self.assertEqual(code, 0, output)
        self.assertIn("LeftoverProcessWarning", output)
        self.assertIn("the test's ranks left 3 processes running; killed:", output)
        self.assertEqual(output.count("(started by rank 1): "), 2, output)
        self.assertEqual(output.count("(started by rank 0): "), 1, output)
        self.assertIn("time.sleep(600)", output)
        self.assertNothingLeft(run)

    def test_escaped_helpers_fail_the_test_when_asked(self):
        run = self.run_marked("Lingering.test_escape", TORCH_TESTING_EXT_LEFTOVER_PROCESSES="fail")
        code, output = run.finish()
        self.assertEqual(code, 1, output)
        self.assertIn("RankError: the test's ranks left 3 processes running; killed:", output)
        self.assertNothingLeft(run)

    def _stop_mid_test(self, stop):
        run = self.run_marked("Lingering.test_hang")
        # Stop it once both ranks run (test process, server, tracker and two ranks seen).
        run.watch_until(lambda: len(run.seen) >= 5)
        time.sleep(0.5)
        stop(run.process)
        return run, run.finish()

    def test_ctrl_c_leaves_nothing(self):
        run, (code, output) = self._stop_mid_test(lambda p: p.send_signal(signal.SIGINT))
        self.assertEqual(code, 130, output)
        self.assertNothingLeft(run)

    def test_sigterm_leaves_nothing(self):
        run, (code, output) = self._stop_mid_test(lambda p: p.send_signal(signal.SIGTERM))
        self.assertEqual(code, 143, output)
        self.assertNothingLeft(run)

    def test_kill_9_of_the_test_process_leaves_nothing(self):
        if not become_subreaper():
            self.skipTest("needs Linux prctl(PR_SET_CHILD_SUBREAPER) to reap orphans like init")
        self.addCleanup(become_subreaper, False)
        run, (code, output) = self._stop_mid_test(lambda p: p.send_signal(signal.SIGKILL))
        self.assertEqual(code, -signal.SIGKILL)
        self.assertEqual(run.left_after_bound(), [])


if __name__ == "__main__":
    run_tests()
