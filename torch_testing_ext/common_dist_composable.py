"""Face of ``torch.testing._internal.common_dist_composable``: the composable APIs' test models
(``_engine/models/composable_models.py``)."""

from __future__ import annotations

from ._engine.models.composable_models import (
    CompositeModel,
    CompositeParamModel,
    FakeSequential,
    NestedSequentialModel,
    UnitModule,
    UnitParamModule,
)

__all__ = ["UnitModule", "CompositeModel", "UnitParamModule", "CompositeParamModel", "FakeSequential",
           "NestedSequentialModel"]
