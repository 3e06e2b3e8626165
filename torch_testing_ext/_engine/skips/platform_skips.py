"""Platform flags and the generic skip decorators of ``common_utils``.

The flags are computed once, from :mod:`torch_testing_ext.devices` and the environment;
the decorators skip in the test process (see :mod:`.skip_checks`).

Four upstream flags are constant here: this harness never runs inside Meta's build
(``IS_FBCODE``) or CI (``IS_SANDCASTLE``), and has no mode that runs every test under Dynamo
or Inductor (``TEST_WITH_TORCHDYNAMO``, ``TEST_WITH_TORCHINDUCTOR``), so the decorators keyed on
them never fire, and the "pass in Sandcastle" skips are plain skips.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import platform
import sys
import unittest
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from ... import devices
from .._torch_private import dsl_available
from ..worlds import settings
from .skip_checks import skip_if, skip_when, static_skip_if

__all__ = [
    "TEST_CUDA",
    "TEST_XPU",
    "TEST_HPU",
    "IS_WINDOWS",
    "IS_MACOS",
    "IS_LINUX",
    "IS_X86",
    "TEST_ACL",
    "TEST_ACCELERATOR",
    "TEST_MULTIACCELERATOR",
    "TEST_CUDA_GRAPH",
    "IS_FBCODE",
    "IS_SANDCASTLE",
    "TEST_WITH_TORCHDYNAMO",
    "TEST_WITH_TORCHINDUCTOR",
    "TEST_WITH_ROCM",
    "TEST_WITH_SLOW",
    "TEST_WITH_DEV_DBG_ASAN",
    "NO_MULTIPROCESSING_SPAWN",
    "TEST_WITH_ASAN",
    "TEST_WITH_TSAN",
    "TEST_WITH_UBSAN",
    "IS_CI",
    "FILE_SCHEMA",
    "MI200_ARCH",
    "MI300_ARCH",
    "MI350_ARCH",
    "NAVI_ARCH",
    "requires_cuda",
    "requires_accelerator",
    "requires_cuda_python_bindings",
    "requires_cuda_p2p_access",
    "isRocmArchAnyOf",
    "getRocmVersion",
    "skipIfRocmVersionLessThan",
    "lazy_skip_if",
    "xfailIf",
    "skipIfTorchInductor",
    "skipIfRocmArch",
    "runOnRocmArch",
    "skip_if_pytest",
    "slowTest",
    "skipIfXpu",
    "skipIfRocm",
    "skipIfHpu",
    "skipIfTorchDynamo",
    "xfailIfTorchDynamo",
    "skip_but_pass_in_sandcastle",
    "skip_but_pass_in_sandcastle_if",
    "IS_ARM64",
    "IS_PPC",
    "MACOS_VERSION",
    "TEST_SCIPY",
    "USE_PYTEST",
    "skipIfNoTritonDSL",
    "skipIfNoCuteDSL",
    "skipIfNoFlyDSL",
    "IS_APPLE_M1",
    "TEST_NVMATH",
    "skipIfNoNvmath",
    "markDynamoStrictTest",
]

_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")


def _read_at_import(setting: settings.EnvSetting) -> bool:
    try:
        return bool(setting.get())
    except settings.SettingError as error:  # one line and exit 2, not an import traceback
        print(f"torch_testing_ext: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None


TEST_CUDA: bool = devices.accelerator_type() == "cuda"
TEST_XPU: bool = devices.accelerator_type() == "xpu"
TEST_HPU: bool = devices.accelerator_type() == "hpu"
IS_WINDOWS: bool = sys.platform == "win32"
IS_MACOS: bool = sys.platform == "darwin"
IS_LINUX: bool = sys.platform == "linux"
# The interpreter runs on a 32- or 64-bit x86 processor (as the machine name reports it).
IS_X86: bool = platform.machine() in ("x86_64", "i386")
# oneDNN is built with the Arm Compute Library (Arm CPUs): some quantized and inductor
# kernels take other paths there, which tests expect to fail or skip.
TEST_ACL: bool = torch.backends.mkldnn.is_available() and torch.backends.mkldnn.is_acl_available()
# An accelerator (CUDA, XPU, HPU...) is present; two or more of its devices.
TEST_ACCELERATOR: bool = devices.accelerator_type() is not None
TEST_MULTIACCELERATOR: bool = TEST_ACCELERATOR and devices.device_count() > 1
IS_FBCODE: bool = False
IS_SANDCASTLE: bool = False
TEST_WITH_TORCHDYNAMO: bool = False
TEST_WITH_TORCHINDUCTOR: bool = False
TEST_WITH_ROCM: bool = torch.version.hip is not None
TEST_WITH_SLOW: bool = _read_at_import(settings.TEST_WITH_SLOW)
TEST_WITH_DEV_DBG_ASAN: bool = _read_at_import(settings.TEST_WITH_DEV_DBG_ASAN)
# Every supported platform offers the spawn start method; kept for upstream-style imports.
NO_MULTIPROCESSING_SPAWN: bool = False



IS_ARM64: bool = platform.machine() in ("arm64", "aarch64", "ARM64")
IS_PPC: bool = platform.machine() == "ppc64le"
# The macOS version as major.minor (15.4), -1.0 elsewhere.
MACOS_VERSION: float = float(".".join(platform.mac_ver()[0].split(".")[:2]) or -1)
# An Apple M1 GPU is the MPS device (some ops' expected failures name it).
IS_APPLE_M1: bool = (torch.backends.mps.is_available()
                     and str(getattr(torch.backends.mps, "get_name", lambda: "")()).startswith("Apple M1"))


def _module_found(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # its parent package is missing
        return False


# nvmath-python's bindings are installed and torch is a CUDA build (linalg's nvmath paths).
TEST_NVMATH: bool = _module_found("nvmath.bindings") and torch.version.cuda is not None
# SciPy can be imported (found, not imported: importing it takes time).
TEST_SCIPY: bool = importlib.util.find_spec("scipy") is not None
# Tests run under ``run_tests --use-pytest`` (upstream's switch; this harness's run_tests runs
# unittest, and pytest runs the files itself).
USE_PYTEST: bool = False


def _sanitizer_flag(name: str) -> bool:
    """Upstream's flags that are off by default (sanitizers, skips): on when the variable is
    exactly ``1``."""
    return os.environ.get(name, "") == "1"


# The build runs under a sanitizer (set by the CI job that built it so): upstream skips tests
# that cannot run under one. Read once, at import, as upstream.
TEST_WITH_ASAN: bool = _sanitizer_flag("PYTORCH_TEST_WITH_ASAN")
TEST_WITH_TSAN: bool = _sanitizer_flag("PYTORCH_TEST_WITH_TSAN")
TEST_WITH_UBSAN: bool = _sanitizer_flag("PYTORCH_TEST_WITH_UBSAN")
# Any non-empty CI variable means CI (CI=0 too), as upstream.
IS_CI: bool = bool(os.environ.get("CI", ""))
# CUDA graphs can be captured: CUDA (or ROCm) is here, unless PYTORCH_TEST_SKIP_CUDAGRAPH=1.
TEST_CUDA_GRAPH: bool = (TEST_CUDA and not _sanitizer_flag("PYTORCH_TEST_SKIP_CUDAGRAPH")
                         and (torch.version.cuda is not None or torch.version.hip is not None))
# The scheme of a file:// URL for an absolute path (Windows paths start with a drive letter).
FILE_SCHEMA: str = "file:///" if IS_WINDOWS else "file://"

# ROCm GPU architectures (gcnArchName prefixes), for skipIfRocmArch/runOnRocmArch.
MI200_ARCH: tuple[str, ...] = ("gfx90a",)
MI300_ARCH: tuple[str, ...] = ("gfx942",)
MI350_ARCH: tuple[str, ...] = ("gfx950",)
NAVI_ARCH: tuple[str, ...] = ("gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201")


def _rocm_arch_is_any_of(arch: tuple[str, ...]) -> bool:
    """Whether this is a ROCm build whose device 0 is one of the architectures ``arch``."""
    if not TEST_WITH_ROCM:
        return False
    name = devices.rocm_arch_name()
    return name is not None and any(prefix in name for prefix in arch)


def isRocmArchAnyOf(arch: tuple[str, ...]) -> bool:
    """Whether this is a ROCm build whose device 0 is one of the architectures ``arch`` (e.g.
    ``MI300_ARCH``); False on every other build. Asks the device when called."""
    return _rocm_arch_is_any_of(arch)


def getRocmVersion() -> tuple[int, int]:
    """The ROCm version torch was built with, ``(major, minor)``; ``(0, 0)`` without ROCm."""
    version = devices.torch_rocm_version()
    return (version[0], version[1] if len(version) > 1 else 0)


def lazy_skip_if(condition_fn: Callable[[], bool], reason: str) -> Callable[[_T], _T]:
    """Skip a test, or a whole test class, when ``condition_fn()`` is true.

    On a test method the condition is asked when the test runs (in the test process, before
    any rank starts); on a class it is asked once, when the class is decorated, and unittest
    skips each of its tests.
    """

    def decorate(target: _T) -> _T:
        if isinstance(target, type):
            return unittest.skip(reason)(target) if condition_fn() else target
        return skip_if(condition_fn, reason)(target)  # type: ignore[type-var]  # a test method

    return decorate


def xfailIf(condition: bool) -> Callable[[_F], _F]:
    """Expect the test to fail when ``condition`` holds (``unittest.expectedFailure``); else
    leave it as it is."""

    def decorate(fn: _F) -> _F:
        return unittest.expectedFailure(fn) if condition else fn

    return decorate


def skipIfRocmVersionLessThan(version: tuple[int, ...] | None = None) -> Callable[[_T], _T]:
    """On ROCm builds, skip unless ROCm is at least ``version`` (``(6, 4)``; None skips on every
    ROCm build); other builds run the test."""

    def too_old() -> bool:
        return TEST_WITH_ROCM and (version is None or getRocmVersion() < tuple(version))

    return lazy_skip_if(too_old, f"ROCm version less than {version} required")


def requires_cuda(fn: _F) -> _F:
    """Skip unless the machine has a CUDA device (the test addresses ``cuda`` itself)."""
    return skip_if(not TEST_CUDA, "Requires CUDA: this machine has no CUDA device")(fn)


def requires_accelerator(fn: _F) -> _F:
    """Skip unless the machine has an accelerator (CUDA, XPU, HPU, MPS, a PrivateUse1 backend)."""
    return skip_if(not TEST_ACCELERATOR, "Requires an accelerator: this machine has none")(fn)


def _cuda_python_bindings_importable() -> bool:
    try:
        return importlib.util.find_spec("cuda.bindings") is not None
    except (ImportError, ValueError):  # no ``cuda`` package at all
        return False


CUDA_PYTHON_BINDINGS_REASON = ("Requires the CUDA Python bindings (cuda.bindings, from the "
                               "cuda-python package): not installed")


def requires_cuda_python_bindings(fn: _F) -> _F:
    """Skip unless NVIDIA's CUDA Python bindings (``cuda.bindings``) can be imported; asked when
    the test runs, in the test process. Whether CUDA itself is here is a separate question."""
    return skip_if(lambda: not _cuda_python_bindings_importable(), CUDA_PYTHON_BINDINGS_REASON)(fn)


def requires_cuda_p2p_access() -> Callable[[_F], _F]:
    """Skip unless two or more CUDA devices (compute capability 8.0 or newer) can each reach
    every other's memory directly; decided when the test runs, in the test process."""
    return skip_if(lambda: not devices.cuda_peer_access_everywhere(), "cuda p2p access is not available")


