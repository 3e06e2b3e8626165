"""Checkpoint test helpers, named as in ``torch.testing._internal.distributed.checkpoint_utils``."""

from __future__ import annotations

from ..distributed_bases.checkpoint_extensions import Rot13Example, get_test_extension_registry
from ..distributed_bases.shared_temp_dir import with_temp_dir

__all__ = ["with_temp_dir", "Rot13Example", "get_test_extension_registry"]
