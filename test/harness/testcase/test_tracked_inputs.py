"""``TrackedInputIter`` and ``extract_test_fn`` (torch_testing_ext._engine.testcase.tracked_inputs):
the running test function is found from inside it, each item is recorded on it, and the random
state before each item comes from the generic test's name (the same inputs whatever ran before)."""

import hashlib
import unittest

import torch

from torch_testing_ext.common_device_type import instantiate_device_type_tests
from torch_testing_ext.common_utils import (
    TestCase,
    TrackedInputIter,
    clear_tracked_input,
    extract_test_fn,
    get_tracked_input,
    parametrize,
)


def run(cls):
    return unittest.defaultTestLoader.loadTestsFromTestCase(cls).run(unittest.TestResult())


class TestTrackedInputs(TestCase):
    def test_the_running_test_method_is_found(self):
        self.assertIs(extract_test_fn(), type(self).test_the_running_test_method_is_found)

    def test_items_are_recorded_on_the_test_function(self):
        seen = {}

        class Case(TestCase):
            def test_x(self):
                fn = extract_test_fn()
                fn.tracked_input = None
                items = list(TrackedInputIter(iter("ab"), "sample input", item_callback=lambda x, i: (i, x),
                                              track_callback=str.upper))
                tracked = get_tracked_input()
                seen["x"] = (fn is Case.test_x, items, tracked.index, tracked.val, tracked.type_desc)
                clear_tracked_input()
                seen["cleared"] = get_tracked_input()

        self.assertTrue(run(Case).wasSuccessful())
        self.assertEqual(seen, {"x": (True, [(0, "a"), (1, "b")], 1, "B", "sample input"), "cleared": None})

    def test_restrict_to_index(self):
        self.assertEqual(list(TrackedInputIter(iter("abc"), "x", restrict_to_index=1, set_seed=False)), ["b"])

    def test_the_seed_comes_from_the_generic_tests_name(self):
        drawn = {}

        class TestSeeded(TestCase):
            @parametrize("n", [1, 2])
            def test_x(self, device, n):
                torch.manual_seed(n * 1000)  # whatever came before
                drawn[self._testMethodName] = [torch.rand(1).item() for _ in TrackedInputIter(iter([0]), "s")]

        scope = {"TestSeeded": TestSeeded}
        instantiate_device_type_tests(TestSeeded, scope, only_for="cpu")
        self.assertTrue(run(scope["TestSeededCPU"]).wasSuccessful())
        name = TestSeeded.__qualname__.rsplit(".", 1)[0] + ".TestSeeded.test_x"
        seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")
        torch.manual_seed(seed)
        expected = torch.rand(1).item()
        self.assertEqual(drawn, {"test_x_n_1_cpu": [expected], "test_x_n_2_cpu": [expected]})
