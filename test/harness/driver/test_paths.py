"""The driver as another project uses it: ``python -m torch_testing_ext.run_test [PATH ...]``.

From the root of a small fixture project whose tests live in ``tests/`` (not this
repository's ``test/``). One run of the driver module in a subprocess shows PATHs as pytest
takes them (a directory, and a file named whatever its name), files that run under pytest
beside a file that calls ``run_tests()``, reruns by node id, and what is passed through to
which; the one-line errors and exit statuses of bad PATHs are the driver's ``main`` called in
this process (it stops before it runs anything), and one of them as a process.
"""

import json
import subprocess
import sys
import tempfile
import textwrap
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from fixtures.runs import checkout_env, driver_main

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
        """``python -m torch_testing_ext.run_test *args``. (The test processes it starts load no
        unrelated pytest plugin: hypothesis's alone takes a second to import.)"""
        env = checkout_env(PYTEST_ADDOPTS="-p no:hypothesispytest -p no:benchmark")
        return subprocess.run([sys.executable, "-m", "torch_testing_ext.run_test", *args], cwd=self.root,
                              env=env, capture_output=True, text=True, timeout=300)

    def main(self, *args):
        """The driver's ``main(args)`` in this process from the project's root."""
        return driver_main(list(args), self.root)

    def script_argv(self):
        log = self.root / "script-argv.json"
        return log.read_text().splitlines() if log.exists() else []

    def cleanup(self):
        self._temp.cleanup()


class DriverPathsTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.project = DriverProject({"tests/test_script.py": SCRIPT, "tests/unit/test_plain.py": PYTEST_FILE,
                                     "tests/unit/helper.py": "def test_helper():\n    pass\n", "empty/README": ""})

    @classmethod
    def tearDownClass(cls):
        cls.project.cleanup()
        super().tearDownClass()


class TestBadPaths(DriverPathsTestCase):
    """The driver's ``main`` in this process: bad PATHs stop it before it runs anything."""

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
                status, out, err = self.project.main(*args)
                self.assertEqual(status, 2, out + err)
                self.assertEqual(out, "")
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertIn(expected, err)
        self.assertEqual(self.project.script_argv(), [])

    def test_an_empty_test_directory_says_so_and_exits_5(self):
        status, out, err = self.project.main("--test-dir", "empty")
        self.assertEqual((status, out), (5, ""), err)
        self.assertEqual(err, "run_test: no test files (test_*.py) under empty; nothing to run\n")


class TestAsAProcess(DriverPathsTestCase):
    def test_a_bad_path_is_one_line_and_exit_2(self):
        result = self.project.run("nope/")
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertEqual(result.stderr, "run_test: error: nope/: no such file or directory\n")

    def test_a_directory_and_a_file_both_kinds_reruns_by_node_id_and_what_goes_to_which(self):
        # tests/ holds a run_tests() script and a pytest file; helper.py is named on the command
        # line, so it runs whatever its name. --seed and --repeat are run_tests' own: scripts
        # only (pytest would refuse them); -k goes to every file; after -- goes to every file as
        # it is, even -v, which the driver would otherwise take for itself.
        result = self.project.run("tests/", "tests/unit/helper.py", "--save-xml", "reports", "--keep-going",
                                  "--seed", "7", "--repeat", "2", "-k", "test", "--", "-v")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        out = result.stdout
        self.assertIn("run_test: shard 1 of 1: 3 test files, jobs 1", out)
        self.assertIn("PASSED      test_script  2 passed, 0 failed, 0 skipped", out)  # --repeat 2
        self.assertIn("PASSED      unit/helper  1 passed, 0 failed, 0 skipped", out)
        self.assertIn("FAILED      unit/test_plain  2 passed, 2 failed, 1 skipped", out)
        self.assertIn("rerun 1 of TestGroup::test_flaky: passed", out)
        self.assertIn("rerun 2 of test_param[2]: failed", out)
        self.assertIn("  python -m pytest 'tests/unit/test_plain.py::test_param[2]' -k test -v\n", out)
        self.assertIn("Flaky (failed, then passed on a rerun):\n  python -m pytest "
                      "tests/unit/test_plain.py::TestGroup::test_flaky -k test -v\n", out)
        self.assertIn("summary: 6 passed, 1 failed, 1 skipped", out)
        self.assertEqual(result.stderr, "")  # one shard: no times file needed, no warning
        [argv] = self.project.script_argv()
        self.assertEqual(json.loads(argv)[:-1], ["-k", "test", "--seed", "7", "--repeat", "2", "-v", "--save-xml"])
        report = ET.parse(self.project.root / "reports" / "unit" / "test_plain.xml").getroot()
        names = sorted(case.get("name") for case in report.iter("testcase"))
        self.assertEqual(names, ["test_flaky", "test_param[1]", "test_param[2]", "test_passes", "test_skipped"])
