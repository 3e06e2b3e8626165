"""Upstream's rank entry ``_run`` (torch_testing_ext._engine.fresh.upstream_entry).

A class that overrides ``_run`` has each rank run it; ``self.run_test`` runs the method. The
rank's outcome is the test's, unless the entry itself then failed; an entry that never runs
the test does not pass, whether it returns or exits 0, and one that exits with an upstream
skip code is that skip. The tests of ``fixtures/upstream_entry_cases.py`` run in this process.
"""

from torch_testing_ext.common_distributed import TEST_SKIPS
from torch_testing_ext.common_utils import TestCase

from fixtures import upstream_entry_cases
from fixtures.runs import assert_outcomes, run_case


class TestUpstreamEntry(TestCase):
    def run_entry(self, name):
        result = run_case(upstream_entry_cases.UpstreamEntry, name)
        return result, "\n".join(text for _, text in result.failures + result.errors)

    def test_the_body_runs_on_the_group_the_entry_started(self):
        result, _ = self.run_entry("test_all_reduce_on_the_entrys_group")
        assert_outcomes(self, result, passed=1)

    def test_a_failing_rank_fails_the_test_and_is_named(self):
        result, report = self.run_entry("test_fails_on_rank_1")
        assert_outcomes(self, result, failed=1)
        self.assertIn("rank 1 failed", report)
        self.assertIn("only rank 0 passes", report)

    def test_a_skip_in_the_body_is_the_tests_skip(self):
        result, _ = self.run_entry("test_skips_in_the_body")
        assert_outcomes(self, result, skipped=1)
        self.assertEqual(result.skipped[0][1], "skipped by the body")

    def test_an_entry_that_never_runs_the_test_does_not_pass(self):
        for name, how in (("test_entry_exits_0_before_the_test", "exited with sys.exit(0)"),
                          ("test_entry_returns_without_the_test", "returned")):
            with self.subTest(name):
                result, report = self.run_entry(name)
                assert_outcomes(self, result, errors=1)
                self.assertIn(f"_run {how} without running the test", report)

    def test_an_upstream_skip_code_from_the_entry_is_that_skip(self):
        result, _ = self.run_entry("test_entry_exits_with_a_skip_code")
        assert_outcomes(self, result, skipped=1)
        self.assertEqual(result.skipped[0][1], TEST_SKIPS["multi-gpu-2"].message)

    def test_an_entry_that_fails_after_a_passing_test_fails_it(self):
        result, report = self.run_entry("test_entry_fails_after_the_test")
        assert_outcomes(self, result, errors=1)
        self.assertIn("the entry broke after the test", report)
        self.assertIn("rank 1", report)

    def test_the_entry_cannot_set_another_rank(self):
        result, report = self.run_entry("test_entry_sets_a_wrong_rank")
        assert_outcomes(self, result, errors=1)
        self.assertIn("rank is set by the harness: this is rank 0, not 1", report)

    def test_run_test_outside_an_entry_is_a_clear_error(self):
        with self.assertRaisesRegex(TypeError, r"call it from the rank entry _run"):
            upstream_entry_cases.UpstreamEntry("test_fails_on_rank_1").run_test("test_fails_on_rank_1", None)
