"""The exit codes by which upstream-style rank code asks for a skip (``TEST_SKIPS``).

PyTorch's harness lets a rank skip by exiting with one of these codes; a rank of ours that
exits with one (or raises ``SystemExit`` with one) is reported as skipped with its message.
The codes and messages are upstream's; ``"multi-gpu-<n>"`` is defined for any ``n`` (upstream
stops at 8). Those extra codes (90-255) count only when a rank raises ``SystemExit`` with
one: a process that merely ends with such a status (Python's 120, a native ``exit(-1)``) has
crashed, and is never taken for a skip.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["TestSkip", "TEST_SKIPS", "multi_gpu_skip", "skip_reason_for_exit_code",
           "skip_reason_for_system_exit"]


class TestSkip(NamedTuple):
    """An exit code by which upstream-style rank code asks for a skip, and its message."""

    exit_code: int
    message: str


TestSkip.__test__ = False  # type: ignore[attr-defined]  # pytest must not collect it where it is imported


# Upstream's codes for "need at least n GPUs" (n = 1..8); beyond 8 upstream has none (a
# KeyError), so ours continue at 90, the first code upstream does not use.
_MULTI_GPU_CODES = {1: 75, 2: 77, 3: 80, 4: 81, 5: 82, 6: 83, 7: 84, 8: 85}
_FIRST_EXTRA_CODE = 90
_MAX_GPUS = 8 + 255 - _FIRST_EXTRA_CODE + 1  # exit codes end at 255


def multi_gpu_skip(n: int) -> TestSkip:
    """The skip of a test that needs at least ``n`` GPUs (any ``n`` from 1 to 174)."""
    if not 1 <= n <= _MAX_GPUS:
        raise KeyError(f"multi-gpu-{n}")
    code = _MULTI_GPU_CODES.get(n, _FIRST_EXTRA_CODE + n - 9)
    return TestSkip(code, f"Need at least {n} CUDA device{'s' * (n != 1)}")


class _SkipTable(dict[str, TestSkip]):
    """Upstream's table, answering ``"multi-gpu-<n>"`` for any GPU count."""

    def __missing__(self, key: str) -> TestSkip:
        prefix, _, count = key.rpartition("-")
        if prefix == "multi-gpu" and count.isdigit():
            return multi_gpu_skip(int(count))
        raise KeyError(key)


TEST_SKIPS: dict[str, TestSkip] = _SkipTable({
    "backend_unavailable": TestSkip(72, "Skipped because distributed backend is not available."),
    "small_worldsize": TestSkip(73, "Skipped due to small world size."),
    "odd_worldsize": TestSkip(87, "Skipped due to odd world size."),
    "no_cuda": TestSkip(74, "CUDA is not available."),
    **{f"multi-gpu-{n}": multi_gpu_skip(n) for n in _MULTI_GPU_CODES},
    "nccl": TestSkip(76, "c10d not compiled with NCCL support"),
    "skipIfRocm": TestSkip(78, "Test skipped for ROCm"),
    "no_peer_access": TestSkip(79, "Test skipped because no GPU peer access"),
    "generic": TestSkip(86, "Test skipped at subprocess level, look at subprocess log for skip reason"),
    "importerror": TestSkip(88, "Test skipped due to missing import"),
    "no_accelerator": TestSkip(89, "accelerator is not available."),
})


def skip_reason_for_exit_code(code: int | None) -> str | None:
    """The skip message for one of upstream's skip exit codes, or None if ``code`` is not one
    (what a rank's exit status alone may mean)."""
    for skip in TEST_SKIPS.values():
        if skip.exit_code == code:
            return skip.message
    return None


def skip_reason_for_system_exit(code: int | None) -> str | None:
    """The skip message for ``SystemExit(code)`` raised by a rank: upstream's codes, and ours
    for more than 8 GPUs; None if ``code`` is neither."""
    if code is not None and _FIRST_EXTRA_CODE <= code <= 255:
        return multi_gpu_skip(code - _FIRST_EXTRA_CODE + 9).message
    return skip_reason_for_exit_code(code)
