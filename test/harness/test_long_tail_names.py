"""Self-tests of the long tail of upstream names (issue #22): the flags, decorators and helpers
of ``common_utils``, ``common_distributed``, ``common_cuda`` and ``common_device_type`` that
upstream test files import beyond the core classes. Each row of a table is one case of
upstream's meaning; skips are checked before any rank starts, with the reason they give."""

import contextlib
import dataclasses
import gc
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import types
import unittest
import warnings
from unittest import mock

import torch
import torch.distributed as dist
from torch import nn
from torch.autograd.gradcheck import GradcheckError

from torch_testing_ext import common_cuda, common_device_type, common_distributed, common_utils, devices
from torch_testing_ext._engine._torch_private import dynamo_config_value
from torch_testing_ext._engine.device_type import capabilities, float8_types
from torch_testing_ext._engine.fresh import supervisor
from torch_testing_ext._engine.process_groups import tcp_store
from torch_testing_ext._engine.skips import distributed_skips, platform_skips
from torch_testing_ext._engine.skips.skip_checks import pending_skip
from torch_testing_ext._engine.testcase import testing_aids
from torch_testing_ext.common_device_type import (
    Capability,
    CPUTestBase,
    instantiate_device_type_tests,
    requires_capabilities,
    skipCPUIf,
    skipMeta,
    skipXPUIf,
)
from torch_testing_ext.common_distributed import (
    MultiProcessTestCase,
    SaveForwardInputsModel,
    at_least_x_gpu,
    create_tcp_store,
    get_required_world_size,
    get_timeout,
    require_world_size,
    requires_multicast_support,
    requires_nccl_shrink,
    requires_nccl_version,
    requires_ucc,
    simple_sparse_reduce_tests,
    skip_if_rocm_arch_multiprocess,
    skip_if_rocm_ver_lessthan_multiprocess,
    sm_is_or_higher_than,
    tp_transports,
    with_nccl_blocking_wait,
)
from torch_testing_ext.common_utils import (
    FILE_SCHEMA,
    MI300_ARCH,
    DeterministicGuard,
    NoTest,
    TestCase,
    _assertGradAndGradgradChecks,
    check_leaked_tensors,
    device_sleep,
    dtype2prec_DONTUSE,
    get_cycles_per_ms,
    getRocmVersion,
    gradcheck,
    isRocmArchAnyOf,
    requires_accelerator,
    requires_cuda,
    requires_cuda_p2p_access,
    requires_cuda_python_bindings,
    runOnRocmArch,
    skip_if_pytest,
    skipIfRocmArch,
    skipIfRocmVersionLessThan,
    suppress_warnings,
    wrapSwapTensorsTest,
)
from torch_testing_ext.logging_utils import LoggingTestCase

from fixtures.fake_devices import pretend_accelerator, pretend_facts
from fixtures.runs import checkout_env, run_case


def skip_reason(decorated, **attrs):
    """The reason a test method ``decorated`` skips with, decided as the parent decides it."""
    cls = type("Case", (TestCase,), {"test_x": decorated, **attrs})
    return pending_skip(cls("test_x"))


def _body(self):
    return "ran"


def child_values(code, env):
    """``json.loads`` of what ``code`` prints in a fresh interpreter with ``env`` on top."""
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env=checkout_env(**env), timeout=300)
    if completed.returncode != 0:
        raise AssertionError(completed.stderr[-3000:])
    return json.loads(completed.stdout.strip().splitlines()[-1])


# -- common_utils ------------------------------------------------------------------------------

class TestEnvironmentFlags(TestCase):
    # (environment, expected TEST_WITH_ASAN, TEST_WITH_TSAN, TEST_WITH_UBSAN, IS_CI)
    ROWS = [
        ({}, [False, False, False, False]),
        ({"PYTORCH_TEST_WITH_ASAN": "1", "PYTORCH_TEST_WITH_TSAN": "1",
          "PYTORCH_TEST_WITH_UBSAN": "1", "CI": "true"}, [True, True, True, True]),
        # upstream: only "1" turns a sanitizer flag on; any non-empty CI (even 0) is CI
        ({"PYTORCH_TEST_WITH_ASAN": "true", "PYTORCH_TEST_WITH_TSAN": "0", "CI": "0"},
         [False, False, False, True]),
    ]

    def test_flags_read_at_import(self):
        code = ("import json\nfrom torch_testing_ext import common_utils as c\n"
                "print(json.dumps([c.TEST_WITH_ASAN, c.TEST_WITH_TSAN, c.TEST_WITH_UBSAN, c.IS_CI]))")
        names = ("PYTORCH_TEST_WITH_ASAN", "PYTORCH_TEST_WITH_TSAN", "PYTORCH_TEST_WITH_UBSAN", "CI")
        for env, expected in self.ROWS:
            with self.subTest(env=env):
                full = {name: None for name in names} | env
                self.assertEqual(child_values(code, full), expected)

    def test_file_schema_makes_a_file_store_url(self):
        self.assertEqual(FILE_SCHEMA, "file:///" if sys.platform == "win32" else "file://")
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "store")
            dist.init_process_group("gloo", init_method=f"{FILE_SCHEMA}{path}", rank=0, world_size=1)
            try:
                tensor = torch.ones(2)
                dist.all_reduce(tensor)
                self.assertEqual(tensor, [1.0, 1.0])
            finally:
                dist.destroy_process_group()

    def test_rocm_architectures(self):
        self.assertEqual(MI300_ARCH, ("gfx942",))
        self.assertEqual(common_utils.MI200_ARCH, ("gfx90a",))


