"""The driver as another project uses it: ``python -m torch_testing_ext.run_test [PATH ...]``.

Each test runs the driver module in a subprocess, from the root of a small fixture project
whose tests live in ``tests/`` (not this repository's ``test/``): PATHs as pytest takes them,
files that run under pytest beside files that call ``run_tests()``, what is passed through to
which, and the one-line errors and exit statuses of bad PATHs.
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

from torch_testing_ext.common_utils import TestCase, run_tests

REPO = Path(__file__).resolve().parents[2]

# Records its argv, so that tests see what the driver passed on.
SCRIPT = '''
import json, sys
from torch_testing_ext.common_utils import TestCase, run_tests

with open("script-argv.json", "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")

class TestScript(TestCase):
    def test_ok(self):
        pass

if __name__ == "__main__":
    run_tests()
'''

# Plain pytest: no torch, a parametrized failure, a test that fails only on its first run.
PYTEST_FILE = '''
import os, pytest

MARKER = os.path.join(os.path.dirname(__file__), "flaky.marker")

def test_passes():
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n < 2, "two is too many"

class TestGroup:
    def test_flaky(self):
        if not os.path.exists(MARKER):
            open(MARKER, "w").close()
            pytest.fail("first run fails")

    @pytest.mark.skip(reason="not today")
    def test_skipped(self):
        pass
'''


class DriverProject:
    """A temporary project root with ``tests/`` and the driver run as a module from it."""

    def __init__(self, files):
        self._temp = tempfile.TemporaryDirectory(prefix="driver-paths-")
        self.root = Path(self._temp.name)
        for name, body in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(body))

    def run(self, *args):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
        return subprocess.run([sys.executable, "-m", "torch_testing_ext.run_test", *args], cwd=self.root,
                              env=env, capture_output=True, text=True, timeout=300)

    def script_argv(self):
        log = self.root / "script-argv.json"
        return log.read_text().splitlines() if log.exists() else []

    def cleanup(self):
        self._temp.cleanup()


class TestPaths(TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.project = DriverProject({"tests/test_script.py": SCRIPT, "tests/unit/test_plain.py": PYTEST_FILE,
                                     "tests/unit/helper.py": "def test_helper():\n    pass\n", "empty/README": ""})

    @classmethod
    def tearDownClass(cls):
        cls.project.cleanup()
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        (self.project.root / "script-argv.json").unlink(missing_ok=True)
        (self.project.root / "tests" / "unit" / "flaky.marker").unlink(missing_ok=True)

    def test_a_directory_runs_both_kinds_of_file_with_pytest_reruns_by_node_id(self):
        result = self.project.run("tests/", "--save-xml", "reports", "--keep-going", "--seed", "7")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        out = result.stdout
        self.assertIn("run_test: shard 1 of 1: 2 test files, jobs 1", out)
        self.assertIn("PASSED      test_script  1 passed, 0 failed, 0 skipped", out)
        self.assertIn("FAILED      unit/test_plain  2 passed, 2 failed, 1 skipped", out)
        self.assertIn("rerun 1 of TestGroup::test_flaky: passed", out)
        self.assertIn("rerun 2 of test_param[2]: failed", out)
        self.assertIn("  python -m pytest 'tests/unit/test_plain.py::test_param[2]'\n", out)
        self.assertIn("Flaky (failed, then passed on a rerun):\n  python -m pytest "
                      "tests/unit/test_plain.py::TestGroup::test_flaky", out)
        self.assertIn("summary: 4 passed, 1 failed, 1 skipped", out)
        self.assertEqual(result.stderr, "")  # one shard: no times file needed, no warning
        # run_tests' own options go to scripts, not to pytest (which would refuse --seed).
        self.assertEqual(self.project.script_argv(), [f'["--seed", "7", "--save-xml", "{self.report_dir(result)}"]'])
        report = ET.parse(self.project.root / "reports" / "unit" / "test_plain.xml").getroot()
        names = sorted(case.get("name") for case in report.iter("testcase"))
        self.assertEqual(names, ["test_flaky", "test_param[1]", "test_param[2]", "test_passes", "test_skipped"])

    def report_dir(self, result):
        # The script's --save-xml is a per-process directory of the driver's (gone by now).
        line = self.project.script_argv()[0]
        return line.split('"--save-xml", "')[1].rstrip('"]')

    def test_files_and_passthrough_after_double_dash(self):
        result = self.project.run("tests/test_script.py", "-k", "ok", "--", "--repeat", "2")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("PASSED      test_script  2 passed", result.stdout)
        argv = self.project.script_argv()[0]
        self.assertTrue(argv.startswith('["-k", "ok", "--repeat", "2", "--save-xml"'), argv)

    def test_a_file_named_on_the_command_line_runs_whatever_its_name(self):
        result = self.project.run("tests/unit/helper.py")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("PASSED      helper  1 passed, 0 failed, 0 skipped", result.stdout)

    def test_bad_paths_are_one_line_and_exit_2(self):
        cases = {("nope/",): "run_test: error: nope/: no such file or directory",
                 ("empty/",): "run_test: error: empty/: no test files (test_*.py) in this directory",
                 ("tests/unit/test_plain.py", "--test-dir", "empty"):
                     "run_test: error: tests/unit/test_plain.py: not under the test directory empty",
                 ("--mine", "3", "tests/"): "3: no such file or directory (an option the driver does "
                                            "not know, such as --mine, takes its value as --opt=value, or after --)",
                 (): "run_test: error: test directory not found: "}
        for args, expected in cases.items():
            with self.subTest(args=args):
                result = self.project.run(*args)
                self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
                self.assertEqual(result.stdout, "")
                self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
                self.assertIn(expected, result.stderr)
        self.assertEqual(self.project.script_argv(), [])

    def test_an_empty_test_directory_says_so_and_exits_5(self):
        result = self.project.run("--test-dir", "empty")
        self.assertEqual(result.returncode, 5, result.stdout + result.stderr)
        self.assertEqual(result.stderr, "run_test: no test files (test_*.py) under empty; nothing to run\n")


if __name__ == "__main__":
    run_tests()
