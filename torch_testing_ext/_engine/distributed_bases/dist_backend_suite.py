"""What torch's ``DistributedTest`` suite (``distributed/distributed_test.py``) reads from
``common_distributed`` besides the test case: which backends support which collectives and
features (``DistTestCases``), and the per-test temporary directories it keeps its file barrier
and init file in (``initialize_temp_directories`` / ``cleanup_temp_dir``).

Example::

    if BACKEND in DistTestCases.skip_collective["reduce"]: ...

    initialize_temp_directories()   # TEMP_DIR=<new dir> with barrier/, test_dir/, init_dir/;
                                    # INIT_METHOD=file://<new dir>/init_dir/shared_init_file
    cleanup_temp_dir()              # removes it
"""

from __future__ import annotations

import os
import tempfile

from ... import devices
from ..skips.platform_skips import FILE_SCHEMA

__all__ = ["DistTestCases", "initialize_temp_directories", "cleanup_temp_dir", "current_temp_dir"]


class DistTestCases:
    """Backends by what they lack (``skip_collective``) and by what they offer
    (``backend_feature``), as upstream's suite consults them to skip."""

    skip_collective: dict[str, set[str]] = {
        "allgather_coalesced": {"nccl", "mpi", "ucc", "xccl"},
        "reduce": set(),
        "sendrecv anysource": {"nccl", "ucc", "xccl"},
        "cpu barrier": {"nccl", "ucc", "xccl"},
    }
    backend_feature: dict[str, set[str]] = {
        "gpu": {"nccl", "gloo", "ucc"},
        "cuda": {"nccl", "gloo", "ucc"},
        "ddp": {"nccl", "gloo", "ucc"},
        "subgroup": {"nccl", "gloo", "ucc"},
        "plugin": set(),
        **({"hpu": {"hccl"}} if devices.accelerator_type() == "hpu" else {}),
        **({"xpu": {"xccl"}} if devices.accelerator_type() == "xpu" else {}),
    }


_current: tempfile.TemporaryDirectory[str] | None = None


def initialize_temp_directories(init_method: str | None = None) -> None:
    """Make a fresh temporary directory holding ``barrier/``, ``test_dir/`` and ``init_dir/``;
    point ``TEMP_DIR`` at it and ``INIT_METHOD`` at ``init_method`` (default: a shared init
    file in ``init_dir/``). Rank processes started afterwards inherit both variables."""
    global _current
    _current = tempfile.TemporaryDirectory(prefix="torch_testing_ext-dist-")
    root = _current.name
    for folder in ("barrier", "test_dir", "init_dir"):
        os.mkdir(os.path.join(root, folder))
    os.environ["TEMP_DIR"] = root
    os.environ["INIT_METHOD"] = init_method or FILE_SCHEMA + os.path.join(root, "init_dir", "shared_init_file")


def current_temp_dir() -> tempfile.TemporaryDirectory[str] | None:
    """The directory the last :func:`initialize_temp_directories` made (None before it, and
    after :func:`cleanup_temp_dir`): upstream's ``common_distributed.tmp_dir``."""
    return _current


def cleanup_temp_dir() -> None:
    """Remove the directory the last :func:`initialize_temp_directories` made, if any."""
    global _current
    if _current is not None:
        _current.cleanup()
        _current = None