class TestPlatformDecorators(TestCase):
    def test_requires_cuda(self):
        for has_cuda, expected in [(False, "Requires CUDA: this machine has no CUDA device"), (True, None)]:
            with self.subTest(has_cuda=has_cuda), mock.patch.object(platform_skips, "TEST_CUDA", has_cuda):
                self.assertEqual(skip_reason(requires_cuda(_body)), expected)

    def test_requires_accelerator(self):
        for has_accelerator, expected in [(False, "Requires an accelerator: this machine has none"), (True, None)]:
            with self.subTest(has_accelerator=has_accelerator), \
                    mock.patch.object(platform_skips, "TEST_ACCELERATOR", has_accelerator):
                self.assertEqual(skip_reason(requires_accelerator(_body)), expected)
                # upstream decorates classes with it: every test of the class
                cls = requires_accelerator(type("Case", (TestCase,), {"test_x": _body, "test_y": _body}))
                self.assertEqual([pending_skip(cls(name)) for name in ("test_x", "test_y")], [expected] * 2)

    def test_requires_cuda_python_bindings(self):
        # (what finding cuda.bindings gives, expected reason) -- asked when the test runs
        rows = [(None, platform_skips.CUDA_PYTHON_BINDINGS_REASON),
                (ModuleNotFoundError("No module named 'cuda'"), platform_skips.CUDA_PYTHON_BINDINGS_REASON),
                (object(), None)]
        decorated = requires_cuda_python_bindings(_body)
        for found, expected in rows:
            def find_spec(name, found=found):
                self.assertEqual(name, "cuda.bindings")
                if isinstance(found, Exception):
                    raise found
                return found

            with self.subTest(found=found), mock.patch.object(platform_skips.importlib.util, "find_spec", find_spec):
                self.assertEqual(skip_reason(decorated), expected)
        has_bindings = platform_skips._cuda_python_bindings_importable()
        self.assertEqual(skip_reason(decorated), None if has_bindings else platform_skips.CUDA_PYTHON_BINDINGS_REASON)

    def test_rocm_arch_decorators(self):
        # (ROCm build, device 0's arch, decorator, expected reason)
        rows = [
            (False, None, skipIfRocmArch(MI300_ARCH), None),
            (False, None, runOnRocmArch(MI300_ARCH), None),
            (True, "gfx942:sramecc+:xnack-", skipIfRocmArch(MI300_ARCH), "skipIfRocm: test skipped on ('gfx942',)"),
            (True, "gfx90a", skipIfRocmArch(MI300_ARCH), None),
            (True, "gfx942", runOnRocmArch(MI300_ARCH), None),
            (True, "gfx90a", runOnRocmArch(MI300_ARCH), "skipIfRocm: test only runs on ('gfx942',)"),
        ]
        for rocm, arch, decorator, expected in rows:
            properties = types.SimpleNamespace(gcnArchName=arch)
            with self.subTest(rocm=rocm, arch=arch, expected=expected), \
                    mock.patch.object(platform_skips, "TEST_WITH_ROCM", rocm), \
                    pretend_accelerator("cuda", 1), \
                    mock.patch.object(torch.cuda, "get_device_properties", lambda _index, p=properties: p):
                self.assertEqual(skip_reason(decorator(_body)), expected)

    def test_rocm_arch_and_version(self):
        # (ROCm build, device 0's arch, torch.version.hip, isRocmArchAnyOf(MI300_ARCH), getRocmVersion())
        rows = [(False, None, None, False, (0, 0)),
                (True, "gfx942:sramecc+:xnack-", "6.4.43482-0f2d60242", True, (6, 4)),
                (True, "gfx90a", "7.0.1", False, (7, 0))]
        for rocm, arch, hip, any_of, version in rows:
            properties = types.SimpleNamespace(gcnArchName=arch)
            with self.subTest(rocm=rocm, arch=arch), mock.patch.object(platform_skips, "TEST_WITH_ROCM", rocm), \
                    mock.patch.object(torch.version, "hip", hip), pretend_accelerator("cuda", 1), \
                    mock.patch.object(torch.cuda, "get_device_properties", lambda _index, p=properties: p):
                self.assertIs(isRocmArchAnyOf(MI300_ARCH), any_of)
                self.assertEqual(getRocmVersion(), version)

    def test_skip_if_rocm_version_less_than(self):
        # (ROCm build, torch.version.hip, asked version, expected reason)
        rows = [(False, None, (6, 4), None),
                (True, "6.2.41133", (6, 4), "ROCm version less than (6, 4) required"),
                (True, "6.4.43482", (6, 4), None),
                (True, "7.0.0", None, "ROCm version less than None required")]
        for rocm, hip, version, expected in rows:
            with self.subTest(rocm=rocm, hip=hip, version=version), \
                    mock.patch.object(platform_skips, "TEST_WITH_ROCM", rocm), \
                    mock.patch.object(torch.version, "hip", hip):
                self.assertEqual(skip_reason(skipIfRocmVersionLessThan(version)(_body)), expected)

    def test_requires_cuda_p2p_access(self):
        # (accelerator, devices, capability, pairs without peer access, expected reason)
        no_p2p = "cuda p2p access is not available"
        rows = [(None, 0, None, set(), no_p2p), ("cuda", 1, (9, 0), set(), no_p2p),
                ("cuda", 2, (7, 5), set(), no_p2p), ("cuda", 2, (8, 0), set(), None),
                ("cuda", 3, (9, 0), {(1, 2)}, no_p2p), ("xpu", 2, None, set(), no_p2p)]
        for accelerator, count, capability, blocked, expected in rows:
            def peer(i, j, blocked=blocked):
                return (i, j) not in blocked

            with self.subTest(accelerator=accelerator, count=count, capability=capability, blocked=blocked), \
                    pretend_accelerator(accelerator, count), \
                    mock.patch.object(devices, "cuda_capability", lambda c=capability: c), \
                    mock.patch.object(torch.cuda, "can_device_access_peer", peer):
                self.assertEqual(skip_reason(requires_cuda_p2p_access()(_body)), expected)

    def test_skip_if_pytest(self):
        for env, expected in [({"PYTEST_CURRENT_TEST": "t.py::x (call)"}, "does not work under pytest"),
                              ({}, None)]:
            with self.subTest(env=env):
                environ = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"} | env
                with mock.patch.dict(os.environ, environ, clear=True):
                    self.assertEqual(skip_reason(skip_if_pytest(_body)), expected)

    def test_requires_cuda_starts_no_rank(self):
        with mock.patch.object(platform_skips, "TEST_CUDA", False):
            class Cases(MultiProcessTestCase):
                world_size = 2

                @requires_cuda
                def test_cuda(self):
                    raise AssertionError("must not run")

        with mock.patch.object(supervisor, "run_ranks", side_effect=AssertionError("a rank started")) as launch:
            result = run_case(Cases, "test_cuda")
        launch.assert_not_called()
        self.assertEqual([reason for _, reason in result.skipped],
                         ["Requires CUDA: this machine has no CUDA device"])


