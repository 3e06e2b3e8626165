"""``requires_inductor_backend``: the device-generic form of upstream's Inductor GPU guard; and
upstream's ``requires_triton()``.

Upstream guards Inductor tests with ``skipIf(not HAS_GPU, "Inductor+gpu needs triton and
recent GPU arch")``. This guard means exactly that on a machine with an accelerator, while on
a CPU-only machine the test runs on Inductor's C++ CPU backend (it only skips if no C++
compiler is found).

Example::

    @requires_inductor_backend
    def test_compiled(self):
        torch.compile(fn, backend="inductor")(torch.ones(4, device=self.device))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ... import devices
from .skip_checks import skip_if, skip_when

__all__ = [
    "GPU_INDUCTOR_SKIP_REASON",
    "CPU_INDUCTOR_SKIP_REASON",
    "inductor_backend_skip_reason",
    "requires_inductor_backend",
    "requires_triton",
]

_F = TypeVar("_F", bound=Callable[..., Any])

# The upstream message of the ``HAS_GPU`` guard.
GPU_INDUCTOR_SKIP_REASON = "Inductor+gpu needs triton and recent GPU arch"
CPU_INDUCTOR_SKIP_REASON = "Inductor's C++ CPU backend needs a C++ compiler on PATH (set CXX)"


def inductor_backend_skip_reason(facts: devices.DeviceFacts | None = None) -> str | None:
    """Why a test that compiles with Inductor on the machine's test device cannot run, or None.

    With an accelerator the tensors live on it, so Inductor needs its GPU (triton) backend;
    on a CPU-only machine the tensors live on the CPU and Inductor's C++ backend serves.
    """
    facts = facts or devices.facts()
    if facts.accelerator is not None:
        return None if facts.gpu_inductor else GPU_INDUCTOR_SKIP_REASON
    return None if facts.cpu_inductor else CPU_INDUCTOR_SKIP_REASON


def requires_inductor_backend(fn: _F) -> _F:
    """Skip unless Inductor can compile for the test device (GPU+triton, or CPU-only with C++).

    Decided in the test process, so a multi-process test that skips starts no rank.
    """
    return skip_when(lambda _test: inductor_backend_skip_reason())(fn)


def requires_triton() -> Callable[[_F], _F]:
    """Skip unless triton imports and has a backend for this machine's device (written
    ``@requires_triton()``, as upstream)."""
    return skip_if(not devices.has_triton(), "requires triton")
