"""The device-type test bases and which device types a test file is instantiated for.

A generic test class becomes one class per device type: ``cpu`` always, the machine's
accelerator (``cuda``, ``xpu``, ``hpu``, ``mps``, or a PrivateUse1 backend by its name), and an
available PrivateUse1 backend beside another accelerator.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import ClassVar

from ... import devices
from .._torch_private import privateuse1_backend_name
from ..testcase.tensor_testcase import TestCase
from .capabilities import CapabilityName, declared_capabilities

__all__ = ["DeviceTypeTestBase", "CPUTestBase", "device_test_base", "available_device_types",
           "desired_device_types"]

__unittest = True


class DeviceTypeTestBase(TestCase):
    """The base of every instantiated device-type class; ``device_type`` names its device type."""

    device_type: ClassVar[str] = "generic_device_type"

    @classmethod
    def get_primary_device(cls) -> str:
        """The device single-device tests get: ``"cpu"``, or ``"<type>:0"``."""
        return "cpu" if cls.device_type == "cpu" else f"{cls.device_type}:0"

    @classmethod
    def get_all_devices(cls) -> list[str]:
        """Every device of the class's type, the primary device first."""
        if cls.device_type == "cpu":
            return ["cpu"]
        count = max(1, devices.devices_of_type(cls.device_type))
        return [f"{cls.device_type}:{index}" for index in range(count)]

    @classmethod
    def _capabilities(cls) -> dict[CapabilityName, Callable[[], bool]]:
        """The capabilities the class's device type declares, each with the callable answering
        it here (see :mod:`.capabilities`); ``@requires_capabilities`` asks this. Override to
        declare otherwise, as upstream's test bases do."""
        return declared_capabilities(cls.device_type)


class CPUTestBase(DeviceTypeTestBase):
    """Tests instantiated for the CPU."""

    device_type = "cpu"


@functools.cache
def device_test_base(device_type: str) -> type[DeviceTypeTestBase]:
    """The test base of a device type (made once per type)."""
    if device_type == "cpu":
        return CPUTestBase
    name = f"{device_type.upper()}TestBase"
    return type(name, (DeviceTypeTestBase,), {"device_type": device_type, "__module__": __name__,
                                              "__qualname__": name})


def available_device_types() -> list[str]:
    """``cpu``, then the machine's accelerator and an available PrivateUse1 backend."""
    found = ["cpu"]
    for kind in (devices.accelerator_type(), devices.privateuse1_type()):
        if kind and kind not in found:
            found.append(kind)
    return found


def _names(device_types: str | Iterable[str] | None) -> set[str]:
    """Device type names, with ``privateuse1`` standing for the PrivateUse1 backend's name."""
    if device_types is None:
        return set()
    listed = [device_types] if isinstance(device_types, str) else list(device_types)
    return {privateuse1_backend_name() if name.lower() == "privateuse1" else name.lower()
            for name in listed}


def desired_device_types(only_for: str | Iterable[str] | None = None,
                         except_for: str | Iterable[str] | None = None) -> list[str]:
    """The available device types, kept to ``only_for`` and without ``except_for``."""
    only, excluded = _names(only_for), _names(except_for)
    both = only & excluded
    if both:
        raise ValueError(f"device type {', '.join(sorted(both))} is in both only_for and except_for")
    return [kind for kind in available_device_types()
            if (not only or kind in only) and kind not in excluded]
