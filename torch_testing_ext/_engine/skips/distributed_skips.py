"""Skip decorators for distributed tests, all decided in the test process (no rank started),
and the platform flags they are written with (``HAS_ACCELERATOR``, ``PLATFORM_SUPPORTS_SYMM_MEM``).

Where upstream reads the ``WORLD_SIZE`` and ``BACKEND`` environment variables inside a rank,
these read the test's ``world_size`` and the ``BACKEND`` variable (default: the machine's
device backend) in the test process.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ... import devices
from .._torch_private import test_method_name
from ..launched.launcher_env import launched_rank
from ..worlds.settings import SettingError
from .platform_skips import TEST_WITH_ROCM
from .skip_checks import skip_if, skip_when

__all__ = [
    "skip_if_lt_x_gpu",
    "require_n_gpus_for_nccl_backend",
    "nccl_skip_if_lt_x_gpu",
    "requires_gloo",
    "requires_nccl",
    "requires_accelerator_dist_backend",
    "import_transformers_or_skip",
    "requires_world_size",
    "transformers_import_error",
    "skip_if_no_gpu",
    "skip_if_small_worldsize",
    "skip_if_odd_worldsize",
    "skip_if_rocm_multiprocess",
    "skip_if_rocm_arch_multiprocess",
    "skip_if_rocm_ver_lessthan_multiprocess",
    "skip_if_rocm_ver_atleast_multiprocess",
    "HAS_ACCELERATOR",
    "ACCELERATOR_DIST_BACKENDS",
    "PLATFORM_SUPPORTS_SYMM_MEM",
    "evaluate_platform_supports_symm_mem",
    "has_efa",
    "skip_if_win32",
    "requires_ucc",
    "requires_xccl",
    "requires_mpi",
    "requires_nccl_version",
    "requires_nccl_shrink",
    "requires_multicast_support",
    "require_world_size",
    "get_required_world_size",
]

_F = TypeVar("_F", bound=Callable[..., Any])
# The process-group backends of accelerators (a list, as upstream's).
ACCELERATOR_DIST_BACKENDS = ["nccl", "xccl", "hccl"]


def skip_if_lt_x_gpu(x: int, allow_cpu: bool = False) -> Callable[[_F], _F]:
    """Skip unless the machine has ``x`` accelerators.

    With ``allow_cpu=True`` a CPU-only machine runs the test too (CPU ranks with gloo); a
    machine with fewer than ``x`` accelerators still skips. Under a launcher (``torchrun``)
    the devices are the job's, one per rank: it skips unless the launcher started ``x`` ranks
    (on accelerators, or on CPU with ``allow_cpu=True``).
    """
    accelerator = devices.accelerator_type()
    kind = (accelerator or "cuda").upper()
    try:
        launched = launched_rank()
    except SettingError:  # decided at import: run_tests (or the test) names the bad variable
        launched = None
    if launched is not None and (accelerator is not None or allow_cpu):
        needed = f"{x} {kind} devices" if accelerator else f"{x} ranks"
        started = launched.world_size
        return skip_if(started < x, f"Need at least {needed}: the launcher started {started} ranks "
                                    f"(WORLD_SIZE={started})")
    if allow_cpu and accelerator is None:
        enough = True
    else:
        enough = devices.device_count() >= x
    return skip_if(not enough, f"Need at least {x} {kind} devices")


def require_n_gpus_for_nccl_backend(n: int, backend: str) -> Callable[[_F], _F]:
    """Skip when ``backend`` is ``"nccl"`` and the machine has fewer than ``n`` CUDA devices.

    Any other backend runs the test whatever the device count (a gloo test runs on CPU).
    """
    too_few = backend == "nccl" and devices.devices_of_type("cuda") < n
    return skip_if(too_few, f"Need at least {n} CUDA devices")


def nccl_skip_if_lt_x_gpu(backend: str, x: int) -> Callable[[_F], _F]:
    """Upstream's other spelling of :func:`require_n_gpus_for_nccl_backend` (arguments the
    other way round): skip under ``"nccl"`` with fewer than ``x`` CUDA devices."""
    return require_n_gpus_for_nccl_backend(x, backend)


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
    return skip_if(not available, f"No accelerator communication backend available among {list(wanted)}")


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


def skip_if_no_gpu(fn: _F) -> _F:
    """Skip unless every rank can have its own accelerator (``world_size`` devices).

    Such a test addresses one accelerator per rank, which CPU ranks cannot stand in for, so it
    skips on a CPU-only machine as upstream does, saying so.
    """

    def check(test: Any) -> str | None:
        needed = int(test.world_size)
        accelerator = devices.accelerator_type()
        if accelerator is None:
            return (f"skip_if_no_gpu: needs an accelerator for each of the {needed} ranks; this "
                    "machine has none, and the test is not meaningful on CPU ranks")
        if devices.device_count() < needed:
            return f"Need at least {needed} {accelerator.upper()} devices"
        return None

    return skip_when(check)(fn)


def _uses_mpi() -> bool:
    return os.environ.get("BACKEND", devices.default_backend()) == "mpi"


def skip_if_small_worldsize(fn: _F) -> _F:
    """Skip when the test's ``world_size`` is below 8 (unless ``BACKEND=mpi``)."""
    return skip_when(lambda test: None if _uses_mpi() or int(test.world_size) >= 8 else
                     f"Skipped due to small world size ({test.world_size} < 8).")(fn)


