"""A rank's ledger around one test: what every way of running ranks calls.

``begin_test`` before the test's body (its faults armed, its lockstep wish read from the test
function and its class, its ledger's files in the test's directory for a rank process), and
``end_test`` after it: the outcome gains the ledger, and a passing rank whose fault never
fired fails. The test process reads the ledger files of a rank that never reported
(:func:`attach_ledger_files`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from typing import Any

from ..reporting.status import Status
from ..worlds.outcomes import RankOutcome
from ..worlds.rank_facts import RankFacts
from . import recording
from .collective_ledger import ledger_files, ledger_path, read_ledger_file
from .faults import ArmedFault, armed_faults, in_lockstep

__all__ = ["begin_test", "end_test", "attach_ledger_files", "remove_ledger_files"]

__unittest = True


def begin_test(facts: RankFacts, test: Any, owner: Any = None, thread: bool = False) -> list[ArmedFault]:
    """Start recording the test ``test`` (its function; ``owner`` its class) on the rank
    ``facts`` describes; the faults armed for this rank."""
    faults = armed_faults(facts.rank, test, in_thread=thread)
    path = ledger_path(facts.test_dir, facts.rank) if facts.test_dir and not thread else None
    recording.begin(facts.rank, path, in_lockstep(test, owner), faults, thread=thread)
    return faults


def end_test(outcome: RankOutcome, faults: Iterable[ArmedFault], thread: bool = False) -> RankOutcome:
    """Stop recording; ``outcome`` with the ledger, failed if it passed but a fault of this
    rank never fired."""
    ledger = recording.end(thread=thread)
    unfired = [message for fault in faults for message in [fault.never_fired()] if message]
    if unfired and outcome.status is Status.PASSED:
        outcome = dataclasses.replace(outcome, status=Status.FAILED, detail="\n".join(unfired))
    return dataclasses.replace(outcome, ledger=ledger)


def attach_ledger_files(outcomes: Iterable[RankOutcome], test_dir: str) -> None:
    """Give each outcome without a ledger (its rank died or was stopped) the ledger its rank
    wrote to the test's directory, if any."""
    for outcome in outcomes:
        if outcome.ledger is None:
            outcome.ledger = read_ledger_file(ledger_path(test_dir, outcome.rank))


def remove_ledger_files(test_dir: str, ranks: Iterable[int]) -> None:
    """Remove the ranks' ledger files (a kept world, before its next test)."""
    for rank in ranks:
        for path in ledger_files(ledger_path(test_dir, rank)):
            try:
                os.remove(path)
            except OSError:
                pass
