"""A rank's collective ledger: every collective and point-to-point call its test made, in order.

Each :class:`Call` says which call of its group it was (``seq``, from 1), the op, the group
(its name and ranks), what this rank contributed (shapes and dtypes), where in the user's code
the call was made, and whether it is compared across ranks (point-to-point calls and calls an
injected fault stopped are not). A rank writes its ledger line by line to a file as it goes
(:class:`LedgerFile`), so that the ledger of a rank that hangs or dies can still be read; a
rank that ends normally also sends it with its outcome. ``torch_testing_ext.collectives``
records the calls; ``ranks.ledger_report`` compares the ranks' ledgers. Torch-free.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["Call", "Ledger", "LedgerFile", "read_ledger_file", "ledger_path", "LEDGER_FILE", "UNEVEN_OPS"]

LEDGER_FILE = "collectives-rank{rank}.jsonl"  # in the test's directory
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

    def describe(self) -> str:
        """``all_reduce float32[4] at test_x.py:12``."""
        what = " ".join(filter(None, [self.op, self.tensors]))
        note = f" ({self.note})" if self.note else ""
        return f"{what}{note} at {self.site}"

    def signature(self) -> tuple[str, str]:
        """What must agree across the group's ranks: the op and what each rank contributed
        (for an all-to-all, whose ranks may send different sizes, the dtypes only)."""
        if self.op in UNEVEN_OPS:
            return self.op, re.sub(r"\[[^\]]*\]", "", self.tensors)
        return self.op, self.tensors

    def row(self) -> list[object]:
        """The call as a JSON-able row (``_call`` reads it back)."""
        return [self.seq, self.op, self.group, list(self.ranks), self.tensors, self.site, self.compared, self.note]


@dataclasses.dataclass
class Ledger:
    """A rank's calls in the order made; ``lockstep`` False when its test opted out."""

    rank: int
    calls: list[Call] = dataclasses.field(default_factory=list)
    lockstep: bool = True

    def to_data(self) -> dict[str, object]:
        """The ledger as JSON-able data (:meth:`from_data` reads it)."""
        return {"rank": self.rank, "lockstep": self.lockstep, "calls": [c.row() for c in self.calls]}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Ledger:
        return cls(int(data["rank"]), [_call(row) for row in data["calls"]], bool(data["lockstep"]))

    def by_group(self) -> dict[str, list[Call]]:
        """The rank's compared calls of each group, in order."""
        groups: dict[str, list[Call]] = {}
        for call in self.calls:
            if call.compared:
                groups.setdefault(call.group, []).append(call)
        return groups


def _call(row: Sequence[Any]) -> Call:
    seq, op, group, ranks, tensors, site, compared, note = row
    return Call(int(seq), str(op), str(group), tuple(ranks), str(tensors), str(site), bool(compared), str(note))


def ledger_path(test_dir: str, rank: int) -> str:
    """Where rank ``rank`` writes its ledger, in the test's directory."""
    return os.path.join(test_dir, LEDGER_FILE.format(rank=rank))


class LedgerFile:
    """A ledger written as it grows: a first line with the rank and whether it is compared,
    then one JSON line per call, each written at once (one ``write`` system call, no buffer a
    killed rank would lose)."""

    def __init__(self, path: str, rank: int, lockstep: bool) -> None:
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self._put({"rank": rank, "lockstep": lockstep})

    def _put(self, data: object) -> None:
        if self._fd is not None:
            os.write(self._fd, (json.dumps(data) + "\n").encode())

    def write(self, call: Call) -> None:
        self._put(call.row())

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_ledger_file(path: str) -> Ledger | None:
    """The ledger a rank wrote to ``path`` (its last line may be cut off), or None if there is
    no readable file."""
    try:
        with open(path) as file:
            lines = file.read().splitlines()
    except OSError:
        return None
    if not lines:
        return None
    try:
        head = json.loads(lines[0])
    except ValueError:
        return None
    ledger = Ledger(int(head["rank"]), lockstep=bool(head["lockstep"]))
    for line in lines[1:]:
        try:
            ledger.calls.append(_call(json.loads(line)))
        except ValueError:  # the line being written when the rank was killed
            break
    return ledger
