"""Argument types shared by the command lines (``run_tests`` and ``run_test.py``); imports no torch."""

from __future__ import annotations

import argparse

__all__ = ["positive_int"]


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
