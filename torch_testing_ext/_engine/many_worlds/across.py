"""One test run in several worlds, and its one verdict.

:func:`run_across_worlds` runs the test in each world of a :class:`WorldsSpec`, one after
another, each on the rank machinery the caller gives (``run_world(size, records_dir)``: fresh,
kept or thread ranks of ``size``, whose ``compare`` calls write to ``records_dir``), and every
world runs whatever the others did. The verdict:

- a world that did not pass (a rank failed, raised, died or hung) fails the test, named:
  ``world 4: rank 3 failed: ...``, with each such world's whole report; values that parted
  before it are reported after;
- else values that part (:mod:`.divergence`) fail it with :class:`WorldsDisagree`;
- else a test that recorded nothing fails (it compared nothing, so it cannot promise agreement);
- else a world that skipped makes the test a skip that names it, and says whether the worlds
  that ran agree (a skip never hides a failure: the checks above come first);
- else it passes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..reporting.status import Status
from ..worlds.outcomes import RankError, RankFailure, RanksDidNotPass, Verdict, WorldsDisagree
from ..worlds.world import WorldDir
from .divergence import WorldRecords, first_divergence
from .divergence_report import divergence_report
from .value_records import Record, read_records
from .worlds_spec import WorldsSpec

__all__ = ["WorldRun", "WorldEnd", "WorldsVerdict", "run_across_worlds", "worlds_verdict", "raise_worlds_verdict"]

__unittest = True


@dataclasses.dataclass
class WorldRun:
    """How one world's run ended: its verdict (the ranks' outcomes combined) and what its
    ranks recorded, by rank. ``xfail_reason``: set when its ranks called ``pytest.xfail()``."""

    size: int
    verdict: Verdict
    records: dict[int, list[Record]]
    xfail_reason: str | None = None


@dataclasses.dataclass(frozen=True)
class WorldsVerdict:
    """The test's verdict across its worlds, and the error a failing one raises."""

    verdict: Verdict
    failure: type[RanksDidNotPass] = RankFailure
    xfail_reason: str | None = None


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def _worlds(runs: list[WorldRun]) -> str:
    """``world 2`` or ``worlds 1, 2``."""
    return f"world{'s' * (len(runs) != 1)} {', '.join(str(run.size) for run in runs)}"


def worlds_verdict(spec: WorldsSpec, runs: list[WorldRun]) -> WorldsVerdict:
    """The verdict of a test whose worlds ended as ``runs`` say (see the module docstring)."""
    ran = [run for run in runs if run.verdict.status is not Status.SKIPPED]
    compared = [WorldRecords(run.size, run.records, finished=not run.verdict.status.is_problem) for run in ran]
    divergence = first_divergence(compared, spec.rtol, spec.atol) if compared else None
    report = divergence_report(compared, divergence, spec.rtol, spec.atol) if divergence else ""
    problems = [run for run in runs if run.verdict.status.is_problem]
    if problems:
        parts = [f"{_plural(len(problems), 'world')} of {len(runs)} did not pass ({_worlds(problems)})"]
        for run in problems:
            body = "\n".join(f"  {line}" for line in run.verdict.message.splitlines())
            parts.append(f"world {run.size} ({_plural(run.size, 'rank')}) {run.verdict.status}:\n{body}")
        if report:
            parts.append("the values had parted already:\n" + report)
        headline = "; ".join(f"world {run.size}: {run.verdict.headline or run.verdict.status}" for run in problems)
        only_failures = all(run.verdict.status is Status.FAILED for run in problems)
        status = Status.FAILED if only_failures else Status.ERROR
        return WorldsVerdict(Verdict(status, "\n".join(parts), headline),
                             RankFailure if only_failures else RankError)
    if divergence is not None:
        return WorldsVerdict(Verdict(Status.FAILED, report, report.splitlines()[0]), WorldsDisagree)
    if ran and all(world.empty for world in compared):
        message = (f"nothing was compared: {_worlds(ran)} passed, but no rank called compare(name, value); "
                   "a test across worlds must record the values that have to agree")
        return WorldsVerdict(Verdict(Status.FAILED, message, message), WorldsDisagree)
    skipped = [run for run in runs if run.verdict.status is Status.SKIPPED]
    if skipped:
        reasons = "; ".join(f"world {run.size} skipped: {run.verdict.message}" for run in skipped)
        if ran:
            reasons += (f"; {_worlds(ran)} ran and agree" if len(ran) > 1 else f"; world {ran[0].size} ran alone, "
                        "so nothing was compared across worlds")
        return WorldsVerdict(Verdict(Status.SKIPPED, reasons))
    xfails = [run.xfail_reason for run in runs if run.xfail_reason is not None]
    return WorldsVerdict(Verdict(Status.PASSED), xfail_reason=xfails[0] if xfails else None)


#: What running one world returns: its verdict, and the reason its ranks gave ``pytest.xfail()``.
WorldEnd = tuple[Verdict, "str | None"]


def run_across_worlds(spec: WorldsSpec, run_world: Callable[[int, str], WorldEnd], parent: str,
                      name: str) -> WorldsVerdict:
    """Run the test in each world of ``spec``, one after another: ``run_world(size, records_dir)``
    runs it on ``size`` ranks whose ``compare`` calls write to ``records_dir`` (a directory of
    its own under ``parent``, removed after it is read); the verdict of them all."""
    runs = []
    for size in spec.sizes:
        records_dir = WorldDir(parent, f"{name[:40]}-compared-{size}")
        try:
            verdict, xfail_reason = run_world(size, records_dir.path)
            runs.append(WorldRun(size, verdict, read_records(records_dir.path, size), xfail_reason))
        finally:
            records_dir.remove()
    return worlds_verdict(spec, runs)


def raise_worlds_verdict(result: WorldsVerdict) -> None:
    """End the test as ``result`` says: return if it passed, else raise ``SkipTest``, its
    failure (``WorldsDisagree``, ``RankFailure``) or ``RankError``."""
    import unittest

    verdict = result.verdict
    if verdict.status is Status.PASSED:
        return
    if verdict.status is Status.SKIPPED:
        raise unittest.SkipTest(verdict.message)
    failure = result.failure if verdict.status is Status.FAILED else RankError
    raise failure(verdict.message, verdict.headline)

