"""Self-tests of parametrize / instantiate_parametrized_tests."""

import unittest

import torch

from torch_testing_ext.common_utils import TestCase, instantiate_parametrized_tests, parametrize, run_tests


class TestParametrize(TestCase):
    def test_one_method_per_combination(self):
        seen = []

        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("x", [1, 2])
            @parametrize("dtype", [torch.float32, torch.int64])
            def test_combo(self, x, dtype):
                seen.append((x, dtype))

        names = sorted(n for n in dir(Cases) if n.startswith("test"))
        self.assertEqual(names, ["test_combo_x_1_dtype_float32", "test_combo_x_1_dtype_int64",
                                 "test_combo_x_2_dtype_float32", "test_combo_x_2_dtype_int64"])
        self.assertFalse(hasattr(Cases, "test_combo"))
        result = unittest.defaultTestLoader.loadTestsFromTestCase(Cases).run(
            unittest.TestResult())
        self.assertTrue(result.wasSuccessful())
        self.assertEqual(sorted(seen, key=str), sorted(
            [(1, torch.float32), (1, torch.int64), (2, torch.float32), (2, torch.int64)], key=str))

    def test_each_method_keeps_its_own_body(self):
        seen = []

        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("n", [1])
            def test_first(self, n):
                seen.append(("first", n))

            @parametrize("n", [2])
            def test_second(self, n):
                seen.append(("second", n))

        Cases("test_first_n_1").test_first_n_1()
        Cases("test_second_n_2").test_second_n_2()
        self.assertEqual(seen, [("first", 1), ("second", 2)])

    def test_tuples_and_name_fn(self):
        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("a,b", [(1, 2), (3, 4)], name_fn=lambda a, b: f"sum{a + b}")
            def test_pair(self, a, b):
                self.assertEqual(b - a, 1)

        self.assertEqual(sorted(n for n in dir(Cases) if n.startswith("test")), ["test_pair_sum3", "test_pair_sum7"])
        self.assertEqual(Cases.test_pair_sum3.__qualname__.split(".")[-1], "test_pair_sum3")

    def test_failure_of_one_case_is_reported(self):
        @instantiate_parametrized_tests
        class Cases(TestCase):
            @parametrize("n", [0, 1])
            def test_positive(self, n):
                self.assertGreater(n, 0)

        result = unittest.defaultTestLoader.loadTestsFromTestCase(Cases).run(
            unittest.TestResult())
        self.assertEqual([t.id().split(".")[-1] for t, _ in result.failures], ["test_positive_n_0"])

    def test_bad_values(self):
        with self.assertRaises(ValueError):
            parametrize("a,b", [(1,)])(lambda self, a, b: None)
        with self.assertRaises(ValueError):
            parametrize("", [1])


if __name__ == "__main__":
    run_tests()
