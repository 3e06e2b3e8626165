"""A rank's collective ledger: every collective and point-to-point call its test made, in order.

Each :class:`Call` says which call of its group it was (``seq``, from 1), the op, the group
(its name and ranks), what this rank contributed (shapes and dtypes), what else decides the
result (the reduce op, the root, whether it was asynchronous), where in the user's code the
call was made, and whether it is compared across ranks (point-to-point calls and calls an
injected fault stopped are not). ``torch_testing_ext.collectives`` records the calls;
``ledger.ledger_report`` compares the ranks' ledgers. Torch-free.

A rank also keeps its ledger on disk as it grows (:class:`LedgerLog`), so that the ledger of
a rank that hangs or dies can still be read (:func:`read_ledger_file`). Calls repeat (a loop
makes the same call at the same line), so the log holds each distinct call once, as a JSON
line in ``<path>.entries``, and each call as one 32-bit word, the number of its entry, in a
memory-mapped ``<path>.calls``: recording a call that was made before costs no system call,
and what a killed rank wrote is in the file.
"""

from __future__ import annotations

import array
import dataclasses
import json
import mmap
import os
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["Call", "Ledger", "LedgerLog", "read_ledger_file", "ledger_path", "ledger_files", "LEDGER_FILE",
           "UNEVEN_OPS"]

LEDGER_FILE = "collectives-rank{rank}"  # in the test's directory, with ledger_files' suffixes
UNEVEN_OPS = frozenset({"all_to_all", "all_to_all_single"})  # ranks may contribute different shapes


@dataclasses.dataclass(slots=True)
class Call:
    """One collective or point-to-point call of a rank."""

    seq: int  # the call's number within its group, from 1
    op: str  # "all_reduce", "barrier", "send"...
    group: str  # the group's name
    ranks: tuple[int, ...]  # the group's ranks (global)
    tensors: str  # what this rank contributed: "float32[4]", "float32[2, 3], int64[1]", or ""
    site: str  # "file.py:12": the first frame of the user's code
    compared: bool = True  # False: point-to-point, or stopped by an injected fault
    note: str = ""  # "functional", "fault: raise"...
    reduce_op: str = ""  # "SUM", "MAX"... for the ops that reduce
    root: str = ""  # "src=0", "dst=1", "group_src=0"... for the ops that have one
    async_op: bool = False  # called with async_op=True

    def describe(self) -> str:
        """``all_reduce float32[4] MAX async at test_x.py:12``."""
        what = " ".join(filter(None, [self.op, self.tensors, self.reduce_op, self.root,
                                      "async" if self.async_op else ""]))
        note = f" ({self.note})" if self.note else ""
        return f"{what}{note} at {self.site}"

    def signature(self) -> tuple[object, ...]:
        """What must agree across the group's ranks: the op, what each rank contributed (for
        an all-to-all, whose ranks may send different sizes, the dtypes only), the reduce op,
        the root and whether the call was asynchronous."""
        tensors = re.sub(r"\[[^\]]*\]", "", self.tensors) if self.op in UNEVEN_OPS else self.tensors
        return self.op, tensors, self.reduce_op, self.root, self.async_op

    def entry(self) -> list[object]:
        """The call without its number, as a JSON-able row (:meth:`from_entry` reads it)."""
        return [self.op, self.group, list(self.ranks), self.tensors, self.site, self.compared, self.note,
                self.reduce_op, self.root, self.async_op]

    @classmethod
    def from_entry(cls, seq: int, row: Sequence[Any]) -> Call:
        op, group, ranks, tensors, site, compared, note, reduce_op, root, async_op = row
        return cls(seq, str(op), str(group), tuple(ranks), str(tensors), str(site), bool(compared), str(note),
                   str(reduce_op), str(root), bool(async_op))


def number_calls(entries: Sequence[Call], order: Sequence[int]) -> list[Call]:
    """The calls made, in ``order`` (indexes into ``entries``, the distinct calls), each
    numbered within its group."""
    seq: dict[str, int] = {}
    calls = []
    for index in order:
        entry = entries[index]
        number = seq[entry.group] = seq.get(entry.group, 0) + 1
        calls.append(dataclasses.replace(entry, seq=number))
    return calls


