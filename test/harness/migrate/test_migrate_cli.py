"""``python -m torch_testing_ext.migrate``: the rewrite of upstream imports and dotted uses, its
agreement with a ``sed`` prefix rewrite, ``--diff``, ``--check``, bad input, and the migrated
files running.

The upstream-style inputs are text fixtures (``fixtures/migrate_tree/**/*.py.txt``, expected
results in ``fixtures/migrate_expected/``) copied to a temporary tree as ``.py`` files, so no
file of this repository imports ``torch.testing._internal``. The command line runs in this
process (``migrate_cli.main``); subprocesses show only what a process can: the migrated files'
tests passing (all of them in one process), ``python -m`` as the entry point, and the package
without LibCST.
"""

import contextlib
import difflib
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import tokenize
import unittest
from unittest import mock

from torch_testing_ext._engine.migrate import migrate_cli, source_files
from torch_testing_ext._engine.migrate.cst_nodes import cst
from torch_testing_ext.common_utils import TestCase

from fixtures.paths import FIXTURES
from fixtures.runs import checkout_env

TREE = str(FIXTURES / "migrate_tree")
EXPECTED = str(FIXTURES / "migrate_expected")
FILES = sorted(os.path.relpath(os.path.join(folder, name), TREE)[: -len(".txt")]
               for folder, _, names in os.walk(TREE) for name in names if name.endswith(".py.txt"))
ENV = checkout_env()

UPSTREAM = "torch.testing." + "_internal"  # spelled apart: no line here starts an import of it
UPSTREAM_PATHS = (UPSTREAM, "torch._dynamo.test_case")
SED = ["sed", "-e", r"s/torch\.testing\._internal/torch_testing_ext/g",
       "-e", r"s/torch\._dynamo\.test_case/torch_testing_ext.dynamo_test_case/g"]
ERROR = f"{migrate_cli.PROG}: error: "


def read(path):
    with open(path) as f:
        return f.read()


def fixture(name):
    return read(os.path.join(TREE, name + ".txt"))


def expected(name):
    return read(os.path.join(EXPECTED, name + ".txt"))


