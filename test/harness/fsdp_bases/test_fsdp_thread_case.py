"""Self-tests of ``FSDPTestMultiThread``: FSDP's ranks as threads of one process.

``fully_shard`` models train on 2 rank threads (CPU, the ``threaded`` backend) and match an
unsharded reference trained in the same thread step for step (``check_sharded_parity``),
inside ``run_subtests``; the world size (2 on CPU, a class's own), the Dynamo resets around
each rank's test, and, running ``fixtures/fsdp_thread_cases.py`` in-process, a failing rank
thread (or failing subtest combination) named with its message, and no rank thread left.
"""

import sys
import threading
from unittest import mock

import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

from torch_testing_ext import devices
from torch_testing_ext._engine.fsdp_bases import fsdp_thread_case
from torch_testing_ext.common_fsdp import FSDPTestMultiThread, MLPStack
from torch_testing_ext.common_utils import TestCase

from fixtures import fsdp_thread_cases
from fixtures.fsdp_shared_checks import RunSubtestsChecks, TrainParityChecks
from fixtures.runs import run_case
from fixtures.threaded_cases import rank_threads_alive

CPU_ONLY = devices.accelerator_type() is None


class TestFSDPThreadRanks(RunSubtestsChecks, FSDPTestMultiThread):
    def test_ranks_are_threads_of_one_threaded_group(self):
        expected = 2 if CPU_ONLY else devices.device_count()
        self.assertEqual(self.world_size, expected)
        self.assertEqual((dist.get_rank(), dist.get_world_size()), (self.rank, expected))
        self.assertEqual(dist.get_backend(), "threaded")
        seen = [None] * self.world_size
        dist.all_gather_object(seen, (self.rank, threading.get_ident()))
        self.assertEqual([rank for rank, _ in seen], list(range(expected)))
        self.assertEqual(len({ident for _, ident in seen}), expected, "ranks share a thread")
        self.assertNotEqual(threading.current_thread(), threading.main_thread())


class TestFourRankThreads(FSDPTestMultiThread):
    world_size = 4  # a class's own world size wins over the device count

    def test_class_world_size(self):
        self.assertEqual((self.world_size, dist.get_world_size()), (4, 4))
        model = MLPStack(8)
        fully_shard(model)
        weight = model[1].in_proj.weight  # 32 rows
        self.assertEqual((weight.shape, weight.to_local().shape), ((32, 8), (8, 8)))


class TestFullyShardOnThreads(TrainParityChecks, FSDPTestMultiThread):
    """The shared parity check, on rank threads."""


class TestFailingRankThreads(TestCase):
    def test_diverging_rank_is_named_with_its_parameter(self):
        result = run_case(fsdp_thread_cases.OneRankDiverges, "test_rank_1_diverges")
        self.assertEqual((len(result.failures), len(result.errors)), (1, 0))
        message = result.failures[0][1]
        self.assertIn("[rank 1]", message)
        self.assertIn("parameter out_proj.bias differs", message)
        self.assertNotIn("[rank 0] failed", message)
        self.assertEqual(rank_threads_alive(), [])

    def test_failing_subtest_combination_fails_its_rank(self):
        result = run_case(fsdp_thread_cases.SubtestFailsOnRank0, "test_scale_3_fails_on_rank_0")
        self.assertEqual((len(result.failures), len(result.errors)), (1, 0))
        message = result.failures[0][1]
        self.assertIn("[rank 0]", message)
        self.assertIn("rank 0 rejects scale 3", message)
        if sys.version_info >= (3, 11):  # exception notes
            self.assertIn("in subtest scale=3", message)
        self.assertNotIn("[rank 1] failed", message)
        self.assertEqual(rank_threads_alive(), [])


class TestDynamoResets(TestCase):
    def test_each_rank_thread_resets_dynamo_before_and_after_its_test(self):
        cls = fsdp_thread_cases.RecordsDynamoResets
        cls.events.clear()

        def record_reset():
            with cls.lock:
                cls.events.append((threading.current_thread().name, "reset"))

        with mock.patch.object(fsdp_thread_case, "reset_dynamo", side_effect=record_reset):
            result = run_case(cls, "test_body")
        self.assertTrue(result.wasSuccessful(), result.failures + result.errors)
        threads = sorted({name for name, _ in cls.events})
        self.assertEqual(len(threads), 2)
        for name in threads:
            self.assertTrue(name.startswith("rank "), name)
            mine = [event for thread, event in cls.events if thread == name]
            self.assertEqual(mine, ["reset", "test", "reset"])


class TestWorldSizeChoice(TestCase):
    def test_cpu_world_size_is_two_and_accelerators_count(self):
        with mock.patch.object(devices, "accelerator_type", return_value=None):
            self.assertEqual(fsdp_thread_case.fsdp_thread_world_size(), 2)
        with mock.patch.object(devices, "accelerator_type", return_value="cuda"), \
                mock.patch.object(devices, "device_count", return_value=3):
            self.assertEqual(fsdp_thread_case.fsdp_thread_world_size(), 3)
