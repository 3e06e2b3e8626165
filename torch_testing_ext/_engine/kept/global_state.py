"""Process-wide settings a test may change and leave changed, read before and after a test.

A kept rank reads them once its world is made and again after each test: torch's defaults
(dtype, device), autograd's modes (grad, inference, anomaly, multithreading), deterministic
algorithms, autocast, ``torch.backends`` flags tests commonly flip, the float32 matmul
precision, torch.distributed's debug level, the working directory and ``sys.path`` (but for
an entry a package imported during the test adds inside its own directory). Each
reading is a cheap getter (microseconds, no device is initialized: on a CPU-only build the CUDA
flags are plain values); a setting this torch cannot read is compared as unreadable. The
number of intra-op threads is not among them: the harness sets it for each rank.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["GlobalState"]

__unittest = True

_UNREADABLE = "<unreadable>"

_Reader = tuple[str, Callable[[], Any]]


def _torch_readers() -> list[_Reader]:
    """The settings of torch every rank reads, named as a test reads or sets them."""
    import torch

    backends = torch.backends
    return [
        ("torch.get_default_dtype()", torch.get_default_dtype),
        ("torch.get_default_device()", torch.get_default_device),
        ("torch.is_grad_enabled()", torch.is_grad_enabled),
        ("torch.is_inference_mode_enabled()", torch.is_inference_mode_enabled),
        ("torch.are_deterministic_algorithms_enabled()", torch.are_deterministic_algorithms_enabled),
        ("torch.is_deterministic_algorithms_warn_only_enabled()", torch.is_deterministic_algorithms_warn_only_enabled),
        ("torch.utils.deterministic.fill_uninitialized_memory",
         lambda: torch.utils.deterministic.fill_uninitialized_memory),  # type: ignore[attr-defined]  # a module property
        ("torch.is_anomaly_enabled()", torch.is_anomaly_enabled),
        ("torch.is_anomaly_check_nan_enabled()", torch.is_anomaly_check_nan_enabled),
        ("torch.autograd.is_multithreading_enabled()", torch.autograd.is_multithreading_enabled),
        ("torch.is_warn_always_enabled()", torch.is_warn_always_enabled),
        ("torch.get_float32_matmul_precision()", torch.get_float32_matmul_precision),
        ("torch.is_autocast_enabled('cpu')", lambda: torch.is_autocast_enabled("cpu")),
        ("torch.get_autocast_dtype('cpu')", lambda: torch.get_autocast_dtype("cpu")),
        ("torch.is_autocast_cache_enabled()", torch.is_autocast_cache_enabled),
        ("torch.backends.cudnn.enabled", lambda: backends.cudnn.enabled),
        ("torch.backends.cudnn.benchmark", lambda: backends.cudnn.benchmark),
        ("torch.backends.cudnn.benchmark_limit", lambda: backends.cudnn.benchmark_limit),
        ("torch.backends.cudnn.deterministic", lambda: backends.cudnn.deterministic),
        ("torch.backends.cudnn.allow_tf32", lambda: backends.cudnn.allow_tf32),
        ("torch.backends.cuda.matmul.allow_tf32", lambda: backends.cuda.matmul.allow_tf32),
        ("torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
         lambda: backends.cuda.matmul.allow_fp16_reduced_precision_reduction),
        ("torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
         lambda: backends.cuda.matmul.allow_bf16_reduced_precision_reduction),
        ("torch.backends.cuda.flash_sdp_enabled()", backends.cuda.flash_sdp_enabled),
        ("torch.backends.cuda.mem_efficient_sdp_enabled()", backends.cuda.mem_efficient_sdp_enabled),
        ("torch.backends.cuda.math_sdp_enabled()", backends.cuda.math_sdp_enabled),
        ("torch.backends.cuda.cudnn_sdp_enabled()", backends.cuda.cudnn_sdp_enabled),
        ("torch.backends.cuda.preferred_linalg_library()", backends.cuda.preferred_linalg_library),
        ("torch.backends.cuda.preferred_blas_library()", backends.cuda.preferred_blas_library),
        ("torch.backends.mha.get_fastpath_enabled()", backends.mha.get_fastpath_enabled),
        ("torch.backends.mkldnn.enabled", lambda: backends.mkldnn.enabled),
        ("torch.backends.opt_einsum.enabled", lambda: backends.opt_einsum.enabled),
        ("torch.backends.opt_einsum.strategy", lambda: backends.opt_einsum.strategy),
        ("torch.backends.fp32_precision", lambda: backends.fp32_precision),  # type: ignore[attr-defined]  # not in torch.backends' stubs
        ("torch.backends.cuda.matmul.fp32_precision", lambda: backends.cuda.matmul.fp32_precision),
        ("torch.backends.cudnn.fp32_precision", lambda: backends.cudnn.fp32_precision),
        ("torch.backends.mkldnn.fp32_precision", lambda: backends.mkldnn.fp32_precision),
        ("torch.distributed.get_debug_level()", _debug_level),
    ]


def _debug_level() -> Any:
    import torch.distributed as dist

    return dist.get_debug_level() if dist.is_available() else _UNREADABLE


def _device_readers(device: str) -> list[_Reader]:
    """The settings of the rank's accelerator (none on CPU)."""
    import torch

    device_type = device.split(":")[0]
    if device_type == "cpu":
        return []
    return [
        ("torch.accelerator.current_device_index()", torch.accelerator.current_device_index),
        (f"torch.is_autocast_enabled({device_type!r})", lambda: torch.is_autocast_enabled(device_type)),
        (f"torch.get_autocast_dtype({device_type!r})", lambda: torch.get_autocast_dtype(device_type)),
    ]