class TestTestAids(TestCase):
    def test_no_test_is_not_collected(self):
        class Base(NoTest):
            def test_x(self):
                pass

        self.assertIs(NoTest.__test__, False)
        self.assertIs(Base.__test__, False)

    def test_suppress_warnings(self):
        @suppress_warnings
        def noisy(value):
            warnings.warn("loud", UserWarning, stacklevel=1)
            return value * 2

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.assertEqual(noisy(21), 42)
            self.assertEqual(caught, [])
            warnings.warn("after", UserWarning, stacklevel=1)
        self.assertEqual([str(w.message) for w in caught], ["after"])

    def test_check_leaked_tensors(self):
        def make_cycle():
            holder = {"tensor": torch.ones(3)}
            holder["self"] = holder

        # (block, tensors found)
        for block, found in [(make_cycle, 1), (lambda: torch.ones(3), 0)]:
            with self.subTest(found=found):
                debug_before, garbage_before = gc.get_debug(), len(gc.garbage)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    with check_leaked_tensors() as garbage:
                        block()
                self.assertEqual(len(garbage), found)
                self.assertTrue(all(isinstance(t, torch.Tensor) for t in garbage))
                messages = [str(w.message) for w in caught if "garbage" in str(w.message)]
                self.assertEqual(messages, [f"{found} tensors were found in the garbage. Did you "
                                            "introduce a reference cycle?"] if found else [])
                self.assertEqual(gc.get_debug(), debug_before)
                self.assertEqual(len(gc.garbage), garbage_before)

    def test_check_leaked_tensors_counts_only_the_blocks_cycles(self):
        class MakesACycleWhenFreed:
            """Garbage whose finalizer leaves new garbage (a cycle holding a tensor), as freeing
            dynamo's graphs leaves its fake tensors: only a second collection frees it."""

            def __init__(self):
                self.me = self

            def __del__(self):
                cycle = {"tensor": torch.ones(2)}
                cycle["self"] = cycle

        MakesACycleWhenFreed()  # garbage made before the block
        with warnings.catch_warnings(record=True), check_leaked_tensors() as garbage:
            torch.ones(3)
        self.assertEqual(garbage, [])

    def test_wrap_swap_tensors_test(self):
        before = torch.__future__.get_swap_module_params_on_conversion()
        for swap, inside in [(True, True), (False, False), (None, before)]:
            with self.subTest(swap=swap):
                seen = []

                @wrapSwapTensorsTest(swap)
                def body(seen=seen):
                    seen.append(torch.__future__.get_swap_module_params_on_conversion())
                    raise ValueError("the test failed")

                with self.assertRaisesRegex(ValueError, "the test failed"):
                    body()
                self.assertEqual(seen, [inside])
                self.assertEqual(torch.__future__.get_swap_module_params_on_conversion(), before)

    def test_deterministic_guard_sets_and_puts_back_the_three_settings(self):
        def settings():
            return (torch.are_deterministic_algorithms_enabled(),
                    torch.is_deterministic_algorithms_warn_only_enabled(),
                    torch.utils.deterministic.fill_uninitialized_memory)

        before = settings()
        self.assertEqual(before[:2], (False, False))
        guard = DeterministicGuard(True, warn_only=True, fill_uninitialized_memory=False)
        with self.assertRaisesRegex(ValueError, "body failed"):
            with guard:
                self.assertEqual(settings(), (True, True, False))
                with DeterministicGuard(True):  # nested: the inner one's settings, then the outer's
                    self.assertEqual(settings(), (True, False, True))
                self.assertEqual(settings(), (True, True, False))
                raise ValueError("body failed")
        self.assertEqual(settings(), before)
        with guard:  # entered again
            self.assertEqual(settings(), (True, True, False))
        self.assertEqual(settings(), before)

    def test_get_cycles_per_ms(self):
        rate = get_cycles_per_ms("cpu")
        self.assertIsInstance(rate, float)
        self.assertGreater(rate, 0)
        self.assertEqual(get_cycles_per_ms("cpu"), rate)  # measured once per process
        with self.assertRaisesRegex(NotImplementedError, r"torch\.cuda\._sleep"):
            get_cycles_per_ms("cuda")

    def test_device_sleep(self):
        with mock.patch.object(testing_aids, "cpu_busy_wait") as spin:
            self.assertIsNone(device_sleep("cpu", 1000))
        spin.assert_called_once_with(1000)
        queued = []
        with mock.patch.object(testing_aids, "device_sleep_kernel",
                               lambda kind: lambda cycles: queued.append((kind, cycles))):
            device_sleep("cuda:1", 5000)
        self.assertEqual(queued, [("cuda", 5000)])
        self.assertIsNone(device_sleep("cpu", 100))  # the real spin


class _WrongBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


class TestAutogradChecks(TestCase):
    def test_gradcheck_defaults(self):
        x = torch.randn(3, dtype=torch.double, requires_grad=True)
        # (keyword arguments given, what torch's gradcheck receives for the two defaults)
        rows = [({}, (True, True)), ({"fast_mode": None}, (True, True)),
                ({"check_batched_grad": False, "fast_mode": False}, (False, False))]
        for given, (batched, fast) in rows:
            with self.subTest(given=given), mock.patch.object(torch.autograd, "gradcheck",
                                                              return_value=True) as inner:
                self.assertTrue(gradcheck(torch.sin, (x,), **given))
                kwargs = inner.call_args.kwargs
                self.assertEqual((kwargs["check_batched_grad"], kwargs["fast_mode"]), (batched, fast))

    def test_grad_and_gradgrad_checks(self):
        x = torch.randn(3, dtype=torch.double, requires_grad=True)
        _assertGradAndGradgradChecks(self, torch.sin, (x,))
        with self.assertRaisesRegex(GradcheckError, "Jacobian mismatch"):
            _assertGradAndGradgradChecks(self, _WrongBackward.apply, (x,), check_batched_grad=False)

    def test_dtype_precisions(self):
        self.assertEqual(dtype2prec_DONTUSE, {torch.float: 1e-5, torch.double: 1e-5,
                                              torch.half: 1e-2, torch.bfloat16: 1e-1})


# -- common_distributed ------------------------------------------------------------------------

