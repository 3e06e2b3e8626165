"""Self-tests of the threaded world: ranks as threads with real collectives between them.

``TestCollectives`` checks every collective's values on 4 rank threads (it is itself a
``MultiThreadedTestCase``); the other classes run ``fixtures/threaded_cases.py`` in-process and
check the outcome rules (a failing rank named with its traceback, skips, a stuck rank named
with its stack), that no rank thread outlives a test, and that the main thread's c10d world
comes back.
"""

import functools
import operator
import threading
import unittest
from unittest import mock

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

from torch_testing_ext import devices
from torch_testing_ext._engine import _torch_private as private
from torch_testing_ext._engine.process_groups.collective_exchange import CollectiveAborted
from torch_testing_ext._engine.threads import rank_threads
from torch_testing_ext._engine.worlds.settings import SettingError
from torch_testing_ext.collectives import not_in_lockstep
from torch_testing_ext.common_distributed import MultiThreadedTestCase, spawn_threads_and_init_comms
from torch_testing_ext.common_utils import TestCase
from torch_testing_ext.distributed.multi_threaded_pg import (
    ProcessLocalGroup,
    ThreadLocalWorld,
    _install_threaded_pg,
    _uninstall_threaded_pg,
)

from fixtures import threaded_cases
from fixtures.runs import run_case
from fixtures.threaded_cases import rank_threads_alive


