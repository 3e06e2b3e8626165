"""Self-tests of ``tools/torch_matrix.py`` that need no venv: it reads the driver's closing
line, finds pip's cap on torch, and rejects bad arguments with one line and exit status 2."""

import contextlib
import importlib.util
import io
import os
import pathlib
import sys
import tempfile
import unittest
from unittest import mock

from torch_testing_ext._engine.driver.report import summary_text

from fixtures.paths import REPO

TOOL = REPO / "tools" / "torch_matrix.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("torch_matrix", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


torch_matrix = load_tool()


class TestTorchMatrixTool(unittest.TestCase):
    def test_reads_the_drivers_summary_line(self):
        text = summary_text([], [], 1.0, command_for=lambda name, selection: name)
        self.assertEqual(torch_matrix.SUMMARY.findall(text), [("0", "0", "0")])

    def test_release(self):
        self.assertEqual(torch_matrix.release("2.15.0+cpu"), (2, 15, 0))
        self.assertEqual(torch_matrix.release("2.14.1"), (2, 14, 1))
        self.assertGreater(torch_matrix.release("2.15.0"), torch_matrix.release("2.14.1"))

    def test_finds_pips_cap_on_torch(self):
        with tempfile.TemporaryDirectory() as tmp:
            constraints = pathlib.Path(tmp, "constraints.txt")
            constraints.write_text("numpy<3\ntorch<=2.14.1\n")
            with mock.patch.dict(os.environ, {"PIP_CONSTRAINT": str(constraints)}):
                self.assertEqual(torch_matrix.torch_cap(pathlib.Path(sys.executable)), (2, 14, 1))
            with mock.patch.dict(os.environ, {"PIP_CONSTRAINT": "/dev/null"}):
                self.assertIsNone(torch_matrix.torch_cap(pathlib.Path(sys.executable)))

    def test_row_shows_counts_minutes_and_result(self):
        outcome = torch_matrix.Outcome("2.14.1", 300, 0, 11, install_seconds=60, run_seconds=540)
        self.assertEqual(outcome.row(), "| 2.14.1 | 300 | 0 | 11 | 9.0 | 1.0 | ok |")
        broken = torch_matrix.Outcome("2.15.0", problem="torch install failed (exit 1)")
        self.assertEqual(broken.row(), "| 2.15.0 | - | - | - | - | 0.0 | torch install failed (exit 1) |")

    def test_every_version_sensitive_name_is_a_test_file_the_driver_knows(self):
        names = torch_matrix.VERSION_SENSITIVE
        self.assertEqual(len(set(names)), len(names))
        for name in names:
            with self.subTest(name=name):
                self.assertTrue((REPO / "test" / f"{name}.py").is_file())
        self.assertIn("harness/test_torch_private", names)  # every private access's contract
        self.assertIn("harness/testcase/test_upstream_ids", names)

    def test_version_sensitive_run_includes_exactly_those_files(self):
        commands = []

        def fake_run(command, env=None, cwd=None, log=None):
            commands.append(command)
            return 0, "summary: 3 passed, 0 failed, 1 skipped\n"

        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(torch_matrix, "copy_committed_tree"), \
                mock.patch.object(torch_matrix.subprocess, "run"), \
                mock.patch.object(torch_matrix, "install", return_value=""), \
                mock.patch.object(torch_matrix, "run", side_effect=fake_run):
            work = pathlib.Path(tmp)
            outcome = torch_matrix.try_version("2.15.0", work, REPO, "HEAD",
                                               torch_matrix.VERSION_SENSITIVE)
            whole = torch_matrix.try_version("2.15.0", work, REPO, "HEAD")
        self.assertEqual((outcome.passed, outcome.failed, outcome.skipped, outcome.problem), (3, 0, 1, ""))
        selected, everything = commands
        self.assertEqual(selected[selected.index("-i") + 1:], list(torch_matrix.VERSION_SENSITIVE))
        self.assertNotIn("-i", everything)
        self.assertEqual(whole.problem, "")

    def test_bad_arguments_exit_2_with_one_line(self):
        cases = {
            ("--versions", "latest"): "not a torch release: 'latest'",
            ("--versions", "2.13.0", "2.13.0"): "a version is given twice",
            ("--work-dir", "/no/such/dir"): "--work-dir: no such directory",
            ("--source", "/"): "--source: not a git checkout",
            ("--bogus",): "unrecognized arguments: --bogus",
        }
        for argv, message in cases.items():
            with self.subTest(argv=argv):
                stderr = io.StringIO()
                with contextlib.redirect_stderr(stderr):
                    self.assertEqual(torch_matrix.main(list(argv)), 2)
                lines = stderr.getvalue().splitlines()
                self.assertEqual(len(lines), 1, lines)
                self.assertIn(message, lines[0])
