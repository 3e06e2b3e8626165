"""Self-tests of ``cpu_compat``: the CPU work-arounds are needed, work, and are no-ops elsewhere.

Compiler collectives: on 2 CPU ranks each of the three torch 2.13 failures is reproduced
without (part of) the work-around, and with the harness's per-rank init the same compile
runs its collective and lets ranks that saw different sizes agree on a dynamic graph.
FSDP: without ``fsdp_device_id()`` a CPU module is refused, with it FSDP matches eager.
If a torch release fixes one of the failures, the matching test fails and says so: the
work-around can then be narrowed.
"""

import inspect
from unittest import mock

import torch
import torch._dynamo
import torch._dynamo.config
import torch._dynamo.utils
import torch.distributed as dist
from torch._dynamo.device_interface import CpuInterface
from torch._dynamo.testing import CompileCounter

from torch_testing_ext import cpu_compat, devices
from torch_testing_ext._engine.skips.skip_checks import skip_if
from torch_testing_ext.common_distributed import (
    MultiProcessTestCase,
    dynamo_dist_per_rank_init,
    init_single_process_group,
    rendezvous_init_method,
    requires_gloo,
)
from torch_testing_ext.common_utils import TestCase

from fixtures.fake_devices import pretend_accelerator

CPU_ONLY = devices.accelerator_type() is None
cpu_only = skip_if(not CPU_ONLY, "cpu_compat's work-arounds act only on CPU-only machines")
TORCH_FIXED = "torch no longer fails here; cpu_compat's work-around may be unnecessary"


def _compile_rank_dependent(rank):
    """Compile ``x.sum()`` on an input whose size depends on the rank, then on a third size.

    With working compiler collectives the ranks exchange their sizes while tracing, see that
    they differ and compile one dynamic graph: the second call does not recompile.
    """
    counter = CompileCounter()

    @torch.compile(backend=counter)
    def f(x):
        return x.sum() * 2

    f(torch.randn(4 + rank))
    f(torch.randn(7 + rank))
    return counter


@requires_gloo()
@cpu_only
class TestCompilerCollectivesOnCpu(MultiProcessTestCase):
    world_size = 2

    def _init_group(self, backend):
        dist.init_process_group(backend, init_method=rendezvous_init_method(), rank=self.rank,
                                world_size=self.world_size)
        torch._dynamo.reset()  # Dynamo keeps its compile group in a module global

    @torch._dynamo.config.patch(enable_compiler_collectives=True)
    def test_plain_gloo_fails_without_work_around(self):
        self._init_group("gloo")
        with self.assertRaisesRegex(Exception, "expected str instance, torch.device found",
                                    msg=TORCH_FIXED):
            _compile_rank_dependent(self.rank)

    @torch._dynamo.config.patch(enable_compiler_collectives=True)
    def test_cpu_gloo_alone_fails(self):
        self._init_group("cpu:gloo")
        with self.assertRaisesRegex(Exception, "integer modulo by zero", msg=TORCH_FIXED):
            _compile_rank_dependent(self.rank)

    @torch._dynamo.config.patch(enable_compiler_collectives=True)
    def test_cpu_gloo_with_device_count_only_fails(self):
        self._init_group("cpu:gloo")
        with mock.patch.object(torch.accelerator, "device_count", lambda: 1), \
                self.assertRaises(Exception, msg=TORCH_FIXED) as caught:
            _compile_rank_dependent(self.rank)
        self.assertIn("NotImplementedError", f"{caught.exception!r} {caught.exception}")

    @torch._dynamo.config.patch(enable_compiler_collectives=True)
    def test_per_rank_init_makes_compiler_collectives_work(self):
        with dynamo_dist_per_rank_init(self.rank, self.world_size):
            self.assertEqual(dist.get_backend(), "cpu:gloo")
            self.assertEqual(torch.accelerator.device_count(), 1)
            torch._dynamo.utils.compilation_time_metrics.clear()
            counter = _compile_rank_dependent(self.rank)
            self.assertIn("compiler_collective", torch._dynamo.utils.compilation_time_metrics)
            self.assertEqual(counter.frame_count, 1)
        # Everything is put back when the block ends.
        self.assertEqual(torch.accelerator.device_count(), 0)
        with self.assertRaises(NotImplementedError):
            CpuInterface.device(0)

    def test_without_compiler_collectives_nothing_is_changed(self):
        with dynamo_dist_per_rank_init(self.rank, self.world_size):
            self.assertEqual(dist.get_backend(), "gloo")
            self.assertEqual(torch.accelerator.device_count(), 0)
            torch._dynamo.utils.compilation_time_metrics.clear()
            counter = _compile_rank_dependent(self.rank)
            self.assertNotIn("compiler_collective", torch._dynamo.utils.compilation_time_metrics)
            self.assertEqual(counter.frame_count, 2)  # each rank recompiles for itself


class TestCompilerCollectivesWorkAroundScope(TestCase):
    def _assert_untouched(self):
        original_count = torch.accelerator.device_count
        original_device = inspect.getattr_static(CpuInterface, "device")
        with cpu_compat.compiler_collectives_on_cpu():
            self.assertIs(torch.accelerator.device_count, original_count)
            self.assertIs(inspect.getattr_static(CpuInterface, "device"), original_device)

    def test_no_op_when_flag_is_off(self):
        with torch._dynamo.config.patch(enable_compiler_collectives=False):
            self.assertFalse(cpu_compat.compiler_collectives_need_help())
            self.assertEqual(cpu_compat.process_group_backend("gloo"), "gloo")
            self._assert_untouched()

    def test_no_op_with_an_accelerator(self):
        with torch._dynamo.config.patch(enable_compiler_collectives=True), pretend_accelerator("cuda", 2):
            self.assertFalse(cpu_compat.compiler_collectives_need_help())
            self.assertEqual(cpu_compat.process_group_backend("gloo"), "gloo")
            self.assertEqual(cpu_compat.process_group_backend("nccl"), "nccl")
            self._assert_untouched()

    @cpu_only
    def test_applied_and_restored_on_cpu(self):
        with torch._dynamo.config.patch(enable_compiler_collectives=True):
            self.assertTrue(cpu_compat.compiler_collectives_need_help())
            self.assertEqual(cpu_compat.process_group_backend("gloo"), "cpu:gloo")
            with cpu_compat.compiler_collectives_on_cpu():
                self.assertEqual(torch.accelerator.device_count(), 1)
                with CpuInterface.device(0):
                    pass
            self.assertEqual(torch.accelerator.device_count(), 0)
            with self.assertRaises(NotImplementedError):
                CpuInterface.device(0)


class TestFsdpDeviceId(TestCase):
    def test_value(self):
        self.assertEqual(cpu_compat.fsdp_device_id(),
                         torch.device("cpu") if CPU_ONLY else None)
        with pretend_accelerator("cuda", 2):
            self.assertIsNone(cpu_compat.fsdp_device_id())

    @requires_gloo()
    @cpu_only
    def test_fsdp_on_cpu_needs_it_and_works_with_it(self):
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        init_single_process_group("gloo")
        self.addCleanup(dist.destroy_process_group)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
        x = torch.randn(3, 4)
        expected = model(x)
        with self.assertRaisesRegex(RuntimeError, "FSDP needs a non-CPU accelerator device",
                                    msg=TORCH_FIXED):
            FSDP(model, use_orig_params=True)
        fsdp_model = FSDP(model, use_orig_params=True, device_id=cpu_compat.fsdp_device_id())
        self.assertEqual(fsdp_model(x), expected)
