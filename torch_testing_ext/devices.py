"""Device facts: the one place that probes the machine.

The rest of ``torch_testing_ext`` asks this module which accelerator is present, how many
devices it has, which process-group backends torch was built with, which one a device type
uses by default, and whether Triton and Inductor's GPU or C++ backend are usable. (A few facts
about the torch build itself, such as ``torch.version.hip``, are read where they are used.)

Probing an accelerator can initialise its driver, which a process that later forks must not
do. The multi-process harness therefore computes the facts once in the test process and hands
them to its fork server through the ``TORCH_TESTING_EXT_DEVICE_FACTS`` environment variable
(see :func:`export_facts`); a process that finds the variable reads the facts from it instead
of probing.

Example::

    from torch_testing_ext import devices
    devices.device_type()            # "cuda", "xpu", ... or "cpu"
    devices.default_backend("cpu")   # "gloo"
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import os
import shutil
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

__all__ = [
    "DeviceFacts",
    "facts",
    "export_facts",
    "accelerator_type",
    "device_type",
    "device_count",
    "devices_of_type",
    "privateuse1_type",
    "rank_device",
    "select_rank_device",
    "default_backend",
    "known_backend",
    "backend_available",
    "has_triton",
    "has_gpu_inductor",
    "has_cpu_inductor",
    "cuda_capability",
    "cuda_capability_at_least",
    "rocm_arch_name",
    "cuda_peer_access_everywhere",
    "float8_matmuls_supported",
    "gpu_shared_memory_per_block",
    "LazyFlag",
    "UNPROBED",
    "torch_cuda_version",
    "torch_rocm_version",
    "at_least_x_gpu",
    "sm_is_or_higher_than",
    "FACTS_ENV",
]

FACTS_ENV = "TORCH_TESTING_EXT_DEVICE_FACTS"

# Default process-group backend for each device type; accelerators not listed use gloo.
_BACKEND_FOR_DEVICE = {"cpu": "gloo", "cuda": "nccl", "xpu": "xccl", "hpu": "hccl"}


UNPROBED = "unprobed"  # a fact not asked yet, because asking would initialise CUDA


@dataclasses.dataclass(frozen=True)
class DeviceFacts:
    """What this machine offers to tests."""

    accelerator: str | None  # "cuda", "xpu", ... or None on a CPU-only machine
    device_count: int  # number of accelerator devices (0 without an accelerator)
    privateuse1: str | None  # the name of an available PrivateUse1 (out-of-tree) backend
    backends: tuple[str, ...]  # process-group backends compiled into this torch
    triton: bool  # triton imports and has a usable backend for the accelerator
    gpu_inductor: bool  # Inductor can generate GPU (triton) kernels here
    cpu_inductor: bool  # Inductor's C++ backend has a compiler to call
    # (major, minor) compute capability of CUDA device 0 (None without CUDA; ROCm reports its
    # own). Asking CUDA for it initialises CUDA, so the probe leaves it unknown (UNPROBED) until
    # cuda_capability() is first called.
    cuda_capability: tuple[int, int] | None | str = UNPROBED



def _probe() -> DeviceFacts:
    import torch
    import torch.distributed as dist

    accelerator = None
    count = 0
    if torch.accelerator.is_available():
        current = torch.accelerator.current_accelerator()
        accelerator = current.type if current is not None else None
        count = torch.accelerator.device_count() if accelerator else 0

    backends: list[str] = []
    if dist.is_available():
        checks = {
            "gloo": dist.is_gloo_available,
            "nccl": dist.is_nccl_available,
            "mpi": dist.is_mpi_available,
            "ucc": dist.is_ucc_available,
            "xccl": getattr(dist, "is_xccl_available", lambda: False),
        }
        backends = [name for name, check in checks.items() if check()]

    privateuse1 = _available_privateuse1(torch)

    triton = False
    if importlib.util.find_spec("triton") is not None:
        try:
            from ._engine._torch_private import triton_has_backend

            triton = triton_has_backend()
        except Exception:  # a broken triton install is the same as none
            triton = False
    gpu_inductor = triton and accelerator in ("cuda", "xpu")
    cpu_inductor = shutil.which(os.environ.get("CXX", "c++")) is not None
    capability = None if accelerator != "cuda" or count == 0 else UNPROBED
    return DeviceFacts(accelerator, count, privateuse1, tuple(backends), triton, gpu_inductor,
                       cpu_inductor, capability)


def _available_privateuse1(torch: Any) -> str | None:
    """The PrivateUse1 backend's name if one is registered (as ``torch.<name>``) and available."""
    from ._engine._torch_private import privateuse1_backend_name

    name = privateuse1_backend_name()
    module = getattr(torch, name, None)
    is_available = getattr(module, "is_available", None)
    return name if callable(is_available) and is_available() else None


