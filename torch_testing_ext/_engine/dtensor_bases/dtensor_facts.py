"""What DTensor tests need to know about the machine: the device type and backend their
meshes use, and how many ranks a DTensor test runs on by default.

All of it comes from :mod:`torch_testing_ext.devices`::

    DEVICE_TYPE     # "cuda", "xpu"... or "cpu"
    PG_BACKEND      # nccl, xccl... or gloo
    NUM_DEVICES     # 4, or fewer when 2 or 3 accelerators are all there is

:func:`mesh_device_type` reads the facts when it is called from the face
``distributed._tensor.common_dtensor`` once that is imported, as upstream's reads its module's
globals: a test that patches ``common_dtensor.TEST_CUDA``, ``DEVICE_COUNT`` and
``DEVICE_TYPE`` to pretend a machine sees the bases choose accordingly.
"""

from __future__ import annotations

import sys

from ... import devices

__all__ = ["DEVICE_TYPE", "DEVICE_COUNT", "PG_BACKEND", "NUM_DEVICES", "TEST_CUDA", "TEST_XPU", "TEST_HPU",
           "TEST_PRIVATEUSE1", "default_world_size", "mesh_device_type"]

__unittest = True

_MAX_DEFAULT_WORLD_SIZE = 4


def default_world_size() -> int:
    """With several accelerators, one rank per device (at most 4); otherwise 4 ranks."""
    count = devices.device_count()
    return min(_MAX_DEFAULT_WORLD_SIZE, count) if count > 1 else _MAX_DEFAULT_WORLD_SIZE


# Where upstream's tests patch the facts (module globals of the face, read when asked).
_FACE = "torch_testing_ext.distributed._tensor.common_dtensor"
_ACCELERATOR_FLAGS = ("TEST_CUDA", "TEST_XPU", "TEST_HPU", "TEST_PRIVATEUSE1")


def mesh_device_type(world_size: int) -> str:
    """The device type a ``world_size``-rank DTensor test runs on: the accelerator (CUDA, XPU,
    HPU or a PrivateUse1 backend) when it has a device for every rank, else ``"cpu"`` (ranks
    cannot share an accelerator with nccl/xccl)."""
    facts = sys.modules.get(_FACE) or sys.modules[__name__]
    if not any(getattr(facts, flag) for flag in _ACCELERATOR_FLAGS) or facts.DEVICE_COUNT < world_size:
        return "cpu"
    return str(facts.DEVICE_TYPE)


TEST_CUDA: bool = devices.accelerator_type() == "cuda"
TEST_XPU: bool = devices.accelerator_type() == "xpu"
TEST_HPU: bool = devices.accelerator_type() == "hpu"
TEST_PRIVATEUSE1: bool = devices.privateuse1_type() is not None
DEVICE_TYPE: str = devices.device_type()
DEVICE_COUNT: int = devices.device_count()
PG_BACKEND: str = devices.default_backend(DEVICE_TYPE)
NUM_DEVICES: int = default_world_size()
