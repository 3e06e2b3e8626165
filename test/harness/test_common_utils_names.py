"""Self-tests of the upstream names ``common_utils`` offers besides TestCase and run_tests:
platform flags, skip and xfail decorators, temporary paths, serialTest, free ports and
retrying on connect failures."""

import datetime
import os
import socket
import subprocess
import sys
import warnings
from unittest import mock

import torch

from torch_testing_ext import common_utils, devices
from torch_testing_ext.common_utils import (
    ADDRESS_IN_USE,
    CONNECT_TIMEOUT,
    IS_FBCODE,
    IS_MACOS,
    IS_SANDCASTLE,
    IS_WINDOWS,
    TEST_HPU,
    TEST_WITH_ROCM,
    TemporaryDirectoryName,
    TemporaryFileName,
    TestCase,
    find_free_port,
    retry_on_connect_failures,
    run_tests,
    serialTest,
    skip_but_pass_in_sandcastle,
    skip_but_pass_in_sandcastle_if,
    skipIfHpu,
    skipIfTorchDynamo,
    xfailIfTorchDynamo,
)
from torch_testing_ext.process_groups import ports
from torch_testing_ext.skips import platform_skips

from fixtures.runs import run_case


class TestFlags(TestCase):
    def test_platform_flags(self):
        self.assertEqual(IS_WINDOWS, sys.platform == "win32")
        self.assertEqual(IS_MACOS, sys.platform == "darwin")
        self.assertIs(IS_FBCODE, False)
        self.assertIs(IS_SANDCASTLE, False)
        self.assertIs(common_utils.TEST_WITH_TORCHDYNAMO, False)

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
        from torch_testing_ext.common_distributed import MultiProcessTestCase
        from torch_testing_ext.fresh_ranks import supervisor

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


if __name__ == "__main__":
    run_tests()
