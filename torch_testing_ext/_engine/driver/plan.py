"""Split the selected test files into shards: a pure function of its inputs.

Every CI shard calls :func:`plan_shards` with the same names, times, shard count and job
count, gets the same plan, and runs its own part, so the shards together run every selected
test exactly once::

    shards = plan_shards(names, times, num_shards=3, jobs=2, listed={"distributed/test_x": [...]})
    shards[0].entries   # what shard 1 runs, in order

How: files with a recorded time are taken longest first, each to the shard that is currently
lightest. A file longer than the split threshold whose tests the caller listed (see
:func:`files_to_split`) becomes several entries, each running a group of its classes; a
class that alone is longer than a group is split by test (``Class.test_x`` ids). Files
without a recorded time are then dealt round-robin, starting with the lightest shard, and
counted at the mean known time. Without any times the plan is plain round-robin by name.

A shard's estimated wall time counts ``distributed/`` files (run one at a time) in full and
the other files divided by ``jobs`` (they run ``jobs`` at a time).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

from .discover import is_distributed
from .times import RecordedTimes

__all__ = [
    "MIN_SPLIT_SECONDS",
    "PlanEntry",
    "ShardPlan",
    "files_to_split",
    "plan_shards",
    "split_threshold",
]

# Never split a file shorter than this: each extra process costs an interpreter start-up.
MIN_SPLIT_SECONDS = 60.0


@dataclasses.dataclass(frozen=True)
class PlanEntry:
    """One process to run: a test file, optionally restricted to a selection of it.

    ``selection`` holds what the test file's command line takes: class names (``TestA``)
    and test ids (``TestB.test_x``); empty means the whole file. ``seconds`` is the estimate,
    ``known`` says whether it comes from recorded times, ``serial`` that the entry runs alone.
    """

    name: str
    _: dataclasses.KW_ONLY
    selection: tuple[str, ...] = ()
    seconds: float = 0.0
    known: bool = False
    serial: bool = False

    @property
    def label(self) -> str:
        """``name``, ``name [TestA, TestB]`` or ``name [TestA, TestB: 12 tests]``."""
        if not self.selection:
            return self.name
        parts: dict[str, int] = {}
        for item in self.selection:
            cls, _, test = item.partition(".")
            parts[cls] = parts.get(cls, 0) + bool(test)
        shown = [f"{cls}: {count} test{'s' * (count != 1)}" if count else cls
                 for cls, count in parts.items()]
        return f"{self.name} [{', '.join(shown)}]"

    def selection_for(self, selector: str) -> tuple[str, ...]:
        """The selection that runs ``selector`` (a test or a class) alone; ``""``: the whole entry."""
        return (selector,) if selector else self.selection

    def cost(self, jobs: int) -> float:
        """Estimated share of its shard's wall time."""
        return self.seconds if self.serial else self.seconds / jobs


@dataclasses.dataclass(frozen=True)
class ShardPlan:
    """The entries one shard runs (in running order) and its estimated wall time."""

    index: int
    entries: tuple[PlanEntry, ...]
    seconds: float


def _mean_known(names: Sequence[str], times: RecordedTimes | None) -> float | None:
    if times is None:
        return None
    known = [times.files[name] for name in names if name in times.files]
    known = known or list(times.files.values())
    return sum(known) / len(known) if known else None


def split_threshold(
    names: Sequence[str], times: RecordedTimes | None, num_shards: int, jobs: int = 1
) -> float:
    """Seconds above which a file is split: the ideal shard length, at least ``MIN_SPLIT_SECONDS``."""
    mean = _mean_known(names, times) or 0.0
    total = 0.0
    for name in names:
        seconds = times.files.get(name, mean) if times else mean
        total += seconds if is_distributed(name) else seconds / jobs
    return max(MIN_SPLIT_SECONDS, total / num_shards)


def files_to_split(
    names: Sequence[str],
    times: RecordedTimes | None,
    num_shards: int,
    jobs: int = 1,
    threshold: float | None = None,
) -> list[str]:
    """Files long enough to split whose recorded times name two classes, or two tests.

    The caller lists their current tests (``listing.list_splittable`` runs ``python
    test/x.py --list``) and passes them to :func:`plan_shards`; the listing, not the times
    file, decides which tests exist, so a test added since the times were recorded still runs.
    """
    if times is None or num_shards < 2:
        return []
    if threshold is None:
        threshold = split_threshold(names, times, num_shards, jobs)
    return [
        name for name in names
        if times.files.get(name, 0.0) > threshold
        and (len(times.classes.get(name, {})) >= 2 or len(times.tests.get(name, {})) >= 2)
    ]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _units(
    by_class: Mapping[str, list[str]], seconds: Mapping[str, float], recorded_tests: Mapping[str, float],
    target: float,
) -> list[tuple[str, float]]:
    """(selector, seconds) pieces to group: whole classes, or the tests of a too-long class."""
    units: list[tuple[str, float]] = []
    for cls, tests in by_class.items():
        known = [recorded_tests[test] for test in tests if test in recorded_tests]
        if seconds[cls] > target and len(tests) >= 2 and known:
            units.extend((test, recorded_tests.get(test, _mean(known))) for test in tests)
        else:
            units.append((cls, seconds[cls]))
    return units


