"""Find the test files of a tree and select the ones a run asks for.

A test file is any ``test_*.py`` below the test directory; it is named by its path under that
directory without ``.py``, with ``/`` separators on every platform::

    names = discover_tests(Path("test"))          # ["distributed/test_x", "harness/test_y", ...]
    names = select_tests(names, exclude=["harness/"], distributed=True)

Files that do not match ``test_*.py`` (helpers, ``conftest.py``) are never run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = [
    "DISTRIBUTED_PREFIX",
    "SelectionError",
    "discover_tests",
    "is_distributed",
    "select_tests",
    "source_path",
]

# Files under this directory start rank processes: the driver runs them one at a time.
DISTRIBUTED_PREFIX = "distributed/"


class SelectionError(ValueError):
    """A selection that names something that does not exist (a usage error)."""


def discover_tests(test_dir: Path) -> list[str]:
    """Sorted names of every ``test_*.py`` below ``test_dir`` (hidden and cache dirs skipped)."""
    names = []
    for path in test_dir.rglob("test_*.py"):
        relative = path.relative_to(test_dir)
        if any(part.startswith((".", "__")) for part in relative.parts[:-1]):
            continue
        if path.is_file():
            names.append(relative.with_suffix("").as_posix())
    return sorted(names)


def source_path(test_dir: Path, name: str) -> Path:
    """The file that runs the test named ``name``."""
    return test_dir / f"{name}.py"


def is_distributed(name: str) -> bool:
    """True for files under ``distributed/``, which run serially."""
    return name.startswith(DISTRIBUTED_PREFIX)


def select_tests(
    names: Sequence[str],
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
    distributed: bool | None = None,
) -> list[str]:
    """Filter ``names`` keeping their order.

    ``include``: exact names (an unknown one raises :class:`SelectionError`); ``exclude``: name
    prefixes; ``distributed``: True keeps only ``distributed/`` files, False drops them, None
    keeps both.
    """
    selected = list(names)
    if include:
        known, wanted = set(names), dict.fromkeys(include)
        unknown = [name for name in wanted if name not in known]
        if unknown:
            example = f" (names look like {names[0]!r})" if names else ""
            raise SelectionError(f"unknown test name(s) for --include: {' '.join(unknown)}{example}")
        selected = [name for name in selected if name in wanted]
    prefixes = tuple(exclude or ())
    if prefixes:
        selected = [name for name in selected if not name.startswith(prefixes)]
    if distributed is not None:
        selected = [name for name in selected if is_distributed(name) == distributed]
    return selected
