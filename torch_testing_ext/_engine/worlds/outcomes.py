"""What each rank reports, how the ranks' outcomes combine into the test's verdict, and how
a verdict ends the test (shared by process ranks and thread ranks)."""

from __future__ import annotations

import dataclasses
import os
import re
import unittest

from ..ledger.collective_ledger import Ledger
from ..ledger.ledger_report import divergence_report, first_divergence
from ..reporting.stack_dumps import is_harness_file
from ..reporting.status import Status
from ..reporting.tracebacks import format_test_exception
from ..skips.skip_codes import skip_reason_for_system_exit

__all__ = ["RankOutcome", "Verdict", "RanksDidNotPass", "RankFailure", "RankError", "WorldsDisagree", "outcome_of",
           "combine", "raise_verdict", "left_the_test_with"]

__unittest = True


@dataclasses.dataclass
class RankOutcome:
    """One rank's report. ``detail`` is a traceback, a skip reason or a death notice;
    ``ledger`` the collective calls the rank's test made (None when not recorded)."""

    rank: int
    status: Status
    detail: str = ""
    output_tail: str = ""
    ledger: Ledger | None = None


@dataclasses.dataclass
class Verdict:
    """The test's result: ``status`` is passed, skipped, failed or error; ``message`` explains;
    ``headline`` says in one line which ranks had which problem (``rank 1 failed:
    AssertionError: 2.0 != 3.0``), for one-line summaries such as pytest's."""

    status: Status
    message: str = ""
    headline: str = ""


class RanksDidNotPass(Exception):
    """The base of the errors that end a multi-rank test whose ranks did not all pass.

    ``headline`` names the ranks and their problem in one line (the message's first line when
    not given); the message holds every failing rank's traceback and output tail.
    """

    def __init__(self, message: str = "", headline: str = "") -> None:
        super().__init__(message)
        self.headline = headline or (message.splitlines() or [""])[0]


class RankFailure(RanksDidNotPass, AssertionError):
    """One or more ranks failed an assertion."""


class RankError(RanksDidNotPass, RuntimeError):
    """One or more ranks raised, crashed or timed out."""


class WorldsDisagree(RanksDidNotPass, AssertionError):
    """A test run across several worlds (``@pytest.mark.worlds``, ``across_worlds``) whose
    every rank passed, but whose recorded values part: between worlds, or between the ranks
    of one world. The message names the first divergence and shows the steps around it."""


# Public under the package's own name (``torch_testing_ext.RankFailure``), as tracebacks show them.
for _public in (RanksDidNotPass, RankFailure, RankError, WorldsDisagree):
    _public.__module__ = "torch_testing_ext"


_LIBRARY_DIRS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def _is_user_file(path: str) -> bool:
    """Whether ``path`` is the user's code: not the harness's, pytest's or an installed library's."""
    return not is_harness_file(path) and not any(part in path for part in _LIBRARY_DIRS)


def outcome_of(rank: int, error: BaseException) -> RankOutcome:
    """The outcome of a rank whose test ended by raising ``error``: a skip (``SkipTest``,
    ``pytest.skip()``, or ``SystemExit`` with one of upstream's skip exit codes), a failure (an
    assertion, ``pytest.fail()``) or an error. A test body that is left any other way than by
    returning (``sys.exit(0)``, ``KeyboardInterrupt``, ``pytest.exit()``, any other
    ``BaseException``) did not pass: an error whose first line says how and where (``rank 1
    left the test with sys.exit(0) at test_x.py:12``). Upstream counts ``sys.exit(0)`` as a
    pass; we do not (docs/migration.md)."""
    if isinstance(error, unittest.SkipTest) or _is_pytest_outcome(error, "Skipped"):
        return RankOutcome(rank, Status.SKIPPED, str(getattr(error, "msg", None) or error))
    if isinstance(error, SystemExit):
        code = error.code
        reason = skip_reason_for_system_exit(code) if isinstance(code, int) else None
        if reason:
            return RankOutcome(rank, Status.SKIPPED, reason)
    if isinstance(error, AssertionError) or _is_pytest_outcome(error, "Failed"):
        return RankOutcome(rank, Status.FAILED, format_test_exception(error, type(error)))
    how = left_the_test_with(error)
    if how is not None:
        where = _user_line(error)
        headline = f"rank {rank} left the test with {how}" + (f" at {where}" if where else "")
        return RankOutcome(rank, Status.ERROR, f"{headline}\n{format_test_exception(error)}")
    return RankOutcome(rank, Status.ERROR, format_test_exception(error))


