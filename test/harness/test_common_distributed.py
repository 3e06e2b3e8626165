"""Self-tests of the upstream names ``common_distributed`` offers besides MultiProcessTestCase:
DistributedTestBase, run_subtests, with_dist_debug_levels, captured_output,
verify_ddp_error_logged, create_device, init_multigpu_helper, requires_ddp_rank, and the skip
decorators skip_if_no_gpu, skip_if_small_worldsize, skip_if_odd_worldsize,
skip_if_rocm_multiprocess and skip_if_win32 (all decided before any rank starts)."""

import contextlib
import os
import sys
import unittest
from unittest import mock

import torch
import torch.distributed as dist

from torch_testing_ext import devices
from torch_testing_ext._engine.fresh import supervisor
from torch_testing_ext._engine.skips import distributed_skips
from torch_testing_ext._engine.skips.skip_checks import pending_skip
from torch_testing_ext.common_distributed import (
    DistributedTestBase,
    MultiProcessTestCase,
    captured_output,
    create_device,
    init_multigpu_helper,
    require_n_gpus_for_nccl_backend,
    requires_ddp_rank,
    run_subtests,
    skip_if_no_gpu,
    skip_if_odd_worldsize,
    skip_if_rocm_multiprocess,
    skip_if_small_worldsize,
    skip_if_win32,
    verify_ddp_error_logged,
    with_dist_debug_levels,
)
from torch_testing_ext.common_utils import TestCase

from fixtures import distributed_ranks, rank_hooks
from fixtures.fake_devices import pretend_accelerator
from fixtures.runs import run_case


def skip_reason(decorator, world_size=2):
    """Why a MultiProcessTestCase test with ``decorator`` and ``world_size`` would skip."""
    cls = type("Cases", (MultiProcessTestCase,), {"world_size": world_size,
                                                   "test_x": decorator(lambda self: None)})
    return pending_skip(cls("test_x"))


class TestDistributedTestBase(TestCase):
    def test_world_size_2_on_gloo(self):
        result = run_case(distributed_ranks.GroupPerDeviceCPU, "test_all_reduce_cpu")
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(result.testsRun, 1)

    def test_with_dtypes(self):
        for dtype in ("float32", "int64"):
            result = run_case(distributed_ranks.GroupPerDeviceCPU, f"test_broadcast_cpu_{dtype}")
            self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
            self.assertEqual(rank_hooks.take_logs(f"test_broadcast_cpu_{dtype}"), {0: [f"torch.{dtype}"],
                                                                       1: [f"torch.{dtype}"]})

    def test_a_failing_rank_fails_the_test(self):
        result = run_case(distributed_ranks.GroupPerDeviceCPU, "test_rank_1_disagrees_cpu")
        self.assertEqual(len(result.failures), 1, result.errors)
        self.assertIn("rank 1 failed", result.failures[0][1])

    def test_backend_is_a_method_of_the_device(self):
        test = DistributedTestBase()
        self.assertEqual([test.backend(d) for d in ("cpu", "cuda:1", "xpu", "hpu")],
                         ["gloo", "nccl", "xccl", "hccl"])

    def test_rank_to_device(self):
        test = type("Two", (DistributedTestBase,), {"world_size": 3})()
        self.assertEqual(test.rank_to_device("cpu"), {0: [0], 1: [0], 2: [0]})
        with pretend_accelerator("cuda", 2):
            self.assertEqual(test.rank_to_device("cuda"), {0: [0], 1: [1], 2: [0]})

    def test_device_type_in_the_test_process(self):
        self.assertEqual(DistributedTestBase().device_type, devices.device_type())