def skip_if_odd_worldsize(fn: _F) -> _F:
    """Skip when the test's ``world_size`` is odd (unless ``BACKEND=mpi``)."""
    return skip_when(lambda test: None if _uses_mpi() or int(test.world_size) % 2 == 0 else
                     f"Skipped due to odd world size ({test.world_size}).")(fn)


def skip_if_rocm_multiprocess(fn: _F) -> _F:
    """Skip a multi-process test on ROCm builds of PyTorch."""
    return skip_if(TEST_WITH_ROCM, "Test skipped for ROCm")(fn)


def _rocm_arch_in(arch: tuple[str, ...]) -> bool:
    """Whether this ROCm build's device 0 is exactly one of ``arch`` (its name before ``:``)."""
    if not TEST_WITH_ROCM:
        return False
    name = devices.rocm_arch_name()
    return name is not None and name.split(":")[0] in arch


def skip_if_rocm_arch_multiprocess(arch: tuple[str, ...]) -> Callable[[_F], _F]:
    """Skip a multi-process test on ROCm builds whose device 0 is one of the architectures
    ``arch`` (``("gfx942",)``); asked when the test runs, before any rank starts."""
    return skip_if(lambda: _rocm_arch_in(arch), f"skip_if_rocm_arch_multiprocess: test skipped on {arch}")


def skip_if_rocm_ver_lessthan_multiprocess(version: tuple[int, ...] | None = None) -> Callable[[_F], _F]:
    """Skip a multi-process test on ROCm builds older than ``version`` (``(6, 4)``; None skips
    on every ROCm build); other builds run it."""

    def too_old(_test: Any) -> str | None:
        found = devices.torch_rocm_version()
        if not TEST_WITH_ROCM or (version is not None and found >= tuple(version)):
            return None
        return f"skip_if_rocm_ver_lessthan_multiprocess: ROCm {found} is available but {version} required"

    return skip_when(too_old)


def skip_if_rocm_ver_atleast_multiprocess(version: tuple[int, ...] | None = None) -> Callable[[_F], _F]:
    """Skip a multi-process test on ROCm builds at ``version`` or newer (a known failure
    there); other builds, and every build when ``version`` is None, run it."""

    def too_new(_test: Any) -> str | None:
        if not TEST_WITH_ROCM or version is None:
            return None
        found = devices.torch_rocm_version()
        if found < tuple(version):
            return None
        return f"skip_if_rocm_ver_atleast_multiprocess: known failure on ROCm {found} (>= {tuple(version)})"

    return skip_when(too_new)


# A CUDA, HPU or XPU device is present (the accelerators with a distributed backend).
HAS_ACCELERATOR: bool = devices.accelerator_type() in ("cuda", "hpu", "xpu")


def evaluate_platform_supports_symm_mem() -> bool:
    """Whether this machine's devices support symmetric memory: CUDA devices do; on ROCm,
    MI300 and MI350 (gfx942, gfx950) do; no other device does."""
    if devices.accelerator_type() != "cuda":
        return False
    if not TEST_WITH_ROCM:
        return True
    name = devices.rocm_arch_name() or ""
    return any(arch in name for arch in ("gfx942", "gfx950"))


