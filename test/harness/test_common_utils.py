"""Self-tests of the upstream names ``common_utils`` offers besides TestCase and run_tests:
platform flags, skip and xfail decorators, temporary paths, serialTest, free ports,
retrying on connect failures, and the hardware classification of test classes."""

import dataclasses
import datetime
import json
import os
import socket
import subprocess
import sys
import unittest
import warnings
from unittest import mock

import torch

from torch_testing_ext import common_utils, devices
from torch_testing_ext._engine.process_groups import ports
from torch_testing_ext._engine.skips import platform_skips
from torch_testing_ext.common_utils import (
    ADDRESS_IN_USE,
    CONNECT_TIMEOUT,
    IS_FBCODE,
    IS_LINUX,
    IS_MACOS,
    IS_SANDCASTLE,
    IS_WINDOWS,
    TEST_HPU,
    TEST_WITH_ROCM,
    HardwareClassification,
    TemporaryDirectoryName,
    TemporaryFileName,
    TestCase,
    filter_by_hw_classification,
    find_free_port,
    lazy_skip_if,
    retry_on_connect_failures,
    serialTest,
    skip_but_pass_in_sandcastle,
    skip_but_pass_in_sandcastle_if,
    skipIfHpu,
    skipIfTorchDynamo,
    skipIfTorchInductor,
    xfailIf,
    xfailIfTorchDynamo,
)

from fixtures.runs import checkout_env, run_case


class TestFlags(TestCase):
    def test_platform_flags(self):
        self.assertEqual(IS_WINDOWS, sys.platform == "win32")
        self.assertEqual(IS_MACOS, sys.platform == "darwin")
        self.assertIs(IS_FBCODE, False)
        self.assertIs(IS_SANDCASTLE, False)
        self.assertIs(common_utils.TEST_WITH_TORCHDYNAMO, False)

    def test_linux_and_inductor_flags(self):
        self.assertEqual(IS_LINUX, sys.platform == "linux")
        self.assertIs(common_utils.TEST_WITH_TORCHINDUCTOR, False)

    def test_accelerator_and_cuda_graph_flags_read_at_import(self):
        code = ("import json\nfrom torch_testing_ext import common_utils as c\n"
                "print(json.dumps([c.TEST_ACCELERATOR, c.TEST_MULTIACCELERATOR, c.TEST_CUDA_GRAPH]))")
        # (accelerator, devices, PYTORCH_TEST_SKIP_CUDAGRAPH, expected flags); this torch has
        # no CUDA build, so TEST_CUDA_GRAPH stays off even where the facts say CUDA
        cuda_build = torch.version.cuda is not None or torch.version.hip is not None
        rows = [(None, 0, None, [False, False, False]),
                ("xpu", 1, None, [True, False, False]),
                ("cuda", 2, None, [True, True, cuda_build]),
                ("cuda", 2, "1", [True, True, False])]
        for accelerator, count, skip_graphs, expected in rows:
            facts = dataclasses.replace(devices.facts(), accelerator=accelerator, device_count=count,
                                        cuda_capability=None)
            env = checkout_env(**{devices.FACTS_ENV: json.dumps(dataclasses.asdict(facts)),
                                  "PYTORCH_TEST_SKIP_CUDAGRAPH": skip_graphs})
            with self.subTest(accelerator=accelerator, count=count, skip_graphs=skip_graphs):
                done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                      env=env, timeout=300)
                self.assertEqual(done.returncode, 0, done.stderr[-2000:])
                self.assertEqual(json.loads(done.stdout.splitlines()[-1]), expected)

    def test_hpu_flag_follows_the_device_facts(self):
        self.assertEqual(TEST_HPU, devices.accelerator_type() == "hpu")

    def test_rocm_flag_exists(self):
        import torch

        self.assertEqual(TEST_WITH_ROCM, torch.version.hip is not None)