class TestDeviceQuestions(TestCase):
    def test_at_least_x_gpu(self):
        # (accelerator, devices, x, expected)
        rows = [(None, 0, 1, False), (None, 0, 0, False), ("cuda", 2, 2, True), ("xpu", 2, 3, False),
                ("hpu", 4, 1, True)]
        for accelerator, count, x, expected in rows:
            with self.subTest(accelerator=accelerator, count=count, x=x), \
                    pretend_accelerator(accelerator, count):
                self.assertIs(at_least_x_gpu(x), expected)

    def test_sm_is_or_higher_than(self):
        # (device, ROCm build, capability, asked, expected)
        rows = [(torch.device("cpu"), False, None, (9, 0), True),
                (torch.device("cuda", 0), True, (9, 4), (8, 0), False),
                (torch.device("cuda", 0), False, (8, 0), (8, 0), True),
                (torch.device("cuda", 1), False, (8, 6), (9, 0), False)]
        for device, rocm, capability, asked, expected in rows:
            with self.subTest(device=device, rocm=rocm, capability=capability), \
                    mock.patch.object(torch.version, "hip", "6.4" if rocm else None), \
                    mock.patch.object(torch.cuda, "get_device_capability", lambda _d, c=capability: c):
                self.assertIs(sm_is_or_higher_than(device, *asked), expected)


class TestDistributedDecorators(TestCase):
    def test_requires_nccl_version(self):
        with_nccl = devices.facts().backends + ("nccl",)
        without_nccl = tuple(b for b in devices.facts().backends if b != "nccl")
        version_27 = lambda: requires_nccl_version((2, 27), "needs shrink")  # noqa: E731
        # (accelerator, backends, NCCL version, decorator factory, expected reason)
        rows = [
            (None, without_nccl, None, version_27, None),  # no CUDA: other decorators decide
            ("cuda", without_nccl, None, version_27, "c10d was not compiled with the NCCL backend"),
            ("cuda", with_nccl, (2, 21, 5), version_27,
             "Requires NCCL version greater than or equal to: (2, 27), found: (2, 21, 5), "
             "reason: needs shrink"),
            ("cuda", with_nccl, (2, 28, 3), version_27, None),
            ("cuda", with_nccl, (2, 26, 0), requires_nccl_shrink,
             "Requires NCCL version greater than or equal to: (2, 27), found: (2, 26, 0), "
             "reason: Need NCCL 2.27+ for shrink_group"),
            ("cuda", with_nccl, (2, 27, 0), requires_nccl_shrink, None),
        ]
        for accelerator, backends, version, make, expected in rows:
            with self.subTest(accelerator=accelerator, version=version, expected=expected), \
                    pretend_facts(accelerator=accelerator, device_count=2 if accelerator else 0,
                                  backends=backends), \
                    mock.patch.object(torch.cuda.nccl, "version", lambda v=version: v):
                self.assertEqual(skip_reason(make()(_body)), expected)

    def test_requires_ucc_and_multicast(self):
        backends = tuple(b for b in devices.facts().backends if b != "ucc")
        rows = [
            (None, backends, requires_ucc, "c10d was not compiled with the UCC backend"),
            (None, backends + ("ucc",), requires_ucc, None),
            (None, backends, requires_multicast_support,
             "multicast support is not available: this machine has no CUDA device"),
        ]
        for accelerator, facts_backends, make, expected in rows:
            with self.subTest(make=make.__name__, backends=facts_backends), \
                    pretend_facts(accelerator=accelerator, backends=facts_backends):
                self.assertEqual(skip_reason(make()(_body)), expected)

    def test_require_world_size(self):
        # (accelerator, devices, n, expected reason)
        rows = [("cuda", 4, 3, None), ("cuda", 2, 3, "requires 3 CUDA devices, found 2"),
                (None, 0, 2, "requires 2 CUDA devices, found 0")]
        for accelerator, count, n, expected in rows:
            with self.subTest(accelerator=accelerator, count=count, n=n), \
                    pretend_accelerator(accelerator, count):
                decorated = require_world_size(n)(_body)
            cls = type("Case", (TestCase,), {"test_x": decorated, "test_plain": _body})
            self.assertEqual(pending_skip(cls("test_x")), expected)
            self.assertEqual(get_required_world_size(cls("test_x"), 7), n)
            self.assertEqual(get_required_world_size(cls("test_plain"), 7), 7)

    def test_rocm_multiprocess_skips(self):
        arch_reason = "skip_if_rocm_arch_multiprocess: test skipped on ('gfx942',)"
        # (ROCm build, device 0's arch, torch.version.hip, decorator, expected reason)
        rows = [(False, "gfx942", None, skip_if_rocm_arch_multiprocess(("gfx942",)), None),
                (True, "gfx942:sramecc+:xnack-", "6.4.1", skip_if_rocm_arch_multiprocess(("gfx942",)), arch_reason),
                (True, "gfx9420", "6.4.1", skip_if_rocm_arch_multiprocess(("gfx942",)), None),  # exact names
                (False, None, None, skip_if_rocm_ver_lessthan_multiprocess((6, 4)), None),
                (True, None, "6.2.41133-dd7f95766", skip_if_rocm_ver_lessthan_multiprocess((6, 4)),
                 "skip_if_rocm_ver_lessthan_multiprocess: ROCm (6, 2, 41133) is available but (6, 4) required"),
                (True, None, "6.4.43482", skip_if_rocm_ver_lessthan_multiprocess((6, 4)), None),
                (True, None, "7.0.0", skip_if_rocm_ver_lessthan_multiprocess(),
                 "skip_if_rocm_ver_lessthan_multiprocess: ROCm (7, 0, 0) is available but None required")]
        for rocm, arch, hip, decorator, expected in rows:
            with self.subTest(rocm=rocm, arch=arch, hip=hip), \
                    mock.patch.object(distributed_skips, "TEST_WITH_ROCM", rocm), \
                    mock.patch.object(torch.version, "hip", hip), \
                    mock.patch.object(devices, "rocm_arch_name", lambda a=arch: a):
                self.assertEqual(skip_reason(decorator(_body)), expected)

    def test_rocm_multiprocess_skips_start_no_rank(self):
        with mock.patch.object(distributed_skips, "TEST_WITH_ROCM", True), \
                mock.patch.object(torch.version, "hip", "6.0.0"):
            class Cases(MultiProcessTestCase):
                world_size = 2

                @skip_if_rocm_ver_lessthan_multiprocess((6, 4))
                def test_x(self):
                    raise AssertionError("must not run")

            with mock.patch.object(supervisor, "run_ranks", side_effect=AssertionError("a rank started")):
                result = run_case(Cases, "test_x")
        self.assertEqual(len(result.skipped), 1)

    def test_platform_flags(self):
        self.assertIs(common_distributed.HAS_ACCELERATOR, devices.accelerator_type() in ("cuda", "hpu", "xpu"))
        # (accelerator, ROCm build, device 0's arch, symmetric memory supported)
        rows = [(None, False, None, False), ("xpu", False, None, False), ("cuda", False, None, True),
                ("cuda", True, "gfx942:sramecc+", True), ("cuda", True, "gfx90a", False)]
        for accelerator, rocm, arch, expected in rows:
            with self.subTest(accelerator=accelerator, rocm=rocm, arch=arch), \
                    pretend_accelerator(accelerator, 2), \
                    mock.patch.object(distributed_skips, "TEST_WITH_ROCM", rocm), \
                    mock.patch.object(devices, "rocm_arch_name", lambda a=arch: a):
                self.assertIs(bool(devices.LazyFlag(distributed_skips.evaluate_platform_supports_symm_mem)), expected)
        self.assertIs(bool(common_distributed.PLATFORM_SUPPORTS_SYMM_MEM), devices.accelerator_type() == "cuda")

    def test_setup_torchcomms_pg_skips_without_torchcomms(self):
        with mock.patch.dict(sys.modules, {"torchcomms": None}), \
                self.assertRaisesRegex(unittest.SkipTest, "needs torchcomms, which is not installed"):
            common_distributed.setup_torchcomms_pg("nccl", 0, 2, torch.device("cpu"), "/nonexistent", "g")

    def test_with_nccl_blocking_wait(self):
        names = ("TORCH_NCCL_BLOCKING_WAIT", "TORCH_NCCL_ASYNC_ERROR_HANDLING")
        # (environment before, whether the test raises)
        rows = [({}, False), ({"TORCH_NCCL_BLOCKING_WAIT": "0", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "3"}, True)]
        for before, raises in rows:
            seen = []

            @with_nccl_blocking_wait
            def body(raises=raises, seen=seen):
                seen.append({name: os.environ.get(name) for name in names})
                if raises:
                    raise RuntimeError("failed")
                return "done"

            clean = {k: v for k, v in os.environ.items() if k not in names} | before
            with self.subTest(before=before), mock.patch.dict(os.environ, clean, clear=True):
                if raises:
                    with self.assertRaisesRegex(RuntimeError, "failed"):
                        body()
                else:
                    self.assertEqual(body(), "done")
                self.assertEqual(seen, [{"TORCH_NCCL_BLOCKING_WAIT": "1",
                                         "TORCH_NCCL_ASYNC_ERROR_HANDLING": None}])
                self.assertEqual({name: os.environ.get(name) for name in names},
                                 {name: before.get(name) for name in names})


