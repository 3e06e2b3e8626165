"""Capability gates for device-type tests, named as in upstream's ``common_device_type``:
``Capability`` names what a test needs of a device type (a dtype, a library, streams, a
distributed feature) and ``@requires_capabilities(...)`` runs the test only on device types
that have all of it.

Each device-type test base answers for its device type through its ``_capabilities()``
classmethod: a mapping from the capabilities it declares to a no-argument callable saying
whether the machine has it. A required capability that is declared but missing skips the test;
one the class does not declare at all fails it (a test base that forgot a declaration should
not pass by skipping). The bases here declare every capability for every device type, from
:mod:`torch_testing_ext.devices`, so only a class that overrides ``_capabilities()`` with a
partial mapping can fail that way. The answers are asked when the test runs, in the test
process, before any rank starts.

What the bases here answer (``devices`` facts; "the backend" is the device type's default
process-group backend: gloo, nccl, xccl, hccl):

- ``distributed.backend``, ``.dtensor``, ``.fsdp``, ``.fsdp1``, ``.fsdp2``,
  ``.sharded_tensor``: torch.distributed and the backend are available. On the CPU that is
  gloo, so FSDP tests run on CPU ranks (upstream's CPU base says no to FSDP).
- ``dtype.bf16``: the CPU and XPU; CUDA from sm80 (any ROCm device). ``dtype.fp8``: as
  ``common_cuda.PLATFORM_SUPPORTS_FP8`` on CUDA; the CPU and XPU have float8 kernels.
  ``dtype.fp64``: the CPU and CUDA; XPU as device 0 reports.
- ``lib.triton``: CUDA or XPU with a usable Triton; ``lib.safetensors``: the package imports.
- ``stream.generic``, ``memory.non_blocking_copy``: every accelerator, not the CPU.
- ``collective.reconfigure``: no device type (this harness cannot tell which backends can
  reconfigure a communicator in place), so such tests skip.

Any other device type (``mps``, a PrivateUse1 backend) declares the dtypes and libraries as
missing, streams as present, and the distributed capabilities when its backend is known.

Example::

    class TestStaging(TestCase):
        @requires_capabilities(Capability.stream.generic)
        def test_async_staging(self, device): ...

    instantiate_device_type_tests(TestStaging, globals(), except_for="cpu")
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from ... import devices
from ..skips.skip_checks import skip_when
from .device_decorators import _device_type_of

__all__ = ["Capability", "CapabilityName", "CapabilityGroup", "requires_capabilities",
           "declared_capabilities", "capabilities_of"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])

# Each group and its members, as tests name them: Capability.<group>.<member>.
_GROUPS: dict[str, tuple[str, ...]] = {
    "dtype": ("bf16", "fp8", "fp64"),
    "lib": ("safetensors", "triton"),
    "stream": ("generic",),
    "memory": ("non_blocking_copy",),
    "collective": ("reconfigure",),
    "distributed": ("backend", "dtensor", "fsdp", "fsdp1", "fsdp2", "sharded_tensor"),
}


@dataclasses.dataclass(frozen=True, order=True)
class CapabilityName:
    """One capability, ``Capability.<group>.<member>``; prints as ``group.member``."""

    group: str
    member: str

    def __str__(self) -> str:
        return f"{self.group}.{self.member}"


class CapabilityGroup:
    """The capabilities of one group (``Capability.dtype``); an unknown member is an
    ``AttributeError`` naming the known ones."""

    def __init__(self, group: str, members: tuple[str, ...]) -> None:
        self._group = group
        self._members = {member: CapabilityName(group, member) for member in members}

    def __getattr__(self, member: str) -> CapabilityName:
        members = self.__dict__.get("_members", {})
        if member in members:
            return members[member]
        raise AttributeError(f"Capability.{self.__dict__.get('_group')} has no capability {member!r} "
                             f"(it has: {', '.join(members)})")

    def __iter__(self) -> Iterator[CapabilityName]:
        return iter(self._members.values())

    def __dir__(self) -> list[str]:
        return [*self._members, *super().__dir__()]

    def __repr__(self) -> str:
        return f"Capability.{self._group}"


class _CapabilityNamespace:
    """``Capability``: the groups of capabilities; ``list(Capability)`` gives every capability."""

    def __init__(self) -> None:
        self._groups = {group: CapabilityGroup(group, members) for group, members in _GROUPS.items()}

    def __getattr__(self, group: str) -> CapabilityGroup:
        groups = self.__dict__.get("_groups", {})
        if group in groups:
            return groups[group]
        raise AttributeError(f"Capability has no group {group!r} (it has: {', '.join(groups)})")

    def __iter__(self) -> Iterator[CapabilityName]:
        for group in self._groups.values():
            yield from group

    def __dir__(self) -> list[str]:
        return [*self._groups, *super().__dir__()]

    def __repr__(self) -> str:
        return "Capability"


Capability = _CapabilityNamespace()

# A device type's answer for one capability: asked when a test needs it.
Answer = Callable[[], bool]


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _always(value: bool) -> Answer:
    return lambda: value


def _distributed(device_type: str) -> Answer:
    def available() -> bool:
        import torch.distributed as dist

        backend = devices.known_backend(device_type)
        return dist.is_available() and backend is not None and devices.backend_available(backend)

    return available


def _cuda_bf16() -> bool:
    import torch

    return torch.version.hip is not None or devices.cuda_capability_at_least(8, 0)


def _cuda_fp8() -> bool:
    import torch

    return devices.float8_matmuls_supported(cuda=True, rocm=torch.version.hip is not None)


def _xpu_fp64() -> bool:
    import torch

    return bool(getattr(torch.xpu.get_device_properties(0), "has_fp64", True))


def _triton(device_type: str) -> Answer:
    return lambda: devices.accelerator_type() == device_type and devices.has_triton()


def _dtype_answers(device_type: str) -> dict[str, Answer]:
    if device_type == "cpu":
        return {"bf16": _always(True), "fp8": _always(True), "fp64": _always(True)}
    if device_type == "cuda":
        return {"bf16": _cuda_bf16, "fp8": _cuda_fp8, "fp64": _always(True)}
    if device_type == "xpu":
        return {"bf16": _always(True), "fp8": _always(True), "fp64": _xpu_fp64}
    return {"bf16": _always(False), "fp8": _always(False), "fp64": _always(False)}


def declared_capabilities(device_type: str) -> dict[CapabilityName, Answer]:
    """What the test base of ``device_type`` declares: every capability, each with the callable
    that answers it on this machine (``generic_device_type`` stands for the machine's own)."""
    if device_type == "generic_device_type":
        device_type = devices.device_type()
    accelerator = device_type != "cpu"
    dtypes = _dtype_answers(device_type)
    distributed = _distributed(device_type)
    answers: dict[CapabilityName, Answer] = {
        **{getattr(Capability.dtype, name): answer for name, answer in dtypes.items()},
        Capability.lib.safetensors: lambda: _importable("safetensors"),
        Capability.lib.triton: _triton(device_type) if device_type in ("cuda", "xpu") else _always(False),
        Capability.stream.generic: _always(accelerator),
        Capability.memory.non_blocking_copy: _always(accelerator),
        Capability.collective.reconfigure: _always(False),
    }
    answers.update({capability: distributed for capability in Capability.distributed})
    return answers


def capabilities_of(test: Any) -> tuple[str, Mapping[CapabilityName, Answer | bool]]:
    """The device type of ``test`` and the capabilities its class declares (its
    ``_capabilities()`` if it has one, else the bases' declarations for that device type)."""
    kind = _device_type_of(test)
    if kind == "generic_device_type":
        kind = devices.device_type()
    declare = getattr(type(test), "_capabilities", None)
    return kind, (declare() if callable(declare) else declared_capabilities(kind))


def _names(capabilities: tuple[CapabilityName, ...] | list[CapabilityName]) -> str:
    return ", ".join(str(capability) for capability in capabilities)


def requires_capabilities(*required: CapabilityName) -> Callable[[_F], _F]:
    """Decorator: run the test (or each test of a class) only where its device type has every
    capability in ``required``; skip naming the missing ones, and fail if the test's class
    does not declare one of them."""
    if not required:
        raise TypeError("requires_capabilities needs at least one capability")
    wrong = [capability for capability in required if not isinstance(capability, CapabilityName)]
    if wrong:
        raise TypeError(f"requires_capabilities takes members of Capability (Capability.dtype.bf16), "
                        f"got {wrong!r}")

    def check(test: Any) -> str | None:
        kind, declared = capabilities_of(test)
        undeclared = [capability for capability in required if capability not in declared]
        if undeclared:
            raise AssertionError(f"the {kind} test base declares no capability {_names(undeclared)}: "
                                 "add it to the class's _capabilities()")
        missing = []
        for capability in required:
            answer = declared[capability]
            if not (answer() if callable(answer) else answer):
                missing.append(capability)
        if missing:
            return f"requires capability {_names(missing)}, which {kind} does not have here"
        return None

    return skip_when(check)
