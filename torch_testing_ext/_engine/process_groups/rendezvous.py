"""Rendezvous without fixed ports.

Inside a rank of a multi-process test, a group meets through a file in the test's private
directory, or, when a launcher started the ranks (``torchrun``), under a key of the launcher's
store that is new for every test (``torch_testing_ext._engine.launched.launcher_store``), which works
across machines; a world-size-1 group uses an in-memory store; elsewhere ``env://``, whose
address the caller (or a launcher) sets.
"""

from __future__ import annotations

import collections
import itertools
import os

import torch.distributed as dist

from ... import devices
from ..worlds.rank_facts import rank_process_facts

__all__ = ["rendezvous_init_method", "init_single_process_group"]

__unittest = True

# How many rendezvous each test has made, per test (every rank of a test counts alike).
_rendezvous_counts: collections.defaultdict[str, itertools.count[int]] = \
    collections.defaultdict(itertools.count)


def rendezvous_init_method() -> str:
    """An ``init_method`` for ``init_process_group`` that every rank of this test agrees on.

    In a rank of a multi-process test: a fresh ``file://`` rendezvous in the test's directory,
    or under a launcher a fresh key of its store (the n-th call of a test gives every rank the
    same one). Elsewhere ``env://``, which needs ``MASTER_ADDR`` and ``MASTER_PORT`` to be set
    by the caller.
    """
    facts = rank_process_facts()
    if facts is not None:
        base = facts.rendezvous_base or f"file://{facts.test_dir}"
        return f"{base}/rendezvous-{next(_rendezvous_counts[base])}"
    if os.environ.get("MASTER_ADDR") and os.environ.get("MASTER_PORT"):
        return "env://"
    raise RuntimeError(
        "no rendezvous: run inside a MultiProcessTestCase rank, or set MASTER_ADDR and MASTER_PORT"
    )


def init_single_process_group(backend: str | None = None) -> None:
    """Create a real default process group of world size 1 (rank 0), with no port or file."""
    backend = backend or devices.default_backend()
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