class TestDistributedHelpers(TestCase):
    def test_sparse_reduce_cases_sum_up(self):
        for world_size, num_inputs in [(1, 1), (2, 1), (3, 2)]:
            with self.subTest(world_size=world_size, num_inputs=num_inputs):
                per_rank = [simple_sparse_reduce_tests(r, world_size, num_inputs) for r in range(world_size)]
                self.assertEqual(len(per_rank[0]), 6)
                for case in range(6):
                    contributions = [t for rank in per_rank for t in rank[case][0]]
                    self.assertEqual(len(contributions), world_size * num_inputs)
                    self.assertTrue(all(t.is_sparse for t in contributions))
                    total = sum(t.to_dense() for t in contributions)
                    for rank in per_rank:
                        for expected in rank[case][1]:
                            self.assertEqual(expected.to_dense(), total)

    def test_get_timeout(self):
        default = common_distributed.get_timeout("m.C.test_anything")
        self.assertEqual(default, 500 if common_utils.TEST_WITH_TSAN else
                         int(os.environ.get("DISTRIBUTED_TESTS_DEFAULT_TIMEOUT", "300")))
        for test_id, expected in [("m.TestDDP.test_ddp_uneven_inputs", 400),
                                  ("test_DistributedDataParallel", 500)]:
            with self.subTest(test_id=test_id):
                self.assertEqual(get_timeout(test_id), expected)

    def test_create_tcp_store(self):
        store = create_tcp_store(world_size=1)
        store.set("key", "value")
        self.assertEqual(store.get("key"), b"value")
        self.assertEqual(store.num_keys(), 2)  # the key, and the store's own init key
        client = dist.TCPStore("localhost", store.port, 1, is_master=False)
        self.assertEqual(client.get("key"), b"value")

    def test_tp_transports(self):
        # (fi_info on PATH, its exit status, expected transports)
        rows = [(False, None, None), (True, 1, None), (True, 0, ["shm", "uv"])]
        for present, status, expected in rows:
            tcp_store.has_efa.cache_clear()
            completed = subprocess.CompletedProcess([], status)
            with self.subTest(present=present, status=status), \
                    mock.patch.object(shutil, "which", lambda _n, p=present: "/usr/bin/fi_info" if p else None), \
                    mock.patch.object(subprocess, "run", return_value=completed) as run:
                self.assertEqual(tp_transports(), expected)
                self.assertEqual(run.call_count, 1 if present else 0)
        tcp_store.has_efa.cache_clear()

    def test_save_forward_inputs_model(self):
        for cast in (False, True):
            with self.subTest(cast=cast):
                seen = {}
                model = SaveForwardInputsModel(seen, cast_forward_inputs=cast)
                x = torch.randn(2, 100, dtype=torch.float64)
                if not cast:
                    with self.assertRaises(RuntimeError):
                        model(x)
                    continue
                out = model(x)
                self.assertEqual(out.dtype, torch.float32)
                self.assertEqual(set(seen), {model, model.c1, model.c2})
                self.assertIs(seen[model], x)
                self.assertIs(seen[model.c1], x)  # recorded before the cast
                self.assertEqual(seen[model.c2].dtype, torch.float32)
                self.assertIsInstance(model.c1.l, nn.Linear)

    def test_logger_and_sandcastle_names(self):
        self.assertEqual(common_distributed.logger.name, "torch_testing_ext.common_distributed")
        self.assertEqual(common_distributed.logger.level, 20)
        self.assertIs(common_distributed.skip_but_pass_in_sandcastle_if,
                      common_utils.skip_but_pass_in_sandcastle_if)


class SparseAllReduceRanks(MultiProcessTestCase):
    world_size = 2

    def test_gloo_sparse_all_reduce(self):
        dist.init_process_group("gloo", init_method=f"file://{self.file_name}", rank=self.rank,
                                world_size=self.world_size)
        for inputs, expected in simple_sparse_reduce_tests(self.rank, self.world_size):
            tensor = inputs[0]
            dist.all_reduce(tensor)
            self.assertEqual(tensor.coalesce().to_dense(), expected[0].coalesce().to_dense())


