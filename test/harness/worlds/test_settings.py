"""Self-tests: every setting the harness reads is checked where it is read.

In this process, table-driven: each environment variable's parser takes its good values and
refuses its bad ones with one line naming the variable, the value and what is allowed; a bad
class attribute fails that class's tests with its line before any rank starts; a test that
skips skips whatever its world size. One subprocess test shows the contract of a whole file:
``run_tests()`` stops on a bad variable with that line and exit status 2 before any test.
"""

import os
from unittest import mock

from torch_testing_ext._engine.worlds import settings
from torch_testing_ext.common_utils import TestCase

from fixtures import bad_settings
from fixtures.runs import assert_outcomes, run_case, run_file

ENV_PREFIXES = ("TORCH_TESTING_EXT_", "PYTORCH_TEST_WITH_")
BY_NAME = {setting.name: setting for setting in settings.ENV_SETTINGS}
FLAG = "expected one of 1, 0, true, false, yes, no, on, off"


def clean_environ(**env):
    """os.environ without the harness's settings, and ``env`` on top."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIXES)}
    return mock.patch.dict(os.environ, {**kept, **env}, clear=True)


class TestEnvironmentSettings(TestCase):
    BAD = [
        ("TORCH_TESTING_EXT_TIMEOUT", "abc", "expected a positive number of seconds"),
        ("TORCH_TESTING_EXT_TIMEOUT", "-5", "expected a positive number of seconds"),
        ("TORCH_TESTING_EXT_TIMEOUT", "0", "expected a positive number of seconds"),
        ("TORCH_TESTING_EXT_TIMEOUT", "inf", "expected a positive number of seconds"),
        ("TORCH_TESTING_EXT_TIMEOUT", "nan", "expected a positive number of seconds"),
        ("TORCH_TESTING_EXT_LEFTOVER_PROCESSES", "sometimes", "expected one of warn, fail"),
        ("TORCH_TESTING_EXT_HF_BERT", "huge", "expected one of upstream, cpu"),
        ("PYTORCH_TEST_WITH_SLOW", "maybe", FLAG),
        ("PYTORCH_TEST_WITH_DEV_DBG_ASAN", "2", FLAG),
        ("TORCH_TESTING_EXT_COLLECTIVES", "all", "expected one of record, off"),
    ]
    GOOD = [
        ("TORCH_TESTING_EXT_TIMEOUT", "2.5", 2.5),
        ("TORCH_TESTING_EXT_TIMEOUT", "", None),
        ("TORCH_TESTING_EXT_LEFTOVER_PROCESSES", "fail", "fail"),
        ("TORCH_TESTING_EXT_LEFTOVER_PROCESSES", "", "warn"),
        ("TORCH_TESTING_EXT_HF_BERT", "cpu", "cpu"),
        ("PYTORCH_TEST_WITH_SLOW", "off", False),
        ("PYTORCH_TEST_WITH_SLOW", "YES", True),
        ("PYTORCH_TEST_WITH_DEV_DBG_ASAN", "1", True),
        ("TORCH_TESTING_EXT_COLLECTIVES", "off", "off"),
        ("TORCH_TESTING_EXT_COLLECTIVES", "", "record"),
    ]

    def test_every_variable_of_the_settings_table_is_covered(self):
        self.assertEqual({name for name, _, _ in self.BAD}, set(BY_NAME))

    def test_each_bad_value_is_one_line_naming_variable_value_and_what_is_allowed(self):
        for name, value, allowed in self.BAD:
            with self.subTest(name=name, value=value):
                with self.assertRaises(settings.SettingError) as caught:
                    BY_NAME[name].get({name: value})
                self.assertEqual(str(caught.exception), f"{name}={value!r}: {allowed}")
                with clean_environ(**{name: value}), self.assertRaises(settings.SettingError) as whole:
                    settings.check_environment()
                self.assertEqual(str(whole.exception), str(caught.exception))

    def test_good_values_and_defaults(self):
        for name, value, parsed in self.GOOD:
            with self.subTest(name=name, value=value):
                self.assertEqual(BY_NAME[name].get({name: value}), parsed)
                self.assertEqual(BY_NAME[name].get({}), BY_NAME[name].default)
        with clean_environ(TORCH_TESTING_EXT_TIMEOUT="2.5", PYTORCH_TEST_WITH_SLOW="off"):
            settings.check_environment()

    def test_the_environment_timeout_overrides_any_class_timeout(self):
        with clean_environ(TORCH_TESTING_EXT_TIMEOUT="60"):
            self.assertEqual(settings.timeout_seconds("BadTimeout.timeout", -5), 60.0)
        with clean_environ():
            self.assertEqual(settings.timeout_seconds("Ok.timeout", 7), 7.0)
            with self.assertRaisesRegex(settings.SettingError, r"^BadTimeout.timeout=-5: expected a positive"):
                settings.timeout_seconds("BadTimeout.timeout", -5)


class TestRunTestsStopsOnABadSetting(TestCase):
    """The whole-file contract, once: one line on stderr, exit 2, nothing run."""

    def test_one_line_and_exit_2_before_any_test(self):
        run = run_file(bad_settings.__file__, "Fine", env={"TORCH_TESTING_EXT_TIMEOUT": "abc"})
        self.assertEqual(run.returncode, 2, run.output)
        self.assertEqual(run.stdout, "")
        self.assertEqual(run.stderr, "bad_settings.py: error: TORCH_TESTING_EXT_TIMEOUT='abc': "
                                     "expected a positive number of seconds\n")
        self.assertEqual(run.statuses, {})  # no test ran, no report written


class TestBadClassAttributes(TestCase):
    """Decided in the test's own process, before any rank starts: run here."""

    def setUp(self):
        super().setUp()
        patched = clean_environ()
        patched.start()
        self.addCleanup(patched.stop)

    def assertSettingError(self, result, line):
        assert_outcomes(self, result, errors=1)
        self.assertIn(f"SettingError: {line}", result.errors[0][1])

    def test_a_bad_timeout_fails_each_test_of_its_class_with_one_line(self):
        for name in ("test_a", "test_b"):
            with self.subTest(name):
                self.assertSettingError(run_case(bad_settings.BadTimeout, name),
                                        "BadTimeout.timeout=-5: expected a positive number of seconds")

    def test_a_bad_world_size_fails_its_tests(self):
        for cls, shown in ((bad_settings.BadWorldSize, "'two'"), (bad_settings.ZeroWorldSize, "0")):
            with self.subTest(cls=cls.__name__):
                self.assertSettingError(run_case(cls, "test_a"),
                                        f"{cls.__name__}.world_size={shown}: expected a positive integer")

    def test_a_test_that_skips_skips_whatever_its_world_size(self):
        for cls in (bad_settings.ZeroWorldSizeSkipped, bad_settings.ZeroWorldSizeSkippedThreads):
            with self.subTest(cls=cls.__name__):
                skipped = run_case(cls, "test_skipped")
                assert_outcomes(self, skipped, skipped=1)
                self.assertEqual(skipped.skipped[0][1], "needs 2 GPUs")
                # The test that would run still fails on its world size.
                self.assertSettingError(run_case(cls, "test_runs"), f"{cls.__name__}.world_size=0")


