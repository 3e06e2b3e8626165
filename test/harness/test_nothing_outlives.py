"""Self-tests: nothing a test process starts outlives it, zombies included.

Each test runs a test of ``fixtures/lingering.py`` in a subprocess whose environment carries
a fresh marker (``process_tree.marked_run``), watches ``/proc`` for every process that carries
it (the test process, the fork server, multiprocessing's resource tracker, the ranks and what
they start), and checks that 1 s after the test process ended none of them is left, not even
as a zombie. Only ``kill -9`` of the test process leaves orphans (the server and the resource
tracker, which exit at once); for that test this process makes itself a child subreaper, as
init would be, and reaps them. In every other test nothing may become an orphan at all: init
on this machine is slow to reap, so an orphan's zombie would be seen.
"""

import glob
import os
import signal
import time

from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.process_tree.linux_prctl import become_subreaper
from torch_testing_ext.process_tree.marked_run import MarkedRun

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "lingering.py")


class TestNothingOutlivesTheTestProcess(TestCase):
    def run_marked(self, test_id, tmpdir_length=None, **env):
        run = MarkedRun(FIXTURE, test_id, tmpdir_length=tmpdir_length, **env)
        self.addCleanup(run.close)
        return run

    def assertNothingLeft(self, run):
        self.assertEqual(run.left_after_bound(), [])
        self.assertEqual(os.listdir(run.tmpdir), [], "the run left temporary files")

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

    def _stop_mid_test(self, stop, tmpdir_length=None):
        run = self.run_marked("Lingering.test_hang", tmpdir_length)
        # Stop it once both ranks run (test process, server, tracker and two ranks seen).
        run.watch_until(lambda: len(run.seen) >= 5)
        time.sleep(0.5)
        stop(run.process)
        return run, run.finish()

    def test_ctrl_c_leaves_nothing(self):
        run, (code, output) = self._stop_mid_test(lambda p: p.send_signal(signal.SIGINT))
        self.assertEqual(code, 130, output)
        self.assertIn(": interrupted (Ctrl-C)\n", output)
        self.assertNothingLeft(run)

    def test_sigterm_leaves_nothing(self):
        run, (code, output) = self._stop_mid_test(lambda p: p.send_signal(signal.SIGTERM))
        self.assertEqual(code, 143, output)
        self.assertIn(": interrupted (received signal SIGTERM)\n", output)
        self.assertNothingLeft(run)

    def test_kill_9_of_the_test_process_leaves_nothing(self):
        if not become_subreaper():
            self.skipTest("needs Linux prctl(PR_SET_CHILD_SUBREAPER) to reap orphans like init")
        self.addCleanup(become_subreaper, False)
        run, (code, output) = self._stop_mid_test(lambda p: p.send_signal(signal.SIGKILL))
        self.assertEqual(code, -signal.SIGKILL)
        self.assertEqual(run.left_after_bound(), [])

    def test_kill_9_with_a_long_tmpdir_leaves_no_socket_directory(self):
        # A TMPDIR too long for a socket path in it: the server's socket directory is in /tmp,
        # named after the test process; the server removes it once the test process died.
        if not become_subreaper():
            self.skipTest("needs Linux prctl(PR_SET_CHILD_SUBREAPER) to reap orphans like init")
        self.addCleanup(become_subreaper, False)
        run, (code, output) = self._stop_mid_test(lambda p: p.send_signal(signal.SIGKILL), tmpdir_length=100)
        self.assertEqual(code, -signal.SIGKILL)
        self.assertEqual(run.left_after_bound(), [])
        self.assertEqual(os.listdir(run.tmpdir), [], "the run left temporary files")
        self.assertEqual(glob.glob(f"/tmp/torch_testing_ext-{run.process.pid}-*"), [])


if __name__ == "__main__":
    run_tests()