# -- common_cuda -------------------------------------------------------------------------------

class TestCudaFlags(TestCase):
    CODE = ("import json\nfrom torch_testing_ext import common_cuda as c\n"
            "print(json.dumps([bool(flag) for flag in (c.TEST_CUDA, c.SM80OrLater, c.SM90OrLater, "
            "c.PLATFORM_SUPPORTS_FLASH_ATTENTION, c.PLATFORM_SUPPORTS_MEM_EFF_ATTENTION, "
            "c.PLATFORM_SUPPORTS_FUSED_ATTENTION)]))")

    def test_flags_from_the_device_facts(self):
        # (accelerator, capability, expected flags) -- facts handed over as the harness does
        rows = [(None, None, [False] * 6),
                ("cuda", (8, 6), [True, True, False, True, True, True]),
                ("cuda", (7, 0), [True, False, False, False, True, True]),
                ("cuda", (9, 0), [True, True, True, True, True, True])]
        for accelerator, capability, expected in rows:
            facts = dataclasses.replace(devices.facts(), accelerator=accelerator,
                                        device_count=2 if accelerator else 0, cuda_capability=capability)
            with self.subTest(accelerator=accelerator, capability=capability):
                env = {devices.FACTS_ENV: json.dumps(dataclasses.asdict(facts))}
                self.assertEqual(child_values(self.CODE, env), expected)

    def test_importing_the_faces_asks_cuda_nothing(self):
        # Facts of a CUDA machine whose capability nobody asked yet: on this machine asking
        # would fail, so the imports show that nothing asks until a flag is read.
        facts = dataclasses.replace(devices.facts(), accelerator="cuda", device_count=2,
                                    cuda_capability=devices.UNPROBED)
        code = ("import json, torch\n"
                "from torch_testing_ext import common_cuda, common_device_type, common_distributed, common_utils\n"
                "from torch_testing_ext import inductor_utils, triton_utils\n"
                "imported = [common_cuda.TEST_CUDA, torch.cuda.is_initialized()]\n"
                "try:\n    bool(common_cuda.SM80OrLater)\n    asked = 'answered'\n"
                "except Exception as error:\n    asked = type(error).__name__\n"
                "print(json.dumps([*imported, asked]))")
        env = {devices.FACTS_ENV: json.dumps(dataclasses.asdict(facts))}
        found = child_values(code, env)
        self.assertEqual(found[:2], [True, False])
        if devices.accelerator_type() != "cuda":
            self.assertNotEqual(found[2], "answered", "reading the flag asks CUDA")

    def test_fp8_support(self):
        # (CUDA, ROCm build, capability, device 0's arch, ROCm version, expected)
        rows = [(False, False, None, None, (0, 0), True),  # the CPU (and XPU) have float8 kernels
                (True, False, (8, 6), None, (0, 0), False), (True, False, (8, 9), None, (0, 0), True),
                (True, False, (9, 0), None, (0, 0), True), (True, False, (10, 0), None, (0, 0), True),
                (True, True, None, "gfx942:sramecc+", (6, 2), True), (True, True, None, "gfx1201", (6, 2), False),
                (True, True, None, "gfx1201", (6, 3), True), (True, True, None, "gfx950", (6, 4), False),
                (True, True, None, "gfx950", (6, 5), True)]
        for cuda, rocm, capability, arch, version, expected in rows:
            with self.subTest(cuda=cuda, rocm=rocm, capability=capability, arch=arch, version=version), \
                    mock.patch.object(common_cuda, "TEST_CUDA", cuda), mock.patch.object(common_cuda, "_ROCM", rocm), \
                    mock.patch.object(devices, "cuda_capability", lambda c=capability: c), \
                    mock.patch.object(devices, "rocm_arch_name", lambda a=arch: a), \
                    mock.patch.object(devices, "torch_rocm_version", lambda v=version: v):
                self.assertIs(common_cuda._fp8_supported(), expected)
        if devices.accelerator_type() != "cuda":
            self.assertIs(bool(common_cuda.PLATFORM_SUPPORTS_FP8), True)

    def test_fp8_sparse_support(self):
        # (CUDA, ROCm build, capability, device 0's arch, cuSPARSELt available, its version, expected)
        rows = [(False, False, None, None, True, 602, False),
                (True, False, (8, 6), None, True, 602, False), (True, False, (8, 9), None, True, 602, True),
                (True, False, (9, 0), None, True, 601, False), (True, False, (9, 0), None, False, None, False),
                (True, False, (10, 0), None, True, 700, True),
                (True, True, None, "gfx950:sramecc+", False, None, True),
                (True, True, None, "gfx942", True, 602, False)]
        for cuda, rocm, capability, arch, available, version, expected in rows:
            with self.subTest(cuda=cuda, rocm=rocm, capability=capability, arch=arch, version=version), \
                    mock.patch.object(common_cuda, "TEST_CUDA", cuda), mock.patch.object(common_cuda, "_ROCM", rocm), \
                    mock.patch.object(devices, "cuda_capability", lambda c=capability: c), \
                    mock.patch.object(devices, "rocm_arch_name", lambda a=arch: a), \
                    mock.patch.object(torch.backends.cusparselt, "is_available", lambda a=available: a), \
                    mock.patch.object(torch.backends.cusparselt, "version", lambda v=version: v):
                self.assertIs(common_cuda._fp8_sparse_supported(), expected)
        if devices.accelerator_type() != "cuda":
            self.assertIs(bool(common_cuda.PLATFORM_SUPPORTS_FP8_SPARSE), False)

    def test_this_machine(self):
        capability = devices.cuda_capability()
        self.assertEqual(common_cuda.SM80OrLater, capability is not None and capability >= (8, 0))
        if devices.accelerator_type() is None:
            self.assertIs(bool(common_cuda.PLATFORM_SUPPORTS_FUSED_ATTENTION), False)

    def test_torch_versions(self):
        rows = [("12.8", (12, 8)), (None, (0, 0)), ("11.7.1", (11, 7, 1))]
        for version, expected in rows:
            with self.subTest(version=version), mock.patch.object(torch.version, "cuda", version):
                self.assertEqual(common_cuda._get_torch_cuda_version(), expected)
        for version, expected in [("6.4.43482-0f2d60242", (6, 4, 43482)), (None, (0, 0))]:
            with self.subTest(hip=version), mock.patch.object(torch.version, "hip", version):
                self.assertEqual(common_cuda._get_torch_rocm_version(), expected)


