"""In-process self-tests of the supervisor's wait loop (``wait_for_outcomes``) with a fake
watch and a fake clock: every rule of fail-fast and timeouts, in milliseconds. The end-to-end
versions (real ranks that hang, die or fail) live in fresh/test_multiprocess_test_case.py and
reporting/test_stack_dumps.py."""

from torch_testing_ext._engine.fresh.supervisor import FAIL_FAST_GRACE, wait_for_outcomes
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext._engine.worlds.outcomes import RankOutcome
from torch_testing_ext.common_utils import TestCase


class FakeWatch:
    """Ranks whose outcomes arrive at scripted times of a fake clock.

    ``events`` maps a time to the outcomes that arrive then; ``collect(t)`` moves the clock to
    the next event within ``t`` seconds (delivering it), or by ``t`` when none is due.
    """

    def __init__(self, world_size, events):
        self.now = 0.0
        self.ranks = list(range(world_size))
        self.events = sorted(events.items())
        self.outcomes = {}
        self.stops = []  # (time, ranks, status, detail, dump_stacks)
        self.collect_calls = 0

    def clock(self):
        return self.now

    def running(self):
        return [rank for rank in self.ranks if rank not in self.outcomes]

    def collect(self, timeout):
        self.collect_calls += 1
        assert timeout >= 0, f"collect asked to wait {timeout} s"
        until = self.now + timeout
        if self.events and self.events[0][0] <= until:
            at, arriving = self.events.pop(0)
            self.now = max(self.now, at)
            for outcome in arriving:
                self.outcomes.setdefault(outcome.rank, outcome)
        else:
            self.now = until

    def stop(self, ranks, status, detail, dump_stacks):
        self.stops.append((self.now, list(ranks), status, detail, dump_stacks))
        for rank in ranks:
            self.outcomes.setdefault(rank, RankOutcome(rank, status, detail))


def passed(rank):
    return RankOutcome(rank, Status.PASSED)


def failed(rank):
    return RankOutcome(rank, Status.FAILED, "AssertionError")


class TestWaitLoop(TestCase):
    def wait(self, world_size, events, timeout=10.0):
        watch = FakeWatch(world_size, events)
        wait_for_outcomes(watch, timeout, clock=watch.clock)
        return watch

    def test_reports_arriving_in_time_end_the_wait_with_no_stop(self):
        watch = self.wait(3, {0.5: [passed(0)], 1.0: [passed(2)], 2.0: [passed(1)]})
        self.assertEqual(watch.stops, [])
        self.assertEqual(watch.now, 2.0)
        self.assertEqual({r: o.status for r, o in watch.outcomes.items()}, dict.fromkeys(range(3), Status.PASSED))

    def test_after_a_failure_the_others_get_the_grace_then_are_stopped_without_stacks(self):
        watch = self.wait(3, {1.0: [failed(1)], 2.0: [passed(0)]})
        self.assertEqual(watch.stops, [(1.0 + FAIL_FAST_GRACE, [2], Status.STOPPED,
                                        "stopped after rank 1 failed", False)])
        self.assertEqual(watch.outcomes[0].status, Status.PASSED)  # it reported within the grace

    def test_the_lowest_failing_rank_is_named_when_several_fail(self):
        watch = self.wait(4, {1.0: [failed(3)], 1.5: [failed(1)]})
        self.assertEqual(watch.stops[0][1:4], ([0, 2], Status.STOPPED, "stopped after rank 1 failed"))

    def test_a_death_counts_as_a_problem_like_a_failure(self):
        watch = self.wait(2, {2.0: [RankOutcome(0, Status.DIED, "rank 0 died from signal SIGKILL")]})
        self.assertEqual(watch.stops, [(2.0 + FAIL_FAST_GRACE, [1], Status.STOPPED,
                                        "stopped after rank 0 failed", False)])

    def test_a_skip_is_not_a_problem(self):
        watch = self.wait(2, {1.0: [RankOutcome(0, Status.SKIPPED, "no GPU")], 8.0: [passed(1)]})
        self.assertEqual(watch.stops, [])

    def test_at_the_timeout_the_ranks_still_running_are_stopped_with_their_stacks(self):
        watch = self.wait(3, {1.0: [passed(1)]}, timeout=10.0)
        self.assertEqual(watch.stops, [(10.0, [0, 2], Status.TIMED_OUT,
                                        "timed out after 10 s; ranks still running: 0, 2", True)])

    def test_a_failure_just_before_the_deadline_still_ends_at_the_deadline(self):
        watch = self.wait(2, {9.0: [failed(0)]}, timeout=10.0)
        self.assertEqual([(at, status) for at, _, status, _, _ in watch.stops], [(10.0, Status.TIMED_OUT)])

    def test_the_wait_never_asks_to_collect_a_negative_time_and_does_not_spin(self):
        watch = self.wait(2, {0.1 * i: [] for i in range(1, 50)} | {6.0: [failed(0)]}, timeout=7.0)
        self.assertLess(watch.collect_calls, 60)  # one call per event, not a busy loop
        self.assertEqual(watch.stops[0][0], 7.0)
