"""How the driver's command line speaks to people about trouble: one line, never a traceback.

:class:`UsageError` is bad input (``main`` prints it and exits 2); :func:`warn` is a problem the
run survives (a corrupt times file, a file whose tests cannot be listed).
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

__all__ = ["PROG", "UsageError", "OneLineParser", "warn"]

PROG = "run_test"  # the tool, whichever entry started it (run_test.py, python -m, tte-run-test)


class UsageError(Exception):
    """Bad input: reported as one line on stderr with exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage dump) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(" ".join(message.split()))


def warn(message: str) -> None:
    """Print ``run_test: warning: message`` on stderr."""
    print(f"{PROG}: warning: {message}", file=sys.stderr, flush=True)
