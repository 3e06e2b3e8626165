"""Pruning and sparsity test fixtures, named as in ``torch.testing._internal.common_pruning``.

The models sparsity tests prune and fuse (``SimpleLinear``, ``Conv2dPool``, ``LSTMLinearModel``
...), ``ImplementedSparsifier``, ``MockSparseLinear`` and ``rows_are_subset``; defined in
``_engine/models/pruning_models.py``.
"""

from __future__ import annotations

from ._engine.models import pruning_models
from ._engine.models.pruning_models import *  # noqa: F403  # the face re-exports exactly pruning_models.__all__

__all__ = [*pruning_models.__all__]