# -- common_device_type ------------------------------------------------------------------------

class TestFloat8Types(TestCase):
    def test_e4m3_type_by_device(self):
        # (torch.version.hip, device 0's arch, dtype, largest value)
        rows = [(None, None, torch.float8_e4m3fn, 448.0), ("6.4.1", "gfx942:sramecc+", torch.float8_e4m3fnuz, 240.0),
                ("6.4.1", "gfx950", torch.float8_e4m3fn, 448.0), ("6.4.1", None, torch.float8_e4m3fn, 448.0)]
        for hip, arch, dtype, largest in rows:
            float8_types.e4m3_type.cache_clear()
            try:
                with self.subTest(hip=hip, arch=arch), mock.patch.object(torch.version, "hip", hip), \
                        mock.patch.object(devices, "rocm_arch_name", lambda a=arch: a):
                    self.assertIs(common_device_type.e4m3_type, dtype)
                    self.assertEqual(common_device_type.E4M3_MAX_POS, largest)
            finally:
                float8_types.e4m3_type.cache_clear()

    def test_face_names(self):
        from torch_testing_ext.common_device_type import E4M3_MAX_POS, e4m3_type

        self.assertEqual(torch.tensor([1000.0]).clamp(-E4M3_MAX_POS, E4M3_MAX_POS).to(e4m3_type).float(),
                         [E4M3_MAX_POS])
        with self.assertRaisesRegex(AttributeError, "no attribute 'e3m4_type'"):
            _ = common_device_type.e3m4_type


class TestDeviceTypeSkips(TestCase):
    def test_skips_for_one_device_type(self):
        # (decorator, test's device type, test attributes, expected reason)
        rows = [
            (skipXPUIf(True, "not on xpu"), "xpu", {}, "not on xpu"),
            (skipXPUIf(True, "not on xpu"), "cpu", {}, None),
            (skipXPUIf(False, "not on xpu"), "xpu", {}, None),
            (skipXPUIf("no_lapack", "needs lapack"), "xpu", {"no_lapack": False}, None),
            (skipXPUIf("no_lapack", "needs lapack"), "xpu", {"no_lapack": True}, "needs lapack"),
            (skipCPUIf(True, "not on cpu"), "cpu", {}, "not on cpu"),
            (skipMeta, "meta", {}, "test doesn't work with meta tensors"),
            (skipMeta, "cpu", {}, None),
        ]
        for decorator, device_type, attrs, expected in rows:
            with self.subTest(device_type=device_type, attrs=attrs, expected=expected):
                decorated = decorator(_body)
                self.assertEqual(skip_reason(decorated, device_type=device_type, **attrs), expected)


class TestCapabilities(TestCase):
    def test_the_namespace(self):
        self.assertEqual(str(Capability.distributed.fsdp), "distributed.fsdp")
        self.assertIs(Capability.dtype.bf16, Capability.dtype.bf16)
        self.assertEqual({c.group for c in Capability},
                         {"dtype", "lib", "stream", "memory", "collective", "distributed"})
        self.assertEqual(len(list(Capability)), 14)
        with self.assertRaisesRegex(AttributeError, r"Capability.dtype has no capability 'fp4' \(it has: bf16, fp8"):
            _ = Capability.dtype.fp4
        with self.assertRaisesRegex(AttributeError, "Capability has no group 'network'"):
            _ = Capability.network
        with self.assertRaisesRegex(TypeError, "members of Capability"):
            requires_capabilities("distributed.backend")
        with self.assertRaisesRegex(TypeError, "at least one"):
            requires_capabilities()

    def test_what_each_device_type_declares(self):
        # (device type, capability, patches on devices, has it)
        cuda_facts = {"accelerator_type": lambda: "cuda", "has_triton": lambda: True}
        rows = [
            ("cpu", Capability.distributed.backend, {}, dist.is_available() and dist.is_gloo_available()),
            ("cpu", Capability.distributed.fsdp, {"backend_available": lambda name: name == "gloo"}, True),
            ("cpu", Capability.distributed.fsdp, {"backend_available": lambda name: False}, False),
            ("cuda", Capability.distributed.dtensor, {"backend_available": lambda name: name == "gloo"}, False),
            ("cuda", Capability.distributed.sharded_tensor, {"backend_available": lambda name: name == "nccl"}, True),
            ("xpu", Capability.distributed.fsdp2, {"backend_available": lambda name: name == "xccl"}, True),
            ("mps", Capability.distributed.backend, {"backend_available": lambda name: True}, False),
            ("cpu", Capability.dtype.bf16, {}, True),
            ("cpu", Capability.dtype.fp8, {}, True),
            ("cuda", Capability.dtype.bf16, {"cuda_capability": lambda: (7, 5)}, torch.version.hip is not None),
            ("cuda", Capability.dtype.bf16, {"cuda_capability": lambda: (8, 0)}, True),
            ("cuda", Capability.dtype.fp8, {"cuda_capability": lambda: (8, 0)}, False),
            ("cuda", Capability.dtype.fp8, {"cuda_capability": lambda: (8, 9)}, torch.version.hip is None),
            ("mps", Capability.dtype.fp64, {}, False),
            ("cpu", Capability.lib.triton, cuda_facts, False),
            ("cuda", Capability.lib.triton, cuda_facts, True),
            ("cuda", Capability.lib.triton, {**cuda_facts, "has_triton": lambda: False}, False),
            ("cpu", Capability.stream.generic, {}, False),
            ("xpu", Capability.stream.generic, {}, True),
            ("cpu", Capability.memory.non_blocking_copy, {}, False),
            ("cuda", Capability.memory.non_blocking_copy, {}, True),
            ("cuda", Capability.collective.reconfigure, {}, False),
        ]
        for device_type, capability, patches, expected in rows:
            with self.subTest(device_type=device_type, capability=str(capability), patches=sorted(patches)), \
                    (mock.patch.multiple(devices, **patches) if patches else contextlib.nullcontext()):
                declared = capabilities.declared_capabilities(device_type)
                self.assertEqual(set(declared), set(Capability))
                self.assertIs(declared[capability](), expected)
        for importable in (True, False):
            def find(name, importable=importable):
                return importable and name == "safetensors"

            with self.subTest(safetensors=importable), mock.patch.object(capabilities, "_importable", find):
                self.assertIs(capabilities.declared_capabilities("cpu")[Capability.lib.safetensors](), importable)

    def test_skips_and_failures(self):
        needs_streams = requires_capabilities(Capability.stream.generic, Capability.distributed.backend)(_body)
        self.assertEqual(skip_reason(needs_streams, device_type="cpu"),
                         "requires capability stream.generic, which cpu does not have here")
        with mock.patch.object(devices, "backend_available", lambda name: name == "nccl"):
            self.assertIsNone(skip_reason(needs_streams, device_type="cuda"))
        with mock.patch.object(devices, "backend_available", lambda name: False):
            self.assertEqual(skip_reason(needs_streams, device_type="cuda"),
                             "requires capability distributed.backend, which cuda does not have here")
        # A class declaring its own capabilities (upstream's hook): missing skips, undeclared fails.
        own = {Capability.dtype.bf16: lambda: False, Capability.lib.safetensors: True}
        self.assertEqual(skip_reason(requires_capabilities(Capability.dtype.bf16)(_body), device_type="cpu",
                                     _capabilities=classmethod(lambda cls: own)),
                         "requires capability dtype.bf16, which cpu does not have here")
        self.assertIsNone(skip_reason(requires_capabilities(Capability.lib.safetensors)(_body), device_type="cpu",
                                      _capabilities=classmethod(lambda cls: own)))
        with self.assertRaisesRegex(AssertionError, "the cpu test base declares no capability distributed.fsdp"):
            skip_reason(requires_capabilities(Capability.distributed.fsdp)(_body), device_type="cpu",
                        _capabilities=classmethod(lambda cls: own))
        # The device-type bases answer through _capabilities(), which a subclass may override.
        self.assertEqual(set(CPUTestBase._capabilities()), set(Capability))

    def test_instantiated_per_device_type(self):
        class TestStaging(TestCase):
            @requires_capabilities(Capability.stream.generic)
            def test_async(self, device):
                raise AssertionError("must not run on cpu")

            @requires_capabilities(Capability.dtype.fp64)
            def test_fp64(self, device):
                self.assertEqual(torch.ones(1, dtype=torch.float64, device=device).item(), 1.0)

        scope = {"TestStaging": TestStaging}
        instantiate_device_type_tests(TestStaging, scope, only_for="cpu")
        generated = scope["TestStagingCPU"]
        skipped = run_case(generated, "test_async_cpu")
        self.assertEqual([reason for _, reason in skipped.skipped],
                         ["requires capability stream.generic, which cpu does not have here"])
        ran = run_case(generated, "test_fp64_cpu")
        self.assertEqual((ran.testsRun, ran.skipped, ran.failures, ran.errors), (1, [], [], []))

    def test_multi_process_tests_decide_before_ranks_start(self):
        class Staging(MultiProcessTestCase):
            world_size = 2

            @requires_capabilities(Capability.memory.non_blocking_copy)
            def test_copy(self, device):
                raise AssertionError("must not run on cpu")

        scope = {"Staging": Staging}
        instantiate_device_type_tests(Staging, scope, only_for="cpu")
        with mock.patch.object(supervisor, "run_ranks", side_effect=AssertionError("a rank started")) as launch:
            result = run_case(scope["StagingCPU"], "test_copy_cpu")
        launch.assert_not_called()
        self.assertEqual([reason for _, reason in result.skipped],
                         ["requires capability memory.non_blocking_copy, which cpu does not have here"])


