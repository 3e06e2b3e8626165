"""How the driver runs a test file: ``python FILE`` for run_tests() scripts, pytest otherwise.

Pure tests of ``torch_testing_ext._engine.driver.runners`` (no process starts); the driver running both
kinds end to end is in driver/test_paths.py.
"""

import tempfile
import textwrap
import unittest
from pathlib import Path

from torch_testing_ext._engine.driver.runners import (
    FileKind,
    TestArgs,
    file_kind,
    pytest_node,
    run_command,
    shown_command,
)


class TestFileKind(unittest.TestCase):
    def kind_of(self, source):
        with tempfile.TemporaryDirectory(prefix="driver-runners-") as directory:
            path = Path(directory, "test_x.py")
            path.write_text(textwrap.dedent(source))
            return file_kind(path)

    def test_a_main_block_that_calls_run_tests_is_a_script(self):
        for main in ('if __name__ == "__main__":\n    run_tests()\n',
                     "if '__main__' == __name__:\n    common_utils.run_tests()\n",
                     'if __name__ == "__main__":\n    import sys\n    sys.exit(run_tests(sys.argv))\n'):
            with self.subTest(main=main):
                self.assertIs(self.kind_of("from x import run_tests\n" + main), FileKind.SCRIPT)

    def test_everything_else_runs_under_pytest(self):
        sources = {
            "plain functions": "def test_x():\n    assert True\n",
            "unittest.main": 'import unittest\nif __name__ == "__main__":\n    unittest.main()\n',
            "run_tests outside the main block": "from x import run_tests\nrun_tests()\n",
            "another guard": 'if __name__ != "__main__":\n    run_tests()\n',
            "a syntax error": "def test_x(:\n",
            # run_tests() would run only the class: pytest runs the function too
            "run_tests beside a pytest function": ("import pytest\nfrom x import TestCase, run_tests\n"
                                                   "class TestA(TestCase):\n    def test_a(self):\n        pass\n"
                                                   "@pytest.mark.world_size(2)\ndef test_b(rank):\n    pass\n"
                                                   'if __name__ == "__main__":\n    run_tests()\n'),
        }
        for what, source in sources.items():
            with self.subTest(what):
                self.assertIs(self.kind_of(source), FileKind.PYTEST)

    def test_an_unreadable_file_runs_under_pytest(self):
        self.assertIs(file_kind(Path("/nonexistent/test_x.py")), FileKind.PYTEST)


class TestCommands(unittest.TestCase):
    PATH = Path("/t/tests/test_x.py")
    ARGS = TestArgs(patterns=("sum", "max"), verbose=True, script_only=("--seed", "7"),
                    extra=("--mine=1",))

    def test_script_command(self):
        self.assertEqual(
            run_command("py", self.PATH, FileKind.SCRIPT, ("TestA", "TestB.test_y"), self.ARGS, Path("r")),
            ["py", "/t/tests/test_x.py", "TestA", "TestB.test_y", "-k", "sum", "-k", "max", "-v",
             "--seed", "7", "--mine=1", "--save-xml", "r"])

    def test_pytest_command(self):
        self.assertEqual(
            run_command("py", self.PATH, FileKind.PYTEST, ("TestA::test_y[1]",), self.ARGS, Path("r")),
            ["py", "-m", "pytest", "/t/tests/test_x.py::TestA::test_y[1]", "-k", "sum or max", "-v",
             "--mine=1", "--junitxml=r/TEST-test_x.xml"])
        self.assertEqual(run_command("py", self.PATH, FileKind.PYTEST, (), TestArgs(), Path("r")),
                         ["py", "-m", "pytest", "/t/tests/test_x.py", "--junitxml=r/TEST-test_x.xml"])

    def test_shown_commands_are_pasteable(self):
        self.assertEqual(shown_command("tests/test_x.py", FileKind.PYTEST, ("test_f[a b]",), TestArgs()),
                         "python -m pytest 'tests/test_x.py::test_f[a b]'")
        self.assertEqual(shown_command("tests/test_x.py", FileKind.SCRIPT, ("TestA.test_y",),
                                       TestArgs(script_only=("--seed", "7"))),
                         "python tests/test_x.py TestA.test_y --seed 7")


class TestPytestNode(unittest.TestCase):
    PATH = Path("/home/me/proj/tests/unit/test_x.py")

    def test_classname_relative_to_any_rootdir(self):
        for rooted in ("tests.unit.test_x", "unit.test_x", "test_x", "proj.tests.unit.test_x"):
            with self.subTest(rootdir_gives=rooted):
                self.assertEqual(pytest_node(f"{rooted}.TestA", "test_y[1.5]", self.PATH), "TestA::test_y[1.5]")
                self.assertEqual(pytest_node(f"{rooted}.TestA.TestInner", "test_y", self.PATH),
                                 "TestA::TestInner::test_y")
                self.assertEqual(pytest_node(rooted, "test_f", self.PATH), "test_f")

    def test_a_class_named_like_the_file(self):
        self.assertEqual(pytest_node("unit.test_x.test_x", "test_y", self.PATH), "test_x::test_y")

    def test_collection_errors_and_strangers_mean_the_whole_file(self):
        self.assertEqual(pytest_node("", "tests.unit.test_x", self.PATH), "")
        self.assertEqual(pytest_node("other.test_z.TestA", "test_y", self.PATH), "")
