"""Models whose state-dict keys are not their parameters' names, for tests of
``torch.distributed.checkpoint.state_dict``.

- ``FusionEmbedding``: ``embedding`` and ``fusion_embedding``, two ``nn.Embedding``;
- ``FusionEmbeddingWithHook``: the same, but its state dict calls ``embedding.weight`` just
  ``weight`` (the key it had before the fusion), and loading accepts that key back;
- ``FusionEmbeddingWithModifier``: the hooked one that also tells DSD the renaming
  (``_fqn_modifiers``: ``{"weight": "embedding"}``), so that keys and names agree.
"""

from __future__ import annotations

from typing import Any

import torch.nn as nn

__all__ = ["FusionEmbedding", "FusionEmbeddingWithHook", "FusionEmbeddingWithModifier"]

__unittest = True


class FusionEmbedding(nn.Module):
    """``embedding`` (vocab_size x embed_dim) and ``fusion_embedding``
    (fusion_vocab_size x embed_dim)."""

    def __init__(self, vocab_size: int, fusion_vocab_size: int, embed_dim: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.fusion_embedding = nn.Embedding(fusion_vocab_size, embed_dim)


class FusionEmbeddingWithHook(FusionEmbedding):
    """``FusionEmbedding`` whose state dict has ``<prefix>weight`` for
    ``<prefix>embedding.weight`` (see the module's docstring)."""

    def __init__(self, vocab_size: int, fusion_vocab_size: int, embed_dim: int) -> None:
        super().__init__(vocab_size, fusion_vocab_size, embed_dim)
        self.register_state_dict_post_hook(FusionEmbeddingWithHook._renamed_on_save)
        self.register_load_state_dict_pre_hook(FusionEmbeddingWithHook._renamed_on_load)

    @staticmethod
    def _renamed_on_save(module: nn.Module, state_dict: dict[str, Any], prefix: str,
                         local_metadata: Any) -> None:
        state_dict[prefix + "weight"] = state_dict.pop(prefix + "embedding.weight")

    @staticmethod
    def _renamed_on_load(module: nn.Module, state_dict: dict[str, Any], prefix: str,
                         *args: Any) -> None:
        if state_dict and prefix + "weight" in state_dict:
            state_dict[prefix + "embedding.weight"] = state_dict.pop(prefix + "weight")


class FusionEmbeddingWithModifier(FusionEmbeddingWithHook):
    """``FusionEmbeddingWithHook`` that declares its renaming to DSD."""

    def _fqn_modifiers(self) -> dict[str, str]:
        # DSD's contract: {state-dict key: the submodule whose parameter it names}.
        return {"weight": "embedding"}