class TestSkipDecorators(TestCase):
    def test_skip_if_hpu(self):
        class Cases(TestCase):
            @skipIfHpu
            def test_x(self):
                pass

        self.assertEqual(len(run_case(Cases, "test_x").skipped), 1 if TEST_HPU else 0)
        with mock.patch.object(platform_skips, "TEST_HPU", True):
            @skipIfHpu
            def test_y(self):
                pass
        skipped = run_case(type("Cases2", (TestCase,), {"test_y": test_y}), "test_y").skipped
        self.assertEqual([reason for _, reason in skipped], ["test doesn't currently work with HPU"])

    def test_skip_if_torch_dynamo_follows_the_flag(self):
        class Cases(TestCase):
            @skipIfTorchDynamo("breaks under dynamo")
            def test_x(self):
                pass

        self.assertEqual(run_case(Cases, "test_x").skipped, [])
        with mock.patch.object(platform_skips, "TEST_WITH_TORCHDYNAMO", True):
            skipped = run_case(Cases, "test_x").skipped
        self.assertEqual([reason for _, reason in skipped], ["breaks under dynamo"])

    def test_skip_if_torch_dynamo_must_be_called(self):
        with self.assertRaisesRegex(TypeError, r"@skipIfTorchDynamo\(\)"):
            skipIfTorchDynamo(lambda self: None)

    def test_xfail_if_torch_dynamo(self):
        def failing(self):
            raise AssertionError("fails")

        self.assertIs(xfailIfTorchDynamo(failing), failing)
        with mock.patch.object(platform_skips, "TEST_WITH_TORCHDYNAMO", True):
            marked = xfailIfTorchDynamo(failing)
        result = run_case(type("Cases", (TestCase,), {"test_x": marked}), "test_x")
        self.assertEqual(len(result.expectedFailures), 1)

    def test_xfail_if(self):
        def failing(self):
            raise AssertionError("fails")

        self.assertIs(xfailIf(False)(failing), failing)
        result = run_case(type("Cases", (TestCase,), {"test_x": xfailIf(True)(failing)}), "test_x")
        self.assertEqual((len(result.expectedFailures), result.failures), (1, []))

    def test_lazy_skip_if_on_a_method_asks_when_the_test_runs(self):
        holds = []

        class Cases(TestCase):
            @lazy_skip_if(lambda: bool(holds), "asked late")
            def test_x(self):
                pass

        self.assertEqual(run_case(Cases, "test_x").skipped, [])
        holds.append(True)
        self.assertEqual([r for _, r in run_case(Cases, "test_x").skipped], ["asked late"])

    def test_lazy_skip_if_on_a_class_asks_once(self):
        asked = []

        def condition(answer):
            asked.append(answer)
            return answer

        for answer, skipped in [(True, ["not on this class"]), (False, [])]:
            with self.subTest(answer=answer):
                @lazy_skip_if(lambda a=answer: condition(a), "not on this class")
                class Cases(TestCase):
                    def test_x(self):
                        pass

                    def test_y(self):
                        pass

                result = unittest.TestResult()
                unittest.defaultTestLoader.loadTestsFromTestCase(Cases).run(result)
                self.assertEqual([r for _, r in result.skipped], skipped * 2)
        self.assertEqual(asked, [True, False])

    def test_skip_if_torch_inductor(self):
        class Cases(TestCase):
            @skipIfTorchInductor()
            def test_default(self):
                pass

            @skipIfTorchInductor("broken by inductor", condition=True)
            def test_forced(self):
                pass

        self.assertEqual(run_case(Cases, "test_default").skipped, [])
        with mock.patch.object(platform_skips, "TEST_WITH_TORCHINDUCTOR", True):
            self.assertEqual([r for _, r in run_case(Cases, "test_default").skipped],
                             ["test doesn't currently work with torchinductor"])
        self.assertEqual([r for _, r in run_case(Cases, "test_forced").skipped], ["broken by inductor"])
        with self.assertRaisesRegex(TypeError, r"@skipIfTorchInductor\(\)"):
            skipIfTorchInductor(lambda self: None)

    def test_sandcastle_skips_are_plain_skips(self):
        class Cases(TestCase):
            @skip_but_pass_in_sandcastle("not here")
            def test_always(self):
                raise AssertionError("must not run")

            @skip_but_pass_in_sandcastle_if(False, "never")
            def test_never(self):
                pass

        self.assertEqual([r for _, r in run_case(Cases, "test_always").skipped], ["not here"])
        self.assertEqual(run_case(Cases, "test_never").skipped, [])

    def test_skips_are_decided_before_ranks_start(self):
        from torch_testing_ext._engine.fresh import supervisor
        from torch_testing_ext.common_distributed import MultiProcessTestCase

        class Cases(MultiProcessTestCase):
            world_size = 2

            @skip_but_pass_in_sandcastle("decided in the parent")
            def test_x(self):
                raise AssertionError("must not run")

        with mock.patch.object(supervisor, "run_ranks", side_effect=AssertionError("a rank started")):
            result = run_case(Cases, "test_x")
        self.assertEqual([r for _, r in result.skipped], ["decided in the parent"])


