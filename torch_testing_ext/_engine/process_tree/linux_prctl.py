"""Linux ``prctl`` calls the harness relies on to leave no process behind.

A *child subreaper* adopts the orphans among its descendants (instead of init), so it can
find, kill and reap them; a *parent-death signal* reaches a process when its parent dies.
Elsewhere both are unavailable and the functions return False.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

__all__ = ["become_subreaper", "set_parent_death_signal", "PRCTL_AVAILABLE"]

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()
PRCTL_AVAILABLE = _PRCTL is not None


def become_subreaper(enabled: bool = True) -> bool:
    """Adopt this process's orphaned descendants (or stop, with ``enabled=False``); False
    where that is not available."""
    return _PRCTL is not None and _PRCTL(_PR_SET_CHILD_SUBREAPER, int(enabled), 0, 0, 0) == 0


def set_parent_death_signal(signum: int) -> bool:
    """Have ``signum`` sent to this process when its parent dies; False where unavailable."""
    return _PRCTL is not None and _PRCTL(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