class TestRunSubtests(TestCase):
    def test_every_combination_in_one_process(self):
        seen = []

        def record(*args, **kwargs):
            seen.append((args, kwargs))

        class Records(TestCase):
            def test_x(self):
                run_subtests(self, {"a": [1, 2], "b": ["x", "y"]}, record, "positional", k=3)

        with mock.patch.object(torch.compiler, "reset") as reset:
            result = run_case(Records, "test_x")
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(seen, [(("positional",), {"k": 3, "a": a, "b": b})
                                for a in (1, 2) for b in ("x", "y")])
        self.assertEqual(reset.call_count, 8)  # before and after each combination

    def test_each_failing_combination_is_reported(self):
        class Cases(TestCase):
            def test_x(self):
                run_subtests(self, {"n": [1, 2, 3]}, lambda n: self.assertEqual(n % 2, 1))

        result = run_case(Cases, "test_x")
        self.assertEqual(len(result.failures), 1)
        self.assertIn("(n=2)", str(result.failures[0][0]))

    @unittest.skipIf(sys.version_info < (3, 11), "exception notes need Python 3.11")
    def test_a_failing_combination_is_named_in_its_error(self):
        def check(n, scale):
            self.assertEqual(n * scale, 2)

        with self.assertRaises(AssertionError) as caught:
            with mock.patch.object(self, "subTest", lambda **_: contextlib.nullcontext()):
                run_subtests(self, {"n": [1], "scale": [2, 3]}, check)
        self.assertEqual(caught.exception.__notes__, ["in subtest n=1, scale=3"])

    def test_a_barrier_follows_each_combination_in_a_group(self):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            with mock.patch.object(dist, "barrier", wraps=dist.barrier) as barrier:
                run_subtests(self, {"n": [1, 2, 3]}, lambda n: None)
            self.assertEqual(barrier.call_count, 3)
        finally:
            dist.destroy_process_group()

    def test_on_ranks(self):
        result = run_case(distributed_ranks.Subtests, "test_every_combination")
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        result = run_case(distributed_ranks.Subtests, "test_a_failing_combination_fails_the_rank")
        self.assertEqual(len(result.failures), 1, result.errors)
        self.assertIn("combination n=2 on rank 0", result.failures[0][1])


class TestDebugLevels(TestCase):
    def test_one_run_per_level_and_the_variable_restored(self):
        seen = []

        @with_dist_debug_levels(["INFO", "DETAIL"])
        def body(x):
            seen.append((os.environ["TORCH_DISTRIBUTED_DEBUG"], dist.get_debug_level(), x))
            return len(seen)

        with mock.patch.dict(os.environ, {"TORCH_DISTRIBUTED_DEBUG": "OFF"}):
            dist.set_debug_level_from_env()
            self.assertEqual(body(7), 2)
            self.assertEqual(seen, [("INFO", dist.DebugLevel.INFO, 7), ("DETAIL", dist.DebugLevel.DETAIL, 7)])
            self.assertEqual(os.environ["TORCH_DISTRIBUTED_DEBUG"], "OFF")
            self.assertEqual(dist.get_debug_level(), dist.DebugLevel.OFF)

    def test_an_unset_variable_is_unset_again_after_a_failure(self):
        @with_dist_debug_levels(["DETAIL"])
        def body():
            raise ValueError("boom")

        with mock.patch.dict(os.environ):
            os.environ.pop("TORCH_DISTRIBUTED_DEBUG", None)
            with self.assertRaises(ValueError):
                body()
            self.assertNotIn("TORCH_DISTRIBUTED_DEBUG", os.environ)
        self.assertEqual(dist.get_debug_level(), dist.DebugLevel.OFF)

    def test_on_ranks(self):
        result = run_case(distributed_ranks.DebugLevels, "test_each_level")
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)


class TestSmallHelpers(TestCase):
    def test_captured_output(self):
        before = sys.stdout, sys.stderr
        with captured_output() as (out, err):
            print("to stdout")
            sys.stderr.write("to stderr\n")
        self.assertEqual((out.getvalue(), err.getvalue()), ("to stdout\n", "to stderr\n"))
        self.assertEqual((sys.stdout, sys.stderr), before)

    def test_verify_ddp_error_logged(self):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            model = torch.nn.parallel.DistributedDataParallel(distributed_ranks.HalfUsed())
            with self.assertRaisesRegex(AssertionError, "DDP logged no error"):
                verify_ddp_error_logged(model, "anything")
            model(torch.ones(1, 2)).sum().backward()
            with self.assertRaises(RuntimeError) as raised:
                model(torch.ones(1, 2))
            verify_ddp_error_logged(model, str(raised.exception))
            verify_ddp_error_logged(model, "Expected to have finished reduction"
                                           "\nException raised from reducer.cpp (a C++ stack)")
            with self.assertRaisesRegex(AssertionError, "DDP logged a different error"):
                verify_ddp_error_logged(model, "some other error")
            del model  # before its group goes (see process_groups/teardown.py)
        finally:
            dist.destroy_process_group()

    def test_create_device(self):
        self.assertIsInstance(create_device(), dist.ProcessGroupGloo.Device)
        self.assertIsInstance(create_device(interface="lo", lazy_init=True), dist.ProcessGroupGloo.Device)

    def test_init_multigpu_helper(self):
        with pretend_accelerator(None):
            self.assertEqual(init_multigpu_helper(2, "gloo"), {0: [], 1: []})
        with pretend_accelerator("cuda", 4):
            self.assertEqual(init_multigpu_helper(2, "nccl"), {0: [0], 1: [1]})
            self.assertEqual(init_multigpu_helper(8, "nccl"), {rank: [] for rank in range(8)})
        with pretend_accelerator("xpu", 8):
            self.assertEqual(init_multigpu_helper(4, "xccl"), {rank: [rank] for rank in range(4)})

    def test_requires_ddp_rank(self):
        with pretend_accelerator(None):
            self.assertEqual([requires_ddp_rank(d) for d in ("cpu", "cuda", "xpu", "cuda:1", "hpu")],
                             [False, True, True, True, False])
        with pretend_accelerator("hpu", 2):
            self.assertTrue(requires_ddp_rank("hpu"))


