"""How a test model is built: wrapped with FSDP or not, moved to the device before or after;
the device type, device count and process-group backend FSDP tests run on."""

from __future__ import annotations

import enum

import torch

from ... import devices

__all__ = ["FSDPInitMode", "DEVICEInitMode", "get_devtype", "DISTRIBUTED_BACKEND", "DEVICE_TYPE", "DEVICE_COUNT"]

__unittest = True


class FSDPInitMode(enum.Enum):
    """Whether a test model's ``init`` wraps it with FSDP."""

    NO_FSDP = enum.auto()  # a plain module (the reference)
    RECURSIVE = enum.auto()  # nested modules wrapped with FSDP


class DEVICEInitMode(enum.Enum):
    """When a test model moves to the device the test runs on (a no-op on CPU)."""

    DEVICE_BEFORE = enum.auto()  # built on the device, then wrapped
    DEVICE_AFTER = enum.auto()  # wrapped on CPU, then moved
    DEVICE_NEVER = enum.auto()  # left on CPU


def get_devtype() -> torch.device:
    """The device type the tests run on: ``cuda``/``xpu``/... where present, else ``cpu``."""
    return torch.device(devices.device_type())


# The backend of the device type FSDP tests run on: nccl on CUDA, xccl on XPU, hccl on HPU,
# gloo on the CPU.
DISTRIBUTED_BACKEND: str = devices.default_backend()

# The device type FSDP tests run on and how many of it there are: the accelerator's (but
# MPS, which gloo cannot carry), else "cpu" and 1.
_ACCELERATOR = devices.accelerator_type()
DEVICE_TYPE: str = "cpu" if _ACCELERATOR in (None, "mps") else str(_ACCELERATOR)
DEVICE_COUNT: int = 1 if DEVICE_TYPE == "cpu" else devices.device_count()
