"""The float8 types tests of this machine use: ``e4m3_type``, ``e5m2_type`` and their largest
finite values.

ROCm's MI300 devices (gfx94x) compute in the ``fnuz`` float8 variants (no negative zero, NaN
in its place); every other device, and the CPU, in the OCP variants. Asking ROCm's device
architecture initialises the device, so the choice is made when a test first reads it.

Example::

    x = torch.randn(4).clamp(-E4M3_MAX_POS, E4M3_MAX_POS).to(e4m3_type)
"""

from __future__ import annotations

import functools

import torch

from ... import devices

__all__ = ["e4m3_type", "e4m3_max_pos", "e5m2_type", "e5m2_max_pos"]


@functools.cache
def e4m3_type() -> torch.dtype:
    """``torch.float8_e4m3fnuz`` on a ROCm MI300 (gfx94x), else ``torch.float8_e4m3fn``."""
    if torch.version.hip is not None and "gfx94" in (devices.rocm_arch_name() or ""):
        return torch.float8_e4m3fnuz
    return torch.float8_e4m3fn


def e4m3_max_pos() -> float:
    """The largest finite value of :func:`e4m3_type` (448.0, or 240.0 for the fnuz variant)."""
    return float(torch.finfo(e4m3_type()).max)


@functools.cache
def e5m2_type() -> torch.dtype:
    """``torch.float8_e5m2fnuz`` on a ROCm MI300 (gfx94x), else ``torch.float8_e5m2``."""
    if torch.version.hip is not None and "gfx94" in (devices.rocm_arch_name() or ""):
        return torch.float8_e5m2fnuz
    return torch.float8_e5m2


def e5m2_max_pos() -> float:
    """The largest finite value of :func:`e5m2_type` (57344.0 for both variants)."""
    return float(torch.finfo(e5m2_type()).max)
