"""Self-tests of ``benchmarks/harness_names.py`` on a tiny harness directory written to a
temporary directory: which module-level names count, and the names our faces lack."""

import contextlib
import importlib.util
import io
import pathlib
import sys
import tempfile
import textwrap
import unittest

from fixtures.paths import REPO

SCRIPT = REPO / "benchmarks" / "harness_names.py"
spec = importlib.util.spec_from_file_location("harness_names", SCRIPT)
harness_names = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = harness_names
spec.loader.exec_module(harness_names)


class TestHarnessNames(unittest.TestCase):
    def test_module_level_public_names(self):
        source = textwrap.dedent("""
            import os
            A = 1
            B: int = 2
            _private = 3
            def f(): pass
            class C: pass
            if os.name:
                D = 4
            else:
                E = 5
            try:
                F = 6
            except ImportError:
                G = 7
            tmp = 8
            del tmp
            def outer():
                inner = 9
        """)
        self.assertEqual(harness_names.defined_names(source), {"A", "B", "f", "C", "D", "E", "F", "G", "outer"})

    def test_lists_what_our_face_lacks(self):
        with tempfile.TemporaryDirectory() as folder:
            internal = pathlib.Path(folder)
            (internal / "common_utils.py").write_text("def run_tests(): pass\ndef no_such_name_here(): pass\n")
            (internal / "common_fsdp.py").write_text("class FSDPTest: pass\n")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(harness_names.main(["--internal", folder]), 0)
        report = out.getvalue()
        self.assertIn("| common_utils.py | 2 | 1 | no_such_name_here |", report)
        self.assertIn("| common_fsdp.py | 1 | 0 |  |", report)
        self.assertIn("| common_distributed.py | - | - | not in this torch |", report)
        self.assertIn("missing in all: 1", report)

    def test_bad_directory_exits_2(self):
        with contextlib.redirect_stderr(io.StringIO()) as err, self.assertRaises(SystemExit) as exited:
            harness_names.main(["--internal", "/no/such/dir"])
        self.assertEqual(exited.exception.code, 2)
        self.assertIn("not a torch/testing/_internal directory", err.getvalue())
