"""Self-tests of the test <-> rank protocol: the hooks a subclass may override, the facts a
rank reads through its properties, and tracebacks that start at the user's frame."""

from torch_testing_ext import devices
from torch_testing_ext._engine.worlds.rank_facts import current_rank_facts
from torch_testing_ext.common_utils import TestCase

from fixtures import rank_hooks
from fixtures.runs import run_case

logged = rank_hooks.take_logs


class TestRankHooks(TestCase):
    def test_set_up_rank_and_tear_down_rank_surround_a_passing_test(self):
        result = run_case(rank_hooks.RecordsHooks, "test_passes")
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(logged("test_passes"),
                         {rank: ["setUpRank", "test", "tearDownRank"] for rank in (0, 1)})

    def test_tear_down_rank_runs_after_a_failure(self):
        result = run_case(rank_hooks.RecordsHooks, "test_fails_on_rank_1")
        self.assertEqual(len(result.failures), 1)
        self.assertEqual(logged("test_fails_on_rank_1"),
                         {rank: ["setUpRank", "test", "tearDownRank"] for rank in (0, 1)})

    def test_tear_down_rank_runs_after_an_error(self):
        result = run_case(rank_hooks.RecordsHooks, "test_raises")
        self.assertEqual(len(result.errors), 1)
        self.assertIn("ValueError: raised on rank 1", result.errors[0][1])
        self.assertEqual(logged("test_raises"),
                         {rank: ["setUpRank", "test", "tearDownRank"] for rank in (0, 1)})

    def test_a_skip_in_set_up_rank_skips_the_test(self):
        result = run_case(rank_hooks.SetUpRankSkips, "test_never_runs")
        self.assertEqual([reason for _, reason in result.skipped], ["setUpRank says no"])
        self.assertTrue(result.wasSuccessful())


class TestRankFacts(TestCase):
    def test_a_rank_sees_the_environment_the_test_process_has_when_the_test_starts(self):
        run_case(rank_hooks.DefaultFacts, "test_facts")  # the fork server is running by now
        result = run_case(rank_hooks.SeesTheTestEnvironment, "test_sees_it")
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(result.testsRun, 1)

    def test_properties_read_the_rank_facts(self):
        result = run_case(rank_hooks.DefaultFacts, "test_facts")
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)

    def test_a_subclass_keeps_its_own_device_backend_and_world_size(self):
        result = run_case(rank_hooks.OwnFacts, "test_facts")
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(result.testsRun, 1)

    def test_a_subclass_keeps_its_own_facts_defined_as_properties(self):
        result = run_case(rank_hooks.OwnFactsAsProperties, "test_own_properties")
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(logged("test_own_properties"), {0: ["ran"], 1: ["ran"]})
        self.assertEqual(rank_hooks.OwnFactsAsProperties("test_own_properties").rank, 7)

    def test_a_subclass_keeps_its_own_facts_defined_as_class_attributes(self):
        result = run_case(rank_hooks.OwnFactsAsAttributes, "test_own_attributes")
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(logged("test_own_attributes"), {0: ["ran"], 1: ["ran"]})

    def test_the_test_process_is_not_a_rank(self):
        test = rank_hooks.DefaultFacts("test_facts")
        self.assertIsNone(current_rank_facts())
        self.assertEqual(test.rank, -1)
        with self.assertRaisesRegex(AttributeError, "only a rank has"):
            _ = test.device
        with self.assertRaisesRegex(AttributeError, "only a rank has"):
            _ = test.backend
        self.assertEqual(test.device_type, devices.device_type())


class TestRankTracebacks(TestCase):
    def test_a_failing_assertion_shows_the_users_frame_and_no_harness_frame(self):
        result = run_case(rank_hooks.RecordsHooks, "test_fails_on_rank_1")
        message = result.failures[0][1]
        rank_lines = [line for line in message.splitlines() if line.startswith("[rank 1]")]
        frames = [line for line in rank_lines if line.strip().startswith("[rank 1]   File ")]
        self.assertEqual(len(frames), 1, "\n".join(rank_lines))
        self.assertIn("fixtures/rank_hooks.py", frames[0])
        self.assertIn("test_fails_on_rank_1", frames[0])
        self.assertNotIn("torch_testing_ext", "\n".join(rank_lines))
        logged("test_fails_on_rank_1")

    def test_an_error_keeps_the_frames_below_the_users(self):
        result = run_case(rank_hooks.RecordsHooks, "test_raises")
        rank_lines = [line for line in result.errors[0][1].splitlines() if line.startswith("[rank 0]")]
        self.assertIn("fixtures/rank_hooks.py", "\n".join(rank_lines))
        self.assertNotIn("rank_process.py", "\n".join(rank_lines))
        logged("test_raises")
