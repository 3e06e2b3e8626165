"""The pytest plugin that the package registers by entry point, seen from pytest runs.

Each test runs ``python -m pytest`` in a subprocess on a small fixture file, with no ``-p``:
the plugin must be active by itself. A failing rank reads from the ranks' own tracebacks with
the rank named in the short summary; a bad setting is a usage error before any test; under a
launcher ``--junitxml`` gets the rank's suffix. Importing the plugin imports no torch.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from torch_testing_ext.common_utils import TestCase, run_tests

REPO = Path(__file__).resolve().parents[2]

RANKS = '''
import os
import torch
import torch.distributed as dist
from torch_testing_ext.common_distributed import MultiProcessTestCase

open(os.path.join(os.path.dirname(__file__), "collected.marker"), "w").close()


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


class PytestRun:
    """``python -m pytest`` on fixture files in a temporary directory, 80 columns wide."""

    def __init__(self, files):
        self._temp = tempfile.TemporaryDirectory(prefix="pytest-plugin-")
        self.root = Path(self._temp.name)
        for name, body in files.items():
            (self.root / name).write_text(textwrap.dedent(body))

    def run(self, *args, **env):
        environ = {k: v for k, v in os.environ.items() if k not in env}
        environ.update({k: v for k, v in env.items() if v is not None}, COLUMNS="80")
        environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        environ.pop("PYTEST_ADDOPTS", None)
        environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        for ci_marker in ("CI", "BUILD_NUMBER"):  # pytest leaves summary lines uncut on CI
            environ.pop(ci_marker, None)
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=self.root,
                              env=environ, capture_output=True, text=True, timeout=300)

    def cleanup(self):
        self._temp.cleanup()


def failure_section(output, title):
    """The lines of one test's section under FAILURES (without pytest-xdist's worker line)."""
    lines = [line for line in output.splitlines() if not line.startswith("[gw")]
    start = next(i for i, line in enumerate(lines) if re.fullmatch(rf"_+ {re.escape(title)} _+", line))
    end = next(i for i in range(start + 1, len(lines)) if re.fullmatch(r"[_=]+ .* [_=]+", lines[i]))
    return lines[start + 1:end]


class TestRankFailureReport(TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pytest = PytestRun({"test_ranks.py": RANKS})

    @classmethod
    def tearDownClass(cls):
        cls.pytest.cleanup()
        super().tearDownClass()

    def check_report(self, result):
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
        summary = result.stdout[result.stdout.index("short test summary info"):].splitlines()[1:3]
        expected = {"test_fails_on_rank_1 - rank 1 failed: ", "test_dies_on_rank_0 - rank 0 exited "}
        found = {start for start in expected for line in summary if start in line}
        self.assertEqual(found, expected, result.stdout)  # the rank is named before the line is cut
        for line in summary:
            self.assertLessEqual(len(line), 80, line)

    def test_a_failing_rank_reads_from_the_users_frame(self):
        self.check_report(self.pytest.run("test_ranks.py"))

    def test_the_same_report_through_xdist(self):
        # Reports cross from xdist's workers to its controller as data: the summary survives.
        result = self.pytest.run("test_ranks.py", "-n", "2")
        self.check_report(result)

    def test_fulltrace_still_shows_everything(self):
        result = self.pytest.run("test_ranks.py", "--fulltrace", "-k", "fails_on_rank_1")
        self.assertIn("raise_verdict", result.stdout)


class TestSettingsAreUsageErrors(TestCase):
    """Every environment variable of README's Settings table."""

    BAD = {
        "TORCH_TESTING_EXT_TIMEOUT": ("abc", "expected a positive number of seconds"),
        "TORCH_TESTING_EXT_LEFTOVER_PROCESSES": ("always", "expected one of warn, fail"),
        "TORCH_TESTING_EXT_HF_BERT": ("huge", "expected one of upstream, cpu"),
        "PYTORCH_TEST_WITH_SLOW": ("2", "expected one of 1, 0, true, false, yes, no, on, off"),
        "PYTORCH_TEST_WITH_DEV_DBG_ASAN": ("maybe", "expected one of 1, 0, true, false, yes, no, on, off"),
        "RANK": ("-1", "expected a non-negative integer"),
        "WORLD_SIZE": ("0", "expected a positive integer"),
        "LOCAL_RANK": ("x", "expected a non-negative integer"),
        "MASTER_ADDR": ("a b", "expected a host name or address"),
        "MASTER_PORT": ("70000", "expected a port number from 1 to 65535"),
    }
    LAUNCHED = {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "localhost",
                "MASTER_PORT": "29500"}

    def test_each_bad_setting_is_one_line_and_exit_4_before_any_test(self):
        run = PytestRun({"test_ranks.py": RANKS})
        self.addCleanup(run.cleanup)
        for name, (value, expected) in self.BAD.items():
            with self.subTest(name=name):
                env = {name: value}
                if name in self.LAUNCHED:  # the launcher's variables are read when RANK is set
                    env = dict(self.LAUNCHED, **env)
                result = run.run("test_ranks.py", **env)
                self.assertEqual(result.returncode, 4, result.stdout + result.stderr)
                self.assertEqual(result.stdout, "")
                lines = [line for line in result.stderr.splitlines() if line.strip()]
                self.assertEqual(lines, [f"ERROR: torch_testing_ext: {name}={value!r}: {expected}"])
                self.assertFalse((run.root / "collected.marker").exists(), "a test file was collected")

    def test_rank_without_the_other_launcher_variables(self):
        run = PytestRun({"test_plain.py": PLAIN})
        self.addCleanup(run.cleanup)
        result = run.run("test_plain.py", RANK="0", WORLD_SIZE=None)
        self.assertEqual(result.returncode, 4)
        self.assertIn("ERROR: torch_testing_ext: WORLD_SIZE is not set", result.stderr)


class TestUnderALauncher(TestCase):
    def test_junitxml_gets_the_rank_suffix_without_dash_p(self):
        run = PytestRun({"test_plain.py": PLAIN})
        self.addCleanup(run.cleanup)
        launched = dict(TestSettingsAreUsageErrors.LAUNCHED, RANK="1", LOCAL_RANK="1")
        result = run.run("test_plain.py", "--junitxml=xml/report.xml", **launched)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(sorted(p.name for p in (run.root / "xml").iterdir()), ["report-rank1.xml"])
        # The old -p plugin beside the entry point: still one suffix.
        result = run.run("test_plain.py", "-p", "torch_testing_ext.launcher.pytest_ranks",
                         "--junitxml=xml/again.xml", **launched)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("again-rank1.xml", sorted(p.name for p in (run.root / "xml").iterdir()))


class TestPluginIsCheap(TestCase):
    def test_loading_the_plugin_imports_no_torch(self):
        code = ("import json, sys, torch_testing_ext.pytest_plugin.plugin\n"
                "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'torch')))")
        path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                                env=dict(os.environ, PYTHONPATH=path))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout), [])

    def test_the_entry_point_names_the_plugin(self):
        from importlib.metadata import entry_points
        [point] = [p for p in entry_points(group="pytest11") if p.name == "torch_testing_ext"]
        self.assertEqual(point.value, "torch_testing_ext.pytest_plugin.plugin")


if __name__ == "__main__":
    run_tests()