def migrate(*args):
    """Run the command line in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = migrate_cli.main(list(args))
        except SystemExit as exit_:  # argparse errors
            status = exit_.code
    return status, out.getvalue(), err.getvalue()


def lines_with_upstream_in_strings_or_comments(text):
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.STRING, tokenize.COMMENT) and any(
                path in token.string for path in UPSTREAM_PATHS):
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines


@unittest.skipIf(cst is None, "needs libcst (pip install -e '.[test]')")
class TestMigrate(TestCase):
    def setUp(self):
        super().setUp()
        temp = tempfile.TemporaryDirectory(prefix="migrate-")
        self.addCleanup(temp.cleanup)
        self.root = os.path.join(temp.name, "tree")
        for name in FILES:
            self.write(name, fixture(name))

    def path(self, name):
        return os.path.join(self.root, name)

    def write(self, name, text):
        os.makedirs(os.path.dirname(self.path(name)), exist_ok=True)
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)

    def staged_files(self):
        return [name for _, _, names in os.walk(self.root) for name in names
                if name.endswith(".migrate")]

    def assertTreeIs(self, texts):
        self.assertEqual({name: read(self.path(name)) for name in FILES}, texts)

    def assertOneLineError(self, result, starts):
        status, out, err = result
        self.assertEqual((status, out), (2, ""))
        self.assertEqual(err.count("\n"), 1, err)
        self.assertTrue(err.startswith(ERROR + starts), err)

    def test_rewrites_every_form_as_expected(self):
        self.assertGreaterEqual(len(FILES), 3)
        os.chmod(self.path(FILES[0]), 0o755)
        status, out, err = migrate(self.root)
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(sorted(out.splitlines()), sorted([f"rewrote {self.path(n)}" for n in FILES]
                                                          + [f"{len(FILES)} of {len(FILES)} files rewritten"]))
        self.assertTreeIs({name: expected(name) for name in FILES})
        self.assertEqual(stat.S_IMODE(os.stat(self.path(FILES[0])).st_mode), 0o755)
        self.assertEqual(self.staged_files(), [])

    def test_a_second_run_changes_nothing(self):
        self.assertEqual(migrate(self.root)[0], 0)
        self.assertEqual(migrate(self.root), (0, f"read {len(FILES)} files: none needed a rewrite\n", ""))
        self.assertEqual(migrate("--diff", self.root), (0, "", ""))
        self.assertTreeIs({name: expected(name) for name in FILES})

    @unittest.skipUnless(shutil.which("sed"), "needs sed")
    def test_agrees_with_sed_outside_strings_and_comments(self):
        self.assertEqual(migrate(self.root)[0], 0)
        for name in FILES:
            original = fixture(name).splitlines()
            by_sed = subprocess.run(SED, input=fixture(name), capture_output=True, text=True,
                                    check=True).stdout.splitlines()
            by_tool = read(self.path(name)).splitlines()
            kept = lines_with_upstream_in_strings_or_comments(fixture(name))
            self.assertEqual(len(by_tool), len(by_sed))
            self.assertEqual([line for n, line in enumerate(by_tool, 1) if n not in kept],
                             [line for n, line in enumerate(by_sed, 1) if n not in kept], name)
            # Where sed and the tool differ, the tool left a string or comment as it was.
            self.assertEqual([by_tool[n - 1] for n in sorted(kept)],
                             [original[n - 1] for n in sorted(kept)], name)
            if kept:  # ... which sed rewrote
                self.assertNotEqual([by_sed[n - 1] for n in sorted(kept)],
                                    [original[n - 1] for n in sorted(kept)], name)
        self.assertTrue(lines_with_upstream_in_strings_or_comments(fixture("test_utils_forms.py")))

    def test_diff_prints_a_unified_diff_and_writes_nothing(self):
        status, out, err = migrate("--diff", self.root)
        self.assertEqual((status, err), (0, ""))
        diffs = {name: "".join(difflib.unified_diff(
            fixture(name).splitlines(keepends=True), expected(name).splitlines(keepends=True),
            fromfile=self.path(name), tofile=self.path(name))) for name in FILES}
        walked = [os.path.relpath(p, self.root) for p in source_files.python_files([self.root])]
        self.assertEqual(out, "".join(diffs[name] for name in walked))
        self.assertIn(f"\n-import {UPSTREAM}.common_utils\n", out)
        self.assertIn("\n+import torch_testing_ext.common_utils\n", out)
        self.assertTreeIs({name: fixture(name) for name in FILES})

    def test_check_passes_before_and_after_rewriting(self):
        passed = (0, f"checked {len(FILES)} files: torch_testing_ext provides every name they use "
                     "from it (or from torch.testing._internal)\n", "")
        self.assertEqual(migrate("--check", self.root), passed)
        self.assertTreeIs({name: fixture(name) for name in FILES})
        status, out, _ = migrate(self.root)
        self.assertEqual((status, out.splitlines()[-1]), (0, f"{len(FILES)} of {len(FILES)} files rewritten"))
        self.assertEqual(migrate("--check", self.root), passed)
        self.assertEqual(migrate(self.root), (0, f"read {len(FILES)} files: none needed a rewrite\n", ""))

    def test_check_lists_every_name_not_provided(self):
        path = self.write("test_missing.py", textwrap.dedent(f"""\
            import torch
            from {UPSTREAM} import common_utils as cu
            from {UPSTREAM}.common_utils import (
                TestCase,
                not_a_real_helper,  # made up
            )
            import {UPSTREAM}.not_a_real_module as nm
            from torch._dynamo.test_case import TestCase as DynamoTestCase, not_a_real_helper


            def test_uses():
                not_a_real_helper(cu.also_not_real, cu.TestCase, nm.Thing, nm.Thing)
            """))
        before = read(path)
        report = [f"{path}:5: torch_testing_ext.common_utils.not_a_real_helper",
                  f"{path}:7: torch_testing_ext.not_a_real_module",
                  f"{path}:8: torch_testing_ext.dynamo_test_case.not_a_real_helper",
                  f"{path}:12: torch_testing_ext.common_utils.also_not_real",
                  f"{path}:12: torch_testing_ext.not_a_real_module.Thing"]
        report.append("checked 1 file: 5 names not provided, in 1 file")
        self.assertEqual(migrate("--check", path), (1, "\n".join(report) + "\n", ""))
        self.assertEqual(read(path), before)
        self.assertEqual(migrate(path)[0], 0)  # the same names, found in the rewritten file
        self.assertEqual(migrate("--check", path), (1, "\n".join(report) + "\n", ""))

    def test_bad_input_is_one_line_and_exit_2_with_nothing_written(self):
        original = {name: fixture(name) for name in FILES}
        missing = self.path("nowhere.py")
        text_file = self.write("notes.txt", "not python\n")
        broken = self.write("broken/test_broken.py", f"import {UPSTREAM}.common_utils\ndef f(:\n")
        cases = {
            "missing path": ((self.root, missing), f"{missing}: no such file or directory"),
            "not a .py file": ((self.root, text_file), f"{text_file}: not a Python file"),
            "syntax error": ((broken,), f"{broken}:2: syntax error: "),
            # Found while walking, after a file that would be rewritten: that one is not written.
            "syntax error in a tree": ((self.root,), f"{broken}:2: syntax error"),
            "no path": ((), "the following arguments are required: PATH"),
            "--check with --diff": (("--check", "--diff", self.root),
                                    "argument --diff: not allowed with argument --check"),
        }
        for case, (args, message) in cases.items():
            with self.subTest(case):
                self.assertOneLineError(migrate(*args), message)
                self.assertTreeIs(original)
        self.assertEqual(read(broken), f"import {UPSTREAM}.common_utils\ndef f(:\n")

    def test_unreadable_and_undecodable_files_are_one_line_and_exit_2(self):
        original = {name: fixture(name) for name in FILES}
        os.symlink(self.path("gone.py"), self.path("dangling.py"))  # read fails while walking
        self.assertOneLineError(migrate(self.root), f"{self.path('dangling.py')}: cannot read")
        os.unlink(self.path("dangling.py"))
        with open(self.path("latin.py"), "wb") as f:
            f.write(b"x = '\xff'\n")
        self.assertOneLineError(migrate(self.root), f"{self.path('latin.py')}: cannot decode")
        os.unlink(self.path("latin.py"))
        if os.geteuid() != 0:  # root reads a mode-000 file all the same
            locked = self.write("locked.py", "x = 1\n")
            os.chmod(locked, 0)
            self.assertOneLineError(migrate(self.root), f"{locked}: cannot read")
        self.assertTreeIs(original)

    def test_a_failed_write_leaves_every_file_as_it_was(self):
        original = {name: fixture(name) for name in FILES}
        real_mkstemp = tempfile.mkstemp
        calls = []

        def fail_on_second(*args, **kwargs):
            calls.append(args)
            if len(calls) == 2:
                raise PermissionError(13, "Permission denied")
            return real_mkstemp(*args, **kwargs)

        with mock.patch.object(source_files.tempfile, "mkstemp", fail_on_second):
            status, out, err = migrate(self.root)
        self.assertOneLineError((status, out, err), "")
        self.assertIn(": cannot write: Permission denied", err)
        self.assertEqual(len(calls), 2)
        self.assertTreeIs(original)
        self.assertEqual(self.staged_files(), [])

    def test_migrated_files_run_and_pass(self):
        # All of them in one process: each file's module by name under unittest, so torch is
        # imported once. (Their __main__ blocks call run_tests by the names the rewrite gave
        # them; --check finds those provided: test_check_passes_before_and_after_rewriting.)
        self.assertEqual(migrate(self.root)[0], 0)
        modules = [os.path.splitext(os.path.basename(name))[0] for name in FILES]
        folders = sorted({os.path.dirname(self.path(name)) for name in FILES})
        env = dict(ENV, PYTHONPATH=os.pathsep.join([*folders, ENV["PYTHONPATH"]]))
        completed = subprocess.run([sys.executable, "-m", "unittest", "-v", *modules], cwd=self.root,
                                   env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)
        self.assertIn("\nOK", completed.stderr)
        ran = {match.group(1) for match in re.finditer(r"^test\w* \((\w+)\.\w+\.\w+\) \.\.\. ok$",
                                                        completed.stderr, re.MULTILINE)}
        self.assertEqual(ran, set(modules), completed.stderr)  # every file's tests ran and passed

    def test_python_m_entry_point(self):
        completed = subprocess.run([sys.executable, "-m", "torch_testing_ext.migrate", "--diff",
                                    self.root], env=ENV, capture_output=True, text=True)
        self.assertEqual((completed.returncode, completed.stderr), (0, ""))
        self.assertIn("+import torch_testing_ext.common_utils\n", completed.stdout)


class TestWithoutLibCST(TestCase):
    """LibCST is optional: the package imports without it, and the tool says it is missing."""

    BLOCK = "import sys; sys.modules['libcst'] = None\n"  # a None entry: the import fails

    def probe(self, code, *args):
        return subprocess.run([sys.executable, "-c", self.BLOCK + code, *args], env=ENV,
                              capture_output=True, text=True, timeout=120)

    def test_every_module_imports(self):
        completed = self.probe(textwrap.dedent("""
            import importlib, pkgutil
            import torch_testing_ext.migrate as package
            for module in pkgutil.iter_modules(package.__path__, package.__name__ + '.'):
                importlib.import_module(module.name)
            print(len(sys.modules['torch_testing_ext.migrate.__main__'].__dict__) > 0)
            """))
        self.assertEqual((completed.returncode, completed.stdout), (0, "True\n"), completed.stderr)

    def test_the_tool_says_libcst_is_missing(self):
        completed = self.probe("import runpy; sys.argv[0] = 'migrate'; "
                               "runpy.run_module('torch_testing_ext.migrate', run_name='__main__')",
                               "--check", TREE)
        self.assertEqual((completed.returncode, completed.stdout), (2, ""))
        self.assertEqual(completed.stderr, f"{ERROR}libcst is not installed "
                                           "(pip install 'torch_testing_ext[migrate]')\n")
