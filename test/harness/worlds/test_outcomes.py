"""How the ranks' outcomes combine into one verdict, and the one-line headline that names the
ranks (what pytest's short summary shows). Pure: no rank starts."""

import re
import unittest

import pytest

from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext._engine.skips.skip_codes import TEST_SKIPS
from torch_testing_ext._engine.worlds.outcomes import (
    RankError,
    RankFailure,
    RankOutcome,
    RanksDidNotPass,
    combine,
    outcome_of,
    raise_verdict,
)


def failed_with(rank, error):
    try:
        raise error
    except BaseException as raised:  # noqa: B902 - any ending is an outcome
        return outcome_of(rank, raised)


class TestHeadline(unittest.TestCase):
    def test_a_multi_line_assertion_is_named_by_its_first_line(self):
        error = AssertionError("Tensor-likes are not close!\n\nMismatched elements: 1 / 2\nGreatest ...")
        verdict = combine([RankOutcome(0, Status.PASSED), failed_with(1, error)])
        self.assertEqual(verdict.status, Status.FAILED)
        self.assertEqual(verdict.headline, "rank 1 failed: AssertionError: Tensor-likes are not close!")
        self.assertEqual(verdict.message.splitlines()[0], "1 of 2 ranks did not pass (rank 1)")

    def test_ranks_with_the_same_problem_share_a_phrase(self):
        outcomes = [failed_with(rank, KeyError("x")) for rank in range(3)]
        self.assertEqual(combine(outcomes).headline, "rank 0, 1, 2 raised KeyError: 'x'")

    def test_deaths_timeouts_and_mixed_problems(self):
        outcomes = [RankOutcome(0, Status.TIMED_OUT, "timed out after 3 s; ranks still running: 0"),
                    RankOutcome(1, Status.DIED, "rank 1 died from signal SIGSEGV"),
                    RankOutcome(2, Status.STOPPED, "stopped after rank 1 failed"),
                    failed_with(3, ValueError("bad"))]
        verdict = combine(outcomes)
        self.assertEqual(verdict.status, Status.ERROR)
        self.assertEqual(verdict.headline, "rank 1 died from signal SIGSEGV; rank 0 timed out after 3 s; "
                                           "rank 3 raised ValueError: bad")  # likely causes first

    def test_a_chained_exception_is_named_by_the_last_one_raised(self):
        try:
            try:
                raise KeyError("inner")
            except KeyError:
                raise RuntimeError("outer") from None
        except RuntimeError as error:
            outcome = outcome_of(0, error)
        self.assertEqual(combine([outcome]).headline, "rank 0 raised RuntimeError: outer")

    def test_passes_and_skips_have_no_headline(self):
        self.assertEqual(combine([RankOutcome(0, Status.PASSED)]).headline, "")
        self.assertEqual(combine([RankOutcome(0, Status.SKIPPED, "no GPU")]).headline, "")


class TestLeavingTheBody(unittest.TestCase):
    """A rank passes only when its test body returned: every other way out is named."""

    def test_sys_exit_with_any_code_but_a_skip_code_is_an_error_that_says_where(self):
        for code, shown in [(0, "sys.exit(0)"), (None, "sys.exit()"), ("bye", "sys.exit('bye')")]:
            with self.subTest(code=code):
                outcome = failed_with(1, SystemExit(code))
                self.assertEqual(outcome.status, Status.ERROR)
                first = outcome.detail.splitlines()[0]
                self.assertRegex(first, rf"^rank 1 left the test with {re.escape(shown)} at test_outcomes.py:\d+$")
                self.assertEqual(combine([RankOutcome(0, Status.PASSED), outcome]).headline, first)

    def test_upstream_skip_codes_stay_skips(self):
        outcome = failed_with(0, SystemExit(TEST_SKIPS["small_worldsize"].exit_code))
        self.assertEqual((outcome.status, outcome.detail), (Status.SKIPPED, TEST_SKIPS["small_worldsize"].message))

    def test_keyboard_interrupt_and_other_base_exceptions(self):
        class Escape(BaseException):
            pass

        for error, shown in [(KeyboardInterrupt(), "KeyboardInterrupt"), (Escape(), "Escape"),
                             (GeneratorExit(), "GeneratorExit")]:
            with self.subTest(error=shown):
                outcome = failed_with(2, error)
                self.assertEqual(outcome.status, Status.ERROR)
                self.assertTrue(outcome.detail.startswith(f"rank 2 left the test with {shown} at "), outcome.detail)

    def test_pytest_outcomes_keep_their_meaning_and_exit_is_named(self):
        outcome = failed_with(0, pytest.skip.Exception("no GPU here"))
        self.assertEqual((outcome.status, outcome.detail), (Status.SKIPPED, "no GPU here"))
        outcome = failed_with(0, pytest.fail.Exception("wrong sum"))
        self.assertEqual(outcome.status, Status.FAILED)
        self.assertIn("wrong sum", outcome.detail)
        outcome = failed_with(1, pytest.exit.Exception("stop everything"))
        self.assertEqual(outcome.status, Status.ERROR)
        self.assertTrue(outcome.detail.startswith("rank 1 left the test with pytest.exit('stop everything') at "
                                                  "test_outcomes.py:"), outcome.detail)

    def test_ordinary_exceptions_are_not_said_to_leave(self):
        self.assertEqual(failed_with(0, ValueError("x")).detail.splitlines()[0], "Traceback (most recent call last):")


class TestRaiseVerdict(unittest.TestCase):
    def test_the_exception_carries_the_headline(self):
        verdict = combine([RankOutcome(0, Status.PASSED), failed_with(1, AssertionError("2 != 3"))])
        with self.assertRaises(RankFailure) as caught:
            raise_verdict(verdict)
        self.assertEqual(caught.exception.headline, "rank 1 failed: AssertionError: 2 != 3")
        self.assertIsInstance(caught.exception, AssertionError)
        self.assertIsInstance(caught.exception, RanksDidNotPass)

    def test_errors_and_skips(self):
        verdict = combine([RankOutcome(0, Status.DIED, "rank 0 exited with code 7 without reporting")])
        with self.assertRaises(RankError) as caught:
            raise_verdict(verdict)
        self.assertIsInstance(caught.exception, RanksDidNotPass)
        self.assertEqual(caught.exception.headline, "rank 0 exited with code 7 without reporting")
        with self.assertRaises(unittest.SkipTest):
            raise_verdict(combine([RankOutcome(0, Status.SKIPPED, "no GPU")]))

    def test_without_a_headline_the_first_line_stands_in(self):
        self.assertEqual(RankError("first line\nsecond").headline, "first line")