@dataclasses.dataclass
class Ledger:
    """A rank's calls in the order made; ``lockstep`` False when its test opted out."""

    rank: int
    calls: list[Call] = dataclasses.field(default_factory=list)
    lockstep: bool = True

    def to_data(self) -> dict[str, object]:
        """The ledger as JSON-able data (:meth:`from_data` reads it)."""
        return {"rank": self.rank, "lockstep": self.lockstep, "calls": [[c.seq, *c.entry()] for c in self.calls]}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Ledger:
        calls = [Call.from_entry(int(row[0]), row[1:]) for row in data["calls"]]
        return cls(int(data["rank"]), calls, bool(data["lockstep"]))

    def by_group(self) -> dict[str, list[Call]]:
        """The rank's compared calls of each group, in order."""
        groups: dict[str, list[Call]] = {}
        for call in self.calls:
            if call.compared:
                groups.setdefault(call.group, []).append(call)
        return groups


def ledger_path(test_dir: str, rank: int) -> str:
    """Where rank ``rank`` keeps its ledger in the test's directory (the files'
    common stem, see :func:`ledger_files`)."""
    return os.path.join(test_dir, LEDGER_FILE.format(rank=rank))


def ledger_files(path: str) -> tuple[str, str]:
    """The two files of the ledger at ``path``: its distinct calls and the order of its calls."""
    return f"{path}.entries", f"{path}.calls"


_WORD = 4  # bytes of one call in the .calls file
_FIRST_WORDS = 16384  # calls the .calls file holds before it grows (it doubles)


class LedgerLog:
    """A rank's ledger on disk as it grows: a first line with the rank and whether it is
    compared, then one JSON line per distinct call (written once, with one system call), and
    each call as its entry's number plus one in the memory-mapped calls file (0: no call yet).
    """

    def __init__(self, path: str, rank: int, lockstep: bool) -> None:
        entries, calls = ledger_files(path)
        self._entries: int | None = os.open(entries, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(self._entries, (json.dumps({"rank": rank, "lockstep": lockstep}) + "\n").encode())
        self._calls = os.open(calls, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        self._made = 0
        self._capacity = 0
        self._map: mmap.mmap | None = None
        self._words: memoryview | None = None
        self._grow(_FIRST_WORDS)

    def _grow(self, words: int) -> None:
        self._release_map()
        os.ftruncate(self._calls, words * _WORD)
        self._map = mmap.mmap(self._calls, words * _WORD)
        self._words = memoryview(self._map).cast("I")
        self._capacity = words

    def _release_map(self) -> None:
        if self._words is not None:
            self._words.release()
            self._words = None
        if self._map is not None:
            self._map.close()
            self._map = None

    def add_entry(self, call: Call) -> None:
        """Write a distinct call (before the first call that uses it)."""
        if self._entries is not None:
            os.write(self._entries, (json.dumps(call.entry()) + "\n").encode())

    def add_call(self, index: int) -> None:
        """Write that the next call made is the entry ``index``."""
        if self._words is None:
            return
        if self._made == self._capacity:
            self._grow(self._capacity * 2)
            assert self._words is not None
        self._words[self._made] = index + 1
        self._made += 1

    def close(self) -> None:
        self._release_map()
        if self._entries is not None:
            os.close(self._entries)
            os.close(self._calls)
            self._entries = None


def read_ledger_file(path: str) -> Ledger | None:
    """The ledger a rank kept at ``path`` (it may have been killed at any point: the last
    entry may be cut off, the last calls may name no entry yet), or None if there is none."""
    entries_path, calls_path = ledger_files(path)
    try:
        with open(entries_path) as file:
            lines = file.read().splitlines()
        with open(calls_path, "rb") as file:
            words = array.array("I", file.read()[: os.path.getsize(calls_path) // _WORD * _WORD])
    except OSError:
        return None
    if not lines:
        return None
    try:
        head = json.loads(lines[0])
    except ValueError:
        return None
    entries = []
    for line in lines[1:]:
        try:
            entries.append(Call.from_entry(0, json.loads(line)))
        except ValueError:  # the line being written when the rank was killed
            break
    order = []
    for word in words:
        if word == 0 or word > len(entries):
            break
        order.append(word - 1)
    return Ledger(int(head["rank"]), number_calls(entries, order), bool(head["lockstep"]))
