"""Dynamo test cases, at the path of ``torch._dynamo.test_case``'s harness counterpart.

The definitions live in ``dynamo/dynamo_case.py``; this module is their face.
"""

from __future__ import annotations

from .dynamo.dynamo_case import DynamoTestCase, reset_dynamo

__all__ = ["DynamoTestCase", "reset_dynamo"]
