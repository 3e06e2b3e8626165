"""What runs inside a kept rank: the class's process group once, then one test after another.

The rank starts as a per-test rank does (its own process group leader, output to a log file,
stacks on SIGUSR1, gone when the test process goes). It makes the world with the class's
``_init_pg`` (upstream's hook: a ``FileStore`` on the world's rendezvous file and
``init_process_group``), takes a :class:`RankState`, and then answers each :class:`RankTask`
it receives with a :class:`RankOutcome`: the test's own outcome, or a failure naming what the
test left behind. ``None`` (or the test process closing the connection) ends the rank.

A world that could not be made answers every task with why (a skip when ``_init_pg`` skipped,
for example on too few devices), so that each test of the class reports it.
"""

from __future__ import annotations

import dataclasses
from multiprocessing.connection import Connection

from ..fresh.rank_process import become_rank, flush_output, leave_rank_process, resolve_class, run_test_method
from ..reporting.status import Status
from ..worlds.outcomes import RankOutcome, outcome_of
from ..worlds.rank_facts import RankFacts
from .leak_check import RankState, find_leaks
from .mesh_groups import release_mesh_groups

__all__ = ["WorldTask", "serve_rank", "checked_for_leaks"]

__unittest = True


@dataclasses.dataclass(frozen=True)
class WorldTask:
    """The class whose tests a world runs."""

    module: str
    qualname: str
    environ: dict[str, str]  # the test process's, when the world starts


def _make_world(cls: type, facts: RankFacts) -> RankOutcome | None:
    """Run the class's ``_init_pg``; None if the world is ready, else the outcome every test
    gets instead."""
    cls.rank = facts.rank  # type: ignore[attr-defined]  # upstream's class attributes
    cls.world_size = facts.world_size  # type: ignore[attr-defined]  # upstream's class attributes
    try:
        cls._init_pg(facts.rank, facts.world_size, facts.file_name)  # type: ignore[attr-defined]  # the class's hook
    except BaseException as error:  # the world could not be made: every test says why
        outcome = outcome_of(facts.rank, error)
        if outcome.status is not Status.SKIPPED:
            outcome.detail = f"making the class's process group failed:\n{outcome.detail}"
        return outcome
    return None


def checked_for_leaks(outcome: RankOutcome, before: RankState) -> RankOutcome:
    """``outcome``, failed (or with a note) if the test left state behind since ``before``;
    after a test that passed or skipped, the groups its device meshes made are destroyed first
    (a failure closes the world anyway)."""
    if outcome.status in (Status.PASSED, Status.SKIPPED):
        release_mesh_groups(before.groups)
    leaks = find_leaks(before)
    if not leaks:
        return outcome
    note = "the test left state behind for the class's next test: it " + "; it ".join(leaks)
    if outcome.status in (Status.PASSED, Status.SKIPPED):
        return dataclasses.replace(outcome, status=Status.FAILED, detail=note)
    return dataclasses.replace(outcome, detail=f"{outcome.detail}\n{note}")


def serve_rank(world: WorldTask, facts: RankFacts, connection: Connection, lifeline: Connection) -> None:
    """Entry point of a kept rank: make the world, then run each task received on
    ``connection`` and send back its outcome, until ``None`` or end-of-file."""
    log = become_rank(facts, world.environ, lifeline)
    cls = resolve_class(world.module, world.qualname)
    refusal = _make_world(cls, facts)
    before = RankState.take(facts.device)
    while True:
        try:
            task = connection.recv()
        except (EOFError, OSError):
            break
        if task is None:
            break
        outcome = refusal or checked_for_leaks(run_test_method(task, facts), before)
        flush_output()
        connection.send(outcome)
    leave_rank_process(connection, log)
