"""The exit codes by which upstream-style rank code asks for a skip (``TEST_SKIPS``).

PyTorch's harness lets a rank skip by exiting with one of these codes; a rank of ours that
exits with one (or raises ``SystemExit`` with one) is reported as skipped with its message.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["TestSkip", "TEST_SKIPS", "skip_reason_for_exit_code"]


class TestSkip(NamedTuple):
    """An exit code by which upstream-style rank code asks for a skip, and its message."""

    exit_code: int
    message: str


TEST_SKIPS: dict[str, TestSkip] = {
    "backend_unavailable": TestSkip(72, "Skipped because distributed backend is not available."),
    "small_worldsize": TestSkip(73, "Skipped due to small world size."),
    "odd_worldsize": TestSkip(87, "Skipped due to odd world size."),
    "no_cuda": TestSkip(74, "CUDA is not available."),
    "multi-gpu-1": TestSkip(75, "Need at least 1 CUDA device"),
    "nccl": TestSkip(76, "c10d not compiled with NCCL support"),
    "skipIfRocm": TestSkip(78, "Test skipped for ROCm"),
    "no_peer_access": TestSkip(79, "Test skipped because no GPU peer access"),
    "generic": TestSkip(86, "Test skipped at subprocess level, look at subprocess log for skip reason"),
    "importerror": TestSkip(88, "Test skipped due to missing import"),
    "no_accelerator": TestSkip(89, "accelerator is not available."),
    **{f"multi-gpu-{n}": TestSkip(75, f"Need at least {n} CUDA devices") for n in range(2, 9)},
}


def skip_reason_for_exit_code(code: int | None) -> str | None:
    """The skip message for an upstream skip exit code, or None if ``code`` is not one."""
    for skip in TEST_SKIPS.values():
        if skip.exit_code == code:
            return skip.message
    return None
