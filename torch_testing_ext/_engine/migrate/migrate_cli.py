"""The command line: ``python -m torch_testing_ext.migrate [--check | --diff] PATH...``.

Without options, rewrites the files in place (printing ``rewrote PATH`` for each one changed,
then how many of the files read needed it). ``--diff`` prints a unified diff instead and writes
nothing. ``--check`` writes nothing and prints ``path:line: module.name`` for every imported or
used name this package does not provide, then a line saying what was checked; it exits 1 if a
name is missing. Bad input (a missing or non-Python path, an unreadable file, a syntax error)
is one line on stderr and exit status 2, with nothing written.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from typing import NoReturn

from .availability import missing_names
from .cst_nodes import LibCSTMissing, require_libcst
from .import_rewrite import rewrite
from .name_references import references
from .source_files import SourceError, SourceFile, load, python_files, write_atomically

__all__ = ["PROG", "main"]

PROG = "python -m torch_testing_ext.migrate"


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog=PROG, description="Move tests written on torch.testing._internal and "
        "torch._dynamo.test_case onto torch_testing_ext by rewriting their imports and uses.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help=".py files, or directories to walk for them")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="change nothing; list the names torch_testing_ext does not provide "
                           "(exit 1 if any)")
    mode.add_argument("--diff", action="store_true",
                      help="print a unified diff instead of writing the files")
    return parser


def _files(count: int) -> str:
    return f"{count} file{'s' * (count != 1)}"


def _check(files: Sequence[SourceFile]) -> int:
    lines = sorted((f.path, line, name) for f in files
                   for line, name in missing_names(references(f.module)))
    for path, line, name in lines:
        print(f"{path}:{line}: {name}")
    if not lines:
        print(f"checked {_files(len(files))}: torch_testing_ext provides every name they use from it "
              "(or from torch.testing._internal)")
        return 0
    with_missing = len({path for path, _, _ in lines})
    print(f"checked {_files(len(files))}: {len(lines)} name{'s' * (len(lines) != 1)} not provided, "
          f"in {_files(with_missing)}")
    return 1


def _diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True),
                                 after.splitlines(keepends=True), fromfile=path, tofile=path)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, 1 for ``--check`` findings, 2)."""
    args = _parser().parse_args(argv)
    try:
        require_libcst()
        files = load(python_files(args.paths))
        if args.check:
            return _check(files)
        changed = {f.path: (f.module, new) for f in files
                   if (new := rewrite(f.module)).code != f.module.code}
        if args.diff:
            sys.stdout.write("".join(_diff(path, old.code, new.code)
                                     for path, (old, new) in changed.items()))
            return 0
        write_atomically({path: new.bytes for path, (_, new) in changed.items()})
    except (LibCSTMissing, SourceError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    for path in changed:
        print(f"rewrote {path}")
    print(f"{len(changed)} of {_files(len(files))} rewritten" if changed
          else f"read {_files(len(files))}: none needed a rewrite")
    return 0