class TestSkipDecorators(TestCase):
    def test_skip_if_no_gpu_on_cpu_says_why(self):
        with pretend_accelerator(None):
            reason = skip_reason(skip_if_no_gpu)
        self.assertIn("not meaningful on CPU ranks", reason)

    def test_skip_if_no_gpu_needs_a_device_per_rank(self):
        with pretend_accelerator("cuda", 1):
            self.assertEqual(skip_reason(skip_if_no_gpu), "Need at least 2 CUDA devices")
        with pretend_accelerator("xpu", 2):
            self.assertIsNone(skip_reason(skip_if_no_gpu))

    def test_require_n_gpus_for_nccl_backend(self):
        with pretend_accelerator(None):
            self.assertIsNone(skip_reason(require_n_gpus_for_nccl_backend(2, "gloo")))
            self.assertEqual(skip_reason(require_n_gpus_for_nccl_backend(2, "nccl")),
                             "Need at least 2 CUDA devices")
        with pretend_accelerator("cuda", 2):
            self.assertIsNone(skip_reason(require_n_gpus_for_nccl_backend(2, "nccl")))
            self.assertIsNotNone(skip_reason(require_n_gpus_for_nccl_backend(4, "nccl")))
        with pretend_accelerator("xpu", 8):
            self.assertIsNotNone(skip_reason(require_n_gpus_for_nccl_backend(2, "nccl")))

    def test_world_size_skips(self):
        with mock.patch.dict(os.environ):
            os.environ.pop("BACKEND", None)
            self.assertIn("small world size", skip_reason(skip_if_small_worldsize, world_size=4))
            self.assertIsNone(skip_reason(skip_if_small_worldsize, world_size=8))
            self.assertIn("odd world size", skip_reason(skip_if_odd_worldsize, world_size=3))
            self.assertIsNone(skip_reason(skip_if_odd_worldsize, world_size=2))
            os.environ["BACKEND"] = "mpi"
            self.assertIsNone(skip_reason(skip_if_small_worldsize, world_size=4))
            self.assertIsNone(skip_reason(skip_if_odd_worldsize, world_size=3))

    def test_platform_skips(self):
        if sys.platform != "win32":
            self.assertIsNone(skip_reason(skip_if_win32()))
        with mock.patch.object(sys, "platform", "win32"):
            decorator = skip_if_win32()
        self.assertEqual(skip_reason(decorator), "This unit test case is not supported on Windows platform")
        with mock.patch.object(distributed_skips, "TEST_WITH_ROCM", True):
            self.assertEqual(skip_reason(skip_if_rocm_multiprocess), "Test skipped for ROCm")
        with mock.patch.object(distributed_skips, "TEST_WITH_ROCM", False):
            self.assertIsNone(skip_reason(skip_if_rocm_multiprocess))

    def test_decided_before_any_rank_starts(self):
        class Cases(MultiProcessTestCase):
            world_size = 3

            @skip_if_odd_worldsize
            def test_x(self):
                raise AssertionError("must not run")

        with mock.patch.object(supervisor, "run_ranks", side_effect=AssertionError("a rank started")):
            result = run_case(Cases, "test_x")
        self.assertEqual([reason for _, reason in result.skipped], ["Skipped due to odd world size (3)."])
