"""Face of ``torch.testing._internal.two_tensor``: ``TwoTensor`` (``_engine/models/two_tensor_subclass.py``)."""

from __future__ import annotations

from ._engine.models.two_tensor_subclass import TwoTensor

__all__ = ["TwoTensor"]