@functools.cache
def facts() -> DeviceFacts:
    """The machine's device facts, probed once per process (or read from the environment)."""
    exported = os.environ.get(FACTS_ENV)
    if exported:
        data = json.loads(exported)
        data["backends"] = tuple(data["backends"])
        if isinstance(data.get("cuda_capability"), list):
            data["cuda_capability"] = tuple(data["cuda_capability"])
        return DeviceFacts(**data)
    return _probe()


def export_facts(environ: dict[str, str] | None = None) -> None:
    """Store the facts in ``environ`` (default ``os.environ``) for processes started later.

    On a CUDA machine the compute capability is asked here first (initialising CUDA in this
    process): the fork server, which imports test modules whose flags (``SM80OrLater``) read
    it, must find it answered, since asking there would initialise CUDA in every rank's parent.
    """
    known = facts()
    if known.accelerator == "cuda" and known.cuda_capability == UNPROBED:
        known = dataclasses.replace(known, cuda_capability=cuda_capability())
    target = os.environ if environ is None else environ
    target[FACTS_ENV] = json.dumps(dataclasses.asdict(known))


def accelerator_type() -> str | None:
    """The accelerator device type (``"cuda"``, ``"xpu"``...) or None on a CPU-only machine."""
    return facts().accelerator


def device_type() -> str:
    """The device type tests run on: the accelerator type, or ``"cpu"``."""
    return facts().accelerator or "cpu"


def device_count() -> int:
    """Number of accelerator devices; 0 on a CPU-only machine."""
    return facts().device_count


def devices_of_type(device_type: str) -> int:
    """How many devices of a type (``"cpu"``, ``"cuda"``, ``"cuda:1"``...) tests can use: one
    CPU, the accelerator's device count, and none of any other type."""
    kind = device_type.split(":")[0]
    if kind == "cpu":
        return 1
    return device_count() if kind == accelerator_type() else 0


def privateuse1_type() -> str | None:
    """The device type of an available PrivateUse1 (out-of-tree) backend, by its name, or None."""
    return facts().privateuse1


def rank_device(rank: int) -> str:
    """The device a rank uses: ``"cpu"`` on CPU, ``"<type>:<rank>"`` on an accelerator."""
    accelerator = accelerator_type()
    return f"{accelerator}:{rank}" if accelerator else "cpu"


def select_rank_device(rank: int) -> torch.device:
    """Make ``rank``'s device the current one and return it.

    On an accelerator this selects device index ``rank`` (``torch.accelerator``) and returns
    ``<type>:<rank>``; a CPU-only machine has nothing to select, so it only returns ``cpu``.
    Tests call it where upstream calls ``torch.accelerator.set_device_index(rank)``, which
    raises on a CPU-only build.
    """
    import torch

    accelerator = accelerator_type()
    if accelerator is None:
        return torch.device("cpu")
    torch.accelerator.set_device_index(rank)
    return torch.device(accelerator, rank)


def default_backend(device: str | None = None) -> str:
    """The default process-group backend for a device type (cpu: gloo, cuda: nccl, xpu: xccl)."""
    kind = (device or device_type()).split(":")[0]
    return _BACKEND_FOR_DEVICE.get(kind, "gloo")


def known_backend(device_type: str) -> str | None:
    """The process-group backend a device type uses by default, or None for a device type
    without one known here (``mps``, a PrivateUse1 backend): unlike :func:`default_backend`,
    no ``gloo`` fallback."""
    return _BACKEND_FOR_DEVICE.get(device_type.split(":")[0])


def backend_available(name: str) -> bool:
    """Whether the named process-group backend is compiled into this torch."""
    return name in facts().backends


def has_triton() -> bool:
    """Whether triton is importable and usable with this machine's accelerator."""
    return facts().triton


def has_gpu_inductor() -> bool:
    """Whether Inductor can compile GPU kernels here (an accelerator with triton)."""
    return facts().gpu_inductor


def has_cpu_inductor() -> bool:
    """Whether Inductor's C++ CPU backend can compile here (a C++ compiler is on PATH)."""
    return facts().cpu_inductor


@functools.cache
def cuda_capability() -> tuple[int, int] | None:
    """The compute capability ``(major, minor)`` of CUDA device 0, or None without CUDA. The
    first call on a CUDA machine initialises CUDA in this process (nothing else here does)."""
    known = facts().cuda_capability
    if known != UNPROBED:
        return known  # type: ignore[return-value]  # None or a (major, minor) tuple
    import torch

    major, minor = torch.cuda.get_device_capability(0)
    return int(major), int(minor)


