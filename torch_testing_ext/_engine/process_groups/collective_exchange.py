"""Where the rank threads' collective calls meet: matching, completion, point-to-point, abort.

A rank's k-th collective on a group meets every other member's k-th collective on it (as with
real backends, whatever order the threads run in). Each call leaves its tensors at the
meeting and returns a :class:`ThreadedWork` at once; the last rank to arrive does the data
movement for all of them and wakes the others, so ``async_op=True`` is really asynchronous and
``wait()`` blocks until every member has called. Calls that do not match (``all_reduce`` on one
rank, ``broadcast`` on another; different roots or reduce ops) fail on every rank, naming both.

``send`` is buffered (it completes at once with a copy); ``recv`` completes when a matching send
arrives. :meth:`Exchange.abort` tears the meeting point down: every thread waiting in a
collective, and every later call, raises :class:`CollectiveAborted`, so no rank thread stays
stuck in a collective after its test.
"""

from __future__ import annotations

import collections
import datetime
import itertools
import threading
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
from torch.futures import Future

from .._torch_private import answer_source_rank

__all__ = ["CollectiveAborted", "Exchange", "ThreadedWork"]

__unittest = True

GroupKey = tuple[str, int]  # the group's name, and which group of that name (names are reused)


class CollectiveAborted(BaseException):
    """The threaded world was torn down while this rank waited in (or called) a collective.

    A ``BaseException``, so that a test's ``except Exception`` does not swallow it and the rank
    thread ends.
    """


class Meeting:
    """One collective (or one receive) of one group, from its first caller until it completes."""

    def __init__(self, kind: str, group: str, size: int) -> None:
        self.kind = kind
        self.group = group
        self.size = size
        self.contributions: dict[int, Any] = {}
        self.done = False
        self.error: BaseException | None = None
        self.source_rank = -1  # a receive: who sent
        self.futures: list[tuple[Future, Any]] = []

    def fail(self, error: BaseException) -> None:
        self.error = error
        self.done = True

    def failure(self) -> RuntimeError:
        """A fresh exception for the calling thread (one exception object per thread)."""
        error = RuntimeError(f"{self.kind} on group {self.group!r} failed: "
                             f"{type(self.error).__name__}: {self.error}")
        error.__cause__ = self.error
        return error


