"""The recorded test times that the planner balances shards with (``.test-times.json``).

Schema (version 1), seconds as floats::

    {
      "version": 1,
      "files":   {"distributed/test_x": 312.5, "harness/test_y": 4.2},
      "classes": {"distributed/test_x": {"TestMultiProc": 250.0, "TestSingleProc": 50.1}},
      "tests":   {"distributed/test_x": {"TestMultiProc.test_a": 9.5, ...}}
    }

``files`` holds the wall time of running the whole file in one process (start-up and
``setUpClass`` included); ``classes`` the summed test times of each class; ``tests`` (optional)
each test's time, which lets the planner split a class too long for one shard. Refresh it
with ``python run_test.py --update-times [DIR]`` (see ``measure``): a measured file's time,
classes and tests replace what was recorded of it (:func:`merge_times`), other files are kept.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from pathlib import Path

__all__ = [
    "RecordedTimes",
    "TimesFileError",
    "load_times",
    "save_times",
    "merge_times",
]

_VERSION = 1


class TimesFileError(ValueError):
    """The times file exists but cannot be read or is not in the expected format."""


@dataclasses.dataclass
class RecordedTimes:
    """Seconds per test file, per test class of each file and per test (``Class.test_x``)."""

    files: dict[str, float] = dataclasses.field(default_factory=dict)
    classes: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)
    tests: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict:
        """The JSON document, keys sorted so diffs of the committed file stay small."""
        def nested(table: dict[str, dict[str, float]]) -> dict:
            return {name: {key: round(sec, 2) for key, sec in sorted(table[name].items())}
                    for name in sorted(table)}

        return {
            "version": _VERSION,
            "files": {name: round(self.files[name], 2) for name in sorted(self.files)},
            "classes": nested(self.classes),
            "tests": nested(self.tests),
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
    files = document.get("files", {})
    if not isinstance(files, dict):
        raise TimesFileError("'files' must be a JSON object")
    times = RecordedTimes()
    for name, seconds in files.items():
        times.files[name] = _seconds(seconds, f"files[{name!r}]")
    for key, table in (("classes", times.classes), ("tests", times.tests)):
        per_file = document.get(key, {})
        if not isinstance(per_file, dict):
            raise TimesFileError(f"{key!r} must be a JSON object")
        for name, entries in per_file.items():
            if not isinstance(entries, dict):
                raise TimesFileError(f"{key}[{name!r}] is not a JSON object")
            table[name] = {
                item: _seconds(sec, f"{key}[{name!r}][{item!r}]") for item, sec in entries.items()
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
    """``old`` updated with ``new``: each measured file replaces what was recorded of it.

    Its time, classes and tests are all replaced, so a class or test renamed or removed
    since does not linger; files that were not measured keep their recorded times.
    """
    merged = RecordedTimes()
    if old is not None:
        merged = RecordedTimes(dict(old.files), {n: dict(c) for n, c in old.classes.items()},
                               {n: dict(t) for n, t in old.tests.items()})
    for name, seconds in new.files.items():
        merged.files[name] = seconds
        for table, measured in ((merged.classes, new.classes), (merged.tests, new.tests)):
            table.pop(name, None)
            if name in measured:
                table[name] = dict(measured[name])
    return merged
