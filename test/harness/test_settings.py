"""Self-tests: every setting the harness reads is checked where it is read.

A bad environment variable stops a test file with one line naming the variable, the value and
what is allowed, and exit status 2, before any test (or rank) runs; a bad class attribute
fails that class's tests with its line, before any rank starts.
"""

import os
import subprocess
import sys

from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.run import settings

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "bad_settings.py")
ENV_PREFIXES = ("TORCH_TESTING_EXT_", "PYTORCH_TEST_WITH_")


def run_fixture(*args, **env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIXES)}
    return subprocess.run([sys.executable, FIXTURE, *args], env={**clean, **env},
                          capture_output=True, text=True, timeout=120)


class TestBadEnvironment(TestCase):
    CASES = [
        ("TORCH_TESTING_EXT_TIMEOUT", "abc", "expected a positive number of seconds"),
        ("TORCH_TESTING_EXT_TIMEOUT", "-5", "expected a positive number of seconds"),
        ("TORCH_TESTING_EXT_TIMEOUT", "0", "expected a positive number of seconds"),
        ("TORCH_TESTING_EXT_TIMEOUT", "inf", "expected a positive number of seconds"),
        ("TORCH_TESTING_EXT_LEFTOVER_PROCESSES", "sometimes", "expected one of warn, fail"),
        ("TORCH_TESTING_EXT_HF_BERT", "huge", "expected one of upstream, cpu"),
        ("PYTORCH_TEST_WITH_SLOW", "maybe", "expected one of 1, 0, true, false, yes, no, on, off"),
        ("PYTORCH_TEST_WITH_DEV_DBG_ASAN", "2", "expected one of 1, 0, true, false, yes, no, on, off"),
    ]

    def test_each_bad_value_gives_one_line_and_exit_2(self):
        for name, value, allowed in self.CASES:
            with self.subTest(name=name, value=value):
                completed = run_fixture("Fine", **{name: value})
                self.assertEqual(completed.returncode, 2, completed.stderr)
                self.assertEqual(completed.stdout, "")
                lines = completed.stderr.splitlines()
                self.assertEqual(len(lines), 1, completed.stderr)
                self.assertIn(f"{name}={value!r}: {allowed}", lines[0])

    def test_good_values_are_accepted(self):
        completed = run_fixture("Fine", TORCH_TESTING_EXT_TIMEOUT="2.5", PYTORCH_TEST_WITH_SLOW="off",
                                TORCH_TESTING_EXT_LEFTOVER_PROCESSES="fail", TORCH_TESTING_EXT_HF_BERT="")
        self.assertEqual(completed.returncode, 0, completed.stderr)


class TestBadClassAttributes(TestCase):
    def test_a_bad_timeout_fails_each_test_of_its_class_with_one_line(self):
        completed = run_fixture("BadTimeout", "-v")
        self.assertEqual(completed.returncode, 1, completed.stderr)
        self.assertEqual(completed.stderr.count("SettingError: BadTimeout.timeout=-5: expected a "
                                                "positive number of seconds"), 2, completed.stderr)
        self.assertNotIn("rank 0", completed.stderr)  # no rank started

    def test_a_bad_world_size_fails_its_tests(self):
        for cls, shown in (("BadWorldSize", "'two'"), ("ZeroWorldSize", "0")):
            with self.subTest(cls=cls):
                completed = run_fixture(cls)
                self.assertEqual(completed.returncode, 1, completed.stderr)
                self.assertIn(f"SettingError: {cls}.world_size={shown}: expected a positive integer",
                              completed.stderr)

    def test_a_test_that_skips_skips_whatever_its_world_size(self):
        for cls in ("ZeroWorldSizeSkipped", "ZeroWorldSizeSkippedThreads"):
            with self.subTest(cls=cls):
                completed = run_fixture(cls, "-v")
                self.assertEqual(completed.returncode, 1, completed.stderr)
                self.assertIn("test_skipped", completed.stderr)
                self.assertIn("skipped 'needs 2 GPUs'", completed.stderr)
                # The test that would run still fails on its world size.
                self.assertEqual(completed.stderr.count(f"SettingError: {cls}.world_size=0"), 1,
                                 completed.stderr)

    def test_the_environment_timeout_overrides_a_class_timeout(self):
        completed = run_fixture("BadTimeout.test_a", TORCH_TESTING_EXT_TIMEOUT="60")
        self.assertEqual(completed.returncode, 0, completed.stderr)


class TestSettingParsers(TestCase):
    def test_positive_seconds(self):
        self.assertEqual(settings.positive_seconds("x", "1.5"), 1.5)
        self.assertEqual(settings.positive_seconds("x", 3), 3.0)
        for bad in ("", "nan", "-1", 0, True, None, "1e999"):
            with self.subTest(bad=bad), self.assertRaisesRegex(settings.SettingError, "^x="):
                settings.positive_seconds("x", bad)

    def test_positive_integer(self):
        self.assertEqual(settings.positive_integer("n", "4"), 4)
        self.assertEqual(settings.positive_integer("n", 2.0), 2)
        for bad in ("4.5", 2.5, 0, -1, True, None, "four"):
            with self.subTest(bad=bad), self.assertRaisesRegex(settings.SettingError, "^n="):
                settings.positive_integer("n", bad)


if __name__ == "__main__":
    run_tests()
