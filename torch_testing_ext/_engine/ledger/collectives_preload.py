"""The fork server's preload that wraps the collectives (``ledger.recording``) before it
imports any test module, so that a test module's ``from torch.distributed import all_reduce``
binds the recording wrapper in every rank forked from it."""

from __future__ import annotations

from ..fresh.fork_server import serving
from .recording import install, recording_enabled

__all__: list[str] = []

if serving() and recording_enabled():
    install()