def _split_file(
    name: str, listed: Sequence[str], times: RecordedTimes, threshold: float
) -> list[PlanEntry] | None:
    by_class: dict[str, list[str]] = {}
    for test_id in sorted(set(listed)):
        by_class.setdefault(test_id.partition(".")[0], []).append(test_id)
    recorded = times.classes.get(name, {})
    known = [recorded[cls] for cls in by_class if cls in recorded]
    if not known:
        return None
    file_seconds = times.files[name]
    # What a process costs besides its tests (start-up, imports, setUpClass): paid per group.
    overhead = max(0.0, file_seconds - sum(recorded.values()))
    seconds = {cls: recorded.get(cls, _mean(known)) for cls in by_class}
    groups_wanted = max(2, math.ceil(file_seconds / threshold))
    target = sum(seconds.values()) / groups_wanted
    units = _units(by_class, seconds, times.tests.get(name, {}), target)
    if len(units) < 2:
        return None
    groups_wanted = min(len(units), groups_wanted)
    groups: list[list[str]] = [[] for _ in range(groups_wanted)]
    loads = [0.0] * groups_wanted
    for selector, cost in sorted(units, key=lambda unit: (-unit[1], unit[0])):
        lightest = min(range(groups_wanted), key=lambda i: (loads[i], i))
        groups[lightest].append(selector)
        loads[lightest] += cost
    serial = is_distributed(name)
    # Sorted: a class's tests run in the order unittest would run them in one process.
    return [
        PlanEntry(name, selection=tuple(sorted(group)), seconds=loads[i] + overhead, known=True,
                  serial=serial)
        for i, group in enumerate(groups)
    ]


def _entries(
    names: Sequence[str],
    times: RecordedTimes,
    listed: Mapping[str, Sequence[str]],
    threshold: float,
) -> tuple[list[PlanEntry], list[str]]:
    known: list[PlanEntry] = []
    unknown: list[str] = []
    for name in names:
        if name not in times.files:
            unknown.append(name)
            continue
        seconds = times.files[name]
        split = None
        if seconds > threshold and name in listed:
            split = _split_file(name, listed[name], times, threshold)
        known.extend(split or [PlanEntry(name, seconds=seconds, known=True,
                                         serial=is_distributed(name))])
    return known, unknown


def _running_order(entries: list[PlanEntry]) -> tuple[PlanEntry, ...]:
    # Parallel files first, then the serial ones; longest first inside each group.
    return tuple(sorted(entries, key=lambda e: (e.serial, -e.seconds, e.name, e.selection)))


def plan_shards(
    names: Sequence[str],
    times: RecordedTimes | None,
    num_shards: int,
    *,
    jobs: int = 1,
    listed: Mapping[str, Sequence[str]] | None = None,
    threshold: float | None = None,
) -> list[ShardPlan]:
    """Plan ``num_shards`` shards (index 1..num_shards) for the test files ``names``.

    ``listed`` maps files that may be split (:func:`files_to_split`) to their test ids
    (``Class.test_x``); ``threshold`` overrides :func:`split_threshold`.
    """
    if num_shards < 1 or jobs < 1:
        raise ValueError("num_shards and jobs must be positive")
    names = sorted(set(names))
    buckets: list[list[PlanEntry]] = [[] for _ in range(num_shards)]
    loads = [0.0] * num_shards
    mean = _mean_known(names, times)

    def place(shard: int, entry: PlanEntry) -> None:
        buckets[shard].append(entry)
        loads[shard] += entry.cost(jobs)

    if times is None or mean is None:
        for i, name in enumerate(names):
            place(i % num_shards, PlanEntry(name, serial=is_distributed(name)))
    else:
        if threshold is None:
            threshold = split_threshold(names, times, num_shards, jobs)
        known, unknown = _entries(names, times, listed or {}, threshold)
        for entry in sorted(known, key=lambda e: (-e.seconds, e.name, e.selection)):
            place(min(range(num_shards), key=lambda i: (loads[i], i)), entry)
        order = sorted(range(num_shards), key=lambda i: (loads[i], i))
        for i, name in enumerate(unknown):
            place(order[i % num_shards], PlanEntry(name, seconds=mean, serial=is_distributed(name)))
    return [
        ShardPlan(i + 1, _running_order(bucket), loads[i]) for i, bucket in enumerate(buckets)
    ]
