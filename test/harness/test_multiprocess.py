"""Self-tests of MultiProcessTestCase: every rank's outcome is reported, nothing is left behind.

Each test runs one test of ``fixtures/rank_faults.py`` in a subprocess (with its own empty
TMPDIR) and checks the exit status, the report, that no rank process survives and that the
temporary directory is empty afterwards.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures.procfs import alive

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "rank_faults.py")


def _wait_until(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


class FixtureRun:
    """One subprocess run of the fixture, with its own TMPDIR and pid directory."""

    def __init__(self, test_id, **env):
        self.tmp = tempfile.mkdtemp(prefix="tte-selftest-")
        self.run_tmp = os.path.join(self.tmp, "tmp")
        self.pid_dir = os.path.join(self.tmp, "pids")
        os.makedirs(self.run_tmp)
        os.makedirs(self.pid_dir)
        self.env = {k: v for k, v in os.environ.items() if k != "TORCH_TESTING_EXT_TIMEOUT"}
        # Inductor keeps its cache in TMPDIR; it is torch's, not ours, so keep it elsewhere.
        self.env.update(TMPDIR=self.run_tmp, FIXTURE_PID_DIR=self.pid_dir,
                        TORCHINDUCTOR_CACHE_DIR=os.path.join(self.tmp, "inductor-cache"),
                        **{k: str(v) for k, v in env.items()})
        self.command = [sys.executable, FIXTURE, test_id]

    def start(self):
        self.process = subprocess.Popen(self.command, env=self.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, start_new_session=True)
        return self.process

    def run(self, timeout=120):
        self.start()
        self.output, _ = self.process.communicate(timeout=timeout)
        return self.process.returncode, self.output

    def rank_pids(self):
        pids = []
        for name in os.listdir(self.pid_dir):
            with open(os.path.join(self.pid_dir, name)) as f:
                text = f.read().strip()
            if text:
                pids.append(int(text))
        return pids

    def leftovers(self):
        return os.listdir(self.run_tmp)

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


class TestRankOutcomes(TestCase):
    def run_fixture(self, test_id, **env):
        run = self.last_run = FixtureRun(test_id, **env)
        self.addCleanup(run.cleanup)
        run.command.append("-v")
        code, output = run.run()
        self.assertTrue(_wait_until(lambda: not any(map(alive, run.rank_pids())), 10),
                        f"rank processes outlived the run:\n{output}")
        self.assertTrue(_wait_until(lambda: not run.leftovers(), 10),
                        f"temporary files left behind: {run.leftovers()}")
        return code, output

    def test_pass(self):
        code, output = self.run_fixture("Faults.test_pass")
        self.assertEqual(code, 0, output)
        self.assertIn("test_pass (__main__.Faults.test_pass) ... ok", output)

    def test_dynamo_per_rank_init(self):
        code, output = self.run_fixture("Faults.test_dynamo_per_rank_init")
        self.assertEqual(code, 0, output)

    def test_assertion_on_one_rank(self):
        code, output = self.run_fixture("Faults.test_assert_rank1")
        self.assertEqual(code, 1, output)
        self.assertIn("FAIL: test_assert_rank1", output)
        self.assertIn("rank 1 failed", output)
        self.assertIn("[rank 1] AssertionError", output)
        self.assertIn("only rank 0 may pass", output)
        self.assertNotIn("rank 0 failed", output)

    def test_exception_on_one_rank(self):
        code, output = self.run_fixture("Faults.test_raise_rank1")
        self.assertEqual(code, 1, output)
        self.assertIn("ERROR: test_raise_rank1", output)
        self.assertIn("[rank 1] ValueError: rank one raised on purpose", output)

    def test_exit_code_on_one_rank(self):
        code, output = self.run_fixture("Faults.test_exit3_rank1")
        self.assertEqual(code, 1, output)
        self.assertIn("rank 1 exited with code 3 without reporting an outcome", output)

    def test_segfault_on_one_rank(self):
        code, output = self.run_fixture("Faults.test_segv_rank1")
        self.assertEqual(code, 1, output)
        self.assertIn("rank 1 died from signal SIGSEGV", output)
        # faulthandler's report is in the rank's output tail.
        self.assertIn("[rank 1] Fatal Python error: Segmentation fault", output)

    def test_hanging_rank_times_out_with_its_stack(self):
        started = time.monotonic()
        code, output = self.run_fixture("Faults.test_hang_rank1", FIXTURE_TIMEOUT=3)
        self.assertEqual(code, 1, output)
        self.assertIn("ranks still running: 1\n[rank 1] Stack of the test (most recent call last):", output)
        self.assertNotIn("rank 0 timed out", output)
        self.assertRegex(output, r'\[rank 1\]   File ".*rank_faults.py", line \d+, in test_hang_rank1\n'
                                 r'\[rank 1\]     hang_forever\(\)\n'
                                 r'\[rank 1\]   File ".*rank_faults.py", line \d+, in hang_forever\n')
        self.assertLess(time.monotonic() - started, 60, "the timeout did not stop the hanging rank")

    def test_timeout_from_environment(self):
        code, output = self.run_fixture("Faults.test_hang_rank1", TORCH_TESTING_EXT_TIMEOUT=2)
        self.assertEqual(code, 1, output)
        self.assertIn("timed out after 2 s", output)

    def test_fail_fast_stops_the_waiting_rank(self):
        started = time.monotonic()
        code, output = self.run_fixture("Faults.test_fail_fast")
        elapsed = time.monotonic() - started
        self.assertEqual(code, 1, output)
        self.assertIn("[rank 0] RuntimeError: rank zero failed before the collective", output)
        self.assertIn("rank 1 stopped early because another rank had failed", output)
        # Rank 1 would wait in the rendezvous for 30 minutes; it must be stopped in seconds.
        self.assertLess(elapsed, 60, output)

    def test_skip_in_all_ranks(self):
        code, output = self.run_fixture("Faults.test_skip_all")
        self.assertEqual(code, 0, output)
        self.assertIn("skipped 'skipped inside every rank'", output)

    def test_parent_side_skip_starts_no_process(self):
        code, output = self.run_fixture("Faults.test_parent_skip")
        self.assertEqual(code, 0, output)
        self.assertIn("skipped 'Need at least 64", output)
        self.assertEqual(self.last_run.rank_pids(), [], "a rank started for a parent-side skip")
        self.assertEqual(self.last_run.leftovers(), [])

    def test_rank_output_tail_is_prefixed(self):
        code, output = self.run_fixture("Faults.test_print_then_fail")
        self.assertEqual(code, 1, output)
        self.assertIn("[rank 1] rank 1 says hello", output)

    def test_upstream_style_subclass(self):
        code, output = self.run_fixture("UpstreamStyle")
        self.assertEqual(code, 0, output)
        self.assertIn("test_ranks (__main__.UpstreamStyle.test_ranks) ... ok", output)
        self.assertIn("skipped 'Test requires world size of 4'", output)

    def test_two_runs_at_once_do_not_collide(self):
        runs = [FixtureRun(test_id) for test_id in
                ("Faults.test_pass", "Faults.test_pass", "Faults.test_dynamo_per_rank_init")]
        for run in runs:
            self.addCleanup(run.cleanup)
            run.start()
        for run in runs:
            output, _ = run.process.communicate(timeout=120)
            self.assertEqual(run.process.returncode, 0, output)


class TestParentInterrupted(TestCase):
    """Ctrl-C, SIGTERM or SIGKILL on the test process leaves no rank and no file behind."""

    def _interrupt(self, sig, expected_code):
        run = FixtureRun("Faults.test_sleep")
        self.addCleanup(run.cleanup)
        process = run.start()
        self.addCleanup(lambda: process.poll() is None and process.kill())
        self.assertTrue(_wait_until(lambda: len(run.rank_pids()) == 2, 60), "ranks did not start")
        pids = run.rank_pids()
        self.assertTrue(all(map(alive, pids)))
        os.kill(process.pid, sig)
        output, _ = process.communicate(timeout=60)
        if expected_code is not None:
            self.assertEqual(process.returncode, expected_code, output)
        self.assertTrue(_wait_until(lambda: not any(map(alive, pids)), 15),
                        f"ranks {pids} survived {signal.Signals(sig).name}")
        self.assertTrue(_wait_until(lambda: not run.leftovers(), 15),
                        f"left behind after {signal.Signals(sig).name}: {run.leftovers()}")

    def test_ctrl_c(self):
        self._interrupt(signal.SIGINT, 130)

    def test_sigterm(self):
        self._interrupt(signal.SIGTERM, 143)

    def test_sigkill(self):
        self._interrupt(signal.SIGKILL, -signal.SIGKILL)


if __name__ == "__main__":
    run_tests()