def skipIfRocmArch(arch: tuple[str, ...]) -> Callable[[_F], _F]:
    """Skip on ROCm builds whose GPU is one of ``arch`` (e.g. ``MI300_ARCH``); decided when the
    test runs, in the test process."""
    return skip_if(lambda: _rocm_arch_is_any_of(arch), f"skipIfRocm: test skipped on {arch}")


def runOnRocmArch(arch: tuple[str, ...]) -> Callable[[_F], _F]:
    """On ROCm builds, run only when the GPU is one of ``arch``; other builds (CUDA, CPU) run
    the test as usual."""
    return skip_if(lambda: TEST_WITH_ROCM and not _rocm_arch_is_any_of(arch),
                   f"skipIfRocm: test only runs on {arch}")


def skip_if_pytest(fn: _F) -> _F:
    """Skip when the test runs under pytest (``PYTEST_CURRENT_TEST`` is set)."""
    return skip_if(lambda: "PYTEST_CURRENT_TEST" in os.environ, "does not work under pytest")(fn)


def slowTest(fn: _F) -> _F:
    """Run the test only when ``PYTORCH_TEST_WITH_SLOW=1``."""
    return skip_if(lambda: not settings.TEST_WITH_SLOW.get(),
                   "test is slow; run with PYTORCH_TEST_WITH_SLOW=1 to enable it")(fn)


