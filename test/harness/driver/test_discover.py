"""Discovery and selection of test files by the shard driver."""

import tempfile
import unittest
from pathlib import Path

from torch_testing_ext._engine.driver.discover import (
    NoTestsError,
    SelectionError,
    discover_tests,
    find_tests,
    is_distributed,
    select_tests,
)

FILES = [
    "test_top.py",
    "harness/test_a.py",
    "harness/helper.py",             # not test_*.py: never run
    "harness/conftest.py",
    "distributed/test_b.py",
    "distributed/_composable/test_c.py",
    "distributed/__pycache__/test_b.py",  # caches are not tests
    ".hidden/test_d.py",
    "harness/test_notes.txt",
    "venv/lib/test_in_venv.py",           # pytest's norecursedirs: never searched
    "build/test_built.py",
    "env/pyvenv.cfg",                     # any virtual environment is passed over
    "env/lib/test_in_env.py",
    "pkg.egg/test_in_egg.py",
    "models/distributed/test_nested.py",  # a distributed directory at any depth
]


class _FileTree(unittest.TestCase):
    """A temporary tree of FILES (no tests of its own)."""

    def setUp(self):
        super().setUp()
        self._temp = tempfile.TemporaryDirectory(prefix="driver-discover-")
        self.root = Path(self._temp.name)
        for name in FILES:
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")

    def tearDown(self):
        self._temp.cleanup()
        super().tearDown()


class TestDiscover(_FileTree):
    def test_discover_names(self):
        self.assertEqual(discover_tests(self.root), [
            "distributed/_composable/test_c", "distributed/test_b", "harness/test_a",
            "models/distributed/test_nested", "test_top"])

    def test_distributed(self):
        self.assertTrue(is_distributed("distributed/_composable/test_c"))
        self.assertTrue(is_distributed("models/distributed/test_nested"))
        self.assertFalse(is_distributed("harness/test_distributed_thing"))
        self.assertFalse(is_distributed("test_distributed"))
        self.assertFalse(is_distributed("distributed"))


class TestFindTests(_FileTree):
    """PATHs as pytest takes them, the test root their names are relative to, and bad PATHs."""

    def find(self, *paths, test_dir=None):
        tree = find_tests([str(self.root / p) for p in paths], test_dir and self.root / test_dir,
                          self.root / "test")
        return tree.root.relative_to(self.root).as_posix(), tree.names

    def test_no_path_is_the_default_directory_or_test_dir(self):
        (self.root / "test").mkdir()
        (self.root / "test" / "test_x.py").write_text("")
        self.assertEqual(find_tests([], None, self.root / "test").names, ["test_x"])
        tree = find_tests([], self.root / "harness", self.root / "test")
        self.assertEqual((tree.root, tree.names), (self.root / "harness", ["test_a"]))

    def test_paths_inside_the_default_directory_keep_its_names(self):
        tree = find_tests([str(self.root / "distributed")], None, self.root)
        self.assertEqual((tree.root, tree.names), (self.root, ["distributed/_composable/test_c",
                                                               "distributed/test_b"]))

    def test_a_directory_is_its_own_root(self):
        self.assertEqual(self.find("distributed"), ("distributed", ["_composable/test_c", "test_b"]))

    def test_several_paths_share_their_deepest_common_directory(self):
        self.assertEqual(self.find("harness/test_a.py", "distributed/_composable"),
                         (".", ["distributed/_composable/test_c", "harness/test_a"]))
        self.assertEqual(self.find("distributed/test_b.py", "distributed/_composable/test_c.py"),
                         ("distributed", ["_composable/test_c", "test_b"]))

    def test_a_named_file_runs_whatever_its_name(self):
        self.assertEqual(self.find("harness/helper.py"), ("harness", ["helper"]))

    def test_test_dir_names_the_root_of_the_paths(self):
        self.assertEqual(self.find("distributed/test_b.py", test_dir="."), (".", ["distributed/test_b"]))
        with self.assertRaisesRegex(SelectionError, "not under the test directory"):
            self.find("harness/test_a.py", test_dir="distributed")

    def test_bad_paths_are_usage_errors(self):
        cases = {("nope",): "nope: no such file or directory",
                 ("harness/test_notes.txt",): "not a Python file",
                 (".hidden",): None}  # a hidden directory named on purpose is searched
        (self.root / "empty").mkdir()
        cases[("empty",)] = "empty: no test files (test_*.py) in this directory"
        for paths, expected in cases.items():
            with self.subTest(paths=paths):
                if expected is None:
                    self.assertEqual(self.find(*paths)[1], ["test_d"])
                    continue
                with self.assertRaises(SelectionError) as caught:
                    self.find(*paths)
                self.assertIn(expected, str(caught.exception))
                self.assertNotIn("\n", str(caught.exception))

    def test_missing_or_empty_test_directory(self):
        with self.assertRaisesRegex(SelectionError, "test directory not found: .*e.g. tests/"):
            find_tests([], None, self.root / "test")
        (self.root / "empty").mkdir()
        with self.assertRaisesRegex(NoTestsError, "no test files"):
            find_tests([], self.root / "empty", self.root / "test")


NAMES = ["distributed/_composable/test_c", "distributed/test_b", "harness/test_a", "test_top"]


class TestSelect(unittest.TestCase):
    def test_everything_by_default(self):
        self.assertEqual(select_tests(NAMES), NAMES)

    def test_include_exact_names(self):
        self.assertEqual(select_tests(NAMES, include=["test_top", "distributed/test_b"]),
                         ["distributed/test_b", "test_top"])

    def test_include_unknown_name_is_an_error(self):
        for wrong in (["harness/test_x"], ["harness/test_a.py"], ["harness"], ["test_top", "nope"]):
            with self.subTest(wrong=wrong):
                with self.assertRaises(SelectionError) as caught:
                    select_tests(NAMES, include=wrong)
                self.assertNotIn("\n", str(caught.exception))
                self.assertIn(wrong[-1], str(caught.exception))

    def test_exclude_prefixes(self):
        self.assertEqual(select_tests(NAMES, exclude=["distributed/", "test_t"]), ["harness/test_a"])
        self.assertEqual(select_tests(NAMES, exclude=["distributed/_composable"]),
                         ["distributed/test_b", "harness/test_a", "test_top"])

    def test_distributed_only_or_excluded(self):
        self.assertEqual(select_tests(NAMES, distributed=True),
                         ["distributed/_composable/test_c", "distributed/test_b"])
        self.assertEqual(select_tests(NAMES, distributed=False), ["harness/test_a", "test_top"])

    def test_filters_combine(self):
        self.assertEqual(
            select_tests(NAMES, include=["distributed/test_b", "harness/test_a"], exclude=["harness"],
                         distributed=True),
            ["distributed/test_b"])