class TestSettingParsers(TestCase):
    def test_positive_seconds(self):
        self.assertEqual(settings.positive_seconds("x", "1.5"), 1.5)
        self.assertEqual(settings.positive_seconds("x", 3), 3.0)
        for bad in ("", "nan", "-1", 0, True, None, "1e999"):
            with self.subTest(bad=bad), self.assertRaisesRegex(settings.SettingError, "^x="):
                settings.positive_seconds("x", bad)

    def test_integers_and_ports(self):
        self.assertEqual(settings.positive_integer("n", "4"), 4)
        self.assertEqual(settings.positive_integer("n", 2.0), 2)
        self.assertEqual(settings.non_negative_integer("n", "0"), 0)
        self.assertEqual(settings.port_number("p", "65535"), 65535)
        cases = [(settings.positive_integer, ("4.5", 2.5, 0, -1, True, None, "four")),
                 (settings.non_negative_integer, ("-1", "x", 1.5)),
                 (settings.port_number, ("0", "65536", "http"))]
        for parse, bad_values in cases:
            for bad in bad_values:
                with self.subTest(parse=parse.__name__, bad=bad):
                    with self.assertRaisesRegex(settings.SettingError, "^n=|^p="):
                        parse("n" if parse is not settings.port_number else "p", bad)

    def test_host_addresses(self):
        self.assertEqual(settings.host_address("h", "node-1.cluster"), "node-1.cluster")
        for bad in ("", "a b", "tab\there"):
            with self.subTest(bad=bad), self.assertRaisesRegex(settings.SettingError, "expected a host name"):
                settings.host_address("h", bad)
