"""The files a run works on: input paths checked and walked, every file read and parsed before
any is written, and the rewritten ones written atomically.

Any trouble is a :class:`SourceError` with a one-line message. Writing stages every file next
to its target first and only then renames them into place, so a failure leaves no file
half-written.
"""

from __future__ import annotations

import ast
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from .cst_nodes import cst, require_libcst

__all__ = ["SourceError", "SourceFile", "python_files", "load", "write_atomically"]


class SourceError(Exception):
    """A path or file that cannot be worked on; the message is one line."""


class SourceFile(NamedTuple):
    path: str
    module: Any  # the parsed libcst.Module; ``module.bytes`` is the file as read


def _walk(folder: str) -> Iterator[str]:
    for parent, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        yield from (os.path.normpath(os.path.join(parent, name))
                    for name in sorted(files) if name.endswith(".py"))


def python_files(paths: Sequence[str]) -> list[str]:
    """The ``.py`` files the paths name: files as given, directories walked (hidden folders and
    ``__pycache__`` skipped), each file once."""
    found: dict[str, str] = {}
    for path in paths:
        if os.path.isdir(path):
            candidates = list(_walk(path))
        elif not os.path.exists(path):
            raise SourceError(f"{path}: no such file or directory")
        elif not path.endswith(".py") or not os.path.isfile(path):
            raise SourceError(f"{path}: not a Python file (give .py files or directories)")
        else:
            candidates = [path]
        for candidate in candidates:
            found.setdefault(os.path.realpath(candidate), candidate)
    return list(found.values())


def _syntax_error(path: str, data: bytes, error: Any) -> str:
    # Python's own message and line are the ones people know; LibCST's only if Python parses
    # the file (syntax newer than the installed LibCST understands).
    try:
        ast.parse(data)
    except (SyntaxError, ValueError) as python_error:  # ValueError: null bytes, before 3.12
        line = getattr(python_error, "lineno", None)
        message = getattr(python_error, "msg", str(python_error))
        return f"{path}{f':{line}' if line else ''}: syntax error: {message}"
    return (f"{path}:{error.raw_line}: syntax error (libcst cannot parse it): "
            f"{' '.join(error.message.split())}")


def _parse(path: str, data: bytes) -> Any:
    try:
        return cst.parse_module(data)
    except cst.ParserSyntaxError as error:
        raise SourceError(_syntax_error(path, data, error)) from None
    except (SyntaxError, UnicodeDecodeError) as error:  # a bad encoding or coding cookie
        raise SourceError(f"{path}: cannot decode: {' '.join(str(error).split())}") from None


def load(paths: Sequence[str]) -> list[SourceFile]:
    """Read and parse every file, raising on the first that cannot be read or parsed."""
    require_libcst()
    loaded = []
    for path in paths:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as error:
            raise SourceError(f"{path}: cannot read: {error.strerror or error}") from None
        loaded.append(SourceFile(path, _parse(path, data)))
    return loaded


def write_atomically(contents: Mapping[str, bytes]) -> None:
    """Replace each file with its new bytes (keeping its permissions): all of them, or none."""
    staged: list[tuple[str, str]] = []
    try:
        for path, data in contents.items():
            target = os.path.realpath(path)  # through a symlink, not over it
            fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.",
                                        suffix=".migrate", dir=os.path.dirname(target))
            staged.append((temp, target))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(temp, stat.S_IMODE(os.stat(target).st_mode))
    except OSError as error:
        for temp, _ in staged:
            os.unlink(temp)
        raise SourceError(f"{path}: cannot write: {error.strerror or error}") from None
    for temp, target in staged:
        os.replace(temp, target)