class Exchange:
    """The meeting point of one threaded world: every group's collectives and messages."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._meetings: dict[tuple[GroupKey, int], Meeting] = {}
        self._sequence: dict[tuple[GroupKey, int], itertools.count] = {}
        self._incarnations: collections.Counter[tuple[str, int]] = collections.Counter()
        self._messages: dict[tuple[GroupKey, int, int, int], collections.deque] = collections.defaultdict(
            collections.deque)
        self._receives: dict[tuple[GroupKey, int | None, int, int], collections.deque] = \
            collections.defaultdict(collections.deque)
        self.aborted: str | None = None

    # -- groups --------------------------------------------------------------------------------

    def group_key(self, name: str, creator: int) -> GroupKey:
        """The key of the group named ``name`` as the rank ``creator`` creates it now: the n-th
        group of that name a rank creates is the n-th of every other member."""
        with self._changed:
            self._incarnations[name, creator] += 1
            return name, self._incarnations[name, creator]

    # -- collectives ---------------------------------------------------------------------------

    def join(self, group: GroupKey, size: int, rank: int, kind: str, contribution: Any,
             complete: Callable[[dict[int, Any]], None], result: Any) -> ThreadedWork:
        """Leave ``rank``'s part of its next collective on ``group``; the last member to arrive
        runs ``complete(contributions)``. ``result`` is what the rank's future will hold."""
        with self._changed:
            self._check_alive(kind)
            sequence = self._sequence.setdefault((group, rank), itertools.count())
            key = (group, next(sequence))
            meeting = self._meetings.setdefault(key, Meeting(kind, group[0], size))
            if meeting.kind != kind and not meeting.done:
                first = min(meeting.contributions)
                meeting.fail(ValueError(f"the ranks called different collectives: rank {first} "
                                        f"called {meeting.kind}, rank {rank} called {kind}"))
            meeting.contributions[rank] = contribution
            if len(meeting.contributions) == size:
                del self._meetings[key]
                if not meeting.done:
                    self._complete(meeting, lambda: complete(meeting.contributions))
            work = ThreadedWork(self, meeting, result)
            self._changed.notify_all()
            return work

    def _complete(self, meeting: Meeting, action: Callable[[], None]) -> None:
        try:
            action()
        except Exception as error:  # the data movement failed: every member's wait() raises it
            meeting.fail(error)
        meeting.done = True
        for future, value in meeting.futures:
            _settle(future, meeting, value)
        meeting.futures.clear()
        self._changed.notify_all()

    # -- point to point ------------------------------------------------------------------------

    def send(self, group: GroupKey, source: int, destination: int, tag: int,
             tensor: torch.Tensor) -> ThreadedWork:
        """Deliver a copy of ``tensor`` to a waiting receive, or keep it until one is posted."""
        with self._changed:
            self._check_alive("send")
            copy = tensor.detach().clone()
            meeting = Meeting("send", group[0], 2)
            for waiting_key in ((group, source, destination, tag), (group, None, destination, tag)):
                if self._receives[waiting_key]:
                    self._deliver(self._receives[waiting_key].popleft(), source, copy)
                    break
            else:
                self._messages[group, source, destination, tag].append(copy)
            meeting.done = True
            return ThreadedWork(self, meeting, [tensor])

    def recv(self, group: GroupKey, source: int | None, destination: int, tag: int,
             tensor: torch.Tensor) -> ThreadedWork:
        """Receive into ``tensor`` from ``source`` (None: from any rank) when a message is there."""
        with self._changed:
            self._check_alive("recv")
            meeting = Meeting("recv", group[0], 2)
            meeting.contributions[destination] = tensor
            sources = [source] if source is not None else sorted(
                s for (g, s, d, t), queue in self._messages.items()
                if g == group and d == destination and t == tag and queue)
            for candidate in sources:
                queue = self._messages.get((group, candidate, destination, tag))
                if queue:
                    self._deliver(meeting, candidate, queue.popleft())
                    break
            else:
                self._receives[group, source, destination, tag].append(meeting)
            return ThreadedWork(self, meeting, [tensor])

    def _deliver(self, meeting: Meeting, source: int, message: torch.Tensor) -> None:
        (tensor,) = meeting.contributions.values()
        meeting.source_rank = source

        def copy() -> None:
            if tensor.shape != message.shape:
                raise ValueError(f"received a tensor of shape {tuple(message.shape)} into one of "
                                 f"shape {tuple(tensor.shape)}")
            with torch.no_grad():
                tensor.detach().copy_(message)

        self._complete(meeting, copy)

    # -- waiting and tearing down --------------------------------------------------------------

    def _check_alive(self, kind: str) -> None:
        if self.aborted is not None:
            raise CollectiveAborted(f"{kind} called after the threaded world was torn down "
                                    f"({self.aborted})")

    def wait(self, meeting: Meeting, timeout: float | None) -> None:
        """Block until ``meeting`` completes; raise its failure, or CollectiveAborted."""
        with self._changed:
            finished = self._changed.wait_for(lambda: meeting.done or self.aborted is not None,
                                              timeout)
            if meeting.error is not None:
                raise meeting.failure()
            if meeting.done:
                return
            if not finished:
                raise RuntimeError(f"{meeting.kind} on group {meeting.group!r} did not complete "
                                   f"within {timeout:g} s")
            raise CollectiveAborted(f"{meeting.kind} on group {meeting.group!r} was waiting for "
                                    f"ranks {self._missing(meeting)} when the threaded world was "
                                    f"torn down ({self.aborted})")

    @staticmethod
    def _missing(meeting: Meeting) -> list[int]:
        return sorted(set(range(meeting.size)) - set(meeting.contributions))

    def future(self, meeting: Meeting, value: Any) -> Future:
        with self._changed:
            future: Future = Future()
            if meeting.done:
                _settle(future, meeting, value)
            else:
                meeting.futures.append((future, value))
            return future

    def abort(self, reason: str) -> None:
        """Tear the meeting point down: wake every waiting rank with CollectiveAborted."""
        with self._changed:
            if self.aborted is None:
                self.aborted = reason
            self._changed.notify_all()


def _settle(future: Future, meeting: Meeting, value: Any) -> None:
    if meeting.error is not None:
        future.set_exception(meeting.failure())
    else:
        future.set_result(value)


@answer_source_rank
class ThreadedWork(dist.Work):
    """The handle of one rank's collective or message: ``wait()`` blocks until it completes."""

    def __init__(self, exchange: Exchange, meeting: Meeting, result: Any) -> None:
        super().__init__()
        self._exchange = exchange
        self._meeting = meeting
        self._result = result

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        self._exchange.wait(self._meeting, timeout.total_seconds() if timeout else None)
        return True

    def is_completed(self) -> bool:
        return self._meeting.done

    def is_success(self) -> bool:
        return self._meeting.done and self._meeting.error is None

    def exception(self) -> BaseException | None:
        return self._meeting.error

    def source_rank(self) -> int:
        return self._meeting.source_rank

    def result(self) -> Any:
        return self._result

    def get_future(self) -> Future:
        return self._exchange.future(self._meeting, self._result)

    def synchronize(self) -> None:
        """Nothing to synchronize: the data movement ran in the completing thread."""