class TestTemporaryPaths(TestCase):
    def test_temporary_file_name(self):
        with TemporaryFileName(suffix=".pt") as path:
            self.assertTrue(path.endswith(".pt"))
            self.assertTrue(os.path.isfile(path))
            with open(path, "w") as f:  # closed, so it can be opened again (also on Windows)
                f.write("x")
        self.assertFalse(os.path.exists(path))

    def test_temporary_file_name_may_be_removed_by_the_test(self):
        with TemporaryFileName() as path:
            os.remove(path)
        self.assertFalse(os.path.exists(path))

    def test_temporary_directory_name(self):
        with TemporaryDirectoryName(suffix="-tte") as path:
            self.assertTrue(path.endswith("-tte"))
            with open(os.path.join(path, "inside"), "w") as f:
                f.write("x")
        self.assertFalse(os.path.exists(path))

    def test_removed_after_an_error(self):
        with self.assertRaises(ValueError), TemporaryDirectoryName() as path:
            raise ValueError
        self.assertFalse(os.path.exists(path))


class TestSerialTest(TestCase):
    def test_marks_under_pytest_only(self):
        def test_x(self):
            pass

        with mock.patch.dict(sys.modules, {"pytest": None}):
            self.assertIs(serialTest()(test_x), test_x)
        self.assertIs(serialTest(False)(test_x), test_x)
        import pytest  # noqa: F401 - serialTest marks only when pytest is loaded

        marked = serialTest()(test_x)
        self.assertIn("serial", [mark.name for mark in getattr(marked, "pytestmark", [])])

    def test_condition_must_be_a_bool(self):
        with self.assertRaisesRegex(TypeError, r"@serialTest\(\)"):
            serialTest(lambda self: None)


class TestFreePort(TestCase):
    def test_find_free_port_returns_a_bindable_port(self):
        port = find_free_port()
        self.assertIsInstance(port, int)
        self.assertGreater(port, 0)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("localhost", port))

    def test_a_tcp_store_starts_on_it(self):
        import torch.distributed as dist

        @retry_on_connect_failures
        def start():
            return dist.TCPStore("localhost", find_free_port(), 1, is_master=True, wait_for_workers=False)

        store = start()
        store.set("key", "value")
        self.assertEqual(store.get("key"), b"value")


