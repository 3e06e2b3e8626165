"""State-dict checks and models, named as in
``torch.testing._internal.distributed.common_state_dict``."""

from __future__ import annotations

from .._engine.distributed_bases.state_dict_checks import VerifyStateDictMixin
from .._engine.models.state_dict_models import (
    FusionEmbedding,
    FusionEmbeddingWithHook,
    FusionEmbeddingWithModifier,
)

__all__ = ["VerifyStateDictMixin", "FusionEmbedding", "FusionEmbeddingWithHook",
           "FusionEmbeddingWithModifier"]
