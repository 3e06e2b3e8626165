"""Inductor flags, named as in ``torch.testing._internal.inductor_utils``, from ``devices``.

Beyond the upstream names it offers ``requires_inductor_backend`` (defined in
``skips/inductor_skips.py``), the device-generic form of the upstream ``HAS_GPU`` guard.
"""

from __future__ import annotations

from . import devices
from .skips.inductor_skips import (
    CPU_INDUCTOR_SKIP_REASON,
    GPU_INDUCTOR_SKIP_REASON,
    inductor_backend_skip_reason,
    requires_inductor_backend,
)

__all__ = [
    "HAS_GPU",
    "HAS_CPU",
    "GPU_TYPE",
    "GPU_INDUCTOR_SKIP_REASON",
    "CPU_INDUCTOR_SKIP_REASON",
    "inductor_backend_skip_reason",
    "requires_inductor_backend",
]

# A GPU that Inductor can generate Triton kernels for.
HAS_GPU: bool = devices.has_gpu_inductor()
# Inductor's C++ backend can compile CPU kernels here.
HAS_CPU: bool = devices.has_cpu_inductor()
# The device type of that GPU ("cuda", "xpu"), or None.
GPU_TYPE: str | None = devices.accelerator_type() if HAS_GPU else None
