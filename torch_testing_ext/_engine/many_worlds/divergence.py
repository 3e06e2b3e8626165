"""Where the worlds' recorded values first part, and by how much each step differs.

The records of every world (by rank) are checked value by value in execution order: the
order of the ranks' ``compare`` calls (a record's ``seq``; a name's step k in one rank is
checked before the calls that came after it). For each value:

1. within each world, every rank that recorded the name recorded this step, and (unless the
   name is compared ``per_rank``) all of them recorded the same value;
2. each world's value matches the reference world's (rank r with rank r of the reference
   world, for a ``per_rank`` name, where the reference world has a rank r).

The first value that fails is the :class:`Divergence`; :func:`step_table` gives that name's
largest difference from the reference per step and world, so a drift that grows reads as one.
A world that did not finish (it failed or hung) is compared only on what it recorded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from .agreement import Difference, difference
from .value_records import Record
from .values import AssemblyError, assemble

__all__ = ["WorldRecords", "Divergence", "StepCell", "first_divergence", "step_table", "names_that_differ"]


@dataclasses.dataclass
class WorldRecords:
    """What one world's ranks recorded (by rank), and whether the world finished (passed or
    skipped on every rank): a world that did not is not blamed for what it did not record."""

    size: int
    records: dict[int, list[Record]]
    finished: bool = True

    def __post_init__(self) -> None:
        self._by_key: dict[tuple[str, int], dict[int, Record]] = {}
        self._steps: dict[str, dict[int, int]] = {}
        for rank, records in self.records.items():
            for record in records:
                self._by_key.setdefault((record.name, record.step), {})[rank] = record
                steps = self._steps.setdefault(record.name, {})
                steps[rank] = max(steps.get(rank, 0), record.step + 1)

    def at(self, name: str, step: int) -> dict[int, Record]:
        """The records of ``name``'s step ``step``, by rank."""
        return self._by_key.get((name, step), {})

    def steps(self, name: str) -> dict[int, int]:
        """How many steps of ``name`` each rank recorded (ranks that recorded none left out)."""
        return self._steps.get(name, {})

    def keys(self) -> set[tuple[str, int]]:
        """Every (name, step) some rank recorded."""
        return set(self._by_key)

    @property
    def empty(self) -> bool:
        """Whether no rank recorded anything."""
        return not self._by_key


@dataclasses.dataclass(frozen=True)
class Divergence:
    """The first value on which the worlds (or one world's ranks) part: the name, its step,
    the line of its ``compare`` call, the world it shows in, a one-line ``summary`` and the
    ``detail`` (both values, and what ``assert_close`` said)."""

    name: str
    step: int
    line: str
    world: int
    summary: str
    detail: str


@dataclasses.dataclass(frozen=True)
class StepCell:
    """One step of one world in :func:`step_table`: the largest absolute difference from the
    reference (None: it cannot be set against it), whether it is beyond the tolerances, and
    whether the world recorded the step at all."""

    largest: float | None
    beyond: bool
    recorded: bool = True


def _order(worlds: Sequence[WorldRecords]) -> list[tuple[str, int]]:
    """Every (name, step) recorded anywhere, in execution order (the earliest call of it on any
    rank of any world, the reference world's first)."""
    first: dict[tuple[str, int], tuple[int, int]] = {}
    for index, world in enumerate(worlds):
        for records in world.records.values():
            for record in records:
                key = (record.name, record.step)
                first[key] = min(first.get(key, (record.seq, index)), (record.seq, index))
    return sorted(first, key=lambda key: (*first[key], key))


def _values(world: WorldRecords, name: str, step: int) -> dict[int, Any]:
    records = world.at(name, step)
    return assemble({rank: record.payload for rank, record in sorted(records.items())})


def _two_values(label: str, reference_label: str, value: Any, reference: Any, found: Difference) -> str:
    from .agreement import show

    width = max(len(label), len(reference_label)) + 1
    lines = [f"  {reference_label + ':':<{width}} {show(reference)}", f"  {label + ':':<{width}} {show(value)}"]
    lines += [f"  {line}" if line else "" for line in found.message.splitlines()]
    return "\n".join(lines)


