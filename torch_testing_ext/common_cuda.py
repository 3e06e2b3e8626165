"""CUDA flags, named as in ``torch.testing._internal.common_cuda`` and computed from ``devices``.

Every flag is False on a machine without CUDA. The compute-capability and attention flags are
``devices.LazyFlag``s: asked only when a test reads them (``skipIf(not SM80OrLater, ...)``),
since asking CUDA for a device's capability initialises CUDA; importing this module does not.
"""

from __future__ import annotations

from . import devices
from ._engine.device_type.cuda_settings import TEST_CUDNN, magma_version, tf32_off, with_tf32_off

__all__ = [
    "TEST_CUDA",
    "TEST_MULTIGPU",
    "PLATFORM_SUPPORTS_FLASH_ATTENTION",
    "PLATFORM_SUPPORTS_MEM_EFF_ATTENTION",
    "PLATFORM_SUPPORTS_CUDNN_ATTENTION",
    "PLATFORM_SUPPORTS_FUSED_ATTENTION",
    "PLATFORM_SUPPORTS_FP8",
    "PLATFORM_SUPPORTS_FP8_SPARSE",
    "SM53OrLater",
    "SM60OrLater",
    "SM70OrLater",
    "SM75OrLater",
    "SM80OrLater",
    "SM89OrLater",
    "SM90OrLater",
    "SM100OrLater",
    "SM120OrLater",
    "_get_torch_cuda_version",
    "_get_torch_rocm_version",
    "ROCM_VERSION",
    "_get_magma_version",
    "TEST_CUDNN",
    "tf32_off",
    "with_tf32_off",
]

TEST_CUDA: bool = devices.accelerator_type() == "cuda"
TEST_MULTIGPU: bool = TEST_CUDA and devices.device_count() >= 2
_ROCM: bool = devices.torch_rocm_version() != (0, 0)

# Compute capability of the CUDA devices, at least (major, minor); ROCm devices report their
# own numbering, which these flags compare as given (upstream does the same).
SM53OrLater = devices.LazyFlag(lambda: devices.cuda_capability_at_least(5, 3))
SM60OrLater = devices.LazyFlag(lambda: devices.cuda_capability_at_least(6, 0))
SM70OrLater = devices.LazyFlag(lambda: devices.cuda_capability_at_least(7, 0))
SM75OrLater = devices.LazyFlag(lambda: devices.cuda_capability_at_least(7, 5))
SM80OrLater = devices.LazyFlag(lambda: devices.cuda_capability_at_least(8, 0))
SM89OrLater = devices.LazyFlag(lambda: devices.cuda_capability_at_least(8, 9))
SM90OrLater = devices.LazyFlag(lambda: devices.cuda_capability_at_least(9, 0))
SM100OrLater = devices.LazyFlag(lambda: devices.cuda_capability_at_least(10, 0))
SM120OrLater = devices.LazyFlag(lambda: devices.cuda_capability_at_least(12, 0))


def _fused_sdpa_supported(min_capability: tuple[int, int]) -> bool:
    """Whether this CUDA machine runs a fused scaled-dot-product-attention kernel."""
    if not TEST_CUDA:
        return False
    if _ROCM:
        return True
    return devices.cuda_capability_at_least(*min_capability)


def _cudnn_attention_supported() -> bool:
    """cuDNN's attention kernel: CUDA (not ROCm), Ampere or newer, cuDNN 9 or newer."""
    if not TEST_CUDA or _ROCM or not SM80OrLater:
        return False
    import torch

    version = torch.backends.cudnn.version()
    return version is not None and version >= 90000


# Flash attention needs Ampere (sm80) or newer; memory-efficient attention Maxwell (sm50) or newer.
PLATFORM_SUPPORTS_FLASH_ATTENTION = devices.LazyFlag(lambda: _fused_sdpa_supported((8, 0)))
PLATFORM_SUPPORTS_MEM_EFF_ATTENTION = devices.LazyFlag(lambda: _fused_sdpa_supported((5, 0)))
PLATFORM_SUPPORTS_CUDNN_ATTENTION = devices.LazyFlag(_cudnn_attention_supported)
# Any of the fused kernels.
PLATFORM_SUPPORTS_FUSED_ATTENTION = devices.LazyFlag(lambda: bool(PLATFORM_SUPPORTS_FLASH_ATTENTION
                                                                  or PLATFORM_SUPPORTS_MEM_EFF_ATTENTION
                                                                  or PLATFORM_SUPPORTS_CUDNN_ATTENTION))


def _fp8_supported() -> bool:
    """float8 matmuls on this machine: see :func:`devices.float8_matmuls_supported`."""
    return devices.float8_matmuls_supported(cuda=TEST_CUDA, rocm=_ROCM)


PLATFORM_SUPPORTS_FP8 = devices.LazyFlag(_fp8_supported)


def _fp8_sparse_supported() -> bool:
    """2:4-sparse float8 matmuls: on ROCm an MI350-class device (gfx950); on CUDA sm89 or newer
    with cuSPARSELt 0.6.2 or newer. False without CUDA."""
    if not TEST_CUDA:
        return False
    if _ROCM:
        return "gfx950" in (devices.rocm_arch_name() or "")
    import torch

    cusparselt = torch.backends.cusparselt
    return (devices.cuda_capability_at_least(8, 9) and cusparselt.is_available()
            and (cusparselt.version() or 0) >= 602)


PLATFORM_SUPPORTS_FP8_SPARSE = devices.LazyFlag(_fp8_sparse_supported)


def _get_torch_cuda_version() -> tuple[int, ...]:
    """The CUDA version torch was built with (``(12, 8)``), ``(0, 0)`` without CUDA."""
    return devices.torch_cuda_version()


# The ROCm version torch was built with as (major, minor), (0, 0) without ROCm.
ROCM_VERSION: tuple[int, ...] = devices.torch_rocm_version()[:2]


def _get_torch_rocm_version() -> tuple[int, ...]:
    """The ROCm version torch was built with (``(6, 4)``), ``(0, 0)`` without ROCm."""
    return devices.torch_rocm_version()


def _get_magma_version() -> tuple[int, ...]:
    """The MAGMA version torch was built with (``(2, 6, 1)``), ``(0, 0)`` without MAGMA."""
    return magma_version()
