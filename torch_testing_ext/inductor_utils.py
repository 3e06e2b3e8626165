"""Inductor flags, named as in ``torch.testing._internal.inductor_utils``, from ``devices``.

Beyond the upstream names it offers ``requires_inductor_backend`` (defined in
``_engine/skips/inductor_skips.py``), the device-generic form of the upstream ``HAS_GPU`` guard.
``skipCUDAIf`` is ``common_device_type``'s: it skips when its condition holds and the test's
device type is CUDA, which is what upstream's Inductor form asks of ``self.device``.
"""

from __future__ import annotations

from . import devices
from ._engine.skips.device_skips import skipCUDAIf
from ._engine.skips.inductor_skips import (
    CPU_INDUCTOR_SKIP_REASON,
    GPU_INDUCTOR_SKIP_REASON,
    inductor_backend_skip_reason,
    requires_inductor_backend,
    requires_triton,
)
from ._engine.testcase.inductor_checks import _check_has_dynamic_shape, clone_preserve_strides_offset

__all__ = [
    "HAS_GPU",
    "HAS_CPU",
    "GPU_TYPE",
    "GPU_INDUCTOR_SKIP_REASON",
    "CPU_INDUCTOR_SKIP_REASON",
    "inductor_backend_skip_reason",
    "requires_inductor_backend",
    "requires_triton",
    "skipCUDAIf",
    "IS_A100",
    "_check_has_dynamic_shape",
    "clone_preserve_strides_offset",
]

# A GPU that Inductor can generate Triton kernels for.
HAS_GPU: bool = devices.has_gpu_inductor()
# Inductor's C++ backend can compile CPU kernels here.
HAS_CPU: bool = devices.has_cpu_inductor()
# The device type of that GPU ("cuda", "xpu"), or None.
GPU_TYPE: str | None = devices.accelerator_type() if HAS_GPU else None


def _is_a100() -> bool:
    """An A100 with triton: its blocks may opt into 166912 bytes of shared memory, as no other
    CUDA device's do."""
    return (devices.accelerator_type() == "cuda" and devices.has_triton()
            and devices.gpu_shared_memory_per_block() == 166912)


# Asked when a test reads it (asking the device initialises CUDA).
IS_A100 = devices.LazyFlag(_is_a100)
