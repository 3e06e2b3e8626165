"""Self-tests of MultiProcessTestCase: every rank's outcome is reported, nothing is left behind.

``TestRankOutcomes`` runs each test of ``fixtures/rank_faults.py`` in this process (its ranks
are forked from this process's fork server, as in any test file) and checks the verdict, the
report, that no rank process survives and that the test's directory is gone afterwards.
What only a whole test process shows is tested where it belongs: runs at once never collide
(fresh/test_concurrent_runs.py), and Ctrl-C, SIGTERM or SIGKILL of the test process leave no rank
and no file behind (process_tree/test_nothing_outlives.py).
"""

import os
import shutil
import tempfile
from unittest import mock

from torch_testing_ext._engine.fresh import fork_server, supervisor
from torch_testing_ext.common_utils import TestCase

from fixtures import rank_faults
from fixtures.process_checks import wait_until
from fixtures.procfs import alive
from fixtures.runs import assert_outcomes, run_case


def _pids_in(directory):
    pids = []
    for name in os.listdir(directory):
        with open(os.path.join(directory, name)) as f:
            text = f.read().strip()
        if text:
            pids.append(int(text))
    return pids


class TestRankOutcomes(TestCase):
    def run_fixture(self, name, timeout=None, **env):
        """Run ``Faults.<name>`` here; its result and report (failure or error text)."""
        pid_dir = tempfile.mkdtemp(prefix="tte-selftest-pids-")
        self.addCleanup(shutil.rmtree, pid_dir, ignore_errors=True)
        before = set(os.listdir(fork_server.run_directory()))
        environ = {k: v for k, v in os.environ.items() if k != "TORCH_TESTING_EXT_TIMEOUT"}
        environ.update(FIXTURE_PID_DIR=pid_dir, **env)
        with mock.patch.dict(os.environ, environ, clear=True), \
                mock.patch.object(rank_faults.Faults, "timeout", timeout or rank_faults.Faults.timeout):
            result = run_case(rank_faults.Faults, name)
        self.rank_pids = _pids_in(pid_dir)
        self.assertTrue(wait_until(lambda: not any(map(alive, self.rank_pids)), 10),
                        "rank processes outlived the test")
        # (The server's own socket directory, "mp-...", lives as long as the server.)
        left = {n for n in set(os.listdir(fork_server.run_directory())) - before if n.startswith("Faults-")}
        self.assertEqual(left, set(), "the test's directory was left behind")
        report = "\n".join(text for _, text in result.failures + result.errors)
        return result, report

    def test_pass(self):
        result, report = self.run_fixture("test_pass")
        assert_outcomes(self, result, passed=1)
        self.assertEqual(len(self.rank_pids), 2)

    def test_dynamo_per_rank_init(self):
        assert_outcomes(self, self.run_fixture("test_dynamo_per_rank_init")[0], passed=1)

    def test_assertion_on_one_rank(self):
        result, report = self.run_fixture("test_assert_rank1")
        assert_outcomes(self, result, failed=1)
        self.assertIn("RankFailure: 1 of 2 ranks did not pass (rank 1)", report)
        self.assertIn("[rank 1] AssertionError", report)
        self.assertIn("only rank 0 may pass", report)
        self.assertNotIn("rank 0 failed", report)

    def test_exception_on_one_rank(self):
        result, report = self.run_fixture("test_raise_rank1")
        assert_outcomes(self, result, errors=1)
        self.assertIn("[rank 1] ValueError: rank one raised on purpose", report)

    def test_exit_code_on_one_rank(self):
        result, report = self.run_fixture("test_exit3_rank1")
        assert_outcomes(self, result, errors=1)
        self.assertIn("rank 1 exited with code 3 without reporting an outcome", report)

    def test_segfault_on_one_rank(self):
        result, report = self.run_fixture("test_segv_rank1")
        assert_outcomes(self, result, errors=1)
        self.assertIn("rank 1 died from signal SIGSEGV", report)
        # faulthandler's report is in the rank's output tail.
        self.assertIn("[rank 1] Fatal Python error: Segmentation fault", report)

    def test_hanging_rank_times_out_with_its_stack(self):
        result, report = self.run_fixture("test_hang_rank1", timeout=2)
        assert_outcomes(self, result, errors=1)
        self.assertIn("timed out after 2 s", report)
        self.assertIn("ranks still running: 1\n[rank 1] Stack of the test (most recent call last):", report)
        self.assertNotIn("rank 0 timed out", report)
        self.assertRegex(report, r'\[rank 1\]   File ".*rank_faults.py", line \d+, in test_hang_rank1\n'
                                 r'\[rank 1\]     hang_forever\(\)\n'
                                 r'\[rank 1\]   File ".*rank_faults.py", line \d+, in hang_forever\n')

    def test_timeout_from_environment(self):
        result, report = self.run_fixture("test_hang_rank1", TORCH_TESTING_EXT_TIMEOUT="2")
        assert_outcomes(self, result, errors=1)
        self.assertIn("timed out after 2 s", report)

    def test_fail_fast_stops_the_waiting_rank(self):
        # How long the grace lasts is test_supervisor's (on a fake clock); here a shorter one
        # only spares the wait.
        with mock.patch.object(supervisor, "FAIL_FAST_GRACE", 1.0):
            result, report = self.run_fixture("test_fail_fast")
        assert_outcomes(self, result, errors=1)
        self.assertIn("[rank 0] RuntimeError: rank zero failed before the collective", report)
        self.assertIn("rank 1 stopped early because another rank had failed", report)
        # Rank 1 would wait in the rendezvous for 30 minutes: the supervisor stopped it.

    def test_skip_in_all_ranks(self):
        result, _ = self.run_fixture("test_skip_all")
        assert_outcomes(self, result, skipped=1)
        self.assertEqual(result.skipped[0][1], "skipped inside every rank")

    def test_parent_side_skip_starts_no_process(self):
        result, _ = self.run_fixture("test_parent_skip")
        assert_outcomes(self, result, skipped=1)
        self.assertIn("Need at least 64", result.skipped[0][1])
        self.assertEqual(self.rank_pids, [], "a rank started for a parent-side skip")

    def test_rank_output_tail_is_prefixed(self):
        result, report = self.run_fixture("test_print_then_fail")
        assert_outcomes(self, result, failed=1)
        self.assertIn("[rank 1] rank 1 says hello", report)

    def test_a_rank_that_closed_its_output_still_reports(self):
        result, report = self.run_fixture("test_close_output_then_fail")
        assert_outcomes(self, result, failed=1)
        self.assertIn("RankFailure: 1 of 2 ranks did not pass (rank 1)", report)
        self.assertIn("rank 1's own message", report)

    def test_upstream_style_subclass(self):
        passed, skipped = run_case(rank_faults.UpstreamStyle, "test_ranks"), \
            run_case(rank_faults.UpstreamStyle, "test_needs_four")
        assert_outcomes(self, passed, passed=1)
        assert_outcomes(self, skipped, skipped=1)
        self.assertEqual(skipped.skipped[0][1], "Test requires world size of 4")

    def test_file_name_names_a_path_from_setup_through_teardown(self):
        # Upstream makes file_name in setUp and its tearDowns remove it: the test's directory
        # (the fresh world's) is there until the test's cleanups, then gone.
        before = set(os.listdir(fork_server.run_directory()))
        with mock.patch.object(rank_faults.UpstreamStyle, "store_dir_in_tear_down", []) as seen:
            assert_outcomes(self, run_case(rank_faults.UpstreamStyle, "test_ranks"), passed=1)
        self.assertEqual(seen, [True])
        left = {n for n in set(os.listdir(fork_server.run_directory())) - before if n.startswith("UpstreamStyle-")}
        self.assertEqual(left, set(), "the test's directory was left behind")
