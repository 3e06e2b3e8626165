"""``compare(name, value)`` in a rank: each call becomes a :class:`Record` in this rank's file.

The first call of a name is its step 0, the next its step 1, and so on; each record also keeps
its place in the rank's execution order (``seq``) and the line of the call. Records go to a
file of the rank's own in the world's directory, one pickle per call, written as the call
returns: they never travel through the test's process groups, so a comparison cannot hang, nor
add a collective call to the test's (the collective ledger sees only the test's own), and what
a rank recorded before it failed or hung is still there. :func:`read_records` reads a world's
files in the test process.
"""

from __future__ import annotations

import copyreg
import dataclasses
import os
import pickle
import weakref
from typing import IO, Any

from .._torch_private import caller_frame
from .values import PACKED_TENSORS, to_payload

__all__ = ["Record", "Recorder", "RECORDS_DIR_ENV", "records_file", "records_directory", "read_records"]

__unittest = True  # a compare() that raises shows the test's line, not ours


@dataclasses.dataclass(frozen=True)
class Record:
    """One ``compare`` call on one rank: its place in the rank's calls, the name and its step,
    whether it compares rank by rank, the call's ``file:line``, and the value as plain data."""

    seq: int
    name: str
    step: int
    per_rank: bool
    line: str
    payload: Any


#: Set in a rank's environment while it runs a test across worlds: where its records go.
RECORDS_DIR_ENV = "TORCH_TESTING_EXT_COMPARED_DIR"


def records_directory(what: str) -> str:
    """Where this rank's records go; ``RuntimeError`` naming ``what`` (``the compare fixture``)
    outside a test run across worlds."""
    directory = os.environ.get(RECORDS_DIR_ENV)
    if not directory:
        raise RuntimeError(f"{what} records values of a test run across worlds (@pytest.mark.worlds(...) or "
                           "across_worlds(...)); this test is not")
    return directory


def records_file(directory: str, rank: int) -> str:
    """Where rank ``rank`` of a world writes its records."""
    return os.path.join(directory, f"compared-rank{rank}.pickle")


class Recorder:
    """What ``compare`` is in one rank of one test: ``compare(name, value, per_rank=False)``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._steps: dict[str, int] = {}
        self._per_rank: dict[str, bool] = {}
        self._seq = 0
        self._pickler: pickle.Pickler | None = None  # on the open file; each record flushed
        self._file: IO[bytes] | None = None

    def _write(self, record: Record) -> None:
        if self._pickler is None:
            file = open(self.path, "ab")  # noqa: SIM115  # closed when the recorder goes
            weakref.finalize(self, file.close)
            self._pickler = pickle.Pickler(file, protocol=pickle.HIGHEST_PROTOCOL)
            self._pickler.dispatch_table = {**copyreg.dispatch_table, **PACKED_TENSORS}
            self._file = file
        self._pickler.clear_memo()  # each record loads on its own
        self._pickler.dump(record)
        assert self._file is not None
        self._file.flush()  # in the kernel's hands: a rank that dies after the call keeps it

    def __repr__(self) -> str:
        return "<compare(name, value, per_rank=False)>"

    def __call__(self, name: str, value: Any, per_rank: bool = False) -> None:
        """Record ``value`` as the next step of ``name`` (see :meth:`record`)."""
        __tracebackhide__ = True  # pytest shows the test's call, not ours
        self.record(name, value, per_rank, depth=2)

    def record(self, name: str, value: Any, per_rank: bool = False, *, depth: int = 1) -> None:
        """Record ``value`` as the next step of ``name``: tensors (DTensors as their full
        tensor), numbers and strings, and lists, tuples and dicts of them. Within a world every
        rank must record the same value; across worlds it must match the reference world's.
        With ``per_rank=True`` rank r of each world is compared with rank r of the reference
        world (where it has one) instead. ``depth``: how many calls up the user's call is (its
        line is kept)."""
        __tracebackhide__ = True
        if not isinstance(name, str) or not name:
            raise TypeError(f"compare(name, value): name must be a non-empty string, got {name!r}")
        if not isinstance(per_rank, bool):
            raise TypeError(f"compare({name!r}, value, per_rank={per_rank!r}): expected True or False")
        if self._per_rank.setdefault(name, per_rank) != per_rank:
            raise ValueError(f"compare({name!r}, ..., per_rank={per_rank}): earlier steps of {name!r} were "
                             f"recorded with per_rank={not per_rank}; a name keeps one way of comparing")
        try:
            payload = to_payload(value)
        except TypeError as error:
            raise TypeError(f"compare({name!r}, value): {error}") from None
        frame = caller_frame(depth)
        line = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
        step = self._steps.get(name, 0)
        record = Record(self._seq, name, step, per_rank, line, payload)
        self._write(record)
        self._steps[name] = step + 1
        self._seq += 1


def read_records(directory: str, world_size: int) -> dict[int, list[Record]]:
    """Every rank's records in ``directory``, by rank, in the order each rank made them (a rank
    that recorded nothing has an empty list; a record cut short by a crash is left out)."""
    records: dict[int, list[Record]] = {}
    for rank in range(world_size):
        records[rank] = []
        try:
            file = open(records_file(directory, rank), "rb")
        except FileNotFoundError:
            continue
        with file:
            while True:
                try:
                    records[rank].append(pickle.load(file))
                except EOFError:
                    break
                except (pickle.UnpicklingError, ValueError, AttributeError, ImportError, IndexError):
                    break  # the last record, cut short as its rank died
    return records