def _is_pytest_outcome(error: BaseException, name: str) -> bool:
    """Whether ``error`` is pytest's outcome exception ``name`` (``Skipped``, ``Failed``,
    ``Exit``...), without importing pytest."""
    mro = type(error).__mro__  # (Skipped and Failed say they are builtins' for display)
    return any(cls.__name__ == name for cls in mro) and any(cls.__module__ == "_pytest.outcomes" for cls in mro)


def left_the_test_with(error: BaseException) -> str | None:
    """How ``error`` leaves a test body when it is not an exception a test raises to fail:
    ``sys.exit(0)``, ``KeyboardInterrupt``, ``pytest.exit('why')``, or the class of any other
    ``BaseException``; None for an ordinary exception (``Exception``'s subclasses)."""
    if isinstance(error, SystemExit):
        return "sys.exit()" if error.code is None else f"sys.exit({error.code!r})"
    if _is_pytest_outcome(error, "Exit"):
        return f"pytest.exit({str(getattr(error, 'msg', error))!r})"
    if isinstance(error, Exception):
        return None
    return type(error).__name__


def _user_line(error: BaseException) -> str | None:
    """``file.py:12``: the innermost frame of ``error``'s traceback in the user's code (not the
    harness's, pytest's or an installed library's)."""
    tb = error.__traceback__
    line = None
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename
        if _is_user_file(path):
            line = f"{os.path.basename(path)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return line


def _prefixed(rank: int, text: str) -> str:
    return "\n".join(f"[rank {rank}] {line}" for line in text.rstrip().splitlines())


def _describe(outcome: RankOutcome) -> str:
    parts = [f"rank {outcome.rank} {outcome.status}:", _prefixed(outcome.rank, outcome.detail)]
    if outcome.output_tail.strip():
        parts += [f"[rank {outcome.rank}] --- last lines of output ---",
                  _prefixed(outcome.rank, outcome.output_tail)]
    return "\n".join(part for part in parts if part)


def _exception_line(traceback_text: str) -> str:
    """The first line of the exception a formatted traceback ends with (``AssertionError: ...``),
    not the last line of its message; in a pytest report, its first ``E`` line (``assert 2.0 ==
    3.0``)."""
    lines = traceback_text.rstrip().splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    if headers:
        for line in lines[headers[-1] + 1:]:
            if line.strip() and not line.startswith((" ", "\t")):
                return line.strip()
    pytest_lines = [line[1:].strip() for line in lines if line.startswith("E ") and line[1:].strip()]
    if pytest_lines:
        return pytest_lines[0]
    return lines[-1].strip() if lines else ""


def _problem_phrase(outcome: RankOutcome) -> str:
    """What went wrong on a rank, in a few words after its number: ``failed: AssertionError:
    ...``, ``raised KeyError: 'x'``, ``died from signal SIGSEGV``, ``timed out after 3 s``."""
    own_words = f"rank {outcome.rank} left the test with "
    if outcome.detail.startswith(own_words):
        return outcome.detail.splitlines()[0].removeprefix(f"rank {outcome.rank} ")
    if outcome.status in (Status.FAILED, Status.ERROR):
        line = _exception_line(outcome.detail)
        return f"failed: {line}" if outcome.status is Status.FAILED else f"raised {line}".rstrip()
    lines = [line.strip() for line in outcome.detail.strip().splitlines() if line.strip()]
    first = (lines[0] if lines else str(outcome.status)).split("; ")[0]
    return first.removeprefix(f"rank {outcome.rank} ")


