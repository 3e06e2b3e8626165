"""Self-tests of TestCase.assertEqual / assertNotEqual: tensor-aware, tolerant, shows where."""

import math

import numpy as np
import torch

from torch_testing_ext.common_utils import TestCase


class TestAssertEqual(TestCase):
    def assertMismatch(self, actual, expected, *fragments, **kwargs):
        with self.assertRaises(AssertionError) as caught:
            self.assertEqual(actual, expected, **kwargs)
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception))
        return str(caught.exception)

    def test_equal_tensors(self):
        self.assertEqual(torch.arange(4.0), torch.arange(4.0))

    def test_default_tolerance_follows_dtype(self):
        self.assertEqual(torch.tensor([1.0]), torch.tensor([1.0 + 1e-6]))
        self.assertMismatch(torch.tensor([1.0]), torch.tensor([1.001]), "Tensor-likes are not close")

    def test_explicit_tolerances(self):
        self.assertEqual(torch.tensor([1.0]), torch.tensor([1.05]), rtol=0, atol=0.1)
        self.assertMismatch(torch.tensor([1.0]), torch.tensor([1.05]), rtol=0, atol=0.01)
        with self.assertRaises(ValueError):
            self.assertEqual(torch.tensor([1.0]), torch.tensor([1.0]), rtol=0.1)

    def test_dtype_mismatch(self):
        self.assertMismatch(torch.ones(2), torch.ones(2, dtype=torch.float64), "dtype")
        self.assertEqual(torch.ones(2), torch.ones(2, dtype=torch.float64), exact_dtype=False)

    def test_shape_mismatch(self):
        self.assertMismatch(torch.ones(2), torch.ones(3), "shape")

    def test_nan_equals_nan(self):
        self.assertEqual(torch.tensor([math.nan]), torch.tensor([math.nan]))
        self.assertEqual(math.nan, math.nan)

    def test_tensor_against_number_and_list(self):
        self.assertEqual(torch.tensor(3.0), 3)
        self.assertEqual(torch.tensor([[1, 2], [3, 4]]), [[1, 2], [3, 4]])
        self.assertEqual([1.0, 2.0], torch.tensor([1.0, 2.0]))
        self.assertMismatch(torch.tensor([1.0, 2.0]), [1.0, 2.5], "Mismatched elements")

    def test_numbers(self):
        self.assertEqual(1, 1)
        self.assertEqual(0.1 + 0.2, 0.3)
        self.assertMismatch(1, 2, "1 != 2")
        self.assertMismatch(1.0, 1.1, "1.0 != 1.1")
        self.assertEqual(1.0, 1.05, rtol=0, atol=0.1)

    def test_numpy(self):
        self.assertEqual(np.arange(3), torch.arange(3))
        self.assertEqual(np.float32(2.0), 2.0)

    def test_nested_containers_name_the_mismatch(self):
        actual = {"a": [torch.ones(2), (1, 2)], "b": torch.zeros(1)}
        self.assertEqual(actual, {"a": [torch.ones(2), (1, 2)], "b": torch.zeros(1)})
        message = self.assertMismatch(actual, {"a": [torch.ones(2), (1, 3)], "b": torch.zeros(1)},
                                      "Mismatch at ['a'][1][1]", "2 != 3")
        self.assertNotIn("['b']", message)
        self.assertMismatch([1, 2], [1, 2, 3], "lengths differ: 2 != 3: [1, 2] != [1, 2, 3]")
        self.assertMismatch({"x": 1}, {"y": 1}, "keys differ")

    def test_user_message_is_kept(self):
        self.assertMismatch(1, 2, "custom context", "1 != 2", msg="custom context")

    def test_other_objects(self):
        self.assertEqual("abc", "abc")
        self.assertEqual(None, None)
        self.assertEqual(torch.Size([2, 3]), (2, 3))
        self.assertMismatch("abc", "abd", "'abc' != 'abd'")
        self.assertMismatch(None, 0, "None is not 0")

    def test_across_devices_by_default(self):
        meta = torch.empty(2, device="meta")
        self.assertEqual(meta, torch.ones(2))
        with self.assertRaises(AssertionError):
            self.assertEqual(meta, torch.ones(2), exact_device=True)

    def test_assert_not_equal(self):
        self.assertNotEqual(torch.ones(2), torch.zeros(2))
        self.assertNotEqual([1, 2], [1, 3])
        with self.assertRaises(AssertionError):
            self.assertNotEqual(torch.ones(2), [1.0, 1.0])

    def test_expecttest_inline(self):
        self.assertExpectedInline(str(torch.tensor([1, 2])), """tensor([1, 2])""")

    def test_setup_seeds_identically(self):
        first = torch.rand(3)
        self.setUp()
        self.assertEqual(torch.rand(3), first)