class _Checker:
    def __init__(self, worlds: Sequence[WorldRecords], rtol: float | None, atol: float | None) -> None:
        self.worlds = list(worlds)
        self.reference = self.worlds[0]
        self.rtol = rtol
        self.atol = atol

    def missing(self, world: WorldRecords, name: str, step: int, line: str) -> Divergence | None:
        """A rank that records ``name`` but not this step, in a world that finished; or the
        reference's step missing from a world that finished."""
        if not world.finished:
            return None
        records = world.at(name, step)
        steps = world.steps(name)
        short = [rank for rank in sorted(steps) if rank not in records]
        if records and short:
            counts = ", ".join(f"rank {rank} {steps[rank]}" for rank in short)
            return Divergence(name, step, line, world.size,
                              f"{name!r} step {step}: world {world.size} rank {', '.join(map(str, short))} did not "
                              "record it",
                              f"  steps of {name!r} recorded: " + ", ".join(f"rank {rank} {count}" for rank, count
                                                                            in sorted(steps.items()))
                              + f" (short: {counts})")
        reference = self.reference
        if records and world is not reference and reference.finished and not reference.at(name, step):
            recorded = max(reference.steps(name).values(), default=0)
            return Divergence(name, step, line, world.size,
                              f"{name!r} step {step}: world {world.size} recorded it, world {reference.size} (the "
                              "reference) did not",
                              f"  world {reference.size} recorded {recorded} step{'s' * (recorded != 1)} of {name!r}")
        if not records and world is not reference and reference.at(name, step):
            recorded = max(steps.values(), default=0)
            return Divergence(name, step, line, world.size,
                              f"{name!r} step {step}: world {world.size} did not record it (world "
                              f"{self.reference.size} did)",
                              f"  world {world.size} recorded {recorded} step{'s' * (recorded != 1)} of {name!r}")
        return None

    def within(self, world: WorldRecords, name: str, step: int, line: str,
               values: dict[int, Any]) -> Divergence | None:
        """The ranks of ``world`` that recorded a different value than its first rank."""
        if len(values) < 2:
            return None
        first, *others = sorted(values)
        found = [(rank, difference(values[rank], values[first], self.rtol, self.atol, measure=False))
                 for rank in others]
        differing = [(rank, gap) for rank, gap in found if not gap.agree]
        if not differing:
            return None
        rank, gap = differing[0]
        ranks = ", ".join(str(rank) for rank, _ in differing)
        return Divergence(name, step, line, world.size,
                          f"{name!r} step {step}: in world {world.size}, rank {ranks} recorded another value than "
                          f"rank {first}",
                          _two_values(f"rank {rank}", f"rank {first}", values[rank], values[first], gap))

    def across(self, world: WorldRecords, name: str, step: int, line: str, values: dict[int, Any],
               reference: dict[int, Any], per_rank: bool) -> Divergence | None:
        """``world``'s value against the reference world's."""
        if not values or not reference:
            return None
        ref = self.reference.size
        if per_rank:
            pairs = [(rank, rank) for rank in sorted(values) if rank in reference]
        else:
            pairs = [(min(values), min(reference))]
        for rank, ref_rank in pairs:
            gap = difference(values[rank], reference[ref_rank], self.rtol, self.atol, measure=False)
            if not gap.agree:
                who = f"rank {rank} of world {world.size}" if per_rank else f"world {world.size}"
                ref_who = f"rank {ref_rank} of world {ref}" if per_rank else f"world {ref}"
                return Divergence(name, step, line, world.size,
                                  f"{name!r} step {step}: {who} differs from {ref_who} (the reference)",
                                  _two_values(who, f"{ref_who} (reference)", values[rank], reference[ref_rank], gap))
        return None

    def check(self, name: str, step: int) -> Divergence | None:
        records = [record for world in self.worlds for record in world.at(name, step).values()]
        line = records[0].line
        kinds = {record.per_rank for record in records}
        if len(kinds) > 1:
            return Divergence(name, step, line, self.reference.size,
                              f"{name!r} step {step}: compared per_rank on some ranks and not on others", "")
        per_rank = kinds.pop()
        reference: dict[int, Any] = {}
        for world in self.worlds:
            missing = self.missing(world, name, step, line)
            if missing is not None:
                return missing
            try:
                values = _values(world, name, step)
            except AssemblyError as error:
                return Divergence(name, step, line, world.size,
                                  f"{name!r} step {step}: world {world.size} could not put a DTensor together",
                                  f"  {error}")
            if not per_rank:
                divergence = self.within(world, name, step, line, values)
                if divergence is not None:
                    return divergence
            if world is self.reference:
                reference = values
                continue
            divergence = self.across(world, name, step, line, values, reference, per_rank)
            if divergence is not None:
                return divergence
        return None


def first_divergence(worlds: Sequence[WorldRecords], rtol: float | None = None,
                     atol: float | None = None) -> Divergence | None:
    """The first recorded value, in execution order, on which ``worlds`` (the reference first)
    or one world's ranks part; None if they all agree."""
    checker = _Checker(worlds, rtol, atol)
    for name, step in _order(worlds):
        divergence = checker.check(name, step)
        if divergence is not None:
            return divergence
    return None


def names_that_differ(worlds: Sequence[WorldRecords], rtol: float | None = None,
                      atol: float | None = None) -> list[tuple[str, int]]:
    """Each name that parts somewhere, with its first step that does (execution order)."""
    checker = _Checker(worlds, rtol, atol)
    found: dict[str, int] = {}
    for name, step in _order(worlds):
        if name not in found and checker.check(name, step) is not None:
            found[name] = step
    return list(found.items())


def step_table(worlds: Sequence[WorldRecords], name: str, rtol: float | None = None,
               atol: float | None = None) -> dict[int, dict[int, StepCell]]:
    """For each step of ``name`` (rows) and each world (columns, by size; the reference world
    only if it has several ranks), the largest difference of its ranks' values from the
    reference world's (rank by rank for a ``per_rank`` name)."""
    reference = worlds[0]
    steps = sorted({step for world in worlds for (key, step) in world.keys() if key == name})
    table: dict[int, dict[int, StepCell]] = {}
    for step in steps:
        row: dict[int, StepCell] = {}
        try:
            ref_values = _values(reference, name, step)
        except AssemblyError:
            ref_values = {}
        for world in worlds:
            if world is reference and (world.size == 1 or any(r.per_rank for r in world.at(name, step).values())):
                continue
            try:
                values = _values(world, name, step)
            except AssemblyError:
                row[world.size] = StepCell(None, True)
                continue
            if not values or not ref_values:
                row[world.size] = StepCell(None, False, recorded=False)
                continue
            per_rank = any(record.per_rank for record in world.at(name, step).values())
            gaps = [difference(value, ref_values[rank if per_rank else min(ref_values)], rtol, atol)
                    for rank, value in values.items() if not per_rank or rank in ref_values]
            largest: float | None = 0.0
            for gap in gaps:
                largest = None if gap.largest is None or largest is None else max(largest, gap.largest)
            row[world.size] = StepCell(largest, any(not gap.agree for gap in gaps))
        table[step] = row
    return table
