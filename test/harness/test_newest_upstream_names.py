"""Self-tests of the names upstream's newest harness (torch 2.14-2.15 ``common_distributed``
and ``common_fsdp``) added: each with upstream's meaning, on this CPU machine and, where the
answer depends on the machine, with the machine faked."""

import os
import pathlib
import resource
import stat
import sys
import tempfile
import types
import unittest
from importlib.machinery import ModuleSpec
from unittest import mock

import torch.multiprocessing as mp

from torch_testing_ext import common_distributed, common_fsdp
from torch_testing_ext._engine.kept import torchcomms_test_case
from torch_testing_ext._engine.process_groups import torchcomms_group
from torch_testing_ext._engine.skips import distributed_skips
from torch_testing_ext._engine.skips.skip_checks import pending_skip
from torch_testing_ext.common_distributed import (
    ACCELERATOR_DIST_BACKENDS,
    DDP_RANK_DEVICES,
    DEFAULT_WORLD_SIZE,
    TIMEOUT_DEFAULT,
    TIMEOUT_OVERRIDE,
    C10dTorchCommsTestBase,
    MultiProcessTestCase,
    core_dumps_disabled,
    evaluate_platform_supports_symm_mem,
    get_timeout,
    has_efa,
    requires_mpi,
    requires_xccl,
    retrieve_result_from_completion_queue,
    skip_if_rocm_ver_atleast_multiprocess,
)
from torch_testing_ext.common_fsdp import DEVICE_COUNT, DEVICE_TYPE, FSDPTest, FSDPTestContinuous, FSDPTestMixin
from torch_testing_ext.common_utils import TestCase


def skip_reason(decorated):
    """The reason a test method ``decorated`` skips with, decided as the parent decides it."""
    cls = type("Case", (TestCase,), {"test_x": decorated})
    return pending_skip(cls("test_x"))


def _body(self):
    pass


def _put(result_queue, value):
    result_queue.put(value)


def _exit_quietly():
    pass


class TestBackendDecorators(TestCase):
    def test_requires_xccl_and_mpi_skip_saying_which_backend_is_missing(self):
        with mock.patch.object(distributed_skips.devices, "backend_available", return_value=False):
            self.assertEqual(skip_reason(requires_xccl()(_body)), "c10d was not compiled with the XCCL backend")
            self.assertEqual(skip_reason(requires_mpi()(_body)), "c10d was not compiled with the MPI backend")
        with mock.patch.object(distributed_skips.devices, "backend_available", return_value=True):
            self.assertIsNone(skip_reason(requires_xccl()(_body)))
            self.assertIsNone(skip_reason(requires_mpi()(_body)))

    def test_rocm_at_least_skips_only_rocm_at_or_past_the_version(self):
        self.assertIsNone(skip_reason(skip_if_rocm_ver_atleast_multiprocess((6, 4))(_body)))
        with mock.patch.object(distributed_skips, "TEST_WITH_ROCM", True), \
                mock.patch.object(distributed_skips.devices, "torch_rocm_version", return_value=(6, 4)):
            self.assertEqual(skip_reason(skip_if_rocm_ver_atleast_multiprocess((6, 4))(_body)),
                             "skip_if_rocm_ver_atleast_multiprocess: known failure on ROCm (6, 4) (>= (6, 4))")
            self.assertIsNone(skip_reason(skip_if_rocm_ver_atleast_multiprocess((7, 0))(_body)))
            self.assertIsNone(skip_reason(skip_if_rocm_ver_atleast_multiprocess()(_body)))

    def test_platform_facts(self):
        self.assertEqual(ACCELERATOR_DIST_BACKENDS, ["nccl", "xccl", "hccl"])
        self.assertEqual(DDP_RANK_DEVICES, ["cuda", "xpu"])
        self.assertFalse(evaluate_platform_supports_symm_mem())  # no CUDA device here
        with mock.patch.object(distributed_skips.devices, "accelerator_type", return_value="cuda"):
            self.assertTrue(evaluate_platform_supports_symm_mem())

    def test_has_efa_asks_fi_info(self):
        with tempfile.TemporaryDirectory() as folder:
            for status, expected in ((0, True), (1, False)):
                fi_info = pathlib.Path(folder, "fi_info")
                fi_info.write_text(f"#!/bin/sh\nexit {status}\n")
                fi_info.chmod(fi_info.stat().st_mode | stat.S_IXUSR)
                has_efa.cache_clear()
                with mock.patch.dict(os.environ, {"PATH": folder}):
                    self.assertIs(has_efa(), expected)
            has_efa.cache_clear()
            with mock.patch.dict(os.environ, {"PATH": os.path.join(folder, "empty")}):
                self.assertFalse(has_efa())  # no fi_info at all
        has_efa.cache_clear()