def skipIfXpu(fn: _F) -> _F:
    """Skip on Intel XPU machines."""
    return skip_if(TEST_XPU, "test doesn't currently work on the XPU stack")(fn)


def skipIfRocm(fn: _F) -> _F:
    """Skip on ROCm builds of PyTorch."""
    return skip_if(TEST_WITH_ROCM, "test doesn't currently work on the ROCm stack")(fn)


def skipIfHpu(fn: _F) -> _F:
    """Skip on Intel Gaudi (HPU) machines."""
    return skip_if(TEST_HPU, "test doesn't currently work with HPU")(fn)


def skipIfTorchDynamo(msg: str = "test doesn't currently work with dynamo") -> Callable[[_F], _F]:
    """Skip with ``msg`` when the tests run under Dynamo (``TEST_WITH_TORCHDYNAMO``; never here)."""
    if not isinstance(msg, str):
        raise TypeError(f"skipIfTorchDynamo takes a message, got {msg!r}: write @skipIfTorchDynamo()")
    # Read when the test runs, so that a self-test can switch the flag on.
    return skip_if(lambda: TEST_WITH_TORCHDYNAMO, msg)


def skipIfTorchInductor(msg: str = "test doesn't currently work with torchinductor",
                        condition: bool | None = None) -> Callable[[_T], _T]:
    """Skip a test or class with ``msg`` when ``condition`` holds; by default, when the tests
    run under Inductor (``TEST_WITH_TORCHINDUCTOR``; never here)."""
    if not isinstance(msg, str):
        raise TypeError(f"skipIfTorchInductor takes a message, got {msg!r}: write @skipIfTorchInductor()")
    return lazy_skip_if(lambda: TEST_WITH_TORCHINDUCTOR if condition is None else condition, msg)


