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
