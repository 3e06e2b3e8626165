"""``verify_ddp_error_logged``: check that DDP recorded an error in its logging data."""

from __future__ import annotations

from typing import Any

from .._torch_private import ddp_logging_data

__all__ = ["verify_ddp_error_logged"]

__unittest = True

_CPP_STACK = "\nException raised from "


def verify_ddp_error_logged(model_DDP: Any, err_substr: str) -> None:
    """Raise AssertionError unless ``model_DDP``'s logging data holds an error containing
    ``err_substr`` (without a C++ stack trace that follows it)."""
    logged = ddp_logging_data(model_DDP)
    missing = [key for key in ("iteration", "has_error", "error") if key not in logged]
    if missing:
        raise AssertionError(f"DDP logged no error: its logging data lacks {', '.join(missing)}")
    expected = err_substr.split(_CPP_STACK)[0]
    if expected not in logged["error"]:
        raise AssertionError(f"DDP logged a different error: {expected!r} is not in {logged['error']!r}")