def xfailIfTorchDynamo(fn: _F) -> _F:
    """Expect ``fn`` to fail when the tests run under Dynamo (``TEST_WITH_TORCHDYNAMO``; never here)."""
    return unittest.expectedFailure(fn) if TEST_WITH_TORCHDYNAMO else fn


def skip_but_pass_in_sandcastle(reason: str) -> Callable[[_F], _F]:
    """Always skip with ``reason`` (Meta's internal CI reports such skips as passes)."""
    return static_skip_if(True, reason)


def skip_but_pass_in_sandcastle_if(condition: bool, reason: str) -> Callable[[_F], _F]:
    """Skip when ``condition`` holds (Meta's internal CI reports such skips as passes); as
    upstream's, a ``unittest.skipIf``."""
    return static_skip_if(condition, reason)


def skipIfNoTritonDSL(fn: _F) -> _F:
    """Skip unless torch's native ops can use the Triton kernel DSL."""
    return skip_when(lambda _test: None if dsl_available("triton") else "Triton DSL not available")(fn)


def skipIfNoCuteDSL(fn: _F) -> _F:
    """Skip unless torch's native ops can use the CuTeDSL kernel DSL."""
    return skip_when(lambda _test: None if dsl_available("cutedsl") else "CuTeDSL not available")(fn)


def skipIfNoFlyDSL(fn: _F) -> _F:
    """Skip unless torch's native ops can use the FlyDSL kernel DSL."""
    return skip_when(lambda _test: None if dsl_available("flydsl") else "FlyDSL not available")(fn)


def skipIfNoNvmath(fn: _F) -> _F:
    """Skip unless nvmath-python is installed beside a CUDA build of torch."""
    return static_skip_if(not TEST_NVMATH, "nvmath-python not available")(fn)


def markDynamoStrictTest(cls_or_func: Any = None, nopython: bool = False) -> Any:
    """Mark a test class (``dynamo_strict``, ``dynamo_strict_nopython``) or test as one that runs
    under Dynamo in strict mode. Only a run of every test under Dynamo reads the mark, which this
    harness has not: a class keeps the mark, a test is returned as it is. Usable bare or called."""

    def mark(target: Any) -> Any:
        if inspect.isclass(target):
            setattr(target, "dynamo_strict", True)  # noqa: B010  # upstream's marks on any class
            setattr(target, "dynamo_strict_nopython", nopython)  # noqa: B010
        return target

    return mark if cls_or_func is None else mark(cls_or_func)
