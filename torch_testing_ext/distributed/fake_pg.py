"""The fake process group's store, named as in ``torch.testing._internal.distributed.fake_pg``.

Importing it registers the ``fake`` backend, as upstream's module does.
"""

from __future__ import annotations

from .._engine.process_groups.fake_store import FakeStore

__all__ = ["FakeStore"]
