"""The pytest plugin that the package registers by entry point, seen from pytest runs.

The plugin's logic runs in this process: each bad setting becomes pytest's usage error from
the plugin's configure hook, the launcher's ``--junitxml`` suffix is given once however many
plugins ask, and a verdict's report is its message headed by the exception's name, with the
headline for the short summary. One ``python -m pytest`` subprocess per user-visible contract,
with no ``-p``, so the plugin must be active by itself: a failing rank reads from the ranks'
own tracebacks with the rank named in the short summary (real ranks); the same report through
pytest-xdist, and ``--fulltrace`` showing everything (made-up verdicts,
``fixtures/pytest_verdicts.py``: no torch, no ranks); a bad setting is one line and exit
status 4 before any test; under a launcher ``--junitxml`` gets the rank's suffix. Importing
the plugin imports no torch.
"""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import types
import unittest
from unittest import mock

import pytest

from torch_testing_ext._engine.launched import launcher_env
from torch_testing_ext._engine.pytest_native.rank_failure_report import rank_failure_longrepr
from torch_testing_ext._engine.worlds.outcomes import RanksDidNotPass, raise_verdict
from torch_testing_ext.launcher import pytest_ranks
from torch_testing_ext.pytest_plugin import plugin

from fixtures import pytest_verdicts
from fixtures.pytest_runs import PytestRun, failure_section, summary_lines
from fixtures.runs import checkout_env

RANKS = '''
import os
import torch
import torch.distributed as dist
from torch_testing_ext.common_distributed import MultiProcessTestCase


def helper_that_checks(value):
    assert value == 3.0, f"the sum is {value}"


class TestRanks(MultiProcessTestCase):
    world_size = 2

    def test_fails_on_rank_1(self):
        dist.init_process_group("gloo", init_method=f"file://{self.file_name}", rank=self.rank,
                                world_size=self.world_size)
        t = torch.ones(1)
        dist.all_reduce(t)
        if self.rank == 1:
            helper_that_checks(t.item())

    def test_dies_on_rank_0(self):
        if self.rank == 0:
            os._exit(7)
'''

PLAIN = '''
def test_plain():
    assert True
'''

# Collecting this file leaves a marker: a run that stops before any test must not.
COLLECTED = '''
import os

open(os.path.join(os.path.dirname(__file__), "collected.marker"), "w").close()


def test_plain():
    assert True
'''

# Every environment variable of README's Settings table: a bad value, and what it says.
BAD = {
    "TORCH_TESTING_EXT_TIMEOUT": ("abc", "expected a positive number of seconds"),
    "TORCH_TESTING_EXT_LEFTOVER_PROCESSES": ("always", "expected one of warn, fail"),
    "TORCH_TESTING_EXT_HF_BERT": ("huge", "expected one of upstream, cpu"),
    "TORCH_TESTING_EXT_COLLECTIVES": ("all", "expected one of record, off"),
    "PYTORCH_TEST_WITH_SLOW": ("2", "expected one of 1, 0, true, false, yes, no, on, off"),
    "PYTORCH_TEST_WITH_DEV_DBG_ASAN": ("maybe", "expected one of 1, 0, true, false, yes, no, on, off"),
    "RANK": ("-1", "expected a non-negative integer"),
    "WORLD_SIZE": ("0", "expected a positive integer"),
    "LOCAL_RANK": ("x", "expected a non-negative integer"),
    "MASTER_ADDR": ("a b", "expected a host name or address"),
    "MASTER_PORT": ("70000", "expected a port number from 1 to 65535"),
}
LAUNCHED = {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "localhost", "MASTER_PORT": "29500"}


@contextlib.contextmanager
def harness_environ(**env):
    """``os.environ`` without the harness's variables, and ``env`` on top. The launcher's
    variables are read as they were when ``launcher_env`` was imported, so they are put there
    too (both are restored afterwards)."""
    names = set(BAD) | set(LAUNCHED) | {launcher_env.AGENT_STORE_ENV, launcher_env.RESTART_COUNT_ENV}
    kept = {name: value for name, value in os.environ.items() if name not in names}
    launcher = {name: value for name, value in env.items() if name in names}
    with mock.patch.dict(os.environ, {**kept, **env}, clear=True), \
            mock.patch.dict(launcher_env._READ_AT_IMPORT, launcher, clear=True):
        yield


def pytest_config(xmlpath=None):
    """As much of a ``pytest.Config`` as the plugin's configure hooks read."""
    lines = []
    return types.SimpleNamespace(stash=pytest.Stash(), option=types.SimpleNamespace(xmlpath=xmlpath),
                                 ini_lines=lines, addinivalue_line=lambda name, line: lines.append((name, line)))


