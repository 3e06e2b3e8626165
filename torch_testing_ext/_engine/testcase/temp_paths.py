"""Temporary file and directory names that are removed after the block, on any platform.

Example::

    with TemporaryFileName(suffix=".pt") as path:
        torch.save(model.state_dict(), path)
    with TemporaryDirectoryName() as folder:
        ...
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

__all__ = ["TemporaryFileName", "TemporaryDirectoryName"]

__unittest = True


@contextlib.contextmanager
def TemporaryFileName(*args: Any, **kwargs: Any) -> Iterator[str]:
    """The path of a new, empty, closed file, removed after the block.

    Takes ``tempfile.NamedTemporaryFile``'s arguments (``suffix``, ``prefix``, ``dir``...).
    The file is closed so the test may open it again (Windows forbids a second open).
    """
    kwargs["delete"] = False
    with tempfile.NamedTemporaryFile(*args, **kwargs) as created:
        path = created.name
    try:
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


@contextlib.contextmanager
def TemporaryDirectoryName(suffix: str | None = None) -> Iterator[str]:
    """The path of a new directory, removed with its contents after the block."""
    path = tempfile.mkdtemp(suffix=suffix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
