"""NumPy's dtypes and torch's (torch_testing_ext._engine.testcase.numpy_dtypes)."""

import numpy
import torch

from torch_testing_ext.common_utils import (
    TestCase,
    numpy_to_torch_dtype,
    numpy_to_torch_dtype_dict,
    torch_to_numpy_dtype_dict,
)


class TestNumpyDtypes(TestCase):
    def test_both_ways(self):
        self.assertIs(numpy_to_torch_dtype(numpy.float32), torch.float32)
        self.assertIs(numpy_to_torch_dtype(numpy.dtype("int16")), torch.int16)  # a dtype, by its type
        self.assertIs(numpy_to_torch_dtype(numpy.bool_), torch.bool)
        with self.assertRaises(KeyError):
            numpy_to_torch_dtype(numpy.dtype("U3"))
        for numpy_type, torch_type in numpy_to_torch_dtype_dict.items():
            self.assertEqual(numpy.dtype(numpy_type).itemsize, torch_type.itemsize)
            self.assertIs(torch_to_numpy_dtype_dict[torch_type], numpy_type)
        # Types NumPy lacks map to one that holds their values.
        self.assertIs(torch_to_numpy_dtype_dict[torch.bfloat16], numpy.float32)
        self.assertIs(torch_to_numpy_dtype_dict[torch.complex32], numpy.complex64)
        self.assertEqual(len(numpy_to_torch_dtype_dict), 14)
