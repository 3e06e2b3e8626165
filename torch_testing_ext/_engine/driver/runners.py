"""How a test file runs: as a script whose ``__main__`` calls ``run_tests()``, or under pytest.

A file whose ``if __name__ == "__main__":`` block calls ``run_tests()`` (this harness's entry,
or upstream's), and that has no module-level ``test*`` functions, runs as ``python FILE``,
which takes test ids (``TestA``, ``TestA.test_x``) and ``--save-xml``. Any other file (plain
pytest functions, ``unittest.main()``) runs as ``python -m pytest FILE``, which takes node ids
(``FILE::TestA::test_x[param]``) and ``--junitxml``::

    kind = file_kind(Path("tests/test_x.py"))
    command = run_command(sys.executable, Path("tests/test_x.py"), kind, ("TestA",),
                           TestArgs(patterns=("sum",)), Path("reports"))

``-k`` and ``-v`` mean the same to both (several ``-k`` become one pytest expression joined by
``or``); ``run_tests``' own options (``--seed``, ``--repeat``, ``--accept``, ``--use-pytest``)
go to scripts only; every other argument goes to every file as it is.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import shlex
from collections.abc import Sequence
from pathlib import Path

__all__ = ["FileKind", "TestArgs", "file_kind", "run_command", "shown_command", "pytest_node",
           "NORMAL_EXIT"]


class FileKind(str, enum.Enum):
    """How a test file runs."""

    SCRIPT = "script"  # python FILE: its __main__ calls run_tests()
    PYTEST = "pytest"  # python -m pytest FILE


# The exit statuses that mean "nothing went wrong" (pytest's 5: no test collected or selected).
NORMAL_EXIT = {FileKind.SCRIPT: frozenset({0}), FileKind.PYTEST: frozenset({0, 5})}


@dataclasses.dataclass(frozen=True)
class TestArgs:
    """What a run's command line asks of every test file: ``-k`` patterns, ``-v``,
    ``run_tests``' own options (scripts only), and the rest (every file)."""

    __test__ = False  # not a pytest test class

    patterns: tuple[str, ...] = ()
    verbose: bool = False
    script_only: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()


def _is_main_guard(statement: ast.stmt) -> bool:
    if not isinstance(statement, ast.If) or not isinstance(statement.test, ast.Compare):
        return False
    compare = statement.test
    if len(compare.ops) != 1 or not isinstance(compare.ops[0], ast.Eq):
        return False
    sides = [compare.left, *compare.comparators]
    names = {side.id for side in sides if isinstance(side, ast.Name)}
    strings = {side.value for side in sides if isinstance(side, ast.Constant)}
    return names == {"__name__"} and strings == {"__main__"}


def _calls_run_tests(statement: ast.stmt) -> bool:
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "run_tests":
                return True
    return False


def _is_test_function(statement: ast.stmt) -> bool:
    return isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name.startswith("test")


def file_kind(path: Path) -> FileKind:
    """``SCRIPT`` if the file's ``__main__`` block calls ``run_tests()`` and it has no
    module-level test functions (``run_tests()`` runs only its unittest classes; pytest runs
    both), else ``PYTEST`` (also for a file that cannot be read or parsed: pytest then reports
    why)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return FileKind.PYTEST
    if any(_is_test_function(s) for s in tree.body):
        return FileKind.PYTEST
    if any(_is_main_guard(s) and _calls_run_tests(s) for s in tree.body):
        return FileKind.SCRIPT
    return FileKind.PYTEST


def _arguments(path: Path | str, kind: FileKind, selection: Sequence[str], args: TestArgs) -> list[str]:
    verbose = ["-v"] * args.verbose
    if kind is FileKind.SCRIPT:
        patterns = [arg for pattern in args.patterns for arg in ("-k", pattern)]
        return [str(path), *selection, *patterns, *verbose, *args.script_only, *args.extra]
    targets = [f"{path}::{item}" for item in selection] or [str(path)]
    patterns = ["-k", " or ".join(args.patterns)] if args.patterns else []
    return ["-m", "pytest", *targets, *patterns, *verbose, *args.extra]


def run_command(python: str, path: Path, kind: FileKind, selection: Sequence[str], args: TestArgs,
                 report_dir: Path) -> list[str]:
    """The command that runs ``selection`` of ``path`` (all of it if empty) and writes its
    JUnit XML into ``report_dir``."""
    if kind is FileKind.SCRIPT:
        report = ["--save-xml", str(report_dir)]
    else:
        report = [f"--junitxml={report_dir / f'TEST-{path.stem}.xml'}"]
    return [python, *_arguments(path, kind, selection, args), *report]


def shown_command(path: str, kind: FileKind, selection: Sequence[str], args: TestArgs) -> str:
    """The command a person pastes to run ``selection`` of the file at ``path`` again."""
    return shlex.join(["python", *_arguments(path, kind, selection, args)])


def pytest_node(classname: str, name: str, path: Path) -> str:
    """The node id within ``path`` (``TestA::test_x[1]``, ``test_f``) of a test that pytest's
    JUnit XML records as ``classname``/``name``.

    pytest writes the file's path relative to its rootdir, dotted, then the classes; the
    rootdir is not known here, so the longest leading run of ``classname`` that ends the
    file's own path is taken as the path part.
    A collection error (no class name) or a name that does not fit the path gives ``""``:
    the whole file.
    """
    parts = classname.split(".") if classname else []
    path_parts = path.with_suffix("").parts
    for length in range(min(len(parts), len(path_parts)), 0, -1):
        if tuple(parts[:length]) == path_parts[-length:]:
            return "::".join([*parts[length:], name])
    return ""
