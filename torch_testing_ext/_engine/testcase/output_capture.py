"""``captured_output``: what the block writes to ``sys.stdout`` and ``sys.stderr``.

Example::

    with captured_output() as (out, err):
        print("hello")
    assert out.getvalue() == "hello\\n"
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator

__all__ = ["captured_output"]

__unittest = True


@contextlib.contextmanager
def captured_output() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """Send ``sys.stdout`` and ``sys.stderr`` to two ``StringIO`` for the block; yield them."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err
