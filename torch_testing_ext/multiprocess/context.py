"""Facts about the rank the current process is running as (None outside a rank process)."""

from __future__ import annotations

import dataclasses

__all__ = ["RankContext", "current_rank_context", "set_rank_context"]


@dataclasses.dataclass(frozen=True)
class RankContext:
    """Where a rank is: its rank and world size, its device and backend, and its test's
    per-test directory (``file_name`` lives there; rendezvous files may too)."""

    rank: int
    world_size: int
    device: str
    backend: str
    file_name: str
    test_dir: str


_current: RankContext | None = None


def current_rank_context() -> RankContext | None:
    """The context of the rank this process runs, or None in a test's parent process."""
    return _current


def set_rank_context(context: RankContext | None) -> None:
    """Record the rank this process runs (called once, when a rank process starts)."""
    global _current
    _current = context
