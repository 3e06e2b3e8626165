"""Find the test files a run asks for, name them, and apply the selection options.

A run names its tests by PATHs, as pytest takes them (files and directories), or by a test
directory (``--test-dir``, default ``test/``). Every name is the file's path under the *test
root* without ``.py``, with ``/`` separators on every platform; the root is ``--test-dir`` when
given, else the default directory when it holds every PATH (so names and recorded times are
those of a whole run), else the deepest directory that holds every PATH::

    tree = find_tests(["tests/"], test_dir=None, default_dir=Path("test"))
    tree.root, tree.names                          # Path("tests"), ["dist/test_x", "test_y"]
    names = select_tests(tree.names, exclude=["dist/"])

In a directory every ``test_*.py`` is a test file; a file named as a PATH is one whatever its
name. Directories pytest does not search either are passed over (hidden ones, ``__pycache__``,
``build``, ``dist``, ``node_modules``, ``venv`` and any virtual environment, ...), and so are
helpers and ``conftest.py``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = [
    "DISTRIBUTED_DIR",
    "SelectionError",
    "NoTestsError",
    "TestTree",
    "discover_tests",
    "find_tests",
    "is_distributed",
    "select_tests",
    "source_path",
]

# Files in a directory of this name start rank processes: the driver runs them one at a time.
DISTRIBUTED_DIR = "distributed"
# Directory names never searched (pytest's norecursedirs, and installed packages).
_NOT_SEARCHED = frozenset({"build", "dist", "node_modules", "venv", "CVS", "_darcs", "{arch}",
                           "site-packages"})


class SelectionError(ValueError):
    """A selection that names something that does not exist (a usage error, exit status 2)."""


class NoTestsError(ValueError):
    """A test directory without a test file (exit status 5, as pytest's when nothing ran)."""


@dataclasses.dataclass(frozen=True)
class TestTree:
    """The test files a run found: ``names`` are paths under ``root`` without ``.py``."""

    __test__ = False  # not a pytest test class

    root: Path
    names: list[str]


def _searched(directory: Path) -> bool:
    name = directory.name
    return not (name.startswith((".", "__")) or name in _NOT_SEARCHED or name.endswith(".egg")
                or (directory / "pyvenv.cfg").exists())


def _test_files(directory: Path) -> list[Path]:
    found = []
    for here, subdirs, files in os.walk(directory):
        subdirs[:] = sorted(d for d in subdirs if _searched(Path(here, d)))
        found += [Path(here, f) for f in files if f.startswith("test_") and f.endswith(".py")]
    return found


def _name(root: Path, path: Path) -> str:
    return path.relative_to(root).with_suffix("").as_posix()


def discover_tests(test_dir: Path) -> list[str]:
    """Sorted names of every ``test_*.py`` below ``test_dir`` (see the module doc)."""
    return sorted(_name(test_dir, path) for path in _test_files(test_dir))


def _common_root(paths: Sequence[Path]) -> Path:
    return Path(os.path.commonpath([p if p.is_dir() else p.parent for p in paths]))


def _files_of(given: str, path: Path) -> list[Path]:
    if not path.exists():
        raise SelectionError(f"{given}: no such file or directory")
    if path.is_dir():
        files = _test_files(path)
        if not files:
            raise SelectionError(f"{given}: no test files (test_*.py) in this directory")
        return files
    if path.suffix != ".py":
        raise SelectionError(f"{given}: not a Python file")
    return [path]


def find_tests(paths: Sequence[str], test_dir: Path | None, default_dir: Path) -> TestTree:
    """The test root and the names of the test files ``paths`` (or the test directory) hold.

    ``SelectionError`` for a PATH that does not exist, holds no test file or lies outside
    ``test_dir``, or a test directory that does not exist; ``NoTestsError`` for a test
    directory without test files.
    """
    if not paths:
        root = (test_dir or default_dir).absolute()
        if not root.is_dir():
            hint = "" if test_dir else " (name the test files or directories to run, e.g. tests/)"
            raise SelectionError(f"test directory not found: {test_dir or default_dir}{hint}")
        names = discover_tests(root)
        if not names:
            raise NoTestsError(f"no test files (test_*.py) under {test_dir or default_dir}")
        return TestTree(root, names)
    resolved = {given: Path(given).absolute() for given in dict.fromkeys(paths)}
    files = {given: _files_of(given, path) for given, path in resolved.items()}
    if test_dir is not None:
        root = test_dir.absolute()
        if not root.is_dir():
            raise SelectionError(f"test directory not found: {test_dir}")
    elif all(path.is_relative_to(default_dir.absolute()) for path in resolved.values()):
        root = default_dir.absolute()  # names as in a run of the whole default directory
    else:
        root = _common_root(list(resolved.values()))
    found_names: set[str] = set()
    for given, found in files.items():
        if not all(path.is_relative_to(root) for path in found):
            raise SelectionError(f"{given}: not under the test directory {test_dir}")
        found_names.update(_name(root, path) for path in found)
    return TestTree(root, sorted(found_names))


def source_path(test_dir: Path, name: str) -> Path:
    """The file that runs the test named ``name``."""
    return test_dir / f"{name}.py"


def is_distributed(name: str) -> bool:
    """True for files in a ``distributed`` directory (at any depth), which run serially."""
    return DISTRIBUTED_DIR in name.split("/")[:-1]


def select_tests(
    names: Sequence[str],
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
    distributed: bool | None = None,
) -> list[str]:
    """Filter ``names`` keeping their order.

    ``include``: exact names (an unknown one raises :class:`SelectionError`); ``exclude``: name
    prefixes; ``distributed``: True keeps only the files of ``distributed`` directories, False
    drops them, None keeps both.
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