class TestRetryOnConnectFailures(TestCase):
    def setUp(self):
        super().setUp()
        pause = mock.patch.object(ports, "_pause")
        self.pauses = pause.start()
        self.addCleanup(pause.stop)

    def failing(self, times, message=ADDRESS_IN_USE):
        calls = []

        def connect():
            calls.append(1)
            if len(calls) <= times:
                raise RuntimeError(f"The server socket has failed to bind: {message}")
            return "connected"

        return connect, calls

    def test_retries_then_succeeds(self):
        connect, calls = self.failing(times=3)
        self.assertEqual(retry_on_connect_failures(connect)(), "connected")
        self.assertEqual((len(calls), self.pauses.call_count), (4, 3))

    def test_gives_up_after_ten_calls(self):
        connect, calls = self.failing(times=100)
        with self.assertRaisesRegex(RuntimeError, "Failing after 10 retries with error: .*Address already"):
            retry_on_connect_failures(connect)()
        self.assertEqual(len(calls), 10)

    def test_other_errors_pass_through_at_once(self):
        connect, calls = self.failing(times=1, message="something else")
        with self.assertRaisesRegex(RuntimeError, "something else"):
            retry_on_connect_failures(connect)()
        self.assertEqual(len(calls), 1)

        def not_runtime():
            calls.append(1)
            raise ValueError(ADDRESS_IN_USE)

        with self.assertRaises(ValueError):
            retry_on_connect_failures(not_runtime)()
        self.assertEqual(len(calls), 2)

    def test_with_arguments(self):
        connect, calls = self.failing(times=2, message=CONNECT_TIMEOUT)
        with self.assertRaisesRegex(RuntimeError, "timed out"):
            retry_on_connect_failures(connect)()  # not retried by default
        connect, calls = self.failing(times=2, message=CONNECT_TIMEOUT)
        decorated = retry_on_connect_failures(connect_errors=(ADDRESS_IN_USE, CONNECT_TIMEOUT))(connect)
        self.assertEqual(decorated(), "connected")
        self.assertEqual(len(calls), 3)

    def test_a_single_message_is_one_message(self):
        # Upstream's default is a bare string, which matches any error sharing a letter with it.
        connect, calls = self.failing(times=1, message="e")
        with self.assertRaises(RuntimeError):
            retry_on_connect_failures(connect_errors=ADDRESS_IN_USE)(connect)()
        self.assertEqual(len(calls), 1)

    def test_as_a_test_method_decorator(self):
        attempts = []

        class Cases(TestCase):
            @retry_on_connect_failures
            def test_x(self):
                attempts.append(1)
                if len(attempts) < 2:
                    raise RuntimeError(ADDRESS_IN_USE)

        self.assertTrue(run_case(Cases, "test_x").wasSuccessful())
        self.assertEqual(len(attempts), 2)


class TestUpstreamTestCaseMethods(TestCase):
    """``assertNotWarn`` and ``_attempt_load_from_subprocess``, which upstream test files call."""

    def test_assert_not_warn(self):
        self.assertNotWarn(lambda: None)
        with self.assertRaisesRegex(AssertionError, "UserWarning: loud"):
            self.assertNotWarn(lambda: warnings.warn("loud", stacklevel=2))
        with self.assertRaisesRegex(AssertionError, "^why\n"):
            self.assertNotWarn(lambda: warnings.warn("loud", stacklevel=2), "why")
        before = torch.is_warn_always_enabled()
        with self.assertRaises(AssertionError):
            self.assertNotWarn(lambda: warnings.warn("loud", stacklevel=2))
        self.assertEqual(torch.is_warn_always_enabled(), before)

    def test_attempt_load_from_subprocess(self):
        # Two fresh interpreters: the file needs its import string to load (weights_only=True
        # refuses a timedelta until it is allowed), so the string runs first, in the same
        # interpreter, and the load reads the file; the refusal is read from its stderr.
        allow = "import datetime;torch.serialization.add_safe_globals([datetime.timedelta]);"
        with TemporaryFileName() as name:
            torch.save({"step": datetime.timedelta(seconds=1)}, name)
            self._attempt_load_from_subprocess(name, allow)  # loads
            self._attempt_load_from_subprocess(name, "", "Unsupported global: GLOBAL datetime.timedelta")

        def finished(returncode, output):  # the other outcomes, without starting torch again
            done = subprocess.CompletedProcess([], returncode, stdout=output)
            return mock.patch.object(subprocess, "run", return_value=done)

        with finished(1, b"NameError: name 'x' is not defined"), self.assertRaisesRegex(RuntimeError, "NameError"):
            self._attempt_load_from_subprocess("x.pt", "x;")  # a failure nobody expected
        with finished(0, b""), self.assertRaisesRegex(AssertionError, "the load succeeded"):
            self._attempt_load_from_subprocess("x.pt", "", "must be imported")
        with finished(1, b"Boom"), self.assertRaisesRegex(AssertionError, "without 'other'"):
            self._attempt_load_from_subprocess("x.pt", "", "other")


