"""Self-tests of the one template every way of running ranks shares (``RanksTestCase``) and of
its four worlds: the same test body sees the same rank facts on fresh, kept and thread ranks;
the template decides skips and settings before the world runs, and raises the world's verdict."""

import inspect
import os
import re
import unittest
import warnings
from pathlib import Path

import torch_testing_ext._engine as engine
from torch_testing_ext._engine.fresh import fork_server
from torch_testing_ext._engine.fresh.fresh_world import FreshWorld
from torch_testing_ext._engine.fresh.leftovers import LeftoverProcessWarning
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext._engine.threads.rank_threads import ThreadRankFailure
from torch_testing_ext._engine.worlds.outcomes import RankError, RankFailure, Verdict
from torch_testing_ext._engine.worlds.rank_facts import (
    RankFacts,
    current_rank_facts,
    enter_thread_rank,
    leave_thread_rank,
)
from torch_testing_ext._engine.worlds.world import RunSettings
from torch_testing_ext.common_utils import TestCase

from fixtures import world_cases
from fixtures.runs import assert_outcomes, run_case

WORLDS = {"fresh": world_cases.OnFreshRanks, "kept": world_cases.OnKeptRanks,
          "threads": world_cases.OnThreadRanks}


class TestOneBodyOnEveryWorld(TestCase):
    @classmethod
    def tearDownClass(cls):
        world_cases.OnKeptRanks.tearDownClass()  # close the kept world the tests started
        super().tearDownClass()

    def test_every_world_gives_a_rank_the_same_facts(self):
        for name, cls in WORLDS.items():
            with self.subTest(world=name):
                result = run_case(cls, "test_facts")
                assert_outcomes(self, result, passed=1)
        self.assertIsNone(current_rank_facts())  # the thread ranks' facts stayed in their threads

    def test_every_world_names_the_failing_rank_the_same_way(self):
        failures = {"fresh": RankFailure, "kept": RankFailure, "threads": ThreadRankFailure}
        for name, cls in WORLDS.items():
            with self.subTest(world=name):
                result = run_case(cls, "test_rank_1_fails")
                assert_outcomes(self, result, failed=1)
                message = result.failures[0][1]
                self.assertIn(f"{failures[name].__name__}: 1 of 2 ranks did not pass (rank 1)", message)
                self.assertRegex(message, r"\[rank 1\] AssertionError: .*rank 1 disagrees")

    def test_on_every_world_a_rank_that_leaves_the_body_early_fails(self):
        # Upstream counts a rank's sys.exit(0) as a pass; a rank passes here only when its test
        # body returned.
        errors = {"fresh": RankError, "kept": RankError, "threads": RankError}
        line = {name: _line_of(world_cases.SameFactsEverywhere, name, text)
                for name, text in [("test_rank_1_exits_0", "sys.exit(0)"), ("test_rank_1_interrupts", "raise")]}
        for name, cls in WORLDS.items():
            for test, how in [("test_rank_1_exits_0", "sys.exit(0)"), ("test_rank_1_interrupts", "KeyboardInterrupt")]:
                with self.subTest(world=name, test=test):
                    result = run_case(cls, test)
                    assert_outcomes(self, result, errors=1)
                    message = result.errors[0][1]
                    self.assertIn(f"{errors[name].__name__}: 1 of 2 ranks did not pass (rank 1)", message)
                    self.assertIn(f"rank 1 left the test with {how} at world_cases.py:{line[test]}", message)


    def test_a_fresh_test_leaves_another_classs_kept_ranks_alone(self):
        # Everything below the fork server that is not the test's own rank is a leftover of the
        # test, except the ranks of a world still kept (found when this killed the kept ranks).
        assert_outcomes(self, run_case(world_cases.OnKeptRanks, "test_facts"), passed=1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert_outcomes(self, run_case(world_cases.OnFreshRanks, "test_facts"), passed=1)
        self.assertEqual([str(w.message) for w in caught if issubclass(w.category, LeftoverProcessWarning)], [])
        assert_outcomes(self, run_case(world_cases.OnKeptRanks, "test_facts"), passed=1)


def _line_of(cls, method, text):
    """The line number of the first line of ``cls.method`` that contains ``text``."""
    lines, first = inspect.getsourcelines(getattr(cls, method))
    return first + next(i for i, line in enumerate(lines) if text in line)


class TestTemplateOnAFakeWorld(TestCase):
    def run_on(self, verdict, cls=world_cases.OnAFakeWorld, name="test_any"):
        world = cls.world = world_cases.FakeWorld(verdict)
        return run_case(cls, name), world

    def test_the_world_gets_the_checked_settings_once(self):
        result, world = self.run_on(Verdict(Status.PASSED))
        assert_outcomes(self, result, passed=1)
        self.assertEqual(world.runs, [(world_cases.OnAFakeWorld("test_any").id(),
                                       RunSettings(timeout=7.0, world_size=3, leftover_policy="warn"))])

    def test_a_failed_verdict_raises_the_worlds_failure_with_its_headline(self):
        result, _ = self.run_on(Verdict(Status.FAILED, "1 of 3 ranks did not pass (rank 2)\n...",
                                        "rank 2 failed: AssertionError: no"))
        assert_outcomes(self, result, failed=1)
        self.assertIn("RankFailure: 1 of 3 ranks did not pass (rank 2)", result.failures[0][1])

    def test_an_error_verdict_is_an_error_and_a_skipped_one_a_skip(self):
        result, _ = self.run_on(Verdict(Status.ERROR, "rank 0 died"))
        assert_outcomes(self, result, errors=1)
        self.assertIn("RankError: rank 0 died", result.errors[0][1])
        result, _ = self.run_on(Verdict(Status.SKIPPED, "every rank skipped"))
        self.assertEqual([reason for _, reason in result.skipped], ["every rank skipped"])

    def test_a_decorator_skip_and_a_bad_setting_never_reach_the_world(self):
        result, world = self.run_on(Verdict(Status.PASSED), name="test_skipped_by_decorator")
        self.assertEqual([reason for _, reason in result.skipped], ["skipped by its decorator"])
        result, bad_world = self.run_on(Verdict(Status.PASSED), world_cases.BadWorldSizeOnAFakeWorld)
        assert_outcomes(self, result, errors=1)
        self.assertIn("SettingError: BadWorldSizeOnAFakeWorld.world_size=0: expected a positive integer",
                      result.errors[0][1])
        self.assertEqual((world.runs, bad_world.runs), ([], []))

    def test_only_the_test_process_replaces_the_method(self):
        test = world_cases.OnAFakeWorld("test_any")
        self.assertEqual(test.rank, -1)
        self.assertIsNot(test.test_any.__func__, world_cases.OnAFakeWorld.test_any)
        enter_thread_rank(RankFacts(1, 3, "cpu", "gloo", test_dir=""))
        try:  # as a rank (here a rank thread) makes its instance: the class's own method
            in_rank = world_cases.OnAFakeWorld("test_any")
            self.assertEqual((in_rank.rank, in_rank.device), (1, "cpu"))
            self.assertIs(in_rank.test_any.__func__, world_cases.OnAFakeWorld.test_any)
        finally:
            leave_thread_rank()
        self.assertIsNone(current_rank_facts())


class TestEachWorldOwnsItsDirectory(TestCase):
    """A world makes the directory its ranks meet in and removes it when it closes: one place
    (``worlds.world.WorldDir``), not the test case, the supervisor or the pytest plugin."""

    def test_a_fresh_world_makes_its_directory_and_removes_it_when_it_closes(self):
        world = FreshWorld("test x[2ranks]")
        self.addCleanup(world.close)
        self.assertTrue(os.path.isdir(world.test_dir))
        self.assertEqual(os.path.dirname(world.test_dir), fork_server.run_directory())
        self.assertTrue(os.path.basename(world.test_dir).startswith("test_x_2ranks_-"))
        self.assertEqual(world.close(), "")
        self.assertFalse(os.path.exists(world.test_dir))

    def test_a_skip_before_any_rank_leaves_no_directory(self):
        with self.assertRaises(unittest.SkipTest):
            with FreshWorld("skipped") as world:
                raise unittest.SkipTest("too few devices")
        self.assertFalse(os.path.exists(world.test_dir))

    def test_no_other_module_makes_or_removes_a_world_directory(self):
        # The fork server makes and removes the run directory the worlds' directories live in.
        allowed = {"worlds/world.py", "fresh/fork_server.py"}
        makes_or_removes = re.compile(r"\b(mkdtemp|rmtree|rmdir|mkdir)\(")
        root = Path(engine.__file__).parent
        found = [f"{path.relative_to(root)}:{number}"
                 for folder in ("worlds", "fresh", "kept", "launched", "pytest_native", "threads")
                 for path in sorted((root / folder).glob("*.py")) if path.relative_to(root).as_posix() not in allowed
                 for number, line in enumerate(path.read_text().splitlines(), 1) if makes_or_removes.search(line)]
        self.assertEqual(found, [])
