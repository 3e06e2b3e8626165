"""Self-tests of ``benchmarks/side_by_side.py`` that run no upstream file: it reads each test's
outcome from unittest's ``-v`` output (ours and upstream's alike), and rejects bad arguments."""

import contextlib
import importlib.util
import io
import pathlib
import subprocess
import sys
import tempfile
import unittest

from torch_testing_ext.common_utils import TestCase

from fixtures import inprocess_cases
from fixtures.paths import REPO

SCRIPT = REPO / "benchmarks" / "side_by_side.py"
spec = importlib.util.spec_from_file_location("side_by_side", SCRIPT)
side_by_side = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = side_by_side
spec.loader.exec_module(side_by_side)


class TestSideBySide(TestCase):
    def test_reads_unittests_verbose_output(self):
        output = io.StringIO()
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(inprocess_cases.Counting)
        expected = sorted(f"Counting.{test.id().rsplit('.', 1)[1]}" for test in suite)
        self.assertTrue(expected)
        unittest.TextTestRunner(stream=output, verbosity=2).run(suite)
        found = side_by_side.outcomes(output.getvalue())
        self.assertEqual(sorted(found), expected)
        self.assertTrue(all(side_by_side.kind(v) == side_by_side.PASSED for v in found.values()), found)

    def test_docstring_lines_skips_and_failures(self):
        output = "\n".join([
            "test_a (__main__.TestJoin.test_a)",
            "Tests the main hooks of a single joinable. ... ok",
            "test_b (__main__.TestJoin.test_b) ... skipped 'Need at least 2 CUDA devices'",
            "test_c (test_x.Other.test_c) ... [rank 1] some output",
            "FAIL",
            "test_d (__main__.TestJoin) ... ERROR",  # unittest before Python 3.11
        ])
        self.assertEqual(side_by_side.outcomes(output), {
            "TestJoin.test_a": "ok",
            "TestJoin.test_b": "skipped 'Need at least 2 CUDA devices'",
            "Other.test_c": "FAIL",
            "TestJoin.test_d": "ERROR",
        })
        self.assertEqual([side_by_side.kind(v) for v in ("ok", "skipped 'x'", "FAIL", "ERROR")],
                         ["passed", "skipped", "failed", "failed"])

    def test_bad_arguments_exit_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            text_file = pathlib.Path(tmp, "notes.txt")
            text_file.write_text("x")
            for argv in ([str(text_file)], [str(pathlib.Path(tmp, "missing.py"))], []):
                with self.subTest(argv=argv):
                    stderr = io.StringIO()
                    with contextlib.redirect_stderr(stderr), self.assertRaises(SystemExit) as exit_:
                        side_by_side.parse_args(argv)
                    self.assertEqual(exit_.exception.code, 2)
                    self.assertIn("error:", stderr.getvalue())

    def test_env_settings_and_a_bad_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp, "test_x.py")
            path.write_text("pass\n")
            args = side_by_side.parse_args([str(path), "--env", "BACKEND=gloo", "--env", "X=a=b"])
            self.assertEqual(args.env, {"BACKEND": "gloo", "X": "a=b"})
            for bad in ("NOVALUE", "1X=2", "=3"):
                with self.subTest(bad=bad):
                    stderr = io.StringIO()
                    with contextlib.redirect_stderr(stderr), self.assertRaises(SystemExit) as exit_:
                        side_by_side.parse_args([str(path), "--env", bad])
                    self.assertEqual(exit_.exception.code, 2)
                    self.assertIn(f"--env {bad!r}: expected NAME=VALUE", stderr.getvalue())

    def test_a_distributed_temp_dir_as_upstreams_run_test_makes_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            root, env = side_by_side.dist_temp_dir(pathlib.Path(tmp))
            self.assertEqual(root.parent, pathlib.Path(tmp))
            self.assertTrue((root / "barrier").is_dir() and (root / "test_dir").is_dir())
            self.assertEqual(env, {"TEMP_DIR": str(root), "INIT_METHOD": f"file://{root}/init"})

    def test_a_package_beside_the_files_migrated_on_ours_only(self):
        upstream_import = "from torch.testing._internal.common_utils import TestCase\n"
        with tempfile.TemporaryDirectory() as tmp:
            package = pathlib.Path(tmp, "helpers")
            (package / "__pycache__").mkdir(parents=True)
            (package / "__init__.py").write_text(upstream_import)
            (package / "__pycache__" / "stale.pyc").write_bytes(b"")
            test_file = pathlib.Path(tmp, "test_x.py")
            test_file.write_text("from helpers import TestCase\n")
            args = side_by_side.parse_args([str(test_file), "--package", str(package)])
            self.assertEqual(args.package, [package])
            work = pathlib.Path(tmp, "work")
            work.mkdir()
            sides = side_by_side.prepare_sides(work, args.files, args.package)
            self.assertEqual((sides["upstream"] / "helpers" / "__init__.py").read_text(), upstream_import)
            self.assertEqual((sides["ours"] / "helpers" / "__init__.py").read_text(),
                             "from torch_testing_ext.common_utils import TestCase\n")
            self.assertFalse((sides["ours"] / "helpers" / "__pycache__").exists())
            self.assertTrue((sides["ours"] / "test_x.py").is_file())
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr), self.assertRaises(SystemExit) as exit_:
                side_by_side.parse_args([str(test_file), "--package", tmp])
            self.assertEqual(exit_.exception.code, 2)
            self.assertIn("not a package directory", stderr.getvalue())

    def test_runs_from_a_checkout(self):
        done = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("Upstream test files on PyTorch's own harness", done.stdout)
