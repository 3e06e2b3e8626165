"""What the driver prints: the plan, one progress line per entry, the final summary.

Everything here turns results into text and prints nothing itself, except :class:`Progress`
which writes to the stream it was given. The words people read for a :class:`Status`
(``PASSED``, ``TIMEOUT``, ``CRASHED (killed by SIGSEGV)``...) are chosen here and nowhere else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TextIO

from ..reporting.status import Status
from .plan import PlanEntry, ShardPlan
from .results import Attempt, EntryResult, exit_text

__all__ = ["Progress", "Totals", "counted", "duration", "plan_text", "summary_text", "totals"]

# Turns (test file name, selection) into a command line a person can paste.
CommandFor = Callable[[str, Sequence[str]], str]

_TAIL_LINES = 60

# How a status reads: (in an entry's progress line, in a rerun's line). A rerun that exited 0
# but did not run its test (Status.PASSED, yet not Attempt.passed) reads as failed.
_WORDS = {
    Status.PASSED: ("PASSED", "failed"),
    Status.FAILED: ("FAILED", "failed"),
    Status.TIMED_OUT: ("TIMEOUT", "timeout"),
    Status.DIED: ("CRASHED", "crash"),
    Status.INTERRUPTED: ("INTERRUPTED", "interrupted"),
}
_BROKEN = (Status.TIMED_OUT, Status.DIED)  # "timed out / crashed" in the summary


def counted(number: int, singular: str, plural: str | None = None) -> str:
    """``1 entry``, ``2 entries``, ``0 files``."""
    return f"{number} {singular if number == 1 else plural or singular + 's'}"


def duration(seconds: float) -> str:
    """``4.2s``, ``3m05s`` or ``1h02m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _estimate(entry: PlanEntry) -> str:
    if entry.known:
        return duration(entry.seconds)
    return f"~{duration(entry.seconds)}" if entry.seconds else "?"


def plan_text(shards: Sequence[ShardPlan], index: int, jobs: int) -> str:
    """The ``--dry-run`` listing of shard ``index`` (1-based) and the totals of the others."""
    shard = shards[index - 1]
    any_known = any(e.known for s in shards for e in s.entries)
    total = duration(shard.seconds) if any_known else "unknown (no recorded times)"
    lines = [f"shard {index} of {len(shards)}: {counted(len(shard.entries), 'entry', 'entries')}, "
             f"estimated {total} (jobs {jobs})"]
    for entry in shard.entries:
        mode = "serial  " if entry.serial else "parallel"
        note = "" if entry.known else "  (no recorded time)"
        lines.append(f"  {mode} {_estimate(entry):>9}  {entry.label}{note}")
    if not shard.entries:
        lines.append("  (nothing to run)")
    others = [f"{s.index}: {duration(s.seconds) if any_known else '?'} ({counted(len(s.entries), 'entry', 'entries')})"
              for s in shards if s.index != index]
    if others:
        lines.append("other shards: " + ", ".join(others))
    return "\n".join(lines)


def _verdict(result: EntryResult) -> str:
    """``PASSED``, ``PASSED (2 flaky)``, ``CRASHED (killed by SIGSEGV)``..."""
    word = _WORDS[result.status][0]
    if result.status == Status.PASSED and result.flaky:
        return f"{word} ({len(result.flaky)} flaky)"
    if result.status == Status.DIED:
        return f"{word} ({exit_text(result.attempt.exit_code)})"
    return word


def _rerun_verdict(attempt: Attempt, selector: str) -> str:
    """``passed``, ``failed``, ``timeout``, ``crash`` or ``interrupted``."""
    return "passed" if attempt.passed(selector) else _WORDS[attempt.status][1]


def _broken_reason(result: EntryResult) -> str:
    """Why an entry that did not get to a test verdict failed, for the summary's failure list."""
    if result.status == Status.TIMED_OUT:
        return f"timed out after {duration(result.attempt.seconds)}"
    if result.status == Status.DIED:
        return f"{exit_text(result.attempt.exit_code)} without a failed test"
    return "interrupted"


def _tail(text: str, lines: int = _TAIL_LINES) -> str:
    kept = text.rstrip("\n").splitlines()
    prefix = [f"[... {len(kept) - lines} earlier lines ...]"] if len(kept) > lines else []
    return "\n".join(prefix + kept[-lines:])


