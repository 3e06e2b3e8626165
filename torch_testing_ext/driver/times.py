"""The recorded test times that the planner balances shards with (``.test-times.json``).

Schema (version 1), seconds as floats::

    {
      "version": 1,
      "files":   {"distributed/test_x": 312.5, "harness/test_y": 4.2},
      "classes": {"distributed/test_x": {"TestMultiProc": 250.0, "TestSingleProc": 50.1}}
    }

``files`` holds the wall time of running the whole file in one process (start-up and
``setUpClass`` included); ``classes`` the summed test times of each class. Refresh it with
``python run_test.py --update-times [DIR]``, which reads the JUnit reports of a run
(all shards' reports together) and merges what they measured: a measured file's time is
replaced, its measured classes are replaced, everything else is kept.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .results import FileRun

__all__ = [
    "RecordedTimes",
    "TimesFileError",
    "load_times",
    "save_times",
    "merge_times",
    "measure_runs",
]

_VERSION = 1


class TimesFileError(ValueError):
    """The times file exists but cannot be read or is not in the expected format."""


@dataclasses.dataclass
class RecordedTimes:
    """Seconds per test file and per test class of each file."""

    files: dict[str, float] = dataclasses.field(default_factory=dict)
    classes: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict:
        """The JSON document, keys sorted so diffs of the committed file stay small."""
        return {
            "version": _VERSION,
            "files": {name: round(self.files[name], 2) for name in sorted(self.files)},
            "classes": {
                name: {cls: round(sec, 2) for cls, sec in sorted(self.classes[name].items())}
                for name in sorted(self.classes)
            },
        }


def _seconds(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value:
        raise TimesFileError(f"{where} is not a non-negative number of seconds")
    return float(value)


def _parse(document: object) -> RecordedTimes:
    if not isinstance(document, dict):
        raise TimesFileError("top level is not a JSON object")
    if document.get("version", _VERSION) != _VERSION:
        raise TimesFileError(f"unsupported version {document.get('version')!r}")
    files, classes = document.get("files", {}), document.get("classes", {})
    if not isinstance(files, dict) or not isinstance(classes, dict):
        raise TimesFileError("'files' and 'classes' must be JSON objects")
    times = RecordedTimes()
    for name, seconds in files.items():
        times.files[name] = _seconds(seconds, f"files[{name!r}]")
    for name, per_class in classes.items():
        if not isinstance(per_class, dict):
            raise TimesFileError(f"classes[{name!r}] is not a JSON object")
        times.classes[name] = {
            cls: _seconds(sec, f"classes[{name!r}][{cls!r}]") for cls, sec in per_class.items()
        }
    return times


def load_times(path: Path) -> RecordedTimes | None:
    """Read ``path``; None when it does not exist, :class:`TimesFileError` when it is unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise TimesFileError(f"cannot read it ({error.__class__.__name__}: {error})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise TimesFileError(f"not valid JSON ({error})") from None
    return _parse(document)


def save_times(path: Path, times: RecordedTimes) -> None:
    """Write ``times`` to ``path`` atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".test-times-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            json.dump(times.to_json(), stream, indent=2)
            stream.write("\n")
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def merge_times(old: RecordedTimes | None, new: RecordedTimes) -> RecordedTimes:
    """``old`` updated with ``new``: measured files and classes replace recorded ones."""
    merged = RecordedTimes(dict(old.files) if old else {},
                           {k: dict(v) for k, v in old.classes.items()} if old else {})
    merged.files.update(new.files)
    for name, per_class in new.classes.items():
        merged.classes.setdefault(name, {}).update(per_class)
    return merged


def measure_runs(runs: Iterable[FileRun]) -> RecordedTimes:
    """Per-file and per-class seconds measured by the process runs of a report set.

    A file may have run as several processes (split by class, or in several shards). Its
    whole-file time is the sum of its test times plus one process's overhead (the mean of
    wall time minus test time over its runs), which is what running it in one process costs.
    Interrupted runs measured nothing and are left out; a timed-out run counts with the time
    it was given (a lower bound, better than no time at all).
    """
    test_seconds: dict[str, float] = {}
    overheads: dict[str, list[float]] = {}
    classes: dict[str, dict[str, float]] = {}
    for run in runs:
        if run.status == "interrupted":
            continue
        spent = sum(outcome.seconds for outcome in run.outcomes)
        test_seconds[run.name] = test_seconds.get(run.name, 0.0) + spent
        overheads.setdefault(run.name, []).append(max(0.0, run.wall_seconds - spent))
        per_class = classes.setdefault(run.name, {})
        for outcome in run.outcomes:
            cls = outcome.class_name
            per_class[cls] = per_class.get(cls, 0.0) + outcome.seconds
    times = RecordedTimes()
    for name, spent in test_seconds.items():
        times.files[name] = spent + sum(overheads[name]) / len(overheads[name])
        if classes[name]:
            times.classes[name] = classes[name]
    return times