class LazyFlag:
    """A flag computed when first read as a bool (``if SM80OrLater:``, ``skipIf(not ...)``),
    for flags whose question would initialise an accelerator at import."""

    def __init__(self, compute: Callable[[], bool]) -> None:
        self._compute = compute

    @functools.cached_property
    def value(self) -> bool:
        return bool(self._compute())

    def __bool__(self) -> bool:
        return self.value

    def __eq__(self, other: object) -> bool:
        return self.value == other

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


def cuda_capability_at_least(major: int, minor: int) -> bool:
    """Whether this machine has CUDA devices of compute capability ``(major, minor)`` or newer
    (upstream's ``SM80OrLater`` & co); False without CUDA. In a process started by the harness
    (the fork server, its ranks) the answer comes with the exported facts."""
    capability = cuda_capability()
    return capability is not None and capability >= (major, minor)


def rocm_arch_name() -> str | None:
    """The architecture of device 0 as ROCm names it (``gcnArchName``, e.g.
    ``"gfx942:sramecc+:xnack-"``), or None without a device. Meaningful on ROCm builds only;
    asking initialises the driver, so callers ask when a test needs the answer."""
    if device_count() == 0:
        return None
    import torch

    return str(torch.cuda.get_device_properties(0).gcnArchName)


def cuda_peer_access_everywhere() -> bool:
    """Whether this machine has two or more CUDA devices of compute capability 8.0 or newer,
    each able to reach every other's memory directly (peer-to-peer). Asks CUDA."""
    count = device_count()
    if accelerator_type() != "cuda" or count < 2 or not cuda_capability_at_least(8, 0):
        return False
    import torch

    return all(torch.cuda.can_device_access_peer(i, j) for i in range(count) for j in range(i + 1, count))


def float8_matmuls_supported(cuda: bool, rocm: bool) -> bool:
    """Whether float8 matmuls run here (upstream's ``PLATFORM_SUPPORTS_FP8``), for a machine with
    CUDA devices (``cuda``) from a ROCm build or not (``rocm``). CUDA: Ada (sm89), Hopper (sm90)
    and newer; ROCm: MI300 (gfx94x), with ROCm 6.3 also gfx120x, with 6.5 also MI350 (gfx95x).
    XPU and the CPU have float8 kernels, so every machine without CUDA supports them."""
    if not cuda:
        return True
    if rocm:
        version = torch_rocm_version()
        archs = ["gfx94"] + (["gfx120"] if version >= (6, 3) else []) + (["gfx95"] if version >= (6, 5) else [])
        name = rocm_arch_name() or ""
        return any(arch in name for arch in archs)
    return cuda_capability_at_least(9, 0) or cuda_capability() == (8, 9)


def gpu_shared_memory_per_block() -> int | None:
    """The most shared memory one block may opt into on CUDA device 0, in bytes (166912 on an
    A100), or None without CUDA. Asks CUDA."""
    if accelerator_type() != "cuda" or device_count() == 0:
        return None
    import torch

    value = getattr(torch.cuda.get_device_properties(0), "shared_memory_per_block_optin", None)
    return None if value is None else int(value)


def _version_numbers(text: str | None) -> tuple[int, ...]:
    if not text:
        return (0, 0)
    numbers = []
    for part in text.split("-", 1)[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers) or (0, 0)


def torch_cuda_version() -> tuple[int, ...]:
    """The CUDA version torch was built with, as numbers (``(12, 8)``); ``(0, 0)`` for a build
    without CUDA."""
    import torch

    return _version_numbers(torch.version.cuda)


def torch_rocm_version() -> tuple[int, ...]:
    """The ROCm (HIP) version torch was built with, as numbers, without its git suffix;
    ``(0, 0)`` for a build without ROCm."""
    import torch

    return _version_numbers(torch.version.hip)


def at_least_x_gpu(x: int) -> bool:
    """Whether the machine has ``x`` or more accelerator devices (CUDA, XPU, HPU... alike)."""
    return accelerator_type() is not None and device_count() >= x


def sm_is_or_higher_than(device: torch.device, major: int, minor: int) -> bool:
    """Whether ``device`` has compute capability ``(major, minor)`` or newer: True for any
    device that is not CUDA (the question is CUDA's), False on ROCm (its numbering differs)."""
    import torch

    if device.type != "cuda":
        return True
    if torch.version.hip is not None:
        return False
    return tuple(torch.cuda.get_device_capability(device)) >= (major, minor)
