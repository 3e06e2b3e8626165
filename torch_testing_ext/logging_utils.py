"""Logging test case, named as in ``torch.testing._internal.logging_utils``.

The upstream-named face: a test written for PyTorch's harness moves here by rewriting its
import. The definition lives in ``_engine/dynamo_bases/logging_case.py``.
"""

from __future__ import annotations

from ._engine.dynamo_bases.logging_case import LoggingTestCase

__all__ = ["LoggingTestCase"]
