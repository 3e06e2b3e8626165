"""The contract between a multi-process test and its ranks: what a rank is told, and the
hooks it calls on the test.

A rank is told two things. :class:`RankTask` names the test method every rank of a test runs
(with the seed, and the test process's environment, which the rank adopts as a spawned
process would inherit it); :class:`RankFacts` is what one rank knows about itself. Inside a rank process
the facts are available from :func:`current_rank_facts` (None in the test's own process); that
is the only way they travel: the test cases' ``rank``, ``device``, ``backend`` and
``file_name`` read them, and so does the rendezvous helper. A process started by a launcher
(``torchrun``) runs each test as its launched rank: it enters that rank's facts for the test
and leaves them afterwards (:func:`leave_rank`). A rank *thread* enters its facts for itself
only (:func:`enter_thread_rank`; its ``test_dir`` is empty): in that thread they come first.
What only a rank *process* does (retiring its groups until it exits, sharing the test's
directory) asks :func:`rank_process_facts`.

A rank instantiates the test class for the method, then calls the hooks of
:class:`RankHooks` around the method (not ``setUp``/``tearDown``, which run in the test's own
process, as upstream)::

    test = TestCls("test_x")
    test.setUpRank()
    try:
        test.test_x()
    finally:
        test.tearDownRank()
"""

from __future__ import annotations

import dataclasses
import os
import threading
from typing import Protocol

__all__ = ["RankTask", "RankFacts", "RankHooks", "current_rank_facts", "rank_process_facts", "enter_rank", "leave_rank",
           "enter_thread_rank", "leave_thread_rank", "rank_device_index", "STORE_FILE", "RANK_ENV"]

STORE_FILE = "store"  # the FileStore path of a test, inside its directory
# Set in each rank's environment, so the processes it starts carry their rank.
RANK_ENV = "TORCH_TESTING_EXT_RANK"


@dataclasses.dataclass(frozen=True)
class RankTask:
    """The test method that every rank of one test runs."""

    module: str
    qualname: str
    method: str
    seed: int
    environ: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class RankFacts:
    """What a rank knows about itself. ``test_dir`` is the test's private directory, shared
    by its ranks and removed after the test; the store file and rank logs live there.

    ``rendezvous_base`` is where the test's ranks meet for a process group: empty for files
    in ``test_dir``; under a launcher, a URL of the launcher's store (see
    ``process_groups.rendezvous``).
    """

    rank: int
    world_size: int
    device: str
    backend: str
    test_dir: str
    rendezvous_base: str = ""

    @property
    def launched(self) -> bool:
        """True when a launcher started this rank (its groups meet in the launcher's store)."""
        return bool(self.rendezvous_base)

    @property
    def file_name(self) -> str:
        """The test's ``FileStore`` path (the same for every rank)."""
        return os.path.join(self.test_dir, STORE_FILE)

    @property
    def log_path(self) -> str:
        """Where this rank's stdout and stderr go."""
        return os.path.join(self.test_dir, f"rank-{self.rank}.log")


class RankHooks(Protocol):
    """What a rank calls on the test instance around the test method."""

    def setUpRank(self) -> None:
        """Runs in each rank before the test method."""

    def tearDownRank(self) -> None:
        """Runs in each rank after the test method, whatever its outcome."""


_current: RankFacts | None = None
_thread = threading.local()  # .facts: the facts of a rank thread, in that thread


def current_rank_facts() -> RankFacts | None:
    """The facts of the rank the calling thread runs as (a rank thread's own, else this
    process's), or None in a test's own process."""
    return getattr(_thread, "facts", None) or _current


def rank_process_facts() -> RankFacts | None:
    """The facts of the rank this *process* runs as (not a rank thread's), or None."""
    return _current


def enter_rank(facts: RankFacts) -> None:
    """Make this process the rank ``facts`` describes (as a rank process starts, or, under a
    launcher, as a test starts)."""
    global _current
    _current = facts
    os.environ[RANK_ENV] = str(facts.rank)


def leave_rank() -> None:
    """Make this process a test's own process again (under a launcher, as a test ends)."""
    global _current
    _current = None
    os.environ.pop(RANK_ENV, None)


def enter_thread_rank(facts: RankFacts) -> None:
    """Make the calling thread the rank ``facts`` describes (a rank thread, as it starts); the
    process and its other threads are not affected."""
    _thread.facts = facts


def leave_thread_rank() -> None:
    """Make the calling thread a plain thread again (a rank thread, as it ends)."""
    _thread.facts = None


def rank_device_index(rank: int) -> int:
    """The accelerator index that ``rank`` uses: in a process running as that rank, the index
    of its device (under a launcher, its local rank); otherwise ``rank`` itself."""
    facts = current_rank_facts()
    if facts is not None and facts.rank == rank and ":" in facts.device:
        return int(facts.device.rsplit(":", 1)[1])
    return rank
