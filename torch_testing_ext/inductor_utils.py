"""Inductor flags, named as in ``torch.testing._internal.inductor_utils``, computed from ``devices``."""

from __future__ import annotations

from . import devices

__all__ = ["HAS_GPU", "HAS_CPU", "GPU_TYPE"]

# A GPU that Inductor can generate Triton kernels for.
HAS_GPU: bool = devices.has_gpu_inductor()
# Inductor's C++ backend can compile CPU kernels here.
HAS_CPU: bool = devices.has_cpu_inductor()
# The device type of that GPU ("cuda", "xpu"), or None.
GPU_TYPE: str | None = devices.accelerator_type() if HAS_GPU else None
