"""The correspondence between NumPy's dtypes and torch's, as tests that compare with NumPy use it.

Example::

    expected = numpy.sin(x.numpy()).astype(torch_to_numpy_dtype_dict[x.dtype])
"""

from __future__ import annotations

import sys
from typing import Any

import numpy
import torch

__all__ = ["numpy_to_torch_dtype_dict", "torch_to_numpy_dtype_dict", "numpy_to_torch_dtype"]

# NumPy scalar type -> torch dtype, where torch has the type.
numpy_to_torch_dtype_dict: dict[Any, torch.dtype] = {
    numpy.bool_: torch.bool,
    numpy.uint8: torch.uint8, numpy.uint16: torch.uint16, numpy.uint32: torch.uint32, numpy.uint64: torch.uint64,
    numpy.int8: torch.int8, numpy.int16: torch.int16, numpy.int32: torch.int32, numpy.int64: torch.int64,
    numpy.float16: torch.float16, numpy.float32: torch.float32, numpy.float64: torch.float64,
    numpy.complex64: torch.complex64, numpy.complex128: torch.complex128,
}
if sys.platform == "win32":
    # NumPy's C int is 32 bits on Windows, and functions such as bitwise_not return it.
    numpy_to_torch_dtype_dict[numpy.intc] = torch.int32

# torch dtype -> NumPy scalar type; bfloat16 and complex32, which NumPy lacks, map to the
# NumPy type that holds their values.
torch_to_numpy_dtype_dict: dict[torch.dtype, Any] = {
    **{torch_type: numpy_type for numpy_type, torch_type in numpy_to_torch_dtype_dict.items()},
    torch.bfloat16: numpy.float32,
    torch.complex32: numpy.complex64,
}


def numpy_to_torch_dtype(np_dtype: Any) -> torch.dtype:
    """The torch dtype of a NumPy scalar type (``numpy.float32``) or dtype
    (``numpy.dtype("float32")``); ``KeyError`` for one torch lacks."""
    found = numpy_to_torch_dtype_dict.get(np_dtype)
    return found if found is not None else numpy_to_torch_dtype_dict[np_dtype.type]