class TestCollectives(MultiThreadedTestCase):
    """Each collective's values on 4 rank threads."""

    def test_world(self):
        self.assertEqual((dist.get_rank(), dist.get_world_size()), (self.rank, 4))
        self.assertIsInstance(dist.group.WORLD, ProcessLocalGroup)
        self.assertEqual(dist.get_backend(), "threaded")

    def test_all_reduce_ops(self):
        values = range(1, 5)
        expected = {dist.ReduceOp.SUM: 10, dist.ReduceOp.PRODUCT: 24, dist.ReduceOp.MIN: 1,
                    dist.ReduceOp.MAX: 4, dist.ReduceOp.BAND: functools.reduce(operator.and_, values),
                    dist.ReduceOp.BOR: functools.reduce(operator.or_, values),
                    dist.ReduceOp.BXOR: functools.reduce(operator.xor, values)}
        for op, value in expected.items():
            t = torch.tensor([self.rank + 1, 2 * (self.rank + 1)])
            dist.all_reduce(t, op=op)
            self.assertEqual(t[0].item(), value, f"{op}")
        t = torch.tensor([float(self.rank)])
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        self.assertEqual(t.item(), 1.5)

    def test_all_reduce_coalesced_and_reduce(self):
        a, b = torch.full((2,), float(self.rank)), torch.full((3,), 2.0 * self.rank)
        dist.all_reduce_coalesced([a, b])
        self.assertEqual(a, [6.0] * 2)
        self.assertEqual(b, [12.0] * 3)
        t = torch.tensor([float(self.rank)])
        dist.reduce(t, dst=2)
        self.assertEqual(t.item(), 6.0 if self.rank == 2 else float(self.rank))

    def test_broadcast(self):
        for src in range(4):
            t = torch.full((3,), float(self.rank))
            dist.broadcast(t, src=src)
            self.assertEqual(t, [float(src)] * 3)

    def test_all_gather(self):
        out = [torch.empty(2) for _ in range(4)]
        dist.all_gather(out, torch.full((2,), float(self.rank)))
        self.assertEqual(out, [torch.full((2,), float(r)) for r in range(4)])

    def test_all_gather_into_tensor(self):
        out = torch.empty(4, 2)
        dist.all_gather_into_tensor(out, torch.tensor([self.rank, 10.0 * self.rank]))
        self.assertEqual(out, [[r, 10.0 * r] for r in range(4)])

    def test_reduce_scatter(self):
        out = torch.empty(2)
        dist.reduce_scatter(out, [torch.full((2,), float(self.rank * 10 + r)) for r in range(4)])
        self.assertEqual(out, [60.0 + 4 * self.rank] * 2)  # sum over s of 10 s + rank

    def test_reduce_scatter_tensor(self):
        out = torch.empty(2)
        dist.reduce_scatter_tensor(out, torch.arange(8.0) * (self.rank + 1))
        self.assertEqual(out, torch.arange(8.0)[2 * self.rank:2 * self.rank + 2] * 10)
        dist.reduce_scatter_tensor(out, torch.arange(8.0), op=dist.ReduceOp.MAX)
        self.assertEqual(out, torch.arange(8.0)[2 * self.rank:2 * self.rank + 2])

    def test_all_to_all(self):
        out = [torch.empty(1) for _ in range(4)]
        dist.all_to_all(out, [torch.tensor([10.0 * self.rank + r]) for r in range(4)])
        self.assertEqual(out, [torch.tensor([10.0 * s + self.rank]) for s in range(4)])

    def test_all_to_all_single_uneven(self):
        # rank s sends s + 1 rows to every rank, each row holding the sender's rank.
        send = torch.full((4 * (self.rank + 1),), float(self.rank))
        out = torch.empty(sum(s + 1 for s in range(4)))
        dist.all_to_all_single(out, send, [s + 1 for s in range(4)], [self.rank + 1] * 4)
        self.assertEqual(out, [float(s) for s in range(4) for _ in range(s + 1)])
        splits = torch.tensor([s + 1 for s in range(4)])  # splits may be tensors too
        dist.all_to_all_single(out, send, splits, torch.full((4,), self.rank + 1))
        self.assertEqual(out, [float(s) for s in range(4) for _ in range(s + 1)])

    def test_scatter_and_gather(self):
        out = torch.empty(2)
        pieces = [torch.full((2,), 7.0 * r) for r in range(4)] if self.rank == 1 else None
        dist.scatter(out, pieces, src=1)
        self.assertEqual(out, [7.0 * self.rank] * 2)
        gathered = [torch.empty(2) for _ in range(4)] if self.rank == 3 else None
        dist.gather(out, gathered, dst=3)
        if self.rank == 3:
            self.assertEqual(gathered, [torch.full((2,), 7.0 * r) for r in range(4)])

    def test_barrier_and_object_collectives(self):
        dist.barrier()
        objects = [{"from": self.rank}] if self.rank == 2 else [None]
        dist.broadcast_object_list(objects, src=2)
        self.assertEqual(objects, [{"from": 2}])
        everyone = [None] * 4
        dist.all_gather_object(everyone, f"rank {self.rank}")
        self.assertEqual(everyone, [f"rank {r}" for r in range(4)])

    def test_send_recv_ring_posted_before_waiting(self):
        # Every rank posts its send and its receive before waiting on either: blocking
        # point-to-point would deadlock here.
        received = torch.empty(2)
        sent = dist.isend(torch.full((2,), float(self.rank)), dst=(self.rank + 1) % 4)
        posted = dist.irecv(received, src=(self.rank - 1) % 4)
        posted.wait()
        sent.wait()
        self.assertEqual(received, [float((self.rank - 1) % 4)] * 2)
        if self.rank == 0:
            sender = dist.recv(received)  # from any source
            self.assertEqual(received, [float(sender)] * 2)
        elif self.rank == 3:
            dist.send(torch.full((2,), 3.0), dst=0)

    def test_async_works_wait(self):
        a, b = torch.full((2,), float(self.rank)), torch.ones(1)
        works = [dist.all_reduce(a, async_op=True), dist.all_reduce(b, async_op=True)]
        for work in works:
            self.assertTrue(work.wait())
            self.assertTrue(work.is_completed())
        self.assertEqual(a, [6.0, 6.0])
        self.assertEqual(b.item(), 4.0)
        future = dist.all_reduce(torch.ones(1), async_op=True).get_future()
        self.assertEqual(future.wait()[0].item(), 4.0)

    def test_subgroups(self):
        pairs = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        mine = pairs[self.rank // 2]
        t = torch.tensor([float(self.rank)])
        dist.all_reduce(t, group=mine)
        self.assertEqual(t.item(), 1.0 if self.rank < 2 else 5.0)
        self.assertEqual(dist.get_rank(mine), self.rank % 2)
        dist.broadcast(t, group_src=1, group=mine)  # group ranks, not global ones
        self.assertEqual(t.item(), 1.0 if self.rank < 2 else 5.0)

    def test_functional_collectives(self):
        t = torch.full((2,), float(self.rank))
        self.assertEqual(funcol.all_reduce(t, "sum", dist.group.WORLD), [6.0, 6.0])
        self.assertEqual(funcol.all_gather_tensor(t, 0, dist.group.WORLD),
                         [float(r) for r in range(4) for _ in range(2)])
        self.assertEqual(funcol.reduce_scatter_tensor(torch.ones(8), "sum", 0, dist.group.WORLD),
                         [4.0, 4.0])

    @not_in_lockstep  # the ranks differ on purpose: the threaded backend must say so
    def test_mismatched_collectives_fail_on_every_rank(self):
        t = torch.ones(1)
        with self.assertRaisesRegex(RuntimeError, "called different collectives"):
            if self.rank == 0:
                dist.all_reduce(t)
            else:
                dist.broadcast(t, src=0)

    @not_in_lockstep
    def test_shape_mismatch_fails_on_every_rank(self):
        with self.assertRaisesRegex(RuntimeError, "differ in shape"):
            dist.all_reduce(torch.ones(self.rank + 1))


class TestOutcomes(TestCase):
    def test_a_failing_rank_is_named_with_its_traceback(self):
        result = run_case(threaded_cases.OneRankFails, "test_rank_2_fails")
        self.assertEqual((len(result.failures), len(result.errors)), (1, 0))
        message = result.failures[0][1]
        self.assertIn("1 of 4 ranks did not pass (rank 2)", message)
        self.assertIn("[rank 2]   File", message)
        self.assertIn("threaded_cases.py", message)
        self.assertIn("rank 2 expected five", message)
        self.assertIn("rank 0, 1, 3 stopped early because another rank had failed", message)
        self.assertEqual(rank_threads_alive(), [])

    def test_a_raising_rank_is_an_error(self):
        result = run_case(threaded_cases.OneRankRaises, "test_rank_1_raises")
        self.assertEqual((len(result.failures), len(result.errors)), (0, 1))
        message = result.errors[0][1]
        self.assertIn("rank 1 error:", message)
        self.assertIn("ValueError: rank 1 broke", message)
        self.assertNotIn("rank 0", message)

    def test_every_rank_skipping_is_a_skip(self):
        result = run_case(threaded_cases.EveryRankSkips, "test_skips")
        self.assertEqual([reason for _, reason in result.skipped], ["not on this machine"])
        self.assertTrue(result.wasSuccessful())

    def test_every_rank_exiting_with_a_skip_code_is_a_skip(self):
        result = run_case(threaded_cases.EveryRankSkips, "test_exits_with_a_skip_code")
        self.assertEqual([reason for _, reason in result.skipped], ["Need at least 2 CUDA devices"])

    def test_a_rank_skipping_while_others_pass_is_a_skip(self):
        result = run_case(threaded_cases.NotEveryRankSkips, "test_rank_0_skips")
        self.assertEqual([reason for _, reason in result.skipped], ["rank 0 has nothing to do"])

    def test_a_rank_stuck_in_a_collective_is_named_with_its_stack(self):
        before = set(threading.enumerate())
        result = run_case(threaded_cases.ExtraBarrierHangs, "test_rank_3_stuck")
        self.assertEqual(len(result.errors), 1)
        message = result.errors[0][1]
        self.assertIn("1 of 4 ranks did not pass (rank 3)", message)
        self.assertIn("rank 3 timed out:", message)
        self.assertIn("still running after 1 s; its stack:", message)
        self.assertIn("dist.barrier()  # the stuck line", message)
        self.assertEqual(set(threading.enumerate()), before)

    def test_a_rank_busy_in_python_is_stopped(self):
        before = set(threading.enumerate())
        result = run_case(threaded_cases.BusyRankHangs, "test_rank_0_busy")
        self.assertEqual(len(result.errors), 1)
        message = result.errors[0][1]
        self.assertIn("2 of 2 ranks did not pass (rank 0, 1)", message)
        self.assertIn("time.sleep(0.01)", message)
        self.assertNotIn("could not be stopped", message)
        self.assertEqual(set(threading.enumerate()), before)

    def test_bad_world_size_is_one_line(self):
        result = run_case(threaded_cases.BadWorldSize, "test_never_runs")
        self.assertEqual(len(result.errors), 1)
        message = result.errors[0][1]
        self.assertTrue(message.splitlines()[-1].endswith(
            "SettingError: BadWorldSize.world_size=0: expected a positive integer"), message)
        self.assertNotIn("did not pass", message)  # refused before any rank started


class TestRankThreads(TestCase):
    def test_each_rank_thread_has_its_rank_hooks_and_group(self):
        threaded_cases.RecordsItsRanks.seen.clear()
        destroyed = []

        def destroy():
            before = dist.is_initialized()
            real_destroy()
            destroyed.append((before, dist.is_initialized()))

        real_destroy = rank_threads.destroy_process_groups
        with mock.patch.object(rank_threads, "destroy_process_groups", destroy):
            result = run_case(threaded_cases.RecordsItsRanks, "test_records")
        self.assertTrue(result.wasSuccessful(), result.failures + result.errors)
        seen = threaded_cases.RecordsItsRanks.seen
        self.assertEqual(sorted(seen), [0, 1, 2, 3])
        for rank, events in seen.items():
            setup, test, teardown = events
            self.assertEqual(setup, ("setUp", True))
            self.assertEqual(test[:3], ("test", rank, 4))
            self.assertTrue(test[3].startswith(f"rank {rank} of "), test[3])
            self.assertEqual(test[4:], (devices.rank_device(rank), devices.device_type()))
            self.assertEqual(teardown, ("tearDown", True))
        self.assertEqual(destroyed, [(True, False)] * 4)  # each rank's group, after the test

    def test_the_main_threads_world_is_restored(self):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            main_group = dist.group.WORLD
            result = run_case(threaded_cases.OneRankRaises, "test_rank_1_raises")
            self.assertEqual(len(result.errors), 1)
            self.assertNotIsInstance(private.c10d_world(), ThreadLocalWorld)
            self.assertIs(dist.group.WORLD, main_group)
            t = torch.ones(2)
            dist.all_reduce(t)
            self.assertEqual(t, [1.0, 1.0])
            # the group-name registry is the process's again: another thread's functional
            # collective finds the main thread's group by its name
            reduced = []
            helper = threading.Thread(
                target=lambda: reduced.append(funcol.all_reduce(t, "sum", main_group)))
            helper.start()
            helper.join(60)
            self.assertEqual(reduced, [torch.ones(2)])
        finally:
            dist.destroy_process_group()
        self.assertFalse(dist.is_initialized())
        # and a new group works in the main thread after a threaded test
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            dist.barrier()
        finally:
            dist.destroy_process_group()


class TestSpawnThreads(TestCase):
    @spawn_threads_and_init_comms
    def test_bare_form_runs_four_ranks(self):
        everyone = [None] * dist.get_world_size()
        dist.all_gather_object(everyone, dist.get_rank())
        self.assertEqual(everyone, [0, 1, 2, 3])

    @spawn_threads_and_init_comms(world_size=2, timeout=60)
    def test_form_with_arguments(self):
        self.assertEqual(dist.get_world_size(), 2)
        t = torch.full((1,), float(dist.get_rank()))
        dist.all_reduce(t)
        self.assertEqual(t.item(), 1.0)

    def test_a_failing_rank_fails_the_method_as_upstream_expects(self):
        @spawn_threads_and_init_comms(world_size=4)
        def fails_on_rank_1(self):
            out = [torch.empty(1) for _ in range(4)]
            dist.all_gather(out, torch.ones(1))
            if dist.get_rank() == 1:
                raise AssertionError("rank 1 saw the wrong gather")
            dist.all_gather(out, torch.ones(1))

        with self.assertRaisesRegex(RuntimeError, "rank 1 saw the wrong gather") as caught:
            fails_on_rank_1(self)
        self.assertIsInstance(caught.exception, AssertionError)  # a failure, not an error
        self.assertIn("rank 1 failed", str(caught.exception))
        self.assertEqual(rank_threads_alive(), [])

    def test_skip_inside_is_a_skip(self):
        @spawn_threads_and_init_comms(world_size=2)
        @unittest.skip("checked by the harness")
        def skipped(self):
            pass

        with self.assertRaisesRegex(unittest.SkipTest, "checked by the harness"):
            skipped(self)

    def test_bad_arguments_are_one_line(self):
        with self.assertRaisesRegex(TypeError, "expected a test method, got 4"):
            spawn_threads_and_init_comms(4)
        with self.assertRaisesRegex(SettingError, "world_size=-1: expected a positive integer"):
            spawn_threads_and_init_comms(world_size=-1)(lambda self: None)(self)
        with self.assertRaisesRegex(SettingError, "timeout='soon': expected a positive number"):
            spawn_threads_and_init_comms(timeout="soon")(lambda self: None)(self)



class TestFace(TestCase):
    def test_threads_started_by_hand_after_install(self):
        world = _install_threaded_pg()
        try:
            self.assertIs(_install_threaded_pg(), world)  # again: the same world
            self.assertIs(private.c10d_world(), world)
            store, results = dist.HashStore(), {}

            def rank_main(rank):
                dist.init_process_group("threaded", rank=rank, world_size=2, store=store)
                t = torch.tensor([rank + 1.0])
                dist.all_reduce(t)
                results[rank] = (t.item(), dist.get_rank(), type(dist.group.WORLD))
                dist.destroy_process_group()

            threads = [threading.Thread(target=rank_main, args=(r,), daemon=True) for r in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            self.assertEqual([t for t in threads if t.is_alive()], [])
            self.assertEqual(results, {0: (3.0, 0, ProcessLocalGroup), 1: (3.0, 1, ProcessLocalGroup)})
            self.assertFalse(dist.is_initialized())  # the main thread's own world is empty
        finally:
            _uninstall_threaded_pg()
        self.assertNotIsInstance(private.c10d_world(), ThreadLocalWorld)

    def test_uninstall_wakes_a_thread_waiting_in_a_collective(self):
        _install_threaded_pg()
        joined, ended = threading.Event(), []

        def lonely_rank():
            dist.init_process_group("threaded", rank=0, world_size=2, store=dist.HashStore())
            joined.set()
            try:
                dist.barrier()  # rank 1 never comes
            except BaseException as error:
                ended.append(type(error))

        thread = threading.Thread(target=lonely_rank, daemon=True)
        thread.start()
        try:
            self.assertTrue(joined.wait(60))
        finally:
            _uninstall_threaded_pg()
        thread.join(60)
        self.assertFalse(thread.is_alive())
        self.assertEqual(ended, [CollectiveAborted])