class GlooCapabilityRanks(MultiProcessTestCase):
    world_size = 2

    @requires_capabilities(Capability.distributed.backend, Capability.distributed.fsdp)
    def test_runs_on_cpu_ranks(self, device):
        dist.init_process_group("gloo", init_method=f"file://{self.file_name}", rank=self.rank,
                                world_size=self.world_size)
        try:
            t = torch.ones(1, device=device)
            dist.all_reduce(t)
            self.assertEqual(t, [2.0])
        finally:
            dist.destroy_process_group()


instantiate_device_type_tests(GlooCapabilityRanks, globals(), only_for="cpu")


# -- logging_utils, and TestCase.run_process_no_exception ---------------------------------------

class TestLoggingTestCase(TestCase):
    def test_class_settings_hold_inside_and_are_undone_after(self):
        seen = {}

        class Logs(LoggingTestCase):
            def test_x(self):
                seen["env"] = os.environ.get("___LOG_TESTING")
                seen["suppress_errors"] = dynamo_config_value("suppress_errors")
                seen["verbose"] = dynamo_config_value("verbose")

        before = (os.environ.get("___LOG_TESTING"), dynamo_config_value("suppress_errors"))
        result = unittest.TestResult()
        unittest.TestSuite([Logs("test_x")]).run(result)
        self.assertEqual(result.errors + result.failures, [])
        self.assertEqual(seen, {"env": "", "suppress_errors": True, "verbose": False})
        self.assertEqual((os.environ.get("___LOG_TESTING"), dynamo_config_value("suppress_errors")), before)

    def test_has_and_get_record(self):
        records = [logging.LogRecord("x", logging.INFO, __file__, 1, msg, args, None)
                   for msg, args in [("FSDP::pre_forward (%d)", (0,)), ("FSDP::pre_forward (%d)", (1,)),
                                     ("root_post_backward", ())]]
        case = LoggingTestCase()
        # (text, hasRecord, getRecord's message or the failure it gives)
        rows = [("pre_forward (1)", True, "FSDP::pre_forward (1)"),
                ("root_post", True, "root_post_backward"),
                ("pre_forward", True, AssertionError("multiple matching records for pre_forward")),
                ("absent", False, AssertionError("did not find record with absent"))]
        for text, has, got in rows:
            with self.subTest(text=text):
                self.assertIs(case.hasRecord(records, text), has)
                if isinstance(got, AssertionError):
                    with self.assertRaisesRegex(AssertionError, str(got)):
                        case.getRecord(records, text)
                else:
                    self.assertEqual(case.getRecord(records, text).getMessage(), got)

    def test_run_process_no_exception(self):
        code = "import os, sys\nprint(os.environ['PROBE'])\nsys.stderr.write('to err')\nsys.exit(3)"
        out, err = TestCase.run_process_no_exception(code, env=dict(os.environ, PROBE="seen"))
        self.assertEqual((out, err), (b"seen\n", b"to err"))