class TestHardwareClassification(TestCase):
    def test_members_by_name(self):
        self.assertEqual([c.name for c in HardwareClassification],
                         ["GENERIC", "ACCELERATOR", "CPU", "CUDA", "MPS", "XPU"])
        # pytest's --hw-classification takes the names, upper-cased
        self.assertIs(HardwareClassification["cuda".upper()], HardwareClassification.CUDA)

    def test_the_label_changes_nothing_at_run_time(self):
        class Labelled(TestCase):
            hw_classification = HardwareClassification.CUDA

            def test_x(self):
                pass

        result = run_case(Labelled, "test_x")
        self.assertEqual((result.testsRun, result.skipped, result.errors, result.failures), (1, [], [], []))

    def test_filter_keeps_labelled_items_in_order(self):
        generic = type("Generic", (TestCase,), {"hw_classification": HardwareClassification.GENERIC,
                                                "test_a": lambda self: None, "test_b": lambda self: None})
        cpu = type("Cpu", (TestCase,), {"hw_classification": HardwareClassification.CPU,
                                        "test_c": lambda self: None})
        inherited = type("Inherited", (cpu,), {})
        plain = type("Plain", (TestCase,), {"test_d": lambda self: None})
        tests = [generic("test_a"), cpu("test_c"), plain("test_d"), generic("test_b"), inherited("test_c")]
        # (classifications asked for, ids of the tests kept)
        rows = [({HardwareClassification.GENERIC}, ["Generic.test_a", "Generic.test_b"]),
                ({HardwareClassification.CPU, HardwareClassification.GENERIC},
                 ["Generic.test_a", "Cpu.test_c", "Generic.test_b", "Inherited.test_c"]),
                ({HardwareClassification.CUDA}, []),
                (set(), [])]
        for wanted, ids in rows:
            with self.subTest(wanted=wanted):
                matched = []
                kept = filter_by_hw_classification(tests, wanted, on_match=matched.append)
                self.assertEqual([".".join(t.id().rsplit(".", 2)[-2:]) for t in kept], ids)
                self.assertEqual(matched, kept)

    def test_filter_with_pytest_style_items(self):
        labelled = type("Labelled", (), {"hw_classification": HardwareClassification.XPU})
        items = [mock.Mock(cls=labelled, name="a"), mock.Mock(cls=None, name="b"), mock.Mock(cls=labelled)]
        kept = filter_by_hw_classification(items, {HardwareClassification.XPU},
                                           get_class=lambda item: getattr(item, "cls", None))
        self.assertEqual(kept, [items[0], items[2]])
        self.assertEqual(filter_by_hw_classification(items, {HardwareClassification.XPU}), kept)

    def test_filter_refuses_names(self):
        with self.assertRaisesRegex(TypeError, "HardwareClassification members"):
            filter_by_hw_classification([], {"CPU"})


class TestDownstreamFlags(TestCase):
    """``SEED``, ``IS_X86`` and ``TEST_ACL``, read by downstream projects' tests."""

    def test_seed_is_the_seed_of_the_run(self):
        from torch_testing_ext._engine.testcase import tensor_testcase

        self.assertEqual(common_utils.SEED, 1234)
        self.assertIn("SEED", common_utils.__all__)
        try:
            tensor_testcase.set_default_seed(7)  # what run_tests --seed 7 does
            self.assertEqual(common_utils.SEED, 7)
        finally:
            tensor_testcase.set_default_seed(tensor_testcase.DEFAULT_SEED)
        with self.assertRaises(AttributeError):
            common_utils.NOT_A_NAME  # noqa: B018

    def test_is_x86_and_test_acl(self):
        import platform

        self.assertIs(common_utils.IS_X86, platform.machine() in ("x86_64", "i386"))
        self.assertIsInstance(common_utils.TEST_ACL, bool)
        if not torch.backends.mkldnn.is_acl_available():
            self.assertFalse(common_utils.TEST_ACL)

    def test_importing_it_imports_pytest_as_upstreams_does(self):
        code = "import sys, torch_testing_ext.common_utils; print('pytest' in sys.modules)"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(done.stdout.strip(), "True", done.stderr)
        code = ("import sys; sys.modules['pytest'] = None\n"  # not installed: the import still works
                "import torch_testing_ext.common_utils; print(sys.modules['pytest'])")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(done.stdout.strip(), "None", done.stderr)