# A one-line summary is cut to the terminal's width: the likely causes come first. A rank that
# died or hung usually makes its peers raise (a connection reset) or fail after it.
_CAUSE_FIRST = {Status.DIED: 0, Status.TIMED_OUT: 1, Status.INTERRUPTED: 2, Status.FAILED: 3, Status.ERROR: 4}


def _headline(problems: list[RankOutcome]) -> str:
    """``rank 1 failed: AssertionError: 2.0 != 3.0``; ranks with the same problem share one
    phrase (``rank 0, 1 timed out after 3 s``), different problems are joined by ``; ``, deaths
    first, then timeouts, failures and errors."""
    ranks_by_phrase: dict[str, list[str]] = {}
    for outcome in sorted(problems, key=lambda o: (_CAUSE_FIRST.get(o.status, 5), o.rank)):
        ranks_by_phrase.setdefault(_problem_phrase(outcome), []).append(str(outcome.rank))
    return "; ".join(f"rank {', '.join(ranks)} {phrase}" for phrase, ranks in ranks_by_phrase.items())


_FRAME_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def _current_line(detail: str) -> str | None:
    """The innermost ``file:line`` of the user's code in a stopped rank's stack (its detail):
    not the harness's, not an installed library's."""
    frames = [(path, line) for path, line in _FRAME_LINE.findall(detail)
              if _is_user_file(path)]
    return f"{os.path.basename(frames[-1][0])}:{frames[-1][1]}" if frames else None


def combine(outcomes: list[RankOutcome]) -> Verdict:
    """The ranks' outcomes (:func:`combine_outcomes`), then their collective ledgers: a
    failure's message gains where the ranks' calls first differ; ranks that passed but whose
    calls differ fail the test (lockstep), unless the test opted out."""
    verdict = combine_outcomes(outcomes)
    ledgers = {o.rank: o.ledger for o in outcomes if o.ledger is not None}
    if len(ledgers) < 2 or verdict.status is Status.SKIPPED:
        return verdict
    divergence = first_divergence(ledgers)
    if verdict.status is Status.PASSED:
        if divergence is None or not all(ledger.lockstep for ledger in ledgers.values()):
            return verdict
        report = divergence_report(ledgers, divergence)
        headline = (f"the ranks passed but made different collective calls: call {divergence.seq} of group "
                    f"{divergence.group} differs")
        return Verdict(Status.FAILED, f"{headline} (lockstep)\n{report}", headline)
    if not any(ledger.calls for ledger in ledgers.values()):
        return verdict
    where = {o.rank: line for o in outcomes if o.status in (Status.TIMED_OUT, Status.STOPPED)
             for line in [_current_line(o.detail)] if line}
    return Verdict(verdict.status, f"{verdict.message}\n{divergence_report(ledgers, divergence, where)}",
                   verdict.headline)


def combine_outcomes(outcomes: list[RankOutcome]) -> Verdict:
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
        return Verdict(Status.FAILED if only_failures else Status.ERROR, "\n".join(lines),
                       _headline(problems))
    skipped = [o for o in outcomes if o.status is Status.SKIPPED]
    if skipped:
        reasons = sorted({o.detail for o in skipped})
        return Verdict(Status.SKIPPED, "; ".join(reasons))
    return Verdict(Status.PASSED)


def raise_verdict(verdict: Verdict, failure: type[RankFailure] = RankFailure) -> None:
    """End the test as ``verdict`` says: return if it passed, else raise ``SkipTest``,
    ``failure`` (only assertion failures) or :class:`RankError`."""
    if verdict.status is Status.PASSED:
        return
    if verdict.status is Status.SKIPPED:
        raise unittest.SkipTest(verdict.message)
    if verdict.status is Status.FAILED:
        raise failure(verdict.message, verdict.headline)
    raise RankError(verdict.message, verdict.headline)
