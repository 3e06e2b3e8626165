"""Self-tests of MultiProcContinuousTest: kept ranks report like fresh ones, a failure, crash,
hang or leak fails only its own test, and nothing is left behind.

``fixtures/continuous_cases.py`` runs once in a subprocess (its own TMPDIR, a marker every
process it starts inherits); each test here reads one part of that run's report.
"""

import os
import re
import signal
import tempfile

from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.process_tree.linux_prctl import become_subreaper
from torch_testing_ext.process_tree.marked_run import MarkedRun

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "continuous_cases.py")
VERDICT = re.compile(r"^(test\w*) \(__main__\.(\w+)\.\w+\) \.\.\. (ok|FAIL|ERROR|skipped .*)$", re.M)


def _section(output, test):
    """The part of unittest's report about ``test`` ("Class.test_name")."""
    name, cls = test.split(".")[1], test.split(".")[0]
    start = output.index(f": {name} (__main__.{cls}.{name})")
    end = output.find("\n======", start)
    return output[start:end if end != -1 else len(output)]


class TestContinuousFixtureRun(TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.notes = tempfile.TemporaryDirectory(prefix="tte-continuous-notes-")
        cls.fixture_run = MarkedRun(FIXTURE, "-v", CONTINUOUS_NOTES=cls.notes.name)
        cls.status, cls.output = cls.fixture_run.finish(timeout=240)
        cls.left = cls.fixture_run.left_after_bound()
        cls.tmp_left = os.listdir(cls.fixture_run.tmpdir)
        cls.verdicts = {f"{c}.{t}": v for t, c, v in VERDICT.findall(cls.output)}

    @classmethod
    def tearDownClass(cls):
        cls.fixture_run.close()
        cls.notes.cleanup()
        super().tearDownClass()

    def assertVerdict(self, test, verdict):
        self.assertEqual(self.verdicts.get(test), verdict, self.output)

    def test_passing_tests_share_one_world(self):
        self.assertVerdict("Continuous.test_01_all_reduce", "ok")  # setUpClass's env seen too
        self.assertVerdict("Continuous.test_02_runs_on_the_same_ranks", "ok")

    def test_a_failure_names_its_rank_and_the_next_test_gets_a_fresh_world(self):
        self.assertVerdict("Continuous.test_03_fails_on_rank_1", "FAIL")
        report = _section(self.output, "Continuous.test_03_fails_on_rank_1")
        self.assertIn("1 of 2 ranks did not pass (rank 1)", report)
        self.assertIn("[rank 1] AssertionError: rank 1 disagrees", report)
        self.assertVerdict("Continuous.test_04_runs_on_a_fresh_world", "ok")

    def test_a_crash_names_the_rank_and_its_exit_code(self):
        self.assertVerdict("Continuous.test_05_crashes_on_rank_1", "ERROR")
        report = _section(self.output, "Continuous.test_05_crashes_on_rank_1")
        self.assertIn("rank 1 exited with code 7 without reporting an outcome", report)

    def test_a_hang_ends_at_the_class_timeout_with_the_stack(self):
        self.assertVerdict("Continuous.test_06_hangs_on_rank_0", "ERROR")
        report = _section(self.output, "Continuous.test_06_hangs_on_rank_0")
        self.assertIn("timed out after 4 s", report)
        self.assertRegex(report, r"\[rank 0\] Stack of the test \(most recent call last\):\n"
                                 r"\[rank 0\]   File .*, line \d+, in test_06_hangs_on_rank_0\n"
                                 r"\[rank 0\]     stuck_here\(\)\n"
                                 r"\[rank 0\]   File .*, line \d+, in stuck_here\n")
        # Rank 1 waits in a gloo collective: its stack goes into torch, from the test's frame.
        self.assertRegex(report, r"\[rank 1\] Stack of the test \(most recent call last\):\n"
                                 r"\[rank 1\]   File .*, line \d+, in test_06_hangs_on_rank_0\n"
                                 r"\[rank 1\]     dist\.barrier\(\)\n"
                                 r"(.*\n)*\[rank 1\]   File .*distributed_c10d\.py\", line \d+, in barrier\n")
        # The kept rank's loop, the lifeline thread and faulthandler's raw dump are not shown.
        for noise in ("persistent_rank.py", "rank_process.py", "multiprocessing", "Thread 0x",
                      "most recent call first"):
            self.assertNotIn(noise, report)

    def test_leaks_fail_the_test_that_leaked_naming_what(self):
        expected = {
            "test_07_leaks_an_environment_variable": "changed the environment: CONTINUOUS_LEAKED set",
            "test_08_leaks_a_process_group": "left process group '1' of 2 ranks",
            "test_09_leaks_a_thread": "left threads running: 'left-behind'",
        }
        for name, leak in expected.items():
            with self.subTest(name):
                self.assertVerdict(f"Continuous.{name}", "FAIL")
                report = _section(self.output, f"Continuous.{name}")
                self.assertIn("2 of 2 ranks did not pass", report)
                self.assertIn(leak, report)

    def test_skips_in_the_ranks_and_before_them(self):
        self.assertVerdict("Continuous.test_10_skips_in_the_ranks", "skipped 'skipped by every rank'")
        self.assertVerdict("Continuous.test_11_skips_before_any_rank",
                           "skipped 'Need at least 64 CUDA devices'")

    def test_the_last_test_still_runs_and_passes(self):
        self.assertVerdict("Continuous.test_12_still_runs_last", "ok")

    def test_a_world_is_made_once_and_again_only_after_a_problem(self):
        # The first world, then one after each of tests 03, 05, 06, 07, 08 and 09.
        for rank in (0, 1):
            made = [n for n in os.listdir(self.notes.name) if n.startswith(f"init-rank{rank}-")]
            self.assertEqual(len(made), 7, sorted(os.listdir(self.notes.name)))

    def test_a_world_that_skips_as_it_starts_skips_every_test(self):
        self.assertVerdict("InitSkips.test_one", "skipped 'Need at least 8 CUDA devices'")
        self.assertVerdict("InitSkips.test_two", "skipped 'Need at least 8 CUDA devices'")

    def test_the_first_upstream_spelling_works(self):
        self.assertVerdict("OldSpelling.test_three_ranks", "ok")

    def test_the_run_reports_and_leaves_nothing(self):
        self.assertEqual(self.status, 1, self.output)
        self.assertIn("Ran 17 tests", self.output)
        self.assertEqual(self.left, [])
        self.assertEqual(self.tmp_left, [], "the run left temporary files")


class TestContinuousLeftovers(TestCase):
    def test_a_process_left_running_is_killed_and_named_when_the_world_closes(self):
        run = MarkedRun(FIXTURE, "LeavesAProcess")
        self.addCleanup(run.close)
        status, output = run.finish()
        self.assertEqual(status, 0, output)
        self.assertRegex(output, r"(?s)LeftoverProcessWarning: LeavesAProcess: .*1 process.*rank 1\): sleep 600")
        self.assertEqual(run.left_after_bound(), [])

    def test_under_the_fail_policy_the_test_that_left_it_fails(self):
        run = MarkedRun(FIXTURE, "LeavesAProcess", "-v", TORCH_TESTING_EXT_LEFTOVER_PROCESSES="fail")
        self.addCleanup(run.close)
        status, output = run.finish()
        self.assertEqual(status, 1, output)
        self.assertIn("test_1_starts_a_helper (__main__.LeavesAProcess.test_1_starts_a_helper) ... ERROR", output)
        self.assertIn("test_2_after_it (__main__.LeavesAProcess.test_2_after_it) ... ok", output)
        self.assertRegex(output, r"started by rank 1\): sleep 600")
        self.assertEqual(run.left_after_bound(), [])


class TestContinuousInterrupted(TestCase):
    def test_kill_9_while_a_world_is_kept_leaves_nothing(self):
        if not become_subreaper():  # orphans must be reaped by us, as by init
            self.skipTest("this kernel has no child subreapers")
        self.addCleanup(become_subreaper, False)
        notes = tempfile.TemporaryDirectory(prefix="tte-continuous-notes-")
        self.addCleanup(notes.cleanup)
        run = MarkedRun(FIXTURE, "Continuous.test_06_hangs_on_rank_0", CONTINUOUS_NOTES=notes.name)
        self.addCleanup(run.close)
        run.watch_until(lambda: len([n for n in os.listdir(notes.name) if n.startswith("init-")]) == 2)
        run.process.send_signal(signal.SIGKILL)
        code, _ = run.finish()
        self.assertEqual(code, -signal.SIGKILL)
        self.assertEqual(run.left_after_bound(), [])
        self.assertEqual(os.listdir(run.tmpdir), [], "the run left temporary files")


if __name__ == "__main__":
    run_tests()
