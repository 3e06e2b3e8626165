"""The fork server's preload that wraps the collectives (``collectives.recording``) before it
imports any test module, so that a test module's ``from torch.distributed import all_reduce``
binds the recording wrapper in every rank forked from it."""

from __future__ import annotations

from ..collectives.recording import install, recording_enabled
from .fork_server import serving

__all__: list[str] = []

if serving() and recording_enabled():
    install()