class TestDistributedAids(TestCase):
    def test_default_world_size_and_timeouts(self):
        self.assertEqual(DEFAULT_WORLD_SIZE, 4)
        self.assertEqual(MultiProcessTestCase.world_size, DEFAULT_WORLD_SIZE)
        self.assertEqual(TIMEOUT_OVERRIDE["test_ddp_uneven_inputs"], 400)
        self.assertEqual(get_timeout("m.C.test_ddp_uneven_inputs"), 400)
        self.assertEqual(get_timeout("m.C.test_other"), TIMEOUT_DEFAULT)

    def test_result_from_a_process_that_put_one(self):
        context = mp.get_context("spawn")
        results = context.Queue()
        process = context.Process(target=_put, args=(results, {"ok": 1}))
        process.start()
        try:
            self.assertEqual(retrieve_result_from_completion_queue(process, results, timeout=60), {"ok": 1})
        finally:
            process.join(60)

    def test_a_process_that_ended_without_a_result_gives_an_error_instance(self):
        context = mp.get_context("spawn")
        results = context.Queue()
        process = context.Process(target=_exit_quietly)
        process.start()
        process.join(60)
        with mock.patch.object(results, "get", side_effect=__import__("queue").Empty):
            found = retrieve_result_from_completion_queue(process, results, timeout=40)
        self.assertIsInstance(found, RuntimeError)
        self.assertIn("exited with 0 and put no result", str(found))

    def test_a_timeout_gives_an_error_instance(self):
        alive = mock.Mock(is_alive=mock.Mock(return_value=True))
        results = mock.Mock(get=mock.Mock(side_effect=__import__("queue").Empty))
        clock = iter([0.0, 5.0, 11.0])
        with mock.patch.object(common_distributed_aids().time, "monotonic", side_effect=lambda: next(clock)):
            found = retrieve_result_from_completion_queue(alive, results, timeout=10)
        self.assertIsInstance(found, RuntimeError)
        self.assertIn("within 10 s", str(found))
        self.assertEqual(results.get.call_args.kwargs, {"timeout": 10.0})  # max(10, min(120, 10 / 4))

    def test_core_dumps_disabled_inside_and_restored_after(self):
        before = resource.getrlimit(resource.RLIMIT_CORE)
        with self.assertRaisesRegex(ValueError, "body"):
            with core_dumps_disabled():
                self.assertEqual(resource.getrlimit(resource.RLIMIT_CORE)[0], 0)
                raise ValueError("body")
        self.assertEqual(resource.getrlimit(resource.RLIMIT_CORE), before)

    def test_tmp_dir_is_the_module_state_upstream_keeps(self):
        self.assertIsNone(common_distributed.tmp_dir)
        with mock.patch.dict(os.environ):
            common_distributed.initialize_temp_directories()
            try:
                made = common_distributed.tmp_dir
                self.assertIsInstance(made, tempfile.TemporaryDirectory)
                self.assertEqual(os.environ["TEMP_DIR"], made.name)
                self.assertTrue(os.path.isdir(os.path.join(made.name, "barrier")))
            finally:
                common_distributed.cleanup_temp_dir()
        self.assertIsNone(common_distributed.tmp_dir)
        self.assertFalse(os.path.exists(made.name))
        with self.assertRaisesRegex(AttributeError, "no attribute 'no_such_name'"):
            common_distributed.no_such_name  # noqa: B018


