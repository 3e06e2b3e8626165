"""``across_worlds`` on ``MultiProcessTestCase`` methods: one unittest test, several worlds.

ONE ``python FILE`` run of the file below (its tests in its own ``run_tests()``, read from its
JUnit XML and output): worlds that agree, with ``self.world_size`` each world's size inside the
ranks (a class attribute and a property alike) while the class's other tests keep the class's
size; values that part, named at their first divergence; a world that fails, named; a method
that compares nothing; ``self.compare`` outside a test across worlds; bad decorator arguments
as an error of that test alone; and ``across_worlds`` under other decorators.
"""

import functools
import tempfile
import textwrap
from pathlib import Path

from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures.runs import run_file

ACROSS = '''
import functools

import torch
import torch.distributed as dist

from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_utils import run_tests
from torch_testing_ext.many_worlds import across_worlds


def logged(method):
    @functools.wraps(method)
    def wrapper(self):
        return method(self)
    return wrapper


class TestAcross(MultiProcessTestCase):
    world_size = 2

    def _fit(self, lr_scale=1.0):
        dist.init_process_group(self.backend, init_method=f"file://{self.file_name}", rank=self.rank,
                                world_size=self.world_size)
        w = torch.zeros(2, dtype=torch.float64)
        x = torch.arange(16, dtype=torch.float64).reshape(8, 2) / 10
        for _ in range(3):
            xs = x.chunk(self.world_size)[self.rank]
            grad = 2 * xs.T @ (xs @ w - 1) / len(x)
            dist.all_reduce(grad)
            w -= 0.1 * lr_scale * grad
            self.compare("w", w)

    @across_worlds(1, 2, 4)
    def test_agree(self):
        self.assertEqual(dist.is_initialized(), False)
        self._fit()
        self.assertEqual(dist.get_world_size(), self.world_size)

    @across_worlds(1, 2, 4)
    def test_lr_scaled(self):
        self._fit(lr_scale=self.world_size)

    @across_worlds(1, 2)
    def test_fails_in_world_2(self):
        self.compare("x", 1.0)
        self.assertEqual(self.world_size, 1)

    @across_worlds(1, 2)
    def test_compares_nothing(self):
        pass

    @across_worlds(3)
    def test_bad_arguments(self):
        pass

    @logged
    @across_worlds(1, 2)
    def test_under_a_decorator(self):
        self.compare("x", [1, {"y": 2.5}])

    def test_the_class_size(self):
        self.assertEqual(self.world_size, 2)
        self.compare("x", 1.0)


class TestAcrossProperty(MultiProcessTestCase):
    timeout = 30  # a world whose ranks took the property's size would hang in the rendezvous

    @property
    def world_size(self):
        return 3

    @across_worlds(1, 2, rtol=0, atol=0)
    def test_sized_by_its_world(self):
        dist.init_process_group(self.backend, init_method=f"file://{self.file_name}", rank=self.rank,
                                world_size=self.world_size)
        self.compare("size_is_the_groups", dist.get_world_size() == self.world_size)


if __name__ == "__main__":
    run_tests()
'''


class TestAcrossWorlds(TestCase):
    @classmethod
    def setUpClass(cls):
        cls._temp = tempfile.TemporaryDirectory(prefix="across-worlds-")
        path = Path(cls._temp.name) / "test_across.py"
        path.write_text(textwrap.dedent(ACROSS))
        cls.run_ = run_file(path, cwd=cls._temp.name)
        cls.output = cls.run_.output

    @classmethod
    def tearDownClass(cls):
        cls._temp.cleanup()

    def status(self, name):
        return self.run_.statuses.get(name)

    @functools.cached_property
    def failures(self):
        """{test name: its section of unittest's report}."""
        sections = {}
        for block in self.output.split("=" * 70)[1:]:
            head, _, body = block.partition("-" * 70)
            name = head.strip().split(" ")[1]
            sections[name] = body
        return sections

    def test_worlds_that_agree_pass_one_test_each(self):
        for name in ("TestAcross.test_agree", "TestAcross.test_under_a_decorator",
                     "TestAcrossProperty.test_sized_by_its_world"):
            with self.subTest(name):
                self.assertEqual(self.status(name), Status.PASSED, self.output[-3000:])

    def test_other_tests_keep_the_class_size_and_compare_nothing(self):
        self.assertEqual(self.status("TestAcross.test_the_class_size"), Status.ERROR)
        self.assertIn("self.compare() records values of a test run across worlds", self.failures["test_the_class_size"])

    def test_values_that_part_name_the_first_divergence(self):
        self.assertEqual(self.status("TestAcross.test_lr_scaled"), Status.FAILED)
        report = self.failures["test_lr_scaled"]
        self.assertIn("torch_testing_ext.WorldsDisagree: the worlds disagree: 'w' step 0: world 2 differs from world 1",
                      report)
        self.assertIn("compared at test_across.py:", report)
        self.assertIn("'w', largest absolute difference from world 1 per step", report)

    def test_a_world_that_fails_is_named(self):
        self.assertEqual(self.status("TestAcross.test_fails_in_world_2"), Status.FAILED)
        self.assertIn("1 world of 2 did not pass (world 2)", self.failures["test_fails_in_world_2"])
        self.assertIn("AssertionError: 2 != 1", self.failures["test_fails_in_world_2"])

    def test_nothing_compared_and_bad_arguments(self):
        self.assertEqual(self.status("TestAcross.test_compares_nothing"), Status.FAILED)
        self.assertIn("nothing was compared: worlds 1, 2 passed", self.failures["test_compares_nothing"])
        self.assertEqual(self.status("TestAcross.test_bad_arguments"), Status.ERROR)
        self.assertIn("torch_testing_ext.many_worlds.WorldsSpecError: across_worlds() takes two world sizes or more",
                      self.failures["test_bad_arguments"])

    def test_the_file_exits_non_zero(self):
        self.assertEqual(self.run_.returncode, 1)


if __name__ == "__main__":
    run_tests()
