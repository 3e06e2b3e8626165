"""CUDA flags, named as in ``torch.testing._internal.common_cuda`` and computed from ``devices``."""

from __future__ import annotations

from . import devices

__all__ = [
    "TEST_CUDA",
    "TEST_MULTIGPU",
    "PLATFORM_SUPPORTS_FLASH_ATTENTION",
    "PLATFORM_SUPPORTS_MEM_EFF_ATTENTION",
]

TEST_CUDA: bool = devices.accelerator_type() == "cuda"
TEST_MULTIGPU: bool = TEST_CUDA and devices.device_count() >= 2


def _fused_sdpa_supported(min_capability: tuple[int, int]) -> bool:
    """Whether this CUDA machine runs a fused scaled-dot-product-attention kernel."""
    if not TEST_CUDA:
        return False
    import torch

    if torch.version.hip is not None:
        return True
    return torch.cuda.get_device_capability(0) >= min_capability


# Flash attention needs Ampere (sm80) or newer; memory-efficient attention Maxwell (sm50) or newer.
PLATFORM_SUPPORTS_FLASH_ATTENTION: bool = _fused_sdpa_supported((8, 0))
PLATFORM_SUPPORTS_MEM_EFF_ATTENTION: bool = _fused_sdpa_supported((5, 0))
