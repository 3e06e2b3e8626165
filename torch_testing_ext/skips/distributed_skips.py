"""Skip decorators for distributed tests, all decided in the test process (no rank started)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .. import devices
from .skip_checks import skip_if, skip_when

__all__ = [
    "skip_if_lt_x_gpu",
    "requires_gloo",
    "requires_nccl",
    "requires_accelerator_dist_backend",
    "import_transformers_or_skip",
    "requires_world_size",
    "transformers_import_error",
]

_F = TypeVar("_F", bound=Callable[..., Any])
ACCELERATOR_DIST_BACKENDS = ("nccl", "xccl", "hccl")


def skip_if_lt_x_gpu(x: int, allow_cpu: bool = False) -> Callable[[_F], _F]:
    """Skip unless the machine has ``x`` accelerators.

    With ``allow_cpu=True`` a CPU-only machine runs the test too (CPU ranks with gloo); a
    machine with fewer than ``x`` accelerators still skips.
    """
    accelerator = devices.accelerator_type()
    if allow_cpu and accelerator is None:
        enough = True
    else:
        enough = devices.device_count() >= x
    kind = (accelerator or "cuda").upper()
    return skip_if(not enough, f"Need at least {x} {kind} devices")


def requires_gloo() -> Callable[[_F], _F]:
    """Skip unless torch was built with the gloo backend."""
    return skip_if(not devices.backend_available("gloo"), "c10d was not compiled with the Gloo backend")


def requires_nccl() -> Callable[[_F], _F]:
    """Skip unless torch was built with the NCCL backend."""
    return skip_if(not devices.backend_available("nccl"), "c10d was not compiled with the NCCL backend")


def requires_accelerator_dist_backend(
    backends: Sequence[str] | None = None, allow_cpu: bool = False
) -> Callable[[_F], _F]:
    """Skip unless one of ``backends`` (default: nccl, xccl, hccl) is available.

    With ``allow_cpu=True`` a CPU-only machine with gloo runs the test too.
    """
    wanted = tuple(backends or ACCELERATOR_DIST_BACKENDS)
    available = any(devices.backend_available(b) for b in wanted)
    if allow_cpu and devices.accelerator_type() is None:
        available = available or devices.backend_available("gloo")
    return skip_if(not available, f"c10d was not compiled with any of the {'/'.join(wanted)} backends")


@functools.cache
def transformers_import_error() -> str | None:
    """Why ``transformers`` (AutoModelForMaskedLM, BertConfig) cannot be imported, or None."""
    try:
        from transformers import AutoModelForMaskedLM, BertConfig  # noqa: F401
    except Exception as error:  # a broken install is as good as none
        return f"{type(error).__name__}: {error}"
    return None


def import_transformers_or_skip() -> Callable[[_F], _F]:
    """Skip unless ``transformers`` with BERT can be imported (checked once, in the parent)."""
    return skip_when(lambda _test: "Unable to import transformers" if transformers_import_error() else None)


def requires_world_size(n: int) -> Callable[[_F], _F]:
    """Skip unless the test's ``world_size`` is at least ``n``."""
    return skip_when(lambda test: f"Test requires world size of {n}" if int(test.world_size) < n else None)
