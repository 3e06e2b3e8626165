"""In-process self-tests of the supervisor's wait loop (``wait_for_outcomes``) with a fake
watch and a fake clock: every rule of fail-fast and timeouts, and how long a timed-out test waits
for its ranks' stack dumps (``await_dumps``), in milliseconds. The end-to-end versions (real
ranks that hang, die or fail) live in fresh/test_multiprocess_test_case.py and
reporting/test_stack_dumps.py."""

import os
import shutil
import tempfile

from torch_testing_ext._engine.fresh.supervisor import (
    DUMP_SETTLED,
    FAIL_FAST_GRACE,
    STACK_DUMP_WAIT,
    await_dumps,
    wait_for_outcomes,
)
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


class GrowingLogs:
    """Rank logs in a temporary directory that a fake clock's sleeps write to: ``writes`` maps
    a time to the (rank, text) appended then."""

    def __init__(self, directory, ranks, writes):
        self.now = 0.0
        self.paths = {rank: os.path.join(directory, f"rank{rank}.log") for rank in ranks}
        for path in self.paths.values():
            with open(path, "w") as log:
                log.write("the rank's output\n")
        self.asked_at = {rank: os.path.getsize(path) for rank, path in self.paths.items()}
        self.writes = sorted(writes.items())

    def clock(self):
        return self.now

    def sleep(self, seconds):
        assert seconds >= 0, f"asked to sleep {seconds} s"
        self.now += seconds
        while self.writes and self.writes[0][0] <= self.now:
            for rank, text in self.writes.pop(0)[1]:
                with open(self.paths[rank], "a") as log:
                    log.write(text)

    def wait(self):
        await_dumps(self.paths, self.asked_at, clock=self.clock, sleep=self.sleep)
        return self.now


class TestAwaitDumps(TestCase):
    """How long a timed-out test waits for its ranks' stack dumps, on a fake clock."""

    def logs(self, ranks, writes):
        directory = tempfile.mkdtemp(prefix="await-dumps-")
        self.addCleanup(shutil.rmtree, directory)
        return GrowingLogs(directory, ranks, writes)

    def test_it_ends_once_every_rank_has_dumped_and_its_log_holds_still(self):
        dump = "Thread 0x1 (most recent call first):\n  File \"t.py\", line 3 in test_x\n"
        logs = self.logs([0, 1], {0.01: [(0, dump)], 0.12: [(1, dump[:20])], 0.14: [(1, dump[20:])]})
        ended = logs.wait()
        self.assertGreaterEqual(ended, 0.14 + DUMP_SETTLED)  # rank 1's dump was whole before the end
        self.assertLess(ended, STACK_DUMP_WAIT)

    def test_a_rank_that_never_dumps_costs_the_whole_wait_and_no_more(self):
        logs = self.logs([0, 1], {0.01: [(0, "Thread 0x1 (most recent call first):\n")]})
        self.assertAlmostEqual(logs.wait(), STACK_DUMP_WAIT)

    def test_a_log_that_keeps_growing_is_waited_for_until_the_end(self):
        logs = self.logs([0], {t / 100: [(0, "line\n")] for t in range(1, 200)})
        self.assertAlmostEqual(logs.wait(), STACK_DUMP_WAIT)