class Progress:
    """Prints a line per finished entry and per rerun, with an estimate of what is left."""

    def __init__(
        self, entries: Sequence[PlanEntry], jobs: int, stream: TextIO, verbose: bool = False
    ) -> None:
        self._pending = list(entries)
        self._total = len(entries)
        self._jobs = jobs
        self._stream = stream
        self._verbose = verbose
        self._done = 0

    def _left(self) -> str:
        if not self._pending:
            return "nothing left"
        if any(not e.known and not e.seconds for e in self._pending):
            return f"{counted(len(self._pending), 'entry', 'entries')} left"
        seconds = sum(e.cost(self._jobs) for e in self._pending)
        return f"about {duration(seconds)} left"

    def entry_finished(self, result: EntryResult) -> None:
        """Print the entry's line (and its output if it failed, or always with ``verbose``)."""
        self._pending = [e for e in self._pending if e is not result.entry]
        self._done += 1
        width = len(str(self._total))
        attempt = result.attempt
        counts = (f"{result.count(Status.PASSED)} passed, "
                  f"{result.count(Status.FAILED, Status.ERROR)} failed, "
                  f"{result.count(Status.SKIPPED)} skipped")
        line = (f"[{self._done:>{width}}/{self._total}] {_verdict(result):<11} "
                f"{result.entry.label}  {counts}  in {duration(attempt.seconds)}  ({self._left()})")
        failed = result.status != Status.PASSED or attempt.status != Status.PASSED
        if self._verbose or failed:
            shown = attempt.output if self._verbose else _tail(attempt.output)
            line += (f"\n----- output of {result.entry.label} -----\n{shown.rstrip()}"
                     "\n----- end of output -----")
        print(line, file=self._stream, flush=True)

    def rerun_finished(self, entry: PlanEntry, selector: str, number: int, attempt: Attempt) -> None:
        """Print one line per rerun of a failed test."""
        verdict = _rerun_verdict(attempt, selector)
        what = selector or entry.label
        print(f"    rerun {number} of {what}: {verdict} in {duration(attempt.seconds)}",
              file=self._stream, flush=True)


@dataclasses.dataclass
class Totals:
    """The numbers of the summary table."""

    files: int = 0
    entries: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    flaky: int = 0
    consistent: int = 0
    broken: int = 0  # entries that timed out or crashed
    interrupted: int = 0
    seconds: float = 0.0


def totals(results: Sequence[EntryResult], wall_seconds: float) -> Totals:
    """Add up ``results``; ``wall_seconds`` is the run's elapsed time."""
    t = Totals(files=len({r.entry.name for r in results}), entries=len(results), seconds=wall_seconds)
    for result in results:
        t.passed += result.count(Status.PASSED)
        t.failed += result.count(Status.FAILED, Status.ERROR)
        t.skipped += result.count(Status.SKIPPED)
        t.flaky += len(result.flaky)
        t.consistent += len(result.consistent)
        t.broken += result.status in _BROKEN
        t.interrupted += result.status == Status.INTERRUPTED
    return t


def summary_text(
    results: Sequence[EntryResult],
    not_started: Sequence[PlanEntry],
    wall_seconds: float,
    command_for: CommandFor,
    stop_reason: str = "",
) -> str:
    """The final table, then each failure (and flaky test) with the command that reproduces it."""
    t = totals(results, wall_seconds)
    rows = [("files", f"{t.files} ({t.entries} processes)" if t.entries != t.files else str(t.files)),
            ("tests passed", t.passed), ("tests failed", t.failed), ("tests skipped", t.skipped),
            ("flaky", t.flaky), ("consistent failures", t.consistent),
            ("timed out / crashed", t.broken)]
    if t.interrupted:
        rows.append(("interrupted", t.interrupted))
    rows.append(("total time", duration(t.seconds)))
    lines = ["", "=" * 20 + " run_test summary " + "=" * 20]
    lines += [f"  {label:<20} {value}" for label, value in rows]
    if not_started:
        lines.append(f"  {'not started':<20} {counted(len(not_started), 'entry', 'entries')}{stop_reason}")
    failures, flaky = [], []
    for result in results:
        entry = result.entry
        if result.status not in (Status.PASSED, Status.FAILED):
            failures.append(f"  {command_for(entry.name, entry.selection)}    "
                            f"# {_broken_reason(result)}")
        failures += [f"  {command_for(entry.name, entry.selection_for(s))}" for s in result.consistent]
        flaky += [f"  {command_for(entry.name, entry.selection_for(s))}" for s in result.flaky]
    if failures:
        lines += ["", "Failures (each line reproduces one):"] + failures
    if flaky:
        lines += ["", "Flaky (failed, then passed on a rerun):"] + flaky
    # The run's final outcome on one plain line (flaky tests passed in the end; timeouts and
    # crashes count as failures), the closing line CI systems read.
    lines += ["", f"summary: {t.passed + t.flaky} passed, {t.consistent + t.broken} failed, "
                  f"{t.skipped} skipped"]
    return "\n".join(lines)
