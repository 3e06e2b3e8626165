"""What each rank reports, and how the ranks' outcomes combine into the test's verdict."""

from __future__ import annotations

import dataclasses

from ..reporting.status import Status

__all__ = ["RankOutcome", "Verdict", "combine"]

__unittest = True


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
    parts = [f"rank {outcome.rank} {outcome.status}:", _prefixed(outcome.rank, outcome.detail)]
    if outcome.output_tail.strip():
        parts += [f"[rank {outcome.rank}] --- last lines of output ---",
                  _prefixed(outcome.rank, outcome.output_tail)]
    return "\n".join(part for part in parts if part)


def combine(outcomes: list[RankOutcome]) -> Verdict:
    """Passed only if every rank passed; skipped if no rank had a problem but some skipped."""
    problems = [o for o in outcomes if o.status.is_problem]
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
