"""``create_device``: the network device a gloo group talks over."""

from __future__ import annotations

import sys
from typing import Any

import torch.distributed as dist

__all__ = ["create_device"]

__unittest = True


def create_device(interface: str | None = None, lazy_init: bool = False) -> Any:
    """A gloo device on ``interface`` (a network interface name), or on 127.0.0.1 without one
    (and always on Windows); pass it to gloo's backend options as ``_devices``."""
    if interface is None or sys.platform == "win32":
        return dist.ProcessGroupGloo.create_device(hostname="127.0.0.1", lazy_init=lazy_init)
    return dist.ProcessGroupGloo.create_device(interface=interface, lazy_init=lazy_init)
