"""Triton decorators, named as in ``torch.testing._internal.triton_utils``."""

from __future__ import annotations

from . import devices
from ._engine.skips.skip_checks import skip_if

__all__ = ["requires_cuda_and_triton", "requires_gpu"]

# Skip unless a CUDA device with a usable triton is present.
requires_cuda_and_triton = skip_if(
    not (devices.accelerator_type() == "cuda" and devices.has_triton()), "requires CUDA and triton"
)
# Skip unless Inductor can generate GPU kernels here (upstream's HAS_GPU: a CUDA or XPU device
# with triton).
requires_gpu = skip_if(not devices.has_gpu_inductor(), "requires gpu")
