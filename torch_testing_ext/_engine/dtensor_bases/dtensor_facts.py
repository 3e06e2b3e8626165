"""What DTensor tests need to know about the machine: the device type and backend their
meshes use, and how many ranks a DTensor test runs on by default.

All of it comes from :mod:`torch_testing_ext.devices`::

    DEVICE_TYPE     # "cuda", "xpu"... or "cpu"
    PG_BACKEND      # nccl, xccl... or gloo
    NUM_DEVICES     # 4, or fewer when 2 or 3 accelerators are all there is
"""

from __future__ import annotations

from ... import devices

__all__ = ["DEVICE_TYPE", "DEVICE_COUNT", "PG_BACKEND", "NUM_DEVICES", "default_world_size",
           "mesh_device_type"]

__unittest = True

_MAX_DEFAULT_WORLD_SIZE = 4


def default_world_size() -> int:
    """With several accelerators, one rank per device (at most 4); otherwise 4 ranks."""
    count = devices.device_count()
    return min(_MAX_DEFAULT_WORLD_SIZE, count) if count > 1 else _MAX_DEFAULT_WORLD_SIZE


def mesh_device_type(world_size: int) -> str:
    """The device type a ``world_size``-rank DTensor test runs on: the accelerator when it has a
    device for every rank, else ``"cpu"`` (ranks cannot share an accelerator with nccl/xccl)."""
    return devices.device_type() if devices.device_count() >= world_size else "cpu"


DEVICE_TYPE: str = devices.device_type()
DEVICE_COUNT: int = devices.device_count()
PG_BACKEND: str = devices.default_backend(DEVICE_TYPE)
NUM_DEVICES: int = default_world_size()
