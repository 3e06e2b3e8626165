"""Discovery and selection of test files by the shard driver."""

import tempfile
from pathlib import Path

from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.driver.discover import (
    SelectionError,
    discover_tests,
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
]


class TestDiscover(TestCase):
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

    def test_discover_names(self):
        self.assertEqual(discover_tests(self.root), [
            "distributed/_composable/test_c", "distributed/test_b", "harness/test_a", "test_top"])

    def test_distributed(self):
        self.assertTrue(is_distributed("distributed/_composable/test_c"))
        self.assertFalse(is_distributed("harness/test_distributed_thing"))
        self.assertFalse(is_distributed("test_distributed"))


NAMES = ["distributed/_composable/test_c", "distributed/test_b", "harness/test_a", "test_top"]


class TestSelect(TestCase):
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


if __name__ == "__main__":
    run_tests()
