"""Self-tests of ``TEST_SKIPS``: upstream's exit codes and messages, defined for any GPU count,
and a rank exiting with one of them is reported as a skip."""

import unittest

from torch_testing_ext._engine.skips.skip_codes import (
    skip_reason_for_exit_code,
    skip_reason_for_system_exit,
)
from torch_testing_ext.common_distributed import TEST_SKIPS, TestSkip
from torch_testing_ext.common_utils import TestCase

from fixtures import rank_hooks

# PyTorch's table (torch 2.13): the codes upstream-style rank code exits with.
UPSTREAM = {
    "backend_unavailable": (72, "Skipped because distributed backend is not available."),
    "small_worldsize": (73, "Skipped due to small world size."),
    "odd_worldsize": (87, "Skipped due to odd world size."),
    "no_cuda": (74, "CUDA is not available."),
    "multi-gpu-1": (75, "Need at least 1 CUDA device"),
    "multi-gpu-2": (77, "Need at least 2 CUDA devices"),
    "multi-gpu-3": (80, "Need at least 3 CUDA devices"),
    "multi-gpu-4": (81, "Need at least 4 CUDA devices"),
    "multi-gpu-5": (82, "Need at least 5 CUDA devices"),
    "multi-gpu-6": (83, "Need at least 6 CUDA devices"),
    "multi-gpu-7": (84, "Need at least 7 CUDA devices"),
    "multi-gpu-8": (85, "Need at least 8 CUDA devices"),
    "nccl": (76, "c10d not compiled with NCCL support"),
    "skipIfRocm": (78, "Test skipped for ROCm"),
    "no_peer_access": (79, "Test skipped because no GPU peer access"),
    "generic": (86, "Test skipped at subprocess level, look at subprocess log for skip reason"),
    "importerror": (88, "Test skipped due to missing import"),
    "no_accelerator": (89, "accelerator is not available."),
}


class TestSkipTable(TestCase):
    def test_the_table_is_upstreams(self):
        self.assertEqual({key: tuple(skip) for key, skip in TEST_SKIPS.items()}, UPSTREAM)

    def test_every_code_names_its_own_message(self):
        for key, (code, message) in UPSTREAM.items():
            self.assertEqual(skip_reason_for_exit_code(code), message, key)
        self.assertIsNone(skip_reason_for_exit_code(0))
        self.assertIsNone(skip_reason_for_exit_code(3))

    def test_any_gpu_count_has_a_distinct_code(self):
        beyond = [TEST_SKIPS[f"multi-gpu-{n}"] for n in range(9, 175)]
        self.assertEqual(beyond[0], TestSkip(90, "Need at least 9 CUDA devices"))
        codes = [skip.exit_code for skip in beyond] + [code for code, _ in UPSTREAM.values()]
        self.assertEqual(len(codes), len(set(codes)))
        self.assertTrue(all(code <= 255 for code in codes))
        self.assertEqual(skip_reason_for_system_exit(TEST_SKIPS["multi-gpu-64"].exit_code),
                         "Need at least 64 CUDA devices")
        # An exit status alone in that range is a crash (Python's 120, a native exit(-1)).
        self.assertIsNone(skip_reason_for_exit_code(TEST_SKIPS["multi-gpu-64"].exit_code))
        self.assertIsNone(skip_reason_for_exit_code(255))
        for code, _ in UPSTREAM.values():
            self.assertEqual(skip_reason_for_system_exit(code), skip_reason_for_exit_code(code))
        with self.assertRaises(KeyError):
            TEST_SKIPS["multi-gpu-175"]
        with self.assertRaises(KeyError):
            TEST_SKIPS["no-such-skip"]


class TestRanksExitingWithSkipCodes(TestCase):
    def run_case(self, method):
        result = unittest.TestResult()
        rank_hooks.ExitsWithSkipCodes(method).run(result)
        self.assertEqual(result.errors + result.failures, [])
        return [reason for _, reason in result.skipped]

    def test_os_exit_with_an_upstream_code_is_a_skip(self):
        self.assertEqual(self.run_case("test_exit_code_77"), ["Need at least 2 CUDA devices"])

    def test_os_exit_with_an_extra_code_is_a_crash_not_a_skip(self):
        result = unittest.TestResult()
        rank_hooks.ExitsWithSkipCodes("test_os_exit_with_an_extra_code").run(result)
        self.assertEqual(result.skipped, [])
        self.assertEqual(len(result.errors + result.failures), 1)
        self.assertIn("exited with code 120 without reporting an outcome",
                      (result.errors + result.failures)[0][1])

    def test_sys_exit_beyond_eight_gpus_is_a_skip(self):
        self.assertEqual(self.run_case("test_system_exit_beyond_eight_gpus"),
                         ["Need at least 12 CUDA devices"])
