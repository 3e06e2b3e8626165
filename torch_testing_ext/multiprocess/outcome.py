"""The outcome protocol: what each rank reports, and how rank outcomes combine into one verdict."""

from __future__ import annotations

import dataclasses
import enum
from typing import NamedTuple

__all__ = ["Status", "RankOutcome", "Verdict", "combine", "TestSkip", "TEST_SKIPS", "skip_reason_for_exit_code"]


class TestSkip(NamedTuple):
    """An exit code by which upstream-style rank code asks for a skip, and its message."""

    exit_code: int
    message: str


# The exit codes PyTorch's harness gives meaning to; a rank exiting with one is a skip.
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


class Status(str, enum.Enum):
    """How a rank ended."""

    PASSED = "passed"
    FAILED = "failed"  # an assertion failed
    ERROR = "error"  # any other exception
    SKIPPED = "skipped"  # unittest.SkipTest (or an upstream skip exit code)
    DIED = "died"  # exited without reporting: crash, os._exit, signal
    TIMED_OUT = "timed out"  # still running at the deadline; killed
    STOPPED = "stopped"  # killed by the harness because another rank had failed


_PROBLEMS = (Status.FAILED, Status.ERROR, Status.DIED, Status.TIMED_OUT)


@dataclasses.dataclass
class RankOutcome:
    """One rank's report. ``detail`` is a traceback, a skip reason or a death notice."""

    rank: int
    status: Status
    detail: str = ""
    output_tail: str = ""


@dataclasses.dataclass
class Verdict:
    """The test's result: ``status`` is passed, skipped, failed or error; ``message`` explains."""

    status: Status
    message: str = ""


def _prefixed(rank: int, text: str) -> str:
    return "\n".join(f"[rank {rank}] {line}" for line in text.rstrip().splitlines())


def _describe(outcome: RankOutcome) -> str:
    parts = [f"rank {outcome.rank} {outcome.status.value}:", _prefixed(outcome.rank, outcome.detail)]
    if outcome.output_tail.strip():
        parts += [f"[rank {outcome.rank}] --- last lines of output ---",
                  _prefixed(outcome.rank, outcome.output_tail)]
    return "\n".join(part for part in parts if part)


def combine(outcomes: list[RankOutcome]) -> Verdict:
    """Passed only if every rank passed; skipped if no rank had a problem but some skipped."""
    problems = [o for o in outcomes if o.status in _PROBLEMS]
    if problems:
        failing = ", ".join(str(o.rank) for o in problems)
        lines = [f"{len(problems)} of {len(outcomes)} ranks did not pass (rank {failing})"]
        lines += [_describe(o) for o in problems]
        stopped = [str(o.rank) for o in outcomes if o.status is Status.STOPPED]
        if stopped:
            lines.append(f"rank {', '.join(stopped)} stopped early because another rank had failed")
        only_failures = all(o.status is Status.FAILED for o in problems)
        return Verdict(Status.FAILED if only_failures else Status.ERROR, "\n".join(lines))
    skipped = [o for o in outcomes if o.status is Status.SKIPPED]
    if skipped:
        reasons = sorted({o.detail for o in skipped})
        return Verdict(Status.SKIPPED, "; ".join(reasons))
    return Verdict(Status.PASSED)
