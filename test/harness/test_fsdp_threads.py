"""Self-tests of ``FSDPTestMultiThread``: FSDP's ranks as threads of one process.

``fully_shard`` models train on 2 rank threads (CPU, the ``threaded`` backend) and match an
unsharded reference trained in the same thread step for step (``check_sharded_parity``),
inside ``run_subtests``; the world size (2 on CPU, a class's own), the Dynamo resets around
each rank's test, and, running ``fixtures/fsdp_thread_cases.py`` in-process, a failing rank
thread (or failing subtest combination) named with its message, and no rank thread left.
"""

import copy
import sys
import threading
import unittest
from unittest import mock

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor

from torch_testing_ext import devices
from torch_testing_ext.common_fsdp import (
    MLPStack,
    FSDPTestMultiThread,
    check_sharded_parity,
    get_devtype,
)
from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.fsdp_cases import fsdp_thread_case

from fixtures import fsdp_thread_cases

CPU_ONLY = devices.accelerator_type() is None
_build_lock = threading.Lock()


def run_case(cls, name):
    result = unittest.TestResult()
    cls(name).run(result)
    return result


def rank_threads_alive():
    return [t.name for t in threading.enumerate() if t.name.startswith("rank ")]


class TestFSDPThreadRanks(FSDPTestMultiThread):
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

    def test_run_subtests_runs_every_combination_on_every_rank(self):
        seen = []
        self.run_subtests({"a": [1, 2], "b": ["x", "y"]},
                          lambda a, b, c: seen.append((a, b, c)), c=self.rank)
        r = self.rank
        self.assertEqual(seen, [(1, "x", r), (1, "y", r), (2, "x", r), (2, "y", r)])
        everyone = [None] * self.world_size
        dist.all_gather_object(everyone, seen)
        self.assertEqual([len(s) for s in everyone], [4] * self.world_size)


class TestFourRankThreads(FSDPTestMultiThread):
    world_size = 4  # a class's own world size wins over the device count

    def test_class_world_size(self):
        self.assertEqual((self.world_size, dist.get_world_size()), (4, 4))
        model = MLPStack(8)
        fully_shard(model)
        weight = model[1].in_proj.weight  # 32 rows
        self.assertEqual((weight.shape, weight.to_local().shape), ((32, 8), (8, 8)))


class TestFullyShardOnThreads(FSDPTestMultiThread):
    def test_train_parity_with_unsharded_reference(self):
        self.run_subtests({"reshard_after_forward": [True, False]}, self._train_parity)

    def _train_parity(self, reshard_after_forward):
        """Adam steps of a sharded ``MLPStack`` (each rank its slice of a batch) against an
        unsharded copy trained in this rank thread on the whole batch."""
        device = get_devtype()
        with _build_lock:  # the rank threads share one RNG: the same model on every rank
            torch.manual_seed(42)
            model = MLPStack(8).to(device)
        reference = copy.deepcopy(model)
        for mlp in model:
            fully_shard(mlp, reshard_after_forward=reshard_after_forward)
        fully_shard(model, reshard_after_forward=reshard_after_forward)
        optim = torch.optim.Adam(model.parameters(), lr=1e-2)
        ref_optim = torch.optim.Adam(reference.parameters(), lr=1e-2)
        check_sharded_parity(self, reference, model)
        batches = torch.Generator().manual_seed(100)  # this thread's own: the same batches
        for _ in range(3):
            batch = torch.randn(2 * self.world_size, 8, generator=batches).to(device)
            parts = batch.chunk(self.world_size)
            ref_losses = [reference(part).sum() for part in parts]
            (sum(ref_losses) / self.world_size).backward()  # FSDP averages over ranks
            loss = model(parts[self.rank]).sum()
            loss.backward()
            self.assertEqual(loss, ref_losses[self.rank])
            check_sharded_parity(self, reference, model)
            for opt in (optim, ref_optim):
                opt.step()
                opt.zero_grad()
        check_sharded_parity(self, reference, model)
        self.assertIsInstance(model[0].in_proj.weight, DTensor)
        self.assertEqual(model[0].in_proj.weight.device_mesh.size(), self.world_size)


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


if __name__ == "__main__":
    run_tests()