# Asked when a test reads it (asking ROCm's architecture initialises the device).
PLATFORM_SUPPORTS_SYMM_MEM = devices.LazyFlag(evaluate_platform_supports_symm_mem)


@functools.cache
def has_efa() -> bool:
    """Whether the machine has AWS EFA network interfaces with libfabric's EFA provider
    (``fi_info -p efa -t FI_EP_RDM`` exits 0); False where ``fi_info`` is not installed."""
    try:
        probe = subprocess.run(["fi_info", "-p", "efa", "-t", "FI_EP_RDM"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def skip_if_win32() -> Callable[[_F], _F]:
    """Skip on Windows."""
    return skip_if(sys.platform == "win32", "This unit test case is not supported on Windows platform")


def requires_ucc() -> Callable[[_F], _F]:
    """Skip unless torch was built with the UCC backend."""
    return skip_if(not devices.backend_available("ucc"), "c10d was not compiled with the UCC backend")


def requires_xccl() -> Callable[[_F], _F]:
    """Skip unless torch was built with the XCCL backend (Intel GPUs)."""
    return skip_if(not devices.backend_available("xccl"), "c10d was not compiled with the XCCL backend")


def requires_mpi() -> Callable[[_F], _F]:
    """Skip unless torch was built with the MPI backend."""
    return skip_if(not devices.backend_available("mpi"), "c10d was not compiled with the MPI backend")


def _nccl_version() -> tuple[int, ...]:
    import torch

    version = torch.cuda.nccl.version()
    return tuple(version) if isinstance(version, tuple) else (int(version),)


def requires_nccl_version(version: tuple[int, ...], msg: str) -> Callable[[_F], _F]:
    """Skip unless NCCL is at least ``version`` (``(2, 27)``), saying why with ``msg``.

    As upstream, a machine without CUDA leaves the test as it is (its other decorators decide
    whether it runs there); with CUDA, a torch without NCCL skips. The version is read when the
    test runs, in the test process.
    """
    if devices.accelerator_type() != "cuda":
        return lambda fn: fn
    if not devices.backend_available("nccl"):
        return skip_if(True, "c10d was not compiled with the NCCL backend")

    def check(_test: Any) -> str | None:
        found = _nccl_version()
        if found < tuple(version):
            return (f"Requires NCCL version greater than or equal to: {version}, found: {found}, "
                    f"reason: {msg}")
        return None

    return skip_when(check)


def requires_nccl_shrink() -> Callable[[_F], _F]:
    """Skip unless NCCL can shrink a communicator (NCCL 2.27 or newer)."""
    return requires_nccl_version((2, 27), "Need NCCL 2.27+ for shrink_group")


def requires_multicast_support() -> Callable[[_F], _F]:
    """Skip unless CUDA device 0 offers multicast for symmetric memory.

    Without CUDA the reason says so. With CUDA the question is answered by a private torch API
    (``_SymmetricMemory.has_multicast_support``) this package does not reach for yet, so the
    test skips saying that, rather than run where multicast may be missing.
    """
    if devices.accelerator_type() != "cuda":
        return skip_if(True, "multicast support is not available: this machine has no CUDA device")
    return skip_if(True, "multicast support is not available: torch_testing_ext cannot ask "
                         "torch for it yet (a private API)")


_REQUIRED_WORLD_SIZE_ATTR = "_required_world_size"


def require_world_size(n: int) -> Callable[[_F], _F]:
    """Ask for ``n`` ranks (read back by :func:`get_required_world_size`) and skip unless the
    machine has ``n`` accelerator devices."""

    def decorate(fn: _F) -> _F:
        found = devices.device_count()
        kind = (devices.accelerator_type() or "cuda").upper()
        decorated = skip_if(found < n, f"requires {n} {kind} devices, found {found}")(fn)
        setattr(decorated, _REQUIRED_WORLD_SIZE_ATTR, n)
        return decorated

    return decorate


def get_required_world_size(obj: Any, default: int) -> int:
    """The world size the running test method of ``obj`` asked for with
    :func:`require_world_size`, else ``default``."""
    try:
        method = getattr(obj, test_method_name(obj))
    except (AttributeError, TypeError):
        return default
    value = getattr(method, _REQUIRED_WORLD_SIZE_ATTR, None)
    return default if value is None else int(value)