def common_distributed_aids():
    from torch_testing_ext._engine.distributed_bases import upstream_aids

    return upstream_aids


def fake_torchcomms(built):
    module = types.ModuleType("torchcomms")
    module.__spec__ = ModuleSpec("torchcomms", loader=None)
    module.is_backend_built = lambda name: name in built
    return module


def torchcomms_case():
    """A class on the base (made here, so that pytest does not collect it as a test)."""

    class TorchcommsCase(C10dTorchCommsTestBase):
        world_size = 2

        def test_x(self):
            raise AssertionError("a rank ran although torchcomms is not installed")

    return TorchcommsCase


class TestTorchcomms(TestCase):
    def test_flags_and_backends_follow_the_installed_torchcomms(self):
        self.assertEqual(torchcomms_group.torchcomms_backends_built(), frozenset())  # not installed here
        for flag in ("GLOO", "XCCL", "NCCL", "RCCL", "NCCLX", "RCCLX"):
            self.assertIs(getattr(common_distributed, f"TORCHCOMM_HAS_{flag}"), False)
        with mock.patch.dict(sys.modules, {"torchcomms": fake_torchcomms({"gloo", "ncclx"})}):
            self.assertEqual(torchcomms_group.torchcomms_backends_built(), frozenset({"gloo", "ncclx"}))

    def test_backend_follows_the_device(self):
        backend = C10dTorchCommsTestBase.backend
        self.assertEqual([backend(d) for d in ("cuda:1", "xpu", "hpu", "cpu")], ["nccl", "xccl", "hccl", "gloo"])
        self.assertEqual(C10dTorchCommsTestBase.backend_str(), "gloo")  # a CPU machine
        self.assertEqual(C10dTorchCommsTestBase.world_size, DEFAULT_WORLD_SIZE)

    def test_without_torchcomms_the_class_skips_saying_so_and_starts_no_rank(self):
        result = unittest.TestResult()
        unittest.TestSuite([torchcomms_case()("test_x")]).run(result)
        self.assertEqual((result.testsRun, len(result.failures), len(result.errors)), (0, 0, 0))
        self.assertEqual([reason for _, reason in result.skipped], [torchcomms_test_case.TORCHCOMMS_NOT_INSTALLED])

    def test_a_backend_torchcomms_lacks_skips_the_test_naming_it(self):
        case = torchcomms_case()("test_x")
        with mock.patch.object(torchcomms_group, "torchcomms_backends_built", return_value=frozenset({"nccl"})):
            with self.assertRaisesRegex(unittest.SkipTest, "torchcomms gloo backend is not available"):
                case._skip_if_backend_unavailable("cpu")
            case._skip_if_backend_unavailable("cuda")  # built: no skip


class TestFsdpFacts(TestCase):
    def test_device_facts_of_a_cpu_machine(self):
        self.assertEqual((DEVICE_TYPE, DEVICE_COUNT), ("cpu", 1))
        self.assertEqual(common_fsdp.DISTRIBUTED_BACKEND, "gloo")

    def test_the_mixin_is_what_both_bases_share(self):
        for base in (FSDPTest, FSDPTestContinuous):
            self.assertTrue(issubclass(base, FSDPTestMixin), base)
        case = type("Case", (FSDPTestMixin, TestCase), {"test_x": _body})("test_x")
        model = types.SimpleNamespace(cpu_offload="offload", backward_prefetch=None, forward_prefetch=True)
        case._check_cpu_offload(model, "offload")
        case._check_forward_prefetch(model, True)
        with self.assertRaises(AssertionError):
            case._check_backward_prefetch(model, "BACKWARD_PRE")
        self.assertTrue(callable(case.run_subtests))


if __name__ == "__main__":
    from torch_testing_ext.common_utils import run_tests

    run_tests()
