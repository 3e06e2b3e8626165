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
from .execute import MAX_RERUNS
from .plan import PlanEntry, ShardPlan
from .results import Attempt, CaseOutcome, EntryResult, exit_text

__all__ = ["Progress", "Totals", "counted", "duration", "plan_text", "shown_output", "summary_text", "totals"]

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


def _first_failure(attempt: Attempt) -> CaseOutcome | None:
    """The first test the attempt's reports record as failed (or timed out), if any."""
    return next((o for o in attempt.outcomes if o.failing or o.status == Status.TIMED_OUT), None)


def _normalized(lines: Sequence[str]) -> str:
    return "\n".join(line.rstrip() for line in lines)


def shown_output(attempt: Attempt, lines: int = _TAIL_LINES) -> str:
    """A failing process's output for its progress line: the last ``lines`` lines, and the
    first failure's message whole (from its report) when those lines do not hold it all."""
    kept = attempt.output.rstrip("\n").splitlines()
    if len(kept) <= lines:
        return "\n".join(kept)
    tail = kept[-lines:]
    shown = [f"[... {len(kept) - lines} earlier lines ...]"]
    first = _first_failure(attempt)
    message = (first.details or first.message).rstrip().splitlines() if first is not None else []
    if first is not None and message and _normalized(message) not in _normalized(tail):
        name = f"{first.classname}.{first.name}" if first.classname else first.name
        shown = [f"[... {len(kept) - lines} earlier lines; the first failure, {name}, from its report:]",
                 *message, f"[... the last {lines} lines of output:]"]
    return "\n".join(shown + tail)


class Progress:
    """Prints a line per finished entry (with an estimate of what is left), a line when an
    entry's failed tests are about to be rerun, and a line per rerun."""

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
            shown = attempt.output if self._verbose else shown_output(attempt)
            line += (f"\n----- output of {result.entry.label} -----\n{shown.rstrip()}"
                     "\n----- end of output -----")
        print(line, file=self._stream, flush=True)

    def reruns_started(self, result: EntryResult, selectors: Sequence[str]) -> None:
        """Say that the failed tests of an entry's first process are rerun, and how."""
        failed = len(result.attempt.failing_selectors())
        which = "it" if failed == 1 else "each" if len(selectors) == failed else f"the first {len(selectors)}"
        print(f"    {result.entry.label}: {counted(failed, 'test')} failed; rerunning {which} alone in "
              f"a fresh process, up to {counted(MAX_RERUNS, 'time')}, to tell flaky from consistent "
              f"(--no-rerun skips this)", file=self._stream, flush=True)

    def rerun_finished(self, entry: PlanEntry, selector: str, number: int, attempt: Attempt) -> None:
        """Print one line per rerun of a failed test."""
        verdict = _rerun_verdict(attempt, selector)
        what = selector or entry.label
        print(f"    rerun {number} of {what}: {verdict} in {duration(attempt.seconds)}",
              file=self._stream, flush=True)


@dataclasses.dataclass
class Totals:
    """The numbers of the summary table and of its closing line (the same numbers)."""

    files: int = 0
    entries: int = 0
    passed: int = 0  # flaky tests included: they passed in the end
    failed: int = 0  # tests that failed and never passed on a rerun
    skipped: int = 0
    flaky: int = 0
    broken: int = 0  # processes that timed out or crashed: no test to blame
    interrupted: int = 0
    seconds: float = 0.0


def totals(results: Sequence[EntryResult], wall_seconds: float) -> Totals:
    """Add up ``results``; ``wall_seconds`` is the run's elapsed time."""
    t = Totals(files=len({r.entry.name for r in results}), entries=len(results), seconds=wall_seconds)
    for result in results:
        t.passed += result.count(Status.PASSED) + len(result.flaky)
        t.failed += len(result.failed)
        t.skipped += result.count(Status.SKIPPED)
        t.flaky += len(result.flaky)
        t.broken += result.status in _BROKEN
        t.interrupted += result.status == Status.INTERRUPTED
    return t


def _entries(entries: Sequence[PlanEntry]) -> str:
    """``2 files``, or ``3 entries`` when some run a part of a file."""
    if all(not e.selection for e in entries):
        return counted(len(entries), "file")
    return counted(len(entries), "entry", "entries")


def _closing_line(t: Totals, not_started: Sequence[PlanEntry]) -> str:
    """``summary: 6 passed, 1 failed, 1 skipped[, 1 file timed out or crashed][, 2 files not run]``:
    what the table says, on the one plain line CI systems read."""
    parts = [f"{t.passed} passed", f"{t.failed} failed", f"{t.skipped} skipped"]
    if t.broken:
        parts.append(f"{counted(t.broken, 'file')} timed out or crashed")
    if t.interrupted:
        parts.append(f"{counted(t.interrupted, 'file')} interrupted")
    if not_started:
        parts.append(f"{_entries(not_started)} not run")
    return "summary: " + ", ".join(parts)


def summary_text(
    results: Sequence[EntryResult],
    not_started: Sequence[PlanEntry],
    wall_seconds: float,
    command_for: CommandFor,
    stop_reason: str = "",
) -> str:
    """The final table, then each failure (and flaky test) with the command that reproduces it,
    then the closing line, which repeats the table's numbers.

    Tests count by their final verdict: a flaky test (failed, then passed on a rerun) is passed
    (and counted as flaky too); a failed test is one that never passed. A process that timed out
    or crashed without a failed test to show for it counts as a file, not as a test. Entries
    that did not start (``stop_reason`` says why) are named.
    """
    t = totals(results, wall_seconds)
    rows = [("files", f"{t.files} ({t.entries} processes)" if t.entries != t.files else str(t.files)),
            ("tests passed", t.passed), ("tests failed", t.failed), ("tests skipped", t.skipped),
            ("flaky", t.flaky), ("timed out / crashed", counted(t.broken, "file"))]
    if t.interrupted:
        rows.append(("interrupted", counted(t.interrupted, "file")))
    if not_started:
        rows.append(("not run", f"{_entries(not_started)}{stop_reason}: "
                                f"{', '.join(e.label for e in not_started)}"))
    rows.append(("total time", duration(t.seconds)))
    lines = ["", "=" * 20 + " run_test summary " + "=" * 20]
    lines += [f"  {label:<20} {value}" for label, value in rows]
    failures, flaky = [], []
    for result in results:
        entry = result.entry
        if result.status not in (Status.PASSED, Status.FAILED):
            failures.append(f"  {command_for(entry.name, entry.selection)}    "
                            f"# {_broken_reason(result)}")
        failures += [f"  {command_for(entry.name, entry.selection_for(s))}" for s in result.failed]
        flaky += [f"  {command_for(entry.name, entry.selection_for(s))}" for s in result.flaky]
    if failures:
        lines += ["", "Failures (each line reproduces one):"] + failures
    if flaky:
        lines += ["", "Flaky (failed, then passed on a rerun):"] + flaky
    lines += ["", _closing_line(t, not_started)]
    return "\n".join(lines)