def report_lines(verdict):
    """What the plugin makes of the exception that ends a test with ``verdict``: the lines
    of its report, and the crash message the short summary shows."""
    try:
        raise_verdict(verdict)
    except RanksDidNotPass:
        longrepr = rank_failure_longrepr(pytest.ExceptionInfo.from_current())
    return str(longrepr).splitlines(), longrepr.reprcrash.message


class TestRankFailureReportInProcess(unittest.TestCase):
    def test_the_verdicts_message_headed_by_the_exceptions_name_and_its_headline(self):
        for verdict, name in ((pytest_verdicts.failing_verdict(), "RankFailure"),
                              (pytest_verdicts.died_verdict(), "RankError")):
            with self.subTest(name):
                lines, crash = report_lines(verdict)
                message = verdict.message.splitlines()
                self.assertEqual(lines, [f"{name}: {message[0]}", *message[1:]])
                self.assertEqual(crash, verdict.headline)
        self.assertEqual(report_lines(pytest_verdicts.failing_verdict())[1],
                         "rank 1 failed: AssertionError: the sum is 2.0")

    def test_any_other_exception_keeps_pytests_report(self):
        try:
            raise AssertionError("not a rank's")
        except AssertionError:
            self.assertIsNone(rank_failure_longrepr(pytest.ExceptionInfo.from_current()))


class TestRankFailureReport(unittest.TestCase):
    """pytest's own output, from real ranks and from made-up verdicts."""

    def test_a_failing_rank_reads_from_the_users_frame(self):
        run = PytestRun({"test_ranks.py": RANKS})
        self.addCleanup(run.cleanup)
        result = run.run("test_ranks.py")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        section = failure_section(result.stdout, "TestRanks.test_fails_on_rank_1")
        self.assertEqual(section[:3], ["RankFailure: 1 of 2 ranks did not pass (rank 1)", "rank 1 failed:",
                                       "[rank 1] Traceback (most recent call last):"])
        self.assertIn("in test_fails_on_rank_1", section[3])  # the user's frame comes first
        self.assertIn("[rank 1]     helper_that_checks(t.item())", section)
        self.assertIn("[rank 1] AssertionError: the sum is 2.0", section)
        text = "\n".join(section)
        for harness in ("unittest/case.py", "torch_testing_ext/", "raise_verdict"):
            self.assertNotIn(harness, text)
        self.assertLessEqual(len(section), 12, text)
        died = failure_section(result.stdout, "TestRanks.test_dies_on_rank_0")
        self.assertEqual(died[0], "RankError: 1 of 2 ranks did not pass (rank 0)")
        self.assertSummaryNamesTheRanks(result.stdout, {"test_fails_on_rank_1 - rank 1 failed: ",
                                                        "test_dies_on_rank_0 - rank 0 exited "})

    def assertSummaryNamesTheRanks(self, output, expected):
        summary = summary_lines(output)
        found = {start for start in expected for line in summary if start in line}
        self.assertEqual(found, expected, output)  # the rank is named before the line is cut
        for line in summary:
            self.assertLessEqual(len(line), 80, line)

    def made_up_verdicts(self):
        run = PytestRun({})
        self.addCleanup(run.cleanup)
        shutil.copy(pytest_verdicts.__file__, run.root / "test_verdicts.py")
        return run

    def test_the_same_report_through_xdist(self):
        # Reports cross from xdist's worker to its controller as data: all of it survives.
        result = self.made_up_verdicts().run("test_verdicts.py", "-n", "1")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        for title, verdict in (("test_fails_on_rank_1", pytest_verdicts.failing_verdict()),
                               ("test_dies_on_rank_0", pytest_verdicts.died_verdict())):
            with self.subTest(title):
                self.assertEqual(failure_section(result.stdout, title), report_lines(verdict)[0])
        self.assertSummaryNamesTheRanks(result.stdout, {"test_fails_on_rank_1 - rank 1 failed: ",
                                                        "test_dies_on_rank_0 - rank 0 exited "})

    def test_fulltrace_still_shows_everything(self):
        result = self.made_up_verdicts().run("test_verdicts.py", "--fulltrace", "-k", "fails_on_rank_1")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("raise_verdict", result.stdout)


SUBTESTS = """
import unittest
import torch

class TestSubtests(unittest.TestCase):
    def test_dtypes(self):
        for dtype in (torch.float32, torch.int64):
            with self.subTest(dtype=dtype, size=torch.Size([2]), cls=ValueError, plain=[1, "a"]):
                self.assertTrue(dtype.is_floating_point)
"""


