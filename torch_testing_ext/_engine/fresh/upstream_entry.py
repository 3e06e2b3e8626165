"""Upstream's rank entry point, ``_run``, for the subclasses that override it.

Upstream starts every rank in the classmethod ``_run(rank, test_name, file_name, pipe,
fake_pg=<the class's fake_pg, default False>)``, which makes the test case and calls
``self.run_test(test_name, pipe)``; a subclass may override it to set up each rank its own
way (``TestDistBackend`` in torch's ``distributed_test.py`` starts its process group there,
syncs a barrier around the test and destroys the group). A rank of a class that overrides
``_run`` runs it: ``run_test`` runs the method between the rank hooks and records how it
ended, then leaves the entry as upstream's does after a failure or skip (by ``SystemExit``),
so nothing after it in ``_run`` waits for peers that already stopped.

The rank's outcome is what ``run_test`` recorded, unless the entry then failed; an entry that
returns or exits 0 without running the test did not pass (a bail-out is never a green), and
one that exits with a skip code is that skip.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ..reporting.status import Status
from ..worlds.outcomes import RankOutcome, outcome_of
from ..worlds.rank_facts import RankFacts

__all__ = ["overrides_rank_entry", "run_upstream_entry", "run_test_in_entry"]

__unittest = True


class _Entry:
    """What ``run_test`` needs from the rank entry that called it (passed as upstream's pipe)."""

    def __init__(self, facts: RankFacts, seed: int, body: Callable[[Any, str, int], None]) -> None:
        self.facts = facts
        self.seed = seed
        self.body = body
        self.outcome: RankOutcome | None = None

    def __repr__(self) -> str:
        return f"<rank {self.facts.rank}'s entry>"


def overrides_rank_entry(cls: type) -> bool:
    """Whether ``cls`` has upstream's rank entry ``_run`` (our test cases define none)."""
    return callable(getattr(cls, "_run", None))


def _after_entry(entry: _Entry, rank: int, ended: BaseException | None) -> RankOutcome:
    recorded = entry.outcome
    if ended is None or isinstance(ended, SystemExit) and ended.code in (0, None):
        if recorded is not None:
            return recorded
        how = "returned" if ended is None else f"exited with sys.exit({ended.code!r})"
        return RankOutcome(rank, Status.ERROR, f"rank {rank}'s _run {how} without running the test "
                                               "(self.run_test was never called)")
    if recorded is not None and recorded.status is not Status.PASSED:
        return recorded  # run_test left the entry after the test's own failure or skip
    return outcome_of(rank, ended)


def run_upstream_entry(cls: type, method: str, facts: RankFacts, seed: int,
                       body: Callable[[Any, str, int], None]) -> RankOutcome:
    """Run ``cls._run`` as upstream's harness would in rank ``facts.rank``, and say how the
    test ended there; ``body(test, method, seed)`` is what ``run_test`` runs of the test."""
    entry = _Entry(facts, seed, body)
    try:
        # As upstream starts it: the class's fake_pg wish as a keyword (upstream's own _run ignores it).
        cls._run(facts.rank, method, facts.file_name, entry,  # type: ignore[attr-defined]  # checked by overrides_rank_entry
                 fake_pg=getattr(cls, "fake_pg", False))
    except BaseException as ended:  # every ending of the entry is the rank's outcome
        return _after_entry(entry, facts.rank, ended)
    return _after_entry(entry, facts.rank, None)


def run_test_in_entry(test: Any, method: str, pipe: Any) -> None:
    """``self.run_test(test_name, pipe)`` inside ``_run``: run the method between the rank
    hooks, record how it ended, and after a failure or a skip leave the entry by
    ``SystemExit``, as upstream's rank does."""
    if not isinstance(pipe, _Entry):
        raise TypeError(f"run_test({method!r}, {pipe!r}): call it from the rank entry _run, "
                        "with the pipe _run was given")
    try:
        pipe.body(test, method, pipe.seed)
    except BaseException as error:  # the test's own ending, recorded as the rank's outcome
        pipe.outcome = outcome_of(pipe.facts.rank, error)
        sys.exit(1)
    pipe.outcome = RankOutcome(pipe.facts.rank, Status.PASSED)