_readers: dict[str, list[_Reader]] = {}  # by device, made once


def _readers_for(device: str) -> list[_Reader]:
    if device not in _readers:
        _readers[device] = _torch_readers() + _device_readers(device)
    return _readers[device]


def _read(reader: Callable[[], Any]) -> Any:
    try:
        return reader()
    except Exception:  # not in this torch or not on this machine: compared as unreadable
        return _UNREADABLE


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError as error:  # the directory was removed
        return f"{_UNREADABLE} ({error.strerror})"


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) and value != _UNREADABLE else str(value)


def _package_directories(names: set[str]) -> list[str]:
    """The directories of the packages among the modules ``names``, each ending in a separator."""
    directories = []
    for name in names:
        try:
            file = getattr(sys.modules.get(name), "__file__", None)
        except Exception:  # a module whose __getattr__ raises something else
            continue
        if isinstance(file, str) and os.path.basename(file).startswith("__init__."):
            directories.append(os.path.dirname(file) + os.sep)
    return directories


def _path_change(before: tuple[str, ...], now: tuple[str, ...]) -> str:
    parts = [f"added {entry!r}" for entry in now if entry not in before]
    parts += [f"removed {entry!r}" for entry in before if entry not in now]
    return ", ".join(parts) or "reordered its entries"


@dataclasses.dataclass(frozen=True)
class GlobalState:
    """The settings, working directory and ``sys.path`` of this process at one moment (and
    the names of the modules imported then)."""

    device: str
    settings: dict[str, Any]
    cwd: str
    sys_path: tuple[str, ...]
    modules: frozenset[str] = frozenset()

    @classmethod
    def take(cls, device: str) -> GlobalState:
        """Read them now (``device``: the rank's, whose accelerator settings are read too)."""
        settings = {name: _read(reader) for name, reader in _readers_for(device)}
        return cls(device, settings, _cwd(), tuple(sys.path), frozenset(sys.modules))

    def changes_since(self, before: GlobalState) -> list[str]:
        """One line per kind of change from ``before`` to this state: what changed, from what
        to what."""
        changed = [f"{name} from {_shown(value)} to {_shown(self.settings.get(name))}"
                   for name, value in before.settings.items() if value != self.settings.get(name)]
        lines = []
        if changed:
            them = "them" if len(changed) > 1 else "it"
            lines.append("changed " + ", ".join(changed) + f" (restore {them} in the test)")
        if self.cwd != before.cwd:
            lines.append(f"changed the working directory from {_shown(before.cwd)} to {_shown(self.cwd)} "
                         "(restore it in the test)")
        sys_path = self._sys_path_of_the_test(before)
        if sys_path != before.sys_path:
            lines.append(f"changed sys.path: {_path_change(before.sys_path, sys_path)} (restore it in the test)")
        return lines

    def _sys_path_of_the_test(self, before: GlobalState) -> tuple[str, ...]:
        """``sys.path`` without the new entries inside the directory of a package imported since
        ``before``: some packages add their own (setuptools its ``_vendor``, imported by
        ``torch.compile``'s first build). A directory a test adds to import a module from is
        no package's inside, and stays."""
        if self.sys_path == before.sys_path:
            return self.sys_path
        packages = tuple(_package_directories(set(self.modules - before.modules)))
        return tuple(entry for entry in self.sys_path if entry in before.sys_path or not entry.startswith(packages))