class TestSubtestsThroughXdist(unittest.TestCase):
    def test_subtest_arguments_pytorch_tests_pass_cross_from_a_worker(self):
        # A dtype, a size and a class as subTest arguments: xdist's worker could not send the
        # report (DumpError), and the test errored instead of failing its int64 subtest. (pytest
        # 9.2 and later send every argument as its repr themselves.)
        run = PytestRun({"test_subtests.py": SUBTESTS})
        self.addCleanup(run.cleanup)
        result = run.run("test_subtests.py", "-n", "1", "-rA")
        output = result.stdout + result.stderr
        self.assertEqual(result.returncode, 1, output)
        self.assertNotIn("DumpError", output)
        self.assertRegex(output, r"SUBFAILED\(dtype=.?torch\.int64.?, size=.?torch\.Size\(\[2\]\).?, "
                                 r"cls=.?<class 'ValueError'>.?, plain=.?\[1, 'a'\].?\) "
                                 r"test_subtests\.py::TestSubtests::test_dtypes")
        self.assertIn("1 failed", output)


class TestSettingsAreUsageErrors(unittest.TestCase):
    def test_each_bad_setting_is_a_one_line_usage_error_of_the_configure_hook(self):
        for name, (value, expected) in BAD.items():
            with self.subTest(name=name):
                env = {name: value}
                if name in LAUNCHED:  # the launcher's variables are read when RANK is set
                    env = dict(LAUNCHED, **env)
                with harness_environ(**env), self.assertRaises(pytest.UsageError) as caught:
                    plugin.pytest_configure(pytest_config())
                self.assertEqual(str(caught.exception), f"torch_testing_ext: {name}={value!r}: {expected}")

    def test_rank_without_the_other_launcher_variables(self):
        with harness_environ(RANK="0"), self.assertRaises(pytest.UsageError) as caught:
            plugin.pytest_configure(pytest_config())
        self.assertTrue(str(caught.exception).startswith("torch_testing_ext: WORLD_SIZE is not set"),
                        caught.exception)

    def test_good_settings_pass(self):
        config = pytest_config("report.xml")
        with harness_environ(TORCH_TESTING_EXT_TIMEOUT="60", **LAUNCHED):
            plugin.pytest_configure(config)
        self.assertEqual(config.option.xmlpath, "report.xml")  # rank 0 keeps the name
        self.assertEqual([name for name, _ in config.ini_lines], ["markers", "markers"])  # world_size, worlds
        self.assertTrue(config.ini_lines[0][1].startswith("world_size(n | [n, m]"))
        self.assertTrue(config.ini_lines[1][1].startswith("worlds(n, m, ..., *, rtol=None"))

    def test_a_bad_setting_is_one_line_and_exit_4_before_any_test(self):
        run = PytestRun({"test_collected.py": COLLECTED})
        self.addCleanup(run.cleanup)
        result = run.run("test_collected.py", **dict(LAUNCHED, MASTER_PORT="70000"))
        self.assertEqual(result.returncode, 4, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        self.assertEqual(lines, ["ERROR: torch_testing_ext: MASTER_PORT='70000': expected a port number "
                                 "from 1 to 65535"])
        self.assertFalse((run.root / "collected.marker").exists(), "a test file was collected")


class TestUnderALauncher(unittest.TestCase):
    LAUNCHED_1 = dict(LAUNCHED, RANK="1", LOCAL_RANK="1")

    def test_junitxml_gets_the_rank_suffix_without_dash_p(self):
        run = PytestRun({"test_plain.py": PLAIN})
        self.addCleanup(run.cleanup)
        result = run.run("test_plain.py", "--junitxml=xml/report.xml", **self.LAUNCHED_1)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(sorted(p.name for p in (run.root / "xml").iterdir()), ["report-rank1.xml"])

    def test_the_old_dash_p_plugin_beside_the_entry_point_still_one_suffix(self):
        for hooks in ((plugin, pytest_ranks), (pytest_ranks, plugin)):
            with self.subTest(first=hooks[0].__name__):
                config = pytest_config("xml/again.xml")
                with harness_environ(**self.LAUNCHED_1):
                    for hook in hooks:
                        hook.pytest_configure(config)
                self.assertEqual(config.option.xmlpath, "xml/again-rank1.xml")


class TestPluginIsCheap(unittest.TestCase):
    def test_loading_the_plugin_imports_no_torch(self):
        code = ("import json, sys, torch_testing_ext.pytest_plugin.plugin\n"
                "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'torch')))")
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                                env=checkout_env())
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout), [])

    def test_the_entry_point_names_the_plugin(self):
        from importlib.metadata import entry_points
        [point] = [p for p in entry_points(group="pytest11") if p.name == "torch_testing_ext"]
        self.assertEqual(point.value, "torch_testing_ext.pytest_plugin.plugin")
