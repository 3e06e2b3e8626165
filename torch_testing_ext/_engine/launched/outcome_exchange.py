"""What the ranks of one launched test tell each other through the launcher's store.

Each test has keys of its own (``<test id>/run-<n>``, the n-th run of that test in this
process: every rank runs the same tests in the same order). Rank 0 publishes the test's
directory; each rank publishes its :class:`RankOutcome` when its test ends and reads the
others'; each rank says when it is done with the test (its groups destroyed), so that rank 0
removes the directory only once nobody uses it. Waits poll with short sleeps, so a signal
(the launcher's SIGTERM) is handled while waiting, and each wait ends at a deadline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable

import torch.distributed as dist

from ..ledger.collective_ledger import Ledger
from ..reporting.status import Status
from ..worlds.outcomes import RankOutcome

__all__ = ["OutcomeExchange", "encode_outcome", "decode_outcome", "POLL_MAX"]

__unittest = True

POLL_MAX = 0.05  # seconds between two looks at the store, at most


def encode_outcome(outcome: RankOutcome) -> str:
    """``outcome`` as JSON text (the store may link machines with different Pythons)."""
    return json.dumps({"rank": outcome.rank, "status": outcome.status.value,
                       "detail": outcome.detail, "output_tail": outcome.output_tail,
                       "ledger": None if outcome.ledger is None else outcome.ledger.to_data()})


def decode_outcome(text: str | bytes) -> RankOutcome:
    """The :class:`RankOutcome` that :func:`encode_outcome` wrote."""
    data = json.loads(text)
    ledger = data.get("ledger")
    return RankOutcome(int(data["rank"]), Status(data["status"]), data["detail"], data["output_tail"],
                       None if ledger is None else Ledger.from_data(ledger))


def _poll(ready: Callable[[], bool], deadline: float) -> bool:
    """Look until ``ready()`` (True) or the deadline passes (False), in growing pauses."""
    pause = 0.001
    while not ready():
        if time.monotonic() >= deadline:
            return False
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, POLL_MAX)
    return True


class OutcomeExchange:
    """The keys of one run of one test in the launcher's ``store``."""

    def __init__(self, store: dist.Store, test_key: str) -> None:
        self.store = store
        self.test_key = test_key

    def _key(self, name: str) -> str:
        return f"{self.test_key}/{name}"

    # -- the test's directory (rank 0 makes it) ----------------------------------------------

    def publish_test_dir(self, path: str) -> None:
        self.store.set(self._key("test-dir"), path)

    def wait_for_test_dir(self, deadline: float) -> str | None:
        """The directory rank 0 published, or None if it did not by the deadline."""
        key = self._key("test-dir")
        if not _poll(lambda: self.store.check([key]), deadline):
            return None
        return self.store.get(key).decode()

    # -- outcomes ----------------------------------------------------------------------------

    def publish(self, outcome: RankOutcome) -> None:
        self.store.set(self._key(f"outcome/{outcome.rank}"), encode_outcome(outcome))

    def published(self, ranks: Iterable[int]) -> list[RankOutcome]:
        """The outcomes of ``ranks`` published so far (no waiting)."""
        keys = {rank: self._key(f"outcome/{rank}") for rank in ranks}
        return [decode_outcome(self.store.get(key)) for rank, key in keys.items() if self.store.check([key])]

    def collect(self, ranks: Iterable[int], deadline: float,
                waited: float) -> tuple[list[RankOutcome], list[int]]:
        """The outcome of every rank of ``ranks``, waiting for them until ``deadline``, and the
        ranks that did not report by then: they are *timed out* (``waited``: the seconds they
        had)."""
        ranks = list(ranks)
        keys = [self._key(f"outcome/{rank}") for rank in ranks]
        if _poll(lambda: self.store.check(keys), deadline):  # one look for all of them
            reported = {o.rank: o for o in map(decode_outcome, self.store.multi_get(keys))}
        else:
            reported = {outcome.rank: outcome for outcome in self.published(ranks)}
        absent = [rank for rank in ranks if rank not in reported]
        for rank in absent:
            reported[rank] = RankOutcome(
                rank, Status.TIMED_OUT,
                f"rank {rank} did not report an outcome within {waited:g} s (still running, or gone)")
        return [reported[rank] for rank in ranks], absent

    # -- the end of the test -----------------------------------------------------------------

    def mark_done(self) -> None:
        """Say that this rank no longer uses the test's directory or groups."""
        self.store.add(self._key("done"), 1)

    def wait_until_done(self, count: int, deadline: float) -> bool:
        """Wait until ``count`` ranks are done, or the deadline passes (False then)."""
        return _poll(lambda: self.store.add(self._key("done"), 0) >= count, deadline)
