"""A test module for sharding plans, named as in
``torch.testing._internal.distributed._shard.test_common``.

The upstream-named face; the definition lives in ``_engine/models/megatron_model.py``.
"""

from __future__ import annotations

from ..._engine.models.megatron_model import SimpleMegatronLM

__all__ = ["SimpleMegatronLM"]
