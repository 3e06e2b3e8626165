"""``tol``, ``toleranceOverride`` and ``precisionOverride`` (torch_testing_ext._engine.device_type.tolerances):
the tables they record on a test, and the tolerances a test gets for a dtype from them."""

import torch

from torch_testing_ext._engine.device_type.tolerances import tolerances_for
from torch_testing_ext.common_device_type import precisionOverride, tol, toleranceOverride
from torch_testing_ext.common_utils import TestCase


def _test(self):
    pass


class TestTolerances(TestCase):
    def test_the_decorators_record_their_tables(self):
        decorated = precisionOverride({torch.half: 1e-2})(_test)
        self.assertIs(decorated, _test)
        self.assertEqual(decorated.precision_overrides, {torch.half: 1e-2})
        table = {torch.float32: tol(atol=1e-3, rtol=1e-4)}
        self.assertEqual(toleranceOverride(table)(lambda self: None).tolerance_overrides, table)
        self.assertEqual(tol(1, 2), (1, 2))
        self.assertEqual(tol(atol=1, rtol=2).rtol, 2)

    def test_bad_tables_are_refused(self):
        with self.assertRaisesRegex(AssertionError, "dict of dtype"):
            precisionOverride([torch.half])
        with self.assertRaisesRegex(AssertionError, "not dtypes"):
            precisionOverride({"half": 1e-2})
        with self.assertRaisesRegex(AssertionError, "takes tol"):
            toleranceOverride({torch.half: (1e-2, 0)})
        with self.assertRaisesRegex(AssertionError, "not a dtype"):
            toleranceOverride({1: tol(0, 0)})

    def test_tolerances_for_a_dtype(self):
        def test(self):
            pass

        self.assertEqual(tolerances_for(test, torch.float32, 0, 0), tol(0, 0))
        precisionOverride({torch.float32: 1e-2, torch.float64: 1e-5})(test)
        self.assertEqual(tolerances_for(test, torch.float32, 0, 0.5), tol(1e-2, 0.5))
        self.assertEqual(tolerances_for(test, torch.int64, 0.1, 0.2), tol(0.1, 0.2))
        toleranceOverride({torch.float32: tol(atol=3.0, rtol=4.0)})(test)
        self.assertEqual(tolerances_for(test, torch.float32, 0, 0), tol(3.0, 4.0))  # wins over precision
        self.assertEqual(tolerances_for(test, torch.float64, 0, 0), tol(1e-5, 0))
        self.assertEqual(tolerances_for(test, (torch.float32, torch.float64), 0, 0), tol(0, 0))


class TestTolerancesInATest(TestCase):
    def test_a_device_type_test_compares_with_its_dtypes_tolerances(self):
        import unittest

        from torch_testing_ext.common_device_type import dtypes, instantiate_device_type_tests

        seen = {}

        class TestX(TestCase):
            @toleranceOverride({torch.float32: tol(atol=0.5, rtol=0.0)})
            @precisionOverride({torch.float64: 0.25})
            @dtypes(torch.float32, torch.float64, torch.int64)
            def test_x(self, device, dtype):
                seen[dtype] = (self.precision, self.rel_tol)
                self.assertEqual(torch.tensor([1.0]), torch.tensor([1.2]))  # within 0.25 and 0.5 only

        scope = {"TestX": TestX}
        instantiate_device_type_tests(TestX, scope, only_for="cpu")
        result = unittest.defaultTestLoader.loadTestsFromTestCase(scope["TestXCPU"]).run(unittest.TestResult())
        self.assertEqual(seen, {torch.float32: (0.5, 0.0), torch.float64: (0.25, 0.0), torch.int64: (0.0, 0.0)})
        failed = sorted(test._testMethodName for test, _ in result.failures)
        self.assertEqual((failed, result.errors), (["test_x_cpu_int64"], []))

    def test_assert_equal_raises_its_tolerances_to_the_floors(self):
        self.assertNotEqual(torch.tensor([1.0]), torch.tensor([1.1]))
        self.assertNotEqual(1.0, 1.1)
        self.precision = 0.2
        try:
            self.assertEqual(torch.tensor([1.0]), torch.tensor([1.1]))
            self.assertEqual([1.0, {"a": 2.0}], [1.1, {"a": 2.1}])
            self.assertEqual(torch.tensor([1]), torch.tensor([1]))
            self.assertNotEqual(torch.tensor([1.0]), torch.tensor([1.5]))
        finally:
            self.precision = 0.0
        self.rel_tol = 0.5
        try:
            self.assertEqual(torch.tensor([10.0]), torch.tensor([14.0]))
        finally:
            self.rel_tol = 0.0
